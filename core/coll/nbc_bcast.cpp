// MPI_Ibcast: binomial tree on ranks renumbered relative to the root; a rank
// receives from the rank that differs in its lowest set bit, then forwards
// to the ranks below that bit, all at once.  Owner: core/coll/.
// Restrictions: none.  Cost: ceil(log2 p) (alpha + n beta).
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/nbc_intra.hpp"

namespace gridmpi::coll::intra {

nb::Task bcast(BcastArgs a, core::Comm& comm, int tag) {
  const int p = comm.size;
  const int relative = (comm.rank - a.root + p) % p;
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (relative & mask) {
      co_await nb::wait(irecv(a.buffer, a.count, a.type, (relative - mask + a.root) % p, tag, comm));
      break;
    }
  }
  std::vector<request::Request*> children;
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (relative + mask < p)
      children.push_back(isend(a.buffer, a.count, a.type, (relative + mask + a.root) % p, tag, comm));
  }
  co_await nb::wait(std::move(children));
}

}  // namespace gridmpi::coll::intra
