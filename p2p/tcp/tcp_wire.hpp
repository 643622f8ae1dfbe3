// The byte format of a tcp connection: every frame starts with a 16-byte
// prefix; the first frame of a connection is a hello naming the job and the
// sender (the opener); the last in each direction is a goodbye.  Messages go
// both ways.  Socket-free, tested in tests/unit/test_wire_tcp.cpp.
//
//   prefix:  u8 type | u8 reserved | u16 header_length | u32 padding | u64 payload_length
//            then header_length bytes of header, padding bytes (zero, skipped),
//            payload_length bytes of payload
//   hello:   u32 magic "GMPI" | u16 version | u16 reserved | u64 job cookie | i32 world rank | u32 reserved
//   moved, switched: no header, no payload (see below)
//
// Two processes that connect to each other at the same moment have two
// connections.  The higher rank then moves its sending to the lower rank's
// connection: it sends `moved` as its last frame on its own connection and
// `switched` as its first frame on the other; the receiver reads nothing
// after `switched` until it has read `moved`, so the order of the frames
// holds.  Version 3 of the hello introduced messages in both directions.
//
// The padding places a large payload in the stream so that the kernel's
// copies (user buffer -> socket pages -> user buffer) do not run at a
// source/destination distance of a few bytes modulo 4 KiB, which makes
// every load of the copy wait for an earlier store (4K aliasing): 3x slower
// on this machine.  Version 2 of the hello introduced it.
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

enum class FrameType : std::uint8_t { hello = 1, message = 2, goodbye = 3, moved = 4, switched = 5 };

struct FramePrefix {
  FrameType type = FrameType::message;
  std::uint16_t header_length = 0;
  std::uint64_t payload_length = 0;
  std::uint32_t padding = 0;

  static constexpr std::size_t size = 16;
  static constexpr std::uint32_t max_padding = 4095;
  // Header lengths above this are garbage (request headers are < 100 bytes).
  static constexpr std::uint16_t max_header_length = 1024;

  void encode(std::span<std::byte, size> out) const noexcept;
  // nullopt (and a reason) when the bytes cannot be a frame prefix.
  static std::optional<FramePrefix> decode(std::span<const std::byte, size> in, std::string* why);
  bool operator==(const FramePrefix&) const = default;
};

// The padding for a payload at `payload_address` that follows `head_size`
// bytes (prefix and header) of its frame: the payload's distance from the
// start of the write, less its address, modulo 4096, lands in [128, 3968]
// (0 when it does already; at most 256).  The kernel fills a socket's pages
// from the write's start, so this keeps the sender's copy away from 4K
// aliasing, and the receiver's too when its buffer has the same offset in
// its page (both malloc'd, for example).
std::uint32_t payload_padding(std::uintptr_t payload_address, std::size_t head_size) noexcept;

struct Hello {
  static constexpr std::uint32_t magic = 0x49504d47u;  // "GMPI" in little-endian order
  static constexpr std::uint16_t current_version = 3;
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
