// Progress in thread mode (request/README.md, "progress modes"): a progress
// thread runs the transports' io_context and enters the engine through the
// EventGate (the big lock); application threads sleep on a condition
// variable until the lock's release hook finds their wait done.
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
#include "request/engine_internal.hpp"

namespace gridmpi::request {

using namespace engine_detail;

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
  bool predicted = false;
  for (;;) {
    // The cheap engine-side work (also done by every round of the progress
    // thread), then the check; both under the lock, so no completion can
    // slip between the check and the sleep.  (After polling: the first
    // round arms the transports' wake-ups again.)
    thread_mode_progress(false);
    if (done()) return;
    if (!predicted && predict_method_ != predict::Method::off) {
      // Going to sleep: predict what the posted receives will get.
      predicted = true;
      predict_posted();
    }
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

}  // namespace gridmpi::request
