// The broadcast family's cost model (model.hpp).  Compiled without
// floating-point contraction (core/CMakeLists.txt), so that every process
// computes bit for bit the same estimates.
#include "core/coll/model.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "base/error.hpp"
#include "conf/log.hpp"
#include "conf/registry.hpp"
#include "core/coll/util.hpp"
#include "core/runtime.hpp"
#include "p2p/transport.hpp"
#include "request/progress_mode.hpp"
#include "request/request.hpp"

namespace gridmpi::coll::model {

namespace {

const conf::ChoiceParam model_param{
    "coll.model", "auto", {"auto", "1", "2", "3", "4", "rules"},
    "the cost model that chooses MPI_Bcast's algorithm (ring or hybrid d, and the d of hybrid) and "
    "MPI_Allgather's (recursive doubling, Bruck or ring): 1 = the "
    "transports' declared latency and bandwidth; 2 = the measured latencies and per-byte costs at the "
    "message's size; 3 = per-byte costs at n, n/2 and n/4; 4 = 3, and no less than the total work over the "
    "host's cores when processes outnumber them; auto = 4 (on the declared figures where gridmpi-calibrate never "
    "measured the level); rules = the fixed size thresholds of core/coll/select.cpp (no model); give every "
    "process the same value",
    conf::Level::tuner};

// One level's section, [coll.calibration.<level>], written by gridmpi-calibrate.
struct LevelParams {
  conf::Param<double> s1, s2;
  conf::Param<std::string> m1, m2, reduce, source;
};
#define GRIDMPI_MODEL_LEVEL(L, where)                                                                        \
  LevelParams{                                                                                               \
      {"coll.calibration." L ".s1", 0.0, "seconds",                                                                \
       "one-way latency " where " (half a zero-byte ping-pong); 0 = not calibrated (gridmpi-calibrate)",     \
       conf::Level::tuner},                                                                                        \
      {"coll.calibration." L ".s2", 0.0, "seconds",                                                                \
       "latency of a zero-byte exchange " where " (MPI_Sendrecv after a barrier)", conf::Level::tuner},            \
      {"coll.calibration." L ".m1", "", "",                                                                        \
       "one-way seconds per byte " where " by message size, \"SIZE:SECONDS ...\" (gridmpi-calibrate)",       \
       conf::Level::tuner},                                                                                        \
      {"coll.calibration." L ".m2", "", "",                                                                        \
       "exchange seconds per byte " where " by message size, \"SIZE:SECONDS ...\" (gridmpi-calibrate)",      \
       conf::Level::tuner},                                                                                        \
      {"coll.calibration." L ".reduce", "", "",                                                                    \
       "seconds per byte of MPI_SUM over doubles by size, measured with the figures " where ", "                 \
       "\"SIZE:SECONDS ...\" (gridmpi-calibrate; empty: 0.5 ns)",                                                 \
       conf::Level::tuner},                                                                                        \
      {"coll.calibration." L ".source", "", "", "how and when the figures " where " were measured",                \
       conf::Level::tuner}}
const LevelParams level_params[level_count] = {
    GRIDMPI_MODEL_LEVEL("shm", "inside a host"),
    GRIDMPI_MODEL_LEVEL("net", "over the cluster network"),
    GRIDMPI_MODEL_LEVEL("wan", "between clusters"),
};
#undef GRIDMPI_MODEL_LEVEL

template <class P>
auto read(const P& p) {
  try {
    return p.get();
  } catch (const conf::ConfigError& e) {
    throw MpiError(MPI_ERR_ARG, e.what());
  }
}

std::size_t parse_size(std::string_view text, std::string_view what) {
  std::size_t value = 0, scale = 1;
  if (!text.empty()) {
    char last = text.back();
    if (last == 'k' || last == 'K') scale = 1024;
    if (last == 'm' || last == 'M') scale = 1024 * 1024;
    if (last == 'g' || last == 'G') scale = 1024 * 1024 * 1024;
    if (scale != 1) text.remove_suffix(1);
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw MpiError(MPI_ERR_ARG, fmt::format("{}: \"{}\" is not a size (bytes, k/m/g suffixes)", what, text));
  return value * scale;
}

// ceil(log2 q) for q >= 1: the stages of a binomial tree or a recursive
// doubling over q members.
double stages(int q) {
  int s = 0;
  while ((1 << s) < q) ++s;
  return s;
}

const std::string& model_setting() {
  static const std::string value = read(model_param);  // read once
  return value;
}

int which_model() {
  const std::string& forced = model_setting();
  if (forced == "auto") return 4;
  if (forced == "rules") return 0;
  return forced[0] - '0';
}

}  // namespace

bool rules_only() { return model_setting() == "rules"; }

std::string_view level_name(Level level) {
  switch (level) {
    case Level::shm: return "shm";
    case Level::net: return "net";
    case Level::wan: return "wan";
  }
  return "?";
}

double Table::at(std::size_t bytes) const {
  if (points.empty()) return 0;
  if (bytes <= points.front().first) return points.front().second;
  if (bytes >= points.back().first) return points.back().second;
  auto hi = std::lower_bound(points.begin(), points.end(), bytes,
                             [](const auto& point, std::size_t b) { return point.first < b; });
  auto lo = hi - 1;
  double x = std::log2(static_cast<double>(bytes)), x0 = std::log2(static_cast<double>(lo->first)),
         x1 = std::log2(static_cast<double>(hi->first));
  double t = (x - x0) / (x1 - x0);
  return lo->second + t * (hi->second - lo->second);
}

Table parse_table(std::string_view text, std::string_view what) {
  Table table;
  std::size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == ',' || text[pos] == '\t')) ++pos;
    if (pos >= text.size()) break;
    std::size_t end = text.find_first_of(" ,\t", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    pos = end;
    std::size_t colon = item.find(':');
    if (colon == std::string_view::npos)
      throw MpiError(MPI_ERR_ARG, fmt::format("{}: \"{}\" is not SIZE:SECONDS_PER_BYTE", what, item));
    std::size_t size = parse_size(item.substr(0, colon), what);
    if (size == 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: a size of 0 has no cost per byte", what));
    std::string number(item.substr(colon + 1));
    char* stop = nullptr;
    double seconds = std::strtod(number.c_str(), &stop);
    if (number.empty() || stop != number.c_str() + number.size() || !(seconds >= 0) || !std::isfinite(seconds))
      throw MpiError(MPI_ERR_ARG, fmt::format("{}: \"{}\" is not a cost in seconds per byte", what, number));
    if (!table.points.empty() && size <= table.points.back().first)
      throw MpiError(MPI_ERR_ARG, fmt::format("{}: sizes must increase ({} after {})", what, size,
                                              table.points.back().first));
    table.points.emplace_back(size, seconds);
  }
  return table;
}

std::string format_table(const Table& table) {
  std::string out;
  for (const auto& [size, seconds] : table.points) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}:{:.4g}", size, seconds);
  }
  return out;
}

