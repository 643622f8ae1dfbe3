// What collective algorithms use: point-to-point on the communicator's hidden
// collective context, and the algorithm registry.  Owner: core/coll/.
//
// Every algorithm file is core/coll/<collective>_<algorithm>.cpp, opens with
// its restrictions and its alpha-beta cost, and registers itself by name.
// GRIDMPI_<COLL>_ALGORITHM=<name> forces one (e.g. GRIDMPI_BCAST_ALGORITHM=binomial).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <span>

#include "core/group.hpp"

namespace gridmpi::request { struct Request; }

namespace gridmpi::coll {

// Blocking and non-blocking point-to-point on comm.coll_context().  `rank` is
// a rank of comm (remote group for intercommunicators).  Tags are private to
// the collective context; use small constants per algorithm.
void send(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm);
void recv(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
          MPI_Status* status = nullptr);
void sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
              void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
              core::Comm& comm, MPI_Status* status = nullptr);
request::Request* isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                        core::Comm& comm);
request::Request* irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                        core::Comm& comm);
// send and recv on another context of comm: only for a peer's dialect that
// needs it (the IMPI Reduce with a LAM/MPI client, core/coll/impi_reduce.cpp).
void send_in(std::uint32_t context, const void* buf, int count, MPI_Datatype type, int dest, int tag,
             core::Comm& comm);
void recv_in(std::uint32_t context, void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
             MPI_Status* status = nullptr);
request::Request* irecv_in(std::uint32_t context, void* buf, int count, MPI_Datatype type, int source, int tag,
                           core::Comm& comm);
// Waits for and releases every request (null entries are skipped).
void wait_all(std::span<request::Request*> requests);

}  // namespace gridmpi::coll

// ---- collective entry points (intracommunicators) --------------------------
// What the C API (core/src/api_coll.cpp) and other parts of the library call.
// Arguments are assumed valid (the C API checks them); MPI_IN_PLACE has its
// per-collective MPI meaning.  Each call picks an algorithm (forced by
// GRIDMPI_<COLL>_ALGORITHM, else the default table in core/coll/select.cpp)
// and runs it on comm.coll_context().
namespace gridmpi::coll {

void barrier(core::Comm& comm);
void bcast(void* buffer, int count, MPI_Datatype type, int root, core::Comm& comm);
void gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            int recvcount, MPI_Datatype recvtype, int root, core::Comm& comm);
void gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
             core::Comm& comm);
void scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, core::Comm& comm);
void scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
              MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
              int root, core::Comm& comm);
void allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, core::Comm& comm);
void allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                core::Comm& comm);
void alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, core::Comm& comm);
void alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
               const int rdispls[], MPI_Datatype recvtype, core::Comm& comm);
void alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
               const int rdispls[], const MPI_Datatype recvtypes[], core::Comm& comm);
void reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            int root, core::Comm& comm);
void allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               core::Comm& comm);
void reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                    MPI_Datatype type, MPI_Op op, core::Comm& comm);
void reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type,
                          MPI_Op op, core::Comm& comm);
void scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
          core::Comm& comm);
void exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            core::Comm& comm);

}  // namespace gridmpi::coll
