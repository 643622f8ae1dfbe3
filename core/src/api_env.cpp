// C API: environment management (MPI-3.1 chapter 8).
#include <time.h>

#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/errhandler.hpp"
#include "core/group.hpp"
#include "core/info.hpp"
#include "core/runtime.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

namespace {

// Copies text into a caller's buffer of `capacity` bytes (with the null).
void copy_out(const std::string& text, char* out, int capacity, int* length) {
  size_t n = std::min(text.size(), static_cast<size_t>(capacity - 1));
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  if (length) *length = static_cast<int>(n);
}

std::string library_version() {
  return fmt::format("gridmpi {} (MPI {}.{} with MPI-4.0 sessions and partitioned communication; transports: "
                     "self, shm on one host, tcp, the vendor MPI with mpirun -vendor, impi between clusters)",
                     GRIDMPI_VERSION, MPI_VERSION, MPI_SUBVERSION);
}

}  // namespace

namespace gridmpi::core {

// Like api_call, without taking the big lock: MPI_Init and MPI_Session_init
// may start the runtime, which another thread may be starting at the same
// time (runtime.cpp, "Locking").  The error handler still runs under it.
int lifecycle_call(const char* function, const std::function<void()>& body) noexcept {
  try {
    body();
    return MPI_SUCCESS;
  } catch (const MpiError& e) {
    ApiLock lock;
    return handle_error(MPI_COMM_WORLD, e.error_class(), function, e.what());
  } catch (const std::exception& e) {
    ApiLock lock;
    return handle_error(MPI_COMM_WORLD, MPI_ERR_INTERN, function, e.what());
  } catch (...) {
    // noexcept: anything else would end the process without a word.
    ApiLock lock;
    return handle_error(MPI_COMM_WORLD, MPI_ERR_INTERN, function, "unknown internal error");
  }
}

}  // namespace gridmpi::core

extern "C" int PMPI_Init(int* argc, char*** argv) {
  return lifecycle_call("MPI_Init", [&] { initialize(MPI_THREAD_SINGLE, argc, argv); });
}
GRIDMPI_WEAK(Init)

extern "C" int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return lifecycle_call("MPI_Init_thread", [&] {
    require(provided != nullptr, MPI_ERR_ARG, "provided is a null pointer");
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
      throw MpiError(MPI_ERR_ARG, fmt::format("required thread level {} is not one of MPI_THREAD_SINGLE.."
                                              "MPI_THREAD_MULTIPLE",
                                              required));
    *provided = initialize(required, argc, argv);
  });
}
GRIDMPI_WEAK(Init_thread)

extern "C" int PMPI_Initialized(int* flag) {
  return api_call(MPI_COMM_WORLD, "MPI_Initialized", [&] {
    require(flag != nullptr, MPI_ERR_ARG, "flag is a null pointer");
    // True from MPI_Init on, also after MPI_Finalize (the standard's
    // definition); sessions alone do not initialize the world model.
    *flag = world_model_state() != State::not_initialized;
  });
}
GRIDMPI_WEAK(Initialized)

extern "C" int PMPI_Finalized(int* flag) {
  return api_call(MPI_COMM_WORLD, "MPI_Finalized", [&] {
    require(flag != nullptr, MPI_ERR_ARG, "flag is a null pointer");
    *flag = world_model_state() == State::finalized;
  });
}
GRIDMPI_WEAK(Finalized)

extern "C" int PMPI_Finalize(void) {
  return api_call(MPI_COMM_WORLD, "MPI_Finalize", [&] {
    require_initialized("MPI_Finalize");
    finalize();
  });
}
GRIDMPI_WEAK(Finalize)

extern "C" int PMPI_Query_thread(int* provided) {
  return api_call(MPI_COMM_WORLD, "MPI_Query_thread", [&] {
    require_initialized("MPI_Query_thread");
    require(provided != nullptr, MPI_ERR_ARG, "provided is a null pointer");
    *provided = runtime().thread_level;
  });
}
GRIDMPI_WEAK(Query_thread)

