// Host runtime of the Poplar API subset: poplar::ArrayRef, a non-owning view of a
// contiguous array, built implicitly from a vector, an initializer list or one element.
#ifndef POPLAR_ARRAYREF_HPP
#define POPLAR_ARRAYREF_HPP
#include <array>
#include <cstddef>
#include <initializer_list>
#include <vector>

namespace poplar {

template <typename T> class ArrayRef {
public:
  ArrayRef() = default;
  ArrayRef(const T *p, std::size_t n) : p_(p), n_(n) {}
  ArrayRef(const T &one) : p_(&one), n_(1) {}
  ArrayRef(const std::vector<T> &v) : p_(v.data()), n_(v.size()) {}
  template <std::size_t N> ArrayRef(const std::array<T, N> &a) : p_(a.data()), n_(N) {}
  // The list outlives the call it is an argument of, which is all an ArrayRef is for.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  ArrayRef(std::initializer_list<T> l) : p_(l.begin()), n_(l.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  const T *data() const { return p_; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const T *begin() const { return p_; }
  const T *end() const { return p_ + n_; }
  const T &operator[](std::size_t i) const { return p_[i]; }
  const T &front() const { return p_[0]; }
  const T &back() const { return p_[n_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(p_, p_ + n_); }

private:
  const T *p_ = nullptr;
  std::size_t n_ = 0;
};

} // namespace poplar
#endif
