// Alltoall in p-1 exchange steps: in step s rank r sends to r+s and receives
// from r-s, so every rank has one message in and one out at a time.
// Restrictions: none.  With MPI_IN_PLACE the receive buffer is first copied
// to a scratch buffer that serves as the send buffer.
// Cost: (p-1) (alpha + n beta); no congestion, the choice for long blocks.
#include <climits>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"
#include "base/error.hpp"

namespace gridmpi::coll {

void alltoall_pairwise(const GatherArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const MPI_Aint rblock = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  const AlltoallSource src(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcount, a.recvtype, p);
  if (!src.in_place)
    copy(at_bytes(src.buf, r * src.block), src.count, src.type, at_bytes(a.recvbuf, r * rblock), a.recvcount,
         a.recvtype);
  for (int step = 1; step < p; ++step) {
    int to = (r + step) % p, from = (r - step + p) % p;
    sendrecv(at_bytes(src.buf, to * src.block), src.count, src.type, to, tag::alltoall,
             at_bytes(a.recvbuf, from * rblock), a.recvcount, a.recvtype, from, tag::alltoall,
             comm);
  }
}

}  // namespace gridmpi::coll