namespace {

// The level's calibrated figures, else the transports' declared ones.
Costs calibrated_or_declared(Level level, double declared_latency_us, double declared_bandwidth) {
  const LevelParams& p = level_params[static_cast<int>(level)];
  Costs c;
  c.s1 = read(p.s1);
  c.s2 = read(p.s2);
  std::string m1 = read(p.m1), m2 = read(p.m2);
  if (c.s1 > 0 && !m1.empty()) {
    c.m1 = parse_table(m1, fmt::format("coll.calibration.{}.m1", level_name(level)));
    c.m2 = m2.empty() ? c.m1 : parse_table(m2, fmt::format("coll.calibration.{}.m2", level_name(level)));
    if (c.s2 <= 0) c.s2 = c.s1;
    c.calibrated = true;
    c.source = read(p.source);
    const std::string reduce = read(p.reduce);
    if (!reduce.empty()) c.reduce = parse_table(reduce, fmt::format("coll.calibration.{}.reduce", level_name(level)));
    if (c.source.empty()) c.source = fmt::format("coll.calibration.{}", level_name(level));
    return c;
  }
  return declared_costs(declared_latency_us, declared_bandwidth);
}

}  // namespace

Costs costs(Level level, double declared_latency_us, double declared_bandwidth) {
  Costs c = calibrated_or_declared(level, declared_latency_us, declared_bandwidth);
  c.duplex = level != Level::shm;
  if (c.reduce.points.empty()) c.reduce.points = {{1, default_reduce_per_byte}};
  return c;
}

