// MPI_Ibarrier: dissemination.  In round k every rank signals rank + 2^k and
// waits for rank - 2^k, so after ceil(log2 p) rounds each rank has heard,
// directly or not, from every other one.  Owner: core/coll/.
// Restrictions: none.  Cost: ceil(log2 p) alpha.
#include "core/coll/coll.hpp"
#include "core/coll/nbc_intra.hpp"

namespace gridmpi::coll::intra {

nb::Task barrier(core::Comm& comm, int tag) {
  const int p = comm.size, r = comm.rank;
  for (int distance = 1; distance < p; distance *= 2) {
    auto from = irecv(nullptr, 0, MPI_BYTE, (r - distance + p) % p, tag, comm);
    auto to = isend(nullptr, 0, MPI_BYTE, (r + distance) % p, tag, comm);
    co_await nb::wait(from, to);
  }
}

}  // namespace gridmpi::coll::intra
