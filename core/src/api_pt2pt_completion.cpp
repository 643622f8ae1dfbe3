// Completion of requests: Wait/Test and their any/all/some forms, freeing,
// status queries, cancel, and generalized requests.
#include <mpi.h>

#include <fmt/format.h>
#include <memory>
#include <vector>

#include "core/api.hpp"
#include "core/coll/nbc.hpp"
#include "core/runtime.hpp"
#include "core/src/api_pt2pt_util.hpp"
#include "request/request.hpp"

using gridmpi::MpiError;
using gridmpi::request::Request;
namespace core = gridmpi::core;
namespace pt2pt = gridmpi::core::pt2pt;

namespace {

// The requests behind an array of handles; nullptr for MPI_REQUEST_NULL and
// inactive persistent requests (they take no part in completion).
std::vector<Request*> resolve(int count, const MPI_Request requests[], MPI_Comm& error_comm) {
  if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("count {} is negative", count));
  if (count > 0 && !requests) throw MpiError(MPI_ERR_ARG, "array_of_requests is NULL");
  std::vector<Request*> result(static_cast<std::size_t>(count), nullptr);
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    Request* r = gridmpi::request::find_request(requests[i]);
    if (!r) throw MpiError(MPI_ERR_REQUEST, fmt::format("invalid request handle {} at index {}", requests[i], i));
    error_comm = r->comm;
    if (!pt2pt::is_inactive(r)) result[i] = r;
  }
  return result;
}

bool none_active(const std::vector<Request*>& rs) {
  for (Request* r : rs)
    if (r) return false;
  return true;
}

bool any_complete(const std::vector<Request*>& rs) {
  for (Request* r : rs)
    if (r && r->complete) return true;
  return false;
}

bool all_complete(const std::vector<Request*>& rs) {
  for (Request* r : rs)
    if (r && !r->complete) return false;
  return true;
}

// Finishes every complete request among rs; for Waitall/Testall.  Throws
// MPI_ERR_IN_STATUS when one failed, with every status's MPI_ERROR set.
void finish_all(int count, MPI_Request requests[], const std::vector<Request*>& rs, MPI_Status statuses[],
                MPI_Comm& error_comm) {
  auto& engine = pt2pt::engine();
  std::string first_failure;
  std::vector<int> errors(static_cast<std::size_t>(count), MPI_SUCCESS);
  for (int i = 0; i < count; ++i) {
    MPI_Status* status = statuses ? &statuses[i] : nullptr;
    if (!rs[i]) {
      pt2pt::set_empty_status(status);
      continue;
    }
    MPI_Comm comm = rs[i]->comm;
    std::string message;
    errors[i] = pt2pt::finish(engine, &requests[i], status, &message);
    if (errors[i] != MPI_SUCCESS && first_failure.empty()) {
      first_failure = fmt::format("request at index {}: {}", i, message);
      error_comm = comm;
    }
  }
  if (first_failure.empty()) return;
  if (statuses)
    for (int i = 0; i < count; ++i) statuses[i].MPI_ERROR = errors[i];
  throw MpiError(MPI_ERR_IN_STATUS, first_failure);
}

// Finishes every complete request among rs; for Waitsome/Testsome.
void finish_some(int count, MPI_Request requests[], const std::vector<Request*>& rs, int* outcount, int indices[],
                 MPI_Status statuses[], MPI_Comm& error_comm) {
  auto& engine = pt2pt::engine();
  std::string first_failure;
  std::vector<int> errors;
  int done = 0;
  for (int i = 0; i < count; ++i) {
    if (!rs[i] || !rs[i]->complete) continue;
    MPI_Status* status = statuses ? &statuses[done] : nullptr;
    MPI_Comm comm = rs[i]->comm;
    std::string message;
    errors.push_back(pt2pt::finish(engine, &requests[i], status, &message));
    if (errors.back() != MPI_SUCCESS && first_failure.empty()) {
      first_failure = fmt::format("request at index {}: {}", i, message);
      error_comm = comm;
    }
    indices[done++] = i;
  }
  *outcount = done;
  if (first_failure.empty()) return;
  if (statuses)
    for (int k = 0; k < done; ++k) statuses[k].MPI_ERROR = errors[k];
  throw MpiError(MPI_ERR_IN_STATUS, first_failure);
}

void finish_one(MPI_Request* handle, MPI_Status* status) {
  std::string message;
  int error = pt2pt::finish(pt2pt::engine(), handle, status, &message);
  if (error != MPI_SUCCESS) throw MpiError(error, message);
}

}  // namespace

extern "C" int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Wait", [&] {
    core::require_initialized("MPI_Wait");
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    if (*request == MPI_REQUEST_NULL) return pt2pt::set_empty_status(status);
    Request& r = pt2pt::lookup(*request);
    error_comm = r.comm;
    if (pt2pt::is_inactive(&r)) return pt2pt::set_empty_status(status);
    if (!r.complete) pt2pt::engine().wait_until([&r] { return r.complete; });
    finish_one(request, status);
  });
}
GRIDMPI_WEAK(Wait)

