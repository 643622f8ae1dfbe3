// mpirun's scratch files and directories (the vendor's translated host file,
// Open MPI's shared-memory directory): named after the mpirun that made
// them, gridmpi-KIND-PID-XXXXXX, so that one killed before its clean-up
// (SIGKILL, a lost node) leaves nothing for good: the next mpirun on the
// host removes those whose mpirun is gone.
#pragma once
#include <string>
#include <string_view>

namespace gridmpi::launcher {

// Makes DIR/gridmpi-KIND-PID-XXXXXX (PID: this process) as a directory
// (mode 0700) or, when `directory` is false, an empty file (mode 0600)
// whose descriptor goes to *fd.  Returns the path, or "" with errno set.
std::string make_scratch(const std::string& dir, std::string_view kind, bool directory, int* fd = nullptr);

// Removes DIR/gridmpi-KIND-PID-* owned by this user whose PID no longer
// runs (kill(PID, 0) fails with ESRCH); a live PID, another user's entry or
// a name of another shape stays.  Returns how many went; never throws.
int sweep_scratch(const std::string& dir, std::string_view kind);

}  // namespace gridmpi::launcher