Table local_copy_costs() {
  const p2p::DeclaredLink shm = p2p::declared_link("shm");
  return costs(Level::shm, shm.latency_us, shm.bandwidth_bytes_per_s).m1;
}

Costs declared_costs(double latency_us, double bandwidth) {
  Costs c;
  c.s1 = c.s2 = latency_us * 1e-6;
  double per_byte = bandwidth > 0 ? 1.0 / bandwidth : 0;
  c.m1.points = {{1, per_byte}};
  c.m2 = c.m1;
  c.reduce.points = {{1, default_reduce_per_byte}};
  c.source = fmt::format("declared by the transport ({} us, {:.3g} B/s)", latency_us, bandwidth);
  return c;
}

namespace {

// Model 4's bound: the total work of messages and bytes over the cores.
double crowded(double estimate, double messages, double bytes, std::size_t piece, int p, const Costs& c) {
  if (c.cores <= 0 || p <= c.cores) return estimate;
  return std::max(estimate, (messages * c.s1 + bytes * c.m1.at(piece) * c.copies) / c.cores);
}

// Model 4's share of local work (copies, reductions: seconds summed over
// the processes) added on top of `crowded`'s bound on a crowded host.  It
// is added to whichever of the estimate and the bound is larger, so where
// the estimate wins it counts that work twice (the estimate includes it):
// kept so, as measured (npb/README.md, coll-choice-bench).
double crowded_local(double work, int p, const Costs& c) {
  return c.cores > 0 && p > c.cores ? work / c.cores : 0;
}

// A per-byte figure for a step moving `size` of the collective's n bytes:
// at the step's own size for models 3 and 4, at n for models 1 and 2.
double step_cost(const Table& t, std::size_t size, std::size_t n, int which) {
  return t.at(which >= 3 ? std::max<std::size_t>(size, 1) : n);
}

}  // namespace

// Table 2 (models 1 and 2) with M taken at `at`, or Table 3 (models 3, 4).
double estimate_ring(std::size_t n, int p, const Costs& c, int which) {
  if (p <= 1 || n == 0) return 0;
  const double bytes = static_cast<double>(n), q = p;
  const double latency = c.s1 * (2 * stages(p) + 2 * (q - 1));
  if (which >= 3) {
    double t = 0.5 * bytes * c.m1.at(n / 2) + (5 * q - 6) / (2 * q) * bytes * c.m1.at(n / 4) + latency;
    if (which == 3) return t;
    // The paper counts a ring step's bytes twice (a send, then a receive);
    // on a full-duplex network they move at once, on two connections (on
    // the emulated TCP cluster ring beat every hybrid by 10-27% from 256
    // KiB, which the doubled term never let the model choose).
    if (c.duplex) t -= (q - 1) / q * bytes * c.m1.at(n / 4);
    // scatter: p-1 messages, n/2 log2 p bytes; ring: (p-1)^2 pieces of n/p
    return crowded(t, (q - 1) + (q - 1) * (q - 1), bytes / 2 * stages(p) + (q - 1) * (q - 1) / q * bytes,
                   n / static_cast<std::size_t>(p), p, c);
  }
  return 3 * (q - 1) / q * bytes * c.m1.at(n) + latency;
}

