// The big lock of MPI_THREAD_MULTIPLE (core/big_lock.hpp): recursion, full
// release to a waiting thread at any depth, wakers.  Owner: core/
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/big_lock.hpp"

using gridmpi::core::BigLock;

namespace {

std::atomic<int> wakes{0};
void count_wake(void*) { ++wakes; }

// Waits (bounded) until another thread blocks in lock().
bool wait_for_waiter(const BigLock& lock) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!lock.contended())
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

}  // namespace

TEST_CASE("big lock is recursive", "[big_lock]") {
  BigLock lock;
  lock.lock();
  lock.lock();
  CHECK(lock.held_by_me());
  lock.unlock();
  CHECK(lock.held_by_me());
  lock.unlock();
  CHECK_FALSE(lock.held_by_me());
}

TEST_CASE("yield_to_waiters hands the lock over at depth 2 and takes it back to depth 2", "[big_lock]") {
  BigLock lock;
  std::atomic<int> entered{0};
  lock.lock();
  lock.lock();
  std::thread other([&] {
    lock.lock();
    ++entered;
    lock.unlock();
  });
  REQUIRE(wait_for_waiter(lock));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (entered == 0 && std::chrono::steady_clock::now() < deadline) lock.yield_to_waiters();
  CHECK(entered == 1);
  CHECK(lock.held_by_me());
  lock.unlock();
  CHECK(lock.held_by_me());
  lock.unlock();
  CHECK_FALSE(lock.held_by_me());
  other.join();
}

TEST_CASE("a thread that finds the lock taken runs the wakers, a returning waiter does not", "[big_lock]") {
  BigLock lock;
  int key = 0;
  lock.add_waker(&key, count_wake);
  wakes = 0;
  lock.lock();
  std::thread caller([&] {
    lock.lock();  // an API entry point: wakes
    lock.unlock();
  });
  REQUIRE(wait_for_waiter(lock));
  // The waker runs just after the waiter announced itself.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (wakes == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  CHECK(wakes == 1);
  lock.unlock();
  caller.join();
  lock.lock();
  std::thread returning([&] {
    lock.lock(false);  // a wait loop coming back: no wake
    lock.unlock();
  });
  REQUIRE(wait_for_waiter(lock));
  CHECK(wakes == 1);
  lock.unlock();
  returning.join();
  lock.remove_waker(&key);
}
