// The frames of the transport contract (p2p/transport.hpp): the typed
// struct the request engine hands a transport with every payload, and the
// bytes a transport that carries frames as they are (tcp, shm, vendor) puts
// in front of the payload.  A transport that speaks another protocol
// (impi/translate.hpp) maps the struct to and from its own packets.
// Fixed-width fields, explicit little-endian encode/decode; round trips and
// byte layouts in tests/unit/test_frame.cpp.
//
// Every header starts with   u8 kind | u8 flags | u16 reserved
//
//   (eager, sync_eager, rts: u8 kind | u8 flags | u16 basic, see flag_external32)
//   eager, sync_eager, rts:  + u32 context | i32 source | i32 tag | u64 size | u64 sender_id   (32 bytes)
//   cts:                     + u32 waited_us | u64 sender_id | u64 receiver_id | u64 accepted (32 bytes)
//   data:                    + u32 reserved | u64 receiver_id | u64 offset                    (24 bytes)
//   sync_ack:                + u32 reserved | u64 sender_id                                   (16 bytes)
//   cancel_request:          + u32 context  | u64 sender_id                                   (16 bytes)
//   cancel_reply:            + u32 cancelled (0 or 1) | u64 sender_id                         (16 bytes)
//   credit:                  + u32 context | i32 tag | u32 reserved | u64 bytes              (24 bytes)
//
// A credit (receive-message prediction, request/README.md): the receiver
// predicts that the sender's next message on `context` has `tag` and is
// long (a rendezvous one) of at most `bytes`, and lets it come eagerly,
// without the request-to-send and clear-to-send round trip; it then takes it
// as any eager message (straight into a posted receive, or buffered as
// unexpected).  The sender uses it for its next message on that context if
// tag and size agree, and drops it at that message either way.
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
#include <bit>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

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
  credit = 9,          // the receiver lets the sender's next long message of a context come eagerly
};
constexpr Kind last_kind = Kind::credit;

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

// Frame::flags of messages, for communicators that span clusters (MPI_Pack on
// them produces external32, IMPI's rule), on transports whose data is native:
// flag_external32: the payload is external32 (an MPI_PACKED message, or
//   typed data of mixed basic types): a typed receive converts it.
// flag_native_basic: the payload is native elements of one predefined basic
//   type, Frame::basic: a receive into MPI_PACKED converts them to
//   external32 (typed receives take them as they are).
// flag_external64 (with flag_external32): the payload is external64
//   (core/external_format.hpp): mixed basic types from an LP64 process, so
//   that a long keeps its value (MPI_PACKED receives read it as it is).
constexpr std::uint8_t flag_external32 = 1;
constexpr std::uint8_t flag_native_basic = 2;
constexpr std::uint8_t flag_external64 = 4;
// flag_credited: a long message sent eagerly on its receiver's credit (kind
// credit below); the receiver counts such messages while they wait
// unmatched, to bound what its credits make it buffer.
constexpr std::uint8_t flag_credited = 8;

// CancelRequest's context of a transport whose cancel does not name the
// context (IMPI): the newest matching message of any context is dropped.
constexpr std::uint32_t any_context = 0xffffffffu;

// One frame of the transport contract: what request/ hands a transport with
// a payload, and what a transport hands back to the FrameSink.  Which fields
// a kind uses (the others stay 0):
//   eager, sync_eager, rts   flags, basic, envelope, size, sender_id
//   cts                      sender_id, receiver_id, accepted
//   data                     receiver_id, offset
//   sync_ack                 sender_id
//   cancel_request           envelope.context (or any_context), sender_id
//   cancel_reply             sender_id, cancelled
// Transports of byte streams and rings carry it as encode() writes it (the
// layout at the top of this file); a transport with a protocol of its own
// (impi/translate.hpp) maps it to and from its packets.
struct Frame {
  Kind kind = Kind::eager;
  std::uint8_t flags = 0;       // message kinds: the flag_* above
  std::uint16_t basic = 0;      // with flag_native_basic: the MPI_Datatype handle of the elements
  Envelope envelope;
  std::uint64_t size = 0;       // message kinds: packed bytes of the whole message
  std::uint64_t sender_id = 0;  // names the message (sync_ack, cts, cancel_request, cancel_reply)
  std::uint64_t receiver_id = 0;  // names the receive (cts, data)
  std::uint64_t accepted = 0;   // cts: bytes the receiver takes (less than size when truncating)
  std::uint64_t offset = 0;     // data: where the fragment goes in the message
  // cts: how long the rts waited at the receiver for its receive, in
  // microseconds (saturating; the sender subtracts it to get the round trip).
  std::uint32_t waited_us = 0;
  bool cancelled = false;       // cancel_reply: the message is gone and will never be received