extern "C" int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Test", [&] {
    core::require_initialized("MPI_Test");
    gridmpi::require(request != nullptr && flag != nullptr, MPI_ERR_ARG, "request or flag argument is NULL");
    *flag = 1;
    if (*request == MPI_REQUEST_NULL) return pt2pt::set_empty_status(status);
    Request& r = pt2pt::lookup(*request);
    error_comm = r.comm;
    if (pt2pt::is_inactive(&r)) return pt2pt::set_empty_status(status);
    if (!r.complete) pt2pt::poll_round();
    if (!r.complete) {
      *flag = 0;
      return;
    }
    finish_one(request, status);
  });
}
GRIDMPI_WEAK(Test)

extern "C" int PMPI_Waitany(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Waitany", [&] {
    core::require_initialized("MPI_Waitany");
    gridmpi::require(index != nullptr, MPI_ERR_ARG, "index argument is NULL");
    auto rs = resolve(count, array_of_requests, error_comm);
    *index = MPI_UNDEFINED;
    if (none_active(rs)) return pt2pt::set_empty_status(status);
    if (!any_complete(rs)) pt2pt::engine().wait_until([&] { return any_complete(rs); });
    for (int i = 0; i < count; ++i) {
      if (!rs[i] || !rs[i]->complete) continue;
      *index = i;
      error_comm = rs[i]->comm;
      return finish_one(&array_of_requests[i], status);
    }
  });
}
GRIDMPI_WEAK(Waitany)

extern "C" int PMPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Testany", [&] {
    core::require_initialized("MPI_Testany");
    gridmpi::require(index != nullptr && flag != nullptr, MPI_ERR_ARG, "index or flag argument is NULL");
    auto rs = resolve(count, array_of_requests, error_comm);
    *index = MPI_UNDEFINED;
    *flag = 1;
    if (none_active(rs)) return pt2pt::set_empty_status(status);
    if (!any_complete(rs)) pt2pt::poll_round();
    for (int i = 0; i < count; ++i) {
      if (!rs[i] || !rs[i]->complete) continue;
      *index = i;
      error_comm = rs[i]->comm;
      return finish_one(&array_of_requests[i], status);
    }
    *flag = 0;
  });
}
GRIDMPI_WEAK(Testany)

extern "C" int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Waitall", [&] {
    core::require_initialized("MPI_Waitall");
    auto rs = resolve(count, array_of_requests, error_comm);
    if (!all_complete(rs)) pt2pt::engine().wait_until([&] { return all_complete(rs); });
    finish_all(count, array_of_requests, rs, array_of_statuses, error_comm);
  });
}
GRIDMPI_WEAK(Waitall)

extern "C" int PMPI_Testall(int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Testall", [&] {
    core::require_initialized("MPI_Testall");
    gridmpi::require(flag != nullptr, MPI_ERR_ARG, "flag argument is NULL");
    auto rs = resolve(count, array_of_requests, error_comm);
    if (!all_complete(rs)) pt2pt::poll_round();
    if (!all_complete(rs)) {
      *flag = 0;
      return;
    }
    *flag = 1;
    finish_all(count, array_of_requests, rs, array_of_statuses, error_comm);
  });
}
GRIDMPI_WEAK(Testall)

extern "C" int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                             MPI_Status array_of_statuses[]) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Waitsome", [&] {
    core::require_initialized("MPI_Waitsome");
    gridmpi::require(outcount != nullptr, MPI_ERR_ARG, "outcount argument is NULL");
    auto rs = resolve(incount, array_of_requests, error_comm);
    if (none_active(rs)) {
      *outcount = MPI_UNDEFINED;
      return;
    }
    gridmpi::require(array_of_indices != nullptr, MPI_ERR_ARG, "array_of_indices is NULL");
    if (!any_complete(rs)) pt2pt::engine().wait_until([&] { return any_complete(rs); });
    finish_some(incount, array_of_requests, rs, outcount, array_of_indices, array_of_statuses, error_comm);
  });
}
GRIDMPI_WEAK(Waitsome)

extern "C" int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                             MPI_Status array_of_statuses[]) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Testsome", [&] {
    core::require_initialized("MPI_Testsome");
    gridmpi::require(outcount != nullptr, MPI_ERR_ARG, "outcount argument is NULL");
    auto rs = resolve(incount, array_of_requests, error_comm);
    if (none_active(rs)) {
      *outcount = MPI_UNDEFINED;
      return;
    }
    gridmpi::require(array_of_indices != nullptr, MPI_ERR_ARG, "array_of_indices is NULL");
    if (!any_complete(rs)) pt2pt::poll_round();
    finish_some(incount, array_of_requests, rs, outcount, array_of_indices, array_of_statuses, error_comm);
  });
}
GRIDMPI_WEAK(Testsome)

