#include "request/engine.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <limits>

#include "conf/log.hpp"
#include "conf/registry.hpp"
#include "core/big_lock.hpp"
#include "base/error.hpp"
#include "core/group.hpp"
#include "core/job_layout.hpp"
#include "p2p/copy_bytes.hpp"
#include "request/comm_wait.hpp"
#include "request/progress_mode.hpp"

namespace gridmpi::request {

namespace {

const conf::Param<std::int64_t> rsize_param{
    "request.rsize", -1, "bytes",
    "eager/rendezvous switch point: -1 = each transport's eager limit, 0 = always eager "
    "(GridMPI's default), n = rendezvous from n bytes",
    conf::Level::tuner, {"_YAMPI_RSIZE"}};

const conf::Param<bool> proto_info_param{
    "request.proto_info", false, "",
    "print, for each peer, the transport and the eager/rendezvous switch point chosen",
    conf::Level::user, {"GRIDMPI_PROTO_INFO"}};

const conf::Param<std::int64_t> yield_spin_param{
    "progress.yield_spin", 500, "microseconds",
    "progress.spin while the waiter yields its core in idle rounds (progress.yield): yielding costs the "
    "other ranks nothing, and a sleeper's wake-up on an oversubscribed host costs far more",
    conf::Level::tuner};

const conf::Param<std::int64_t> spin_param{
    "progress.spin", 50, "microseconds",
    "how long a waiting process keeps polling without news before it sleeps in the transports' "
    "event wait (a bounded spin: 8 ranks on 2 cores must stay usable); 0 = sleep at once",
    conf::Level::tuner};

// Poll mode.  While sleeping, wake up this often anyway: a generalized
// request may be completed by another thread, which no transport event
// announces (under MPI_THREAD_MULTIPLE that thread's waker is faster).
constexpr auto sleep_slice = std::chrono::milliseconds(1);
// With a transport that has no fd (nothing wakes a sleep): after the spin
// budget, this long of sched_yield rounds (cheap when the core is idle, and
// a peer rank on the same core gets it), then sleeps between polls that
// grow from min_poll_slice to max_poll_slice.
constexpr auto yield_phase = std::chrono::milliseconds(2);
constexpr auto min_poll_slice = std::chrono::microseconds(20);
constexpr auto max_poll_slice = std::chrono::microseconds(500);

// Thread mode.  A sleeping waiter is woken by whoever completes its wait;
// this bound only catches what no event announces (deadlines: a transport's
// connect or goodbye time limit, the shutdown's patience).
constexpr auto thread_wait_slice = std::chrono::milliseconds(50);

// Placement tokens: a pointer with the frame's role in its low bits (objects
// from new are at least 8-byte aligned).
enum TokenTag : std::uint64_t { token_none = 0, token_eager = 1, token_data = 2, token_unexpected = 3 };
constexpr std::uint64_t tag_mask = 7;

template <class T>
std::uint64_t make_token(T* p, TokenTag tag) {
  return reinterpret_cast<std::uint64_t>(p) | tag;
}
template <class T>
T* token_pointer(std::uint64_t token) {
  return reinterpret_cast<T*>(token & ~tag_mask);
}

void set_proc_null_status(MPI_Status& s) {
  s.MPI_SOURCE = MPI_PROC_NULL;
  s.MPI_TAG = MPI_ANY_TAG;
  s.MPI_ERROR = MPI_SUCCESS;
  s.gridmpi_count = 0;
  s.gridmpi_cancelled = 0;
}

template <class T>
T read_param(const conf::Param<T>& p) {
  try {
    return p.get();
  } catch (const conf::ConfigError& e) {
    throw MpiError(MPI_ERR_OTHER, e.what());
  }
}

struct ProgressGuard {
  int& depth;
  explicit ProgressGuard(int& d) : depth(d) { ++depth; }
  ~ProgressGuard() { --depth; }
};

// Thread mode: the engine's entry points that may be called without the big
// lock (unit tests, MPI_Init before the lock is held) take it themselves;
// it is recursive, so under an MPI call this only counts.
class LockIfThreaded {
 public:
  explicit LockIfThreaded(bool threaded) : threaded_(threaded) {
    if (threaded_) core::big_lock().lock(false);
  }
  ~LockIfThreaded() {
    if (threaded_) core::big_lock().unlock();
  }
  LockIfThreaded(const LockIfThreaded&) = delete;
  LockIfThreaded& operator=(const LockIfThreaded&) = delete;

 private:
  bool threaded_;
};

}  // namespace

core::HandleTable<Request>& request_table() {
  static core::HandleTable<Request> table(MPI_ERR_REQUEST);
  return table;
}

Request* find_request(MPI_Request handle) noexcept { return request_table().find(handle); }

EngineImpl::EngineImpl(int world_rank, int world_size, std::uint64_t job_cookie, const TransportMaker& make,
                       EngineOptions options)
    : rank_(world_rank),
      size_(world_size),
      cookie_(job_cookie),
      mode_(options.progress ? *options.progress : progress_mode_setting()),
      io_(mode_ == p2p::ProgressMode::thread ? BOOST_ASIO_CONCURRENCY_HINT_SAFE : 1),
      work_(boost::asio::make_work_guard(io_)),
      peers_(static_cast<std::size_t>(world_size)) {
  rsize_ = options.rsize ? *options.rsize : read_param(rsize_param);
  spin_ = options.spin ? *options.spin : read_param(spin_param);
  proto_info_ = read_param(proto_info_param);
  yield_ = mode_ == p2p::ProgressMode::poll && (options.yield ? *options.yield : yield_when_idle_setting());
  if (yield_ && !options.spin) spin_ = read_param(yield_spin_param);
  if (mode_ == p2p::ProgressMode::thread && (options.yield ? *options.yield : yield_when_idle_setting()))
    thread_yield_spin_ = read_param(yield_spin_param);
  if (spin_ < 0)
    throw MpiError(MPI_ERR_OTHER, fmt::format("{} is {}; use 0 or more microseconds",
                                              yield_ && !options.spin ? "progress.yield_spin" : "progress.spin", spin_));
  if (rsize_ < -1) throw MpiError(MPI_ERR_OTHER, fmt::format("request.rsize (_YAMPI_RSIZE) is {}; use -1, 0 or a byte count", rsize_));
  const bool threaded = mode_ == p2p::ProgressMode::thread;
  p2p::TransportContext context{world_rank, world_size, job_cookie, &io_, this, options.impi, mode_, yield_,
                                threaded ? static_cast<p2p::EventGate*>(this) : nullptr,
                                std::chrono::microseconds(spin_)};
  transports_ = make(context);
  std::vector<p2p::Transport*> found_in_memory;
  for (const auto& t : transports_) {
    const p2p::Capabilities caps = t->capabilities();
    can_sleep_ = can_sleep_ && caps.can_block;
    const bool memory = caps.polled || !caps.can_block;
    polled_ = polled_ || memory;
    if (caps.can_block) fd_transports_.push_back(t.get());
    (memory ? found_in_memory : poll_order_).push_back(t.get());
  }
  poll_order_.insert(poll_order_.end(), found_in_memory.begin(), found_in_memory.end());
  // Handle 1 is MPI_MESSAGE_NO_PROC: keep it out of the user range.
  messages_.put_at(MPI_MESSAGE_NO_PROC, std::make_unique<MessageSlot>());
  if (threaded) {
    // A progress thread will exist: every MPI call must take the big lock,
    // whatever the thread level (MPI_Init holds it from here on).
    core::big_lock().enable();
    LockIfThreaded hold(true);
    core::big_lock().add_release_hook(this, [](void* self) noexcept { static_cast<EngineImpl*>(self)->check_waiters(); });
    return;  // no waker: nobody sleeps in the io_context with the lock held
  }
  // MPI_THREAD_MULTIPLE: a thread that finds the big lock taken wakes us
  // from a transport sleep in wait_until (asio's post is thread-safe; the
  // no-op handler then runs under the lock like every other).
  core::big_lock().add_waker(this, [](void* self) {
    try {
      boost::asio::post(static_cast<EngineImpl*>(self)->io_, [] {});
    } catch (...) {
      // Out of memory: the sleeper still wakes within sleep_slice.
    }
  });
}

EngineImpl::~EngineImpl() {
  if (mode_ != p2p::ProgressMode::thread) {
    core::big_lock().remove_waker(this);
    // Transports first: their handlers refer to this sink.
    poll_order_.clear();
    fd_transports_.clear();
    transports_.clear();
    return;
  }
  // Nothing may run a handler once the engine is gone: the progress thread
  // ends first (the io_context's remaining handlers are destroyed unrun).
  core::BigLock& lock = core::big_lock();
  LockIfThreaded hold(true);
  stop_progress_thread();
  closing_ = true;
  lock.remove_release_hook(this);
  // Transports driven by the engine's thread have no thread left: destroy
  // them under the lock.  Those with threads of their own end them in their
  // destructor, and such a thread may be waiting at the gate meanwhile: the
  // lock is released around them (leave() does no engine work while closing_).
  std::vector<std::unique_ptr<p2p::Transport>> own_threads;
  for (auto& t : transports_)
    if (!t->capabilities().can_block) own_threads.push_back(std::move(t));
  poll_order_.clear();
  fd_transports_.clear();
  transports_.clear();
  int depth = lock.release_all();
  own_threads.clear();
  lock.reacquire(depth);
}

// ---- wire-up --------------------------------------------------------------

std::string EngineImpl::endpoint() {
  std::string all;
  for (const auto& t : transports_) {
    std::string e = t->endpoint();
    if (e.empty()) continue;
    if (!all.empty()) all += ';';
    all += e;
  }
  return all;
}

void EngineImpl::set_peer_endpoints(const std::vector<std::string>& endpoints) {
  if (endpoints.size() != static_cast<std::size_t>(size_))
    throw MpiError(MPI_ERR_INTERN, fmt::format("{} endpoints for a world of {}", endpoints.size(), size_));
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    std::string_view rest = endpoints[r];
    while (!rest.empty()) {
      auto semi = rest.find(';');
      std::string_view one = rest.substr(0, semi);
      rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
      auto colon = one.find(':');
      std::string_view name = one.substr(0, colon);
      for (const auto& t : transports_)
        if (name == t->name()) t->set_peer_endpoint(r, one);
    }
  }
  choose_io_stride();
  // Thread mode: wired up, the progress threads may start.
  if (mode_ == p2p::ProgressMode::thread) start_progress_threads();
}