  static Frame message(Kind kind, Envelope envelope, std::uint64_t size, std::uint64_t sender_id) {
    Frame f;
    f.kind = kind;
    f.envelope = envelope;
    f.size = size;
    f.sender_id = sender_id;
    return f;
  }
  static Frame cts(std::uint64_t sender_id, std::uint64_t receiver_id, std::uint64_t accepted) {
    Frame f;
    f.kind = Kind::cts;
    f.sender_id = sender_id;
    f.receiver_id = receiver_id;
    f.accepted = accepted;
    return f;
  }
  static Frame data(std::uint64_t receiver_id, std::uint64_t offset) {
    Frame f;
    f.kind = Kind::data;
    f.receiver_id = receiver_id;
    f.offset = offset;
    return f;
  }
  static Frame sync_ack(std::uint64_t sender_id) {
    Frame f;
    f.kind = Kind::sync_ack;
    f.sender_id = sender_id;
    return f;
  }
  static Frame cancel_request(std::uint32_t context, std::uint64_t sender_id) {
    Frame f;
    f.kind = Kind::cancel_request;
    f.envelope.context = context;
    f.sender_id = sender_id;
    return f;
  }
  static Frame cancel_reply(std::uint64_t sender_id, bool cancelled) {
    Frame f;
    f.kind = Kind::cancel_reply;
    f.sender_id = sender_id;
    f.cancelled = cancelled;
    return f;
  }
  static Frame credit(std::uint32_t context, std::int32_t tag, std::uint64_t bytes) {
    Frame f;
    f.kind = Kind::credit;
    f.envelope.context = context;
    f.envelope.tag = tag;
    f.size = bytes;
    return f;
  }
  bool is_message() const noexcept { return kind == Kind::eager || kind == Kind::sync_eager || kind == Kind::rts; }
  bool operator==(const Frame&) const = default;
};

// The first 32 bytes of a Frame are laid out as a message kind's encoding
// (kind, flags, basic, context, source, tag, size, sender_id), so that on a
// little-endian host a message encodes and decodes as one 32-byte copy: the
// path every eager message takes twice.
static_assert(offsetof(Frame, flags) == 1 && offsetof(Frame, basic) == 2 && offsetof(Frame, envelope) == 4 &&
              offsetof(Frame, size) == 16 && offsetof(Frame, sender_id) == 24);
static_assert(sizeof(Envelope) == 12 && offsetof(Envelope, source) == 4 && offsetof(Envelope, tag) == 8);
static_assert(std::is_trivially_copyable_v<Frame> && std::is_standard_layout_v<Frame>);
constexpr bool message_is_memory_image = std::endian::native == std::endian::little;

// Bytes of a kind's encoding.
constexpr std::size_t encoded_size(Kind kind) {
  switch (kind) {
    case Kind::eager:
    case Kind::sync_eager:
    case Kind::rts:
    case Kind::cts: return 32;
    case Kind::data:
    case Kind::credit: return 24;
    default: return 16;
  }
}

// The failures of encode and decode (they throw MpiError(MPI_ERR_INTERN)).
[[noreturn]] void header_buffer_too_small(std::size_t have, std::size_t need);
[[noreturn]] void short_header(Kind kind, std::size_t have, std::size_t need);
[[noreturn]] void bad_cancelled(std::uint32_t value);

