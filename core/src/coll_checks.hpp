// Argument checks of the collective C API, shared by the blocking calls
// (api_coll.cpp) and the non-blocking ones (api_coll_nb.cpp) so that the two
// cannot drift.  Owner: core/src/ (collectives).
//
// Only what the standard makes significant on the calling rank is checked
// (e.g. the receive side of MPI_Gather only at the root), so a program that
// passes garbage where the standard says "ignored" still works.  On an
// intercommunicator the rules of MPI-3.1 5.2.2 apply: root is MPI_ROOT,
// MPI_PROC_NULL or a rank of the remote group, counts arrays are indexed by
// the remote group (by the local group for Reduce_scatter), MPI_IN_PLACE is
// refused, and Scan/Exscan are erroneous (MPI_ERR_COMM).
#pragma once
#include <mpi.h>

#include "core/coll/algorithm.hpp"
#include "core/group.hpp"

namespace gridmpi::core::coll_checks {

// MPI is initialized and `handle` names a communicator.
Comm& collective_comm(MPI_Comm handle, const char* function);

void bcast(const coll::BcastArgs& a, const Comm& comm);
void gather(const coll::GatherArgs& a, const Comm& comm);
void gatherv(const coll::GathervArgs& a, const Comm& comm);
void scatter(const coll::GatherArgs& a, const Comm& comm);
void scatterv(const coll::ScattervArgs& a, const Comm& comm);
void allgather(const coll::GatherArgs& a, const Comm& comm);
void allgatherv(const coll::GathervArgs& a, const Comm& comm);
void alltoall(const coll::GatherArgs& a, const Comm& comm);
void alltoallv(const coll::AlltoallvArgs& a, const Comm& comm);
void alltoallw(const coll::AlltoallwArgs& a, const Comm& comm);
void reduce(const coll::ReduceArgs& a, const Comm& comm);
// Allreduce and Reduce_scatter_block (a.count = the block).
void allreduce(const coll::ReduceArgs& a, const Comm& comm);
void reduce_scatter_block(const coll::ReduceArgs& a, const Comm& comm);
void reduce_scatter(const coll::ReduceScatterArgs& a, const Comm& comm);
// Scan and Exscan (refused on intercommunicators).
void scan(const coll::ReduceArgs& a, const Comm& comm);

// The dynamic multicast (GMPI_Mcast and GMPI_Mcast_recv, blocking or not):
// an intracommunicator, a count and a committed datatype; for a receive the
// root is a rank of comm or MPI_ANY_SOURCE.
void mcast(int count, MPI_Datatype type, const Comm& comm);
void mcast_root(int root, const Comm& comm);

// A non-blocking call's request argument.
void request_out(const MPI_Request* request);

}  // namespace gridmpi::core::coll_checks
