// Barrier through rank 0: everyone reports to rank 0, which then releases
// everyone.  Kept as the simple reference the other algorithms are checked
// against.
// Restrictions: none.
// Cost: 2 (p-1) alpha, serialised at rank 0.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void barrier_linear(const BarrierArgs&, core::Comm& comm) {
  const int p = comm.size;
  if (comm.rank == 0) {
    Requests arrivals;
    for (int i = 1; i < p; ++i) arrivals.recv(nullptr, 0, MPI_BYTE, i, tag::barrier, comm);
    arrivals.wait();
    Requests releases;
    for (int i = 1; i < p; ++i) releases.send(nullptr, 0, MPI_BYTE, i, tag::barrier, comm);
    releases.wait();
  } else {
    send(nullptr, 0, MPI_BYTE, 0, tag::barrier, comm);
    recv(nullptr, 0, MPI_BYTE, 0, tag::barrier, comm);
  }
}

}  // namespace gridmpi::coll
