// Alltoall with every receive and every send posted at once (receives
// first, peers visited starting from the neighbours so that not everyone
// hits rank 0 first).
// Restrictions: none.  With MPI_IN_PLACE the receive buffer is first copied
// to a scratch buffer that serves as the send buffer.
// Cost: (p-1) alpha + (p-1) n beta per rank if the network absorbs p (p-1)
// concurrent messages; best for small blocks and communicators.
#include <climits>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"
#include "base/error.hpp"

namespace gridmpi::coll {

void alltoall_linear(const GatherArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const MPI_Aint rblock = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  const AlltoallSource src(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcount, a.recvtype, p);
  Requests requests;
  for (int i = 1; i < p; ++i) {
    int from = (r - i + p) % p;
    requests.recv(at_bytes(a.recvbuf, from * rblock), a.recvcount, a.recvtype, from,
                  tag::alltoall, comm);
  }
  for (int i = 1; i < p; ++i) {
    int to = (r + i) % p;
    requests.send(at_bytes(src.buf, to * src.block), src.count, src.type, to, tag::alltoall, comm);
  }
  if (!src.in_place)
    copy(at_bytes(src.buf, r * src.block), src.count, src.type, at_bytes(a.recvbuf, r * rblock), a.recvcount,
         a.recvtype);
  requests.wait();
}

}  // namespace gridmpi::coll
