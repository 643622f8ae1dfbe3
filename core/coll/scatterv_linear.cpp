// Scatterv: the root sends each rank its block directly.
// Restrictions: none.
// Cost: (p-1) alpha + sum(n_i) beta at the root.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void scatterv_linear(const ScattervArgs& a, core::Comm& comm) {
  if (comm.rank != a.root) {
    recv(a.recvbuf, a.recvcount, a.recvtype, a.root, tag::scatterv, comm);
    return;
  }
  const MPI_Aint extent = shape(a.sendtype).extent;
  Requests blocks;
  for (int i = 0; i < comm.size; ++i) {
    if (i == a.root) continue;
    blocks.send(element(a.sendbuf, a.displs[i], extent), a.sendcounts[i], a.sendtype, i,
                tag::scatterv, comm);
  }
  if (a.recvbuf != MPI_IN_PLACE) {
    copy(element(a.sendbuf, a.displs[a.root], extent), a.sendcounts[a.root], a.sendtype,
         a.recvbuf, a.recvcount, a.recvtype);
  }
  blocks.wait();
}

}  // namespace gridmpi::coll