double estimate_hybrid(std::size_t n, int p, int d, const Costs& c, int which) {
  if (p <= 1 || n == 0) return 0;
  d = std::clamp(d, 1, p);
  if (which == 4) {
    const double t = estimate_hybrid(n, p, d, c, 3), bytes = static_cast<double>(n), dd = d, q = p;
    const double g = (p + d - 1) / d;
    // scatter: d-1 messages, n/2 log2 d bytes; across the groups: (g-1) d
    // pieces of n/d; collect: p log2 d messages, (p-1)(d-1)/d n bytes.
    return crowded(t, (dd - 1) + (g - 1) * dd + q * stages(d),
                   bytes / 2 * stages(d) + (g - 1) * bytes + (q - 1) * (dd - 1) / dd * bytes,
                   n / static_cast<std::size_t>(d), p, c);
  }
  const double bytes = static_cast<double>(n), dd = d;
  const int groups = (p + d - 1) / d;
  const double across = stages(groups);  // the binomial tree over the groups
  const double latency = 2 * c.s1 * (stages(d) + across) + c.s2 * stages(d);
  if (which == 3 && d > 2) {
    return bytes * (0.5 * c.m1.at(n / 2) + 0.5 * c.m2.at(n / 2) +
                    ((dd - 2) / (2 * dd) + across / dd) * c.m1.at(n / 4) + (dd - 2) / (2 * dd) * c.m2.at(n / 4)) +
           latency;
  }
  const std::size_t at = which == 3 && d == 2 ? n / 2 : n;
  return bytes * (((dd - 1) / dd + across / dd) * c.m1.at(at) + (dd - 1) / dd * c.m2.at(at)) + latency;
}

std::vector<int> hybrid_candidates(int p) {
  std::vector<int> out;
  for (int d = 1; d <= p; ++d) {
    if ((d & (d - 1)) == 0 || p % d == 0 || d == p) out.push_back(d);
  }
  return out;
}

Choice choose(std::size_t n, int p, const Costs& c, int which) {
  Choice best;
  best.seconds = estimate_hybrid(n, p, 1, c, which);
  for (int d : hybrid_candidates(p)) {
    double t = estimate_hybrid(n, p, d, c, which);
    if (t < best.seconds) best = Choice{false, d, t};
  }
  double ring = estimate_ring(n, p, c, which);
  if (ring < best.seconds) best = Choice{true, best.d, ring};
  return best;
}

std::string_view allgather_name(AllgatherAlgorithm algorithm) {
  switch (algorithm) {
    case AllgatherAlgorithm::recursive_doubling: return "recursive_doubling";
    case AllgatherAlgorithm::bruck: return "bruck";
    case AllgatherAlgorithm::ring: return "ring";
  }
  return "?";
}

double estimate_allgather(AllgatherAlgorithm algorithm, std::size_t block, int p, const Costs& c, int which) {
  if (p <= 1 || block == 0) return 0;
  const double b = static_cast<double>(block), q = p;
  const std::size_t whole = block * static_cast<std::size_t>(p);
  // Models 1 and 2: M at the whole result; 3 and 4 at the step's message.
  auto m2 = [&](std::size_t bytes) { return c.m2.at(which >= 3 ? bytes : whole); };
  double t = 0, messages = 0, local = 0;
  switch (algorithm) {
    case AllgatherAlgorithm::recursive_doubling:
      if ((p & (p - 1)) != 0) return std::numeric_limits<double>::infinity();
      [[fallthrough]];
    case AllgatherAlgorithm::bruck:
      for (int k = 1; k < p; k <<= 1) {
        const int blocks = std::min(k, p - k);
        const std::size_t bytes = block * static_cast<std::size_t>(blocks);
        t += c.s2 + static_cast<double>(bytes) * m2(bytes);
        messages += q;
      }
      if (algorithm == AllgatherAlgorithm::bruck) {
        // At 64 KiB and above: a smaller message's per-byte figure carries
        // the message's fixed cost, ten times a copy's at 512 bytes.
        local = static_cast<double>(whole + block) *
                (c.copy.points.empty() ? c.m1 : c.copy).at(std::max<std::size_t>(whole, 64 * 1024));
        t += local;
      }
      break;
    case AllgatherAlgorithm::ring:
      t = (q - 1) * (c.s2 + b * m2(block));
      messages = q * (q - 1);
      break;
  }
  if (which != 4) return t;
  // Every process receives (p - 1) blocks whatever the algorithm, costed at
  // one rate for all (at the block: the calibration's per-byte figures vary
  // by 20% between neighbouring sizes, which made the bound, not the
  // algorithms, decide).  Bruck's copies are work too: without them a
  // crowded host's bound, the same for Bruck and the ring at p = 3, chose
  // Bruck, 1.6x slower at 256 KiB.
  const double bound = crowded(t, messages, q * (q - 1) * b, block, p, c);
  return bound + crowded_local(q * local, p, c);
}

