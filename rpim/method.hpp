// "How to start a process there": the RPIM methods.  Owner: rpim/.
//
//   fork          the host is this machine (or _YAMPI_RSH is '#'): mpirun
//                 forks and execs the rank itself.
//   remote shell  any other host: `<shell words> <host> <command>`, where the
//                 shell words come from _YAMPI_RSH (default "ssh -x -o
//                 BatchMode=yes") and <command> runs gridmpi-proxy there,
//                 which starts the rank and reports back to mpirun.
//   poe           mpirun -vendor NAME: the whole job through the vendor MPI's
//                 own mpiexec, one gridmpi-proxy --vendor per rank
//                 (rpim/vendor.hpp); chosen by mpirun, not per host.
//
// Adding a method (srun, poe...): add a Kind, teach choose_method() when to
// pick it and launch_command() what to run; the rest of mpirun only sees
// "local process" or "remote agent".
#pragma once
#include <string>
#include <vector>

namespace gridmpi::rpim {

enum class Kind { fork, remote_shell, poe };

struct Method {
  Kind kind = Kind::fork;
  std::vector<std::string> shell;  // remote_shell: the command and its options; poe: the vendor's mpiexec

  std::string name() const;  // "fork", or the shell command ("ssh", "rsh", "mpiexec.openmpi", ...)
};

// The remote shell used when _YAMPI_RSH is not set.
inline constexpr const char* default_remote_shell = "ssh -x -o BatchMode=yes";

// rsh_setting: the value of _YAMPI_RSH ("" when unset).  host_is_local:
// is_local_host(host).
Method choose_method(const std::string& rsh_setting, bool host_is_local);

// Splits a command setting into words (whitespace separated; single and
// double quotes group, as a user would expect from "ssh -o 'A B'").
std::vector<std::string> split_words(const std::string& text);

// Quotes a word for a POSIX shell (the remote shell runs the command through
// the user's login shell).
std::string shell_quote(const std::string& word);
std::string shell_join(const std::vector<std::string>& words);

// The argv that starts `remote_argv` on `host` with `method` (remote_shell).
std::vector<std::string> remote_shell_argv(const Method& method, const std::string& host,
                                           const std::vector<std::string>& remote_argv);

}  // namespace gridmpi::rpim
