// Starting one local process with pipes for its standard streams.  Used by
// mpirun (fork method and remote shells) and by gridmpi-proxy.  Owner: rpim/.
#pragma once
#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "base/unique_fd.hpp"

namespace gridmpi::rpim {

class SpawnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class StdinMode { null, pipe, inherit };

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is searched in PATH when it has no '/'
  std::vector<std::string> env;   // the complete environment, "NAME=value"
  std::string cwd;                // "" = stay in the current directory
  StdinMode stdin_mode = StdinMode::null;
  bool capture_output = true;     // stdout/stderr to pipes, else inherited
  bool new_process_group = true;  // so that the process and its children can be signalled together
  bool die_with_parent = true;    // SIGKILL when the parent dies (PR_SET_PDEATHSIG)
};

struct SpawnedProcess {
  pid_t pid = -1;
  UniqueFd stdin_fd;   // StdinMode::pipe
  UniqueFd stdout_fd;  // capture_output
  UniqueFd stderr_fd;  // capture_output
};

// Starts the process.  Throws SpawnError with the cause ("execvp 'prog': No
// such file or directory", "chdir '/x': ...") when it could not be started:
// the child reports exec failures through a close-on-exec pipe, so the error
// is known before this returns.
SpawnedProcess spawn(const SpawnRequest& request);

// The current environment with `overrides` ("NAME=value") replacing or
// adding entries.
std::vector<std::string> environment_with(const std::vector<std::string>& overrides);

}  // namespace gridmpi::rpim
