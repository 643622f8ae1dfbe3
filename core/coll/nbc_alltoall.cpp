// MPI_Ialltoall, Ialltoallv, Ialltoallw: linear.  Every receive and every
// send is posted at once, straight from and into the user's buffers with the
// user's datatypes; with MPI_IN_PLACE each outgoing block is first copied out
// of the receive buffer.  Owner: core/coll/.
// Restrictions: none.  Cost: (p-1) alpha + max(sum sent, sum received) beta.
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/nbc_intra.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll::intra {

using detail::Block;
using detail::equal_blocks;
using detail::varying_blocks;

namespace {

// sends is empty for MPI_IN_PLACE (the blocks to send are the receive blocks).
nb::Task exchange(std::vector<Block> sends, std::vector<Block> recvs, core::Comm& comm, int tag) {
  const int p = comm.size, r = comm.rank;
  const bool in_place = sends.empty();
  std::vector<TypedBuffer> saved;
  if (in_place) {
    saved.resize(static_cast<std::size_t>(p));
    sends.resize(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) {
      if (i == r) continue;
      const Block& b = recvs[i];
      saved[i] = TypedBuffer(b.count, b.type);
      copy(b.addr, saved[i].get(), b.count, b.type);
      sends[i] = Block{saved[i].get(), b.count, b.type};
    }
  }
  std::vector<request::Request*> pending;
  for (int k = 1; k < p; ++k) {
    const int from = (r - k + p) % p;
    pending.push_back(irecv(recvs[from].out(), recvs[from].count, recvs[from].type, from, tag, comm));
  }
  for (int k = 1; k < p; ++k) {
    const int to = (r + k) % p;
    pending.push_back(isend(sends[to].addr, sends[to].count, sends[to].type, to, tag, comm));
  }
  if (!in_place) {
    copy(sends[r].addr, sends[r].count, sends[r].type, recvs[r].out(), recvs[r].count, recvs[r].type);
  }
  co_await nb::wait(std::move(pending));
}

// Alltoallw: displacements in bytes, a datatype per peer.
std::vector<Block> typed_blocks(const void* buf, const int* counts, const int* displs,
                                const MPI_Datatype* types, int n) {
  std::vector<Block> blocks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) blocks[i] = Block{at_bytes(buf, displs[i]), counts[i], types[i]};
  return blocks;
}

}  // namespace

nb::Task alltoall(GatherArgs a, core::Comm& comm, int tag) {
  const int p = comm.size;
  std::vector<Block> sends;
  if (a.sendbuf != MPI_IN_PLACE) sends = equal_blocks(a.sendbuf, a.sendcount, a.sendtype, p);
  return exchange(std::move(sends), equal_blocks(a.recvbuf, a.recvcount, a.recvtype, p), comm, tag);
}

nb::Task alltoallv(AlltoallvArgs a, core::Comm& comm, int tag) {
  const int p = comm.size;
  std::vector<Block> sends;
  if (a.sendbuf != MPI_IN_PLACE) sends = varying_blocks(a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, p);
  return exchange(std::move(sends), varying_blocks(a.recvbuf, a.recvcounts, a.rdispls, a.recvtype, p), comm,
                  tag);
}

nb::Task alltoallw(AlltoallwArgs a, core::Comm& comm, int tag) {
  const int p = comm.size;
  std::vector<Block> sends;
  if (a.sendbuf != MPI_IN_PLACE) sends = typed_blocks(a.sendbuf, a.sendcounts, a.sdispls, a.sendtypes, p);
  return exchange(std::move(sends), typed_blocks(a.recvbuf, a.recvcounts, a.rdispls, a.recvtypes, p), comm,
                  tag);
}

}  // namespace gridmpi::coll::intra
