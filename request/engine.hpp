// The request-layer engine: matching, protocols, the pending-send queues and
// the progress loop over the transports.  Internal to request/; everything
// else sees request::Engine (request/request.hpp).
//
// All request-layer state lives in this one object, guarded in the thread
// progress mode by core's big lock: the engine's progress thread runs the
// shared io_context and every transport handler enters the engine's
// EventGate (p2p/transport.hpp), which is that lock; application threads
// sleep on a condition variable (see request/README.md, "progress modes").
#pragma once
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cstdint>
#include <exception>
#include <thread>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/handle_table.hpp"
#include "p2p/transport.hpp"
#include "request/bsend_buffer.hpp"
#include "request/matching.hpp"
#include "request/predict.hpp"
#include "request/request.hpp"
#include "request/request_types.hpp"
#include "p2p/frame.hpp"

namespace gridmpi::request {

using TransportMaker =
    std::function<std::vector<std::unique_ptr<p2p::Transport>>(const p2p::TransportContext&)>;

// Overrides of the configuration, for tests (unset: read the Param).
struct EngineOptions {
  std::optional<std::int64_t> rsize;
  std::optional<std::int64_t> spin;  // microseconds
  std::optional<p2p::ProgressMode> progress;  // unset: progress.mode
  std::optional<bool> yield;  // unset: progress.yield
  std::optional<predict::Method> predict;  // unset: request.predict
  std::optional<std::uint64_t> credit_limit;  // unset: request.predict_credit_limit
  std::optional<double> credit_rate;          // unset: request.predict_credit_rate
  // A multi-cluster job's IMPI start-up (not an override: passed on to the transports).
  std::shared_ptr<const impi::Startup> impi{};
};

// The process-wide table behind MPI_Request handles.
core::HandleTable<Request>& request_table();

class EngineImpl final : public Engine, public p2p::FrameSink, public p2p::EventGate {
 public:
  EngineImpl(int world_rank, int world_size, std::uint64_t job_cookie, const TransportMaker& make,
             EngineOptions options = {});
  ~EngineImpl() override;
  EngineImpl(const EngineImpl&) = delete;
  EngineImpl& operator=(const EngineImpl&) = delete;