void EngineImpl::wait_ready() {
  wait_until([&] {
    return std::all_of(transports_.begin(), transports_.end(), [](const auto& t) { return t->ready(); });
  });
  progress();  // a transport that is "ready" because it failed reports it here, inside MPI_Init
}

void EngineImpl::choose_io_stride() {
  // Is any peer reached through an fd (select_transport's choice)?
  bool fd_peer = false;
  for (int r = 0; r < size_ && !fd_peer; ++r) {
    if (r == rank_) continue;
    p2p::Capabilities caps;
    fd_peer = !best_transport(r, &caps) || (caps.can_block && !caps.polled);
  }
  polled_io_stride_cap_ = fd_peer ? polled_io_stride_max : polled_io_stride_quiet;
}

EngineImpl::Peer& EngineImpl::first_use(int world) {
  if (world < 0 || world >= size_)
    throw MpiError(MPI_ERR_RANK, fmt::format("world rank {} outside 0..{}", world, size_ - 1));
  Peer& p = peers_[world];
  if (!p.transport) select_transport(world, p);
  return p;
}

p2p::Transport* EngineImpl::best_transport(int world, p2p::Capabilities* best_caps) const {
  p2p::Transport* best = nullptr;
  for (const auto& t : transports_) {
    if (!t->reachable(world)) continue;
    auto caps = t->capabilities();
    if (!best || caps.latency_us < best_caps->latency_us) {
      best = t.get();
      *best_caps = caps;
    }
  }
  return best;
}

void EngineImpl::select_transport(int world, Peer& p) {
  p2p::Capabilities best_caps;
  p2p::Transport* best = best_transport(world, &best_caps);
  if (!best)
    throw MpiError(MPI_ERR_OTHER,
                   fmt::format("rank {}: no transport reaches rank {} (was its endpoint published?)", rank_, world));
  p.transport = best;
  p.max_fragment = std::max<std::size_t>(best_caps.max_fragment, 1);
  p.max_frame_payload = std::max(best_caps.max_frame_payload, p.max_fragment);
  const p2p::DataRepresentation representation = best->representation(world);
  p.native_only = best_caps.external32 && core::job_layout().lam(world);
  p.external32 = !p.native_only && representation != p2p::DataRepresentation::native;
  p.format = representation == p2p::DataRepresentation::external64 ? core::ExternalFormat::external64
                                                                    : core::ExternalFormat::external32;
  p.first_fragment = best_caps.rts_carries_first_fragment;
  p.rts_prefix = p.first_fragment ? p.max_fragment : std::min(best_caps.rts_prefix, p.max_fragment);
  p.copies_up_to = best_caps.copies_up_to;
  const char* why;
  if (p.first_fragment) {
    p.threshold = best_caps.eager_limit;
    why = "fixed by the transport's protocol";
  } else if (rsize_ == -1) {
    p.threshold = best_caps.eager_limit;
    why = "the transport's eager limit";
  } else if (rsize_ == 0) {
    p.threshold = std::numeric_limits<std::size_t>::max();
    why = "request.rsize=0: always eager";
  } else {
    p.threshold = static_cast<std::size_t>(rsize_);
    why = "request.rsize (_YAMPI_RSIZE)";
  }
  if (proto_info_) {
    std::string switch_text = p.threshold == std::numeric_limits<std::size_t>::max()
                                  ? std::string("always eager")
                                  : fmt::format("eager below {} bytes, rendezvous from {} bytes", p.threshold, p.threshold);
    std::string prefix_text =
        p.rts_prefix > 0 && p.threshold != std::numeric_limits<std::size_t>::max()
            ? fmt::format(", the rendezvous request carries the first {} bytes", p.rts_prefix)
            : std::string();
    std::fprintf(stderr, "gridmpi[rank %d]: to rank %d: %s transport, %s (%s), fragments of %zu bytes%s\n", rank_,
                 world, best->name(), switch_text.c_str(), why, p.max_fragment, prefix_text.c_str());
  }
}

std::size_t EngineImpl::rendezvous_threshold(int world) { return peer(world).threshold; }
std::string EngineImpl::transport_name(int world) { return peer(world).transport->name(); }

std::size_t EngineImpl::pending_frames() const noexcept {
  std::size_t n = 0;
  for (int w : peers_with_pending_) n += peers_[w].pending.size();
  return n;
}

// ---- sending frames -------------------------------------------------------

void EngineImpl::send_frame(int world, std::span<const std::byte> header, std::span<const std::byte> payload,
                            PointRequest* owner) {
  Peer& p = peer(world);
  auto enqueue = [&] {
    PendingFrame f;
    std::memcpy(f.header.data(), header.data(), header.size());
    f.header_size = static_cast<std::uint8_t>(header.size());
    f.payload = payload;
    f.owner = owner;
    p.pending.push_back(f);
    if (owner) {
      ++owner->frames_outstanding;
      ++frames_outstanding_;
    }
    if (!p.listed) {
      p.listed = true;
      peers_with_pending_.push_back(world);
    }
  };
  // Frames behind refused ones must wait their turn: order per peer is MPI's
  // non-overtaking rule.
  if (!p.pending.empty()) return enqueue();
  switch (p.transport->send(world, header, payload, make_token(owner, token_none))) {
    case p2p::SendStatus::complete: return;
    case p2p::SendStatus::in_flight:
      if (owner) {
        ++owner->frames_outstanding;
        ++frames_outstanding_;
      }
      return;
    case p2p::SendStatus::would_block: return enqueue();
  }
}

bool EngineImpl::drain_pending() {
  bool worked = false;
  for (std::size_t i = 0; i < peers_with_pending_.size();) {
    int world = peers_with_pending_[i];
    Peer& p = peers_[world];
    while (!p.pending.empty()) {
      PendingFrame& f = p.pending.front();
      auto status = p.transport->send(world, std::span<const std::byte>(f.header.data(), f.header_size), f.payload,
                                      make_token(f.owner, token_none));
      if (status == p2p::SendStatus::would_block) break;
      worked = true;
      PointRequest* owner = f.owner;
      p.pending.pop_front();
      if (owner && status == p2p::SendStatus::complete) {
        --owner->frames_outstanding;
        --frames_outstanding_;
        maybe_complete_send(owner);
      }
    }
    if (p.pending.empty()) {
      p.listed = false;
      peers_with_pending_[i] = peers_with_pending_.back();
      peers_with_pending_.pop_back();
    } else {
      ++i;
    }
  }
  return worked;
}

void EngineImpl::on_send_complete(int, std::uint64_t token) {
  auto* owner = token_pointer<PointRequest>(token);
  if (!owner) return;
  --owner->frames_outstanding;
  --frames_outstanding_;
  maybe_complete_send(owner);
}

void EngineImpl::send_sync_ack(int world, std::uint64_t sender_id) {
  wire::HeaderBuffer h;
  std::size_t n = wire::SyncAckHeader{sender_id}.encode(h);
  send_frame(world, std::span<const std::byte>(h.data(), n), {}, nullptr);
}

// ---- requests -------------------------------------------------------------

Request* EngineImpl::add_to_table(std::unique_ptr<Request> r) {
  Request* raw = r.get();
  raw->handle = request_table().add(std::move(r));
  return raw;
}

PointRequest* EngineImpl::create_point(PointRole role, const void* buf, int count, MPI_Datatype type, int rank,
                                       int tag, core::Comm* comm, std::uint32_t context, SendMode mode) {
  auto owned = std::make_unique<PointRequest>();
  PointRequest* r = owned.get();
  init_point(r, role, buf, count, type, rank, tag, comm, context, mode);
  add_to_table(std::move(owned));
  return r;
}

void EngineImpl::init_point(PointRequest* r, PointRole role, const void* buf, int count, MPI_Datatype type, int rank,
                            int tag, core::Comm* comm, std::uint32_t context, SendMode mode) {
  if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("count {} is negative", count));
  const core::Datatype& t = core::committed_datatype(type);
  r->kind = role == PointRole::send ? RequestKind::send : RequestKind::recv;
  r->role = role;
  r->buf = buf;
  r->recv_buf = const_cast<void*>(buf);
  r->count = count;
  r->datatype = type;
  r->type = &t;
  r->bytes = static_cast<std::size_t>(count) * t.size;
  r->peer = rank;
  r->tag = tag;
  r->context = context;
  r->mode = mode;
  if (comm) {
    r->comm = comm->handle;
    r->my_comm_rank = comm->rank;
    r->spans_clients = core::spans_clients(*comm);
    if (rank >= 0) {
      if (rank >= comm->peer_size())
        throw MpiError(MPI_ERR_RANK, fmt::format("rank {} outside 0..{}", rank, comm->peer_size() - 1));
      r->peer_world = comm->peer_world_rank(rank);
    } else {
      r->peer_world = rank;  // MPI_PROC_NULL or MPI_ANY_SOURCE
    }
    // A communicator freed while this request is pending lives (and keeps
    // its context) until the request is released.
    core::comm_hold(*comm);
    r->held_comm = comm;
  }
  if (!t.predefined) core::retain_datatype(type);
}

