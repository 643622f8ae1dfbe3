// MPI_Comm_disconnect's wait.  Owner: request/.
#pragma once
#include <mpi.h>

#include "request/request.hpp"

namespace gridmpi::request {

// Progresses until no operation on `comm` is pending (sends, freed requests
// and buffered copies included, non-blocking collectives, receives a message
// has matched), except receives that no message matches yet: they stay
// pending as after MPI_Comm_free (a later message completes them, MPI_Cancel
// cancels them).  Waiting for those could hang a process for good, and the
// standard requires everything to be matched before MPI_Comm_disconnect
// (MPI-3.1 10.5.4).
void wait_for_comm(Engine& engine, MPI_Comm comm);

}  // namespace gridmpi::request
