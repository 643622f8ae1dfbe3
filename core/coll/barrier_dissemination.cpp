// Barrier by dissemination (Hensgen, Finkel and Manber): in round k every
// rank signals rank+2^k and waits for rank-2^k; after ceil(log2 p) rounds
// every rank has heard, directly or not, from every other.
// Restrictions: none (any communicator size).
// Cost: ceil(log2 p) * alpha.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void barrier_dissemination(const BarrierArgs&, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  for (int distance = 1; distance < p; distance *= 2) {
    sendrecv(nullptr, 0, MPI_BYTE, (r + distance) % p, tag::barrier, nullptr, 0, MPI_BYTE,
             (r - distance + p) % p, tag::barrier, comm);
  }
}

}  // namespace gridmpi::coll
