// What every foam codelet source shares: the byte-vector field types that carry
// layout.h records, a copy-out of a small record from such a field (memcpy, because
// a byte vector holds no object of the record's type), a view of a big one where it
// lives, the stack each vertex declares to popc, and the guard around the host
// runtime's registration lines.
#ifndef FOAM_CODELET_H
#define FOAM_CODELET_H

#include <poplar/Vertex.hpp>

#include <stddef.h>
#include <string.h>

#include "foam/stacks.h"

#ifdef __IPU__
#include <poplar/StackSizeDefs.hpp>
#endif

using Bytes = poplar::Vector<unsigned char, poplar::VectorLayout::SPAN, 4>;
using Words = poplar::Vector<unsigned, poplar::VectorLayout::SPAN, 4>;
// Shard blobs and regions of them: 8-aligned, for the march's 64-bit site loads
// (layout.h, the shard blob).
using Blobs = poplar::Vector<unsigned char, poplar::VectorLayout::SPAN, 8>;

template <typename T, typename V> T load(const V &v, unsigned offset = 0) {
  T x;
  memcpy(&x, &v[offset], sizeof x);
  return x;
}

// A record of layout.h read or written where it lives, at element `offset` of the
// field (4-byte aligned, as every Bytes and Words field is): the control blocks and
// the region directory are kilobytes, and a copy of one would sit on the stack of
// every worker that runs it.
template <typename T, typename V> T &view(V &v, unsigned offset = 0) {
  static_assert(alignof(T) <= 4, "layout.h records are 4-byte aligned");
  return *reinterpret_cast<T *>(&v[0] + offset);
}
template <typename T, typename V> const T &cview(const V &v, unsigned offset = 0) {
  static_assert(alignof(T) <= 4, "layout.h records are 4-byte aligned");
  return *reinterpret_cast<const T *>(&v[0] + offset);
}

// The worker stack a vertex type needs on the IPU (foam/stacks.h), declared to popc
// for its entry point as Poplar codelets declare stack (poplar/StackSizeDefs.hpp
// exists for IPU targets only; the host runtime measures stacks itself).
#ifdef __IPU__
#define FOAM_STACK(V) DEF_STACK_USAGE(FOAM_STACK_##V, __runCodelet_##V)
#else
#define FOAM_STACK(V) static_assert(FOAM_STACK_##V > 0, "stack of " #V)
#endif

#endif /* FOAM_CODELET_H */
