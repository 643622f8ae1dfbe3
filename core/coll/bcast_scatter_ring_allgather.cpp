// Broadcast as a binomial scatter of the (packed) message followed by a ring
// allgather (van de Geijn; the dynamic-multicast paper's "ring").  The
// message is cut into p nearly equal pieces of its packed bytes, so any
// datatype works and ranks may describe the data with different datatypes
// of the same signature (core/coll/delivery.cpp).
// Restrictions: none; pointless for messages of fewer than p bytes.
// Cost: (log2 p + p - 1) alpha + 2 (p-1)/p n beta: bandwidth-optimal for long
// messages, latency linear in p.
#include "core/coll/algorithm.hpp"
#include "core/coll/delivery.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void bcast_scatter_ring_allgather(const BcastArgs& a, core::Comm& comm) {
  bcast_packed(a, comm, [&](std::byte* data, std::size_t n, const Members& members) {
    deliver_ring(data, n, members, tag::bcast, comm);
  });
}

}  // namespace gridmpi::coll