AllgatherAlgorithm choose_allgather(std::size_t block, int p, const Costs& c, int which) {
  AllgatherAlgorithm best = (p & (p - 1)) == 0 ? AllgatherAlgorithm::recursive_doubling : AllgatherAlgorithm::bruck;
  double best_seconds = estimate_allgather(best, block, p, c, which);
  for (AllgatherAlgorithm a : {AllgatherAlgorithm::bruck, AllgatherAlgorithm::ring}) {
    const double t = estimate_allgather(a, block, p, c, which);
    if (t < best_seconds) {
      best = a;
      best_seconds = t;
    }
  }
  return best;
}

std::string_view allreduce_name(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::recursive_doubling: return "recursive_doubling";
    case AllreduceAlgorithm::rabenseifner: return "rabenseifner";
    case AllreduceAlgorithm::ring: return "ring";
    case AllreduceAlgorithm::reduce_bcast: return "reduce_bcast";
  }
  return "?";
}

double estimate_allreduce(AllreduceAlgorithm algorithm, std::size_t n, int p, const Costs& c, int which) {
  if (p <= 1 || n == 0) return 0;
  const double bytes = static_cast<double>(n), q = p;
  // Models 1 and 2: every per-byte figure at n; 3 and 4 at the step's message.
  auto at = [&](const Table& t, std::size_t size) { return step_cost(t, size, n, which); };
  const int q2 = floor_power_of_two(p);
  const double fold = q2 == p ? 0 : 2 * (c.s1 + bytes * at(c.m1, n)) + bytes * at(c.reduce, n);
  double t = 0, messages = 0, reduced = 0;
  switch (algorithm) {
    case AllreduceAlgorithm::recursive_doubling:
      t = fold + stages(q2) * (c.s2 + bytes * (at(c.m2, n) + at(c.reduce, n)));
      messages = q * stages(q2);
      reduced = q * stages(q2) * bytes;
      break;
    case AllreduceAlgorithm::rabenseifner:
      t = fold;
      for (std::size_t part = n / 2, k = 1; k <= static_cast<std::size_t>(stages(q2)); ++k, part /= 2) {
        const double b = static_cast<double>(part);
        t += 2 * (c.s2 + b * at(c.m2, part)) + b * at(c.reduce, part);
      }
      messages = 2 * q * stages(q2);
      reduced = (q - 1) * bytes;  // n/2 + n/4 + .. each
      break;
    case AllreduceAlgorithm::ring: {
      const std::size_t piece = n / static_cast<std::size_t>(p);
      const double b = bytes / q;
      t = 2 * (q - 1) * (c.s2 + b * at(c.m2, piece)) + (q - 1) * b * at(c.reduce, piece);
      messages = 2 * q * (q - 1);
      reduced = (q - 1) * bytes;
      break;
    }
    case AllreduceAlgorithm::reduce_bcast:
      t = stages(p) * (c.s1 + bytes * (at(c.m1, n) + at(c.reduce, n))) + choose(n, p, c, which).seconds;
      messages = 2 * (q - 1);
      reduced = (q - 1) * bytes;
      break;
  }
  if (which != 4) return t;
  // The work: every message's S1, each process's 2 (p - 1)/p n bytes at one
  // rate for all, and every reduction.
  const double bound = crowded(t, messages, 2 * (q - 1) * bytes, n / static_cast<std::size_t>(p), p, c);
  return bound + crowded_local(reduced * c.reduce.at(n), p, c);
}

