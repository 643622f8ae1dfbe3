// The request-layer engine (request/engine.hpp): its construction and
// destruction, the wire-up of MPI_Init, the shut-down of MPI_Finalize and the
// factory.  The engine's other roles each have a file:
//
//   engine_peers.cpp         peers, their transport, the pending-frame queue
//   engine_send.cpp          send protocols (eager, sync, rendezvous, buffered)
//   engine_recv.cpp          receives, matching, frames from peers
//   engine_requests.cpp      request objects: creation, start, completion, release
//   engine_probe_cancel.cpp  probe, matched probe, cancel
//   progress_poll.cpp        progress in poll mode (and wait_until for both modes)
//   progress_thread.cpp      progress in thread mode (the progress thread)
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
#include "conf/checked.hpp"
#include "conf/registry.hpp"
#include "core/big_lock.hpp"
#include "base/error.hpp"
#include "core/group.hpp"
#include "core/job_layout.hpp"
#include "p2p/copy_bytes.hpp"
#include "request/comm_wait.hpp"
#include "request/stats.hpp"
#include "request/progress_mode.hpp"
#include "request/engine_internal.hpp"

namespace gridmpi::request {

using namespace engine_detail;

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
  rsize_ = options.rsize ? *options.rsize : conf::checked(rsize_param);
  spin_ = options.spin ? *options.spin : conf::checked(spin_param);
  proto_info_ = conf::checked(proto_info_param);
  predict_method_ = options.predict ? *options.predict : predict::configured_method();
  credits_ = predict_method_ != predict::Method::off && predict::credits_enabled();
  credit_limit_ = options.credit_limit ? *options.credit_limit : predict::credit_limit();
  credit_rate_ = options.credit_rate ? *options.credit_rate : predict::credit_rate();
  yield_ = mode_ == p2p::ProgressMode::poll && (options.yield ? *options.yield : yield_when_idle_setting());
  if (yield_ && !options.spin) spin_ = conf::checked(yield_spin_param);
  if (mode_ == p2p::ProgressMode::thread && (options.yield ? *options.yield : yield_when_idle_setting()))
    thread_yield_spin_ = conf::checked(yield_spin_param);
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

void EngineImpl::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (predict_method_ != predict::Method::off) {
    auto value = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); };
    log().info("receive-message prediction ({}): {} messages received, {} idle waits, {} predictions, {} hits, "
               "{} misses",
               predict::method_name(predict_method_), value(stats::messages_received),
               value(stats::predict_idle_waits), value(stats::predict_predictions), value(stats::predict_hits),
               value(stats::predict_misses));
  }
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
