// memcpy without the library call for the sizes of a small message: the
// call and its size dispatch were a tenth of an eager send's work.  Two
// fixed-size copies that may overlap; larger sizes go to memcpy.  Used on
// the message path of the shm ring (p2p/shm/shm_ring.cpp) and of the
// request engine (request/engine_recv.cpp, unpacking into a contiguous buffer).
#pragma once
#include <cstddef>
#include <cstring>

namespace gridmpi::p2p {

[[gnu::always_inline]] inline void copy_bytes(std::byte* d, const std::byte* s, std::size_t n) {
  if (n > 32) {
    std::memcpy(d, s, n);
  } else if (n > 16) {
    std::memcpy(d, s, 16);
    std::memcpy(d + n - 16, s + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(d, s, 8);
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) d[i] = s[i];
  }
}

}  // namespace gridmpi::p2p
