// Allgatherv by every rank sending its block to every other rank, all
// messages posted at once.
// Restrictions: none.
// Cost: (p-1) alpha + sum(n_i) beta per rank; p (p-1) messages in flight.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void allgatherv_linear(const GathervArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const MPI_Aint extent = shape(a.recvtype).extent;
  void* mine = element(a.recvbuf, a.displs[r], extent);
  if (a.sendbuf != MPI_IN_PLACE) {
    copy(a.sendbuf, a.sendcount, a.sendtype, mine, a.recvcounts[r], a.recvtype);
  }
  Requests requests;
  for (int i = 1; i < p; ++i) {
    int from = (r - i + p) % p;
    requests.recv(element(a.recvbuf, a.displs[from], extent), a.recvcounts[from], a.recvtype,
                  from, tag::allgatherv, comm);
  }
  for (int i = 1; i < p; ++i) {
    requests.send(mine, a.recvcounts[r], a.recvtype, (r + i) % p, tag::allgatherv, comm);
  }
  requests.wait();
}

}  // namespace gridmpi::coll
