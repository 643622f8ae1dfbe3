#include "p2p/frame.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "p2p/little_endian.hpp"

namespace gridmpi::p2p::frame {

using p2p::WireReader;
using p2p::WireWriter;

namespace {

void need(std::span<const std::byte> in, std::size_t size, Kind kind) {
  if (in.size() < size) short_header(kind, in.size(), size);
}

void need_room(std::span<std::byte> out, std::size_t size) {
  if (out.size() < size) header_buffer_too_small(out.size(), size);
}

void put_common(WireWriter& w, Kind kind) {
  w.put(static_cast<std::uint8_t>(kind)).put(std::uint8_t{0}).put(std::uint16_t{0});
}

}  // namespace

void bad_frame_header(std::span<const std::byte> header) {
  if (header.size() < 4) throw MpiError(MPI_ERR_INTERN, fmt::format("frame header of {} bytes", header.size()));
  throw MpiError(MPI_ERR_INTERN, fmt::format("unknown frame kind {}", static_cast<std::uint8_t>(header[0])));
}

std::string kind_name(Kind kind) {
  switch (kind) {
    case Kind::eager: return "eager";
    case Kind::sync_eager: return "sync-eager";
    case Kind::rts: return "request-to-send";
    case Kind::cts: return "clear-to-send";
    case Kind::data: return "data";
    case Kind::sync_ack: return "sync-ack";
    case Kind::cancel_request: return "cancel-request";
    case Kind::cancel_reply: return "cancel-reply";
  }
  return fmt::format("kind {}", static_cast<int>(kind));
}

void header_buffer_too_small(std::size_t have, std::size_t need) {
  throw MpiError(MPI_ERR_INTERN, fmt::format("header buffer of {} bytes, need {}", have, need));
}

void not_a_message_header(Kind kind) {
  throw MpiError(MPI_ERR_INTERN, fmt::format("{} header where a message header was expected", kind_name(kind)));
}

void short_header(Kind kind, std::size_t have, std::size_t need) {
  throw MpiError(MPI_ERR_INTERN, fmt::format("{} header of {} bytes, expected {}", kind_name(kind), have, need));
}

std::size_t CtsHeader::encode(std::span<std::byte> out) const {
  need_room(out, encoded_size);
  WireWriter w(out.data());
  put_common(w, Kind::cts);
  w.put(std::uint32_t{0}).put(sender_id).put(receiver_id).put(accepted);
  return w.used();
}

CtsHeader CtsHeader::decode(std::span<const std::byte> in) {
  need(in, encoded_size, Kind::cts);
  WireReader r(in.data() + 4);
  r.get<std::uint32_t>();
  CtsHeader h;
  h.sender_id = r.get<std::uint64_t>();
  h.receiver_id = r.get<std::uint64_t>();
  h.accepted = r.get<std::uint64_t>();
  return h;
}

std::size_t DataHeader::encode(std::span<std::byte> out) const {
  need_room(out, encoded_size);
  WireWriter w(out.data());
  put_common(w, Kind::data);
  w.put(std::uint32_t{0}).put(receiver_id).put(offset);
  return w.used();
}

DataHeader DataHeader::decode(std::span<const std::byte> in) {
  need(in, encoded_size, Kind::data);
  WireReader r(in.data() + 4);
  r.get<std::uint32_t>();
  DataHeader h;
  h.receiver_id = r.get<std::uint64_t>();
  h.offset = r.get<std::uint64_t>();
  return h;
}

std::size_t SyncAckHeader::encode(std::span<std::byte> out) const {
  need_room(out, encoded_size);
  WireWriter w(out.data());
  put_common(w, Kind::sync_ack);
  w.put(std::uint32_t{0}).put(sender_id);
  return w.used();
}

SyncAckHeader SyncAckHeader::decode(std::span<const std::byte> in) {
  need(in, encoded_size, Kind::sync_ack);
  WireReader r(in.data() + 4);
  r.get<std::uint32_t>();
  SyncAckHeader h;
  h.sender_id = r.get<std::uint64_t>();
  return h;
}

std::size_t CancelRequestHeader::encode(std::span<std::byte> out) const {
  need_room(out, encoded_size);
  WireWriter w(out.data());
  put_common(w, Kind::cancel_request);
  w.put(context).put(sender_id);
  return w.used();
}

CancelRequestHeader CancelRequestHeader::decode(std::span<const std::byte> in) {
  need(in, encoded_size, Kind::cancel_request);
  WireReader r(in.data() + 4);
  CancelRequestHeader h;
  h.context = r.get<std::uint32_t>();
  h.sender_id = r.get<std::uint64_t>();
  return h;
}

std::size_t CancelReplyHeader::encode(std::span<std::byte> out) const {
  need_room(out, encoded_size);
  WireWriter w(out.data());
  put_common(w, Kind::cancel_reply);
  w.put(std::uint32_t{cancelled ? 1u : 0u}).put(sender_id);
  return w.used();
}

CancelReplyHeader CancelReplyHeader::decode(std::span<const std::byte> in) {
  need(in, encoded_size, Kind::cancel_reply);
  WireReader r(in.data() + 4);
  std::uint32_t cancelled = r.get<std::uint32_t>();
  if (cancelled > 1)
    throw MpiError(MPI_ERR_INTERN, fmt::format("cancel-reply header with cancelled = {} (0 or 1 expected)", cancelled));
  CancelReplyHeader h;
  h.cancelled = cancelled == 1;
  h.sender_id = r.get<std::uint64_t>();
  return h;
}

}  // namespace gridmpi::p2p::frame
