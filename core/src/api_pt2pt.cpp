// The point-to-point C API: sends, receives, probes, persistent requests,
// buffered-send buffers.  Completion functions (Wait, Test, ...) are in
// api_pt2pt_completion.cpp.  Thin shims: check the arguments, call the
// engine (request/), map errors through api_call.
#include <mpi.h>

#include <climits>
#include <cstring>
#include <fmt/format.h>
#include <vector>

#include "core/api.hpp"
#include "core/datatype.hpp"
#include "core/group.hpp"
#include "core/runtime.hpp"
#include "core/src/api_pt2pt_util.hpp"
#include "request/request.hpp"

using gridmpi::MpiError;
using gridmpi::core::api_call;
using gridmpi::request::Request;
using gridmpi::request::SendMode;
namespace core = gridmpi::core;
namespace pt2pt = gridmpi::core::pt2pt;

namespace {

int send_blocking(const char* function, const void* buf, int count, MPI_Datatype type, int dest, int tag,
                  MPI_Comm comm, SendMode mode) {
  return api_call(comm, function, [&] {
    core::require_initialized(function);
    core::Comm& c = pt2pt::check_send(buf, count, type, dest, tag, comm);
    auto& engine = pt2pt::engine();
    Request* r = engine.isend(buf, count, type, dest, tag, c, c.context_id, mode);
    pt2pt::wait_and_release(engine, r, nullptr);
  });
}

int send_nonblocking(const char* function, const void* buf, int count, MPI_Datatype type, int dest, int tag,
                     MPI_Comm comm, SendMode mode, MPI_Request* request) {
  return api_call(comm, function, [&] {
    core::require_initialized(function);
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    core::Comm& c = pt2pt::check_send(buf, count, type, dest, tag, comm);
    *request = pt2pt::engine().isend(buf, count, type, dest, tag, c, c.context_id, mode)->handle;
  });
}

int send_init(const char* function, const void* buf, int count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm, SendMode mode, MPI_Request* request) {
  return api_call(comm, function, [&] {
    core::require_initialized(function);
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    core::Comm& c = pt2pt::check_send(buf, count, type, dest, tag, comm);
    *request = pt2pt::engine().send_init(buf, count, type, dest, tag, c, c.context_id, mode)->handle;
  });
}

}  // namespace

extern "C" int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return send_blocking("MPI_Send", buf, count, datatype, dest, tag, comm, SendMode::standard);
}
GRIDMPI_WEAK(Send)

extern "C" int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return send_blocking("MPI_Bsend", buf, count, datatype, dest, tag, comm, SendMode::buffered);
}
GRIDMPI_WEAK(Bsend)

extern "C" int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return send_blocking("MPI_Ssend", buf, count, datatype, dest, tag, comm, SendMode::synchronous);
}
GRIDMPI_WEAK(Ssend)

extern "C" int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return send_blocking("MPI_Rsend", buf, count, datatype, dest, tag, comm, SendMode::ready);
}
GRIDMPI_WEAK(Rsend)

extern "C" int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request) {
  return send_nonblocking("MPI_Isend", buf, count, datatype, dest, tag, comm, SendMode::standard, request);
}
GRIDMPI_WEAK(Isend)

extern "C" int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                           MPI_Request* request) {
  return send_nonblocking("MPI_Ibsend", buf, count, datatype, dest, tag, comm, SendMode::buffered, request);
}
GRIDMPI_WEAK(Ibsend)

extern "C" int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                           MPI_Request* request) {
  return send_nonblocking("MPI_Issend", buf, count, datatype, dest, tag, comm, SendMode::synchronous, request);
}
GRIDMPI_WEAK(Issend)

extern "C" int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                           MPI_Request* request) {
  return send_nonblocking("MPI_Irsend", buf, count, datatype, dest, tag, comm, SendMode::ready, request);
}
GRIDMPI_WEAK(Irsend)

