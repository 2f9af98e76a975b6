// Host runtime of the Poplar API subset, codelet side: Vertex, MultiVertex, the
// Input/Output/InOut field templates, Vector, and `half`. A codelet source compiles
// unchanged against this header and the SDK's; the one host-only addition is a
// registration line under `#ifndef __IPU__`:
//
//   FOAM_HOST_VERTEX(Tracer, raysIn, state, raysOut, count)
//
// which lists the vertex's fields so the runtime can bind them by name.
#ifndef POPLAR_VERTEX_HPP
#define POPLAR_VERTEX_HPP
#include <cstddef>
#include <poplar/VectorLayout.hpp>
#include <poplar_host/half.hpp>

using half = poplar_host::half;

namespace poplar_host {
struct FieldAccess;

template <typename E, bool Span> class VecView;
template <typename E> class VecView<E, true> {
public:
  E &operator[](std::size_t i) const { return p_[i]; }
  std::size_t size() const { return n_; }
  E *data() const { return p_; }
  E *begin() const { return p_; }
  E *end() const { return p_ + n_; }

private:
  friend struct FieldAccess;
  E *p_ = nullptr;
  std::size_t n_ = 0;
};
template <typename E> class VecView<E, false> {
public:
  E &operator[](std::size_t i) const { return p_[i]; }
  E *data() const { return p_; }

private:
  friend struct FieldAccess;
  E *p_ = nullptr;
};

template <poplar::VectorLayout L> struct SupportedLayout {
  static constexpr bool value = L == poplar::VectorLayout::SPAN || L == poplar::VectorLayout::ONE_PTR;
};
} // namespace poplar_host

namespace poplar {

class Vertex {};

class MultiVertex {
public:
  static constexpr unsigned numWorkers() { return 6; }
};

template <typename T, VectorLayout L = VectorLayout::SPAN, unsigned MinAlign = alignof(T), bool Interleavable = false>
class Vector;

// Scalar fields: a reference to one element of a tensor on the vertex's tile.
template <typename T> class Input {
public:
  operator T() const { return *p_; }
  const T &operator*() const { return *p_; }
  const T *operator->() const { return p_; }

private:
  friend struct poplar_host::FieldAccess;
  const T *p_ = nullptr;
};
template <typename T> class Output {
public:
  T &operator*() const { return *p_; }
  T *operator->() const { return p_; }

private:
  friend struct poplar_host::FieldAccess;
  T *p_ = nullptr;
};
template <typename T> class InOut {
public:
  operator T() const { return *p_; }
  T &operator*() const { return *p_; }
  T *operator->() const { return p_; }

private:
  friend struct poplar_host::FieldAccess;
  T *p_ = nullptr;
};

// Vector fields: a contiguous region of one tile's memory. Input is read-only.
template <typename T, VectorLayout L, unsigned A, bool I>
class Input<Vector<T, L, A, I>> : public poplar_host::VecView<const T, L == VectorLayout::SPAN> {
  static_assert(poplar_host::SupportedLayout<L>::value, "host runtime supports VectorLayout SPAN and ONE_PTR");
};
template <typename T, VectorLayout L, unsigned A, bool I>
class Output<Vector<T, L, A, I>> : public poplar_host::VecView<T, L == VectorLayout::SPAN> {
  static_assert(poplar_host::SupportedLayout<L>::value, "host runtime supports VectorLayout SPAN and ONE_PTR");
};
template <typename T, VectorLayout L, unsigned A, bool I>
class InOut<Vector<T, L, A, I>> : public poplar_host::VecView<T, L == VectorLayout::SPAN> {
  static_assert(poplar_host::SupportedLayout<L>::value, "host runtime supports VectorLayout SPAN and ONE_PTR");
};

} // namespace poplar

#include <poplar_host/registry.hpp>
#endif
