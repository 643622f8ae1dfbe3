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
  const void* sendbuf = a.sendbuf;
  int sendcount = a.sendcount;
  MPI_Datatype sendtype = a.sendtype;
  TypedBuffer saved;
  if (a.sendbuf == MPI_IN_PLACE) {
    long long total = static_cast<long long>(p) * a.recvcount;
    require(total <= INT_MAX, MPI_ERR_COUNT, "alltoall: too many elements for one buffer");
    saved = TypedBuffer(static_cast<int>(total), a.recvtype);
    copy(a.recvbuf, saved.get(), static_cast<int>(total), a.recvtype);
    sendbuf = saved.get();
    sendcount = a.recvcount;
    sendtype = a.recvtype;
  } else {
    copy(at_bytes(sendbuf, r * static_cast<MPI_Aint>(sendcount) * shape(sendtype).extent),
         sendcount, sendtype, at_bytes(a.recvbuf, r * rblock), a.recvcount, a.recvtype);
  }
  const MPI_Aint sblock = static_cast<MPI_Aint>(sendcount) * shape(sendtype).extent;
  for (int step = 1; step < p; ++step) {
    int to = (r + step) % p, from = (r - step + p) % p;
    sendrecv(at_bytes(sendbuf, to * sblock), sendcount, sendtype, to, tag::alltoall,
             at_bytes(a.recvbuf, from * rblock), a.recvcount, a.recvtype, from, tag::alltoall,
             comm);
  }
}

}  // namespace gridmpi::coll