extern "C" int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                         MPI_Status* status) {
  return api_call(comm, "MPI_Recv", [&] {
    core::require_initialized("MPI_Recv");
    core::Comm& c = pt2pt::check_recv(buf, count, datatype, source, tag, comm);
    auto& engine = pt2pt::engine();
    Request* r = engine.irecv(buf, count, datatype, source, tag, c, c.context_id);
    pt2pt::wait_and_release(engine, r, status);
  });
}
GRIDMPI_WEAK(Recv)

extern "C" int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                          MPI_Request* request) {
  return api_call(comm, "MPI_Irecv", [&] {
    core::require_initialized("MPI_Irecv");
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    core::Comm& c = pt2pt::check_recv(buf, count, datatype, source, tag, comm);
    *request = pt2pt::engine().irecv(buf, count, datatype, source, tag, c, c.context_id)->handle;
  });
}
GRIDMPI_WEAK(Irecv)

extern "C" int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                              MPI_Request* request) {
  return send_init("MPI_Send_init", buf, count, datatype, dest, tag, comm, SendMode::standard, request);
}
GRIDMPI_WEAK(Send_init)

extern "C" int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                               MPI_Request* request) {
  return send_init("MPI_Bsend_init", buf, count, datatype, dest, tag, comm, SendMode::buffered, request);
}
GRIDMPI_WEAK(Bsend_init)

extern "C" int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                               MPI_Request* request) {
  return send_init("MPI_Ssend_init", buf, count, datatype, dest, tag, comm, SendMode::synchronous, request);
}
GRIDMPI_WEAK(Ssend_init)

extern "C" int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                               MPI_Request* request) {
  return send_init("MPI_Rsend_init", buf, count, datatype, dest, tag, comm, SendMode::ready, request);
}
GRIDMPI_WEAK(Rsend_init)

extern "C" int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                              MPI_Request* request) {
  return api_call(comm, "MPI_Recv_init", [&] {
    core::require_initialized("MPI_Recv_init");
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    core::Comm& c = pt2pt::check_recv(buf, count, datatype, source, tag, comm);
    *request = pt2pt::engine().recv_init(buf, count, datatype, source, tag, c, c.context_id)->handle;
  });
}
GRIDMPI_WEAK(Recv_init)

extern "C" int PMPI_Start(MPI_Request* request) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Start", [&] {
    core::require_initialized("MPI_Start");
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    Request& r = pt2pt::lookup(*request);
    error_comm = r.comm;
    pt2pt::engine().start(&r);
  });
}
GRIDMPI_WEAK(Start)

extern "C" int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
  MPI_Comm error_comm = MPI_COMM_WORLD;
  return pt2pt::request_call(error_comm, "MPI_Startall", [&] {
    core::require_initialized("MPI_Startall");
    if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("count {} is negative", count));
    gridmpi::require(count == 0 || array_of_requests != nullptr, MPI_ERR_ARG, "array_of_requests is NULL");
    // Check them all before starting any, so that an error leaves nothing half-started.
    std::vector<Request*> requests;
    for (int i = 0; i < count; ++i) {
      Request& r = pt2pt::lookup(array_of_requests[i]);
      error_comm = r.comm;
      if (!r.persistent)
        throw MpiError(MPI_ERR_REQUEST, fmt::format("request {} (index {}) is not persistent", r.handle, i));
      if (r.active)
        throw MpiError(MPI_ERR_REQUEST, fmt::format("request {} (index {}) is already active", r.handle, i));
      requests.push_back(&r);
    }
    for (Request* r : requests) pt2pt::engine().start(r);
  });
}
GRIDMPI_WEAK(Startall)

