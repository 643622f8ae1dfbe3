// Choosing the algorithm of a collective call, and the entry points of
// coll.hpp.
//
// The default choice is data: for each collective an ordered list of rules
// (communicator size at most N, message at most B bytes -> algorithm); the
// first rule whose limits hold and whose algorithm is correct for the call
// (see Algorithm::usable) wins.  The message size is measured on what every
// rank agrees on (see message_bytes), so every rank picks the same algorithm.
// GRIDMPI_<COLL>_ALGORITHM=<name> forces an algorithm; when the forced one is
// not correct for a call (e.g. ring allreduce with a non-commutative op) the
// default choice is used instead.
#include <array>
#include <climits>
#include <iterator>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "conf/log.hpp"
#include "conf/registry.hpp"
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/impi.hpp"
#include "core/coll/model.hpp"
#include "core/coll/util.hpp"
#include "core/coll/wan.hpp"
#include "base/error.hpp"
#include "request/progress_mode.hpp"

namespace gridmpi::coll {

namespace {

using conf::Level;

// One parameter per collective, a choice among "auto" and the registered
// names (tests/unit/test_coll_registry.cpp checks that the lists match the
// registry), so that gridmpi-info and the configuration loader reject a
// misspelt name.
#define GRIDMPI_COLL_PARAM(kind, upper, ...)                                               \
  const conf::ChoiceParam kind##_algorithm{                                                \
      "coll." #kind "_algorithm", "auto", {"auto", __VA_ARGS__},                           \
      "force the " #kind " algorithm (auto = choose by communicator and message size)",    \
      Level::tuner, {"GRIDMPI_" upper "_ALGORITHM"}};
GRIDMPI_COLL_PARAM(barrier, "BARRIER", "dissemination", "linear")
GRIDMPI_COLL_PARAM(bcast, "BCAST", "binomial", "hybrid", "linear", "scatter_recursive_doubling_allgather",
                   "scatter_ring_allgather")
GRIDMPI_COLL_PARAM(gather, "GATHER", "binomial", "linear")
GRIDMPI_COLL_PARAM(gatherv, "GATHERV", "linear")
GRIDMPI_COLL_PARAM(scatter, "SCATTER", "binomial", "linear")
GRIDMPI_COLL_PARAM(scatterv, "SCATTERV", "linear")
GRIDMPI_COLL_PARAM(allgather, "ALLGATHER", "bruck", "linear", "recursive_doubling", "ring")
GRIDMPI_COLL_PARAM(allgatherv, "ALLGATHERV", "linear", "ring")
GRIDMPI_COLL_PARAM(alltoall, "ALLTOALL", "linear", "pairwise")
GRIDMPI_COLL_PARAM(alltoallv, "ALLTOALLV", "linear")
GRIDMPI_COLL_PARAM(alltoallw, "ALLTOALLW", "linear")
GRIDMPI_COLL_PARAM(reduce, "REDUCE", "binomial", "linear", "rabenseifner")
GRIDMPI_COLL_PARAM(allreduce, "ALLREDUCE", "rabenseifner", "recursive_doubling", "reduce_bcast",
                   "ring")
GRIDMPI_COLL_PARAM(reduce_scatter, "REDUCE_SCATTER", "recursive_halving", "reduce_scatterv")
GRIDMPI_COLL_PARAM(reduce_scatter_block, "REDUCE_SCATTER_BLOCK", "recursive_halving",
                   "reduce_scatter")
GRIDMPI_COLL_PARAM(scan, "SCAN", "linear", "recursive_doubling")
GRIDMPI_COLL_PARAM(exscan, "EXSCAN", "linear", "recursive_doubling")
#undef GRIDMPI_COLL_PARAM

const conf::ChoiceParam crowded_param{
    "coll.crowded", "auto", {"auto", "on", "off"},
    "choose the collectives' algorithms for a job crowded onto one host, more than two processes per core "
    "(linear ones up to 64 KiB, which need fewer turns of the scheduler); auto = when mpirun says every "
    "process of the job is on its host and they are so many; give every process the same value",
    Level::tuner};

// Read once, like the forced algorithms (a bad value throws on every call).
bool crowded() {
  static const bool value = [] {
    std::string text;
    try {
      text = crowded_param.get();
    } catch (const conf::ConfigError& e) {
      throw MpiError(MPI_ERR_ARG, e.what());
    }
    return text == "on" || (text == "auto" && request::job_crowded());
  }();
  return value;
}

const conf::ChoiceParam& algorithm_param(Kind kind) {
  switch (kind) {
    case Kind::barrier: return barrier_algorithm;
    case Kind::bcast: return bcast_algorithm;
    case Kind::gather: return gather_algorithm;
    case Kind::gatherv: return gatherv_algorithm;
    case Kind::scatter: return scatter_algorithm;
    case Kind::scatterv: return scatterv_algorithm;
    case Kind::allgather: return allgather_algorithm;
    case Kind::allgatherv: return allgatherv_algorithm;
    case Kind::alltoall: return alltoall_algorithm;
    case Kind::alltoallv: return alltoallv_algorithm;
    case Kind::alltoallw: return alltoallw_algorithm;
    case Kind::reduce: return reduce_algorithm;
    case Kind::allreduce: return allreduce_algorithm;
    case Kind::reduce_scatter: return reduce_scatter_algorithm;
    case Kind::reduce_scatter_block: return reduce_scatter_block_algorithm;
    case Kind::scan: return scan_algorithm;
    case Kind::exscan: return exscan_algorithm;
  }
  throw MpiError(MPI_ERR_INTERN, "unknown collective kind");
}

// ---- the default table ------------------------------------------------------
// Where a rule holds: over any link, only among the processes of one host
// (the model's level shm), or only off it.
enum class Where : std::uint8_t { any, shm, off_shm };
struct Rule {
  int max_comm_size;
  std::size_t max_bytes;
  std::string_view algorithm;
  std::size_t min_bytes = 0;
  Where where = Where::any;
};
constexpr int any_size = INT_MAX;
constexpr std::size_t any_bytes = SIZE_MAX;

// Thresholds follow the usual latency/bandwidth crossovers on TCP (a few
// KiB between log-latency and bandwidth-optimal algorithms); they are
// starting points for the benchmarks to refine, not measurements.
template <Kind K> struct Defaults;
template <> struct Defaults<Kind::barrier> {
  static constexpr Rule rules[] = {{any_size, any_bytes, "dissemination"}};
};
template <> struct Defaults<Kind::bcast> {  // bytes: the whole message
  static constexpr Rule rules[] = {
      {3, any_bytes, "binomial"},
      {any_size, 12288, "binomial"},
      {any_size, 524288, "scatter_recursive_doubling_allgather"},  // power-of-two sizes
      {any_size, any_bytes, "scatter_ring_allgather"},
  };
};
template <> struct Defaults<Kind::gather> {  // bytes: one process's block
  static constexpr Rule rules[] = {{any_size, 2048, "binomial"}, {any_size, any_bytes, "linear"}};
};
template <> struct Defaults<Kind::gatherv> {
  static constexpr Rule rules[] = {{any_size, any_bytes, "linear"}};
};
template <> struct Defaults<Kind::scatter> {
  static constexpr Rule rules[] = {{any_size, 2048, "binomial"}, {any_size, any_bytes, "linear"}};
};
template <> struct Defaults<Kind::scatterv> {
  static constexpr Rule rules[] = {{any_size, any_bytes, "linear"}};
};
template <> struct Defaults<Kind::allgather> {  // bytes: one process's block
  static constexpr Rule rules[] = {
      {any_size, 1024, "recursive_doubling"},  // power-of-two sizes
      {any_size, 1024, "bruck"},
      {any_size, any_bytes, "ring"},
  };
};
template <> struct Defaults<Kind::allgatherv> {
  static constexpr Rule rules[] = {{any_size, any_bytes, "ring"}};
};
template <> struct Defaults<Kind::alltoall> {  // bytes: one block
  static constexpr Rule rules[] = {
      {8, any_bytes, "linear"},
      {any_size, 256, "linear"},
      {any_size, any_bytes, "pairwise"},
  };
};
template <> struct Defaults<Kind::alltoallv> {
  static constexpr Rule rules[] = {{any_size, any_bytes, "linear"}};
};
template <> struct Defaults<Kind::alltoallw> {
  static constexpr Rule rules[] = {{any_size, any_bytes, "linear"}};
};
template <> struct Defaults<Kind::reduce> {
  static constexpr Rule rules[] = {{any_size, any_bytes, "binomial"}};
};
template <> struct Defaults<Kind::allreduce> {
  static constexpr Rule rules[] = {
      {any_size, 2048, "recursive_doubling"},
      {any_size, any_bytes, "rabenseifner"},  // commutative ops
      {any_size, any_bytes, "recursive_doubling"},
  };
};
template <> struct Defaults<Kind::reduce_scatter> {  // bytes: the whole input
  static constexpr Rule rules[] = {
      {any_size, any_bytes, "recursive_halving"},  // commutative ops
      {any_size, any_bytes, "reduce_scatterv"},
  };
};
template <> struct Defaults<Kind::reduce_scatter_block> {
  static constexpr Rule rules[] = {
      {any_size, any_bytes, "recursive_halving"},  // commutative ops
      {any_size, any_bytes, "reduce_scatter"},
  };
};
template <> struct Defaults<Kind::scan> {
  static constexpr Rule rules[] = {{any_size, any_bytes, "recursive_doubling"}};
};
template <> struct Defaults<Kind::exscan> {
  static constexpr Rule rules[] = {{any_size, any_bytes, "recursive_doubling"}};
};

// Tried first when the job is crowded onto one host (coll.crowded): with
// several processes per core every step of a tree or a recursive doubling
// waits for its partner's turn on a core, while a linear algorithm's
// processes all contribute in their first turn and wait once.  8 ranks on 2
// cores, 8-byte Allreduce (npb/coll_bench, medians of 5 alternated runs):
// recursive doubling 19.9 us, binomial reduce + binomial bcast 26.1, linear
// reduce + linear bcast 12.4 (Open MPI 16.8); linear reduce + binomial bcast
// 17.9, binomial reduce + linear bcast 20.2.  2 KiB 23.8 -> 16.0, 64 KiB 225
// -> 184.  Barrier 16.0 -> 11.0 (Open MPI 14.1).  Bcast alone: the same
// either way (1.9 / 1.8).  With 4 ranks on 2 cores the linear ones were no
// better (5.1 / 5.8 us), hence "more than two per core".
template <Kind K> struct Crowded {
  static constexpr bool defined = false;
};
template <> struct Crowded<Kind::barrier> {
  static constexpr bool defined = true;
  static constexpr Rule rules[] = {{64, any_bytes, "linear"}};
};
// Bcast's only over shared memory (every receiver copies at once); over
// TCP the root pushes every copy itself, and the binomial tree the model
// picks was 1.4-2x faster at 1-8 KiB with 8 processes on 2 cores
// (npb/bcast-bench).
template <> struct Crowded<Kind::bcast> {
  static constexpr bool defined = true;
  static constexpr Rule rules[] = {{64, 65536, "linear", 0, Where::shm}};
};
// MPI_Reduce's since the tree stopped copying (e7fe091): only off shared
// memory and only up to 1 KiB.  8 processes on 2 cores, median of 5: over
// shared memory the tree 1.3-1.7 us against linear's 2.0-4.0 at 8-512 B
// (p = 6, 8), 42 against 60-76 at 32 KiB; over TCP at p = 8 linear 8.2-9.3
// against 9.6-10.7 up to 512 B, the tree ahead from 4 KiB (61 against 75-80
// at 32 KiB).  Allreduce's reduce + bcast keeps its linear reduce up to
// crowded_reduce_bcast_linear bytes (allreduce_reduce_bcast.cpp).
template <> struct Crowded<Kind::reduce> {
  static constexpr bool defined = true;
  static constexpr Rule rules[] = {{64, 1024, "linear", 0, Where::off_shm}};
};
// Allgather's over shared memory from 4 KiB blocks: every process sends its
// block to all at once and each receiver copies in its own turn, where a
// step of the others waits for its partner's turn on a core.  6 and 8
// processes on 2 cores (coll-choice-bench, median of 5): 4 KiB 16.4 / 31.1
// us against the model's 21.4 / 42.2, 32 KiB 69.6 against 108.0 (p = 6),
// 256 KiB 460 / 820 against 639 / 870; below 4 KiB and over TCP linear
// lost.  The model has no latency term for its contention.
template <> struct Crowded<Kind::allgather> {
  static constexpr bool defined = true;
  static constexpr Rule rules[] = {{64, any_bytes, "linear", 4096, Where::shm}};
};
template <> struct Crowded<Kind::allreduce> {  // reduce then bcast: the two rules below
  static constexpr bool defined = true;
  static constexpr Rule rules[] = {{64, 65536, "reduce_bcast"}};
};
// Inside that reduce + bcast (allreduce_reduce_bcast.cpp), on every level:
// the linear reduce up to 4 KiB, the linear bcast up to Bcast's 64 KiB.
constexpr Rule crowded_reduce_bcast_reduce{64, 4096, "linear"};
constexpr Rule crowded_reduce_bcast_bcast{64, 65536, "linear"};

// ---- message size, as every rank sees it ---------------------------------
std::size_t bytes_of(const BarrierArgs&, const core::Comm&) { return 0; }
std::size_t bytes_of(const BcastArgs& a, const core::Comm&) { return packed_size(a.count, a.type); }
std::size_t bytes_of(const GathervArgs&, const core::Comm&) { return 0; }
std::size_t bytes_of(const ScattervArgs&, const core::Comm&) { return 0; }
std::size_t bytes_of(const AlltoallvArgs&, const core::Comm&) { return 0; }
std::size_t bytes_of(const AlltoallwArgs&, const core::Comm&) { return 0; }
std::size_t bytes_of(const ReduceScatterArgs& a, const core::Comm& c) {
  std::size_t total = 0;
  for (int i = 0; i < c.size; ++i) total += packed_size(a.recvcounts[i], a.type);
  return total;
}

template <Kind K>
std::size_t message_bytes(const Args<K>& a, const core::Comm& c) {
  if constexpr (K == Kind::gather) {
    return c.rank == a.root ? packed_size(a.recvcount, a.recvtype)
                            : packed_size(a.sendcount, a.sendtype);
  } else if constexpr (K == Kind::scatter) {
    return c.rank == a.root ? packed_size(a.sendcount, a.sendtype)
                            : packed_size(a.recvcount, a.recvtype);
  } else if constexpr (K == Kind::allgather || K == Kind::alltoall) {
    return packed_size(a.recvcount, a.recvtype);
  } else if constexpr (K == Kind::reduce_scatter_block) {
    return packed_size(a.count, a.type) * static_cast<std::size_t>(c.size);
  } else if constexpr (std::is_same_v<Args<K>, ReduceArgs>) {
    return packed_size(a.count, a.type);
  } else {
    return bytes_of(a, c);
  }
}

template <Kind K>
bool usable(const Algorithm<Args<K>>& algorithm, const Args<K>& a, const core::Comm& c) {
  return algorithm.usable == nullptr || algorithm.usable(a, c);
}

// The first rule of Table whose limits hold and whose algorithm is correct
// for the call; nullptr when none.
// Whether a rule's limits hold for `bytes` on c (Where needs the
// communicator's level, computed once per communicator).
bool holds(const Rule& rule, std::size_t bytes, const core::Comm& c) {
  if (c.size > rule.max_comm_size || bytes > rule.max_bytes || bytes < rule.min_bytes) return false;
  if (rule.where == Where::any) return true;
  return (model::of(c).level == model::Level::shm) == (rule.where == Where::shm);
}

template <Kind K, class Table>
const Algorithm<Args<K>>* first_rule(const Args<K>& a, const core::Comm& c, std::size_t bytes) {
  // The rules' names resolved once (a name lookup per call cost a fifth of
  // an 8-byte Allreduce's own work).
  constexpr std::size_t n = std::size(Table::rules);
  static const std::array<const Algorithm<Args<K>>*, n> resolved = [] {
    std::array<const Algorithm<Args<K>>*, n> out{};
    for (std::size_t i = 0; i < n; ++i) out[i] = find_algorithm<K>(Table::rules[i].algorithm);
    return out;
  }();
  for (std::size_t i = 0; i < n; ++i) {
    if (!holds(Table::rules[i], bytes, c)) continue;
    const Algorithm<Args<K>>* algorithm = resolved[i];
    if (algorithm != nullptr && usable<K>(*algorithm, a, c)) return algorithm;
  }
  return nullptr;
}

// MPI_Bcast by the cost model (core/coll/model.hpp): ring, or hybrid d (d = 1
// is the binomial tree, run typed).
const Algorithm<BcastArgs>* bcast_by_model(const core::Comm& c, std::size_t bytes) {
  const model::CommModel& m = model::of(c);
  static const Algorithm<BcastArgs>* const ring = find_algorithm<Kind::bcast>("scatter_ring_allgather");
  static const Algorithm<BcastArgs>* const binomial = find_algorithm<Kind::bcast>("binomial");
  static const Algorithm<BcastArgs>* const hybrid = find_algorithm<Kind::bcast>("hybrid");
  const model::Choice choice = model::choose(bytes, c.size, m);
  return choice.ring ? ring : choice.d == 1 ? binomial : hybrid;
}

// MPI_Allgather by the cost model: recursive doubling, Bruck or ring.
const Algorithm<GatherArgs>* allgather_by_model(const core::Comm& c, std::size_t block) {
  using model::AllgatherAlgorithm;
  static const std::array<const Algorithm<GatherArgs>*, 3> by_model = {
      find_algorithm<Kind::allgather>(model::allgather_name(AllgatherAlgorithm::recursive_doubling)),
      find_algorithm<Kind::allgather>(model::allgather_name(AllgatherAlgorithm::bruck)),
      find_algorithm<Kind::allgather>(model::allgather_name(AllgatherAlgorithm::ring))};
  return by_model[static_cast<std::size_t>(model::choose_allgather(block, c))];
}

// MPI_Allreduce by the cost model.
const Algorithm<ReduceArgs>* allreduce_by_model(const ReduceArgs& a, const core::Comm& c, std::size_t bytes) {
  using model::AllreduceAlgorithm;
  static const std::array<const Algorithm<ReduceArgs>*, 4> by_model = {
      find_algorithm<Kind::allreduce>(model::allreduce_name(AllreduceAlgorithm::recursive_doubling)),
      find_algorithm<Kind::allreduce>(model::allreduce_name(AllreduceAlgorithm::rabenseifner)),
      find_algorithm<Kind::allreduce>(model::allreduce_name(AllreduceAlgorithm::ring)),
      find_algorithm<Kind::allreduce>(model::allreduce_name(AllreduceAlgorithm::reduce_bcast))};
  return by_model[static_cast<std::size_t>(model::choose_allreduce(bytes, is_commutative(a.op), c))];
}

// MPI_Reduce by the cost model: the binomial tree or Rabenseifner's
// (commutative operations).
const Algorithm<ReduceArgs>* reduce_by_model(const ReduceArgs& a, const core::Comm& c, std::size_t bytes) {
  using model::ReduceAlgorithm;
  static const std::array<const Algorithm<ReduceArgs>*, 2> by_model = {
      find_algorithm<Kind::reduce>(model::reduce_name(ReduceAlgorithm::binomial)),
      find_algorithm<Kind::reduce>(model::reduce_name(ReduceAlgorithm::rabenseifner))};
  return by_model[static_cast<std::size_t>(model::choose_reduce(bytes, is_commutative(a.op), c))];
}

template <Kind K>
const Algorithm<Args<K>>& default_choice(const Args<K>& a, const core::Comm& c) {
  std::size_t bytes = message_bytes<K>(a, c);
  // The crowded host's table first, then the cost model, then the rules.
  if constexpr (Crowded<K>::defined) {
    if (crowded())
      if (const Algorithm<Args<K>>* algorithm = first_rule<K, Crowded<K>>(a, c, bytes)) return *algorithm;
  }
  if constexpr (K == Kind::bcast || K == Kind::allgather || K == Kind::allreduce || K == Kind::reduce) {
    if (!model::rules_only()) {
      const Algorithm<Args<K>>* algorithm = nullptr;
      if constexpr (K == Kind::bcast) algorithm = bcast_by_model(c, bytes);
      if constexpr (K == Kind::allgather) algorithm = allgather_by_model(c, bytes);
      if constexpr (K == Kind::allreduce) algorithm = allreduce_by_model(a, c, bytes);
      if constexpr (K == Kind::reduce) algorithm = reduce_by_model(a, c, bytes);
      if (usable<K>(*algorithm, a, c)) return *algorithm;
    }
  }
  if (const Algorithm<Args<K>>* algorithm = first_rule<K, Defaults<K>>(a, c, bytes)) return *algorithm;
  // The tables end with an algorithm correct for every call; this is the
  // safety net should one be edited wrongly.
  for (const auto& algorithm : algorithms<K>()) {
    if (usable<K>(algorithm, a, c)) return algorithm;
  }
  throw MpiError(MPI_ERR_INTERN, std::string("no usable ") + std::string(kind_name(K)) +
                                     " algorithm for this call");
}

}  // namespace

