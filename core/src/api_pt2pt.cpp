// The point-to-point C API: sends, receives, probes, persistent requests,
// buffered-send buffers.  Completion functions (Wait, Test, ...) are in
// api_pt2pt_completion.cpp.  Thin shims: check the arguments, call the
// engine (request/), map errors through api_call.
#include <mpi.h>

#include <climits>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <tuple>
#include <utility>
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
    if (mode == SendMode::standard && engine.send_now(buf, count, type, dest, tag, c, c.context_id)) return;
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
    pt2pt::recv_blocking(pt2pt::engine(), buf, count, datatype, source, tag, c, c.context_id, status);
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
    if (!pt2pt::start_if_partitioned(r)) pt2pt::engine().start(&r);
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
    for (Request* r : requests)
      if (!pt2pt::start_if_partitioned(*r)) pt2pt::engine().start(r);
  });
}
GRIDMPI_WEAK(Startall)

namespace {

// The send and receive halves of a Sendrecv; the receive is posted first, so
// that a large message to oneself finds it.
std::pair<Request*, Request*> start_sendrecv(core::Comm& c, const void* sendbuf, int sendcount,
                                             MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                                             int recvcount, MPI_Datatype recvtype, int source, int recvtag) {
  auto& engine = pt2pt::engine();
  Request* rr = engine.irecv(recvbuf, recvcount, recvtype, source, recvtag, c, c.context_id);
  try {
    return {engine.isend(sendbuf, sendcount, sendtype, dest, sendtag, c, c.context_id, SendMode::standard), rr};
  } catch (...) {
    if (engine.cancel(rr)) engine.release(rr);
    throw;
  }
}

// Sendrecv_replace: the incoming message lands in a staging buffer laid out
// like buf (so that the receive converts it, e.g. from another cluster's
// external32), and the outgoing one can still be read from buf until it has
// left; copy_back() then moves the received part into buf.
struct ReplaceStaging {
  std::vector<std::byte> bytes;
  std::byte* base = nullptr;  // where the staging copy of buf starts

  ReplaceStaging(const core::Datatype& type, int count, const char* function) {
    const std::size_t total = static_cast<std::size_t>(count) * type.size;
    if (total > static_cast<std::size_t>(INT_MAX))
      throw MpiError(MPI_ERR_COUNT, fmt::format("{} bytes are too many for {}", total, function));
    MPI_Aint lo = 0, hi = 0;
    if (count > 0) {
      MPI_Aint last = static_cast<MPI_Aint>(count - 1) * type.extent();
      lo = std::min(type.true_lb, last + type.true_lb);
      hi = std::max(type.true_ub, last + type.true_ub);
    }
    bytes.resize(static_cast<std::size_t>(hi - lo));
    base = bytes.data() - lo;
  }

  void copy_back(const core::Datatype& type, int count, std::size_t received, void* buf) const {
    if (received == 0) return;
    if (type.contiguous) {
      std::memcpy(static_cast<std::byte*>(buf) + type.true_lb, base + type.true_lb, received);
    } else {
      std::vector<std::byte> packed(received);
      type.pack_range(base, static_cast<std::size_t>(count), 0, packed);
      type.unpack_range(packed, static_cast<std::size_t>(count), 0, buf);
    }
  }
};

// MPI_Isendrecv / MPI_Isendrecv_replace (MPI-4.0 3.10): one request over a
// send and a receive, complete when both are; its status is the receive's.
// Progress polls it (Engine::adopt); the halves are released when it
// completes, also when the user freed it before.
struct SendrecvRequest : Request {
  Request* send = nullptr;
  Request* recv = nullptr;
  // _replace only: the staging buffer and where to copy it back.
  std::unique_ptr<ReplaceStaging> staging;
  void* replace_buf = nullptr;
  int replace_count = 0;
  MPI_Datatype replace_type = MPI_DATATYPE_NULL;