extern "C" int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                             MPI_Comm comm, MPI_Status* status) {
  return api_call(comm, "MPI_Sendrecv", [&] {
    core::require_initialized("MPI_Sendrecv");
    core::Comm& c = pt2pt::check_send(sendbuf, sendcount, sendtype, dest, sendtag, comm);
    pt2pt::check_recv(recvbuf, recvcount, recvtype, source, recvtag, comm);
    auto& engine = pt2pt::engine();
    // The receive first: a large message to oneself then finds it posted.
    Request* rr = engine.irecv(recvbuf, recvcount, recvtype, source, recvtag, c, c.context_id);
    Request* sr = nullptr;
    try {
      sr = engine.isend(sendbuf, sendcount, sendtype, dest, sendtag, c, c.context_id, SendMode::standard);
    } catch (...) {
      if (engine.cancel(rr)) engine.release(rr);
      throw;
    }
    engine.wait_until([&] { return rr->complete && sr->complete; });
    pt2pt::release_checked(engine, sr, nullptr);
    pt2pt::release_checked(engine, rr, status);
  });
}
GRIDMPI_WEAK(Sendrecv)

extern "C" int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                                     int recvtag, MPI_Comm comm, MPI_Status* status) {
  return api_call(comm, "MPI_Sendrecv_replace", [&] {
    core::require_initialized("MPI_Sendrecv_replace");
    core::Comm& c = pt2pt::check_send(buf, count, datatype, dest, sendtag, comm);
    pt2pt::check_recv(buf, count, datatype, source, recvtag, comm);
    const core::Datatype& type = core::committed_datatype(datatype);
    const std::size_t bytes = static_cast<std::size_t>(count) * type.size;
    if (bytes > static_cast<std::size_t>(INT_MAX))
      throw MpiError(MPI_ERR_COUNT, fmt::format("{} bytes are too many for MPI_Sendrecv_replace", bytes));
    // The incoming message lands in a staging buffer laid out like buf (so
    // that the receive converts it, e.g. from another cluster's external32),
    // and the outgoing one can still be read from buf until it has left.
    MPI_Aint lo = 0, hi = 0;
    if (count > 0) {
      MPI_Aint last = static_cast<MPI_Aint>(count - 1) * type.extent();
      lo = std::min(type.true_lb, last + type.true_lb);
      hi = std::max(type.true_ub, last + type.true_ub);
    }
    std::vector<std::byte> staging(static_cast<std::size_t>(hi - lo));
    std::byte* base = staging.data() - lo;
    auto& engine = pt2pt::engine();
    Request* rr = engine.irecv(base, count, datatype, source, recvtag, c, c.context_id);
    Request* sr = nullptr;
    try {
      sr = engine.isend(buf, count, datatype, dest, sendtag, c, c.context_id, SendMode::standard);
    } catch (...) {
      if (engine.cancel(rr)) engine.release(rr);
      throw;
    }
    engine.wait_until([&] { return rr->complete && sr->complete; });
    pt2pt::release_checked(engine, sr, nullptr);
    const std::size_t received = static_cast<std::size_t>(rr->status.gridmpi_count);
    const int error = rr->error;
    if (error == MPI_SUCCESS && received > 0) {
      if (type.contiguous) {
        std::memcpy(static_cast<std::byte*>(buf) + type.true_lb, base + type.true_lb, received);
      } else {
        std::vector<std::byte> packed(received);
        type.pack_range(base, static_cast<std::size_t>(count), 0, packed);
        type.unpack_range(packed, static_cast<std::size_t>(count), 0, buf);
      }
    }
    pt2pt::release_checked(engine, rr, status);
  });
}
GRIDMPI_WEAK(Sendrecv_replace)

extern "C" int PMPI_Buffer_attach(void* buffer, int size) {
  return api_call(MPI_COMM_WORLD, "MPI_Buffer_attach", [&] {
    core::require_initialized("MPI_Buffer_attach");
    if (size < 0) throw MpiError(MPI_ERR_ARG, fmt::format("buffer size {} is negative", size));
    gridmpi::require(buffer != nullptr || size == 0, MPI_ERR_BUFFER, "buffer is NULL");
    pt2pt::engine().buffer_attach(buffer, size);
  });
}
GRIDMPI_WEAK(Buffer_attach)

