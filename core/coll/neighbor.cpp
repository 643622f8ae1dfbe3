// Neighbourhood collectives (neighbor.hpp): every call becomes one list of
// send blocks and one of receive blocks, exchanged by a single schedule that
// posts everything at once.  Owner: topologies.
//
// Restrictions: none.  Cost: max(indegree, outdegree) alpha + max(bytes
// sent, bytes received) beta per rank.
//
// Matching.  All messages of one call share its tag, so two blocks between
// the same pair of processes are told apart by order (messages between two
// processes do not overtake).  Graph and distributed graph: the k-th edge
// from a process meets the k-th edge to it, so receives and sends are posted
// in list order.  Cartesian: the block sent in the negative direction of a
// dimension arrives in the receiver's positive-direction block and vice
// versa; when both directions reach the same process (periodic extent 1 or
// 2) the receives of each dimension are posted positive first, which pairs
// the sender's first (negative) block with the receiver's positive slot.
#include "core/coll/neighbor.hpp"

#include <exception>
#include <utility>
#include <vector>

#include "core/coll/coll.hpp"
#include "core/coll/util.hpp"
#include "core/topo.hpp"

namespace gridmpi::coll {

namespace {

struct Block {
  const void* buf;  // receive blocks write through it
  int count;
  MPI_Datatype type;
};

nb::Task exchange(core::Neighborhood hood, std::vector<Block> sends, std::vector<Block> recvs,
                  core::Comm& comm, int tag) {
  std::vector<request::Request*> pending;
  pending.reserve(sends.size() + recvs.size());
  std::exception_ptr failure;
  try {
    for (std::size_t k = 0; k < recvs.size(); ++k) {
      std::size_t i = hood.swap_receive_pairs ? (k ^ 1) : k;
      if (hood.sources[i] == MPI_PROC_NULL) continue;
      const Block& b = recvs[i];
      pending.push_back(irecv(const_cast<void*>(b.buf), b.count, b.type, hood.sources[i], tag, comm));
    }
    for (std::size_t i = 0; i < sends.size(); ++i) {
      if (hood.destinations[i] == MPI_PROC_NULL) continue;
      const Block& b = sends[i];
      pending.push_back(isend(b.buf, b.count, b.type, hood.destinations[i], tag, comm));
    }
  } catch (...) {
    failure = std::current_exception();
  }
  // On a failure to post, what was posted still completes (the peers run the
  // same call) before the error is reported.
  co_await nb::wait(std::move(pending));
  if (failure) std::rethrow_exception(failure);
}

core::Neighborhood neighborhood_of(const core::Comm& comm) {
  return core::neighborhood(*comm.topology, comm.rank);
}

}  // namespace

nb::Task neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, core::Comm& comm, int tag) {
  core::Neighborhood hood = neighborhood_of(comm);
  const MPI_Aint extent = shape(recvtype).extent;
  std::vector<Block> sends(hood.destinations.size(), Block{sendbuf, sendcount, sendtype});
  std::vector<Block> recvs;
  for (std::size_t i = 0; i < hood.sources.size(); ++i)
    recvs.push_back({element(recvbuf, static_cast<MPI_Aint>(i) * recvcount, extent), recvcount, recvtype});
  return exchange(std::move(hood), std::move(sends), std::move(recvs), comm, tag);
}

nb::Task neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                             core::Comm& comm, int tag) {
  core::Neighborhood hood = neighborhood_of(comm);
  const MPI_Aint extent = shape(recvtype).extent;
  std::vector<Block> sends(hood.destinations.size(), Block{sendbuf, sendcount, sendtype});
  std::vector<Block> recvs;
  for (std::size_t i = 0; i < hood.sources.size(); ++i)
    recvs.push_back({element(recvbuf, displs[i], extent), recvcounts[i], recvtype});
  return exchange(std::move(hood), std::move(sends), std::move(recvs), comm, tag);
}

nb::Task neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, core::Comm& comm, int tag) {
  core::Neighborhood hood = neighborhood_of(comm);
  const MPI_Aint send_extent = shape(sendtype).extent, recv_extent = shape(recvtype).extent;
  std::vector<Block> sends, recvs;
  for (std::size_t i = 0; i < hood.destinations.size(); ++i)
    sends.push_back({element(sendbuf, static_cast<MPI_Aint>(i) * sendcount, send_extent), sendcount, sendtype});
  for (std::size_t i = 0; i < hood.sources.size(); ++i)
    recvs.push_back({element(recvbuf, static_cast<MPI_Aint>(i) * recvcount, recv_extent), recvcount, recvtype});
  return exchange(std::move(hood), std::move(sends), std::move(recvs), comm, tag);
}

nb::Task neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, core::Comm& comm, int tag) {
  core::Neighborhood hood = neighborhood_of(comm);
  const MPI_Aint send_extent = shape(sendtype).extent, recv_extent = shape(recvtype).extent;
  std::vector<Block> sends, recvs;
  for (std::size_t i = 0; i < hood.destinations.size(); ++i)
    sends.push_back({element(sendbuf, sdispls[i], send_extent), sendcounts[i], sendtype});
  for (std::size_t i = 0; i < hood.sources.size(); ++i)
    recvs.push_back({element(recvbuf, rdispls[i], recv_extent), recvcounts[i], recvtype});
  return exchange(std::move(hood), std::move(sends), std::move(recvs), comm, tag);
}

nb::Task neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            core::Comm& comm, int tag) {
  core::Neighborhood hood = neighborhood_of(comm);
  std::vector<Block> sends, recvs;
  for (std::size_t i = 0; i < hood.destinations.size(); ++i)
    sends.push_back({at_bytes(sendbuf, sdispls[i]), sendcounts[i], sendtypes[i]});
  for (std::size_t i = 0; i < hood.sources.size(); ++i)
    recvs.push_back({at_bytes(recvbuf, rdispls[i]), recvcounts[i], recvtypes[i]});
  return exchange(std::move(hood), std::move(sends), std::move(recvs), comm, tag);
}

}  // namespace gridmpi::coll
