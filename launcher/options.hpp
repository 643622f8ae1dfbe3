// mpirun's command line (GridMPI's flags, gridmpi-conventions.md §1.3).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace gridmpi::launcher {

// what() is "<cause>; <fix>", printed after "mpirun: ".
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MpirunOptions {
  int np = 0;  // 0 = not given
  std::string hostfile;  // -c / -machinefile; "" = not given
  bool dryrun = false;
  bool showrank = false;
  bool nounix = false;
  bool help = false;
  bool version = false;
  // -client K ADDR:PORT: this mpirun is IMPI client K of the impi-server there.
  int client = -1;  // -1 = not a multi-cluster run
  std::string server_host;
  int server_port = 0;
  // -vendor NAME: start the ranks with that vendor MPI's own mpiexec (the
  // poe method, rpim/vendor.hpp); "" = not given.  Sets vendor.name.
  std::string vendor;
  // -progress poll|thread: sets progress.mode for the ranks; "" = not given.
  std::string progress;
  std::vector<std::string> program;  // the program and its arguments
};

// args excludes argv[0].  Options end at the first word that is not an
// option (the program) or after "--".
MpirunOptions parse_mpirun_options(const std::vector<std::string>& args);

extern const char* const mpirun_usage;

}  // namespace gridmpi::launcher
