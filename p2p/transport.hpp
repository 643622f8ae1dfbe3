// The transport interface: what request/ needs from a way of moving bytes to
// another process.  Owner: p2p/.
//
// A transport moves frames (the typed struct of p2p/frame.hpp plus an
// optional payload) to a peer named by its MPI_COMM_WORLD rank and reports
// received frames through the FrameSink upcalls.  A byte transport carries
// the frame as frame::encode writes it; one with a protocol of its own (IMPI)
// maps it to its packets.  It does not match, it does not know
// MPI datatypes, and it never decides a protocol: it declares its numbers in
// capabilities() and request/ decides from them.
//
// Contract, in order of importance:
//  * Frames sent to one peer arrive in the order they were accepted by send().
//  * For every received frame the transport calls on_frame_begin (with the
//    frame and the payload size), then exactly once on_frame_end.  Between
//    the two it may deliver frames of other peers, never of the same peer.
//    on_frame_begin may return a destination for the payload (exactly
//    payload-size bytes): the transport then places the payload there (straight from the socket when it can)
//    and on_frame_end receives that span; otherwise on_frame_end receives the
//    payload in the transport's own memory, valid only during the call.
//  * The sink may call send() from inside any upcall (a clear-to-send in
//    answer to a request-to-send, for example).
//  * send() either takes the frame (complete: the caller's memory may be
//    reused now; in_flight: the payload is referenced until
//    on_send_complete(token), never called from inside that send()), or
//    refuses it (would_block: nothing taken, the caller keeps it queued and
//    retries after progress).  The frame is always copied.
//  * Transports that wait on file descriptors do so through the shared
//    io_context of TransportContext: the engine sleeps in it for all of them
//    at once.  Their I/O runs in the handlers the engine's io_context.poll()
//    executes; progress() does whatever is left (deferred errors, retries).
//  * Upcalls never throw into the transport's I/O machinery; a transport
//    that detects a fatal condition (a peer lost without saying goodbye)
//    throws MpiError from progress(), with a message naming both ranks, the
//    address and the OS error.
#pragma once
#include <boost/asio/io_context.hpp>
#include <chrono>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "p2p/frame.hpp"

namespace gridmpi::impi { struct Startup; }

