// What collective algorithms use: point-to-point on the communicator's hidden
// collective context, and the algorithm registry.  Owner: core/coll/.
//
// Every algorithm file is core/coll/<collective>_<algorithm>.cpp, opens with
// its restrictions and its alpha-beta cost, and registers itself by name.
// GRIDMPI_<COLL>_ALGORITHM=<name> forces one (e.g. GRIDMPI_BCAST_ALGORITHM=binomial).
#pragma once
#include <mpi.h>

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
// Waits for and releases every request (null entries are skipped).
void wait_all(std::span<request::Request*> requests);

}  // namespace gridmpi::coll
