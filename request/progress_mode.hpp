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

}  // namespace gridmpi::request