extern "C" int PMPI_Request_free(MPI_Request* request) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Request_free", [&] {
    core::require_initialized("MPI_Request_free");
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    Request& r = pt2pt::lookup(*request);
    error_comm = r.comm;
    // MPI-3.1 5.12: freeing a nonblocking collective request is erroneous.
    if (r.kind == gridmpi::request::RequestKind::collective)
      throw MpiError(MPI_ERR_REQUEST, "a nonblocking collective request cannot be freed (wait or test it)");
    auto& engine = pt2pt::engine();
    if (pt2pt::free_if_partitioned(r)) {
      *request = MPI_REQUEST_NULL;
      return;
    }
    *request = MPI_REQUEST_NULL;
    if (auto* g = pt2pt::as_generalized(r)) {
      if (!g->complete) {
        g->freed = true;  // free_fn runs at MPI_Grequest_complete
        return;
      }
      int error = g->free ? g->free(g->extra_state) : MPI_SUCCESS;
      engine.release(g);
      if (error != MPI_SUCCESS) throw MpiError(error, fmt::format("free_fn returned {}", error));
      return;
    }
    // An active request completes in the background; the engine frees it then.
    if (r.complete)
      engine.release(&r);
    else
      r.freed = true;
  });
}
GRIDMPI_WEAK(Request_free)

extern "C" int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Request_get_status", [&] {
    core::require_initialized("MPI_Request_get_status");
    gridmpi::require(flag != nullptr, MPI_ERR_ARG, "flag argument is NULL");
    *flag = 1;
    if (request == MPI_REQUEST_NULL) return pt2pt::set_empty_status(status);
    Request& r = pt2pt::lookup(request);
    error_comm = r.comm;
    if (pt2pt::is_inactive(&r)) return pt2pt::set_empty_status(status);
    if (!r.complete) pt2pt::poll_round();
    if (!r.complete) {
      *flag = 0;
      return;
    }
    if (auto* g = pt2pt::as_generalized(r)) {
      MPI_Status local{};
      pt2pt::set_empty_status(&local);
      int error = g->query ? g->query(g->extra_state, &local) : MPI_SUCCESS;
      pt2pt::copy_status(status, local);
      if (error != MPI_SUCCESS) throw MpiError(error, fmt::format("query_fn returned {}", error));
      return;
    }
    pt2pt::copy_status(status, r.status);
    if (r.error != MPI_SUCCESS) throw MpiError(r.error, fmt::format("request {} failed", r.handle));
  });
}
GRIDMPI_WEAK(Request_get_status)

extern "C" int PMPI_Cancel(MPI_Request* request) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Cancel", [&] {
    core::require_initialized("MPI_Cancel");
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    Request& r = pt2pt::lookup(*request);
    error_comm = r.comm;
    if (auto* g = pt2pt::as_generalized(r)) {
      int error = g->cancel ? g->cancel(g->extra_state, g->complete ? 1 : 0) : MPI_SUCCESS;
      if (error != MPI_SUCCESS) throw MpiError(error, fmt::format("cancel_fn returned {}", error));
      return;
    }
    if (r.kind == gridmpi::request::RequestKind::collective) {
      // Only a GMPI_Imcast_recv whose multicast has not begun can withdraw.
      if (!gridmpi::coll::nb::cancel(&r))
        throw MpiError(MPI_ERR_REQUEST, "a nonblocking collective request cannot be cancelled");
      return;
    }
    if (pt2pt::is_inactive(&r)) throw MpiError(MPI_ERR_REQUEST, "the persistent request is not active");
    // A receive not yet matched is cancelled now.  A send asks its receiver,
    // which alone knows whether the message was matched, and we return once
    // it answered: a request looked at right after MPI_Cancel (Test,
    // Request_get_status) is then cancelled or goes on normally, never
    // "undecided" with its message taken away later (request/README.md).
    pt2pt::engine().cancel(&r);
    pt2pt::engine().await_cancel(&r);
  });
}
GRIDMPI_WEAK(Cancel)

// MPI_Test_cancelled and MPI_Status_set_cancelled live with the status
// functions in api_datatype.cpp.

extern "C" int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                                   MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                                   MPI_Request* request) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Grequest_start", [&] {
    core::require_initialized("MPI_Grequest_start");
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    auto g = std::make_unique<pt2pt::GeneralizedRequest>();
    g->kind = gridmpi::request::RequestKind::generalized;
    g->complete = false;
    g->comm = MPI_COMM_WORLD;
    g->query = query_fn;
    g->free = free_fn;
    g->cancel = cancel_fn;
    g->extra_state = extra_state;
    *request = pt2pt::engine().adopt(std::move(g))->handle;
  });
}
GRIDMPI_WEAK(Grequest_start)

extern "C" int PMPI_Grequest_complete(MPI_Request request) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Grequest_complete", [&] {
    core::require_initialized("MPI_Grequest_complete");
    auto* g = pt2pt::as_generalized(pt2pt::lookup(request));
    if (!g) throw MpiError(MPI_ERR_REQUEST, fmt::format("request {} is not a generalized request", request));
    g->complete = true;
    if (g->freed) {
      int error = g->free ? g->free(g->extra_state) : MPI_SUCCESS;
      pt2pt::engine().release(g);
      if (error != MPI_SUCCESS) throw MpiError(error, fmt::format("free_fn returned {}", error));
    }
  });
}
GRIDMPI_WEAK(Grequest_complete)
