// Helpers for the C API shims.  Every MPI function is written as
//
//   extern "C" int PMPI_Send(...) {
//     return gridmpi::core::api_call(comm, "MPI_Send", [&] { ... });
//   }
//   GRIDMPI_WEAK(Send)
//
// so that no exception escapes into C, errors go to the communicator's error
// handler, and MPI_Send is a weak alias of PMPI_Send (the profiling interface).
// Under MPI_THREAD_MULTIPLE api_call also holds the big lock (big_lock.hpp)
// for the whole call, error handler included; a shim that does not go
// through api_call declares a core::ApiLock first.
#pragma once
#include <mpi.h>

#include <functional>
#include <new>
#include <string>

#include "core/big_lock.hpp"
#include "base/error.hpp"

#define GRIDMPI_PRAGMA(x) _Pragma(#x)
#define GRIDMPI_WEAK(name) GRIDMPI_PRAGMA(weak MPI_##name = PMPI_##name)

namespace gridmpi::core {

// Called with the error class and message; runs the error handler attached
// to comm (MPI_COMM_WORLD's when comm is not a valid communicator), which
// for MPI_ERRORS_ARE_FATAL prints "function: message" and aborts the job.
// Returns the error code to give back to the caller.
int handle_error(MPI_Comm comm, int error_class, const char* function, const char* message) noexcept;

// Throws MpiError(MPI_ERR_OTHER) unless MPI is initialized and not finalized.
void require_initialized(const char* function);

// Runs body under the big lock; an exception becomes
// on_error(error_class, message), whose result (the object's error handler
// ran) is returned.  api_call and the window and file shims use it.
template <class OnError, class Body>
int guarded_call(OnError&& on_error, Body&& body) noexcept {
  ApiLock lock;
  try {
    body();
    return MPI_SUCCESS;
  } catch (const MpiError& e) {
    return on_error(e.error_class(), e.what());
  } catch (const std::bad_alloc&) {
    return on_error(MPI_ERR_NO_MEM, "out of memory");
  } catch (const std::exception& e) {
    return on_error(MPI_ERR_INTERN, e.what());
  } catch (...) {
    return on_error(MPI_ERR_INTERN, "unknown internal error");
  }
}

template <class Body>
int api_call(MPI_Comm comm, const char* function, Body&& body) noexcept {
  return guarded_call([&](int error_class, const char* message) {
    return handle_error(comm, error_class, function, message);
  }, body);
}

// For MPI_Init, MPI_Init_thread and MPI_Session_init (core/src/api_env.cpp).
int lifecycle_call(const char* function, const std::function<void()>& body) noexcept;

// An output argument must not be NULL (MPI_ERR_ARG).
inline void require_out(const void* p, const char* name) {
  if (!p) throw MpiError(MPI_ERR_ARG, std::string(name) + " is a null pointer");
}

}  // namespace gridmpi::core
