// Allgather by recursive doubling: in step k ranks that differ in bit k
// exchange everything they have gathered so far (2^k blocks, contiguous in
// the receive buffer).
// Restrictions: communicator size a power of two (selection falls back to
// bruck or ring otherwise).
// Cost: log2 p alpha + (p-1) n beta.
#include <climits>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"
#include "base/error.hpp"

namespace gridmpi::coll {

void allgather_recursive_doubling(const GatherArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const MPI_Aint block = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  if (a.sendbuf != MPI_IN_PLACE) {
    copy(a.sendbuf, a.sendcount, a.sendtype, at_bytes(a.recvbuf, r * block), a.recvcount,
         a.recvtype);
  }
  for (int mask = 1; mask < p; mask <<= 1) {
    int partner = r ^ mask;
    int mine = r & ~(mask - 1), theirs = partner & ~(mask - 1);
    long long count = static_cast<long long>(mask) * a.recvcount;
    require(count <= INT_MAX, MPI_ERR_COUNT, "allgather: too many elements for one message");
    sendrecv(at_bytes(a.recvbuf, mine * block), static_cast<int>(count), a.recvtype, partner,
             tag::allgather, at_bytes(a.recvbuf, theirs * block), static_cast<int>(count),
             a.recvtype, partner, tag::allgather, comm);
  }
}

}  // namespace gridmpi::coll
