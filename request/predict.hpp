// Receive-message prediction (the receive-message-prediction paper,
// Iwamoto et al.): while a process waits idle for a message, predict the
// header of the next message to arrive on each stream it waits on, from the
// history of earlier arrivals; when the message comes, compare.  A stream
// is one (context id, source rank) pair: the messages one peer sends on one
// communicator (point-to-point and collective contexts apart), which MPI
// delivers in order.
//
// The header is predicted as one unit, as in the paper: the tag, the size
// (packed bytes) and the kind (eager, synchronous, rendezvous), with the tag
// the receive call names filled in.  The predictors:
//
//   last      the stream's previous header (the paper's "last value");
//   markov    the header that most often followed the previous one (an
//             order-1 Markov chain over the stream's headers, the paper's
//             second: two successors per header with counts saturating at
//             markov_cap, so that a changed pattern takes over; the most
//             recent on a tie);
//   periodic  the longest match: the header p back, p (up to max_period)
//             being the distance at which the longest context of recent
//             headers repeats (at least min_context of them; the nearest on
//             a tie); no prediction while none is found.  The collectives
//             and halo exchanges inside an iteration make the per-stream
//             sequence periodic even where the next header differs from
//             the last (MG's sizes by grid level); inside an iteration a run
//             of equal headers matches at short distances, and once the
//             history holds a whole iteration its length matches longer and
//             predicts the run's end.
//
// The header predicted is the stream's next, tag included, whatever the
// receive waited on names: several receives of one stream are often posted
// at once (NAS MG posts one per direction; filling in the waited receive's
// tag, the paper's rule, made half its predictions wrong).
//
// observe() costs O(1) on the message path; predict() may scan the history
// (the periodic search, O(max_period x max_context) at worst) and runs in the
// idle time of a wait.  Socket-free; tests/unit/test_request_predict.cpp.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gridmpi::request::predict {

enum class Method : std::uint8_t { off, last, markov, periodic };
std::string_view method_name(Method method);
// The parameter request.predict (GRIDMPI_REQUEST_PREDICT), read once.
Method configured_method();
// request.predict_credits: with prediction on, whether a stream whose next
// message is predicted long gives its sender a credit (p2p/frame.hpp) to
// send it eagerly; request.predict_credit_limit, the largest such message.
bool credits_enabled();
std::uint64_t credit_limit();
// request.predict_credit_rate: bytes a credit may carry per second of the
// round trip it saves.
double credit_rate();

struct Header {
  std::uint64_t size = 0;
  std::int32_t tag = 0;
  std::uint8_t kind = 0;  // p2p::frame::Kind
  bool operator==(const Header&) const = default;
};
static_assert(sizeof(Header) == 16);

// One stream's history and its predictor.
class Stream {
 public:
  static constexpr std::size_t max_period = 256;  // longest period looked for
  // periodic: a period is taken when at least min_context headers repeat at
  // that distance; a context longer than max_context is not looked for.
  static constexpr std::size_t min_context = 8;
  static constexpr std::size_t max_context = 128;
  // Headers kept (periodic): the longest period and its longest context.
  static constexpr std::size_t window = max_period + max_context;
  static constexpr std::size_t markov_states = 256;  // the chain's table is cleared beyond
  static constexpr std::uint32_t markov_cap = 8;       // a successor's count saturates here

  explicit Stream(Method method) : method_(method) {}
  // The header that arrived next on this stream.
  void observe(const Header& h);
  // The next header, or nothing when the history tells nothing yet.
  std::optional<Header> predict();
  // The same without the periodic search (a period found stays in use): the
  // message path's prediction.
  std::optional<Header> peek() const;

  std::uint64_t observed() const noexcept { return count_; }
  std::size_t period() const noexcept { return period_; }

 private:
  const Header& back(std::size_t k) const noexcept {  // periodic; k = 1: the last header
    return history_[(count_ - k) % window];
  }
  std::size_t agreement(std::size_t p, std::size_t cap) const noexcept;
  std::optional<Header> predict_markov() const;

  Method method_;
  std::uint64_t count_ = 0;
  Header last_;
  std::vector<Header> history_;  // periodic: ring of `window` (allocated at the first header)
  // periodic: the period found (0: none), valid while every header since
  // agreed with it.
  std::size_t period_ = 0;
  bool period_checked_ = false;  // no search since the last header
  // markov: successors of each header (two per state, with counts).
  struct Successors {
    std::array<Header, 2> next{};
    std::array<std::uint32_t, 2> count{};
    std::uint8_t recent = 0;  // the slot filled last
  };
  struct HeaderHash {
    std::size_t operator()(const Header& h) const noexcept;
  };
  std::unordered_map<Header, Successors, HeaderHash> chain_;
};

}  // namespace gridmpi::request::predict
