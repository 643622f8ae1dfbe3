// The frame headers of the transport contract (p2p/transport.hpp): what the
// request engine puts in front of every payload it hands a transport, and
// what a transport that speaks another protocol (impi/transport.cpp) maps to
// and from its own packets.  One struct per kind, fixed-width fields,
// explicit little-endian encode/decode.  Round-trip tests in
// tests/unit/test_frame.cpp.
//
// Every header starts with   u8 kind | u8 flags | u16 reserved
//
//   (MessageHeader only: u8 kind | u8 flags | u16 basic, see flag_external32)
//   eager, sync_eager, rts:  + u32 context | i32 source | i32 tag | u64 size | u64 sender_id   (32 bytes)
//   cts:                     + u32 reserved | u64 sender_id | u64 receiver_id | u64 accepted  (32 bytes)
//   data:                    + u32 reserved | u64 receiver_id | u64 offset                    (24 bytes)
//   sync_ack:                + u32 reserved | u64 sender_id                                   (16 bytes)
//   cancel_request:          + u32 context  | u64 sender_id                                   (16 bytes)
//   cancel_reply:            + u32 cancelled (0 or 1) | u64 sender_id                         (16 bytes)
//
// Every message (eager, sync_eager, rts) carries its sender_id, which with
// the sender's world rank names it for MPI_Cancel of a send: the sender asks
// with cancel_request, the receiver removes the message from its unexpected
// queue if it is still there (nothing received or probed-and-taken it) and
// answers cancel_reply.
//
// `source` is the sender's rank in the communicator (its local group for an
// intercommunicator), so matching needs no group lookup.  Ids name a request
// of the side that chose them; they are never pointers.  Closing a
// connection ("goodbye") belongs to the transport, which alone knows its
// connections (p2p/tcp/tcp_wire.hpp).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "p2p/little_endian.hpp"

