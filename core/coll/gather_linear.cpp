// Gather by every rank sending its block straight to the root, which posts
// all receives at once.
// Restrictions: none.
// Cost: (p-1) alpha + (p-1) n beta at the root (n = one block).
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void gather_linear(const GatherArgs& a, core::Comm& comm) {
  if (comm.rank != a.root) {
    send(a.sendbuf, a.sendcount, a.sendtype, a.root, tag::gather, comm);
    return;
  }
  const MPI_Aint block = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  Requests blocks;
  for (int i = 0; i < comm.size; ++i) {
    if (i == a.root) continue;
    blocks.recv(at_bytes(a.recvbuf, i * block), a.recvcount, a.recvtype, i, tag::gather, comm);
  }
  if (a.sendbuf != MPI_IN_PLACE) {
    copy(a.sendbuf, a.sendcount, a.sendtype, at_bytes(a.recvbuf, a.root * block), a.recvcount,
         a.recvtype);
  }
  blocks.wait();
}

}  // namespace gridmpi::coll
