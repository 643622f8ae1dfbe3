// Broadcast as a binomial scatter of the (packed) message followed by a ring
// allgather (van de Geijn).  The message is cut into p nearly equal pieces of
// its packed bytes, so any datatype works and ranks may describe the data
// with different datatypes of the same signature.
// Restrictions: none; pointless for messages of fewer than p bytes.
// Cost: (log2 p + p - 1) alpha + 2 (p-1)/p n beta: bandwidth-optimal for long
// messages, latency linear in p.
#include "core/coll/algorithm.hpp"
#include "core/coll/pieces.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void bcast_scatter_ring_allgather(const BcastArgs& a, core::Comm& comm) {
  Split split{packed_size(a.count, a.type), comm.size};
  if (comm.rank == a.root) {
    PackedInput data(a.buffer, a.count, a.type);
    // The root only reads its message: sends never write, and what the ring
    // brings back goes to a scratch piece.
    auto* bytes = const_cast<std::byte*>(data.data());
    binomial_scatter_bytes(bytes, split, a.root, tag::bcast, comm);
    Bytes sink(split.count(0));
    ring_allgather_bytes(bytes, split, a.root, tag::bcast, comm, sink.data());
  } else {
    PackedOutput data(a.buffer, a.count, a.type);
    binomial_scatter_bytes(data.data(), split, a.root, tag::bcast, comm);
    ring_allgather_bytes(data.data(), split, a.root, tag::bcast, comm);
    data.finish();
  }
}

}  // namespace gridmpi::coll
