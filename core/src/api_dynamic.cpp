// C API: process creation and management (MPI-3.1 chapter 10).
//
// Dynamic processes are not supported yet: every process of a job is started
// by mpirun.  These functions exist so that programs which only ask whether
// they were spawned (MPI_Comm_get_parent) link and run, and so that the
// others fail cleanly: each reports the error class the standard gives to
// its failure (no process can be spawned, no port is open, no name is
// published) through the error handler of its communicator (of
// MPI_COMM_WORLD for those without one), with a message saying so, and sets
// its output handle to MPI_COMM_NULL first.
#include <algorithm>

#include <fmt/format.h>

#include "core/api.hpp"
#include "core/group.hpp"
#include "core/info.hpp"
#include "core/runtime.hpp"
#include "core/src/api_pt2pt_util.hpp"
#include "request/comm_wait.hpp"

using namespace gridmpi;
using namespace gridmpi::core;

namespace {

constexpr const char* not_supported =
    "dynamic processes are not supported by gridmpi: start every process of the job with mpirun";

void null_handle(MPI_Comm* handle) {
  if (handle) *handle = MPI_COMM_NULL;
}

void null_name(char* port_name) {
  if (port_name) port_name[0] = '\0';
}

// The standard's arguments that are checked anyway: the communicator and
// root of the collective calls, the info handles.
void check_root(MPI_Comm comm_handle, int root) {
  Comm& c = comm(comm_handle);
  require(!c.is_inter(), MPI_ERR_COMM, "an intercommunicator cannot spawn, accept or connect");
  if (root < 0 || root >= c.size)
    throw MpiError(MPI_ERR_ROOT, fmt::format("root {} outside 0..{}", root, c.size - 1));
}

void check_info(MPI_Info info_handle) {
  if (info_handle != MPI_INFO_NULL) info(info_handle);
}

}  // namespace

// Not spawned: MPI_COMM_NULL, which is right for every process of a job
// started by mpirun.
extern "C" int PMPI_Comm_get_parent(MPI_Comm* parent) {
  return api_call(MPI_COMM_WORLD, "MPI_Comm_get_parent", [&] {
    require_initialized("MPI_Comm_get_parent");
    require_out(parent, "parent");
    *parent = MPI_COMM_NULL;
  });
}
GRIDMPI_WEAK(Comm_get_parent)

extern "C" int PMPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info_handle, int root,
                               MPI_Comm comm_handle, MPI_Comm* intercomm, int array_of_errcodes[]) {
  (void)argv;
  return api_call(comm_handle, "MPI_Comm_spawn", [&] {
    null_handle(intercomm);
    require_initialized("MPI_Comm_spawn");
    check_root(comm_handle, root);
    require_out(intercomm, "intercomm");
    check_info(info_handle);
    if (array_of_errcodes != MPI_ERRCODES_IGNORE)
      for (int i = 0; i < maxprocs; ++i) array_of_errcodes[i] = MPI_ERR_SPAWN;
    throw MpiError(MPI_ERR_SPAWN, fmt::format("cannot spawn {} process{} of '{}': {}", maxprocs,
                                              maxprocs == 1 ? "" : "es", command ? command : "(null)",
                                              not_supported));
  });
}
GRIDMPI_WEAK(Comm_spawn)

extern "C" int PMPI_Comm_spawn_multiple(int count, char* array_of_commands[], char** array_of_argv[],
                                        const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                                        MPI_Comm comm_handle, MPI_Comm* intercomm, int array_of_errcodes[]) {
  (void)array_of_commands;
  (void)array_of_argv;
  (void)array_of_info;
  return api_call(comm_handle, "MPI_Comm_spawn_multiple", [&] {
    null_handle(intercomm);
    require_initialized("MPI_Comm_spawn_multiple");
    check_root(comm_handle, root);
    require_out(intercomm, "intercomm");
    long total = 0;
    if (array_of_maxprocs)
      for (int i = 0; i < count; ++i) total += std::max(array_of_maxprocs[i], 0);
    if (array_of_errcodes != MPI_ERRCODES_IGNORE)
      for (long i = 0; i < total; ++i) array_of_errcodes[i] = MPI_ERR_SPAWN;
    throw MpiError(MPI_ERR_SPAWN, fmt::format("cannot spawn {} process{} of {} command{}: {}", total,
                                              total == 1 ? "" : "es", count, count == 1 ? "" : "s", not_supported));
  });
}
GRIDMPI_WEAK(Comm_spawn_multiple)

extern "C" int PMPI_Open_port(MPI_Info info_handle, char* port_name) {
  return api_call(MPI_COMM_WORLD, "MPI_Open_port", [&] {
    null_name(port_name);
    require_initialized("MPI_Open_port");
    require_out(port_name, "port_name");
    check_info(info_handle);
    throw MpiError(MPI_ERR_UNSUPPORTED_OPERATION, fmt::format("cannot open a port: {}", not_supported));
  });
}
GRIDMPI_WEAK(Open_port)

extern "C" int PMPI_Close_port(const char* port_name) {
  return api_call(MPI_COMM_WORLD, "MPI_Close_port", [&] {
    require_initialized("MPI_Close_port");
    throw MpiError(MPI_ERR_PORT, fmt::format("port '{}' is not open (MPI_Open_port cannot open one: {})",
                                             port_name ? port_name : "(null)", not_supported));
  });
}
GRIDMPI_WEAK(Close_port)

