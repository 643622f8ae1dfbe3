// The byte format of a tcp connection: every frame starts with a 16-byte
// prefix; the first frame of a connection is a hello naming the job and the
// sender; the last is a goodbye.  Socket-free, tested in
// tests/unit/test_wire_tcp.cpp.
//
//   prefix:  u8 type | u8 reserved | u16 header_length | u32 reserved | u64 payload_length
//   hello:   u32 magic "GMPI" | u16 version | u16 reserved | u64 job cookie | i32 world rank | u32 reserved
//
// All fields little-endian.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace gridmpi::p2p::tcp {

enum class FrameType : std::uint8_t { hello = 1, message = 2, goodbye = 3 };

struct FramePrefix {
  FrameType type = FrameType::message;
  std::uint16_t header_length = 0;
  std::uint64_t payload_length = 0;

  static constexpr std::size_t size = 16;
  // Header lengths above this are garbage (request headers are < 100 bytes).
  static constexpr std::uint16_t max_header_length = 1024;

  void encode(std::span<std::byte, size> out) const noexcept;
  // nullopt (and a reason) when the bytes cannot be a frame prefix.
  static std::optional<FramePrefix> decode(std::span<const std::byte, size> in, std::string* why);
  bool operator==(const FramePrefix&) const = default;
};

struct Hello {
  static constexpr std::uint32_t magic = 0x49504d47u;  // "GMPI" in little-endian order
  static constexpr std::uint16_t current_version = 1;
  static constexpr std::size_t size = 24;

  std::uint16_t version = current_version;
  std::uint64_t job_cookie = 0;
  std::int32_t world_rank = 0;

  void encode(std::span<std::byte, size> out) const noexcept;
  // nullopt (and a reason) on a bad magic; the version and cookie are the
  // caller's to judge.
  static std::optional<Hello> decode(std::span<const std::byte, size> in, std::string* why);
  bool operator==(const Hello&) const = default;
};

}  // namespace gridmpi::p2p::tcp
