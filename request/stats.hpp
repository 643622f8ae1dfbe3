// The request layer's counters, read by MPI_T performance variables
// (core/mpit_pvars.hpp; registered in stats.cpp).  Updated by the engine
// under its lock with a relaxed load and store (no locked instruction on the
// message path), read from any thread.
#pragma once
#include <atomic>
#include <cstdint>

namespace gridmpi::request::stats {

// Messages (eager, synchronous or rendezvous) that arrived at this process
// from any peer, itself included: pvar request.messages_received.
inline std::atomic<std::uint64_t> messages_received{0};

// Receive-message prediction (request/predict.hpp): waits that went idle,
// predictions made, and of those resolved by the next message on their
// stream, the right and the wrong ones (pvars request.predict.*).
inline std::atomic<std::uint64_t> predict_idle_waits{0};
inline std::atomic<std::uint64_t> predict_predictions{0};
inline std::atomic<std::uint64_t> predict_hits{0};
inline std::atomic<std::uint64_t> predict_misses{0};

// Credits (p2p/frame.hpp) this process gave, and long messages it sent
// eagerly on one (request.predict.credits, request.predict.credits_used).
inline std::atomic<std::uint64_t> predict_credits{0};
inline std::atomic<std::uint64_t> predict_credits_used{0};

// The rendezvous handshakes credits saved: for each long message sent on a
// credit, the least rts-to-cts time of its peer (seconds;
// request.predict.time_saved).
inline std::atomic<double> predict_time_saved{0};

inline void add_seconds(std::atomic<double>& timer, double seconds) noexcept {
  timer.store(timer.load(std::memory_order_relaxed) + seconds, std::memory_order_relaxed);
}

inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by = 1) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

}  // namespace gridmpi::request::stats
