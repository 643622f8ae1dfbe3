// What the engine's files share (request/engine.cpp and the files it
// lists): progress timings, placement tokens and small helpers.  Internal to
// request/.
#pragma once
#include <mpi.h>

#include <chrono>
#include <cstdint>

#include "base/error.hpp"
#include "conf/registry.hpp"
#include "core/big_lock.hpp"

namespace gridmpi::request::engine_detail {

// Seconds on the steady clock (prediction's handshake timing).
inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Poll mode.  While sleeping, wake up this often anyway: a generalized
// request may be completed by another thread, which no transport event
// announces (under MPI_THREAD_MULTIPLE that thread's waker is faster).
inline constexpr auto sleep_slice = std::chrono::milliseconds(1);
// With a transport that has no fd (nothing wakes a sleep): after the spin
// budget, this long of sched_yield rounds (cheap when the core is idle, and
// a peer rank on the same core gets it), then sleeps between polls that
// grow from min_poll_slice to max_poll_slice.
inline constexpr auto yield_phase = std::chrono::milliseconds(2);
inline constexpr auto min_poll_slice = std::chrono::microseconds(20);
inline constexpr auto max_poll_slice = std::chrono::microseconds(500);

// Thread mode.  A sleeping waiter is woken by whoever completes its wait;
// this bound only catches what no event announces (deadlines: a transport's
// connect or goodbye time limit, the shutdown's patience).
inline constexpr auto thread_wait_slice = std::chrono::milliseconds(50);

// Placement tokens: a pointer with the frame's role in its low bits (objects
// from new are at least 8-byte aligned).
enum TokenTag : std::uint64_t { token_none = 0, token_eager = 1, token_data = 2, token_unexpected = 3 };
inline constexpr std::uint64_t tag_mask = 7;

template <class T>
inline std::uint64_t make_token(T* p, TokenTag tag) {
  return reinterpret_cast<std::uint64_t>(p) | tag;
}
template <class T>
inline T* token_pointer(std::uint64_t token) {
  return reinterpret_cast<T*>(token & ~tag_mask);
}

inline void set_proc_null_status(MPI_Status& s) {
  s.MPI_SOURCE = MPI_PROC_NULL;
  s.MPI_TAG = MPI_ANY_TAG;
  s.MPI_ERROR = MPI_SUCCESS;
  s.gridmpi_count = 0;
  s.gridmpi_cancelled = 0;
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

}  // namespace gridmpi::request::engine_detail
