// The engine's own view of point-to-point requests and unexpected messages.
// Internal to request/ (and its unit tests).
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/datatype.hpp"
#include "request/request.hpp"
#include "p2p/frame.hpp"

namespace gridmpi::request {

// The frame headers the engine and the transports share (p2p/frame.hpp).
namespace frame = p2p::frame;

struct PointRequest;

// The payload of an unexpected message: short ones (the common case: a
// message that arrives just before its receive is posted) inside the object,
// longer ones on the heap.
class PayloadBytes {
 public:
  static constexpr std::size_t inline_capacity = 128;
  PayloadBytes() noexcept {}  // inline_ stays uninitialised (default-initialised owners)
  PayloadBytes(const PayloadBytes&) = delete;
  PayloadBytes& operator=(const PayloadBytes&) = delete;
  // The new contents are unspecified (the frame's payload is written there).
  void resize(std::size_t n) {
    if (n > inline_capacity) heap_ = std::make_unique_for_overwrite<std::byte[]>(n);
    else heap_.reset();
    size_ = n;
  }
  std::byte* data() noexcept { return heap_ ? heap_.get() : inline_; }
  const std::byte* data() const noexcept { return heap_ ? heap_.get() : inline_; }
  std::size_t size() const noexcept { return size_; }
  operator std::span<std::byte>() noexcept { return {data(), size_}; }
  operator std::span<const std::byte>() const noexcept { return {data(), size_}; }

 private:
  std::unique_ptr<std::byte[]> heap_;
  std::size_t size_ = 0;
  alignas(8) std::byte inline_[inline_capacity];
};

// A message that arrived before its receive was posted (or that a receive
// matched while its payload is still arriving).
struct UnexpectedMessage {
  frame::Kind kind = frame::Kind::eager;  // eager, sync_eager or rts
  frame::Envelope envelope;
  std::uint64_t size = 0;         // packed bytes of the whole message
  std::uint64_t sender_id = 0;
  int peer_world = -1;            // who sent it (for answers)
  PayloadBytes data;              // eager payload
  bool data_complete = false;     // all of `data` has arrived
  PointRequest* claimed_by = nullptr;  // a receive matched it before the data was complete
  std::uint64_t arrival = 0;      // arrival order (set by MatchQueues::add_unexpected)
  double arrived_at = 0;          // an rts: when (steady clock, seconds), for the cts's waited_us
  std::uint8_t flags = 0;         // p2p::Frame::flags
  std::uint16_t basic = 0;        // p2p::Frame::basic

  // Recycled per thread, as PointRequests are (request_types.cpp).
  static void* operator new(std::size_t size);
  static void operator delete(void* p, std::size_t size) noexcept;
};
static_assert(alignof(UnexpectedMessage) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
              "UnexpectedMessage::operator new returns malloc's alignment");

enum class PointRole : std::uint8_t { send, recv };

struct PointRequest : Request {
  std::uint64_t id = 0;  // names this request in frames (cts, data, sync_ack)
  PointRole role = PointRole::send;
  int peer_world = MPI_PROC_NULL;  // world rank of dest/source (MPI_PROC_NULL, or -1 for any source)
  int my_comm_rank = 0;            // the `source` we put in frames
  const core::Datatype* type = nullptr;
  std::size_t bytes = 0;           // send: packed size; recv: capacity (native packed bytes)
  // Set when the peer's transport carries external32 data (IMPI): sends pack
  // external32, receives unpack it (decided when the peer is known); `format`
  // says which portable representation (external64 between gridmpi clients
  // that negotiated it).
  bool external32 = false;
  core::ExternalFormat format = core::ExternalFormat::external32;
  bool spans_clients = false;  // its communicator spans clusters (core::spans_clients)
  // Send: native elements of this predefined basic type sent on a
  // communicator that spans clusters (frame::flag_native_basic); receive:
  // the same from the matched message.  0 otherwise.
  std::uint16_t native_basic = 0;

  // Send side.
  std::span<const std::byte> wire_data;  // what goes on the wire (user memory, packed copy or bsend buffer)
  std::vector<std::byte> packed;         // packed copy of non-contiguous data
  int frames_outstanding = 0;            // queued in the engine or in flight in a transport
  bool awaiting_cts = false;
  bool awaiting_ack = false;
  std::size_t rts_prefix = 0;            // bytes sent with the rts (Capabilities::rts_prefix)
  // With prediction's credits on (steady clock, seconds): when a send's rts
  // or a receive's cts left; the round trip to the cts, or to the data, is
  // what a credit saves (Peer::handshake).
  double handshake_started_at = 0;
  bool internal = false;                 // created by the engine (buffered copy); released at completion
  core::Comm* held_comm = nullptr;       // core::comm_hold'ed (released by release(); lives until then)
  std::optional<std::size_t> bsend_block;  // offset of its block in the attached buffer
  // MPI_Cancel of a send: the id of the message on the wire (this request's
  // id, or for a buffered send the id of its internal copy), and whether a
  // cancel_request is out (the request completes on the cancel_reply).
  std::uint64_t message_id = 0;
  bool cancel_pending = false;

  // Receive side.
  void* recv_buf = nullptr;
  std::size_t message_size = 0;  // the sender's packed size (above capacity: truncation)
  std::size_t expected = 0;      // rendezvous bytes accepted (what the sender will send)
  std::size_t received = 0;
  std::size_t fragment_offset = 0;  // offset of the data frame being received
  // Decided when a message is matched (prepare_receive): capacity in the
  // message's wire representation, and whether payloads may be placed
  // straight into the user's buffer.
  std::size_t capacity = 0;
  bool direct = false;
  std::unique_ptr<UnexpectedMessage> message;  // matched message whose payload is still arriving
  bool posted = false;
  PointRequest* posted_prev = nullptr;  // MatchQueues' posted queue (intrusive)
  PointRequest* posted_next = nullptr;

  bool registered = false;  // in the engine's id map (a peer may name it)

  PointRequest* as_point() noexcept override { return this; }
  // Every message creates and frees one: their memory is recycled through a
  // small per-thread free list instead of malloc (request_types.cpp).
  static void* operator new(std::size_t size);
  static void operator delete(void* p, std::size_t size) noexcept;
};

}  // namespace gridmpi::request
