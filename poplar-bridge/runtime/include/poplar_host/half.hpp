// IEEE binary16 for host builds: the host runtime's `half` (what popc gives codelets as
// a built-in type on the IPU). Conversions round to nearest, ties to even; arithmetic
// goes through float via the implicit conversion, as on the IPU's f16 path.
#ifndef POPLAR_HOST_HALF_HPP
#define POPLAR_HOST_HALF_HPP
#include <cstdint>
#include <cstring>

namespace poplar_host {

inline std::uint16_t floatToHalfBits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) // inf or NaN (NaN stays quiet NaN, payload kept where it fits)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (a > 0x7f800000u ? (0x200u | ((a >> 13) & 0x3ffu)) : 0u));
  if (a >= 0x477ff000u) // >= 65520 rounds past the largest half (65504)
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (a < 0x38800000u) { // below 2^-14: half subnormal or zero, in units of 2^-24
    if (a < 0x33000000u)  // below 2^-25: rounds to zero (2^-25 itself ties to even 0)
      return static_cast<std::uint16_t>(sign);
    const std::uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    const unsigned shift = 126u - (a >> 23);
    std::uint32_t r = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u)))
      ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  std::uint32_t r = (a - 0x38000000u) >> 13; // rebias 127 -> 15
  const std::uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u)))
    ++r; // a carry out of the mantissa correctly bumps the exponent
  return static_cast<std::uint16_t>(sign | r);
}

inline float halfBitsToFloat(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  std::uint32_t bits;
  if (e == 0) {
    const float v = static_cast<float>(m) * 5.9604644775390625e-8f; // m * 2^-24, exact
    return sign ? -v : v;
  } else if (e == 31) {
    bits = sign | 0x7f800000u | (m << 13);
  } else {
    bits = sign | ((e + 112u) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Trivially copyable, 2 bytes: a HALF tensor element.
struct half {
  std::uint16_t bits;
  half() = default;
  half(float f) : bits(floatToHalfBits(f)) {}
  operator float() const { return halfBitsToFloat(bits); }
  static half fromBits(std::uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
  half &operator+=(float x) { return *this = half(float(*this) + x); }
  half &operator-=(float x) { return *this = half(float(*this) - x); }
  half &operator*=(float x) { return *this = half(float(*this) * x); }
  half &operator/=(float x) { return *this = half(float(*this) / x); }
};
static_assert(sizeof(half) == 2, "half is 2 bytes");

} // namespace poplar_host
#endif