AllreduceAlgorithm choose_allreduce(std::size_t n, int p, bool commutative, const Costs& c, int which) {
  AllreduceAlgorithm best = AllreduceAlgorithm::recursive_doubling;
  double best_seconds = estimate_allreduce(best, n, p, c, which);
  // reduce_bcast is estimated (gridmpi-model shows it) but not chosen: on a
  // crowded host its few messages made model 4's bound the lowest while it
  // ran 2-2.8x slower than Rabenseifner from 256 KiB (the root's serial
  // reductions); the crowded host's linear rule takes it where it wins.
  for (AllreduceAlgorithm a : {AllreduceAlgorithm::rabenseifner, AllreduceAlgorithm::ring}) {
    if (!commutative && (a == AllreduceAlgorithm::rabenseifner || a == AllreduceAlgorithm::ring)) continue;
    const double t = estimate_allreduce(a, n, p, c, which);
    if (t < best_seconds) {
      best = a;
      best_seconds = t;
    }
  }
  return best;
}

std::string_view reduce_name(ReduceAlgorithm algorithm) {
  switch (algorithm) {
    case ReduceAlgorithm::binomial: return "binomial";
    case ReduceAlgorithm::rabenseifner: return "rabenseifner";
  }
  return "?";
}

double estimate_reduce(ReduceAlgorithm algorithm, std::size_t n, int p, const Costs& c, int which) {
  if (p <= 1 || n == 0) return 0;
  const double bytes = static_cast<double>(n), q = p;
  auto at = [&](const Table& t, std::size_t size) { return step_cost(t, size, n, which); };
  const int q2 = floor_power_of_two(p);
  double t = 0, messages = 0, moved = 0;
  switch (algorithm) {
    case ReduceAlgorithm::binomial:
      t = stages(p) * (c.s1 + bytes * (at(c.m1, n) + at(c.reduce, n)));
      messages = q - 1;
      moved = (q - 1) * bytes;
      break;
    case ReduceAlgorithm::rabenseifner: {
      const double rem = p - q2;
      t = rem > 0 ? c.s1 + bytes * (at(c.m1, n) + at(c.reduce, n)) : 0;
      for (std::size_t part = n / 2, k = 1; k <= static_cast<std::size_t>(stages(q2)); ++k, part /= 2) {
        const double b = static_cast<double>(part);
        t += c.s2 + b * (at(c.m2, part) + at(c.reduce, part)) + c.s1 + b * at(c.m1, part);
      }
      // fold: rem messages of n; halving: q2 log2 q2 messages, (q2 - 1) n
      // bytes; gather: q2 - 1 messages, (q2 - 1)/q2 n bytes.
      const double qq = q2;
      messages = rem + qq * stages(q2) + (qq - 1);
      moved = rem * bytes + (qq - 1) * bytes + (qq - 1) / qq * bytes;
      break;
    }
  }
  if (which != 4) return t;
  // Either way about (p - 1) n bytes are reduced in all.
  const double bound = crowded(t, messages, moved, n / static_cast<std::size_t>(p), p, c);
  return bound + crowded_local((q - 1) * bytes * c.reduce.at(n), p, c);
}

ReduceAlgorithm choose_reduce(std::size_t n, int p, bool commutative, const Costs& c, int which) {
  // Over shared memory Rabenseifner's is estimated but not chosen: its
  // exchanges ran at half the speed the figures give (both partners copy
  // through one memory), 1.2-2.1x slower than the tree from 256 KiB with 3
  // to 8 processes on 2 cores, ahead only at p = 2 from 1 MiB (6-14%).  On
  // a network (the emulated cluster, p = 4 and 8) it was 1.2-1.6x faster
  // from 64 KiB, as the model says (npb/README.md).
  if (!commutative || !c.duplex) return ReduceAlgorithm::binomial;
  return estimate_reduce(ReduceAlgorithm::rabenseifner, n, p, c, which) <
                 estimate_reduce(ReduceAlgorithm::binomial, n, p, c, which)
             ? ReduceAlgorithm::rabenseifner
             : ReduceAlgorithm::binomial;
}

