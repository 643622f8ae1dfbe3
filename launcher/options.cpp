#include "launcher/options.hpp"

#include <cerrno>
#include <cstdlib>

namespace gridmpi::launcher {

const char* const mpirun_usage =
    "usage: mpirun [-client K ADDR:PORT] [-np N] [-c FILE | -machinefile FILE] [-dryrun] [-showrank] [-nounix]\n"
    "              [-vendor NAME] [-progress poll|thread] program [args...]\n"
    "  -np N, -n N        number of processes in this cluster (default: the slots of the host file, else 1)\n"
    "  -c FILE            host file: one host per line, optional slot count, '#' comments\n"
    "  -machinefile FILE  same as -c (default: ./mpi_conf when it exists, else all ranks on localhost)\n"
    "  -dryrun            print the commands that would start the ranks, start nothing\n"
    "  -showrank          prefix every output line with the rank ([3] ...)\n"
    "  -nounix            no Unix-domain sockets between processes of one host\n"
    "  -client K ADDR:PORT  this cluster is IMPI client K (0..31) of the impi-server at ADDR:PORT (as printed\n"
    "                     by impi-server -server M); MPI programs only\n"
    "  -vendor NAME       start the ranks with the vendor MPI's own mpiexec: openmpi (ompi), mpich (hydra,\n"
    "                     mpich2) or a vendor defined in the site file (vendor.*); GRIDMPI_VENDOR\n"
    "  -progress MODE     progress mode of the ranks: poll or thread (progress.mode, GRIDMPI_PROGRESS)\n"
    "environment: _YAMPI_RSH (remote shell, '#' = fork), _YAMPI_CONFIG_FILE, _YAMPI_MPIRUN_SHOWRANK,\n"
    "  _YAMPI_MPIRUN_STARTUP_TIMEOUT, MPIROOT; with -client: IMPI_AUTH_NONE or IMPI_AUTH_KEY (required),\n"
    "  IMPI_SERVER_CONNECT_RETRY, IMPI_SERVER_CONNECT_SLEEP; see launcher/README.md\n";

namespace {

const char* const example = "e.g. mpirun -np 4 -c mpi_conf ./a.out";

// GridMPI flags we know but do not implement: flag -> number of values.
struct Unsupported {
  const char* flag;
  int values;
};
constexpr Unsupported unsupported[] = {
    {"-debug", 1}, {"-nr", 1},      {"-wid", 1},     {"-scrun", 1}, {"-nl", 1},
    {"-tv", 0},    {"-restart", 0}, {"-ckptdir", 1}, {"-arch", 1},
};

int parse_count(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v <= 0 || v > 1000000)
    throw UsageError(flag + " needs a positive process count, got '" + text + "'; " + example);
  return static_cast<int>(v);
}

}  // namespace

MpirunOptions parse_mpirun_options(const std::vector<std::string>& args) {
  MpirunOptions o;
  std::size_t i = 0;
  auto value = [&](const std::string& flag, const char* what) -> std::string {
    if (i + 1 >= args.size()) throw UsageError("option " + flag + " needs " + what + "; " + example);
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') break;
    if (a == "-np" || a == "-n") {
      o.np = parse_count(a, value(a, "a process count"));
    } else if (a == "-c" || a == "-machinefile" || a == "-hostfile" || a == "--hostfile") {
      o.hostfile = value(a, "a host file name");
      if (o.hostfile.empty()) throw UsageError("option " + a + " needs a host file name, got ''; " + example);
    } else if (a == "-dryrun") {
      o.dryrun = true;
    } else if (a == "-showrank") {
      o.showrank = true;
    } else if (a == "-nounix") {
      o.nounix = true;
    } else if (a == "-h" || a == "-help" || a == "--help") {
      o.help = true;
      return o;
    } else if (a == "-v" || a == "-version" || a == "--version") {
      o.version = true;
      return o;
    } else if (a == "-vendor") {
      o.vendor = value(a, "a vendor MPI name (openmpi, mpich, or one the site file defines)");
      if (o.vendor.empty())
        throw UsageError("-vendor needs a vendor MPI name, got ''; e.g. mpirun -vendor openmpi -np 4 ./a.out");
    } else if (a == "-progress") {
      o.progress = value(a, "a progress mode (poll or thread)");
      if (o.progress != "poll" && o.progress != "thread")
        throw UsageError("-progress needs poll or thread, got '" + o.progress +
                         "'; e.g. mpirun -progress thread -np 4 ./a.out");
    } else if (a == "-client") {
      std::string k = value(a, "a client number and ADDR:PORT");
      std::string address = value(a, "ADDR:PORT after the client number");
      char* end = nullptr;
      errno = 0;
      long client = std::strtol(k.c_str(), &end, 10);
      if (k.empty() || *end != '\0' || errno != 0 || client < 0 || client > 31)
        throw UsageError("-client needs a client number 0..31, got '" + k +
                         "'; e.g. mpirun -client 0 10.0.0.1:4000 -np 2 ./a.out");
      auto colon = address.rfind(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
        throw UsageError("-client needs ADDR:PORT as printed by impi-server, got '" + address +
                         "'; e.g. mpirun -client 0 10.0.0.1:4000 -np 2 ./a.out");
      std::string port_text = address.substr(colon + 1);
      errno = 0;
      long port = std::strtol(port_text.c_str(), &end, 10);
      if (*end != '\0' || errno != 0 || port < 1 || port > 65535 || port_text[0] == '+' || port_text[0] == '-')
        throw UsageError("-client needs ADDR:PORT with a port 1..65535, got '" + address +
                         "'; pass the ADDR:PORT impi-server printed");
      o.client = static_cast<int>(client);
      o.server_host = address.substr(0, colon);
      o.server_port = static_cast<int>(port);
    } else {
      for (const auto& u : unsupported) {
        if (a == u.flag) {
          throw UsageError("option " + a + " is not supported by gridmpi; remove it (see mpirun -help)");
        }
      }
      throw UsageError("unknown option '" + a + "'; run 'mpirun -help' for the list of options");
    }
  }
  for (; i < args.size(); ++i) o.program.push_back(args[i]);
  if (o.program.empty())
    throw UsageError("no program to run; usage: mpirun -np N [-c hostfile] program [args...]");
  return o;
}

}  // namespace gridmpi::launcher