// Writes `f` as the layout above; returns the bytes used.  Inline: both
// run once per frame on the message path of every byte transport.
inline std::size_t encode(const Frame& f, std::span<std::byte> out) {
  if constexpr (message_is_memory_image) {
    if (f.is_message()) [[likely]] {
      if (out.size() < 32) [[unlikely]]
        header_buffer_too_small(out.size(), 32);
      std::memcpy(out.data(), &f, 32);
      return 32;
    }
  }
  const std::size_t n = encoded_size(f.kind);
  if (out.size() < n) [[unlikely]]
    header_buffer_too_small(out.size(), n);
  p2p::WireWriter w(out.data());
  switch (f.kind) {
    case Kind::eager:
    case Kind::sync_eager:
    case Kind::rts:
      w.put(static_cast<std::uint8_t>(f.kind)).put(f.flags).put(f.basic);
      w.put(f.envelope.context).put(f.envelope.source).put(f.envelope.tag).put(f.size).put(f.sender_id);
      break;
    case Kind::cts:
      w.put(static_cast<std::uint32_t>(f.kind)).put(f.waited_us);
      w.put(f.sender_id).put(f.receiver_id).put(f.accepted);
      break;
    case Kind::data:
      w.put(static_cast<std::uint32_t>(f.kind)).put(std::uint32_t{0}).put(f.receiver_id).put(f.offset);
      break;
    case Kind::sync_ack:
      w.put(static_cast<std::uint32_t>(f.kind)).put(std::uint32_t{0}).put(f.sender_id);
      break;
    case Kind::cancel_request:
      w.put(static_cast<std::uint32_t>(f.kind)).put(f.envelope.context).put(f.sender_id);
      break;
    case Kind::cancel_reply:
      w.put(static_cast<std::uint32_t>(f.kind)).put(std::uint32_t{f.cancelled ? 1u : 0u}).put(f.sender_id);
      break;
    case Kind::credit:
      w.put(static_cast<std::uint32_t>(f.kind)).put(f.envelope.context).put(f.envelope.tag).put(std::uint32_t{0});
      w.put(f.size);
      break;
  }
  return w.used();
}

// The bytes encode() would write for `f`: the frame's own memory where that
// is its encoding (a message on a little-endian host; valid while `f` is),
// else encoded into `buffer`.  What byte transports put on their wire.
inline std::span<const std::byte> encoded(const Frame& f, HeaderBuffer& buffer) {
  if constexpr (message_is_memory_image) {
    if (f.is_message()) [[likely]]
      return {reinterpret_cast<const std::byte*>(&f), 32};
  }
  return {buffer.data(), encode(f, buffer)};
}

// Reads a frame written by encode; a short header, an unknown kind or a
// field out of range throws MpiError(MPI_ERR_INTERN) naming the problem (the
// caller adds the peer).
inline Frame decode(std::span<const std::byte> in) {
  if constexpr (message_is_memory_image) {
    // A whole message (kinds 1-3): its bytes are the struct's first 32.
    if (in.size() >= 32 && static_cast<std::uint8_t>(static_cast<std::uint8_t>(in[0]) - 1) < 3) [[likely]] {
      Frame f;
      std::memcpy(static_cast<void*>(&f), in.data(), 32);
      return f;
    }
  }
  Frame f;
  f.kind = peek_kind(in);
  if (const std::size_t n = encoded_size(f.kind); in.size() < n) [[unlikely]]
    short_header(f.kind, in.size(), n);
  p2p::WireReader r(in.data() + 4);
  switch (f.kind) {
    case Kind::eager:
    case Kind::sync_eager:
    case Kind::rts:
      f.flags = static_cast<std::uint8_t>(in[1]);
      f.basic = p2p::load_le<std::uint16_t>(in.data() + 2);
      f.envelope.context = r.get<std::uint32_t>();
      f.envelope.source = r.get<std::int32_t>();
      f.envelope.tag = r.get<std::int32_t>();
      f.size = r.get<std::uint64_t>();
      f.sender_id = r.get<std::uint64_t>();
      break;
    case Kind::cts:
      f.waited_us = r.get<std::uint32_t>();
      f.sender_id = r.get<std::uint64_t>();
      f.receiver_id = r.get<std::uint64_t>();
      f.accepted = r.get<std::uint64_t>();
      break;
    case Kind::data:
      r.get<std::uint32_t>();
      f.receiver_id = r.get<std::uint64_t>();
      f.offset = r.get<std::uint64_t>();
      break;
    case Kind::sync_ack:
      r.get<std::uint32_t>();
      f.sender_id = r.get<std::uint64_t>();
      break;
    case Kind::cancel_request:
      f.envelope.context = r.get<std::uint32_t>();
      f.sender_id = r.get<std::uint64_t>();
      break;
    case Kind::cancel_reply: {
      std::uint32_t cancelled = r.get<std::uint32_t>();
      if (cancelled > 1) [[unlikely]]
        bad_cancelled(cancelled);
      f.cancelled = cancelled == 1;
      f.sender_id = r.get<std::uint64_t>();
      break;
    }
    case Kind::credit:
      f.envelope.context = r.get<std::uint32_t>();
      f.envelope.tag = r.get<std::int32_t>();
      r.get<std::uint32_t>();
      f.size = r.get<std::uint64_t>();
      break;
  }
  return f;
}

}  // namespace gridmpi::p2p::frame
