// The cost model of the broadcast family (ring and hybrid d) after the
// dynamic-multicast paper (Yamada, Fukuma, Mori): its three models, the
// parameters of each level of the machine, and the choice they make.
//
//   model 1  the paper's Table 2 with catalogue figures: the latency and
//            bandwidth the transport declares (p2p Capabilities);
//   model 2  Table 2 with measured one-way and exchange latencies S1, S2 and
//            per-byte costs M1, M2 taken at the message's size;
//   model 3  Table 3: M, M', M'' at n, n/2 and n/4 (the pieces the
//            algorithm's stages move);
//   model 4  ours, not the paper's (its model 4 multiplied M by 1.3 and S
//            by 2 by hand): model 3, and no less than the algorithm's total
//            work (every message's S1 and bytes x M1 x copies) divided by
//            the host's cores when the communicator's processes outnumber
//            them: the paper has one process per node, a crowded host
//            runs the stages' transfers a few at a time; and on a network
//            (levels net, wan) a ring step's bytes counted once, not twice:
//            its send and receive move at once over two links.  The
//            default, on the declared figures where a level was never
//            calibrated.
//
// A level's measurements come from the site file section [coll.calibration.<level>]
// that gridmpi-calibrate writes (core/tools/gridmpi_calibrate.cpp); a level
// never calibrated uses model 1.  Every rank of a communicator computes the
// same choice: the inputs are the parameters (the same files and
// environment everywhere), the communicator's size and its level (the
// slowest transport between its members, a symmetric relation), and the
// arithmetic is compiled without contraction (as wan_model.cpp).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/group.hpp"

