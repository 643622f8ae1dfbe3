// mpirun's and rpim's parameters.  Declared in a library source (part of
// libmpi) rather than in mpirun.cpp so that gridmpi-info lists them and MPI
// processes accept them in a site file (see conf/README.md).
#pragma once
#include <cstdint>
#include <string>

#include "conf/registry.hpp"

namespace gridmpi::launcher::settings {

extern const conf::Param<std::string> config_file;        // _YAMPI_CONFIG_FILE
extern const conf::Param<std::int64_t> startup_timeout;   // _YAMPI_MPIRUN_STARTUP_TIMEOUT
extern const conf::Param<std::int64_t> startup_limit;     // mpirun.startup_limit
extern const conf::Param<std::int64_t> job_timeout;       // MPIEXEC_TIMEOUT (as MPICH / Open MPI)
extern const conf::Param<double> terminate_grace;         // _YAMPI_MPIRUN_TERMINATE_SLEEP
extern const conf::Param<bool> show_rank;                 // _YAMPI_MPIRUN_SHOWRANK
extern const conf::Param<std::string> remote_shell;       // _YAMPI_RSH
extern const conf::Param<std::int64_t> max_starting;      // rpim.max_starting_sessions
extern const conf::Param<std::string> envs_list;          // _YAMPI_MPIRUN_ENVSLIST
extern const conf::Param<bool> change_dir;                // _YAMPI_MPIRUN_CHDIR
extern const conf::Param<std::string> control_address;    // mpirun.address
extern const conf::Param<std::int64_t> control_port;      // _YAMPI_MPIRUN_PORT
// mpirun -client (the IMPI client agent, impi/client.hpp)
extern const conf::Param<std::int64_t> server_connect_retry;  // IMPI_SERVER_CONNECT_RETRY
extern const conf::Param<double> server_connect_sleep;        // IMPI_SERVER_CONNECT_SLEEP
extern const conf::Param<std::int64_t> impi_startup_timeout;  // impi.startup_timeout
// mpirun -vendor NAME: start the job with a vendor MPI's own mpiexec (rpim/vendor.hpp)
extern const conf::Param<std::string> vendor_name;            // GRIDMPI_VENDOR
extern const conf::Param<std::string> vendor_mpiexec;         // vendor.mpiexec
extern const conf::Param<std::string> vendor_plugin;          // GRIDMPI_VENDOR_PLUGIN
extern const conf::Param<std::string> vendor_style;           // vendor.style: openmpi | mpich
extern const conf::Param<std::string> vendor_mpiexec_args;    // vendor.mpiexec_args
extern const conf::Param<std::string> vendor_rank_env;        // vendor.rank_env

}  // namespace gridmpi::launcher::settings
