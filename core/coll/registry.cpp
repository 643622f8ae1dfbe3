// The registry: every algorithm of every collective, by name, with the test
// that says when it is correct.  The order of a table is the order in which
// names are listed to users; the default choice is in select.cpp.
#include <array>
#include <string>

#include "core/coll/algorithm.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

namespace {

bool commutative_op(const ReduceArgs& a, const core::Comm&) { return is_commutative(a.op); }
bool commutative_op_rs(const ReduceScatterArgs& a, const core::Comm&) {
  return is_commutative(a.op);
}
bool power_of_two_comm(const GatherArgs&, const core::Comm& c) { return is_power_of_two(c.size); }
bool power_of_two_comm_bcast(const BcastArgs&, const core::Comm& c) {
  return is_power_of_two(c.size);
}

const Algorithm<BarrierArgs> barrier_table[] = {
    {"dissemination", barrier_dissemination},
    {"linear", barrier_linear},
};
const Algorithm<BcastArgs> bcast_table[] = {
    {"binomial", bcast_binomial},
    {"hybrid", bcast_hybrid},
    {"linear", bcast_linear},
    {"scatter_recursive_doubling_allgather", bcast_scatter_recursive_doubling_allgather,
     power_of_two_comm_bcast},
    {"scatter_ring_allgather", bcast_scatter_ring_allgather},
};
const Algorithm<GatherArgs> gather_table[] = {
    {"binomial", gather_binomial},
    {"linear", gather_linear},
};
const Algorithm<GathervArgs> gatherv_table[] = {
    {"linear", gatherv_linear},
};
const Algorithm<GatherArgs> scatter_table[] = {
    {"binomial", scatter_binomial},
    {"linear", scatter_linear},
};
const Algorithm<ScattervArgs> scatterv_table[] = {
    {"linear", scatterv_linear},
};
const Algorithm<GatherArgs> allgather_table[] = {
    {"bruck", allgather_bruck},
    {"linear", allgather_linear},
    {"recursive_doubling", allgather_recursive_doubling, power_of_two_comm},
    {"ring", allgather_ring},
};
const Algorithm<GathervArgs> allgatherv_table[] = {
    {"linear", allgatherv_linear},
    {"ring", allgatherv_ring},
};
const Algorithm<GatherArgs> alltoall_table[] = {
    {"linear", alltoall_linear},
    {"pairwise", alltoall_pairwise},
};
const Algorithm<AlltoallvArgs> alltoallv_table[] = {
    {"linear", alltoallv_linear},
};
const Algorithm<AlltoallwArgs> alltoallw_table[] = {
    {"linear", alltoallw_linear},
};
const Algorithm<ReduceArgs> reduce_table[] = {
    {"binomial", reduce_binomial},
    {"linear", reduce_linear},
    {"rabenseifner", reduce_rabenseifner, commutative_op},
};
const Algorithm<ReduceArgs> allreduce_table[] = {
    {"rabenseifner", allreduce_rabenseifner, commutative_op},
    {"recursive_doubling", allreduce_recursive_doubling},
    {"reduce_bcast", allreduce_reduce_bcast},
    {"ring", allreduce_ring, commutative_op},
};
const Algorithm<ReduceScatterArgs> reduce_scatter_table[] = {
    {"recursive_halving", reduce_scatter_recursive_halving, commutative_op_rs},
    {"reduce_scatterv", reduce_scatter_reduce_scatterv},
};
const Algorithm<ReduceArgs> reduce_scatter_block_table[] = {
    {"recursive_halving", reduce_scatter_block_recursive_halving, commutative_op},
    {"reduce_scatter", reduce_scatter_block_reduce_scatter},
};
const Algorithm<ReduceArgs> scan_table[] = {
    {"linear", scan_linear},
    {"recursive_doubling", scan_recursive_doubling},
};
const Algorithm<ReduceArgs> exscan_table[] = {
    {"linear", exscan_linear},
    {"recursive_doubling", exscan_recursive_doubling},
};

template <Kind K> struct Table;
#define GRIDMPI_COLL_TABLE(kind)                                          \
  template <> struct Table<Kind::kind> {                                   \
    static std::span<const Algorithm<Args<Kind::kind>>> get() { return kind##_table; } \
  };
GRIDMPI_COLL_TABLE(barrier)
GRIDMPI_COLL_TABLE(bcast)
GRIDMPI_COLL_TABLE(gather)
GRIDMPI_COLL_TABLE(gatherv)
GRIDMPI_COLL_TABLE(scatter)
GRIDMPI_COLL_TABLE(scatterv)
GRIDMPI_COLL_TABLE(allgather)
GRIDMPI_COLL_TABLE(allgatherv)
GRIDMPI_COLL_TABLE(alltoall)
GRIDMPI_COLL_TABLE(alltoallv)
GRIDMPI_COLL_TABLE(alltoallw)
GRIDMPI_COLL_TABLE(reduce)
GRIDMPI_COLL_TABLE(allreduce)
GRIDMPI_COLL_TABLE(reduce_scatter)
GRIDMPI_COLL_TABLE(reduce_scatter_block)
GRIDMPI_COLL_TABLE(scan)
GRIDMPI_COLL_TABLE(exscan)
#undef GRIDMPI_COLL_TABLE

constexpr std::array<std::string_view, kind_count> kind_names = {
    "barrier",   "bcast",     "gather",    "gatherv",   "scatter",        "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw",      "reduce",
    "allreduce", "reduce_scatter", "reduce_scatter_block", "scan",       "exscan",
};

}  // namespace

std::string_view kind_name(Kind kind) { return kind_names[static_cast<int>(kind)]; }

template <Kind K>
std::span<const Algorithm<Args<K>>> algorithms() {
  return Table<K>::get();
}

template <Kind K>
const Algorithm<Args<K>>* find_algorithm(std::string_view name) {
  for (const auto& a : algorithms<K>()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

template <Kind K>
std::string algorithm_names() {
  std::string names;
  for (const auto& a : algorithms<K>()) {
    if (!names.empty()) names += ", ";
    names += a.name;
  }
  return names;
}

#define GRIDMPI_COLL_INSTANTIATE(kind)                                                  \
  template std::span<const Algorithm<Args<Kind::kind>>> algorithms<Kind::kind>();       \
  template const Algorithm<Args<Kind::kind>>* find_algorithm<Kind::kind>(std::string_view); \
  template std::string algorithm_names<Kind::kind>();
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

}  // namespace gridmpi::coll