namespace gridmpi::coll::model {

// Inside one host (shared memory), the cluster network (TCP, a vendor MPI),
// between clusters (the IMPI transport).
enum class Level { shm, net, wan };
inline constexpr int level_count = 3;
std::string_view level_name(Level level);

// One level's costs.  Per-byte costs are a table over message sizes
// (seconds per byte at `bytes`, increasing sizes), read between the points
// on a log scale of sizes and held flat outside.
struct Table {
  std::vector<std::pair<std::size_t, double>> points;
  double at(std::size_t bytes) const;
};
struct Costs {
  double s1 = 0;  // one-way latency of a zero-byte message (half a ping-pong), seconds
  double s2 = 0;  // zero-byte exchange (MPI_Sendrecv after a barrier), seconds
  Table m1;       // one-way seconds per byte
  Table m2;       // exchange seconds per byte (each side sends and receives one)
  bool calibrated = false;
  std::string source;  // where the figures come from, for messages
  // Model 4's host: when the whole job (cluster) runs on one host, its cores
  // (mpirun's count, request::job_host_cores); 0 otherwise.  `copies`: processors busy per
  // byte moved (1 for shared memory, where the receiver copies; 2 for TCP,
  // where both ends copy).
  int cores = 0;
  double copies = 1;
  // Model 4: a ring step sends to one neighbour while it receives from the
  // other, over separate links at once (a network's full-duplex
  // interfaces: levels net and wan); over shared memory both copies share
  // one memory.
  bool duplex = false;
  // A local memory copy's seconds per byte by size (Bruck's rotation): the
  // shm level's one-way costs, whatever this level (empty: m1).
  Table copy;
  // MPI_SUM of doubles, seconds per byte by size (gridmpi-calibrate's
  // `reduce`; default_reduce_per_byte where never measured).
  Table reduce;
};
inline constexpr double default_reduce_per_byte = 0.5e-9;
// The shm level's M1, calibrated or declared: what a local copy costs.
Table local_copy_costs();

// "1k:2.5e-10 64k:1.1e-10 ..." <-> Table.  parse throws MpiError(MPI_ERR_ARG)
// naming `what` for a malformed text.
Table parse_table(std::string_view text, std::string_view what);
std::string format_table(const Table& table);

// The measured costs of a level from coll.calibration.<level>.*, or the declared
// ones (latency_us, bandwidth) of the transport when never calibrated.
Costs costs(Level level, double declared_latency_us, double declared_bandwidth);
// Model 1's figures: S1 = S2 = the latency, M1 = M2 = 1 / bandwidth.
Costs declared_costs(double latency_us, double bandwidth);

// The paper's formulas.  `which` is 1, 2, 3 or 4 (model 1 is formula 2 on
// the declared costs: callers pass those).  Stages of a group of q members are
// ceil(log2 q); a smaller last group and non-power-of-two groups as in
// delivery.cpp.
double estimate_ring(std::size_t n, int p, const Costs& c, int which);
double estimate_hybrid(std::size_t n, int p, int d, const Costs& c, int which);

// The candidates for d: every power of two below p, every divisor of p, p.
std::vector<int> hybrid_candidates(int p);

struct Choice {
  bool ring = false;
  int d = 1;          // the cheapest hybrid's d (the choice when !ring)
  double seconds = 0; // the estimate of the choice
};
// The cheapest of ring and hybrid d for n bytes over p processes.
Choice choose(std::size_t n, int p, const Costs& c, int which);

// ---- Allgather by the same costs -------------------------------------------
// The algorithms the model weighs for MPI_Allgather (select.cpp's names);
// linear is left to GRIDMPI_ALLGATHER_ALGORITHM (every rank sends to every
// other at once: no latency model of ours describes its contention).
enum class AllgatherAlgorithm : std::uint8_t { recursive_doubling, bruck, ring };
std::string_view allgather_name(AllgatherAlgorithm algorithm);
// The estimate for blocks of `block` bytes from each of p processes:
//   recursive doubling  sum over k < log2 p of S2 + 2^k b M2(2^k b)
//                       (p a power of two; else +infinity)
//   bruck               sum over k < ceil(log2 p) of S2 + m_k b M2(m_k b),
//                       m_k = min(2^k, p - 2^k), and the local rotation of
//                       the p blocks and the copies of one's own, (p + 1) b
//                       at the local copy's cost (Costs::copy): on loopback
//                       TCP it made Bruck 1.6x slower than the ring at p = 3
//                       and 256 KiB, which moves as many bytes
//   ring                (p - 1) (S2 + b M2(b)): a step sends to one neighbour
//                       and receives from the other, as the exchange S2/M2
//                       measure
// Models 1 and 2 take M at the whole result (p b), 3 and 4 at each step's
// message; model 4 bounds the estimate by the work over the host's cores
// (as the broadcast family's).
double estimate_allgather(AllgatherAlgorithm algorithm, std::size_t block, int p, const Costs& c, int which);
AllgatherAlgorithm choose_allgather(std::size_t block, int p, const Costs& c, int which);

// ---- Allreduce by the same costs -------------------------------------------
// Its algorithms (select.cpp's names), n the vector's bytes, G the
// reduction's seconds per byte (Costs::reduce), q = 2^floor(log2 p), and
// for p not a power of two F = 2 (S1 + n M1(n)) + n G (the fold of the
// first 2 (p - q) ranks and the hand-back):
//   recursive doubling  F + log2 q (S2 + n M2(n) + n G(n))
//   rabenseifner        F + the sum over k = 1 .. log2 q of
//                       2 S2 + 2 n/2^k M2(n/2^k) + n/2^k G(n/2^k)
//                       (recursive halving, then doubling back)
//   ring                2 (p - 1) (S2 + n/p M2(n/p)) + (p - 1) n/p G(n/p)
//   reduce_bcast        ceil(log2 p) (S1 + n M1(n) + n G(n)) (a binomial
//                       reduce) + MPI_Bcast's estimate (choose above)
// Rabenseifner and the ring only for commutative operations.  Models 1
// and 2 take every per-byte figure at n; model 4 bounds by the work over
// the host's cores (messages, bytes at n/p, and every reduction).
enum class AllreduceAlgorithm : std::uint8_t { recursive_doubling, rabenseifner, ring, reduce_bcast };
std::string_view allreduce_name(AllreduceAlgorithm algorithm);
double estimate_allreduce(AllreduceAlgorithm algorithm, std::size_t n, int p, const Costs& c, int which);
AllreduceAlgorithm choose_allreduce(std::size_t n, int p, bool commutative, const Costs& c, int which);

// ---- Reduce by the same costs ----------------------------------------------
// Its algorithms for a commutative operation (select.cpp's names; a
// non-commutative one keeps the binomial tree, rooted at 0), n the vector's
// bytes, q = 2^floor(log2 p):
//   binomial      ceil(log2 p) (S1 + n M1(n) + n G(n))
//   rabenseifner  F + the sum over k = 1 .. log2 q of S2 + n/2^k M2(n/2^k) +
//                 n/2^k G(n/2^k) (the reduce-scatter by recursive halving)
//                 + S1 + n/2^k M1(n/2^k) (the binomial gather to the root),
//                 F = S1 + n M1(n) + n G(n) for p not a power of two (the
//                 fold; a root folded out adds one more S1 + n M1(n), not
//                 counted: every root gets the same choice)
// linear stays the crowded host's rule; Rabenseifner's is chosen on a
// network only (Costs::duplex: not over shared memory, where it ran slower
// than its estimate; model.cpp).  Models 1 and 2 take every per-byte figure
// at n; model 4 bounds by the work over the host's cores.
enum class ReduceAlgorithm : std::uint8_t { binomial, rabenseifner };
std::string_view reduce_name(ReduceAlgorithm algorithm);
double estimate_reduce(ReduceAlgorithm algorithm, std::size_t n, int p, const Costs& c, int which);
ReduceAlgorithm choose_reduce(std::size_t n, int p, bool commutative, const Costs& c, int which);

// ---- what the collectives call --------------------------------------------
// The last choices of one collective by their key (message size, and what
// else the choice depends on), N slots picked by a hash of it: a choice
// costs a few table look-ups per candidate, half a microsecond, a tenth of a
// small TCP broadcast.
template <class Key, class Value, std::size_t N>
class ChoiceCache {
 public:
  template <class Compute>
  Value get(const Key& key, std::size_t hash, Compute&& compute) const {
    Slot& slot = slots_[hash % N];
    if (slot.valid && slot.key == key) return slot.value;
    slot.value = compute();
    slot.key = key;
    slot.valid = true;
    return slot.value;
  }

