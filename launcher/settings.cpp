#include "launcher/settings.hpp"

#include "rpim/method.hpp"

namespace gridmpi::launcher::settings {

const conf::Param<std::string> config_file{
    "mpirun.config_file", "mpi_conf", "",
    "host file used when -c is not given (the default ./mpi_conf is optional; a file named here must exist)",
    conf::Level::user, {"_YAMPI_CONFIG_FILE"}};
const conf::Param<std::int64_t> startup_timeout{
    "mpirun.startup_timeout", 60, "seconds",
    "how long a rank may take to connect to mpirun (MPI_Init) once another rank has; 0 = no limit",
    conf::Level::user, {"_YAMPI_MPIRUN_STARTUP_TIMEOUT"}};
const conf::Param<std::int64_t> startup_limit{
    "mpirun.startup_limit", 600, "seconds",
    "how long a rank that is running (using CPU time) may take to connect to mpirun once another rank has; "
    "mpirun.startup_timeout counts only while it is idle; 0 = no limit",
    conf::Level::user};
const conf::Param<std::int64_t> job_timeout{
    "mpirun.timeout", 0, "seconds",
    "stop the whole job (exit status 255) when it runs longer than this; 0 = no limit",
    conf::Level::user, {"MPIEXEC_TIMEOUT"}};
const conf::Param<double> terminate_grace{
    "mpirun.terminate_grace", 2.0, "seconds",
    "when stopping a job: time between SIGTERM and SIGKILL", conf::Level::tuner,
    {"_YAMPI_MPIRUN_TERMINATE_SLEEP"}};
const conf::Param<bool> show_rank{"mpirun.showrank", false, "",
                                  "prefix every line of output with the rank (\"[3] \")", conf::Level::user,
                                  {"_YAMPI_MPIRUN_SHOWRANK"}};
const conf::Param<std::string> remote_shell{
    "rpim.rsh", rpim::default_remote_shell, "",
    "remote shell (with options) for hosts other than this one; '#' = start every rank locally",
    conf::Level::user, {"_YAMPI_RSH"}};
const conf::Param<std::int64_t> max_starting{
    "rpim.max_starting_sessions", 8, "",
    "remote shell sessions being set up at once (sshd refuses connections beyond its MaxStartups); 0 = no cap",
    conf::Level::tuner};
const conf::Param<std::string> envs_list{
    "mpirun.envs_list", "", "",
    "names of extra environment variables (comma or colon separated) passed to ranks on remote hosts",
    conf::Level::user, {"_YAMPI_MPIRUN_ENVSLIST"}};
const conf::Param<bool> change_dir{"mpirun.chdir", true, "",
                                   "ranks on remote hosts start in mpirun's working directory",
                                   conf::Level::user, {"_YAMPI_MPIRUN_CHDIR"}};
const conf::Param<std::string> control_address{
    "mpirun.address", "", "",
    "address the ranks use to reach mpirun's control service; default: chosen per host by routing",
    conf::Level::tuner};
const conf::Param<std::int64_t> control_port{"mpirun.port", 0, "",
                                             "port of mpirun's control service; 0 = any free port",
                                             conf::Level::tuner, {"_YAMPI_MPIRUN_PORT"}};

const conf::Param<std::int64_t> server_connect_retry{
    "impi.server_connect_retry", 10, "",
    "mpirun -client: further attempts to reach impi-server after a failed connect (the server may start a little "
    "later)",
    conf::Level::user, {"IMPI_SERVER_CONNECT_RETRY"}};
const conf::Param<double> server_connect_sleep{
    "impi.server_connect_sleep", 1.0, "seconds", "mpirun -client: pause between two attempts to reach impi-server",
    conf::Level::user, {"IMPI_SERVER_CONNECT_SLEEP"}};
const conf::Param<std::int64_t> impi_startup_timeout{
    "impi.startup_timeout", 300, "seconds",
    "mpirun -client: how long the start-up through impi-server may take, from joining it to its DONE (every "
    "cluster's mpirun must be started within it); 0 = no limit",
    conf::Level::user};

// The vendor launcher (mpirun -vendor NAME, rpim/vendor.hpp).  A site with
// another MPI defines it with the other vendor.* keys ([vendor] in the site
// file); for the built-in names they override the built-in values.
const conf::Param<std::string> vendor_name{
    "vendor.name", "", "",
    "start the ranks with this vendor MPI's own mpiexec (openmpi, mpich, or a name defined by the other vendor.* "
    "keys); empty or none = gridmpi's own start-up",
    conf::Level::user, {"GRIDMPI_VENDOR"}};
const conf::Param<std::string> vendor_mpiexec{
    "vendor.mpiexec", "", "",
    "the vendor's mpiexec command with any fixed options (default: mpiexec.openmpi / mpiexec.mpich)",
    conf::Level::user};
const conf::Param<std::string> vendor_plugin{
    "vendor.plugin", "", "",
    "the vendor plug-in (default: $MPIROOT/lib/gridmpi/vendor/libgridmpi-vendor-NAME.so); mpirun -vendor gives "
    "the ranks its absolute path",
    conf::Level::user};
const conf::Param<std::string> vendor_style{
    "vendor.style", "", "",
    "the family of the vendor's mpiexec, which decides its options and host-file form: openmpi (-x, "
    "'host slots=N') or mpich (hydra: -genvlist, 'host:N'); default: the built-in vendor's own",
    conf::Level::user};
const conf::Param<std::string> vendor_mpiexec_args{
    "vendor.mpiexec_args", "", "",
    "extra options for the vendor's mpiexec, placed before the program (words split like a shell, no expansion)",
    conf::Level::user};
const conf::Param<std::string> vendor_rank_env{
    "vendor.rank_env", "", "",
    "the variable in which the vendor's mpiexec gives each process its rank (default: OMPI_COMM_WORLD_RANK "
    "for the openmpi style, PMI_RANK for the mpich style)",
    conf::Level::developer};

}  // namespace gridmpi::launcher::settings
