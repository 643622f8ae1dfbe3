// Allgather around a ring: in step s every rank passes to its right
// neighbour the block it received in step s-1 (its own in step 0).
// Restrictions: none.
// Cost: (p-1) (alpha + n beta): bandwidth-optimal, latency linear in p.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void allgather_ring(const GatherArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const MPI_Aint block = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  if (a.sendbuf != MPI_IN_PLACE) {
    copy(a.sendbuf, a.sendcount, a.sendtype, at_bytes(a.recvbuf, r * block), a.recvcount,
         a.recvtype);
  }
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int step = 0; step < p - 1; ++step) {
    int out = (r - step + p) % p, in = (r - step - 1 + p) % p;
    sendrecv(at_bytes(a.recvbuf, out * block), a.recvcount, a.recvtype, right, tag::allgather,
             at_bytes(a.recvbuf, in * block), a.recvcount, a.recvtype, left, tag::allgather,
             comm);
  }
}

}  // namespace gridmpi::coll
