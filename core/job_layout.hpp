// The cluster structure of the job (boot/job_layout.hpp), as core keeps it:
// set once by MPI_Init (core/runtime.cpp) before any communicator exists;
// read by communicator creation (the IMPI context-id rule) and by the
// collectives (the IMPI two-tier algorithms on communicators that span
// clients).  Owner: core/runtime.cpp.
#pragma once
#include <mpi.h>

#include "boot/job_layout.hpp"

namespace gridmpi::core {

using JobLayout = boot::JobLayout;

// Valid from MPI_Init on (a default single-client layout before).
const JobLayout& job_layout() noexcept;
void set_job_layout(JobLayout layout);

// Whether the communicator's processes (both groups of an
// intercommunicator) belong to more than one client.  Such communicators
// are "non-native" in IMPI's words: MPI_Pack on them produces external32.
bool spans_clients(MPI_Comm comm);
struct Comm;
bool spans_clients(const Comm& comm);

}  // namespace gridmpi::core
