// Allreduce as a ring reduce-scatter followed by a ring allgather: the
// vector is cut into p segments; in p-1 steps each rank passes a segment to
// its right neighbour, which adds its own contribution, until every rank
// owns one fully reduced segment; p-1 more steps circulate the results.
// Restrictions: commutative ops (segments are combined in ring order).
// Cost: 2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma: bandwidth-optimal,
// latency linear in p.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void allreduce_ring(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  if (a.sendbuf != MPI_IN_PLACE) copy(a.sendbuf, a.recvbuf, a.count, a.type);
  if (p == 1) return;
  const MPI_Aint extent = shape(a.type).extent;
  const Split seg{static_cast<std::size_t>(a.count), p};
  auto at = [&](int i) { return element(a.recvbuf, static_cast<MPI_Aint>(seg.offset(i)), extent); };
  auto count = [&](int i) { return static_cast<int>(seg.count(i)); };
  TypedBuffer incoming(count(0), a.type);
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int step = 0; step < p - 1; ++step) {
    int out = (r - step + p) % p, in = (r - step - 1 + p) % p;
    sendrecv(at(out), count(out), a.type, right, tag::allreduce, incoming.get(), count(in),
             a.type, left, tag::allreduce, comm);
    reduce_local(incoming.get(), at(in), count(in), a.type, a.op);
  }
  // Rank r now owns the reduced segment r+1.
  for (int step = 0; step < p - 1; ++step) {
    int out = (r + 1 - step + p) % p, in = (r - step + p) % p;
    sendrecv(at(out), count(out), a.type, right, tag::allreduce, at(in), count(in), a.type, left,
             tag::allreduce, comm);
  }
}

}  // namespace gridmpi::coll
