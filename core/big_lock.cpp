// The big lock of MPI_THREAD_MULTIPLE (see big_lock.hpp).  Owner: core/ (threads).
#include "core/big_lock.hpp"

#include <algorithm>
#include <chrono>

namespace gridmpi::core {

namespace {

// How long a yielding owner waits for a waiter to take the lock before it
// takes it back anyway (the waiter may not have been scheduled yet).
constexpr auto handover_patience = std::chrono::milliseconds(2);

}  // namespace

void BigLock::lock(bool wake_sleeper) {
  if (held_by_me()) {
    ++depth_;
    return;
  }
  acquire(wake_sleeper);
  depth_ = 1;
}

void BigLock::unlock() noexcept {
  // Hooks run at depth 1, before the release: a hook that locks again only
  // goes 1 -> 2 -> 1 and does not come back here.
  if (depth_ == 1 && !hooks_.empty()) run_release_hooks();
  if (--depth_ > 0) return;
  owner_.store(std::thread::id{}, std::memory_order_relaxed);
  mutex_.unlock();
}

void BigLock::acquire(bool wake_sleeper) {
  if (!mutex_.try_lock()) {
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    if (wake_sleeper) wake_all();
    mutex_.lock();
    waiters_.fetch_sub(1, std::memory_order_seq_cst);
  }
  owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  handovers_.fetch_add(1, std::memory_order_relaxed);
}

void BigLock::yield_to_waiters() {
  if (!contended() || !held_by_me()) return;
  if (!hooks_.empty()) run_release_hooks();
  int depth = depth_;
  std::uint64_t seen = handovers_.load(std::memory_order_relaxed);
  depth_ = 0;
  owner_.store(std::thread::id{}, std::memory_order_relaxed);
  mutex_.unlock();
  // std::mutex is not fair: taking it straight back would usually win
  // against the thread just woken.  Wait until a waiter has it.
  const auto deadline = std::chrono::steady_clock::now() + handover_patience;
  while (handovers_.load(std::memory_order_relaxed) == seen && contended() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  acquire(false);
  depth_ = depth;
}

void BigLock::wait(std::condition_variable& cv, std::chrono::nanoseconds timeout, const bool& ready) {
  if (!hooks_.empty()) run_release_hooks();
  if (ready) return;
  int depth = depth_;
  depth_ = 0;
  owner_.store(std::thread::id{}, std::memory_order_relaxed);
  {
    std::unique_lock<std::mutex> held(mutex_, std::adopt_lock);
    cv.wait_for(held, timeout, [&ready] { return ready; });
    held.release();  // stays locked: ours again
  }
  owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  handovers_.fetch_add(1, std::memory_order_relaxed);
  depth_ = depth;
}

int BigLock::release_all() noexcept {
  if (!held_by_me()) return 0;
  if (!hooks_.empty()) run_release_hooks();
  int depth = depth_;
  depth_ = 0;
  owner_.store(std::thread::id{}, std::memory_order_relaxed);
  mutex_.unlock();
  return depth;
}

void BigLock::reacquire(int depth) {
  if (depth <= 0) return;
  acquire(false);
  depth_ = depth;
}

void BigLock::add_release_hook(void* key, HookFunction fn) { hooks_.emplace_back(key, fn); }

void BigLock::remove_release_hook(void* key) noexcept {
  std::erase_if(hooks_, [key](const auto& h) { return h.first == key; });
}

void BigLock::run_release_hooks() noexcept {
  if (in_hooks_) return;
  in_hooks_ = true;
  for (std::size_t i = 0; i < hooks_.size(); ++i) hooks_[i].second(hooks_[i].first);
  in_hooks_ = false;
}

void BigLock::add_waker(void* key, WakeFunction fn) {
  std::lock_guard guard(wakers_mutex_);
  wakers_.emplace_back(key, fn);
}

void BigLock::remove_waker(void* key) noexcept {
  std::lock_guard guard(wakers_mutex_);
  std::erase_if(wakers_, [key](const auto& w) { return w.first == key; });
}

void BigLock::wake_all() noexcept {
  std::lock_guard guard(wakers_mutex_);
  for (auto [key, fn] : wakers_) fn(key);
}

}  // namespace gridmpi::core
