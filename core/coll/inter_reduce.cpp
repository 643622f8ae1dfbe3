// Reductions between the groups of an intercommunicator (MPI-3.1 5.9.5,
// 5.10): Allreduce, Reduce_scatter, Reduce_scatter_block.  Each group
// reduces its data in rank order to its rank 0 (binomial, so
// non-commutative ops are safe), the two leaders exchange the results, and
// each leader hands the other group's result to its own group: a binomial
// broadcast (allreduce) or a linear scatter by recvcounts (reduce_scatter,
// reduce_scatter_block).
// Cost (p = my group, n = the vector): 2 ceil(log2 p) + 1 alpha and about
// 2 log2(p) n beta for allreduce; reduce_scatter ends with p - 1 messages
// from the leader instead of the broadcast.  Owner: core/coll/ (inter).
#include <climits>
#include <numeric>
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/inter.hpp"
#include "core/coll/inter_local.hpp"
#include "base/error.hpp"

namespace gridmpi::coll::inter {

namespace {

// My group's reduction to the leader, then the leaders swap: afterwards the
// leader's `theirs` holds the other group's reduction of count elements.
nb::Task reduce_and_swap(const void* sendbuf, void* theirs, int count, MPI_Datatype type,
                         MPI_Op op, core::Comm& comm, int tag) {
  core::Comm& lc = local_comm(comm);
  TypedBuffer mine(count, type);
  co_await local_reduce(sendbuf, mine, count, type, op, lc, local_tag(tag, 1));
  if (comm.rank == 0) {
    co_await wait_for(coll::irecv(theirs, count, type, 0, tag, comm),
                      coll::isend(mine.get(), count, type, 0, tag, comm));
  }
}

// Scatter of the other group's reduction (counts[i] elements to rank i).
nb::Task reduce_scatter_counts(const void* sendbuf, void* recvbuf, std::vector<int> counts,
                               MPI_Datatype type, MPI_Op op, core::Comm& comm, int tag) {
  long long sum = std::accumulate(counts.begin(), counts.end(), 0LL);
  if (sum > INT_MAX)
    throw MpiError(MPI_ERR_COUNT, "intercommunicator reduce_scatter: the sum of recvcounts exceeds INT_MAX; split the call");
  const int total = static_cast<int>(sum);
  std::vector<int> displs(counts.size());
  std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), 0);
  TypedBuffer theirs(comm.rank == 0 ? total : 0, type);
  co_await reduce_and_swap(sendbuf, theirs.get(), total, type, op, comm, tag);
  co_await local_scatterv(theirs.get(), counts.data(), displs.data(), type, recvbuf,
                          local_comm(comm), local_tag(tag, 2));
}

}  // namespace

nb::Task allreduce(ReduceArgs a, core::Comm& comm, int tag) {
  co_await reduce_and_swap(a.sendbuf, a.recvbuf, a.count, a.type, a.op, comm, tag);
  co_await local_bcast(a.recvbuf, a.count, a.type, local_comm(comm), local_tag(tag, 2));
}

nb::Task reduce_scatter(ReduceScatterArgs a, core::Comm& comm, int tag) {
  std::vector<int> counts(a.recvcounts, a.recvcounts + comm.size);
  co_await reduce_scatter_counts(a.sendbuf, a.recvbuf, std::move(counts), a.type, a.op, comm, tag);
}

nb::Task reduce_scatter_block(ReduceArgs a, core::Comm& comm, int tag) {
  std::vector<int> counts(static_cast<std::size_t>(comm.size), a.count);
  co_await reduce_scatter_counts(a.sendbuf, a.recvbuf, std::move(counts), a.type, a.op, comm, tag);
}

}  // namespace gridmpi::coll::inter
