// Scatter along a binomial tree (ranks renumbered relative to the root): the
// root sends each child the packed blocks of the child's subtree in one
// message, inner ranks forward the parts of their own children.
// Restrictions: none.
// Cost: ceil(log2 p) alpha + (p-1) n beta (n = one block), plus one copy at
// inner ranks.  Good for short blocks; long ones prefer linear.
#include <algorithm>

#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void scatter_binomial(const GatherArgs& a, core::Comm& comm) {
  const int p = comm.size, root = a.root;
  const int vr = (comm.rank - root + p) % p;
  const bool is_root = comm.rank == root;
  const std::size_t n =
      is_root ? packed_size(a.sendcount, a.sendtype) : packed_size(a.recvcount, a.recvtype);
  int lowbit = 1;
  while (lowbit < p && !(vr & lowbit)) lowbit <<= 1;
  const int span = std::min(is_root ? p : lowbit, p - vr);

  Bytes scratch;
  const std::byte* blocks;
  if (is_root) {
    Shape sshape = shape(a.sendtype);
    const MPI_Aint block = static_cast<MPI_Aint>(a.sendcount) * sshape.extent;
    if (root == 0 && sshape.contiguous) {
      blocks = static_cast<const std::byte*>(at_bytes(a.sendbuf, sshape.true_lb));
    } else {
      scratch = Bytes(n * static_cast<std::size_t>(p));
      for (int i = 1; i < p; ++i) {
        pack(at_bytes(a.sendbuf, ((i + root) % p) * block), a.sendcount, a.sendtype,
             scratch.data() + n * i);
      }
      blocks = scratch.data();
    }
    if (a.recvbuf != MPI_IN_PLACE) {
      copy(at_bytes(a.sendbuf, root * block), a.sendcount, a.sendtype, a.recvbuf, a.recvcount,
           a.recvtype);
    }
  } else {
    scratch = Bytes(n * static_cast<std::size_t>(span));
    recv(scratch.data(), byte_count(n * static_cast<std::size_t>(span)), MPI_BYTE,
         (vr - lowbit + root) % p, tag::scatter, comm);
    blocks = scratch.data();
  }

  Requests children;
  for (int mask = lowbit >> 1; mask > 0; mask >>= 1) {
    int child = vr + mask;
    if (child >= p) continue;
    std::size_t bytes = n * static_cast<std::size_t>(std::min(mask, p - child));
    children.send(blocks + n * mask, byte_count(bytes), MPI_BYTE, (child + root) % p,
                  tag::scatter, comm);
  }
  children.wait();
  if (!is_root) unpack(blocks, a.recvcount, a.recvtype, a.recvbuf);
}

}  // namespace gridmpi::coll
