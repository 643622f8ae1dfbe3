// Which progress mode this process runs in (docs/design.md section 3 and
// p2p::ProgressMode): the parameter `progress.mode` (GRIDMPI_PROGRESS, the
// site file, `mpirun -progress`), "poll" by default.
#pragma once
#include "p2p/transport.hpp"

namespace gridmpi::request {

// Reads progress.mode; throws MpiError(MPI_ERR_OTHER) with the allowed
// values when it is set to anything else.
p2p::ProgressMode progress_mode_setting();
const char* progress_mode_name(p2p::ProgressMode mode) noexcept;

// Whether a poll-mode waiter gives its core away (sched_yield) in every idle
// round instead of spinning: the parameter `progress.yield` (on, off, or
// auto = when this host runs more ranks of the job than it has cores for
// them: mpirun's count of the host's ranks, _YAMPI_LOCAL_NPROCS, against
// the larger of sched_getaffinity and mpirun's own, _YAMPI_LOCAL_CORES).  Throws MpiError(MPI_ERR_OTHER) for a bad value.
bool yield_when_idle_setting();

// Whether every process this mpirun started runs on one host with more than
// two of them per core it may use (_YAMPI_NPROCS = _YAMPI_LOCAL_NPROCS >
// 2 x _YAMPI_LOCAL_CORES).  Built from what mpirun gives every process of
// the job alike, so all of them get the same answer (the collectives choose
// their algorithms by it).  False when mpirun did not say.
bool job_crowded() noexcept;

// When every process this mpirun started runs on one host (_YAMPI_NPROCS =
// _YAMPI_LOCAL_NPROCS): that host's cores (_YAMPI_LOCAL_CORES); else, or when
// mpirun did not say, 0.  The same at every process of the job (processor
// names cannot tell hosts apart: network-namespace "hosts" share one).
long job_host_cores() noexcept;

}  // namespace gridmpi::request
