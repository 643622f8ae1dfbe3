// Explicit little-endian encoding of fixed-width integers, for every wire
// format of the library (p2p/frame.hpp, p2p/tcp/tcp_wire.hpp): the byte
// order on the wire never depends on the host.
#pragma once
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace gridmpi::p2p {

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big);

template <std::unsigned_integral U>
constexpr U byte_swapped(U u) noexcept {
  if constexpr (sizeof(U) == 1) return u;
  else if constexpr (sizeof(U) == 2) return static_cast<U>(__builtin_bswap16(u));
  else if constexpr (sizeof(U) == 4) return static_cast<U>(__builtin_bswap32(u));
  else return static_cast<U>(__builtin_bswap64(u));
}

// One unaligned load or store (and a byte swap on a big-endian host): the
// request headers are encoded and decoded on every message's path.
template <std::integral T>
inline void store_le(std::byte* out, T value) noexcept {
  using U = std::make_unsigned_t<T>;
  U u = static_cast<U>(value);
  if constexpr (std::endian::native == std::endian::big) u = byte_swapped(u);
  std::memcpy(out, &u, sizeof u);
}

template <std::integral T>
inline T load_le(const std::byte* in) noexcept {
  using U = std::make_unsigned_t<T>;
  U u;
  std::memcpy(&u, in, sizeof u);
  if constexpr (std::endian::native == std::endian::big) u = byte_swapped(u);
  return static_cast<T>(u);
}

// Sequential writer/reader over a fixed buffer; callers size the buffer from
// the header's declared size, so bounds are checked by the caller once.
class WireWriter {
 public:
  explicit WireWriter(std::byte* out) noexcept : out_(out) {}
  template <std::integral T>
  WireWriter& put(T value) noexcept {
    store_le(out_ + used_, value);
    used_ += sizeof(T);
    return *this;
  }
  std::size_t used() const noexcept { return used_; }

 private:
  std::byte* out_;
  std::size_t used_ = 0;
};

class WireReader {
 public:
  explicit WireReader(const std::byte* in) noexcept : in_(in) {}
  template <std::integral T>
  T get() noexcept {
    T v = load_le<T>(in_ + used_);
    used_ += sizeof(T);
    return v;
  }
  std::size_t used() const noexcept { return used_; }

 private:
  const std::byte* in_;
  std::size_t used_ = 0;
};

}  // namespace gridmpi::p2p