void EngineImpl::register_id(PointRequest* r) {
  if (r->registered) return;
  by_id_[r->id] = r;
  r->registered = true;
}

void EngineImpl::unregister_id(PointRequest* r) {
  if (!r->registered) return;
  by_id_.erase(r->id);
  r->registered = false;
}

PointRequest* EngineImpl::by_id(std::uint64_t id, wire::Kind kind, int world) {
  auto it = by_id_.find(id);
  if (it == by_id_.end())
    throw MpiError(MPI_ERR_INTERN, fmt::format("rank {}: {} frame from rank {} names unknown request {}", rank_,
                                               wire::kind_name(kind), world, id));
  return it->second;
}

void EngineImpl::reset_for_start(PointRequest* r) {
  r->id = next_id_++;
  r->complete = false;
  r->active = true;
  r->cancelled = false;
  r->error = MPI_SUCCESS;
  r->status = MPI_Status{};
  r->frames_outstanding = 0;
  r->awaiting_cts = r->awaiting_ack = false;
  r->message_size = r->expected = r->received = 0;
  r->message.reset();
  r->wire_data = {};
  r->message_id = 0;
  r->cancel_pending = false;
  r->rts_prefix = 0;
  r->external32 = false;
  r->capacity = r->bytes;
  r->direct = r->type && r->type->contiguous;
}

void EngineImpl::start_point(PointRequest* r) {
  reset_for_start(r);
  if (r->peer_world == MPI_PROC_NULL) {
    set_proc_null_status(r->status);
    complete(r);
    return;
  }
  if (r->role == PointRole::send)
    start_send(r);
  else
    start_recv(r);
}

Request* EngineImpl::isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm,
                           std::uint32_t context, SendMode mode) {
  PointRequest* r = create_point(PointRole::send, buf, count, type, dest, tag, &comm, context, mode);
  try {
    start_point(r);
  } catch (...) {
    release(r);
    throw;
  }
  return r;
}

// What isend + start_send + wait would do for an eager message of a
// contiguous type to a peer of this cluster, without the request: MPI_Send's
// path is the message's path (a ping-pong waits for it).  Everything else
// (synchronous, buffered, MPI_PROC_NULL, derived types, communicators that
// span clusters, rendezvous sizes, frames queued to the peer, a transport
// that would keep the payload) goes the general way.
bool EngineImpl::send_now(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm,
                          std::uint32_t context) {
  if (count < 0 || dest < 0 || dest >= comm.peer_size()) return false;
  const core::Datatype& t = core::committed_datatype(type);
  if (!t.predefined || !t.contiguous || core::spans_clients(comm)) return false;
  const int world = comm.peer_world_rank(dest);
  Peer& p = peer(world);
  const std::size_t size = static_cast<std::size_t>(count) * t.size;
  if (p.external32 || !p.pending.empty() || p.copies_up_to == 0 || size >= p.threshold || size > p.copies_up_to ||
      size > p.max_frame_payload)
    return false;
  wire::MessageHeader h;
  h.kind = wire::Kind::eager;
  h.envelope = {context, comm.rank, tag};
  h.size = size;
  h.sender_id = next_id_++;  // no request: nothing can name it (MPI_Cancel of a blocking send does not exist)
  wire::HeaderBuffer buffer;
  std::size_t n = h.encode(buffer);
  std::span<const std::byte> payload;
  if (size > 0) payload = std::span<const std::byte>(static_cast<const std::byte*>(buf) + t.true_lb, size);
  switch (p.transport->send(world, std::span<const std::byte>(buffer.data(), n), payload,
                            make_token(static_cast<PointRequest*>(nullptr), token_none))) {
    case p2p::SendStatus::complete: return true;
    case p2p::SendStatus::would_block: return false;
    case p2p::SendStatus::in_flight: break;
  }
  throw MpiError(MPI_ERR_INTERN, fmt::format("rank {}: the {} transport kept a {}-byte payload it declared to copy",
                                             rank_, p.transport->name(), size));
}

Request* EngineImpl::irecv(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                           std::uint32_t context) {
  PointRequest* r = create_point(PointRole::recv, buf, count, type, source, tag, &comm, context, SendMode::standard);
  try {
    start_point(r);
  } catch (...) {
    release(r);
    throw;
  }
  return r;
}

Request* EngineImpl::recv_start(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                                std::uint32_t context) {
  retired_.reset();
  auto r = std::make_unique<PointRequest>();
  init_point(r.get(), PointRole::recv, buf, count, type, source, tag, &comm, context, SendMode::standard);
  try {
    start_point(r.get());
  } catch (...) {
    detach_point(r.get());
    throw;
  }
  return r.release();
}

void EngineImpl::recv_finish(Request* request) noexcept {
  auto* r = static_cast<PointRequest*>(request);
  try {
    if (!r->complete && !r->posted) {
      // The wait threw with the message matched and its data still on the
      // way: whatever delivers it may name the request, so the engine keeps
      // it (as if MPI_Request_free'd) until it completes.
      r->freed = true;
      add_to_table(std::unique_ptr<Request>(r));
      return;
    }
    detach_point(r);
    retired_.reset(r);
  } catch (...) {
    // Out of memory, or a datatype table in trouble: the request is left
    // behind (a transport may still name it) rather than freed half-way.
  }
}

Request* EngineImpl::send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm,
                               std::uint32_t context, SendMode mode) {
  PointRequest* r = create_point(PointRole::send, buf, count, type, dest, tag, &comm, context, mode);
  r->persistent = true;
  r->active = false;
  r->complete = true;
  return r;
}

Request* EngineImpl::recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                               std::uint32_t context) {
  PointRequest* r =
      create_point(PointRole::recv, buf, count, type, source, tag, &comm, context, SendMode::standard);
  r->persistent = true;
  r->active = false;
  r->complete = true;
  return r;
}

void EngineImpl::start(Request* request) {
  auto* r = request->as_point();
  if (!r || !r->persistent) throw MpiError(MPI_ERR_REQUEST, "request is not a persistent point-to-point request");
  if (r->active) throw MpiError(MPI_ERR_REQUEST, "persistent request is already active");
  start_point(r);
}

void EngineImpl::start_send(PointRequest* s) {
  if (s->mode == SendMode::buffered && !s->internal) return start_buffered(s);
  Peer& p = peer(s->peer_world);
  if (!s->internal) choose_representation(s, p);  // a buffered copy inherits its user's
  if (s->wire_data.empty() && s->bytes > 0) {
    if (s->external32) {
      if (core::external32_is_native(s->datatype, s->format)) {
        s->wire_data = std::span<const std::byte>(static_cast<const std::byte*>(s->buf) + s->type->true_lb, s->bytes);
      } else {
        s->packed.resize(core::external_size(s->datatype, static_cast<std::size_t>(s->count), s->format));
        pack_for_peer(s, s->packed.data());
        s->wire_data = s->packed;
      }
    } else if (s->type->contiguous) {
      s->wire_data = std::span<const std::byte>(static_cast<const std::byte*>(s->buf) + s->type->true_lb, s->bytes);
    } else {
      s->packed.resize(s->bytes);
      s->type->pack(s->buf, static_cast<std::size_t>(s->count), s->packed.data());
      s->wire_data = s->packed;
    }
  }
  // The size of the message on the wire (external32 bytes for such peers).
  const std::size_t size = s->wire_data.size();
  // A payload above the transport's frame limit cannot travel as one eager frame.
  bool eager = size < p.threshold && size <= p.max_frame_payload;
  wire::MessageHeader h;
  h.envelope = {s->context, s->my_comm_rank, s->tag};
  h.size = size;
  if (s->external32 && !p.external32) {
    h.flags |= wire::flag_external32;
    if (s->format == core::ExternalFormat::external64) h.flags |= wire::flag_external64;
  }
  if (s->native_basic) {
    h.flags |= wire::flag_native_basic;
    h.basic = s->native_basic;
  }
  h.sender_id = s->id;  // names the message for MPI_Cancel (and for the answers below)
  s->message_id = s->id;
  if (eager) {
    if (s->mode == SendMode::synchronous) {
      h.kind = wire::Kind::sync_eager;
      h.sender_id = s->id;
      s->awaiting_ack = true;
      register_id(s);
    } else {
      h.kind = wire::Kind::eager;
    }
  } else {
    h.kind = wire::Kind::rts;
    h.sender_id = s->id;
    s->awaiting_cts = true;
    register_id(s);
  }
  std::span<const std::byte> payload;
  if (eager) {
    payload = s->wire_data;
  } else if (p.rts_prefix > 0) {
    payload = s->wire_data.first(std::min(size, p.rts_prefix));
    s->rts_prefix = payload.size();
  }
  wire::HeaderBuffer buffer;
  std::size_t n = h.encode(buffer);
  send_frame(s->peer_world, std::span<const std::byte>(buffer.data(), n), payload, s);
  maybe_complete_send(s);
}

