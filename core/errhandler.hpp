// Error handlers, error classes/codes/strings and the fatal-error path.
// Owner: core/errhandler*.cpp.  core/api.hpp's handle_error() lives here.
#pragma once
#include <mpi.h>

#include <string>

#include "core/handle_table.hpp"

namespace gridmpi::core {

// MPI_ERRORS_ARE_FATAL and MPI_ERRORS_RETURN are predefined (no function);
// user handlers carry the function given to MPI_Comm_create_errhandler.
struct Errhandler {
  MPI_Errhandler handle = MPI_ERRHANDLER_NULL;
  MPI_Comm_errhandler_function* function = nullptr;
  // References: the user's handle plus every communicator using it plus every
  // handle returned by Comm_get_errhandler.  The object goes away at zero.
  int refcount = 1;
};

HandleTable<Errhandler>& errhandler_table();  // predefined handlers always present
Errhandler& errhandler(MPI_Errhandler handle);  // throws MpiError(MPI_ERR_ARG)
void retain_errhandler(MPI_Errhandler handle);
void release_errhandler(MPI_Errhandler handle);
// An object's handler `slot` (communicator, window, file, session) becomes
// `handle`: validated first (MPI_ERR_ARG), then the references move.
void replace_errhandler(MPI_Errhandler& slot, MPI_Errhandler handle);

// "MPI_ERR_RANK" for MPI_ERR_RANK; user-added classes get "user error class N".
std::string error_class_name(int error_class);
// MPI_Error_string's text for any valid code (built-in or added).
std::string error_string(int code);
// The class of an error code; throws MpiError(MPI_ERR_ARG) for an unknown code.
int error_class_of(int code);
// MPI_Add_error_class / MPI_Add_error_code / MPI_Add_error_string.
int add_error_class();
int add_error_code(int error_class);
void add_error_string(int code, const std::string& text);
// The largest code in use (the MPI_LASTUSEDCODE attribute).
int last_used_code() noexcept;

// The first steps of running `handler` for an error on any object
// (communicator, window, file, session): null for MPI_ERRORS_RETURN (the
// code goes back to the caller); MPI_ERRORS_ARE_FATAL, MPI_ERRORS_ABORT and
// an unknown handler end the job with "function: message (class)";
// otherwise the user's function, which the caller calls with its object
// (window, file and session handlers have this C signature with their own
// handle type).
MPI_Comm_errhandler_function* user_errhandler(MPI_Errhandler handler, int code, const char* function,
                                              const char* message);

// Runs the error handler of comm for code (MPI_Comm_call_errhandler and
// handle_error).  Fatal handlers do not return.
void invoke_errhandler(MPI_Comm comm, int code, const char* function, const char* message);

// Prints "gridmpi: rank R (host, pid P): <text>" to stderr, asks mpirun to
// end the job, and exits with exit_code.  Used by MPI_ERRORS_ARE_FATAL.
[[noreturn]] void fatal_exit(int exit_code, const std::string& text) noexcept;
// MPI_Abort: tells mpirun (or, for a singleton, prints) and exits with exit_code.
[[noreturn]] void abort_job(int exit_code, const std::string& message) noexcept;

}  // namespace gridmpi::core
