// Reduce along a binomial tree: in step k a rank whose bit k is set sends
// its partial result to the rank with that bit cleared and drops out.  A
// rank's partial result always covers a contiguous range of ranks and is
// combined as (lower range) op (higher range), so with the tree rooted at
// rank 0 the result is in rank order; for commutative ops the tree is rooted
// at the root instead (ranks renumbered), saving the final hop.
// Restrictions: none (non-commutative ops: the tree is rooted at 0 and rank 0
// sends the result to the root).
// Cost: ceil(log2 p) (alpha + n beta + n gamma) (+ alpha + n beta for a
// non-commutative op with root != 0).
#include <utility>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void reduce_binomial(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const int tree_root = is_commutative(a.op) ? a.root : 0;
  const int vr = (r - tree_root + p) % p;
  const void* mine = (r == a.root && a.sendbuf == MPI_IN_PLACE) ? a.recvbuf : a.sendbuf;
  TypedBuffer acc(a.count, a.type), incoming(a.count, a.type);
  copy(mine, acc.get(), a.count, a.type);
  for (int mask = 1; mask < p; mask <<= 1) {
    if (vr & mask) {
      send(acc.get(), a.count, a.type, (vr - mask + tree_root) % p, tag::reduce, comm);
      break;
    }
    int source = vr | mask;
    if (source >= p) continue;
    recv(incoming.get(), a.count, a.type, (source + tree_root) % p, tag::reduce, comm);
    // acc covers [vr, vr+mask), incoming [vr+mask, vr+2 mask): acc op incoming.
    reduce_local(acc.get(), incoming.get(), a.count, a.type, a.op);
    std::swap(acc, incoming);
  }
  if (r == tree_root && tree_root == a.root) {
    copy(acc.get(), a.recvbuf, a.count, a.type);
  } else if (r == tree_root) {
    send(acc.get(), a.count, a.type, a.root, tag::reduce, comm);
  } else if (r == a.root) {
    recv(a.recvbuf, a.count, a.type, tree_root, tag::reduce, comm);
  }
}

}  // namespace gridmpi::coll