void EngineImpl::start_buffered(PointRequest* s) {
  if (!bsend_.attached())
    throw MpiError(MPI_ERR_BUFFER, fmt::format("buffered send of {} bytes with no buffer attached "
                                               "(call MPI_Buffer_attach first)", s->bytes));
  auto block = bsend_.allocate(s->bytes);
  if (!block) {
    // Buffered messages that have left since the last round free their space.
    if (mode_ == p2p::ProgressMode::thread)
      thread_mode_progress(false);
    else
      poll_round();
    block = bsend_.allocate(s->bytes);
  }
  if (!block)
    throw MpiError(MPI_ERR_BUFFER,
                   fmt::format("buffered send of {} bytes (+{} overhead) does not fit in the attached buffer "
                               "({} messages still in it); attach a larger buffer",
                               s->bytes, MPI_BSEND_OVERHEAD, bsend_.live_blocks()));
  // External32 is never longer than the native packing (long and wchar_t
  // shrink, nothing grows), so the block sized for the native bytes holds it.
  std::size_t wire_size = s->bytes;
  choose_representation(s, peer(s->peer_world));
  if (s->bytes > 0) {
    if (s->external32) {
      wire_size = core::external_size(s->datatype, static_cast<std::size_t>(s->count), s->format);
      pack_for_peer(s, block->data.data());
    } else if (s->type->contiguous) {
      std::memcpy(block->data.data(), static_cast<const std::byte*>(s->buf) + s->type->true_lb, s->bytes);
    } else {
      s->type->pack(s->buf, static_cast<std::size_t>(s->count), block->data.data());
    }
  }
  auto copy = std::make_unique<PointRequest>();
  PointRequest* c = copy.get();
  c->kind = RequestKind::send;
  c->role = PointRole::send;
  c->internal = true;
  c->peer_world = s->peer_world;
  c->my_comm_rank = s->my_comm_rank;
  c->tag = s->tag;
  c->context = s->context;
  c->comm = s->comm;
  if (s->held_comm) {
    core::comm_hold(*s->held_comm);  // the message outlives the user's request
    c->held_comm = s->held_comm;
  }
  c->mode = SendMode::standard;
  c->bytes = s->bytes;
  c->spans_clients = s->spans_clients;
  c->external32 = s->external32;
  c->format = s->format;
  c->native_basic = s->native_basic;
  c->bsend_block = block->offset;
  add_to_table(std::move(copy));
  reset_for_start(c);
  c->wire_data = block->data.first(wire_size);  // the packed copy; start_send must not pack again
  std::uint64_t message_id = c->id;  // c is released when it completes
  start_send(c);
  s->message_id = message_id;  // MPI_Cancel of s cancels the copy's message
  // The user's request is done: its data is in the buffer.
  s->status.MPI_ERROR = MPI_SUCCESS;
  complete(s);
}

// External32 to other clusters (IMPI).  On a communicator that spans
// clusters, to a peer of this cluster: MPI_PACKED data is external32 already
// (MPI_Pack made it so); elements of one basic type go native, marked with
// the type so that a receive into MPI_PACKED can convert them; mixed types
// go external32 (which narrows long to 32 bits, as across clusters).
void EngineImpl::choose_representation(PointRequest* s, const Peer& p) {
  s->external32 = false;
  s->format = core::ExternalFormat::external32;
  s->native_basic = 0;
  if (p.external32) {
    s->external32 = true;
    s->format = p.format;
    return;
  }
  if (p.native_only || !s->spans_clients || !s->type) return;
  if (core::external32_is_native(s->datatype)) {
    s->external32 = true;  // bytes, characters, MPI_PACKED: no conversion
    return;
  }
  MPI_Datatype basic = s->type->reduction_basic;
  if (basic != MPI_DATATYPE_NULL && basic > 0 && basic <= 0xffff) {
    s->native_basic = static_cast<std::uint16_t>(basic);
    return;
  }
  // Mixed types: external64 where long is 64 bits, so that no value changes
  // (external32 has no room for such a long), flagged for the receiver.
  s->external32 = true;
  if (sizeof(long) == 8 && sizeof(wchar_t) == 4) s->format = core::ExternalFormat::external64;
}

// Packs a send's data in its external representation.  A value the
// representation cannot hold (a long beyond 32 bits in external32) fails the
// send with MPI_ERR_CONVERSION, saying where it was going.
void EngineImpl::pack_for_peer(PointRequest* s, std::byte* out) {
  try {
    core::pack_external32(s->buf, static_cast<std::size_t>(s->count), s->datatype, out, s->format);
  } catch (const MpiError& e) {
    if (e.error_class() != MPI_ERR_CONVERSION) throw;
    const Peer& p = peer(s->peer_world);
    std::string to = p.external32 ? fmt::format("to rank {} of another cluster, which takes {}", s->peer_world,
                                                core::external_format_name(s->format))
                                  : fmt::format("on a communicator spanning clusters ({})",
                                                core::external_format_name(s->format));
    throw MpiError(MPI_ERR_CONVERSION, fmt::format("cannot send {}: {}", to, e.what()));
  }
}

void EngineImpl::maybe_complete_send(PointRequest* s) {
  if (s->complete || s->frames_outstanding > 0 || s->awaiting_cts || s->awaiting_ack || s->cancel_pending) return;
  s->status.MPI_SOURCE = s->peer;
  s->status.MPI_TAG = s->tag;
  s->status.MPI_ERROR = s->error;
  s->status.gridmpi_count = s->cancelled ? 0 : static_cast<long long>(s->bytes);
  s->status.gridmpi_cancelled = s->cancelled ? 1 : 0;
  complete(s);
}

void EngineImpl::start_recv(PointRequest* r) {
  if (auto m = queues_.take_unexpected(r->context, r->peer, r->tag)) {
    attach_message(r, std::move(m));
  } else {
    queues_.post(r);
  }
}

std::byte* EngineImpl::recv_base(PointRequest* r) const {
  return static_cast<std::byte*>(r->recv_buf) + r->type->true_lb;
}

// Typed elements of one basic type from this cluster, received as
// MPI_PACKED on a communicator spanning clusters: the receiver's
// MPI_Unpack reads external32, so convert them where they landed (external32
// is never longer than native, so front to back never overwrites unread data).
std::size_t EngineImpl::native_to_external32_in_place(PointRequest* r, std::size_t bytes) {
  auto basic = static_cast<MPI_Datatype>(r->native_basic);
  const core::Datatype& t = core::datatype(basic);
  const std::size_t native = t.size, external = core::external32_size(basic, 1);
  if (native == 0) return bytes;
  const std::size_t n = bytes / native;
  std::byte* base = recv_base(r);
  std::array<std::byte, 64> element;
  for (std::size_t i = 0; i < n; ++i) {
    try {
      core::pack_external32(base + i * native, 1, basic, element.data());
    } catch (const MpiError& e) {
      // A value MPI_Unpack could not read back (a long beyond 32 bits): the
      // receive fails rather than hand over a changed value.
      if (e.error_class() != MPI_ERR_CONVERSION) throw;
      r->error = MPI_ERR_CONVERSION;
      return i * external;
    }
    std::memcpy(base + i * external, element.data(), external);
  }
  return n * external;
}

void EngineImpl::prepare_receive(PointRequest* r, int world, std::uint8_t flags) {
  const bool from_external_peer = world >= 0 && peer(world).external32;
  r->external32 = from_external_peer || (flags & wire::flag_external32);
  r->format = from_external_peer               ? peer(world).format
              : (flags & wire::flag_external64) ? core::ExternalFormat::external64
                                                : core::ExternalFormat::external32;
  r->native_basic = 0;
  if (r->external32) {
    r->capacity = core::external_size(r->datatype, static_cast<std::size_t>(r->count), r->format);
    r->direct = r->type->contiguous && core::external32_is_native(r->datatype, r->format);
  } else {
    r->capacity = r->bytes;
    r->direct = r->type->contiguous;
  }
}

void EngineImpl::unpack_into(PointRequest* r, std::span<const std::byte> bytes, std::size_t offset) {
  // Bytes beyond the receive buffer (a truncated message whose transport
  // sends everything anyway) are dropped.
  if (offset >= r->capacity) return;
  bytes = bytes.first(std::min(bytes.size(), r->capacity - offset));
  if (bytes.empty()) return;
  if (r->direct) {
    std::byte* dst = recv_base(r) + offset;
    if (dst != bytes.data()) p2p::copy_bytes(dst, bytes.data(), bytes.size());
  } else if (r->external32) {
    core::unpack_external32_range(bytes, static_cast<std::size_t>(r->count), r->datatype, offset, r->recv_buf,
                                  r->format);
  } else if (offset == 0 && bytes.size() == r->bytes) {
    r->type->unpack(bytes.data(), static_cast<std::size_t>(r->count), r->recv_buf);
  } else {
    r->type->unpack_range(bytes, static_cast<std::size_t>(r->count), offset, r->recv_buf);
  }
}

void EngineImpl::complete_recv(PointRequest* r) {
  std::size_t stored = std::min(r->message_size, r->capacity);
  if (r->native_basic && stored > 0) stored = native_to_external32_in_place(r, stored);
  if (r->external32 && !r->direct)
    stored = core::native_bytes_of_external32(r->datatype, static_cast<std::size_t>(r->count), stored, r->format);
  r->status.gridmpi_count = static_cast<long long>(stored);
  r->status.gridmpi_cancelled = 0;
  if (r->message_size > r->capacity) r->error = MPI_ERR_TRUNCATE;
  r->status.MPI_ERROR = r->error;
  complete(r);
}

