// MPI_Iallgather and Iallgatherv: ring.  In step k rank r passes block
// r - k to its right neighbour and receives block r - k - 1 from its left
// one, each with the user's receive datatype (every rank describes block i
// with the same type signature).  Owner: core/coll/.
// Restrictions: none.  Cost: (p-1) (alpha + n beta), n = one block.
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/nbc_intra.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll::intra {

using detail::Block;

namespace {

nb::Task ring_allgather(Block mine, std::vector<Block> blocks, bool in_place, core::Comm& comm,
                        int tag) {
  const int p = comm.size, r = comm.rank;
  if (!in_place) copy(mine.addr, mine.count, mine.type, blocks[r].out(), blocks[r].count, blocks[r].type);
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int k = 0; k < p - 1; ++k) {
    const Block& out = blocks[(r - k + p) % p];
    const Block& in = blocks[(r - k - 1 + p) % p];
    auto received = irecv(in.out(), in.count, in.type, left, tag, comm);
    auto sent = isend(out.addr, out.count, out.type, right, tag, comm);
    co_await nb::wait(received, sent);
  }
}

}  // namespace

nb::Task allgather(GatherArgs a, core::Comm& comm, int tag) {
  std::vector<Block> blocks(static_cast<std::size_t>(comm.size));
  const MPI_Aint stride = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  for (int i = 0; i < comm.size; ++i) blocks[i] = Block{at_bytes(a.recvbuf, i * stride), a.recvcount, a.recvtype};
  return ring_allgather(Block{a.sendbuf, a.sendcount, a.sendtype}, std::move(blocks),
                        a.sendbuf == MPI_IN_PLACE, comm, tag);
}

nb::Task allgatherv(GathervArgs a, core::Comm& comm, int tag) {
  std::vector<Block> blocks(static_cast<std::size_t>(comm.size));
  const MPI_Aint extent = shape(a.recvtype).extent;
  for (int i = 0; i < comm.size; ++i)
    blocks[i] = Block{at_bytes(a.recvbuf, a.displs[i] * extent), a.recvcounts[i], a.recvtype};
  return ring_allgather(Block{a.sendbuf, a.sendcount, a.sendtype}, std::move(blocks),
                        a.sendbuf == MPI_IN_PLACE, comm, tag);
}

}  // namespace gridmpi::coll::intra