namespace gridmpi::p2p {

using Frame = frame::Frame;

// How a message at or above the eager/rendezvous switch travels: the
// engine's protocol over frames, or the transport's own (the ch4 way: a
// transport with a native operation says so, every other gets the generic
// one).  Either way the engine sends rts, cts and data frames; what differs
// is who decides their sizes.
enum class Rendezvous : std::uint8_t {
  // request/'s protocol: rts (with Capabilities::rts_prefix bytes), cts with
  // the bytes the receive accepts, then data frames of max_fragment bytes.
  // The switch is request.rsize if set, else eager_limit.
  generic,
  // The transport's long-message protocol (IMPI's, docs/impi-protocol.md
  // 7.2; impi/translate.hpp maps the frames to it), whose rules the engine
  // follows: the rts carries the first max_fragment bytes, the receiver
  // accepts the whole message whatever it posted (a truncating receive
  // discards the excess), the transport fills the offsets of incoming data
  // frames, and the switch is always eager_limit.
  native,
};

struct Capabilities {
  // Payload bytes below which request/ sends eagerly unless configured otherwise.
  std::size_t eager_limit = 0;
  // Payload size of the fragments rendezvous data is cut into.
  std::size_t max_fragment = 0;
  // Hard limit of one frame's payload: an eager message above it goes by
  // rendezvous whatever the switch point says.
  std::size_t max_frame_payload = std::numeric_limits<std::size_t>::max();
  double latency_us = 0;            // one-way small-message estimate
  double bandwidth_bytes_per_s = 0; // large-message estimate
  // True when every event of this transport wakes the shared io_context, so
  // that a waiting process may sleep there.  False forces the engine to keep
  // polling (with yields) while this transport has traffic.
  bool can_block = true;
  // True when its messages are found by progress() looking at memory (the
  // shm rings) rather than by the io_context: while a waiter spins, the
  // engine then asks the io_context (an epoll_wait system call) only every
  // few rounds instead of in every idle one.  A transport without an fd
  // (can_block false) is always treated so.
  bool polled = false;
  // Whether a receiver may let a predicted long message come eagerly
  // (request/'s prediction credits, request/README.md): false where an
  // eager long message costs more than the rendezvous round trip it saves
  // (shm: its rendezvous moves the data in one copy, its eager path in two,
  // through a ring both processes must serve).
  bool eager_credits = true;
  // How messages from the eager/rendezvous switch on travel (see Rendezvous).
  Rendezvous rendezvous = Rendezvous::generic;
  // Generic rendezvous: the rts carries the message's first rts_prefix bytes
  // (0: none), which travel while the receiver's clear-to-send comes back;
  // the receiver accepts at least what the rts carried (a truncating receive
  // discards the excess) and the sender sends the rest of what it accepted.
  // Unless request.rsize is set, a message of up to rts_prefix bytes goes
  // eagerly (the switch becomes rts_prefix + 1 when that is above
  // eager_limit): the rts would carry it whole, and the sender would only
  // wait for the cts.
  std::size_t rts_prefix = 0;
  // send() copies payloads of up to this many bytes before it returns: it
  // answers complete or would_block for them, never in_flight.  Lets
  // request/ send a blocking eager message without a request (0: never).
  std::size_t copies_up_to = 0;
};

enum class SendStatus : std::uint8_t { complete, in_flight, would_block };

// How user data travels to one peer: as this process holds it, or in one of
// the portable representations of core/external_format.hpp.
//   native_unmarked: native bytes to a peer that reads no representation
//   marks (Frame::flags) and converts nothing: point-to-point with it is
//   native whatever the communicator (LAM/MPI 7.1.4's clients, whose
//   processes hand their native buffers to its IMPI daemon).
enum class DataRepresentation : std::uint8_t { native, external32, external64, native_unmarked };

struct Placement {
  // Exactly payload_size bytes, or empty: the transport supplies the payload.
  std::span<std::byte> destination;
  std::uint64_t token = 0;           // handed back to on_frame_end
};

// The receiving side of a transport (implemented by the request layer).
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual Placement on_frame_begin(int peer, const Frame& frame, std::size_t payload_size) = 0;
  virtual void on_frame_end(int peer, std::uint64_t token, std::span<const std::byte> payload) = 0;
  // A frame whose whole payload is at hand: on_frame_begin, the payload
  // copied to the placement's destination (if it names one), on_frame_end.
  // Sinks may deliver such frames more directly (request/: an eager message
  // that a posted receive matches goes straight to its buffer).
  virtual void on_frame(int peer, const Frame& frame, std::span<const std::byte> payload);
  // A send that returned in_flight is finished; its payload may be reused.
  virtual void on_send_complete(int peer, std::uint64_t token) = 0;
};

// The progress modes (docs/design.md section 3; GRIDMPI_PROGRESS, site
// file `progress.mode`, `mpirun -progress`).
//  * poll: the thread that waits drives everything: it runs the shared
//    io_context and calls every transport's progress() in turn.  No thread
//    of the library's own exists.
//  * thread: a progress thread of the engine runs the shared io_context
//    (blocking in it), and each transport that cannot wake it (can_block
//    false: the vendor transport) runs a progress thread of its own, which
//    blocks in the transport's own wait.  Application threads never run the
//    io_context; they sleep on a condition variable of the request layer
//    until their request completes.
enum class ProgressMode : std::uint8_t { poll, thread };

// Thread mode: the request layer's lock (core's big lock) around event
// delivery.  A transport enters the gate around every handler it runs on
// the shared io_context and around every call into the FrameSink from a
// thread of its own; leave() lets the engine finish the round (retry
// refused frames, progress collectives, wake the application threads whose
// requests completed) and releases the lock.  Recursive: entering while
// already inside (a send() from an upcall, a handler run from poll mode) is
// allowed.  In poll mode TransportContext::gate is null and nothing is
// needed: the polling thread already holds the lock.
class EventGate {
 public:
  virtual ~EventGate() = default;
  virtual void enter() = 0;
  virtual void leave() noexcept = 0;
  // True while an application thread polls the transports itself (a wait
  // on an oversubscribed host): a transport need not arm its wake-up for
  // the progress thread then; the poller arms it (a round with this false)
  // before it sleeps.  Read under the lock.
  virtual bool application_polling() const noexcept { return false; }
};

