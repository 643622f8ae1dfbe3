// Scatter by the root sending each rank its block directly.
// Restrictions: none.
// Cost: (p-1) alpha + (p-1) n beta at the root (n = one block).
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void scatter_linear(const GatherArgs& a, core::Comm& comm) {
  if (comm.rank != a.root) {
    recv(a.recvbuf, a.recvcount, a.recvtype, a.root, tag::scatter, comm);
    return;
  }
  const MPI_Aint block = static_cast<MPI_Aint>(a.sendcount) * shape(a.sendtype).extent;
  Requests blocks;
  for (int i = 0; i < comm.size; ++i) {
    if (i == a.root) continue;
    blocks.send(at_bytes(a.sendbuf, i * block), a.sendcount, a.sendtype, i, tag::scatter, comm);
  }
  if (a.recvbuf != MPI_IN_PLACE) {
    copy(at_bytes(a.sendbuf, a.root * block), a.sendcount, a.sendtype, a.recvbuf, a.recvcount,
         a.recvtype);
  }
  blocks.wait();
}

}  // namespace gridmpi::coll
