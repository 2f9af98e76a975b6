// Host runtime: a host-side scalar (setInitialValue / addConstant argument) converted to
// a tensor's element type the way Poplar converts it.
#ifndef POPLAR_HOST_VALUE_HPP
#define POPLAR_HOST_VALUE_HPP
#include <cstdint>
#include <poplar/Type.hpp>
#include <poplar_host/half.hpp>
#include <type_traits>

namespace poplar_host {

template <typename T>
struct IsHostValue : std::integral_constant<bool, std::is_arithmetic<T>::value || std::is_same<T, half>::value> {};

struct HostValue {
  enum class Kind { Int, UInt, Float, Half } kind;
  std::int64_t i;
  std::uint64_t u;
  float f;
  std::uint16_t h;

  explicit HostValue(Kind k = Kind::Int) : kind(k), i(0), u(0), f(0.0f), h(0) {}
  static HostValue of(half v) {
    HostValue r(Kind::Half);
    r.h = v.bits;
    return r;
  }
  template <typename T> static HostValue of(T v) {
    return ofArithmetic(v, std::integral_constant<int, std::is_floating_point<T>::value ? 0
                                                       : std::is_signed<T>::value        ? 1
                                                                                         : 2>());
  }
  // Writes the value as one element of type t (t.size() bytes at out).
  void store(const poplar::Type &t, void *out) const;

private:
  template <typename T> static HostValue ofArithmetic(T v, std::integral_constant<int, 0>) {
    HostValue r(Kind::Float);
    r.f = static_cast<float>(v);
    return r;
  }
  template <typename T> static HostValue ofArithmetic(T v, std::integral_constant<int, 1>) {
    HostValue r(Kind::Int);
    r.i = static_cast<std::int64_t>(v);
    return r;
  }
  template <typename T> static HostValue ofArithmetic(T v, std::integral_constant<int, 2>) {
    HostValue r(Kind::UInt);
    r.u = static_cast<std::uint64_t>(v);
    return r;
  }
};

} // namespace poplar_host
#endif
