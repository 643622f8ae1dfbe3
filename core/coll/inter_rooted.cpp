// Rooted collectives on intercommunicators (MPI-3.1 5.2.2): Bcast, Gather(v),
// Scatter(v) and Reduce.  The root (root == MPI_ROOT) talks to the other
// group; the rest of its group (MPI_PROC_NULL) does nothing.
//   bcast:   root -> remote rank 0, then a binomial broadcast in that group.
//   gather(v), scatter(v): linear, directly between the root and every
//            member of the other group (the root handles p blocks anyway).
//   reduce:  rank-ordered binomial reduction in the other group to its rank
//            0, which sends the result to the root.
// Cost (q = size of the other group, n = message): bcast and reduce
// (1 + ceil(log2 q)) alpha + (1 + ceil(log2 q)) n beta; gather/scatter
// q alpha + q n beta at the root.  Owner: core/coll/ (inter).
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/inter.hpp"
#include "core/coll/inter_local.hpp"

namespace gridmpi::coll::inter {

nb::Task bcast(BcastArgs a, core::Comm& comm, int tag) {
  if (a.root == MPI_PROC_NULL) co_return;
  if (a.root == MPI_ROOT) {
    co_await wait_for(coll::isend(a.buffer, a.count, a.type, 0, tag, comm));
    co_return;
  }
  core::Comm& lc = local_comm(comm);
  if (comm.rank == 0) co_await wait_for(coll::irecv(a.buffer, a.count, a.type, a.root, tag, comm));
  co_await local_bcast(a.buffer, a.count, a.type, lc, local_tag(tag, 1));
}

nb::Task gather(GatherArgs a, core::Comm& comm, int tag) {
  if (a.root == MPI_PROC_NULL) co_return;
  if (a.root != MPI_ROOT) {
    co_await wait_for(coll::isend(a.sendbuf, a.sendcount, a.sendtype, a.root, tag, comm));
    co_return;
  }
  const MPI_Aint block = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  std::vector<request::Request*> recvs;
  for (int i = 0; i < comm.peer_size(); ++i)
    recvs.push_back(coll::irecv(at_bytes(a.recvbuf, i * block), a.recvcount, a.recvtype, i, tag, comm));
  co_await nb::wait(std::move(recvs));
}

nb::Task gatherv(GathervArgs a, core::Comm& comm, int tag) {
  if (a.root == MPI_PROC_NULL) co_return;
  if (a.root != MPI_ROOT) {
    co_await wait_for(coll::isend(a.sendbuf, a.sendcount, a.sendtype, a.root, tag, comm));
    co_return;
  }
  const MPI_Aint extent = shape(a.recvtype).extent;
  std::vector<request::Request*> recvs;
  for (int i = 0; i < comm.peer_size(); ++i)
    recvs.push_back(coll::irecv(element(a.recvbuf, a.displs[i], extent), a.recvcounts[i],
                                a.recvtype, i, tag, comm));
  co_await nb::wait(std::move(recvs));
}

nb::Task scatter(GatherArgs a, core::Comm& comm, int tag) {
  if (a.root == MPI_PROC_NULL) co_return;
  if (a.root != MPI_ROOT) {
    co_await wait_for(coll::irecv(a.recvbuf, a.recvcount, a.recvtype, a.root, tag, comm));
    co_return;
  }
  const MPI_Aint block = static_cast<MPI_Aint>(a.sendcount) * shape(a.sendtype).extent;
  std::vector<request::Request*> sends;
  for (int i = 0; i < comm.peer_size(); ++i)
    sends.push_back(coll::isend(at_bytes(a.sendbuf, i * block), a.sendcount, a.sendtype, i, tag, comm));
  co_await nb::wait(std::move(sends));
}

nb::Task scatterv(ScattervArgs a, core::Comm& comm, int tag) {
  if (a.root == MPI_PROC_NULL) co_return;
  if (a.root != MPI_ROOT) {
    co_await wait_for(coll::irecv(a.recvbuf, a.recvcount, a.recvtype, a.root, tag, comm));
    co_return;
  }
  const MPI_Aint extent = shape(a.sendtype).extent;
  std::vector<request::Request*> sends;
  for (int i = 0; i < comm.peer_size(); ++i)
    sends.push_back(coll::isend(element(a.sendbuf, a.displs[i], extent), a.sendcounts[i],
                                a.sendtype, i, tag, comm));
  co_await nb::wait(std::move(sends));
}

nb::Task reduce(ReduceArgs a, core::Comm& comm, int tag) {
  if (a.root == MPI_PROC_NULL) co_return;
  if (a.root == MPI_ROOT) {
    co_await wait_for(coll::irecv(a.recvbuf, a.count, a.type, 0, tag, comm));
    co_return;
  }
  core::Comm& lc = local_comm(comm);
  TypedBuffer result(a.count, a.type);
  co_await local_reduce(a.sendbuf, result, a.count, a.type, a.op, lc, local_tag(tag, 1));
  if (comm.rank == 0) co_await wait_for(coll::isend(result.get(), a.count, a.type, a.root, tag, comm));
}

}  // namespace gridmpi::coll::inter
