// Scan by recursive doubling: in step k ranks that differ in bit k exchange
// the reduction of their aligned block of 2^k ranks; the higher one adds the
// lower block to its result, both extend their block value in rank order.
// Restrictions: none (non-commutative ops included; any size).
// Cost: ceil(log2 p) (alpha + n beta + 2 n gamma).
#include <utility>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void scan_recursive_doubling(const ReduceArgs& a, core::Comm& comm) {
  const int p = comm.size, r = comm.rank;
  const bool commutative = is_commutative(a.op);
  if (a.sendbuf != MPI_IN_PLACE) copy(a.sendbuf, a.recvbuf, a.count, a.type);
  TypedBuffer block(a.count, a.type), incoming(a.count, a.type);
  copy(a.recvbuf, block.get(), a.count, a.type);
  for (int mask = 1; mask < p; mask <<= 1) {
    int partner = r ^ mask;
    if (partner >= p) continue;
    sendrecv(block.get(), a.count, a.type, partner, tag::scan, incoming.get(), a.count, a.type,
             partner, tag::scan, comm);
    if (partner < r) {
      reduce_local(incoming.get(), block.get(), a.count, a.type, a.op);
      reduce_local(incoming.get(), a.recvbuf, a.count, a.type, a.op);
    } else if (commutative) {
      reduce_local(incoming.get(), block.get(), a.count, a.type, a.op);
    } else {
      reduce_local(block.get(), incoming.get(), a.count, a.type, a.op);
      std::swap(block, incoming);
    }
  }
}

}  // namespace gridmpi::coll