void EngineImpl::attach_message(PointRequest* r, std::unique_ptr<UnexpectedMessage> m) {
  try {
    attach_message_to(r, m);
  } catch (...) {
    // An answer (sync_ack, cts) could not be sent.  A payload still
    // arriving names the message: it stays alive, unclaimed, until the
    // engine goes (the caller frees the request).
    if (m && !m->data_complete) {
      m->claimed_by = nullptr;
      try {
        // Those whose payload has come in since are named by nothing now.
        std::erase_if(orphans_, [](const auto& o) { return o->data_complete; });
        orphans_.push_back(std::move(m));
      } catch (...) {
        (void)m.release();  // out of memory: leaked rather than written after its free
      }
    }
    throw;
  }
}

void EngineImpl::attach_message_to(PointRequest* r, std::unique_ptr<UnexpectedMessage>& m) {
  r->peer_world = m->peer_world;
  r->status.MPI_SOURCE = m->envelope.source;
  r->status.MPI_TAG = m->envelope.tag;
  r->message_size = m->size;
  prepare_receive(r, m->peer_world, m->flags);
  if ((m->flags & wire::flag_native_basic) && r->datatype == MPI_PACKED) r->native_basic = m->basic;
  if (m->kind == wire::Kind::rts) {
    accept_rendezvous(r, m->peer_world, m->sender_id, m->size, m->data.size());
    if (m->data.size() == 0) return;
    // The rts carried the message's first bytes (Capabilities::rts_prefix).
    if (!m->data_complete) {
      m->claimed_by = r;
      r->message = std::move(m);
      return;
    }
    unpack_into(r, m->data, 0);
    r->received += m->data.size();
    if (r->received >= r->expected) complete_recv(r);
    return;
  }
  if (m->kind == wire::Kind::sync_eager) send_sync_ack(m->peer_world, m->sender_id);
  if (m->data_complete) {
    unpack_into(r, std::span<const std::byte>(m->data).first(std::min<std::size_t>(m->size, r->capacity)), 0);
    complete_recv(r);
  } else {
    m->claimed_by = r;
    r->message = std::move(m);
  }
}

void EngineImpl::accept_rendezvous(PointRequest* r, int sender_world, std::uint64_t sender_id, std::uint64_t size,
                                   std::size_t prefix) {
  r->peer_world = sender_world;
  r->message_size = size;
  // A transport that sends the whole message whatever we accept (IMPI) gets
  // an acceptance of everything, and the bytes the rts carried are accepted
  // in any case; the excess is dropped in unpack_into.
  r->expected = peer(sender_world).first_fragment
                    ? size
                    : std::max<std::size_t>(std::min<std::size_t>(size, r->capacity), prefix);
  r->received = 0;
  wire::CtsHeader cts{sender_id, r->expected > 0 ? r->id : 0, r->expected};
  if (r->expected > 0) register_id(r);
  wire::HeaderBuffer h;
  std::size_t n = cts.encode(h);
  send_frame(sender_world, std::span<const std::byte>(h.data(), n), {}, nullptr);
  if (r->expected == 0) complete_recv(r);
}

void EngineImpl::complete(PointRequest* r) {
  unregister_id(r);
  r->complete = true;
  if (r->bsend_block) {
    bsend_.release(*r->bsend_block);
    r->bsend_block.reset();
  }
  if (r->internal || r->freed) release(r);
}

// ---- frames from peers ----------------------------------------------------

p2p::Placement EngineImpl::on_frame_begin(int world, std::span<const std::byte> header, std::size_t payload_size) {
  wire::Kind kind = wire::peek_kind(header);
  switch (kind) {
    case wire::Kind::eager:
    case wire::Kind::sync_eager:
    case wire::Kind::rts: {
      auto h = wire::MessageHeader::decode(header);
      if (kind != wire::Kind::rts)
        check_eager_size(world, h, payload_size);
      else if (payload_size > h.size)
        throw MpiError(MPI_ERR_INTERN, fmt::format("rank {}: rts from rank {} announces {} bytes, carries {}", rank_,
                                                   world, h.size, payload_size));
      if (PointRequest* r = match_posted(world, h)) {
        if (kind == wire::Kind::rts) {
          accept_rendezvous(r, world, h.sender_id, h.size, payload_size);
          if (payload_size == 0) return {};
          // The message's first bytes ride on the rts (Capabilities::rts_prefix).
          r->fragment_offset = 0;
          p2p::Placement placement;
          placement.token = make_token(r, token_data);
          if (r->direct && payload_size <= r->capacity)
            placement.destination = std::span<std::byte>(recv_base(r), payload_size);
          return placement;
        }
        if (kind == wire::Kind::sync_eager) send_sync_ack(world, h.sender_id);
        if (h.size == 0) {
          complete_recv(r);
          return {};
        }
        p2p::Placement placement;
        placement.token = make_token(r, token_eager);
        if (r->direct && h.size <= r->capacity)
          placement.destination = std::span<std::byte>(recv_base(r), h.size);
        return placement;
      }
      return queue_unexpected(world, h, payload_size, nullptr);
    }
    case wire::Kind::cts: {
      auto h = wire::CtsHeader::decode(header);
      PointRequest* s = by_id(h.sender_id, kind, world);
      unregister_id(s);
      s->awaiting_cts = false;
      for (std::size_t offset = s->rts_prefix; offset < h.accepted;) {
        std::size_t n = std::min<std::size_t>(peer(world).max_fragment, h.accepted - offset);
        wire::HeaderBuffer buffer;
        std::size_t hn = wire::DataHeader{h.receiver_id, offset}.encode(buffer);
        send_frame(world, std::span<const std::byte>(buffer.data(), hn), s->wire_data.subspan(offset, n), s);
        offset += n;
      }
      maybe_complete_send(s);
      return {};
    }
    case wire::Kind::data: {
      auto h = wire::DataHeader::decode(header);
      PointRequest* r = by_id(h.receiver_id, kind, world);
      if (h.offset + payload_size > r->expected)
        throw MpiError(MPI_ERR_INTERN, fmt::format("rank {}: data from rank {} at {}+{} beyond the {} bytes accepted",
                                                   rank_, world, h.offset, payload_size, r->expected));
      r->fragment_offset = h.offset;
      p2p::Placement placement;
      placement.token = make_token(r, token_data);
      if (r->direct && payload_size > 0 && h.offset + payload_size <= r->capacity)
        placement.destination = std::span<std::byte>(recv_base(r) + h.offset, payload_size);
      return placement;
    }
    case wire::Kind::sync_ack: {
      auto h = wire::SyncAckHeader::decode(header);
      PointRequest* s = by_id(h.sender_id, kind, world);
      s->awaiting_ack = false;
      unregister_id(s);
      maybe_complete_send(s);
      return {};
    }
    case wire::Kind::cancel_request:
      on_cancel_request(world, wire::CancelRequestHeader::decode(header));
      return {};
    case wire::Kind::cancel_reply:
      on_cancel_reply(world, wire::CancelReplyHeader::decode(header));
      return {};
  }
  return {};
}

void EngineImpl::check_eager_size(int world, const wire::MessageHeader& h, std::size_t payload_size) const {
  if (payload_size != h.size)
    throw MpiError(MPI_ERR_INTERN, fmt::format("rank {}: eager frame from rank {} announces {} bytes, carries {}",
                                               rank_, world, h.size, payload_size));
}

PointRequest* EngineImpl::match_posted(int world, const wire::MessageHeader& h) {
  PointRequest* r = queues_.take_posted(h.envelope);
  if (!r) return nullptr;
  r->peer_world = world;
  r->status.MPI_SOURCE = h.envelope.source;
  r->status.MPI_TAG = h.envelope.tag;
  r->message_size = h.size;
  prepare_receive(r, world, h.flags);
  if ((h.flags & wire::flag_native_basic) && r->datatype == MPI_PACKED) r->native_basic = h.basic;
  return r;
}

p2p::Placement EngineImpl::queue_unexpected(int world, const wire::MessageHeader& h, std::size_t payload_size,
                                            const std::byte* payload) {
  // Default-initialised (not make_unique): the inline payload is not zeroed.
  std::unique_ptr<UnexpectedMessage> m(new UnexpectedMessage);
  m->kind = h.kind;
  m->envelope = h.envelope;
  m->size = h.size;
  m->sender_id = h.sender_id;
  m->peer_world = world;
  m->flags = h.flags;
  m->basic = h.basic;
  p2p::Placement placement;
  if (payload_size > 0) {  // eager data, or an rts's first fragment
    m->data.resize(payload_size);
    if (payload) {
      std::memcpy(m->data.data(), payload, payload_size);
      m->data_complete = true;
    } else {
      placement.destination = m->data;
      placement.token = make_token(m.get(), token_unexpected);
    }
  } else {
    m->data_complete = true;
  }
  queues_.add_unexpected(std::move(m));
  return placement;
}

