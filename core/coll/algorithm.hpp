// The algorithm interface of core/coll/: one argument struct per family of
// collectives, the registry entry of an algorithm, and every algorithm
// function (each defined in its own core/coll/<collective>_<algorithm>.cpp).
//
// To add an algorithm: write the file (opening with its restrictions and its
// alpha-beta cost), declare its function below, add one line to the table of
// its collective in registry.cpp, and, if it should ever be the default, a
// rule in select.cpp.  The test matrix (tests/mpi/coll.list) gets one entry
// per algorithm.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/group.hpp"

namespace gridmpi::coll {

enum class Kind {
  barrier, bcast, gather, gatherv, scatter, scatterv, allgather, allgatherv, alltoall,
  alltoallv, alltoallw, reduce, allreduce, reduce_scatter, reduce_scatter_block, scan, exscan,
};
inline constexpr int kind_count = 17;
// "bcast", "reduce_scatter_block", ...: the name used in parameters and messages.
std::string_view kind_name(Kind kind);

struct BarrierArgs {};
struct BcastArgs {
  void* buffer;
  int count;
  MPI_Datatype type;
  int root;
};
// Gather, Scatter, Allgather, Alltoall (root unused by the last two).
struct GatherArgs {
  const void* sendbuf;
  int sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  int recvcount;
  MPI_Datatype recvtype;
  int root;
};
// Gatherv and Allgatherv (root unused by the latter).
struct GathervArgs {
  const void* sendbuf;
  int sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int* recvcounts;
  const int* displs;
  MPI_Datatype recvtype;
  int root;
};
struct ScattervArgs {
  const void* sendbuf;
  const int* sendcounts;
  const int* displs;
  MPI_Datatype sendtype;
  void* recvbuf;
  int recvcount;
  MPI_Datatype recvtype;
  int root;
};
struct AlltoallvArgs {
  const void* sendbuf;
  const int* sendcounts;
  const int* sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int* recvcounts;
  const int* rdispls;
  MPI_Datatype recvtype;
};
// Displacements in bytes, one datatype per peer.
struct AlltoallwArgs {
  const void* sendbuf;
  const int* sendcounts;
  const int* sdispls;
  const MPI_Datatype* sendtypes;
  void* recvbuf;
  const int* recvcounts;
  const int* rdispls;
  const MPI_Datatype* recvtypes;
};
// Reduce, Allreduce, Scan, Exscan (root used by Reduce only), and
// Reduce_scatter_block (count = the per-process block).
struct ReduceArgs {
  const void* sendbuf;
  void* recvbuf;
  int count;
  MPI_Datatype type;
  MPI_Op op;
  int root;
};
struct ReduceScatterArgs {
  const void* sendbuf;
  void* recvbuf;
  const int* recvcounts;
  MPI_Datatype type;
  MPI_Op op;
};

template <Kind K> struct ArgsOf;
template <> struct ArgsOf<Kind::barrier> { using type = BarrierArgs; };
template <> struct ArgsOf<Kind::bcast> { using type = BcastArgs; };
template <> struct ArgsOf<Kind::gather> { using type = GatherArgs; };
template <> struct ArgsOf<Kind::gatherv> { using type = GathervArgs; };
template <> struct ArgsOf<Kind::scatter> { using type = GatherArgs; };
template <> struct ArgsOf<Kind::scatterv> { using type = ScattervArgs; };
template <> struct ArgsOf<Kind::allgather> { using type = GatherArgs; };
template <> struct ArgsOf<Kind::allgatherv> { using type = GathervArgs; };
template <> struct ArgsOf<Kind::alltoall> { using type = GatherArgs; };
template <> struct ArgsOf<Kind::alltoallv> { using type = AlltoallvArgs; };
template <> struct ArgsOf<Kind::alltoallw> { using type = AlltoallwArgs; };
template <> struct ArgsOf<Kind::reduce> { using type = ReduceArgs; };
template <> struct ArgsOf<Kind::allreduce> { using type = ReduceArgs; };
template <> struct ArgsOf<Kind::reduce_scatter> { using type = ReduceScatterArgs; };
template <> struct ArgsOf<Kind::reduce_scatter_block> { using type = ReduceArgs; };
template <> struct ArgsOf<Kind::scan> { using type = ReduceArgs; };
template <> struct ArgsOf<Kind::exscan> { using type = ReduceArgs; };
template <Kind K> using Args = typename ArgsOf<K>::type;

template <class A>
struct Algorithm {
  std::string_view name;
  void (*run)(const A& args, core::Comm& comm);
  // Whether the algorithm is correct for these arguments (e.g. it needs a
  // commutative op or a power-of-two communicator); null = always.  Must
  // give the same answer on every rank, so it may look only at what the
  // standard requires to be equal everywhere (op, communicator size, counts
  // of reductions), never at a rank's own datatypes.
  bool (*usable)(const A& args, const core::Comm& comm) = nullptr;
};

// Every algorithm of collective K, in registration order (registry.cpp).
template <Kind K> std::span<const Algorithm<Args<K>>> algorithms();
// The algorithm called `name`, or nullptr.
template <Kind K> const Algorithm<Args<K>>* find_algorithm(std::string_view name);
// "binomial, linear, ...": the valid names, for messages.
template <Kind K> std::string algorithm_names();
// The algorithm run for these arguments: the forced one when it is usable,
// else the first usable one of the default table (select.cpp).
template <Kind K> const Algorithm<Args<K>>& select(const Args<K>& args, const core::Comm& comm);
// The algorithm named by GRIDMPI_<COLL>_ALGORITHM, nullptr for "auto" (read
// once per process).  Throws MpiError(MPI_ERR_ARG) for an unknown name,
// listing the valid ones.
template <Kind K> const Algorithm<Args<K>>* forced_algorithm();
// Resolves a forced-algorithm setting (the text of the parameter): nullptr
// for "" or "auto", else the algorithm; throws like forced_algorithm().
template <Kind K> const Algorithm<Args<K>>* parse_forced(std::string_view text);
// Whether MPI_Bcast of `bytes` on c takes the crowded host's linear algorithm
// (coll.crowded, over shared memory; select.cpp); the dynamic multicast
// follows it.
bool crowded_linear_bcast(std::size_t bytes, const core::Comm& c);
// Whether Allreduce's reduce + bcast of `bytes` on c reduces, and then
// broadcasts, linearly (a crowded host, every level; select.cpp's
// crowded_reduce_bcast_* rules, allreduce_reduce_bcast.cpp).
bool crowded_reduce_bcast_linear_reduce(std::size_t bytes, const core::Comm& c);
bool crowded_reduce_bcast_linear_bcast(std::size_t bytes, const core::Comm& c);
// The values the coll.<kind>_algorithm parameter accepts ("auto" and the names).
std::vector<std::string> algorithm_parameter_choices(Kind kind);

// ---- the algorithms --------------------------------------------------------
void barrier_dissemination(const BarrierArgs&, core::Comm&);
void barrier_linear(const BarrierArgs&, core::Comm&);

void bcast_linear(const BcastArgs&, core::Comm&);
void bcast_binomial(const BcastArgs&, core::Comm&);
void bcast_scatter_ring_allgather(const BcastArgs&, core::Comm&);
void bcast_scatter_recursive_doubling_allgather(const BcastArgs&, core::Comm&);
void bcast_hybrid(const BcastArgs&, core::Comm&);

void gather_linear(const GatherArgs&, core::Comm&);
void gather_binomial(const GatherArgs&, core::Comm&);
void gatherv_linear(const GathervArgs&, core::Comm&);
void scatter_linear(const GatherArgs&, core::Comm&);
void scatter_binomial(const GatherArgs&, core::Comm&);
void scatterv_linear(const ScattervArgs&, core::Comm&);

void allgather_linear(const GatherArgs&, core::Comm&);
void allgather_ring(const GatherArgs&, core::Comm&);
void allgather_recursive_doubling(const GatherArgs&, core::Comm&);
void allgather_bruck(const GatherArgs&, core::Comm&);
void allgatherv_linear(const GathervArgs&, core::Comm&);
void allgatherv_ring(const GathervArgs&, core::Comm&);

void alltoall_linear(const GatherArgs&, core::Comm&);
void alltoall_pairwise(const GatherArgs&, core::Comm&);
void alltoallv_linear(const AlltoallvArgs&, core::Comm&);
void alltoallw_linear(const AlltoallwArgs&, core::Comm&);

void reduce_linear(const ReduceArgs&, core::Comm&);
void reduce_binomial(const ReduceArgs&, core::Comm&);
void reduce_rabenseifner(const ReduceArgs&, core::Comm&);  // commutative ops
void allreduce_reduce_bcast(const ReduceArgs&, core::Comm&);
void allreduce_recursive_doubling(const ReduceArgs&, core::Comm&);
void allreduce_ring(const ReduceArgs&, core::Comm&);
void allreduce_rabenseifner(const ReduceArgs&, core::Comm&);

void reduce_scatter_reduce_scatterv(const ReduceScatterArgs&, core::Comm&);
void reduce_scatter_recursive_halving(const ReduceScatterArgs&, core::Comm&);
void reduce_scatter_block_reduce_scatter(const ReduceArgs&, core::Comm&);
void reduce_scatter_block_recursive_halving(const ReduceArgs&, core::Comm&);

void scan_linear(const ReduceArgs&, core::Comm&);
void scan_recursive_doubling(const ReduceArgs&, core::Comm&);
void exscan_linear(const ReduceArgs&, core::Comm&);
void exscan_recursive_doubling(const ReduceArgs&, core::Comm&);

}  // namespace gridmpi::coll