 private:
  struct Slot {
    Key key{};
    Value value{};
    bool valid = false;
  };
  mutable std::array<Slot, N> slots_{};
};

// The communicator's level and costs (computed once per communicator).
struct CommModel {
  Level level = Level::shm;
  Costs measured;  // calibrated figures, or the declared ones
  Costs declared;  // model 1's catalogue figures
  int which = 4;   // coll.model, resolved (auto = 4); 0 = "rules"
  // The figures the choices use: model 1's catalogue or the measured ones.
  int chosen_which() const { return which == 0 ? 1 : which; }
  const Costs& chosen_costs() const { return chosen_which() == 1 ? declared : measured; }
  ChoiceCache<std::pair<std::size_t, int>, Choice, 8> bcast_cache;  // (bytes, processes)
  ChoiceCache<std::size_t, AllgatherAlgorithm, 4> allgather_cache;
  ChoiceCache<std::pair<std::size_t, bool>, AllreduceAlgorithm, 4> allreduce_cache;  // (bytes, commutative)
  ChoiceCache<std::size_t, ReduceAlgorithm, 4> reduce_cache;  // commutative operations only
};
const CommModel& of(const core::Comm& comm);
// The same for an explicit list of world ranks (the dynamic multicast).
CommModel for_members(const int* world_ranks, int count);

Choice choose(std::size_t n, int p, const CommModel& m);
// coll.model = rules: MPI_Bcast keeps the fixed thresholds of select.cpp.
bool rules_only();
// MPI_Allgather's automatic choice for blocks of `block` bytes on comm.
AllgatherAlgorithm choose_allgather(std::size_t block, const core::Comm& comm);
// MPI_Allreduce's automatic choice for n bytes on comm.
AllreduceAlgorithm choose_allreduce(std::size_t n, bool commutative, const core::Comm& comm);
// MPI_Reduce's automatic choice for n bytes on comm.
ReduceAlgorithm choose_reduce(std::size_t n, bool commutative, const core::Comm& comm);
// MPI_Bcast's automatic choice for n bytes on comm.
Choice choose_bcast(std::size_t n, const core::Comm& comm);
// The d alone (the algorithm "hybrid" with coll.bcast_hybrid_d = 0).
int choose_hybrid_d(std::size_t n, const core::Comm& comm);

}  // namespace gridmpi::coll::model
