// MPI_Ireduce, Iallreduce, Ireduce_scatter, Ireduce_scatter_block.
// Owner: core/coll/.
//
// Reduce: binomial tree.  A rank accumulates the data of the subtree
// [rank, rank + 2^k) by receiving from rank + 2^j (j < k) and combining
// (mine) op (theirs), then sends to rank - 2^k.  With a commutative op the
// tree is built on ranks relative to the root; otherwise on plain ranks, so
// that every partial result covers consecutive ranks in order, and rank 0
// passes the result to the root.
// Restrictions: none.  Cost: ceil(log2 p) (alpha + n beta + n gamma) (+1
// message for a non-commutative op with root != 0).
//
// Allreduce = reduce to rank 0 + binomial bcast; Reduce_scatter(_block) =
// reduce of the whole vector to rank 0 + linear scatterv.  Off the root,
// reduce never writes recvbuf.
#include <utility>
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/nbc_intra.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll::intra {

using detail::Block;

namespace {

// Reduces `input` (count elements of type, never MPI_IN_PLACE) of every rank
// into `result` at the root (ignored elsewhere).
nb::Task reduce_into(const void* input, void* result, int count, MPI_Datatype type, MPI_Op op, int root,
                     core::Comm& comm, int tag) {
  const int p = comm.size;
  const bool commutative = is_commutative(op);
  const int top = commutative ? root : 0;  // where the tree ends
  const int relative = (comm.rank - top + p) % p;
  TypedBuffer accumulated(count, type), incoming(count, type);
  copy(input, accumulated.get(), count, type);
  for (int mask = 1; mask < p; mask <<= 1) {
    if (relative & mask) {
      co_await nb::wait(isend(accumulated.get(), count, type, (relative - mask + top) % p, tag, comm));
      break;
    }
    if (relative + mask >= p) continue;
    co_await nb::wait(irecv(incoming.get(), count, type, (relative + mask + top) % p, tag, comm));
    if (commutative) {
      reduce_local(incoming.get(), accumulated.get(), count, type, op);
    } else {
      reduce_local(accumulated.get(), incoming.get(), count, type, op);  // mine op theirs
      std::swap(accumulated, incoming);
    }
  }
  if (comm.rank == top && top == root) {
    copy(accumulated.get(), result, count, type);
  } else if (comm.rank == top) {
    co_await nb::wait(isend(accumulated.get(), count, type, root, tag, comm));
  } else if (comm.rank == root) {
    co_await nb::wait(irecv(result, count, type, top, tag, comm));
  }
}

}  // namespace

nb::Task reduce(ReduceArgs a, core::Comm& comm, int tag) {
  const void* input = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  return reduce_into(input, a.recvbuf, a.count, a.type, a.op, a.root, comm, tag);
}

nb::Task allreduce(ReduceArgs a, core::Comm& comm, int tag) {
  const void* input = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  co_await reduce_into(input, a.recvbuf, a.count, a.type, a.op, 0, comm, tag);
  co_await bcast(BcastArgs{a.recvbuf, a.count, a.type, 0}, comm, tag);
}

namespace {

// The reduction of the whole vector (sum of counts) at rank 0, then block i
// (counts[i] elements) to rank i.
nb::Task reduce_then_scatter(const void* input, void* recvbuf, std::vector<int> counts,
                             MPI_Datatype type, MPI_Op op, core::Comm& comm, int tag) {
  const int p = comm.size;
  int total = 0;
  for (int c : counts) total += c;
  TypedBuffer whole(comm.rank == 0 ? total : 0, type);
  co_await reduce_into(input, whole.get(), total, type, op, 0, comm, tag);
  std::vector<Block> blocks;
  if (comm.rank == 0) {
    MPI_Aint offset = 0;
    for (int i = 0; i < p; ++i) {
      blocks.push_back(Block{whole.at(offset), counts[i], type});
      offset += counts[i];
    }
  }
  co_await detail::scatter_blocks(std::move(blocks), Block{recvbuf, counts[comm.rank], type}, false, 0,
                                  comm, tag);
}

}  // namespace

nb::Task reduce_scatter(ReduceScatterArgs a, core::Comm& comm, int tag) {
  const void* input = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  std::vector<int> counts(a.recvcounts, a.recvcounts + comm.size);
  return reduce_then_scatter(input, a.recvbuf, std::move(counts), a.type, a.op, comm, tag);
}

nb::Task reduce_scatter_block(ReduceArgs a, core::Comm& comm, int tag) {
  const void* input = a.sendbuf == MPI_IN_PLACE ? a.recvbuf : a.sendbuf;
  std::vector<int> counts(static_cast<std::size_t>(comm.size), a.count);
  return reduce_then_scatter(input, a.recvbuf, std::move(counts), a.type, a.op, comm, tag);
}

}  // namespace gridmpi::coll::intra
