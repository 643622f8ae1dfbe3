// Allgatherv around a ring: in step s every rank passes to its right
// neighbour the block it received in step s-1 (its own in step 0).
// Restrictions: none.
// Cost: (p-1) alpha + sum(n_i) beta; one slow link slows every step.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void allgatherv_ring(const GathervArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const MPI_Aint extent = shape(a.recvtype).extent;
  if (a.sendbuf != MPI_IN_PLACE) {
    copy(a.sendbuf, a.sendcount, a.sendtype, element(a.recvbuf, a.displs[r], extent),
         a.recvcounts[r], a.recvtype);
  }
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int step = 0; step < p - 1; ++step) {
    int out = (r - step + p) % p, in = (r - step - 1 + p) % p;
    sendrecv(element(a.recvbuf, a.displs[out], extent), a.recvcounts[out], a.recvtype, right,
             tag::allgatherv, element(a.recvbuf, a.displs[in], extent), a.recvcounts[in],
             a.recvtype, left, tag::allgatherv, comm);
  }
}

}  // namespace gridmpi::coll
