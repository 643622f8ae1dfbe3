// Neighbourhood collectives (MPI-3.1 7.6, 7.7) on a communicator with a
// process topology.  Owner: topologies (core/coll/neighbor.cpp).
//
// Each call returns the schedule; the C API runs it (nb::run, blocking) or
// starts it (nb::start, non-blocking) with the tag of nb::next_tag(comm).
// Arguments are assumed valid (core/src/api_topo.cpp checks them); arrays
// are indexed by neighbour: sources (indegree) on the receive side,
// destinations (outdegree) on the send side, in the order of
// core::neighborhood().  MPI_IN_PLACE is not defined for these collectives.
// The user's arrays are copied, so the caller may reuse them at once (the
// buffers themselves, of course, not before completion).
#pragma once
#include <mpi.h>

#include "core/coll/nbc.hpp"
#include "core/group.hpp"

namespace gridmpi::coll {

nb::Task neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, core::Comm& comm, int tag);
nb::Task neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                             core::Comm& comm, int tag);
nb::Task neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, core::Comm& comm, int tag);
nb::Task neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, core::Comm& comm, int tag);
// Displacements in bytes, one datatype per neighbour.
nb::Task neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            core::Comm& comm, int tag);

}  // namespace gridmpi::coll