// The common case in one call: an eager message (no answer owed), matched
// or queued as it stands.
void EngineImpl::on_frame(int world, std::span<const std::byte> header, std::span<const std::byte> payload) {
  if (wire::peek_kind(header) != wire::Kind::eager) return FrameSink::on_frame(world, header, payload);
  auto h = wire::MessageHeader::decode(header);
  check_eager_size(world, h, payload.size());
  if (PointRequest* r = match_posted(world, h)) {
    unpack_into(r, payload, 0);
    return complete_recv(r);
  }
  queue_unexpected(world, h, payload.size(), payload.data());
}

void EngineImpl::on_frame_end(int, std::uint64_t token, std::span<const std::byte> payload) {
  switch (token & tag_mask) {
    case token_eager: {
      auto* r = token_pointer<PointRequest>(token);
      unpack_into(r, payload, 0);
      complete_recv(r);
      return;
    }
    case token_data: {
      auto* r = token_pointer<PointRequest>(token);
      unpack_into(r, payload, r->fragment_offset);
      r->received += payload.size();
      if (r->received >= r->expected) complete_recv(r);
      return;
    }
    case token_unexpected: {
      auto* m = token_pointer<UnexpectedMessage>(token);
      m->data_complete = true;
      if (PointRequest* r = m->claimed_by) {
        bool fragment = m->kind == wire::Kind::rts;  // the first fragment of a long message
        unpack_into(r, m->data, 0);
        std::size_t n = m->data.size();
        r->message.reset();  // destroys m
        if (!fragment) return complete_recv(r);
        r->received += n;
        if (r->received >= r->expected) complete_recv(r);
      }
      return;
    }
    default: return;
  }
}

// ---- probe, cancel, matched probe ------------------------------------------

bool EngineImpl::probe(int source, int tag, core::Comm&, std::uint32_t context, bool blocking, MPI_Status* status) {
  // A call returning one status leaves its MPI_ERROR alone.
  MPI_Status local{};
  MPI_Status& s = status ? *status : local;
  if (source == MPI_PROC_NULL) {
    int error = s.MPI_ERROR;
    set_proc_null_status(s);
    s.MPI_ERROR = error;
    return true;
  }
  auto find = [&] { return queues_.find_unexpected(context, source, tag); };
  if (!find()) {
    if (blocking)
      wait_until([&] { return find() != nullptr; });
    else
      progress();
  }
  const UnexpectedMessage* m = find();
  if (!m) return false;
  s.MPI_SOURCE = m->envelope.source;
  s.MPI_TAG = m->envelope.tag;
  s.gridmpi_count = static_cast<long long>(m->size);
  // The size of an external32 message (from another cluster, or mixed
  // types on a communicator spanning clusters) is external32 bytes:
  // MPI_Get_count/Get_elements convert them for the type they are given.
  const Peer& from = peer(m->peer_world);
  const bool ext32 = (m->flags & wire::flag_external32) != 0 || from.external32;
  s.gridmpi_cancelled = ext32 ? core::status_external32 : 0;
  if ((from.external32 && from.format == core::ExternalFormat::external64) || (m->flags & wire::flag_external64))
    s.gridmpi_cancelled |= core::status_external64;
  return true;
}

bool EngineImpl::improbe(int source, int tag, core::Comm& comm, std::uint32_t context, bool blocking,
                         MPI_Message* message, MPI_Status* status) {
  if (source == MPI_PROC_NULL) {
    probe(source, tag, comm, context, blocking, status);
    *message = MPI_MESSAGE_NO_PROC;
    return true;
  }
  if (!probe(source, tag, comm, context, blocking, status)) return false;
  auto slot = std::make_unique<MessageSlot>();
  slot->message = queues_.take_unexpected(context, source, tag);
  slot->comm = comm.handle;
  *message = messages_.add(std::move(slot));
  return true;
}

Request* EngineImpl::imrecv(void* buf, int count, MPI_Datatype type, MPI_Message message) {
  if (message == MPI_MESSAGE_NO_PROC) {
    PointRequest* r = create_point(PointRole::recv, buf, count, type, MPI_PROC_NULL, MPI_ANY_TAG, nullptr, 0,
                                   SendMode::standard);
    r->peer_world = MPI_PROC_NULL;
    start_point(r);
    return r;
  }
  if (message == MPI_MESSAGE_NULL || !messages_.find(message))
    throw MpiError(MPI_ERR_REQUEST, fmt::format("invalid message handle {}", message));
  MessageSlot& slot = messages_.get(message);
  PointRequest* r = create_point(PointRole::recv, buf, count, type, slot.message->envelope.source,
                                 slot.message->envelope.tag, nullptr, slot.message->envelope.context,
                                 SendMode::standard);
  r->comm = slot.comm;
  std::unique_ptr<UnexpectedMessage> m = std::move(slot.message);
  messages_.release(message);
  try {
    reset_for_start(r);
    attach_message(r, std::move(m));
  } catch (...) {
    release(r);
    throw;
  }
  return r;
}

bool EngineImpl::cancel(Request* request) {
  auto* r = request->as_point();
  if (!r) return false;
  if (r->role == PointRole::send) {
    cancel_send(r);
    return false;
  }
  if (!r->posted) return false;
  queues_.unpost(r);
  r->cancelled = true;
  r->status.MPI_SOURCE = MPI_ANY_SOURCE;
  r->status.MPI_TAG = MPI_ANY_TAG;
  r->status.MPI_ERROR = MPI_SUCCESS;
  r->status.gridmpi_count = 0;
  r->status.gridmpi_cancelled = 1;
  complete(r);
  return true;
}

// MPI_Cancel of a send (MPI-3.1 3.8.4): it may fail only when the message was
// matched already, so even a send complete here (eager) asks the receiver,
// which alone knows whether the message still waits in its unexpected queue.
// The request is incomplete again until the reply: Wait returns once it is
// known, and MPI_Cancel waits for it (await_cancel).
void EngineImpl::cancel_send(PointRequest* s) {
  if (s->internal || s->message_id == 0 || s->cancel_pending || s->cancelled) return;
  if (s->peer_world < 0) return;  // MPI_PROC_NULL: nothing was sent
  if (shut_down_) return;          // the connections are closing: it completes normally
  s->cancel_pending = true;
  s->complete = false;
  cancelling_[s->message_id] = s;
  wire::HeaderBuffer h;
  std::size_t n = wire::CancelRequestHeader{s->context, s->message_id}.encode(h);
  send_frame(s->peer_world, std::span<const std::byte>(h.data(), n), {}, nullptr);
}

void EngineImpl::await_cancel(Request* request) {
  auto* s = request->as_point();
  if (!s || !s->cancel_pending) return;
  // By the message's id: the entry goes when the reply arrives, and also
  // if the request is released meanwhile (detach_point).
  const std::uint64_t id = s->message_id;
  wait_until([&] { return !cancelling_.contains(id); });
}

// The request table has no iteration of its own: its user handles are
// visited in order until every live one has been seen.
void wait_for_comm(Engine& engine, MPI_Comm comm) {
  auto pending = [comm](Request& r) {
    if (r.comm != comm || r.complete) return false;
    // An unmatched receive is not waited for.
    if (const PointRequest* p = r.as_point()) return !(p->role == PointRole::recv && p->posted);
    // A non-blocking collective is; a request made of point-to-point ones
    // (MPI_Isendrecv) through its parts.
    return r.kind == RequestKind::collective;
  };
  engine.wait_until([&] {
    const auto& table = request_table();
    for (std::size_t h = 1, left = table.live_user_objects(); left > 0; ++h) {
      Request* r = table.find(static_cast<int>(h));
      if (!r || table.is_predefined(static_cast<int>(h))) continue;
      if (pending(*r)) return false;
      --left;
    }
    return true;
  });
}

void EngineImpl::on_cancel_request(int world, const wire::CancelRequestHeader& h) {
  // Dropping an rts or sync_eager message needs no answer of its own: the
  // sender stops waiting for cts / sync_ack when it reads the reply.
  bool removed = queues_.take_unexpected_by_sender(h.context, world, h.sender_id) != nullptr;
  wire::HeaderBuffer buffer;
  std::size_t n = wire::CancelReplyHeader{h.sender_id, removed}.encode(buffer);
  send_frame(world, std::span<const std::byte>(buffer.data(), n), {}, nullptr);
}

void EngineImpl::on_cancel_reply(int world, const wire::CancelReplyHeader& h) {
  auto it = cancelling_.find(h.sender_id);
  if (it == cancelling_.end()) {
    // The request was released while its cancel was in flight (e.g. by
    // shutdown): nobody is waiting for this answer any more.
    log().debug("rank {}: cancel-reply from rank {} for message {}, no longer wanted", rank_, world, h.sender_id);
    return;
  }
  PointRequest* s = it->second;
  cancelling_.erase(it);
  s->cancel_pending = false;
  if (h.cancelled) {
    s->cancelled = true;
    // The request that carries the message (s, or the internal copy of a
    // buffered send) stops waiting for an answer that will never come; the
    // copy gives its buffer space back when it completes.
    if (auto live = by_id_.find(h.sender_id); live != by_id_.end()) {
      PointRequest* carrier = live->second;
      unregister_id(carrier);
      carrier->awaiting_cts = carrier->awaiting_ack = false;
      carrier->cancelled = true;
      if (carrier != s) maybe_complete_send(carrier);
    }
  }
  maybe_complete_send(s);
}

// ---- buffered sends -------------------------------------------------------

void EngineImpl::buffer_attach(void* buffer, int size) {
  if (size < 0) throw MpiError(MPI_ERR_ARG, fmt::format("buffer size {} is negative", size));
  bsend_.attach(buffer, static_cast<std::size_t>(size));
}