  // Engine
  bool send_now(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm,
                std::uint32_t context) override;
  Request* isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm,
                 std::uint32_t context, SendMode mode) override;
  Request* irecv(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                 std::uint32_t context) override;
  Request* recv_start(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                      std::uint32_t context) override;
  void recv_finish(Request* request) noexcept override;
  bool probe(int source, int tag, core::Comm& comm, std::uint32_t context, bool blocking,
             MPI_Status* status) override;
  bool cancel(Request* request) override;
  void await_cancel(Request* request) override;
  bool progress() override;
  bool test_round() override;
  void test_idle() override { give_way(false); }
  void wait_until(const std::function<bool()>& done) override;
  void release(Request* request) override;
  Request* adopt(std::unique_ptr<Request> request) override;
  void repoll(Request* request) override;
  std::string endpoint() override;
  void set_peer_endpoints(const std::vector<std::string>& endpoints) override;
  void wait_ready() override;
  void shutdown() override;
  Request* send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm,
                     std::uint32_t context, SendMode mode) override;
  Request* recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                     std::uint32_t context) override;
  void start(Request* request) override;
  bool improbe(int source, int tag, core::Comm& comm, std::uint32_t context, bool blocking,
               MPI_Message* message, MPI_Status* status) override;
  Request* imrecv(void* buf, int count, MPI_Datatype type, MPI_Message message) override;
  void buffer_attach(void* buffer, int size) override;
  std::pair<void*, int> buffer_detach() override;

  // FrameSink
  p2p::Placement on_frame_begin(int peer, const p2p::Frame& frame, std::size_t payload_size) override;
  void on_frame_end(int peer, std::uint64_t token, std::span<const std::byte> payload) override;
  void on_frame(int peer, const p2p::Frame& frame, std::span<const std::byte> payload) override;
  void on_send_complete(int peer, std::uint64_t token) override;

  // EventGate (thread mode): the big lock around one round of events.
  void enter() override;
  void leave() noexcept override;
  // Also true in a round of the progress thread while the re-arm timer is
  // pending and no thread waits: the application left its polling wait less
  // than rearm_delay ago and is likely to call again soon (a crowded host's
  // collectives); armed wake-ups would cost the progress thread a switch per
  // message meanwhile, and the timer arms them if the application stays
  // away.  A thread asleep in a wait always gets them armed.
  bool application_polling() const noexcept override {
    return application_pollers_ > 0 || (gate_round_ && rearm_pending_ && waiters_.empty());
  }
  void schedule_rearm();

  // For tests and diagnostics.
  p2p::ProgressMode progress_mode() const noexcept { return mode_; }
  bool progress_thread_running() const noexcept { return progress_thread_.joinable(); }
  const MatchQueues& queues() const noexcept { return queues_; }
  std::size_t rendezvous_threshold(int peer);
  std::string transport_name(int peer);
  PeerLink peer_link(int world) const override;
  std::size_t pending_frames() const noexcept;

 private:
  struct PendingFrame {
    p2p::Frame frame;
    std::span<const std::byte> payload;
    PointRequest* owner = nullptr;  // null for control frames (cts, sync_ack)
  };
  struct Peer {
    p2p::Transport* transport = nullptr;
    std::size_t threshold = 0;  // rendezvous from this many bytes
    std::size_t max_fragment = 0;
    std::size_t max_frame_payload = 0;
    bool external32 = false;      // Transport::representation is not native
    core::ExternalFormat format = core::ExternalFormat::external32;  // which one, when external32
    // Transport::representation is native_unmarked (a rank of a LAM/MPI
    // client): it reads and writes its native bytes only, so nothing to it is
    // converted or marked, not even on a communicator spanning clusters
    // (choose_representation).
    bool native_only = false;
    bool native_rendezvous = false;  // Capabilities::rendezvous is Rendezvous::native
    bool eager_credits = true;       // Capabilities::eager_credits
    std::size_t rts_prefix = 0;      // Capabilities::rts_prefix (max_fragment with a native rendezvous)
    std::size_t copies_up_to = 0;  // Capabilities::copies_up_to
    // send_now sends messages of fewer bytes than this (eager, copied by
    // the transport, one frame, no conversion); 0: none.
    std::size_t send_now_below = 0;
    std::deque<PendingFrame> pending;  // refused with would_block, in order
    bool listed = false;               // in peers_with_pending_
    // Credits this peer gave us (p2p/frame.hpp, credit): per context, the
    // tag and bytes our next message on it may have to go eagerly.
    struct Credit {
      std::uint32_t context = 0;
      std::int32_t tag = 0;
      std::uint64_t bytes = 0;
    };
    std::vector<Credit> credits;
    // With credits on: the least round trip of a rendezvous with this peer
    // (seconds): rts to cts of our sends, cts to data of our receives; the
    // time a credit saves.  Before trusted_handshakes are seen, twice the
    // transport's declared latency.
    double handshake = 0;
    double declared_handshake = 0;
    // The least of one sample can be a round trip that waited for a busy
    // peer (milliseconds): credits use the measurement from this many on.
    static constexpr unsigned trusted_handshakes = 8;
    unsigned handshake_samples = 0;
    void observe_handshake(double trip) {
      if (handshake_samples == 0 || trip < handshake) handshake = trip;
      if (handshake_samples < trusted_handshakes) ++handshake_samples;
    }
  };
  struct MessageSlot {
    std::unique_ptr<UnexpectedMessage> message;
    MPI_Comm comm = MPI_COMM_NULL;
  };

  // Inline for a peer already in use (every message names one).
  Peer& peer(int world) {
    if (static_cast<unsigned>(world) < static_cast<unsigned>(size_)) {
      Peer& p = peers_[static_cast<std::size_t>(world)];
      if (p.transport) return p;
    }
    return first_use(world);
  }
  Peer& first_use(int world);
  // The transport with the lowest latency that reaches `world`, or null.
  p2p::Transport* best_transport(int world, p2p::Capabilities* caps) const;
  void select_transport(int world, Peer& p);
  // Sets polled_io_stride_cap_ from the transports the peers will use.
  void choose_io_stride();
  void send_frame(int peer, const p2p::Frame& frame, std::span<const std::byte> payload, PointRequest* owner);
  bool drain_pending();
  bool poll_adopted();
  // One progress round of the polling thread (poll mode).
  bool poll_round();
  // After a caller's polling round (test_round): hands the big lock to the
  // threads waiting for it, or, when the round did no work, the core; either
  // way the rounds are slow now, and poll mode asks the sockets again at its
  // shortest stride.
  void give_way(bool worked);

  // ---- thread mode ----
  // A thread sleeping in wait_until; its predicate is evaluated by whoever
  // releases the big lock (release hook), which wakes it when it holds.
  struct Waiter {
    const std::function<bool()>* done = nullptr;
    std::condition_variable cv;
    bool ready = false;
  };
  // The engine-side work that needs no io_context: failures and leftovers
  // of the transports the engine drives, refused frames, adopted requests.
  bool background_round(bool from_gate);
  bool thread_mode_progress(bool may_yield);
  void thread_mode_wait(const std::function<bool()>& done);
  void start_progress_threads();
  void stop_progress_thread() noexcept;
  void progress_thread_main();
  void check_waiters() noexcept;
  void rethrow_thread_failure();

  PointRequest* create_point(PointRole role, const void* buf, int count, MPI_Datatype type, int rank,
                             int tag, core::Comm* comm, std::uint32_t context, SendMode mode);
  // create_point's work but the request table.
  void init_point(PointRequest* r, PointRole role, const void* buf, int count, MPI_Datatype type, int rank, int tag,
                  core::Comm* comm, std::uint32_t context, SendMode mode);
  // What release() undoes but the object's memory and its table entry.
  void detach_point(PointRequest* r);
  void reset_for_start(PointRequest* r);
  void start_point(PointRequest* r);
  void start_send(PointRequest* s);
  void start_buffered(PointRequest* s);
  // Sets s->external32 / s->native_basic for its peer (see frame::flag_native_basic).
  void choose_representation(PointRequest* s, const Peer& p);
  void start_recv(PointRequest* r);
  void attach_message(PointRequest* r, std::unique_ptr<UnexpectedMessage> m);
  // attach_message's work; `m` is moved into the request when it keeps it.
  void attach_message_to(PointRequest* r, std::unique_ptr<UnexpectedMessage>& m);
  // A receive is about to take a message of peer `world`: representation, capacity, placement.
  void prepare_receive(PointRequest* r, int world, std::uint8_t flags);
  // Incoming eager, sync_eager and rts messages: the size check of an eager
  // one, the posted receive it matches (prepared, status set) or null, and
  // its place in the unexpected queue (`payload` non-null: copied at once,
  // else the returned placement receives it).
  void check_eager_size(int world, const p2p::Frame& h, std::size_t payload_size) const;
  // Receive-message prediction (request/predict.hpp): a message arrived on
  // its stream (compared with the stream's pending prediction, then
  // recorded; the first max_predicted_streams streams are followed); a wait
  // went idle (a prediction for the stream of every posted receive that
  // names its source and has none pending).
  void observe_arrival(int world, const frame::Envelope& envelope, std::uint64_t size, frame::Kind kind);
  void predict_posted();
  // A credit (p2p/frame.hpp) for the sender `world`'s next message on a
  // stream whose next message is predicted long; whether a send may go
  // eagerly on one (consumed, and any other credit of its context dropped).
  void grant_credit(int world, std::uint32_t context, const predict::Header& next);
  bool use_credit(Peer& p, std::uint32_t context, int tag, std::size_t size);
  PointRequest* match_posted(int world, const p2p::Frame& h);
  p2p::Placement queue_unexpected(int world, const p2p::Frame& h, std::size_t payload_size,
                                  const std::byte* payload);
  std::size_t native_to_external32_in_place(PointRequest* r, std::size_t bytes);
  void pack_for_peer(PointRequest* s, std::byte* out);
  void accept_rendezvous(PointRequest* r, int sender_world, std::uint64_t sender_id, std::uint64_t size,
                         std::size_t prefix, double waited = 0);
  void send_sync_ack(int peer, std::uint64_t sender_id);
  void unpack_into(PointRequest* r, std::span<const std::byte> bytes, std::size_t offset);
  std::byte* recv_base(PointRequest* r) const;
  void complete_recv(PointRequest* r);
  void maybe_complete_send(PointRequest* s);
  void complete(PointRequest* r);
  void register_id(PointRequest* r);
  void unregister_id(PointRequest* r);
  PointRequest* by_id(std::uint64_t id, frame::Kind kind, int peer);
  // MPI_Cancel of a send (the cancel_request / cancel_reply protocol).
  void cancel_send(PointRequest* s);
  void on_cancel_request(int peer, const p2p::Frame& h);
  void on_cancel_reply(int peer, const p2p::Frame& h);
  Request* add_to_table(std::unique_ptr<Request> r);

  int rank_;
  int size_;
  std::uint64_t cookie_;
  p2p::ProgressMode mode_;
  // Declared before the transports: they hold handlers on it.  Poll mode:
  // one thread runs it at a time (the waiting thread, under the big lock
  // when there are several), which hint 1 lets asio exploit.  Thread mode:
  // the progress thread blocks in it while application threads start
  // operations (send()) on its sockets and timers, so asio's internal
  // locking must stay on (the default hint).
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  // Thread mode, oversubscribed: re-arms the transports' wake-ups for the
  // progress thread a while after the last polling waiter left
  // (schedule_rearm); made at its first use.  Destroyed before io_.
  std::optional<boost::asio::steady_timer> rearm_timer_;
  bool rearm_pending_ = false;
  bool gate_round_ = false;  // background_round(from_gate) runs
  std::chrono::steady_clock::time_point last_poll_exit_{};
  std::vector<std::unique_ptr<p2p::Transport>> transports_;
  bool can_sleep_ = true;  // every transport wakes io_ (else sleeps are short)
  bool polled_ = false;    // some transport is found by polling (Capabilities::polled, or no fd)
  std::vector<p2p::Transport*> fd_transports_;  // can_block: driven by io_ (thread mode: the engine's thread)
  // poll_round()'s order: the transports found by polling memory (shm, the
  // vendor) last, so that a round that delivers the message a waiter waits
  // for ends there, not after the others' turns.
  std::vector<p2p::Transport*> poll_order_;
  std::vector<Peer> peers_;
  // Unexpected messages whose payload was still arriving when the receive
  // that took them failed (attach_message): the transport names them.
  std::vector<std::unique_ptr<UnexpectedMessage>> orphans_;
  // The last blocking receive, detached: recv_finish leaves freeing its
  // memory to the next recv_start (the destructor and the free list are not
  // on the path from the message to the caller's return).
  std::unique_ptr<PointRequest> retired_;
  std::vector<int> peers_with_pending_;
  MatchQueues queues_;
  // Receive-message prediction: the method (request.predict; off: nothing
  // below is used) and each stream's predictor and pending prediction, by
  // context << 32 | source (the sender's rank in the communicator).
  predict::Method predict_method_ = predict::Method::off;
  struct PredictedStream {
    explicit PredictedStream(predict::Method m) : stream(m) {}
    predict::Stream stream;
    std::optional<predict::Header> pending;
    bool credited = false;  // a credit went out since the stream's last message
  };
  bool credits_ = false;  // request.predict_credits (with prediction on)
  // Bytes of messages sent on our credits that wait unmatched (buffered):
  // no credit is given while they and it would exceed credit_limit_.
  std::uint64_t credited_unexpected_ = 0;
  double credit_rate_ = 0;  // request.predict_credit_rate
  void unexpected_taken(const UnexpectedMessage& m) noexcept {
    if (m.flags & frame::flag_credited) credited_unexpected_ -= std::min<std::uint64_t>(credited_unexpected_, m.size);
  }
  std::uint64_t credit_limit_ = 0;  // the largest message a credit lets come eagerly
  std::unordered_map<std::uint64_t, PredictedStream> predicted_;
  // Bounds: a periodic stream keeps 6 KiB of history (1.5 MiB for all); an
  // idle stretch predicts for the first posted receives only.
  static constexpr std::size_t max_predicted_streams = 256;
  static constexpr std::size_t max_predicted_receives = 64;
  std::unordered_map<std::uint64_t, PointRequest*> by_id_;
  std::uint64_t next_id_ = 1;
  // Sends waiting for a cancel_reply, by the message id the request names.
  std::unordered_map<std::uint64_t, PointRequest*> cancelling_;
  std::vector<Request*> adopted_;
  BsendBuffer bsend_;
  core::HandleTable<MessageSlot> messages_{MPI_ERR_REQUEST};
  std::size_t frames_outstanding_ = 0;  // over all requests
  // Poll mode: rounds since the io_context (one epoll_wait) was last asked,
  // and how many at most (poll_round) with only fd-based transports and
  // with a polled one (no fd, or Capabilities::polled).  The latter adapts: back to the
  // minimum when the io_context had work (or the waiter starts yielding),
  // doubled up to the maximum each time it had none.
  std::uint32_t rounds_without_io_ = 0;
  int waiting_ = 0;  // waits in progress (poll mode; ProgressGuard): poll_round runs one io handler per round
  static constexpr std::uint32_t io_poll_stride = 4;
  static constexpr std::uint32_t polled_io_stride_min = 8;
  // How long after the last polling waiter left the wake-ups are armed
  // again: a timer that fires sooner costs the ranks of an oversubscribed
  // host more than it gives (8 ranks on 2 cores, Allreduce 8 B: 150 us per
  // call at 200 us, 60 at 1 ms, 33 at 5 ms; 300 when arming at once).
  static constexpr std::chrono::microseconds rearm_delay{5000};
  static constexpr std::uint32_t polled_io_stride_max = 128;
  // The maximum when no peer is reached through an fd (every other rank is
  // on shm or the vendor transport): the io_context then only serves the
  // doorbell, which a spinning waiter does not need, and the job's control
  // connections; some hundreds of microseconds of rounds.
  static constexpr std::uint32_t polled_io_stride_quiet = 4096;
  std::uint32_t polled_io_stride_cap_ = polled_io_stride_max;
  std::uint32_t polled_io_stride_ = polled_io_stride_min;
  int in_progress_ = 0;
  bool shut_down_ = false;
  std::int64_t rsize_ = -1;
  std::int64_t spin_ = 0;  // microseconds
  bool yield_ = false;     // poll mode: sched_yield in idle rounds (progress.yield)
  // Thread mode with progress.yield: a waiter polls and yields for
  // progress.yield_spin before it sleeps (a wake-up costs more on an
  // oversubscribed host); the number of such waiters now.
  std::int64_t thread_yield_spin_ = 0;
  int application_pollers_ = 0;
  bool proto_info_ = false;

  // Thread mode.  Everything below except stopping_ is guarded by the big lock.
  std::thread progress_thread_;
  std::thread::id progress_thread_id_;
  std::atomic<bool> stopping_{false};
  bool threads_started_ = false;
  bool closing_ = false;                  // the destructor runs: leave() does no work
  std::vector<Waiter*> waiters_;
  std::exception_ptr thread_failure_;     // thrown by a handler or a round of the progress thread
  bool wake_all_ = false;                 // a failure: every waiter looks for itself
};

// Inline: on the path of every message that completes a request (the
// receive files and the send files both reach them).
inline void EngineImpl::unregister_id(PointRequest* r) {
  if (!r->registered) return;
  by_id_.erase(r->id);
  r->registered = false;
}

inline void EngineImpl::complete(PointRequest* r) {
  unregister_id(r);
  r->complete = true;
  if (r->bsend_block) {
    bsend_.release(*r->bsend_block);
    r->bsend_block.reset();
  }
  if (r->internal || r->freed) release(r);
}

std::unique_ptr<Engine> make_engine_with(int world_rank, int world_size, std::uint64_t job_cookie,
                                         const TransportMaker& make, EngineOptions options = {});

}  // namespace gridmpi::request
