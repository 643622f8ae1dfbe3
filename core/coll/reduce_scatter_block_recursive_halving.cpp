// Reduce_scatter_block by recursive halving: reduce_scatter_recursive_halving
// with every count equal to recvcount.
// Restrictions: commutative ops.
// Cost: log2 p alpha + (p-1) n beta + (p-1) n gamma (n = one block), plus a
// fold step when p is not a power of two.
#include <vector>

#include "core/coll/algorithm.hpp"

namespace gridmpi::coll {

void reduce_scatter_block_recursive_halving(const ReduceArgs& a, core::Comm& comm) {
  std::vector<int> counts(comm.size, a.count);
  reduce_scatter_recursive_halving(ReduceScatterArgs{a.sendbuf, a.recvbuf, counts.data(), a.type, a.op},
                                   comm);
}

}  // namespace gridmpi::coll
