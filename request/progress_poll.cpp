// Progress in poll mode (request/README.md, "progress modes"): the thread
// that waits drives every transport itself, in rounds; wait_until is the
// one entry of both modes (thread mode: progress_thread.cpp).
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
  bool predicted = false;  // predict_posted ran in this idle stretch
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
      predicted = false;
      idle_rounds = 0;
      sleeping = false;
      poll_slice = min_poll_slice;
      continue;
    }
    if (!predicted && predict_method_ != predict::Method::off &&
        (yield_ || (idle_rounds & 15) == 15)) [[unlikely]] {
      // Idle: predict what the posted receives will get (request/predict.hpp).
      // With more ranks than cores, before the first yield (which may
      // last until the message is here); else after 16 idle rounds.
      predicted = true;
      predict_posted();
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

}  // namespace gridmpi::request
