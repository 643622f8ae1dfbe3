// Gatherv: every rank sends its block to the root, which posts all receives
// at once (counts and displacements differ per rank, so no tree).
// Restrictions: none.
// Cost: (p-1) alpha + sum(n_i) beta at the root.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void gatherv_linear(const GathervArgs& a, core::Comm& comm) {
  if (comm.rank != a.root) {
    send(a.sendbuf, a.sendcount, a.sendtype, a.root, tag::gatherv, comm);
    return;
  }
  const MPI_Aint extent = shape(a.recvtype).extent;
  Requests blocks;
  for (int i = 0; i < comm.size; ++i) {
    if (i == a.root) continue;
    blocks.recv(element(a.recvbuf, a.displs[i], extent), a.recvcounts[i], a.recvtype, i,
                tag::gatherv, comm);
  }
  if (a.sendbuf != MPI_IN_PLACE) {
    copy(a.sendbuf, a.sendcount, a.sendtype, element(a.recvbuf, a.displs[a.root], extent),
         a.recvcounts[a.root], a.recvtype);
  }
  blocks.wait();
}

}  // namespace gridmpi::coll
