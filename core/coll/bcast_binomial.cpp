// Broadcast along a binomial tree rooted at the root (ranks renumbered
// relative to it): a rank receives from the rank that differs in its lowest
// set bit and forwards to the ranks below that bit.
// Restrictions: none.
// Cost: ceil(log2 p) (alpha + n beta).  Best for short messages; long ones
// pay the full n beta on every level (see scatter_*_allgather).
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void bcast_binomial(const BcastArgs& a, core::Comm& comm) {
  const int p = comm.size;
  const int vr = (comm.rank - a.root + p) % p;
  int mask = 1;
  while (mask < p) {
    if (vr & mask) {
      recv(a.buffer, a.count, a.type, (vr - mask + a.root) % p, tag::bcast, comm);
      break;
    }
    mask <<= 1;
  }
  Requests children;
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask < p) {
      children.send(a.buffer, a.count, a.type, (vr + mask + a.root) % p, tag::bcast, comm);
    }
  }
  children.wait();
}

}  // namespace gridmpi::coll
