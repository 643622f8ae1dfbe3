// Receive-message prediction: the predictors (request/predict.hpp).
#include "request/predict.hpp"

#include <algorithm>

#include "conf/checked.hpp"
#include "conf/registry.hpp"

namespace gridmpi::request::predict {

namespace {

const conf::ChoiceParam predict_param{
    "request.predict", "off", {"off", "last", "markov", "periodic"},
    "receive-message prediction: while a receive waits idle, predict the next message's header on each stream "
    "(communicator, source) waited on and compare it when the message comes (MPI_T pvars request.predict.*): off; "
    "last = the previous header; markov = the header that most often followed the previous one; periodic = the "
    "header that followed the longest earlier match of the stream's recent headers (a period)",
    conf::Level::tuner};

const conf::Param<bool> credits_param{
    "request.predict_credits", true, "",
    "with request.predict on: when a stream's next message is predicted long (above the rendezvous switch "
    "point), its receiver lets the sender send it eagerly (a credit), saving the request-to-send and "
    "clear-to-send round trip; it is then received as any eager message",
    conf::Level::tuner};
const conf::Param<std::int64_t> credit_limit_param{
    "request.predict_credit_limit", 16 << 20, "bytes",
    "what credits (request.predict_credits) may make a receiver buffer: no credit is given while the messages "
    "sent on credits that wait unmatched and the next one would pass this many bytes (so no credited message is "
    "larger)",
    conf::Level::tuner};

const conf::Param<double> credit_rate_param{
    "request.predict_credit_rate", 4e9, "bytes/s",
    "a credit (request.predict_credits) is given only for a message of at most this many bytes per second of the "
    "rendezvous round trip it saves (the least measured with that peer, else twice the transport's declared "
    "latency): an eager message may cost one copy more than the rendezvous (buffered when it comes before its "
    "receive, or through a shared-memory ring instead of a single copy), about a copy's rate",
    conf::Level::tuner};

}  // namespace

double credit_rate() {
  static const double value = std::max(0.0, conf::checked(credit_rate_param));
  return value;
}

bool credits_enabled() {
  static const bool value = conf::checked(credits_param);
  return value;
}

std::uint64_t credit_limit() {
  static const std::uint64_t value = static_cast<std::uint64_t>(std::max<std::int64_t>(0, conf::checked(credit_limit_param)));
  return value;
}

std::string_view method_name(Method method) {
  switch (method) {
    case Method::off: return "off";
    case Method::last: return "last";
    case Method::markov: return "markov";
    case Method::periodic: return "periodic";
  }
  return "?";
}

Method configured_method() {
  static const Method value = [] {
    const std::string text = conf::checked([] { return predict_param.get(); });
    if (text == "last") return Method::last;
    if (text == "markov") return Method::markov;
    if (text == "periodic") return Method::periodic;
    return Method::off;
  }();
  return value;
}

std::size_t Stream::HeaderHash::operator()(const Header& h) const noexcept {
  std::uint64_t x = h.size * 0x9E3779B97F4A7C15ull;
  x ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(h.tag)) << 8 | h.kind) + 0x632BE59BD9B4E019ull +
       (x << 6) + (x >> 2);
  return static_cast<std::size_t>(x ^ (x >> 29));
}

void Stream::observe(const Header& h) {
  if (method_ == Method::off) return;
  if (method_ == Method::markov && count_ > 0) {
    if (chain_.size() >= markov_states) chain_.clear();
    // Two successors per header with saturating counts: the one seen comes
    // up, a newcomer wears both down and takes the place of one worn out,
    // so a changed pattern wins within markov_cap observations.
    Successors& s = chain_[last_];
    int slot = -1;
    for (int i = 0; i < 2; ++i)
      if (s.count[i] > 0 && s.next[i] == h) slot = i;
    if (slot < 0) {
      for (int i = 0; i < 2 && slot < 0; ++i)
        if (s.count[i] == 0) slot = i;
      if (slot < 0) {
        for (int i = 0; i < 2; ++i) --s.count[i];
        for (int i = 0; i < 2 && slot < 0; ++i)
          if (s.count[i] == 0) slot = i;
      }
      if (slot >= 0) {
        s.next[slot] = h;
        s.count[slot] = 0;
      }
    }
    if (slot >= 0) {
      if (s.count[slot] < markov_cap) ++s.count[slot];
      s.recent = static_cast<std::uint8_t>(slot);
    }
  }
  if (method_ == Method::periodic) {
    if (history_.empty()) history_.resize(window);
    // A header against the period found: it stays only while they agree.
    if (period_ > 0 && !(count_ >= period_ && back(period_) == h)) period_ = 0;
    history_[count_ % window] = h;
  }
  last_ = h;
  ++count_;
  period_checked_ = false;
}

// How many of the last headers (up to `cap`) each equal the one p before:
// the length of the context that matches p headers back.
std::size_t Stream::agreement(std::size_t p, std::size_t cap) const noexcept {
  const std::size_t seen = static_cast<std::size_t>(std::min<std::uint64_t>(count_, window));
  if (p >= seen) return 0;
  const std::size_t most = std::min(cap, seen - p);
  std::size_t k = 0;
  while (k < most && back(k + 1) == back(k + 1 + p)) ++k;
  return k;
}

std::optional<Header> Stream::predict_markov() const {
  if (count_ == 0) return std::nullopt;
  auto it = chain_.find(last_);
  if (it == chain_.end()) return std::nullopt;
  const Successors& s = it->second;
  if (s.count[0] == 0 && s.count[1] == 0) return std::nullopt;
  int slot = s.count[0] > s.count[1] ? 0 : s.count[1] > s.count[0] ? 1 : s.recent;
  return s.next[slot];
}

std::optional<Header> Stream::peek() const {
  switch (method_) {
    case Method::off: return std::nullopt;
    case Method::last:
      if (count_ == 0) return std::nullopt;
      return last_;
    case Method::markov: return predict_markov();
    case Method::periodic:
      if (period_ == 0) return std::nullopt;
      return back(period_);
  }
  return std::nullopt;
}

std::optional<Header> Stream::predict() {
  if (method_ == Method::periodic && !period_checked_) {
    // The longest match: the distance p (up to max_period) whose context
    // (the headers before, each equal to the one p before it) is the
    // longest, the nearest on a tie, at least min_context long.  Inside an
    // iteration a run of equal headers matches at short distances; once
    // the history holds a whole iteration, the iteration's length matches
    // longer and predicts the run's end.  Search cost: at most max_period
    // x max_context comparisons, once per arrival, in idle time.
    period_checked_ = true;
    std::size_t best = 0, best_length = min_context - 1;
    for (std::size_t p = 1; p <= max_period; ++p) {
      const std::size_t length = agreement(p, max_context);
      if (length > best_length) {
        best = p;
        best_length = length;
        if (length == max_context) break;
      }
    }
    period_ = best;
  }
  return peek();
}

}  // namespace gridmpi::request::predict