extern "C" int PMPI_Comm_accept(const char* port_name, MPI_Info info_handle, int root, MPI_Comm comm_handle,
                                MPI_Comm* newcomm) {
  return api_call(comm_handle, "MPI_Comm_accept", [&] {
    null_handle(newcomm);
    require_initialized("MPI_Comm_accept");
    check_root(comm_handle, root);
    require_out(newcomm, "newcomm");
    check_info(info_handle);
    throw MpiError(MPI_ERR_PORT, fmt::format("cannot accept on port '{}': it is not open ({})",
                                             port_name ? port_name : "(null)", not_supported));
  });
}
GRIDMPI_WEAK(Comm_accept)

extern "C" int PMPI_Comm_connect(const char* port_name, MPI_Info info_handle, int root, MPI_Comm comm_handle,
                                 MPI_Comm* newcomm) {
  return api_call(comm_handle, "MPI_Comm_connect", [&] {
    null_handle(newcomm);
    require_initialized("MPI_Comm_connect");
    check_root(comm_handle, root);
    require_out(newcomm, "newcomm");
    check_info(info_handle);
    throw MpiError(MPI_ERR_PORT, fmt::format("cannot connect to port '{}': no port can be open ({})",
                                             port_name ? port_name : "(null)", not_supported));
  });
}
GRIDMPI_WEAK(Comm_connect)

extern "C" int PMPI_Comm_join(int fd, MPI_Comm* intercomm) {
  return api_call(MPI_COMM_WORLD, "MPI_Comm_join", [&] {
    null_handle(intercomm);
    require_initialized("MPI_Comm_join");
    require_out(intercomm, "intercomm");
    throw MpiError(MPI_ERR_UNSUPPORTED_OPERATION, fmt::format("cannot join over socket {}: {}", fd, not_supported));
  });
}
GRIDMPI_WEAK(Comm_join)

extern "C" int PMPI_Publish_name(const char* service_name, MPI_Info info_handle, const char* port_name) {
  (void)port_name;
  return api_call(MPI_COMM_WORLD, "MPI_Publish_name", [&] {
    require_initialized("MPI_Publish_name");
    check_info(info_handle);
    throw MpiError(MPI_ERR_UNSUPPORTED_OPERATION, fmt::format("cannot publish service '{}': {}",
                                                              service_name ? service_name : "(null)",
                                                              not_supported));
  });
}
GRIDMPI_WEAK(Publish_name)

extern "C" int PMPI_Unpublish_name(const char* service_name, MPI_Info info_handle, const char* port_name) {
  (void)port_name;
  return api_call(MPI_COMM_WORLD, "MPI_Unpublish_name", [&] {
    require_initialized("MPI_Unpublish_name");
    check_info(info_handle);
    throw MpiError(MPI_ERR_SERVICE, fmt::format("service '{}' is not published (MPI_Publish_name cannot publish "
                                                "one: {})",
                                                service_name ? service_name : "(null)", not_supported));
  });
}
GRIDMPI_WEAK(Unpublish_name)

extern "C" int PMPI_Lookup_name(const char* service_name, MPI_Info info_handle, char* port_name) {
  return api_call(MPI_COMM_WORLD, "MPI_Lookup_name", [&] {
    null_name(port_name);
    require_initialized("MPI_Lookup_name");
    require_out(port_name, "port_name");
    check_info(info_handle);
    throw MpiError(MPI_ERR_NAME, fmt::format("service '{}' is not published (MPI_Publish_name cannot publish "
                                             "one: {})",
                                             service_name ? service_name : "(null)", not_supported));
  });
}
GRIDMPI_WEAK(Lookup_name)

// MPI-3.1 10.5.4: "waits for all pending communication on comm to complete
// internally, deallocates the communicator object, and sets the handle to
// MPI_COMM_NULL".  The wait covers what the program may no longer be able
// to wait for itself: sends (also freed ones and buffered copies), receives
// a message has matched, non-blocking collectives.  A receive that no message
// matches yet is not waited for (the standard requires every communication to
// be matched first; waiting could hang for good): it stays pending as after
// MPI_Comm_free, which this then is.  No synchronisation beyond that: the
// communicator has no connections of its own to close.
// MPI_COMM_NULL is MPI_ERR_COMM (mpi4py's test_exceptions expects it).
extern "C" int PMPI_Comm_disconnect(MPI_Comm* comm_handle) {
  MPI_Comm h = comm_handle ? *comm_handle : MPI_COMM_NULL;
  return api_call(h, "MPI_Comm_disconnect", [&] {
    require_initialized("MPI_Comm_disconnect");
    require_out(comm_handle, "comm");
    if (h == MPI_COMM_WORLD || h == MPI_COMM_SELF)
      throw MpiError(MPI_ERR_COMM, "cannot disconnect MPI_COMM_WORLD or MPI_COMM_SELF");
    comm(h);  // an invalid handle is MPI_ERR_COMM before any wait
    request::wait_for_comm(pt2pt::engine(), h);
    comm_free(h);
    *comm_handle = MPI_COMM_NULL;
  });
}
GRIDMPI_WEAK(Comm_disconnect)
