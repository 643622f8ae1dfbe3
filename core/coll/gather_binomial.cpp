// Gather along a binomial tree (ranks renumbered relative to the root): a
// rank collects the packed blocks of its subtree, then sends them to its
// parent in one message.  Blocks travel packed (MPI_BYTE) because inner ranks
// hold other ranks' data without knowing the root's datatype.
// Restrictions: none.
// Cost: ceil(log2 p) alpha + (p-1) n beta (n = one block), plus one copy of
// the data at inner ranks.  Good for short blocks; long ones prefer linear.
#include <algorithm>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void gather_binomial(const GatherArgs& a, core::Comm& comm) {
  const int p = comm.size, root = a.root;
  const int vr = (comm.rank - root + p) % p;
  const bool is_root = comm.rank == root;
  const std::size_t n =
      is_root ? packed_size(a.recvcount, a.recvtype) : packed_size(a.sendcount, a.sendtype);
  // My subtree: relative ranks [vr, vr + span).
  int lowbit = 1;
  while (lowbit < p && !(vr & lowbit)) lowbit <<= 1;
  const int span = std::min(is_root ? p : lowbit, p - vr);

  // Blocks of the subtree in relative order; at the root with root == 0 and
  // a contiguous type that is the receive buffer itself.
  Shape rshape = is_root ? shape(a.recvtype) : Shape{};
  const bool direct = is_root && root == 0 && rshape.contiguous;
  Bytes scratch;
  std::byte* blocks;
  if (direct) {
    blocks = static_cast<std::byte*>(at_bytes(a.recvbuf, rshape.true_lb));
  } else {
    scratch = Bytes(n * static_cast<std::size_t>(span));
    blocks = scratch.data();
  }
  if (!is_root) pack(a.sendbuf, a.sendcount, a.sendtype, blocks);

  Requests children;
  for (int mask = 1; mask < lowbit && vr + mask < p; mask <<= 1) {
    int child = vr + mask;
    std::size_t bytes = n * static_cast<std::size_t>(std::min(mask, p - child));
    children.recv(blocks + n * mask, byte_count(bytes), MPI_BYTE, (child + root) % p,
                  tag::gather, comm);
  }
  children.wait();

  if (!is_root) {
    send(blocks, byte_count(n * static_cast<std::size_t>(span)), MPI_BYTE,
         (vr - lowbit + root) % p, tag::gather, comm);
    return;
  }
  const MPI_Aint block = static_cast<MPI_Aint>(a.recvcount) * rshape.extent;
  if (a.sendbuf != MPI_IN_PLACE) {
    copy(a.sendbuf, a.sendcount, a.sendtype, at_bytes(a.recvbuf, root * block), a.recvcount,
         a.recvtype);
  }
  if (!direct) {
    for (int i = 1; i < p; ++i) {
      unpack(blocks + n * i, a.recvcount, a.recvtype, at_bytes(a.recvbuf, ((i + root) % p) * block));
    }
  }
}

}  // namespace gridmpi::coll
