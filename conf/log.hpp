// Logging through spdlog.  Level from GRIDMPI_LOG_LEVEL
// (trace|debug|info|warn|error|off; default warn).  Messages go to stderr and
// start with "gridmpi[rank N pid P]:".  Owner: conf/.
//
// Levels (style.md): info = lifecycle, debug = per object, trace = per
// operation.  log() never throws: a malformed log.level is reported once as
// a warning and the default is used.  _YAMPI_PRINTINFO (any value) selects
// debug when log.level is not set, as GridMPI's tracing switch did.
#pragma once
#include <spdlog/spdlog.h>

#include <string_view>

namespace gridmpi {

spdlog::logger& log();
// Sets the rank shown in the prefix once it is known (MPI_Init).  Before
// that the prefix carries the rank mpirun exported (_YAMPI_MYRANK), or none.
void set_log_rank(int rank);
// Sets the program named in the prefix; "gridmpi" unless a tool says
// otherwise (mpirun: "mpirun[pid P]: ...").
void set_log_program(std::string_view name);
// Reads log.level again (tests, after changing the environment and calling
// conf::reset_cache_for_tests()).
void reload_log_level_for_tests();

}  // namespace gridmpi
