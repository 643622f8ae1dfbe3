// Shared helpers of the point-to-point C API files (api_pt2pt*.cpp).
#pragma once
#include <mpi.h>

#include <fmt/format.h>
#include <new>

#include "core/api.hpp"
#include "core/group.hpp"
#include "request/request.hpp"

namespace gridmpi::core::pt2pt {

request::Engine& engine();

// Argument checks; each returns the communicator or throws MpiError with the
// MPI error class the standard names.  MPI_DATATYPE_NULL with count 0 is
// accepted and becomes MPI_BYTE in `type` (as in MPICH).
Comm& check_send(const void* buf, int count, MPI_Datatype& type, int dest, int tag, MPI_Comm comm);
Comm& check_recv(void* buf, int count, MPI_Datatype& type, int source, int tag, MPI_Comm comm);
Comm& check_probe(int source, int tag, MPI_Comm comm);

// The request behind a handle (not MPI_REQUEST_NULL); MPI_ERR_REQUEST otherwise.
request::Request& lookup(MPI_Request handle);

// A request created by MPI_Grequest_start.
struct GeneralizedRequest : request::Request {
  MPI_Grequest_query_function* query = nullptr;
  MPI_Grequest_free_function* free = nullptr;
  MPI_Grequest_cancel_function* cancel = nullptr;
  void* extra_state = nullptr;
};

// r as a generalized request, or null (the kind check spares the
// dynamic_cast on every point-to-point completion).
inline GeneralizedRequest* as_generalized(request::Request& r) noexcept {
  return r.kind == request::RequestKind::generalized ? dynamic_cast<GeneralizedRequest*>(&r) : nullptr;
}

void set_empty_status(MPI_Status* status);

// Partitioned requests (api_partitioned.cpp): MPI_Start and MPI_Request_free
// of one; each returns false, doing nothing, for any other request.
bool start_if_partitioned(request::Request& r);
bool free_if_partitioned(request::Request& r);

// One progress round for a polling call (MPI_Test*, MPI_Iprobe, ...) that
// found nothing complete; when the round did no work either, gives the core
// away (sched_yield), so that a rank spinning on MPI_Test does not starve
// the ranks it waits for when ranks outnumber cores.  Under
// MPI_THREAD_MULTIPLE, with other threads waiting for the big lock, hands
// the lock over to them instead.
void poll_round();
// For calls whose progress is inside the engine (probe): yields when the
// call found nothing.
void yield_idle();
// Copies a status except MPI_ERROR, which calls returning one status leave
// alone (MPI-3.1 section 3.2.5); multiple completions set it only with
// MPI_ERR_IN_STATUS.
void copy_status(MPI_Status* to, const MPI_Status& from);
// Null or an inactive persistent request: completion returns an empty status at once.
bool is_inactive(const request::Request* r);

// For a complete request: copies its status out and frees it (a persistent
// one becomes inactive; a generalized one runs query_fn and free_fn).
// MPI_ERROR of the status is left alone.
// Returns the error class to report (MPI_SUCCESS, MPI_ERR_TRUNCATE, ...) and,
// when not success, a description in *message.  *handle becomes
// MPI_REQUEST_NULL unless the request is persistent.
int finish(request::Engine& engine, MPI_Request* handle, MPI_Status* status, std::string* message);

// Waits for a request the caller created, copies its status, releases it and
// throws MpiError when it failed.
void wait_and_release(request::Engine& engine, request::Request* r, MPI_Status* status);
// MPI_Recv after its checks: its request has no handle and no table entry,
// which keeps a ping-pong's completion short.
void recv_blocking(request::Engine& engine, void* buf, int count, MPI_Datatype type, int source, int tag,
                   Comm& comm, std::uint32_t context, MPI_Status* status);
void release_checked(request::Engine& engine, request::Request* r, MPI_Status* status);

// Like api_call, but the communicator whose error handler runs is decided
// while the body runs (the communicator of the failing request).
template <class Body>
int request_call(MPI_Comm& comm, const char* function, Body&& body) noexcept {
  ApiLock lock;  // MPI_THREAD_MULTIPLE: as api_call (core/big_lock.hpp)
  try {
    body();
    return MPI_SUCCESS;
  } catch (const MpiError& e) {
    return handle_error(comm_table().find(comm) ? comm : MPI_COMM_WORLD, e.error_class(), function, e.what());
  } catch (const std::bad_alloc&) {
    return handle_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, function, "out of memory");
  } catch (const std::exception& e) {
    return handle_error(MPI_COMM_WORLD, MPI_ERR_INTERN, function, e.what());
  } catch (...) {
    return handle_error(MPI_COMM_WORLD, MPI_ERR_INTERN, function, "unknown internal error");
  }
}

}  // namespace gridmpi::core::pt2pt
