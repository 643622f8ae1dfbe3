/* nbc_coll.h — runs the blocking collective tests (coll_*.c) on the
 * non-blocking collectives: included before a coll_*.c file, it turns every
 * MPI_<Coll>(args) into MPI_I<coll>(args, &request) followed by a
 * completion, alternately MPI_Wait, an MPI_Test loop and MPI_Waitall /
 * MPI_Waitany over a one-element array, so that the whole matrix of the
 * collective tests (sizes, roots, MPI_IN_PLACE, derived types, predefined,
 * user and non-commutative ops, three communicators) checks each
 * non-blocking schedule and every completion path.
 *
 * Usage: a tests/mpi/nbc_coll_<x>.c holding
 *     #include "nbc_coll.h"
 *     #include "coll_<x>.c"
 */
#ifndef GRIDMPI_TESTS_NBC_COLL_H
#define GRIDMPI_TESTS_NBC_COLL_H

#include <mpi.h>
#include <sched.h>

static int nbc_completions = 0;

/* Completes `request` (from a call that returned rc) in the next way. */
static inline int nbc_complete(int rc, MPI_Request *request)
{
    int flag = 0, index = -1;
    if (rc != MPI_SUCCESS)
        return rc;
    switch (nbc_completions++ % 4) {
    case 0:
        return MPI_Wait(request, MPI_STATUS_IGNORE);
    case 1:
        while (!flag) {
            rc = MPI_Test(request, &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return rc;
            /* Spin politely: CI runs 8 ranks on 2 cores, where a pure
             * busy loop would starve the ranks this one waits for. */
            if (!flag)
                sched_yield();
        }
        return request[0] == MPI_REQUEST_NULL ? MPI_SUCCESS : MPI_ERR_REQUEST;
    case 2:
        return MPI_Waitall(1, request, MPI_STATUSES_IGNORE);
    default:
        return MPI_Waitany(1, request, &index, MPI_STATUS_IGNORE);
    }
}

/* The request of the call being completed (calls are never nested). */
static MPI_Request nbc_request_ = MPI_REQUEST_NULL;
#define NBC_CALL(call) nbc_complete((call), &nbc_request_)

#define MPI_Barrier(comm) NBC_CALL(MPI_Ibarrier(comm, &nbc_request_))
#define MPI_Bcast(...) NBC_CALL(MPI_Ibcast(__VA_ARGS__, &nbc_request_))
#define MPI_Gather(...) NBC_CALL(MPI_Igather(__VA_ARGS__, &nbc_request_))
#define MPI_Gatherv(...) NBC_CALL(MPI_Igatherv(__VA_ARGS__, &nbc_request_))
#define MPI_Scatter(...) NBC_CALL(MPI_Iscatter(__VA_ARGS__, &nbc_request_))
#define MPI_Scatterv(...) NBC_CALL(MPI_Iscatterv(__VA_ARGS__, &nbc_request_))
#define MPI_Allgather(...) NBC_CALL(MPI_Iallgather(__VA_ARGS__, &nbc_request_))
#define MPI_Allgatherv(...) NBC_CALL(MPI_Iallgatherv(__VA_ARGS__, &nbc_request_))
#define MPI_Alltoall(...) NBC_CALL(MPI_Ialltoall(__VA_ARGS__, &nbc_request_))
#if defined(OPEN_MPI)
/* Open MPI 4.1.4 bug: MPI_Ialltoallv with MPI_IN_PLACE delivers wrong data
 * for large blocks (4 and 8 ranks); that case alone keeps the blocking call. */
static inline int nbc_alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls,
                                MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                                const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (sendbuf == MPI_IN_PLACE)
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    return NBC_CALL(MPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm, &nbc_request_));
}
#define MPI_Alltoallv nbc_alltoallv
#else
#define MPI_Alltoallv(...) NBC_CALL(MPI_Ialltoallv(__VA_ARGS__, &nbc_request_))
#endif
#if defined(MPICH_VERSION) || defined(MPICH_NAME)
/* MPICH 4.0.2 bug: MPI_Ialltoallw with MPI_IN_PLACE delivers wrong data;
 * that case alone keeps the blocking call. */
static inline int nbc_alltoallw(const void *sendbuf, const int *sendcounts, const int *sdispls,
                                const MPI_Datatype *sendtypes, void *recvbuf,
                                const int *recvcounts, const int *rdispls,
                                const MPI_Datatype *recvtypes, MPI_Comm comm)
{
    if (sendbuf == MPI_IN_PLACE)
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                              rdispls, recvtypes, comm);
    return NBC_CALL(MPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                   rdispls, recvtypes, comm, &nbc_request_));
}
#define MPI_Alltoallw nbc_alltoallw
#else
#define MPI_Alltoallw(...) NBC_CALL(MPI_Ialltoallw(__VA_ARGS__, &nbc_request_))
#endif
#define MPI_Reduce(...) NBC_CALL(MPI_Ireduce(__VA_ARGS__, &nbc_request_))
#define MPI_Allreduce(...) NBC_CALL(MPI_Iallreduce(__VA_ARGS__, &nbc_request_))
#define MPI_Reduce_scatter(...) NBC_CALL(MPI_Ireduce_scatter(__VA_ARGS__, &nbc_request_))
#define MPI_Reduce_scatter_block(...) NBC_CALL(MPI_Ireduce_scatter_block(__VA_ARGS__, &nbc_request_))
#define MPI_Scan(...) NBC_CALL(MPI_Iscan(__VA_ARGS__, &nbc_request_))
#define MPI_Exscan(...) NBC_CALL(MPI_Iexscan(__VA_ARGS__, &nbc_request_))

#endif
