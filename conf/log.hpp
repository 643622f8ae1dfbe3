// Logging through spdlog.  Level from GRIDMPI_LOG_LEVEL
// (trace|debug|info|warn|error|off; default warn).  Messages go to stderr and
// start with "gridmpi[rank N pid P]:".  Owner: conf/.
#pragma once
#include <spdlog/spdlog.h>

namespace gridmpi {

spdlog::logger& log();
// Sets the rank shown in the prefix once it is known (MPI_Init).
void set_log_rank(int rank);

}  // namespace gridmpi
