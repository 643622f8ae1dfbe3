// Allreduce as a reduce to rank 0 followed by a broadcast from it, each with
// its own algorithm choice.
// Restrictions: none.
// Cost: that of the chosen reduce plus that of the chosen bcast, e.g.
// 2 ceil(log2 p) alpha + 2 log2 p n beta + log2 p n gamma with binomial trees.
#include "core/coll/algorithm.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"

namespace gridmpi::coll {

void allreduce_reduce_bcast(const ReduceArgs& a, core::Comm& comm) {
  const bool in_place = a.sendbuf == MPI_IN_PLACE;
  const std::size_t bytes = packed_size(a.count, a.type);
  // Off the root the reduce only reads its send buffer, so the receive
  // buffer can serve as the input there.
  const ReduceArgs to_root{comm.rank == 0 ? a.sendbuf : in_place ? a.recvbuf : a.sendbuf, a.recvbuf, a.count,
                           a.type, a.op, 0};
  // On a crowded host the linear reduce up to 4 KiB, unless one is forced
  // (MPI_Reduce alone takes the tree there now: select.cpp Crowded<reduce>).
  // 6 and 8 processes on 2 cores, 8 B - 4 KiB: linear reduce + linear bcast
  // 5.6-12.8 us over shared memory, 27.6-47.3 over TCP; with the tree's
  // reduce 6.7-17.1 and 34.7-55.8 (npb/README.md, Allreduce on a crowded
  // host).
  if (forced_algorithm<Kind::reduce>() == nullptr && crowded_reduce_bcast_linear_reduce(bytes, comm)) {
    reduce_linear(to_root, comm);
  } else {
    reduce(to_root.sendbuf, a.recvbuf, a.count, a.type, a.op, 0, comm);
  }
  // A crowded host's linear bcast on every level, unless one is forced:
  // after the linear reduce every receiver already waits, while MPI_Bcast
  // alone over TCP pipelines a tree across calls.  8 processes on 2 cores
  // over TCP, 8 B - 4 KiB: 40-47 us against 49-54 with the tree (the
  // reduce linear in both; npb/README.md, Allreduce on a crowded host).
  if (forced_algorithm<Kind::bcast>() == nullptr && crowded_reduce_bcast_linear_bcast(bytes, comm)) {
    bcast_linear(BcastArgs{a.recvbuf, a.count, a.type, 0}, comm);
    return;
  }
  bcast(a.recvbuf, a.count, a.type, 0, comm);
}

}  // namespace gridmpi::coll
