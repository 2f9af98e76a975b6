// Host runtime: the content hash of the vertex-input recorder (host/record.hpp), which
// names stored field blobs and checks a replay's written fields (tools/costs/replay.cpp).
#ifndef POPLAR_HOST_RECORD_HASH_HPP
#define POPLAR_HOST_RECORD_HASH_HPP
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace poplar_host {

inline std::uint64_t recordHash(const std::uint8_t *p, std::size_t n) {
  std::uint64_t h = 0x243F6A8885A308D3ull ^ (n * 0x9E3779B97F4A7C15ull);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
  }
  for (; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001B3ull;
  return h ^ (h >> 29);
}

} // namespace poplar_host
#endif
