// What every fuzz target of tests/fuzz shares: a reader that turns the
// fuzzer's bytes into values (front to back, so that a seed file is easy to
// write: tests/fuzz/make_seeds.cpp), a writer for the same format, and a
// check that aborts with a message (libFuzzer then keeps the input as a
// crash).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

namespace gridmpi::fuzz {

using Bytes = std::vector<std::byte>;

// Reads big-endian values from the front; past the end every value is 0 and
// every byte string is empty, so any input is a complete script.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const noexcept { return at_ >= size_; }
  std::size_t left() const noexcept { return size_ - at_; }

  std::uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(u8() << 8 | u8()); }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | u8();
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | u8();
    return v;
  }
  // Up to n bytes (fewer at the end of the input).
  Bytes bytes(std::size_t n) {
    if (n > left()) n = left();
    Bytes out(reinterpret_cast<const std::byte*>(data_ + at_), reinterpret_cast<const std::byte*>(data_ + at_ + n));
    at_ += n;
    return out;
  }
  // A byte string with a 16-bit length in front.
  Bytes blob() { return bytes(u16()); }
  // Everything that is left.
  Bytes rest() { return bytes(left()); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// The inverse of Input, for the seed generator.
class Script {
 public:
  Script& u8(std::uint8_t v) {
    out_.push_back(static_cast<std::byte>(v));
    return *this;
  }
  Script& u16(std::uint16_t v) { return u8(static_cast<std::uint8_t>(v >> 8)).u8(static_cast<std::uint8_t>(v)); }
  Script& u32(std::uint32_t v) { return u16(static_cast<std::uint16_t>(v >> 16)).u16(static_cast<std::uint16_t>(v)); }
  Script& u64(std::uint64_t v) { return u32(static_cast<std::uint32_t>(v >> 32)).u32(static_cast<std::uint32_t>(v)); }
  Script& bytes(std::span<const std::byte> b) {
    out_.insert(out_.end(), b.begin(), b.end());
    return *this;
  }
  // A blob longer than 65535 bytes cannot be written: the seeds never need one.
  Script& blob(std::span<const std::byte> b) {
    if (b.size() > 0xffff) std::abort();
    return u16(static_cast<std::uint16_t>(b.size())).bytes(b);
  }
  const Bytes& bytes() const noexcept { return out_; }

 private:
  Bytes out_;
};

inline std::string hex(std::span<const std::byte> bytes, std::size_t limit = 256) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < bytes.size() && i < limit; ++i) {
    if (i && i % 4 == 0) s += ' ';
    auto v = std::to_integer<unsigned>(bytes[i]);
    s += digits[v >> 4];
    s += digits[v & 15];
  }
  if (bytes.size() > limit) s += " ...";
  return s;
}

// A violated property: one line on stderr, then abort (a crash for libFuzzer).
[[noreturn]] inline void violated(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "fuzz check failed at %s:%d: %s\n", file, line, what.c_str());
  std::abort();
}

}  // namespace gridmpi::fuzz

#define FUZZ_CHECK(condition, message)                                           \
  do {                                                                           \
    if (!(condition)) ::gridmpi::fuzz::violated(__FILE__, __LINE__, (message)); \
  } while (0)