extern "C" int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  return api_call(MPI_COMM_WORLD, "MPI_Buffer_detach", [&] {
    core::require_initialized("MPI_Buffer_detach");
    gridmpi::require(buffer_addr != nullptr && size != nullptr, MPI_ERR_ARG, "buffer_addr or size is NULL");
    auto [buffer, bytes] = pt2pt::engine().buffer_detach();
    // buffer_addr is really a void** (the standard's C binding says void*).
    std::memcpy(buffer_addr, &buffer, sizeof buffer);
    *size = bytes;
  });
}
GRIDMPI_WEAK(Buffer_detach)

extern "C" int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return api_call(comm, "MPI_Probe", [&] {
    core::require_initialized("MPI_Probe");
    core::Comm& c = pt2pt::check_probe(source, tag, comm);
    pt2pt::engine().probe(source, tag, c, c.context_id, true, status);
  });
}
GRIDMPI_WEAK(Probe)

extern "C" int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return api_call(comm, "MPI_Iprobe", [&] {
    core::require_initialized("MPI_Iprobe");
    gridmpi::require(flag != nullptr, MPI_ERR_ARG, "flag argument is NULL");
    core::Comm& c = pt2pt::check_probe(source, tag, comm);
    *flag = pt2pt::engine().probe(source, tag, c, c.context_id, false, status) ? 1 : 0;
    if (!*flag) pt2pt::yield_idle();
  });
}
GRIDMPI_WEAK(Iprobe)

extern "C" int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return api_call(comm, "MPI_Mprobe", [&] {
    core::require_initialized("MPI_Mprobe");
    gridmpi::require(message != nullptr, MPI_ERR_ARG, "message argument is NULL");
    core::Comm& c = pt2pt::check_probe(source, tag, comm);
    pt2pt::engine().improbe(source, tag, c, c.context_id, true, message, status);
  });
}
GRIDMPI_WEAK(Mprobe)

extern "C" int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                            MPI_Status* status) {
  return api_call(comm, "MPI_Improbe", [&] {
    core::require_initialized("MPI_Improbe");
    gridmpi::require(flag != nullptr && message != nullptr, MPI_ERR_ARG, "flag or message argument is NULL");
    core::Comm& c = pt2pt::check_probe(source, tag, comm);
    *flag = pt2pt::engine().improbe(source, tag, c, c.context_id, false, message, status) ? 1 : 0;
    if (!*flag) pt2pt::yield_idle();
  });
}
GRIDMPI_WEAK(Improbe)

extern "C" int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  return api_call(MPI_COMM_WORLD, "MPI_Mrecv", [&] {
    core::require_initialized("MPI_Mrecv");
    gridmpi::require(message != nullptr, MPI_ERR_ARG, "message argument is NULL");
    if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("count {} is negative", count));
    core::committed_datatype(datatype);
    if (*message == MPI_MESSAGE_NULL) throw MpiError(MPI_ERR_REQUEST, "message is MPI_MESSAGE_NULL");
    auto& engine = pt2pt::engine();
    Request* r = engine.imrecv(buf, count, datatype, *message);
    *message = MPI_MESSAGE_NULL;
    pt2pt::wait_and_release(engine, r, status);
  });
}
GRIDMPI_WEAK(Mrecv)

extern "C" int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  return api_call(MPI_COMM_WORLD, "MPI_Imrecv", [&] {
    core::require_initialized("MPI_Imrecv");
    gridmpi::require(message != nullptr && request != nullptr, MPI_ERR_ARG, "message or request argument is NULL");
    if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("count {} is negative", count));
    core::committed_datatype(datatype);
    if (*message == MPI_MESSAGE_NULL) throw MpiError(MPI_ERR_REQUEST, "message is MPI_MESSAGE_NULL");
    *request = pt2pt::engine().imrecv(buf, count, datatype, *message)->handle;
    *message = MPI_MESSAGE_NULL;
  });
}
GRIDMPI_WEAK(Imrecv)
