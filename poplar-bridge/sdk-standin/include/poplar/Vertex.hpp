// Stand-in for the Poplar SDK's codelet header (see ../../README.md): the vertex base
// classes and field templates codelets use, declared with the SDK's names. Nothing of
// the host runtime is here (no registration macro): code that only the host may see
// must be guarded by __POPC__.
#ifndef FOAM_STANDIN_POPLAR_VERTEX_HPP
#define FOAM_STANDIN_POPLAR_VERTEX_HPP

#ifndef __POPC__
#error "stand-in SDK header: compile as popc does (-D__POPC__, and -D__IPU__ for an IPU target)"
#endif

#include <cstddef>
#include <poplar/HalfFloat.hpp>

namespace poplar {

enum class VectorLayout { ONE_PTR, SPAN, COMPACT_PTR, SCALED_PTR32, SCALED_PTR64 };

class Vertex {};

class MultiVertex {
public:
  static constexpr unsigned numWorkers() { return 6; }
};

template <typename T, VectorLayout L = VectorLayout::SPAN, unsigned MinAlign = alignof(T), bool Interleavable = false>
class Vector;

template <typename T> class Input {
public:
  operator const T &() const;
  const T &operator*() const;
  const T *operator->() const;
};
template <typename T> class Output {
public:
  T &operator*() const;
  T *operator->() const;
};
template <typename T> class InOut {
public:
  operator T &() const;
  T &operator*() const;
  T *operator->() const;
};

template <typename E, bool Span> class VectorField {
public:
  E &operator[](std::size_t i) const;
  E *data() const;
};
template <typename E> class VectorField<E, true> {
public:
  E &operator[](std::size_t i) const;
  E *data() const;
  std::size_t size() const;
  E *begin() const;
  E *end() const;
};

template <typename T, VectorLayout L, unsigned A, bool I>
class Input<Vector<T, L, A, I>> : public VectorField<const T, L == VectorLayout::SPAN> {};
template <typename T, VectorLayout L, unsigned A, bool I>
class Output<Vector<T, L, A, I>> : public VectorField<T, L == VectorLayout::SPAN> {};
template <typename T, VectorLayout L, unsigned A, bool I>
class InOut<Vector<T, L, A, I>> : public VectorField<T, L == VectorLayout::SPAN> {};

} // namespace poplar

#endif