bool crowded_linear_bcast(std::size_t bytes, const core::Comm& c) {
  return crowded() && holds(Crowded<Kind::bcast>::rules[0], bytes, c);
}

bool crowded_reduce_bcast_linear_reduce(std::size_t bytes, const core::Comm& c) {
  return crowded() && holds(crowded_reduce_bcast_reduce, bytes, c);
}

bool crowded_reduce_bcast_linear_bcast(std::size_t bytes, const core::Comm& c) {
  return crowded() && holds(crowded_reduce_bcast_bcast, bytes, c);
}

template <Kind K>
const Algorithm<Args<K>>* parse_forced(std::string_view text) {
  if (text.empty() || text == "auto") return nullptr;
  const Algorithm<Args<K>>* algorithm = find_algorithm<K>(text);
  if (algorithm == nullptr) {
    std::string upper(kind_name(K));
    for (char& ch : upper) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
    throw MpiError(MPI_ERR_ARG, "GRIDMPI_" + upper + "_ALGORITHM=" + std::string(text) +
                                    ": unknown " + std::string(kind_name(K)) +
                                    " algorithm; valid names: auto, " + algorithm_names<K>());
  }
  return algorithm;
}

template <Kind K>
const Algorithm<Args<K>>* forced_algorithm() {
  // Read once: Param::get() locks and parses.  A bad name throws here on
  // every call of this collective (the static stays uninitialised).
  static const Algorithm<Args<K>>* const forced = [] {
    std::string text;
    try {
      text = algorithm_param(K).get();
    } catch (const conf::ConfigError& e) {
      throw MpiError(MPI_ERR_ARG, e.what());
    }
    return parse_forced<K>(text);
  }();
  return forced;
}