std::pair<void*, int> EngineImpl::buffer_detach() {
  if (!bsend_.attached()) return {nullptr, 0};
  wait_until([&] { return bsend_.empty(); });
  auto [buffer, size] = bsend_.detach();
  return {buffer, static_cast<int>(size)};
}

// ---- request objects ------------------------------------------------------

void EngineImpl::detach_point(PointRequest* r) {
  if (r->posted) queues_.unpost(r);
  if (r->cancel_pending) cancelling_.erase(r->message_id);
  unregister_id(r);
  if (r->type && !r->type->predefined) {
    core::release_datatype(r->datatype);
    r->type = nullptr;
  }
  r->message.reset();
  if (core::Comm* held = r->held_comm) {
    r->held_comm = nullptr;
    core::comm_unhold(*held);  // may destroy a communicator freed meanwhile
  }
}

void EngineImpl::release(Request* request) {
  if (auto* r = request->as_point()) {
    detach_point(r);
  } else if (auto it = std::find(adopted_.begin(), adopted_.end(), request); it != adopted_.end()) {
    // Completed outside its poll function and freed before the next round.
    *it = adopted_.back();
    adopted_.pop_back();
  }
  request_table().release(request->handle);
}

Request* EngineImpl::adopt(std::unique_ptr<Request> request) {
  Request* r = add_to_table(std::move(request));
  // Only requests with a poll function need progress; generalized ones are
  // completed by MPI_Grequest_complete.
  if (!r->complete && r->poll) adopted_.push_back(r);
  return r;
}

void EngineImpl::repoll(Request* r) {
  if (r->complete || !r->poll) return;
  if (std::find(adopted_.begin(), adopted_.end(), r) == adopted_.end()) adopted_.push_back(r);
}

bool EngineImpl::poll_adopted() {
  bool worked = false;
  for (std::size_t i = 0; i < adopted_.size();) {
    Request* r = adopted_[i];
    if (!r->complete && r->poll && r->poll()) {
      r->complete = true;
      worked = true;
    }
    if (r->complete) {
      adopted_[i] = adopted_.back();
      adopted_.pop_back();
      // Generalized requests are freed by the API (their free_fn must run).
      if (r->freed && r->kind != RequestKind::generalized) release(r);
    } else {
      ++i;
    }
  }
  return worked;
}

// ---- progress -------------------------------------------------------------

bool EngineImpl::progress() {
  if (mode_ == p2p::ProgressMode::thread) return thread_mode_progress(true);
  return poll_round();
}

bool EngineImpl::test_round() {
  const bool worked = progress();
  give_way(worked);
  return worked;
}

// Under MPI_THREAD_MULTIPLE a sched_yield with the lock held kept the other
// threads out: a Test loop starved the waits of its process, and with them
// its TCP reads (thr_idup across two hosts hung under load), so the lock is
// handed over instead.
void EngineImpl::give_way(bool worked) {
  core::BigLock& lock = core::big_lock();
  if (lock.enabled() && lock.held_by_me() && lock.contended())
    lock.yield_to_waiters();
  else if (!worked)
    sched_yield();
  else
    return;
  polled_io_stride_ = polled_io_stride_min;
}

bool EngineImpl::poll_round() {
  if (in_progress_) return false;  // an upcall asked for progress: the outer round will do it
  ProgressGuard guard(in_progress_);
  bool worked = false;
  for (p2p::Transport* t : poll_order_) worked = t->progress() || worked;
  // The io_context costs an epoll_wait system call per poll.  Only fd-based
  // transports: asked every round but those in which another transport
  // (self) delivered, so that a wait completed by that returns at once
  // (still every io_poll_stride rounds: a transport that works in every
  // round must not starve the sockets).  With a transport that has no fd
  // (the vendor) or is found by polling memory (shm), whose rounds the
  // waiting thread repeats without pause:
  // asked every polled_io_stride_min rounds while it has work, the stride
  // doubling up to polled_io_stride_max (some 10 us of rounds) while it has
  // none (polled_io_stride_quiet when no peer is reached through an fd), so
  // that a vendor ping-pong is not slowed by epoll_wait (it was a twentieth
  // of its time at every 32nd round) and a socket that becomes busy is soon
  // asked often again.
  if (!polled_) {
    if (!worked || ++rounds_without_io_ >= io_poll_stride) {
      rounds_without_io_ = 0;
      // A waiter runs one handler per round: poll() would ask epoll again
      // after it, before the waiter sees the message the handler delivered,
      // and its next round comes at once.  A single call (MPI_Test) runs
      // them all.
      worked = (waiting_ > 0 ? io_.poll_one() : io_.poll()) > 0 || worked;
    }
  } else if (++rounds_without_io_ >= polled_io_stride_) {
    rounds_without_io_ = 0;
    if (io_.poll() > 0) {
      worked = true;
      polled_io_stride_ = polled_io_stride_min;
    } else if (polled_io_stride_ < polled_io_stride_cap_) {
      polled_io_stride_ *= 2;
    }
  }
  if (!peers_with_pending_.empty()) worked = drain_pending() || worked;
  if (!adopted_.empty()) worked = poll_adopted() || worked;
  return worked;
}

void EngineImpl::wait_until(const std::function<bool()>& done) {
  if (mode_ == p2p::ProgressMode::thread) return thread_mode_wait(done);
  if (done()) return;
  if (in_progress_)
    throw MpiError(MPI_ERR_INTERN, "a blocking wait inside a progress callback would never finish");
  ProgressGuard waiting(waiting_);
  using clock = std::chrono::steady_clock;
  const auto spin = std::chrono::microseconds(spin_);
  clock::time_point idle_since{};
  bool sleeping = false;
  auto poll_slice = min_poll_slice;
  // MPI_THREAD_MULTIPLE: between rounds, other threads waiting for the big
  // lock get it (the message we wait for may be theirs to send); progress
  // and the transports' handlers only ever run with it held.
  core::BigLock& lock = core::big_lock();
  const bool threaded = lock.enabled() && lock.held_by_me();
  // The clock is read every 16th idle round only: a round of the vendor
  // transport is a fraction of a microsecond, and so is a clock read here.
  unsigned idle_rounds = 0;
  bool fresh = true;  // idle_since is to be (re)set at the next clock read
  for (;;) {
    bool worked = progress();
    if (done()) return;
    if (threaded && lock.contended()) {
      lock.yield_to_waiters();
      // Rounds with a thread switch are slow: a stride counted in rounds
      // would leave the sockets unasked for milliseconds.
      polled_io_stride_ = polled_io_stride_min;
      if (done()) return;
    }
    if (worked) {
      fresh = true;
      idle_rounds = 0;
      sleeping = false;
      poll_slice = min_poll_slice;
      continue;
    }
    if (yield_ && !sleeping) {
      // More ranks than cores: the rank we wait for may need this core.
      // A yield may last a time slice, so the clock is read every 4th
      // round (not every round: most rounds after a yield find nothing,
      // and their cost is what the other ranks of this core wait for).
      sched_yield();
      if ((++idle_rounds & 3) != 0) continue;
    } else if (!sleeping && (++idle_rounds & 15) != 0) {
      continue;
    }
    const auto now = clock::now();
    if (fresh) {
      idle_since = now;
      fresh = false;
    }
    const auto idle = now - idle_since;
    if (!sleeping && idle < spin) continue;
    sleeping = true;
    // A thread waiting for the lock (it may have woken us) goes first: the
    // next round yields instead of sleeping.
    if (threaded && lock.contended()) continue;
    if (!can_sleep_ && idle < spin + yield_phase) {
      // A transport without an fd: nothing would wake a sleep, so keep
      // polling, but give the core away between rounds (and ask the
      // io_context often again: rounds are slow now).
      polled_io_stride_ = polled_io_stride_min;
      sched_yield();
      continue;
    }
    // Nothing for a while: sleep until a transport has news (bounded, so
    // that completions no transport announces are still seen; with a
    // transport that has no fd, bounded by the growing poll slice).
    {
      ProgressGuard guard(in_progress_);
      if (can_sleep_) {
        io_.run_one_for(std::chrono::microseconds(sleep_slice));
      } else {
        io_.run_one_for(poll_slice);
        poll_slice = std::min<std::chrono::microseconds>(poll_slice * 2, max_poll_slice);
      }
    }
    if (done()) return;
  }
}

// ---- thread mode ----------------------------------------------------------

void EngineImpl::start_progress_threads() {
  LockIfThreaded hold(true);
  if (threads_started_) return;
  threads_started_ = true;
  // Transports that cannot wake the io_context run their own thread.
  for (const auto& t : transports_)
    if (!t->capabilities().can_block) t->start_progress_thread();
  progress_thread_ = std::thread([this] { progress_thread_main(); });
  progress_thread_id_ = progress_thread_.get_id();
}

void EngineImpl::progress_thread_main() {
  // Blocks in the io_context without the big lock; every handler enters the
  // gate (the transports wrap them in GateScope).  run() returns only when
  // stopped, or when a handler threw: that failure is kept for the
  // application threads, and the thread carries on.
  while (!stopping_.load(std::memory_order_acquire)) {
    try {
      io_.run();
    } catch (...) {
      LockIfThreaded hold(true);
      if (!thread_failure_) thread_failure_ = std::current_exception();
      wake_all_ = true;  // the release of `hold` wakes every waiter
    }
  }
}

