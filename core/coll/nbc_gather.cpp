// MPI_Igather, Igatherv, Iscatter, Iscatterv: linear.  The root posts one
// receive (send) per rank straight into (out of) the user's buffer with the
// user's datatype, so any datatype works without packing.  Owner: core/coll/.
// Restrictions: none.  Cost at the root: (p-1) alpha + (p-1) n beta.
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/nbc_intra.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll::intra {

namespace detail {

nb::Task gather_blocks(Block mine, std::vector<Block> blocks, bool in_place, int root,
                       core::Comm& comm, int tag) {
  if (comm.rank != root) {
    co_await nb::wait(isend(mine.addr, mine.count, mine.type, root, tag, comm));
    co_return;
  }
  std::vector<request::Request*> pending;
  for (int i = 0; i < comm.size; ++i) {
    if (i != root) pending.push_back(irecv(blocks[i].out(), blocks[i].count, blocks[i].type, i, tag, comm));
  }
  if (!in_place) copy(mine.addr, mine.count, mine.type, blocks[root].out(), blocks[root].count, blocks[root].type);
  co_await nb::wait(std::move(pending));
}

nb::Task scatter_blocks(std::vector<Block> blocks, Block mine, bool in_place, int root,
                        core::Comm& comm, int tag) {
  if (comm.rank != root) {
    co_await nb::wait(irecv(mine.out(), mine.count, mine.type, root, tag, comm));
    co_return;
  }
  std::vector<request::Request*> pending;
  for (int i = 0; i < comm.size; ++i) {
    if (i != root) pending.push_back(isend(blocks[i].addr, blocks[i].count, blocks[i].type, i, tag, comm));
  }
  if (!in_place) copy(blocks[root].addr, blocks[root].count, blocks[root].type, mine.out(), mine.count, mine.type);
  co_await nb::wait(std::move(pending));
}

std::vector<Block> equal_blocks(const void* buf, int count, MPI_Datatype type, int n) {
  std::vector<Block> blocks(static_cast<std::size_t>(n));
  const MPI_Aint stride = static_cast<MPI_Aint>(count) * shape(type).extent;
  for (int i = 0; i < n; ++i) blocks[i] = Block{at_bytes(buf, i * stride), count, type};
  return blocks;
}

std::vector<Block> varying_blocks(const void* buf, const int* counts, const int* displs,
                                  MPI_Datatype type, int n) {
  std::vector<Block> blocks(static_cast<std::size_t>(n));
  const MPI_Aint extent = shape(type).extent;
  for (int i = 0; i < n; ++i) blocks[i] = Block{at_bytes(buf, displs[i] * extent), counts[i], type};
  return blocks;
}

}  // namespace detail

using detail::Block;
using detail::equal_blocks;
using detail::varying_blocks;

nb::Task gather(GatherArgs a, core::Comm& comm, int tag) {
  const bool is_root = comm.rank == a.root;
  const bool in_place = a.sendbuf == MPI_IN_PLACE;
  std::vector<Block> blocks;
  if (is_root) blocks = equal_blocks(a.recvbuf, a.recvcount, a.recvtype, comm.size);
  return detail::gather_blocks(Block{a.sendbuf, a.sendcount, a.sendtype}, std::move(blocks), in_place,
                               a.root, comm, tag);
}

nb::Task gatherv(GathervArgs a, core::Comm& comm, int tag) {
  const bool is_root = comm.rank == a.root;
  const bool in_place = a.sendbuf == MPI_IN_PLACE;
  std::vector<Block> blocks;
  if (is_root) blocks = varying_blocks(a.recvbuf, a.recvcounts, a.displs, a.recvtype, comm.size);
  return detail::gather_blocks(Block{a.sendbuf, a.sendcount, a.sendtype}, std::move(blocks), in_place,
                               a.root, comm, tag);
}

nb::Task scatter(GatherArgs a, core::Comm& comm, int tag) {
  const bool is_root = comm.rank == a.root;
  const bool in_place = a.recvbuf == MPI_IN_PLACE;
  std::vector<Block> blocks;
  if (is_root) blocks = equal_blocks(a.sendbuf, a.sendcount, a.sendtype, comm.size);
  return detail::scatter_blocks(std::move(blocks), Block{a.recvbuf, a.recvcount, a.recvtype}, in_place,
                                a.root, comm, tag);
}

nb::Task scatterv(ScattervArgs a, core::Comm& comm, int tag) {
  const bool is_root = comm.rank == a.root;
  const bool in_place = a.recvbuf == MPI_IN_PLACE;
  std::vector<Block> blocks;
  if (is_root) blocks = varying_blocks(a.sendbuf, a.sendcounts, a.displs, a.sendtype, comm.size);
  return detail::scatter_blocks(std::move(blocks), Block{a.recvbuf, a.recvcount, a.recvtype}, in_place,
                                a.root, comm, tag);
}

}  // namespace gridmpi::coll::intra
