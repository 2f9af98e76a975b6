// Host runtime of the Poplar API subset: host-side conversion between float and the
// device's IEEE half format (round to nearest even).
#ifndef POPLAR_HALFFLOAT_HPP
#define POPLAR_HALFFLOAT_HPP
#include <cstddef>
#include <cstdint>
#include <poplar/Target.hpp>
#include <poplar_host/half.hpp>

namespace poplar {

inline void copyFloatToDeviceHalf(const Target &, const float *src, void *dst, std::size_t numElements) {
  auto *out = static_cast<std::uint16_t *>(dst);
  for (std::size_t i = 0; i < numElements; ++i)
    out[i] = poplar_host::floatToHalfBits(src[i]);
}
inline void copyDeviceHalfToFloat(const Target &, const void *src, float *dst, std::size_t numElements) {
  const auto *in = static_cast<const std::uint16_t *>(src);
  for (std::size_t i = 0; i < numElements; ++i)
    dst[i] = poplar_host::halfBitsToFloat(in[i]);
}

} // namespace poplar
#endif