void EngineImpl::stop_progress_thread() noexcept {
  if (!progress_thread_.joinable()) return;
  stopping_.store(true, std::memory_order_release);
  io_.stop();
  // The thread may be waiting at the gate: let it in and out while we join.
  core::BigLock& lock = core::big_lock();
  int depth = lock.release_all();
  progress_thread_.join();
  lock.reacquire(depth);
}

void EngineImpl::enter() { core::big_lock().lock(false); }

void EngineImpl::leave() noexcept {
  core::BigLock& lock = core::big_lock();
  // The outermost level of a round that does not run inside another engine
  // call (a send() of ours that re-entered the transport, say) finishes the
  // round: what the events made possible is done now, not at the next call.
  if (lock.depth() == 1 && !in_progress_ && !closing_) {
    try {
      background_round(true);
    } catch (...) {
      if (!thread_failure_) thread_failure_ = std::current_exception();
      wake_all_ = true;
    }
  }
  // The final unlock runs check_waiters (release hook): waiters whose wait
  // is over wake up.
  lock.unlock();
}

bool EngineImpl::background_round(bool from_gate) {
  ProgressGuard guard(in_progress_);
  struct GateRound {
    bool& flag;
    ~GateRound() { flag = false; }
  } gate_round{gate_round_};
  gate_round_ = from_gate;
  bool worked = false;
  // The transports' progress() reports a failure a handler or a transport
  // thread recorded (a lost peer), finishes what handlers leave (self
  // delivery, IMPI's flow-controlled FINI) and checks deadlines.  Rounds
  // that end a gate (the progress thread, a transport's thread) leave
  // transports with a thread of their own to that thread; application
  // threads call them too (under the lock), which is how their failures
  // surface.
  auto round = [&](p2p::Transport* t) {
    try {
      worked = t->progress() || worked;
    } catch (...) {
      // The application thread's own progress() rethrows it (transports
      // keep reporting a failure); the waiters must look now.
      if (!from_gate) throw;
      wake_all_ = true;
    }
  };
  if (from_gate)
    for (p2p::Transport* t : fd_transports_) round(t);
  else
    for (p2p::Transport* t : poll_order_) round(t);
  if (!peers_with_pending_.empty()) worked = drain_pending() || worked;
  if (!adopted_.empty()) worked = poll_adopted() || worked;
  return worked;
}

bool EngineImpl::thread_mode_progress(bool may_yield) {
  LockIfThreaded hold(true);
  if (in_progress_) return false;  // an upcall asked for progress: the outer round will do it
  if (!threads_started_) start_progress_threads();
  rethrow_thread_failure();
  bool worked = background_round(false);
  // MPI_Test in a loop must not keep the progress thread (or another
  // thread) out: the lock is not fair, so hand it over explicitly.  Not
  // from inside a release hook, which walks the waiters.
  core::BigLock& lock = core::big_lock();
  if (may_yield && lock.contended() && lock.depth() > 0) lock.yield_to_waiters();
  return worked;
}

void EngineImpl::rethrow_thread_failure() {
  if (!thread_failure_) return;
  std::exception_ptr failure = std::exchange(thread_failure_, nullptr);
  wake_all_ = false;
  std::rethrow_exception(failure);
}

void EngineImpl::thread_mode_wait(const std::function<bool()>& done) {
  LockIfThreaded hold(true);
  if (done()) return;
  if (in_progress_)
    throw MpiError(MPI_ERR_INTERN, "a blocking wait inside a progress callback would never finish");
  if (std::this_thread::get_id() == progress_thread_id_)
    throw MpiError(MPI_ERR_INTERN, "a blocking wait on the progress thread would never finish");
  if (!threads_started_) start_progress_threads();
  core::BigLock& lock = core::big_lock();
  Waiter me;
  me.done = &done;
  waiters_.push_back(&me);
  struct Unlist {
    std::vector<Waiter*>& list;
    Waiter* w;
    ~Unlist() { std::erase(list, w); }
  } unlist{waiters_, &me};
  if (thread_yield_spin_ > 0) {
    // More ranks than cores: poll, giving the core away between rounds, for
    // a while before sleeping; meanwhile the transports do not wake the
    // progress thread (its wake-up and ours would cost two context switches
    // per message).
    struct Polling {
      int& count;
      explicit Polling(int& c) : count(c) { ++count; }
      ~Polling() { --count; }
    };
    bool finished = false;
    {
      Polling polling(application_pollers_);
      const auto spin_end = std::chrono::steady_clock::now() + std::chrono::microseconds(thread_yield_spin_);
      for (unsigned rounds = 1;; ++rounds) {
        thread_mode_progress(false);
        if (done()) {
          finished = true;
          break;
        }
        if ((rounds & 3) == 0 && std::chrono::steady_clock::now() >= spin_end) break;
        give_way(false);
      }
    }
    if (finished) {
      // The transports' wake-ups stay unarmed for now: the application
      // usually calls again within microseconds (a collective's next step),
      // and every armed wake-up would cost a switch to the progress thread.
      // The timer arms them if it does not, so the progress thread carries
      // on while the application computes.
      if (application_pollers_ == 0) {
        if (waiters_.size() > 1) {
          // Another thread sleeps in a wait: arm now, its message may come.
          thread_mode_progress(false);
        } else {
          last_poll_exit_ = std::chrono::steady_clock::now();
          if (!rearm_pending_) schedule_rearm();
        }
      }
      return;
    }
  }
  for (;;) {
    // The cheap engine-side work (also done by every round of the progress
    // thread), then the check; both under the lock, so no completion can
    // slip between the check and the sleep.  (After polling: the first
    // round arms the transports' wake-ups again.)
    thread_mode_progress(false);
    if (done()) return;
    me.ready = false;
    lock.wait(me.cv, thread_wait_slice, me.ready);
  }
}

void EngineImpl::schedule_rearm() {
  rearm_pending_ = true;
  if (!rearm_timer_) rearm_timer_.emplace(io_);
  rearm_timer_->expires_at(last_poll_exit_ + rearm_delay);
  rearm_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    // Under the gate; leaving it runs a round of the fd transports, which
    // arms their wake-ups when no application thread polls.
    p2p::GateScope gate(this);
    rearm_pending_ = false;
    if (application_pollers_ == 0 && std::chrono::steady_clock::now() - last_poll_exit_ < rearm_delay)
      schedule_rearm();  // a waiter polled and left again meanwhile
  });
}

void EngineImpl::check_waiters() noexcept {
  // Runs with the lock held, in whichever thread releases it: predicates are
  // engine and request state, guarded by the lock.  As in any progress
  // callback, they may not block (in_progress_ makes a nested progress()
  // a no-op and a nested wait an error).
  if (waiters_.empty() || closing_) return;
  ProgressGuard guard(in_progress_);
  const bool all = wake_all_;
  for (std::size_t i = 0; i < waiters_.size(); ++i) {
    Waiter* w = waiters_[i];
    if (w->ready) continue;
    bool wake = all;
    if (!wake) {
      try {
        wake = (*w->done)();
      } catch (...) {
        wake = true;  // its own thread evaluates it again and gets the error
      }
    }
    if (wake) {
      w->ready = true;
      w->cv.notify_one();
    }
  }
}

void EngineImpl::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  // Finalize detaches the buffer implicitly and waits for every frame already
  // handed to us to leave, and for sends nobody will wait for (buffered
  // copies, freed requests) to finish: a rendezvous one may still get its
  // clear-to-send, and its data must go before our goodbye.  A send whose
  // receive is never posted is the program's error: bounded wait, then a warning.
  auto background_sends = [&] {
    if (!cancelling_.empty()) return true;  // cancels waiting for their answer
    return std::any_of(by_id_.begin(), by_id_.end(), [](const auto& entry) {
      const PointRequest* r = entry.second;
      return r->role == PointRole::send && (r->freed || r->internal);
    });
  };
  auto flushed = [&] { return frames_outstanding_ == 0 && peers_with_pending_.empty(); };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  wait_until([&] {
    return flushed() && ((bsend_.empty() && !background_sends()) || std::chrono::steady_clock::now() > deadline);
  });
  if (!bsend_.empty() || background_sends())
    log().warn("rank {}: MPI_Finalize: buffered or freed sends were never received; dropping them", rank_);
  for (const auto& t : transports_) t->begin_shutdown();
  wait_until([&] {
    return std::all_of(transports_.begin(), transports_.end(), [](const auto& t) { return t->shutdown_complete(); });
  });
  // Thread mode: the connections are closed; nothing runs handlers from here on.
  if (mode_ == p2p::ProgressMode::thread) {
    LockIfThreaded hold(true);
    stop_progress_thread();
  }
}

std::unique_ptr<Engine> make_engine_with(int world_rank, int world_size, std::uint64_t job_cookie,
                                         const TransportMaker& make, EngineOptions options) {
  return std::make_unique<EngineImpl>(world_rank, world_size, job_cookie, make, options);
}

std::unique_ptr<Engine> make_engine(int world_rank, int world_size, std::uint64_t job_cookie,
                                    std::shared_ptr<const impi::Startup> impi) {
  EngineOptions options;
  options.impi = std::move(impi);
  return make_engine_with(
      world_rank, world_size, job_cookie,
      [](const p2p::TransportContext& context) {
        std::vector<std::unique_ptr<p2p::Transport>> transports;
        for (const auto& factory : p2p::transport_factories())
          if (auto t = factory.create(context)) transports.push_back(std::move(t));
        return transports;
      },
      options);
}

}  // namespace gridmpi::request
