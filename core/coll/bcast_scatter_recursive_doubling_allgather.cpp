// Broadcast as a binomial scatter of the (packed) message followed by a
// recursive-doubling allgather (van de Geijn; MPICH's long-message bcast for
// power-of-two sizes): hybrid d with d = p (core/coll/delivery.cpp).
// Restrictions: communicator size a power of two (hybrid with d = p covers
// the others: its collect phase is then a dissemination allgather).
// Cost: 2 log2 p alpha + 2 (p-1)/p n beta.
#include "core/coll/algorithm.hpp"
#include "core/coll/delivery.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void bcast_scatter_recursive_doubling_allgather(const BcastArgs& a, core::Comm& comm) {
  bcast_packed(a, comm, [&](std::byte* data, std::size_t n, const Members& members) {
    deliver_hybrid(data, n, members.size, members, tag::bcast, comm);
  });
}

}  // namespace gridmpi::coll