// RAII for EventGate; a null gate (poll mode) costs one branch.
class GateScope {
 public:
  explicit GateScope(EventGate* gate) : gate_(gate) {
    if (gate_) gate_->enter();
  }
  ~GateScope() {
    if (gate_) gate_->leave();
  }
  GateScope(const GateScope&) = delete;
  GateScope& operator=(const GateScope&) = delete;

 private:
  EventGate* gate_;
};

struct TransportContext {
  int world_rank = 0;
  int world_size = 1;
  std::uint64_t job_cookie = 0;
  boost::asio::io_context* io = nullptr;
  FrameSink* sink = nullptr;
  // Set in a multi-cluster job (mpirun -client): what the IMPI start-up
  // learnt; the impi transport is created only then.
  std::shared_ptr<const impi::Startup> impi{};
  ProgressMode progress = ProgressMode::poll;
  // Poll mode: the waiter gives its core away in idle rounds (the host has
  // more ranks than cores, request/progress_mode.hpp): a transport must not
  // report busy-waiting as progress then, or the engine never yields.
  bool yield_when_idle = false;
  // Thread mode only (null in poll mode): see EventGate.
  EventGate* gate = nullptr;
  // Poll mode: how long the engine's waiter polls before it sleeps
  // (progress.spin, or progress.yield_spin while yielding); unset in tests
  // that drive a transport alone.
  std::optional<std::chrono::microseconds> engine_spin{};
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Short lower-case name; also the prefix of its endpoint string ("tcp").
  virtual const char* name() const noexcept = 0;
  virtual Capabilities capabilities() const = 0;
  // Whether this transport can reach `peer` (a world rank) at all.
  virtual bool reachable(int peer) const = 0;
  // The representation of user data to `peer` (asked once, when the peer is
  // first used): request/ packs and unpacks with the converters of
  // core/external_format.hpp for the external ones, and message sizes on the
  // wire are then external bytes.  Native unless the transport says more.
  virtual DataRepresentation representation(int /*peer*/) const { return DataRepresentation::native; }

  // What peers need to reach this process, e.g. "tcp:10.0.0.2:40123"; empty
  // when the transport has nothing to publish.
  virtual std::string endpoint() = 0;
  // A peer's endpoint as published (the whole "name:..." string).
  virtual void set_peer_endpoint(int peer, std::string_view endpoint) = 0;

  virtual SendStatus send(int peer, const Frame& frame, std::span<const std::byte> payload,
                          std::uint64_t token) = 0;
  // Non-blocking; returns true if it did any work.
  virtual bool progress() = 0;

  // Connections a transport must make before MPI_Init returns (IMPI's host
  // connections) are up; the engine waits for this after wire-up.  Failures
  // surface through progress().
  virtual bool ready() const { return true; }

  // Thread mode, transports with can_block false: start the transport's own
  // progress thread (it blocks in the transport's own wait and delivers
  // events inside TransportContext::gate).  Called once, after wire-up; the
  // thread ends in begin_shutdown()/the destructor.  The default does
  // nothing (fd-based transports are driven by the engine's thread).
  virtual void start_progress_thread() {}

  // Orderly close: say goodbye to every connected peer, then report when
  // every peer has said goodbye too (or a bounded time has passed).
  virtual void begin_shutdown() = 0;
  virtual bool shutdown_complete() const = 0;
};

// The transports the engine may select from, in preference order for equal
// cost.  p2p/template is deliberately absent: it is compiled and tested, never
// selected.
struct TransportFactory {
  const char* name;
  // Returns nullptr when the transport is useless for this job (tcp in a
  // singleton, for instance).
  std::function<std::unique_ptr<Transport>(const TransportContext&)> create;
};
const std::vector<TransportFactory>& transport_factories();

// The latency and bandwidth a transport declares in capabilities(), by its
// name ("shm", "tcp", "impi", ...), for tools that estimate without a job
// (gridmpi-model); zeros for an unknown name.
struct DeclaredLink {
  double latency_us = 0;
  double bandwidth_bytes_per_s = 0;
};
DeclaredLink declared_link(std::string_view transport);

}  // namespace gridmpi::p2p
