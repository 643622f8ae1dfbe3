// Broadcast by the root sending the whole message to every other rank.
// Restrictions: none.
// Cost: (p-1) (alpha + n beta) at the root; the others wait alpha + n beta.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void bcast_linear(const BcastArgs& a, core::Comm& comm) {
  if (comm.rank != a.root) {
    recv(a.buffer, a.count, a.type, a.root, tag::bcast, comm);
    return;
  }
  Requests sends;
  for (int i = 0; i < comm.size; ++i) {
    if (i != a.root) sends.send(a.buffer, a.count, a.type, i, tag::bcast, comm);
  }
  sends.wait();
}

}  // namespace gridmpi::coll
