// Exscan along the chain of ranks: rank r receives a_0..a_{r-1} from rank
// r-1 (its result) and passes (that op a_r) on.  Rank 0's receive buffer is
// left untouched, as the standard leaves it undefined.
// Restrictions: none (non-commutative ops included).
// Cost: (p-1) (alpha + n beta + n gamma) for the last rank.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void exscan_linear(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const void* mine = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  if (r == 0) {
    if (p > 1) send(mine, a.count, a.type, 1, tag::exscan, comm);
    return;
  }
  TypedBuffer prefix(a.count, a.type);
  recv(prefix.get(), a.count, a.type, r - 1, tag::exscan, comm);
  if (r < p - 1) {
    TypedBuffer next(a.count, a.type);
    copy(mine, next.get(), a.count, a.type);
    reduce_local(prefix.get(), next.get(), a.count, a.type, a.op);
    send(next.get(), a.count, a.type, r + 1, tag::exscan, comm);
  }
  copy(prefix.get(), a.recvbuf, a.count, a.type);
}

}  // namespace gridmpi::coll
