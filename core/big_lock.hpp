// The process-wide lock of MPI_THREAD_MULTIPLE (the "big lock").  Owner:
// core/ (threads).
//
// Every MPI entry point holds it for its whole call (ApiLock, taken by
// api_call), so the library's state (handle tables, the request engine,
// communicators, datatypes, attributes, error handlers) is only ever touched
// by one thread at a time.  It is recursive, because user callbacks (error
// handlers, attribute copy/delete functions, user ops, generalized-request
// callbacks) run with it held and may call MPI.
//
// Blocking waits must let other threads in: the engine's wait_until gives
// the lock away between progress rounds when another thread waits for it
// (yield_to_waiters), and a thread that wants the lock while the owner
// sleeps in the transports' event wait wakes it (the engines register a
// waker that posts to their io_context).  See core/README.md, "how the
// locking works".
//
// The lock is a no-op until MPI_Init_thread grants MPI_THREAD_MULTIPLE
// (enable()); at the other levels an entry point costs one relaxed load.
// The thread progress mode (request/progress_mode.hpp) enables it at every
// thread level: its progress thread delivers events under it, and waiting
// threads sleep on a condition variable with it released (wait()).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace gridmpi::core {

class BigLock {
 public:
  // Switched on once, by MPI_Init_thread granting MPI_THREAD_MULTIPLE, and
  // never off again (MPI_Initialized/MPI_Finalized may run in any thread).
  void enable() noexcept { enabled_.store(true, std::memory_order_release); }
  bool enabled() const noexcept { return enabled_.load(std::memory_order_relaxed); }

  // Recursive.  wake_sleeper: when the lock is taken, ask its owner to leave
  // a transport sleep at once (API entry points); false for a waiting thread
  // coming back for its next round (it needs no hurry).
  void lock(bool wake_sleeper = true);
  void unlock() noexcept;
  bool held_by_me() const noexcept {
    return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }

  // The owner's recursion depth (0 when the calling thread does not hold it).
  int depth() const noexcept { return held_by_me() ? depth_ : 0; }

  // Owner only: releases the lock completely (whatever the depth), sleeps on
  // `cv` until `ready` is true (set, and `cv` notified, by a thread holding
  // the lock: a release hook) or `timeout` passed, and takes the lock back
  // to the same depth.  Release hooks run first; when one of them sets
  // `ready`, wait() returns at once.
  void wait(std::condition_variable& cv, std::chrono::nanoseconds timeout, const bool& ready);
  // Owner only: releases the lock completely and returns the depth it had,
  // for a join of a thread that may be waiting for the lock; reacquire()
  // takes it back.  Release hooks run first, as at any final release.
  int release_all() noexcept;
  void reacquire(int depth);

  // Release hooks: called by the owner, with the lock still held, each time
  // it gives the lock up completely (final unlock, wait, yield, release_all).
  // The thread progress mode uses one to wake the threads whose requests a
  // call has completed, whoever made the call.  Hooks must not throw; a hook
  // that takes and releases the lock itself does not run hooks again.
  // Registered and removed with the lock held (the list is guarded by it).
  using HookFunction = void (*)(void* key) noexcept;
  void add_release_hook(void* key, HookFunction fn);
  void remove_release_hook(void* key) noexcept;

  // Whether another thread is waiting for the lock.
  bool contended() const noexcept { return waiters_.load(std::memory_order_seq_cst) > 0; }
  // Called by the owner (at any depth) between progress rounds: when others
  // wait, releases the lock completely, lets one of them take it, and takes
  // it back to the same depth.
  void yield_to_waiters();

  // Wakers: called (from a thread that does not hold the lock) when it
  // finds the lock taken, so that an owner sleeping in a transport wait
  // comes out and yields.  Each engine registers one; key = the engine.
  using WakeFunction = void (*)(void* key);
  void add_waker(void* key, WakeFunction fn);
  void remove_waker(void* key) noexcept;

 private:
  void acquire(bool wake_sleeper);
  void wake_all() noexcept;
  void run_release_hooks() noexcept;

  std::atomic<bool> enabled_{false};
  std::mutex mutex_;
  std::atomic<std::thread::id> owner_{};
  int depth_ = 0;                           // only the owner touches it
  std::atomic<int> waiters_{0};             // threads blocked in lock()
  std::atomic<std::uint64_t> handovers_{0};  // acquisitions of mutex_ so far
  std::vector<std::pair<void*, HookFunction>> hooks_;  // guarded by mutex_
  bool in_hooks_ = false;                               // only the owner touches it
  std::mutex wakers_mutex_;
  std::vector<std::pair<void*, WakeFunction>> wakers_;
};

// The one lock of the process.
// Inline: every MPI call asks it (ApiLock) whether it is enabled.
inline BigLock& big_lock() noexcept {
  static BigLock lock;
  return lock;
}

// Held by every MPI entry point (api_call and the shims that bypass it).
// Takes the lock only when it is enabled; remembers whether it did, so that
// MPI_Init_thread, which enables it halfway through, stays balanced.
class ApiLock {
 public:
  ApiLock() : locked_(big_lock().enabled()) {
    if (locked_) big_lock().lock();
  }
  ~ApiLock() {
    if (locked_) big_lock().unlock();
  }
  ApiLock(const ApiLock&) = delete;
  ApiLock& operator=(const ApiLock&) = delete;

 private:
  bool locked_;
};

}  // namespace gridmpi::core
