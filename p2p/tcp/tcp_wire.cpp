#include "p2p/tcp/tcp_wire.hpp"

#include <fmt/format.h>

#include "p2p/little_endian.hpp"

namespace gridmpi::p2p::tcp {

void FramePrefix::encode(std::span<std::byte, size> out) const noexcept {
  WireWriter w(out.data());
  w.put(static_cast<std::uint8_t>(type)).put(std::uint8_t{0}).put(header_length).put(padding);
  w.put(payload_length);
}

std::optional<FramePrefix> FramePrefix::decode(std::span<const std::byte, size> in, std::string* why) {
  WireReader r(in.data());
  auto type = r.get<std::uint8_t>();
  auto reserved8 = r.get<std::uint8_t>();
  auto header_length = r.get<std::uint16_t>();
  auto padding = r.get<std::uint32_t>();
  auto payload_length = r.get<std::uint64_t>();
  auto fail = [&](std::string text) -> std::optional<FramePrefix> {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  if (type < 1 || type > 5) return fail(fmt::format("unknown frame type {}", type));
  if (reserved8 != 0) return fail("reserved bits set in frame prefix");
  if (padding > max_padding) return fail(fmt::format("padding {} above the limit of {}", padding, max_padding));
  if (header_length > max_header_length)
    return fail(fmt::format("header length {} above the limit of {}", header_length, max_header_length));
  // 2^48 bytes: far above any real fragment, far below an overflow.
  if (payload_length > (std::uint64_t{1} << 48))
    return fail(fmt::format("payload length {} is not plausible", payload_length));
  FramePrefix p;
  p.type = static_cast<FrameType>(type);
  p.header_length = header_length;
  p.payload_length = payload_length;
  p.padding = padding;
  return p;
}

std::uint32_t payload_padding(std::uintptr_t payload_address, std::size_t head_size) noexcept {
  constexpr std::size_t page = 4096, margin = 128;
  std::size_t x = (head_size + page - payload_address % page) % page;
  if (x >= margin && x <= page - margin) return 0;
  return static_cast<std::uint32_t>((margin + page - x) % page);
}

void Hello::encode(std::span<std::byte, size> out) const noexcept {
  WireWriter w(out.data());
  w.put(magic).put(version).put(std::uint16_t{0}).put(job_cookie).put(world_rank).put(std::uint32_t{0});
}

std::optional<Hello> Hello::decode(std::span<const std::byte, size> in, std::string* why) {
  WireReader r(in.data());
  if (r.get<std::uint32_t>() != magic) {
    if (why) *why = "bad magic (not a gridmpi connection)";
    return std::nullopt;
  }
  Hello h;
  h.version = r.get<std::uint16_t>();
  r.get<std::uint16_t>();
  h.job_cookie = r.get<std::uint64_t>();
  h.world_rank = r.get<std::int32_t>();
  return h;
}

}  // namespace gridmpi::p2p::tcp
