// What every foam codelet source shares: the byte-vector field types that carry
// layout.h records, and a copy-out of a record from such a field (memcpy, because a
// byte vector holds no object of the record's type).
#ifndef FOAM_CODELET_H
#define FOAM_CODELET_H

#include <poplar/Vertex.hpp>

#include <stddef.h>
#include <string.h>

using Bytes = poplar::Vector<unsigned char, poplar::VectorLayout::SPAN, 4>;
using Words = poplar::Vector<unsigned, poplar::VectorLayout::SPAN, 4>;

template <typename T, typename V> T load(const V &v, unsigned offset = 0) {
  T x;
  memcpy(&x, &v[offset], sizeof x);
  return x;
}

#endif /* FOAM_CODELET_H */
