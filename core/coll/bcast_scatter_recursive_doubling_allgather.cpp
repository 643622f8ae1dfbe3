// Broadcast as a binomial scatter of the (packed) message followed by a
// recursive-doubling allgather (van de Geijn; MPICH's long-message bcast for
// power-of-two sizes).
// Restrictions: communicator size a power of two (selection falls back to
// scatter_ring_allgather otherwise).
// Cost: 2 log2 p alpha + 2 (p-1)/p n beta.
#include "core/coll/algorithm.hpp"
#include "core/coll/pieces.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void bcast_scatter_recursive_doubling_allgather(const BcastArgs& a, core::Comm& comm) {
  Split split{packed_size(a.count, a.type), comm.size};
  if (comm.rank == a.root) {
    PackedInput data(a.buffer, a.count, a.type);
    auto* bytes = const_cast<std::byte*>(data.data());  // only read, see the ring variant
    binomial_scatter_bytes(bytes, split, a.root, tag::bcast, comm);
    Bytes sink(split.n);
    recursive_doubling_allgather_bytes(bytes, split, a.root, tag::bcast, comm, sink.data());
  } else {
    PackedOutput data(a.buffer, a.count, a.type);
    binomial_scatter_bytes(data.data(), split, a.root, tag::bcast, comm);
    recursive_doubling_allgather_bytes(data.data(), split, a.root, tag::bcast, comm);
    data.finish();
  }
}

}  // namespace gridmpi::coll