template <Kind K>
const Algorithm<Args<K>>& select(const Args<K>& a, const core::Comm& c) {
  if (const Algorithm<Args<K>>* forced = forced_algorithm<K>()) {
    if (usable<K>(*forced, a, c)) return *forced;
    log().debug("{} algorithm {} does not apply to this call (communicator size {}); using the "
                "default choice",
                kind_name(K), forced->name, c.size);
  }
  return default_choice<K>(a, c);
}

#define GRIDMPI_COLL_INSTANTIATE(kind)                                                        \
  template const Algorithm<Args<Kind::kind>>* parse_forced<Kind::kind>(std::string_view);    \
  template const Algorithm<Args<Kind::kind>>* forced_algorithm<Kind::kind>();                \
  template const Algorithm<Args<Kind::kind>>& select<Kind::kind>(const Args<Kind::kind>&,    \
                                                                 const core::Comm&);
GRIDMPI_COLL_INSTANTIATE(barrier)
GRIDMPI_COLL_INSTANTIATE(bcast)
GRIDMPI_COLL_INSTANTIATE(gather)
GRIDMPI_COLL_INSTANTIATE(gatherv)
GRIDMPI_COLL_INSTANTIATE(scatter)
GRIDMPI_COLL_INSTANTIATE(scatterv)
GRIDMPI_COLL_INSTANTIATE(allgather)
GRIDMPI_COLL_INSTANTIATE(allgatherv)
GRIDMPI_COLL_INSTANTIATE(alltoall)
GRIDMPI_COLL_INSTANTIATE(alltoallv)
GRIDMPI_COLL_INSTANTIATE(alltoallw)
GRIDMPI_COLL_INSTANTIATE(reduce)
GRIDMPI_COLL_INSTANTIATE(allreduce)
GRIDMPI_COLL_INSTANTIATE(reduce_scatter)
GRIDMPI_COLL_INSTANTIATE(reduce_scatter_block)
GRIDMPI_COLL_INSTANTIATE(scan)
GRIDMPI_COLL_INSTANTIATE(exscan)
#undef GRIDMPI_COLL_INSTANTIATE

