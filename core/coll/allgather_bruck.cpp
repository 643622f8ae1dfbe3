// Allgather by Bruck's algorithm: blocks are gathered in a rotated scratch
// buffer (slot i holds the block of rank r+i); in step k every rank sends
// its first min(2^k, p-2^k) slots to rank r-2^k and receives as many from
// rank r+2^k; a final local rotation puts the blocks in rank order.
// Restrictions: none (any communicator size).
// Cost: ceil(log2 p) alpha + (p-1) n beta, plus a local copy of p blocks.
#include <algorithm>
#include <climits>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"
#include "base/error.hpp"

namespace gridmpi::coll {

void allgather_bruck(const GatherArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const MPI_Aint extent = shape(a.recvtype).extent;
  const MPI_Aint block = static_cast<MPI_Aint>(a.recvcount) * extent;
  long long total = static_cast<long long>(p) * a.recvcount;
  require(total <= INT_MAX, MPI_ERR_COUNT, "allgather: too many elements for one message");
  TypedBuffer slots(static_cast<int>(total), a.recvtype);
  if (a.sendbuf != MPI_IN_PLACE) {
    copy(a.sendbuf, a.sendcount, a.sendtype, slots.get(), a.recvcount, a.recvtype);
  } else {
    copy(at_bytes(a.recvbuf, r * block), slots.get(), a.recvcount, a.recvtype);
  }
  for (int distance = 1; distance < p; distance *= 2) {
    int blocks = std::min(distance, p - distance);
    int count = blocks * a.recvcount;
    sendrecv(slots.get(), count, a.recvtype, (r - distance + p) % p, tag::allgather,
             at_bytes(slots.get(), distance * block), count, a.recvtype, (r + distance) % p,
             tag::allgather, comm);
  }
  for (int i = 0; i < p; ++i) {
    copy(at_bytes(slots.get(), i * block), at_bytes(a.recvbuf, ((r + i) % p) * block),
         a.recvcount, a.recvtype);
  }
}

}  // namespace gridmpi::coll
