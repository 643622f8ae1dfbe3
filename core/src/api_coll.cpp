// C API of the blocking collectives: argument checks (coll_checks.hpp,
// shared with the non-blocking calls), then core/coll/: the selected
// algorithm on an intracommunicator, the schedule of inter.hpp run to
// completion (nb::run) on an intercommunicator.  Owner: core/src/
// (collectives).
#include "core/api.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/inter.hpp"
#include "core/coll/nbc.hpp"
#include "base/error.hpp"
#include "core/group.hpp"
#include "core/src/coll_checks.hpp"

namespace {

using gridmpi::core::Comm;
namespace coll = gridmpi::coll;
namespace core = gridmpi::core;
namespace nb = gridmpi::coll::nb;
namespace checks = gridmpi::core::coll_checks;

// Runs an intercommunicator schedule (made by `make(tag)`) to completion.
template <class Make>
void run_inter(Comm& comm, Make&& make) {
  nb::run(make(nb::next_tag(comm)));
}

}  // namespace

extern "C" int PMPI_Barrier(MPI_Comm comm) {
  return core::api_call(comm, "MPI_Barrier", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Barrier");
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::barrier(c, tag); });
    coll::barrier(c);
  });
}
GRIDMPI_WEAK(Barrier)

extern "C" int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Bcast", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Bcast");
    coll::BcastArgs args{buffer, count, datatype, root};
    checks::bcast(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::bcast(args, c, tag); });
    coll::bcast(buffer, count, datatype, root, c);
  });
}
GRIDMPI_WEAK(Bcast)

extern "C" int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Gather", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Gather");
    coll::GatherArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root};
    checks::gather(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::gather(args, c, tag); });
    coll::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c);
  });
}
GRIDMPI_WEAK(Gather)

extern "C" int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Gatherv", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Gatherv");
    coll::GathervArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root};
    checks::gatherv(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::gatherv(args, c, tag); });
    coll::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, c);
  });
}
GRIDMPI_WEAK(Gatherv)

extern "C" int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  return core::api_call(comm, "MPI_Scatter", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Scatter");
    coll::GatherArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root};
    checks::scatter(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::scatter(args, c, tag); });
    coll::scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c);
  });
}
GRIDMPI_WEAK(Scatter)

extern "C" int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Scatterv", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Scatterv");
    coll::ScattervArgs args{sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root};
    checks::scatterv(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::scatterv(args, c, tag); });
    coll::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, c);
  });
}
GRIDMPI_WEAK(Scatterv)

extern "C" int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return core::api_call(comm, "MPI_Allgather", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Allgather");
    coll::GatherArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0};
    checks::allgather(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::allgather(args, c, tag); });
    coll::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c);
  });
}
GRIDMPI_WEAK(Allgather)

extern "C" int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Allgatherv", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Allgatherv");
    coll::GathervArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, 0};
    checks::allgatherv(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::allgatherv(args, c, tag); });
    coll::allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, c);
  });
}
GRIDMPI_WEAK(Allgatherv)

extern "C" int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Alltoall", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Alltoall");
    coll::GatherArgs args{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0};
    checks::alltoall(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::alltoall(args, c, tag); });
    coll::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c);
  });
}
GRIDMPI_WEAK(Alltoall)

extern "C" int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Alltoallv", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Alltoallv");
    coll::AlltoallvArgs args{sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype};
    checks::alltoallv(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::alltoallv(args, c, tag); });
    coll::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, c);
  });
}
GRIDMPI_WEAK(Alltoallv)

extern "C" int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf,
                              const int recvcounts[], const int rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return core::api_call(comm, "MPI_Alltoallw", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Alltoallw");
    coll::AlltoallwArgs args{sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes};
    checks::alltoallw(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::alltoallw(args, c, tag); });
    coll::alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, c);
  });
}
GRIDMPI_WEAK(Alltoallw)

extern "C" int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Reduce", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Reduce");
    coll::ReduceArgs args{sendbuf, recvbuf, count, datatype, op, root};
    checks::reduce(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::reduce(args, c, tag); });
    coll::reduce(sendbuf, recvbuf, count, datatype, op, root, c);
  });
}
GRIDMPI_WEAK(Reduce)

extern "C" int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Allreduce", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Allreduce");
    coll::ReduceArgs args{sendbuf, recvbuf, count, datatype, op, 0};
    checks::allreduce(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::allreduce(args, c, tag); });
    coll::allreduce(sendbuf, recvbuf, count, datatype, op, c);
  });
}
GRIDMPI_WEAK(Allreduce)

extern "C" int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Reduce_scatter", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Reduce_scatter");
    coll::ReduceScatterArgs args{sendbuf, recvbuf, recvcounts, datatype, op};
    checks::reduce_scatter(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::reduce_scatter(args, c, tag); });
    coll::reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, c);
  });
}
GRIDMPI_WEAK(Reduce_scatter)

extern "C" int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Reduce_scatter_block", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Reduce_scatter_block");
    coll::ReduceArgs args{sendbuf, recvbuf, recvcount, datatype, op, 0};
    checks::reduce_scatter_block(args, c);
    if (c.is_inter()) return run_inter(c, [&](int tag) { return coll::inter::reduce_scatter_block(args, c, tag); });
    coll::reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, c);
  });
}
GRIDMPI_WEAK(Reduce_scatter_block)

extern "C" int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Scan", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Scan");
    coll::ReduceArgs args{sendbuf, recvbuf, count, datatype, op, 0};
    checks::scan(args, c);
    coll::scan(sendbuf, recvbuf, count, datatype, op, c);
  });
}
GRIDMPI_WEAK(Scan)

extern "C" int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Exscan", [&] {
    Comm& c = checks::collective_comm(comm, "MPI_Exscan");
    coll::ReduceArgs args{sendbuf, recvbuf, count, datatype, op, 0};
    checks::scan(args, c);
    coll::exscan(sendbuf, recvbuf, count, datatype, op, c);
  });
}
GRIDMPI_WEAK(Exscan)
