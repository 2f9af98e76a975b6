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
  std::int64_t i = 0;
  std::uint64_t u = 0;
  float f = 0.0f;
  std::uint16_t h = 0;

  template <typename T> static HostValue of(T v) {
    HostValue r{Kind::Int};
    if constexpr (std::is_same<T, half>::value) {
      r.kind = Kind::Half;
      r.h = v.bits;
    } else if constexpr (std::is_floating_point<T>::value) {
      r.kind = Kind::Float;
      r.f = static_cast<float>(v);
    } else if constexpr (std::is_signed<T>::value) {
      r.i = static_cast<std::int64_t>(v);
    } else {
      r.kind = Kind::UInt;
      r.u = static_cast<std::uint64_t>(v);
    }
    return r;
  }
  // Writes the value as one element of type t (t.size() bytes at out).
  void store(const poplar::Type &t, void *out) const;
};

} // namespace poplar_host
#endif
