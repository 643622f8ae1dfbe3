// The "all" collectives on intercommunicators without reduction (MPI-3.1
// 5.2.2): Barrier, Allgather(v), Alltoall(v/w).  Each group receives what
// the other group sent.
//   barrier:      fan-in to each group's rank 0, the two leaders exchange an
//                 empty message, binomial fan-out in each group.
//   allgather(v): every process sends its block to the other group's rank 0,
//                 which receives them in place and broadcasts the whole
//                 buffer in its group (allgatherv: as one packed stream).
//   alltoall(v/w): pairwise, every process directly with every process of
//                 the other group.
// Cost (p, q = group sizes, n = one block): barrier 2 ceil(log2 p) + 1
// alpha; allgather q alpha + q n beta at a leader plus a binomial broadcast
// of q n; alltoall q alpha + q n beta per process.  Owner: core/coll/ (inter).
#include <climits>
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/inter.hpp"
#include "core/coll/inter_local.hpp"
#include "base/error.hpp"

namespace gridmpi::coll::inter {

nb::Task barrier(core::Comm& comm, int tag) {
  core::Comm& lc = local_comm(comm);
  co_await local_fanin(lc, local_tag(tag, 1));
  if (comm.rank == 0) {
    co_await wait_for(coll::irecv(nullptr, 0, MPI_BYTE, 0, tag, comm),
                      coll::isend(nullptr, 0, MPI_BYTE, 0, tag, comm));
  }
  co_await local_bcast(nullptr, 0, MPI_BYTE, lc, local_tag(tag, 2));
}

namespace {

// Leader part of allgather(v): my block to the other leader, and at rank 0
// every remote block into its place (count[i] elements at element displ[i]).
std::vector<request::Request*> exchange_blocks(const void* sendbuf, int sendcount,
                                               MPI_Datatype sendtype, void* recvbuf,
                                               const int* counts, const int* displs,
                                               int fixed_count, MPI_Datatype recvtype,
                                               core::Comm& comm, int tag) {
  std::vector<request::Request*> reqs;
  if (comm.rank == 0) {
    const MPI_Aint extent = shape(recvtype).extent;
    for (int i = 0; i < comm.peer_size(); ++i) {
      MPI_Aint at = counts ? displs[i] : static_cast<MPI_Aint>(i) * fixed_count;
      reqs.push_back(coll::irecv(element(recvbuf, at, extent), counts ? counts[i] : fixed_count,
                                 recvtype, i, tag, comm));
    }
  }
  reqs.push_back(coll::isend(sendbuf, sendcount, sendtype, 0, tag, comm));
  return reqs;
}

}  // namespace

nb::Task allgather(GatherArgs a, core::Comm& comm, int tag) {
  core::Comm& lc = local_comm(comm);
  const long long total = static_cast<long long>(a.recvcount) * comm.peer_size();
  if (total > INT_MAX)
    throw MpiError(MPI_ERR_COUNT, "intercommunicator allgather: recvcount times the remote group size exceeds INT_MAX; split the call");
  co_await nb::wait(exchange_blocks(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, nullptr,
                                    nullptr, a.recvcount, a.recvtype, comm, tag));
  co_await local_bcast(a.recvbuf, static_cast<int>(total), a.recvtype, lc, local_tag(tag, 1));
}

nb::Task allgatherv(GathervArgs a, core::Comm& comm, int tag) {
  core::Comm& lc = local_comm(comm);
  co_await nb::wait(exchange_blocks(a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts,
                                    a.displs, 0, a.recvtype, comm, tag));
  if (lc.size == 1) co_return;
  // The blocks travel in the group as one packed stream in rank order.
  const int q = comm.peer_size();
  const MPI_Aint extent = shape(a.recvtype).extent;
  std::size_t n = 0;
  for (int i = 0; i < q; ++i) n += packed_size(a.recvcounts[i], a.recvtype);
  Bytes stream(n);
  if (comm.rank == 0) {
    std::size_t at = 0;
    for (int i = 0; i < q; ++i) {
      pack(element(a.recvbuf, a.displs[i], extent), a.recvcounts[i], a.recvtype, stream.data() + at);
      at += packed_size(a.recvcounts[i], a.recvtype);
    }
  }
  co_await local_bcast(stream.data(), byte_count(n), MPI_BYTE, lc, local_tag(tag, 1));
  if (comm.rank != 0) {
    std::size_t at = 0;
    for (int i = 0; i < q; ++i) {
      unpack(stream.data() + at, a.recvcounts[i], a.recvtype, element(a.recvbuf, a.displs[i], extent));
      at += packed_size(a.recvcounts[i], a.recvtype);
    }
  }
}

nb::Task alltoall(GatherArgs a, core::Comm& comm, int tag) {
  const MPI_Aint sblock = static_cast<MPI_Aint>(a.sendcount) * shape(a.sendtype).extent;
  const MPI_Aint rblock = static_cast<MPI_Aint>(a.recvcount) * shape(a.recvtype).extent;
  const int q = comm.peer_size();
  std::vector<request::Request*> reqs;
  for (int i = 0; i < q; ++i)
    reqs.push_back(coll::irecv(at_bytes(a.recvbuf, i * rblock), a.recvcount, a.recvtype, i, tag, comm));
  for (int k = 0; k < q; ++k) {
    int i = (comm.rank + k) % q;  // spread the load over the other group
    reqs.push_back(coll::isend(at_bytes(a.sendbuf, i * sblock), a.sendcount, a.sendtype, i, tag, comm));
  }
  co_await nb::wait(std::move(reqs));
}

nb::Task alltoallv(AlltoallvArgs a, core::Comm& comm, int tag) {
  const MPI_Aint sext = shape(a.sendtype).extent, rext = shape(a.recvtype).extent;
  const int q = comm.peer_size();
  std::vector<request::Request*> reqs;
  for (int i = 0; i < q; ++i)
    reqs.push_back(coll::irecv(element(a.recvbuf, a.rdispls[i], rext), a.recvcounts[i],
                               a.recvtype, i, tag, comm));
  for (int k = 0; k < q; ++k) {
    int i = (comm.rank + k) % q;
    reqs.push_back(coll::isend(element(a.sendbuf, a.sdispls[i], sext), a.sendcounts[i],
                               a.sendtype, i, tag, comm));
  }
  co_await nb::wait(std::move(reqs));
}

nb::Task alltoallw(AlltoallwArgs a, core::Comm& comm, int tag) {
  const int q = comm.peer_size();
  std::vector<request::Request*> reqs;
  for (int i = 0; i < q; ++i)
    reqs.push_back(coll::irecv(at_bytes(a.recvbuf, a.rdispls[i]), a.recvcounts[i], a.recvtypes[i],
                               i, tag, comm));
  for (int k = 0; k < q; ++k) {
    int i = (comm.rank + k) % q;
    reqs.push_back(coll::isend(at_bytes(a.sendbuf, a.sdispls[i]), a.sendcounts[i], a.sendtypes[i],
                               i, tag, comm));
  }
  co_await nb::wait(std::move(reqs));
}

}  // namespace gridmpi::coll::inter
