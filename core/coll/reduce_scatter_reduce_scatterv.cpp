// Reduce_scatter as a reduce of the whole vector to rank 0 followed by a
// scatterv of the pieces, each with its own algorithm choice.
// Restrictions: none (non-commutative ops included: the reduce keeps rank
// order).
// Cost: that of reduce on n bytes plus that of scatterv, e.g.
// ceil(log2 p) (alpha + n beta + n gamma) + (p-1) alpha + n beta.
#include <climits>
#include <vector>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"
#include "base/error.hpp"

namespace gridmpi::coll {

void reduce_scatter_reduce_scatterv(const ReduceScatterArgs& a, core::Comm& comm) {
  const int p = comm.size;
  std::vector<int> displs(p);
  long long total = 0;
  for (int i = 0; i < p; ++i) {
    displs[i] = static_cast<int>(total);
    total += a.recvcounts[i];
  }
  require(total <= INT_MAX, MPI_ERR_COUNT, "reduce_scatter: the counts add up to more than INT_MAX");
  const int n = static_cast<int>(total);
  const void* mine = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  TypedBuffer whole(comm.rank == 0 ? n : 0, a.type);
  reduce(mine, whole.get(), n, a.type, a.op, 0, comm);
  scatterv(whole.get(), a.recvcounts, displs.data(), a.type, a.recvbuf, a.recvcounts[comm.rank],
           a.type, 0, comm);
}

}  // namespace gridmpi::coll
