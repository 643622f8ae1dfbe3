// Allreduce as a reduce to rank 0 followed by a broadcast from it, each with
// its own algorithm choice.
// Restrictions: none.
// Cost: that of the chosen reduce plus that of the chosen bcast, e.g.
// 2 ceil(log2 p) alpha + 2 log2 p n beta + log2 p n gamma with binomial trees.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void allreduce_reduce_bcast(const ReduceArgs& a, core::Comm& comm) {
  const bool in_place = a.sendbuf == MPI_IN_PLACE;
  if (comm.rank == 0) {
    reduce(a.sendbuf, a.recvbuf, a.count, a.type, a.op, 0, comm);
  } else {
    // Off the root the reduce only reads its send buffer, so the receive
    // buffer can serve as the input here.
    reduce(in_place ? a.recvbuf : a.sendbuf, a.recvbuf, a.count, a.type, a.op, 0, comm);
  }
  bcast(a.recvbuf, a.count, a.type, 0, comm);
}

}  // namespace gridmpi::coll