std::vector<std::string> algorithm_parameter_choices(Kind kind) {
  return algorithm_param(kind).info().choices;
}

// ---- entry points ----------------------------------------------------------
namespace {
// Communicators that span IMPI clients run the wide-area collectives
// (wan.hpp) when every cluster runs gridmpi and the cost model prefers
// them, else the IMPI collectives (impi.hpp), whatever
// GRIDMPI_<COLL>_ALGORITHM says: their messages between clients are fixed
// by the protocol.
template <Kind K>
void run(const Args<K>& a, core::Comm& c) {
  if (c.clients) {
    if (wan::run<K>(a, c)) return;
    if (log().should_log(spdlog::level::trace))
      log().trace("{} on communicator {}: IMPI algorithm over {} clients ({})", kind_name(K), c.handle,
                  c.clients->num_masters(), c.clients->num_masters() <= impi::max_linear() ? "linear" : "tree");
    return impi::run<K>(a, c);
  }
  const Algorithm<Args<K>>& algorithm = select<K>(a, c);
  if (log().should_log(spdlog::level::trace))
    log().trace("{} on communicator {} ({} processes, {} bytes): {}", kind_name(K), c.handle, c.size,
                message_bytes<K>(a, c), algorithm.name);
  algorithm.run(a, c);
}
}  // namespace