  bool poll_halves() {
    if (!send->complete || !recv->complete) return false;
    auto& engine = pt2pt::engine();
    status = recv->status;
    error = recv->error != MPI_SUCCESS ? recv->error : send->error;
    if (staging && recv->error == MPI_SUCCESS && !recv->cancelled) {
      // The receive still holds the datatype, even if the user freed it.
      staging->copy_back(core::datatype(replace_type), replace_count,
                         static_cast<std::size_t>(recv->status.gridmpi_count), replace_buf);
    }
    cancelled = recv->cancelled;
    engine.release(send);
    engine.release(recv);
    send = recv = nullptr;
    staging.reset();
    return true;
  }
};

MPI_Request start_isendrecv(core::Comm& c, MPI_Comm comm, std::unique_ptr<SendrecvRequest> owned,
                            const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag) {
  SendrecvRequest* r = owned.get();
  r->kind = gridmpi::request::RequestKind::recv;
  r->comm = comm;
  std::tie(r->send, r->recv) = start_sendrecv(c, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                              recvcount, recvtype, source, recvtag);
  r->complete = r->poll_halves();
  if (!r->complete) r->poll = [r] { return r->poll_halves(); };
  return pt2pt::engine().adopt(std::move(owned))->handle;
}

}  // namespace

extern "C" int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                             MPI_Comm comm, MPI_Status* status) {
  return api_call(comm, "MPI_Sendrecv", [&] {
    core::require_initialized("MPI_Sendrecv");
    core::Comm& c = pt2pt::check_send(sendbuf, sendcount, sendtype, dest, sendtag, comm);
    pt2pt::check_recv(recvbuf, recvcount, recvtype, source, recvtag, comm);
    auto& engine = pt2pt::engine();
    auto [sr, rr] = start_sendrecv(c, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                                   source, recvtag);
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
    ReplaceStaging staging(type, count, "MPI_Sendrecv_replace");
    auto& engine = pt2pt::engine();
    auto [sr, rr] = start_sendrecv(c, buf, count, datatype, dest, sendtag, staging.base, count, datatype, source,
                                   recvtag);
    engine.wait_until([&] { return rr->complete && sr->complete; });
    pt2pt::release_checked(engine, sr, nullptr);
    if (rr->error == MPI_SUCCESS)
      staging.copy_back(type, count, static_cast<std::size_t>(rr->status.gridmpi_count), buf);
    pt2pt::release_checked(engine, rr, status);
  });
}
GRIDMPI_WEAK(Sendrecv_replace)

extern "C" int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                              MPI_Comm comm, MPI_Request* request) {
  return api_call(comm, "MPI_Isendrecv", [&] {
    core::require_initialized("MPI_Isendrecv");
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    core::Comm& c = pt2pt::check_send(sendbuf, sendcount, sendtype, dest, sendtag, comm);
    pt2pt::check_recv(recvbuf, recvcount, recvtype, source, recvtag, comm);
    *request = start_isendrecv(c, comm, std::make_unique<SendrecvRequest>(), sendbuf, sendcount, sendtype, dest,
                               sendtag, recvbuf, recvcount, recvtype, source, recvtag);
  });
}
GRIDMPI_WEAK(Isendrecv)

extern "C" int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                                      int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  return api_call(comm, "MPI_Isendrecv_replace", [&] {
    core::require_initialized("MPI_Isendrecv_replace");
    gridmpi::require(request != nullptr, MPI_ERR_ARG, "request argument is NULL");
    core::Comm& c = pt2pt::check_send(buf, count, datatype, dest, sendtag, comm);
    pt2pt::check_recv(buf, count, datatype, source, recvtag, comm);
    auto r = std::make_unique<SendrecvRequest>();
    r->staging = std::make_unique<ReplaceStaging>(core::committed_datatype(datatype), count,
                                                  "MPI_Isendrecv_replace");
    r->replace_buf = buf;
    r->replace_count = count;
    r->replace_type = datatype;
    std::byte* staged = r->staging->base;
    *request = start_isendrecv(c, comm, std::move(r), buf, count, datatype, dest, sendtag, staged, count,
                               datatype, source, recvtag);
  });
}
GRIDMPI_WEAK(Isendrecv_replace)

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
