// Allgather by every rank sending its block to every other rank, all
// messages posted at once.
// Restrictions: none.
// Cost: (p-1) alpha + (p-1) n beta per rank, with p (p-1) messages in flight:
// fine for small communicators, congests large ones.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void allgather_linear(const GatherArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const MPI_Aint block = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  void* mine = at_bytes(a.recvbuf, r * block);
  if (a.sendbuf != MPI_IN_PLACE) {
    copy(a.sendbuf, a.sendcount, a.sendtype, mine, a.recvcount, a.recvtype);
  }
  Requests requests;
  for (int i = 1; i < p; ++i) {
    int from = (r - i + p) % p;
    requests.recv(at_bytes(a.recvbuf, from * block), a.recvcount, a.recvtype, from,
                  tag::allgather, comm);
  }
  for (int i = 1; i < p; ++i) {
    requests.send(mine, a.recvcount, a.recvtype, (r + i) % p, tag::allgather, comm);
  }
  requests.wait();
}

}  // namespace gridmpi::coll
