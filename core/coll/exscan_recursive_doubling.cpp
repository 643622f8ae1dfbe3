// Exscan by recursive doubling: as scan_recursive_doubling, but the result
// collects only the lower blocks received (the first one copied, later ones
// combined in front).  Rank 0's receive buffer is left untouched.
// Restrictions: none (non-commutative ops included; any size).
// Cost: ceil(log2 p) (alpha + n beta + 2 n gamma).
#include <utility>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void exscan_recursive_doubling(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const bool commutative = is_commutative(a.op);
  const void* mine = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  TypedBuffer block(a.count, a.type), incoming(a.count, a.type);
  copy(mine, block.get(), a.count, a.type);
  bool have_result = false;
  for (int mask = 1; mask < p; mask <<= 1) {
    int partner = r ^ mask;
    if (partner >= p) continue;
    sendrecv(block.get(), a.count, a.type, partner, tag::exscan, incoming.get(), a.count, a.type,
             partner, tag::exscan, comm);
    if (partner < r) {
      if (have_result) {
        reduce_local(incoming.get(), a.recvbuf, a.count, a.type, a.op);
      } else {
        copy(incoming.get(), a.recvbuf, a.count, a.type);
        have_result = true;
      }
      reduce_local(incoming.get(), block.get(), a.count, a.type, a.op);
    } else if (commutative) {
      reduce_local(incoming.get(), block.get(), a.count, a.type, a.op);
    } else {
      reduce_local(block.get(), incoming.get(), a.count, a.type, a.op);
      std::swap(block, incoming);
    }
  }
}

}  // namespace gridmpi::coll