extern "C" int PMPI_Is_thread_main(int* flag) {
  return api_call(MPI_COMM_WORLD, "MPI_Is_thread_main", [&] {
    require_initialized("MPI_Is_thread_main");
    require(flag != nullptr, MPI_ERR_ARG, "flag is a null pointer");
    *flag = is_main_thread();
  });
}
GRIDMPI_WEAK(Is_thread_main)

extern "C" int PMPI_Abort(MPI_Comm comm, int errorcode) {
  gridmpi::core::ApiLock lock;  // reads the communicator table
  std::string comm_text = fmt::format("communicator {}", comm);
  std::string rank = "0";
  if (state() == State::initialized) {
    if (Comm* c = comm_table().find(comm); c && !c->name.empty()) comm_text = c->name;
    rank = std::to_string(runtime().world_rank);
  }
  abort_job(errorcode, fmt::format("rank {} called MPI_Abort({}, {})", rank, comm_text, errorcode));
}
GRIDMPI_WEAK(Abort)

extern "C" double PMPI_Wtime(void) {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
GRIDMPI_WEAK(Wtime)

extern "C" double PMPI_Wtick(void) {
  timespec res{};
  if (clock_getres(CLOCK_MONOTONIC, &res) == 0 && (res.tv_sec != 0 || res.tv_nsec != 0))
    return static_cast<double>(res.tv_sec) + static_cast<double>(res.tv_nsec) * 1e-9;
  return 1e-9;
}
GRIDMPI_WEAK(Wtick)

extern "C" int PMPI_Get_processor_name(char* name, int* resultlen) {
  return api_call(MPI_COMM_WORLD, "MPI_Get_processor_name", [&] {
    require_initialized("MPI_Get_processor_name");
    require(name != nullptr && resultlen != nullptr, MPI_ERR_ARG, "name or resultlen is a null pointer");
    copy_out(runtime().processor_name, name, MPI_MAX_PROCESSOR_NAME, resultlen);
  });
}
GRIDMPI_WEAK(Get_processor_name)

extern "C" int PMPI_Get_version(int* version, int* subversion) {
  return api_call(MPI_COMM_WORLD, "MPI_Get_version", [&] {
    require(version != nullptr && subversion != nullptr, MPI_ERR_ARG, "version or subversion is a null pointer");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
  });
}
GRIDMPI_WEAK(Get_version)

extern "C" int PMPI_Get_library_version(char* version, int* resultlen) {
  return api_call(MPI_COMM_WORLD, "MPI_Get_library_version", [&] {
    require(version != nullptr && resultlen != nullptr, MPI_ERR_ARG, "version or resultlen is a null pointer");
    copy_out(library_version(), version, MPI_MAX_LIBRARY_VERSION_STRING, resultlen);
  });
}
GRIDMPI_WEAK(Get_library_version)

extern "C" int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info_handle, void* baseptr) {
  return api_call(MPI_COMM_WORLD, "MPI_Alloc_mem", [&] {
    require_initialized("MPI_Alloc_mem");
    require(baseptr != nullptr, MPI_ERR_ARG, "baseptr is a null pointer");
    if (size < 0) throw MpiError(MPI_ERR_SIZE, fmt::format("negative size {}", size));
    if (info_handle != MPI_INFO_NULL) info(info_handle);  // validates; no hints are used
    void* p = nullptr;
    // Cache-line alignment helps the transports' copies; size 0 still gets a unique pointer.
    if (posix_memalign(&p, 64, size > 0 ? static_cast<size_t>(size) : 1) != 0 || !p)
      throw MpiError(MPI_ERR_NO_MEM, fmt::format("cannot allocate {} bytes", size));
    *static_cast<void**>(baseptr) = p;
  });
}
GRIDMPI_WEAK(Alloc_mem)

extern "C" int PMPI_Free_mem(void* base) {
  return api_call(MPI_COMM_WORLD, "MPI_Free_mem", [&] {
    require_initialized("MPI_Free_mem");
    std::free(base);
  });
}
GRIDMPI_WEAK(Free_mem)

extern "C" int PMPI_Pcontrol(const int, ...) {
  // Profiling libraries interpose MPI_Pcontrol; without one it does nothing.
  return MPI_SUCCESS;
}
GRIDMPI_WEAK(Pcontrol)