CommModel for_members(const int* world_ranks, int count) {
  core::Runtime& rt = core::runtime();
  request::Engine::PeerLink worst{"self", 0, 0};
  bool any = false;
  for (int i = 0; i < count; ++i) {
    if (world_ranks[i] == rt.world_rank) continue;
    request::Engine::PeerLink link = rt.engine->peer_link(world_ranks[i]);
    if (!any || link.latency_us > worst.latency_us) worst = link;
    any = true;
  }
  CommModel m;
  std::string_view name = worst.transport;
  m.level = name == "shm" || name == "self" ? model::Level::shm : name == "impi" ? model::Level::wan : model::Level::net;
  m.measured = costs(m.level, worst.latency_us, worst.bandwidth_bytes_per_s);
  m.declared = declared_costs(worst.latency_us, worst.bandwidth_bytes_per_s);
  // Model 4: the cores of the host when the whole job (this cluster's) runs
  // on it; every member computes the same (its processor name could not
  // tell two network-namespace hosts apart, and their core counts may
  // differ: the choice must not).
  m.measured.cores = m.level == model::Level::wan ? 0 : static_cast<int>(request::job_host_cores());
  m.measured.copies = m.level == model::Level::shm ? 1 : 2;
  m.measured.copy = m.declared.copy = local_copy_costs();
  m.which = which_model();
  return m;
}

const CommModel& of(const core::Comm& comm) {
  if (!comm.coll_state) {
    std::vector<int> world(static_cast<std::size_t>(comm.size));
    for (int i = 0; i < comm.size; ++i) world[static_cast<std::size_t>(i)] = comm.group->world_rank(i);
    auto m = std::make_shared<CommModel>(for_members(world.data(), comm.size));
    if (log().should_log(spdlog::level::debug))
      log().debug("coll: communicator {} ({} processes) is at level {}, model {}: {}", comm.handle, comm.size,
                  level_name(m->level), m->which, m->which == 1 ? m->declared.source : m->measured.source);
    comm.coll_state = std::move(m);
  }
  return *static_cast<const CommModel*>(comm.coll_state.get());
}

Choice choose(std::size_t n, int p, const CommModel& m) {
  return m.bcast_cache.get({n, p}, n ^ (n >> 7) ^ (n >> 15) ^ static_cast<std::size_t>(p),
                           [&] { return choose(n, p, m.chosen_costs(), m.chosen_which()); });
}

AllgatherAlgorithm choose_allgather(std::size_t block, const core::Comm& comm) {
  const CommModel& m = of(comm);
  return m.allgather_cache.get(block, block ^ (block >> 7),
                               [&] { return choose_allgather(block, comm.size, m.chosen_costs(), m.chosen_which()); });
}

AllreduceAlgorithm choose_allreduce(std::size_t n, bool commutative, const core::Comm& comm) {
  const CommModel& m = of(comm);
  return m.allreduce_cache.get({n, commutative}, n ^ (n >> 7), [&] {
    return choose_allreduce(n, comm.size, commutative, m.chosen_costs(), m.chosen_which());
  });
}

ReduceAlgorithm choose_reduce(std::size_t n, bool commutative, const core::Comm& comm) {
  if (!commutative) return ReduceAlgorithm::binomial;
  const CommModel& m = of(comm);
  return m.reduce_cache.get(n, n ^ (n >> 7),
                            [&] { return choose_reduce(n, comm.size, true, m.chosen_costs(), m.chosen_which()); });
}

Choice choose_bcast(std::size_t n, const core::Comm& comm) { return choose(n, comm.size, of(comm)); }

int choose_hybrid_d(std::size_t n, const core::Comm& comm) { return choose(n, comm.size, of(comm)).d; }

}  // namespace gridmpi::coll::model