namespace gridmpi::p2p::frame {

enum class Kind : std::uint8_t {
  eager = 1,       // envelope + the whole message as payload
  sync_eager = 2,  // the same, and the receiver answers sync_ack when it matches
  rts = 3,         // request to send: envelope only; the receiver answers cts when it matches
  cts = 4,         // clear to send: how many bytes the receiver accepts
  data = 5,        // a fragment of rendezvous data at an offset
  sync_ack = 6,    // a synchronous eager message was matched
  cancel_request = 7,  // the sender cancels an unmatched message (MPI_Cancel of a send)
  cancel_reply = 8,    // whether the message was removed before anything matched it
};
constexpr Kind last_kind = Kind::cancel_reply;

constexpr std::size_t max_header_size = 32;
using HeaderBuffer = std::array<std::byte, max_header_size>;

// Decoding failures (a short header, an unknown kind) throw MpiError(MPI_ERR_INTERN)
// naming the problem; the caller adds the peer.
[[noreturn]] void bad_frame_header(std::span<const std::byte> header);
inline Kind peek_kind(std::span<const std::byte> header) {  // inline: read twice per message
  if (header.size() < 4 || static_cast<std::uint8_t>(header[0]) < 1 ||
      static_cast<std::uint8_t>(header[0]) > static_cast<std::uint8_t>(last_kind)) [[unlikely]]
    bad_frame_header(header);
  return static_cast<Kind>(header[0]);
}
std::string kind_name(Kind kind);

struct Envelope {
  std::uint32_t context = 0;
  std::int32_t source = 0;
  std::int32_t tag = 0;
  bool operator==(const Envelope&) const = default;
};

// MessageHeader::flags, for communicators that span clusters (MPI_Pack on
// them produces external32, IMPI's rule), on transports whose data is native:
// flag_external32: the payload is external32 (an MPI_PACKED message, or
//   typed data of mixed basic types): a typed receive converts it.
// flag_native_basic: the payload is native elements of one predefined basic
//   type, MessageHeader::basic: a receive into MPI_PACKED converts them to
//   external32 (typed receives take them as they are).
// flag_external64 (with flag_external32): the payload is external64
//   (core/external_format.hpp): mixed basic types from an LP64 process, so
//   that a long keeps its value (MPI_PACKED receives read it as it is).
constexpr std::uint8_t flag_external32 = 1;
constexpr std::uint8_t flag_native_basic = 2;
constexpr std::uint8_t flag_external64 = 4;

// eager, sync_eager and rts share a layout.
struct MessageHeader {
  Kind kind = Kind::eager;
  std::uint8_t flags = 0;
  std::uint16_t basic = 0;  // with flag_native_basic: the MPI_Datatype handle of the elements
  Envelope envelope;
  std::uint64_t size = 0;       // packed bytes of the whole message
  std::uint64_t sender_id = 0;  // names the message (sync_ack, cts, cancel_request)
  static constexpr std::size_t encoded_size = 32;
  // Inline: both run once per message, on its path.
  std::size_t encode(std::span<std::byte> out) const;
  static MessageHeader decode(std::span<const std::byte> in);
  bool operator==(const MessageHeader&) const = default;
};

// The failures of MessageHeader's encode and decode (they throw MpiError).
[[noreturn]] void header_buffer_too_small(std::size_t have, std::size_t need);
[[noreturn]] void not_a_message_header(Kind kind);
[[noreturn]] void short_header(Kind kind, std::size_t have, std::size_t need);

inline std::size_t MessageHeader::encode(std::span<std::byte> out) const {
  if (out.size() < encoded_size) [[unlikely]]
    header_buffer_too_small(out.size(), encoded_size);
  p2p::WireWriter w(out.data());
  w.put(static_cast<std::uint8_t>(kind)).put(flags).put(basic);
  w.put(envelope.context).put(envelope.source).put(envelope.tag).put(size).put(sender_id);
  return w.used();
}

inline MessageHeader MessageHeader::decode(std::span<const std::byte> in) {
  MessageHeader h;
  h.kind = peek_kind(in);
  if (h.kind != Kind::eager && h.kind != Kind::sync_eager && h.kind != Kind::rts) [[unlikely]]
    not_a_message_header(h.kind);
  if (in.size() < encoded_size) [[unlikely]]
    short_header(h.kind, in.size(), encoded_size);
  h.flags = static_cast<std::uint8_t>(in[1]);
  h.basic = p2p::load_le<std::uint16_t>(in.data() + 2);
  p2p::WireReader r(in.data() + 4);
  h.envelope.context = r.get<std::uint32_t>();
  h.envelope.source = r.get<std::int32_t>();
  h.envelope.tag = r.get<std::int32_t>();
  h.size = r.get<std::uint64_t>();
  h.sender_id = r.get<std::uint64_t>();
  return h;
}

struct CtsHeader {
  std::uint64_t sender_id = 0;
  std::uint64_t receiver_id = 0;
  std::uint64_t accepted = 0;  // bytes the receiver takes (less than size when truncating)
  static constexpr std::size_t encoded_size = 32;
  std::size_t encode(std::span<std::byte> out) const;
  static CtsHeader decode(std::span<const std::byte> in);
  bool operator==(const CtsHeader&) const = default;
};

struct DataHeader {
  std::uint64_t receiver_id = 0;
  std::uint64_t offset = 0;
  static constexpr std::size_t encoded_size = 24;
  std::size_t encode(std::span<std::byte> out) const;
  static DataHeader decode(std::span<const std::byte> in);
  bool operator==(const DataHeader&) const = default;
};

struct SyncAckHeader {
  std::uint64_t sender_id = 0;
  static constexpr std::size_t encoded_size = 16;
  std::size_t encode(std::span<std::byte> out) const;
  static SyncAckHeader decode(std::span<const std::byte> in);
  bool operator==(const SyncAckHeader&) const = default;
};

// CancelRequestHeader::context of a transport whose cancel does not name the
// context (IMPI): the newest matching message of any context is dropped.
constexpr std::uint32_t any_context = 0xffffffffu;

struct CancelRequestHeader {
  std::uint32_t context = 0;    // where the message waits (the envelope's context), or any_context
  std::uint64_t sender_id = 0;  // the message's sender_id
  static constexpr std::size_t encoded_size = 16;
  std::size_t encode(std::span<std::byte> out) const;
  static CancelRequestHeader decode(std::span<const std::byte> in);
  bool operator==(const CancelRequestHeader&) const = default;
};

struct CancelReplyHeader {
  std::uint64_t sender_id = 0;
  bool cancelled = false;  // true: the message is gone and will never be received
  static constexpr std::size_t encoded_size = 16;
  std::size_t encode(std::span<std::byte> out) const;
  static CancelReplyHeader decode(std::span<const std::byte> in);
  bool operator==(const CancelReplyHeader&) const = default;
};

}  // namespace gridmpi::p2p::frame
