// Reduce_scatter_block as a reduce of the whole vector to rank 0 followed by
// a scatter of the blocks, each with its own algorithm choice.
// Restrictions: none (non-commutative ops included).
// Cost: that of reduce on p*n elements plus that of scatter.
#include <climits>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"
#include "base/error.hpp"

namespace gridmpi::coll {

void reduce_scatter_block_reduce_scatter(const ReduceArgs& a, core::Comm& comm) {
  long long total = static_cast<long long>(a.count) * comm.size;
  require(total <= INT_MAX, MPI_ERR_COUNT,
          "reduce_scatter_block: recvcount * size is more than INT_MAX");
  const int n = static_cast<int>(total);
  const void* mine = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  TypedBuffer whole(comm.rank == 0 ? n : 0, a.type);
  reduce(mine, whole.get(), n, a.type, a.op, 0, comm);
  scatter(whole.get(), a.count, a.type, a.recvbuf, a.count, a.type, 0, comm);
}

}  // namespace gridmpi::coll