void barrier(core::Comm& comm) { run<Kind::barrier>(BarrierArgs{}, comm); }

void bcast(void* buffer, int count, MPI_Datatype type, int root, core::Comm& comm) {
  if (comm.size == 1 || packed_size(count, type) == 0) return;
  run<Kind::bcast>(BcastArgs{buffer, count, type, root}, comm);
}

void gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            int recvcount, MPI_Datatype recvtype, int root, core::Comm& comm) {
  GatherArgs a{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root};
  if (message_bytes<Kind::gather>(a, comm) == 0) return;
  run<Kind::gather>(a, comm);
}

void gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
             core::Comm& comm) {
  run<Kind::gatherv>(
      GathervArgs{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root},
      comm);
}

void scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, core::Comm& comm) {
  GatherArgs a{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root};
  if (message_bytes<Kind::scatter>(a, comm) == 0) return;
  run<Kind::scatter>(a, comm);
}

void scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
              MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
              int root, core::Comm& comm) {
  run<Kind::scatterv>(
      ScattervArgs{sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root},
      comm);
}

void allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, core::Comm& comm) {
  GatherArgs a{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0};
  if (message_bytes<Kind::allgather>(a, comm) == 0) return;
  run<Kind::allgather>(a, comm);
}

void allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                core::Comm& comm) {
  run<Kind::allgatherv>(
      GathervArgs{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, 0}, comm);
}

void alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, core::Comm& comm) {
  GatherArgs a{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0};
  if (message_bytes<Kind::alltoall>(a, comm) == 0) return;
  run<Kind::alltoall>(a, comm);
}

void alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
               const int rdispls[], MPI_Datatype recvtype, core::Comm& comm) {
  run<Kind::alltoallv>(AlltoallvArgs{sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                     rdispls, recvtype},
                       comm);
}

void alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
               const int rdispls[], const MPI_Datatype recvtypes[], core::Comm& comm) {
  run<Kind::alltoallw>(AlltoallwArgs{sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                     recvcounts, rdispls, recvtypes},
                       comm);
}

void reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            int root, core::Comm& comm) {
  if (count == 0) return;
  run<Kind::reduce>(ReduceArgs{sendbuf, recvbuf, count, type, op, root}, comm);
}

void allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               core::Comm& comm) {
  if (count == 0) return;
  run<Kind::allreduce>(ReduceArgs{sendbuf, recvbuf, count, type, op, 0}, comm);
}

void reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                    MPI_Datatype type, MPI_Op op, core::Comm& comm) {
  run<Kind::reduce_scatter>(ReduceScatterArgs{sendbuf, recvbuf, recvcounts, type, op}, comm);
}

void reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                          MPI_Op op, core::Comm& comm) {
  if (recvcount == 0) return;
  run<Kind::reduce_scatter_block>(ReduceArgs{sendbuf, recvbuf, recvcount, type, op, 0}, comm);
}

void scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
          core::Comm& comm) {
  if (count == 0) return;
  run<Kind::scan>(ReduceArgs{sendbuf, recvbuf, count, type, op, 0}, comm);
}

void exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            core::Comm& comm) {
  if (count == 0) return;
  run<Kind::exscan>(ReduceArgs{sendbuf, recvbuf, count, type, op, 0}, comm);
}

}  // namespace gridmpi::coll
