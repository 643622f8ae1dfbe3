// Broadcast hybrid d (Barnett et al.; the dynamic-multicast paper's family):
// binomial scatter of d pieces inside the root's group of d, a binomial tree
// of groups copying piece k to member k of every group, then a collect
// inside each group (core/coll/delivery.cpp, where the generalisation to a
// smaller last group and to groups whose size is not a power of two is
// described).  d = 1 is the binomial tree, d = p scatter + allgather.
// d comes from coll.bcast_hybrid_d (GRIDMPI_BCAST_HYBRID_D), else from the
// cost model (core/coll/model.hpp), which then also may pick d = 1.
// Restrictions: none.
// Cost (p = d g): (2 (d-1)/d + log2(g)/d) n beta + (2 log2 d + log2 g) alpha.
#include <algorithm>
#include <cstdint>

#include "base/error.hpp"
#include "conf/registry.hpp"
#include "core/coll/algorithm.hpp"
#include "core/coll/delivery.hpp"
#include "core/coll/model.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

namespace {

const conf::Param<std::int64_t> hybrid_d_param{
    "coll.bcast_hybrid_d", 0, "",
    "the d of the bcast algorithm hybrid (pieces the message is cut into, the size of a group); "
    "0 = chosen by the cost model; larger than the communicator = the communicator's size",
    conf::Level::tuner, {"GRIDMPI_BCAST_HYBRID_D"}};

}  // namespace

// Read once, like the forced algorithms.
std::int64_t bcast_forced_hybrid_d() {
  static const std::int64_t value = [] {
    std::int64_t d = 0;
    try {
      d = hybrid_d_param.get();
    } catch (const conf::ConfigError& e) {
      throw MpiError(MPI_ERR_ARG, e.what());
    }
    if (d < 0) throw MpiError(MPI_ERR_ARG, "coll.bcast_hybrid_d is negative; give 0 (the cost model chooses) or a positive d");
    return d;
  }();
  return value;
}

bool forced_bcast_delivery(int m, bool* ring, int* d) {
  const auto* forced = forced_algorithm<Kind::bcast>();
  if (forced == nullptr) return false;
  *ring = false;
  if (forced->name == "binomial") *d = 1;
  else if (forced->name == "scatter_recursive_doubling_allgather") *d = m;
  else if (forced->name == "scatter_ring_allgather") {
    *ring = true;
    *d = m;
  } else if (forced->name == "hybrid" && bcast_forced_hybrid_d() > 0)
    *d = static_cast<int>(std::min<std::int64_t>(bcast_forced_hybrid_d(), m));
  else
    return false;
  return true;
}

namespace {

int bcast_hybrid_d(std::size_t bytes, const core::Comm& comm) {
  std::int64_t d = bcast_forced_hybrid_d();
  if (d == 0) return model::choose_hybrid_d(bytes, comm);
  return static_cast<int>(std::min<std::int64_t>(d, comm.size));
}

}  // namespace

void bcast_hybrid(const BcastArgs& a, core::Comm& comm) {
  const int d = bcast_hybrid_d(packed_size(a.count, a.type), comm);
  if (d == 1) return bcast_binomial(a, comm);  // the same messages, without packing
  bcast_packed(a, comm, [&](std::byte* data, std::size_t n, const Members& members) {
    deliver_hybrid(data, n, d, members, tag::bcast, comm);
  });
}

}  // namespace gridmpi::coll
