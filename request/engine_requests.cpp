// Request objects of the engine (request/engine.hpp): creation, message
// ids, persistent start, completion, release, requests adopted from above
// (generalized, partitioned), and MPI_Comm_disconnect's wait.
#include "request/engine.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <limits>

#include "conf/log.hpp"
#include "conf/registry.hpp"
#include "core/big_lock.hpp"
#include "base/error.hpp"
#include "core/group.hpp"
#include "core/job_layout.hpp"
#include "p2p/copy_bytes.hpp"
#include "request/comm_wait.hpp"
#include "request/progress_mode.hpp"
#include "request/engine_internal.hpp"

namespace gridmpi::request {

using namespace engine_detail;

Request* EngineImpl::add_to_table(std::unique_ptr<Request> r) {
  Request* raw = r.get();
  raw->handle = request_table().add(std::move(r));
  return raw;
}

PointRequest* EngineImpl::create_point(PointRole role, const void* buf, int count, MPI_Datatype type, int rank,
                                       int tag, core::Comm* comm, std::uint32_t context, SendMode mode) {
  auto owned = std::make_unique<PointRequest>();
  PointRequest* r = owned.get();
  init_point(r, role, buf, count, type, rank, tag, comm, context, mode);
  add_to_table(std::move(owned));
  return r;
}

void EngineImpl::init_point(PointRequest* r, PointRole role, const void* buf, int count, MPI_Datatype type, int rank,
                            int tag, core::Comm* comm, std::uint32_t context, SendMode mode) {
  if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("count {} is negative", count));
  const core::Datatype& t = core::committed_datatype(type);
  r->kind = role == PointRole::send ? RequestKind::send : RequestKind::recv;
  r->role = role;
  r->buf = buf;
  r->recv_buf = const_cast<void*>(buf);
  r->count = count;
  r->datatype = type;
  r->type = &t;
  r->bytes = static_cast<std::size_t>(count) * t.size;
  r->peer = rank;
  r->tag = tag;
  r->context = context;
  r->mode = mode;
  if (comm) {
    r->comm = comm->handle;
    r->my_comm_rank = comm->rank;
    r->spans_clients = core::spans_clients(*comm);
    if (rank >= 0) {
      if (rank >= comm->peer_size())
        throw MpiError(MPI_ERR_RANK, fmt::format("rank {} outside 0..{}", rank, comm->peer_size() - 1));
      r->peer_world = comm->peer_world_rank(rank);
    } else {
      r->peer_world = rank;  // MPI_PROC_NULL or MPI_ANY_SOURCE
    }
    // A communicator freed while this request is pending lives (and keeps
    // its context) until the request is released.
    core::comm_hold(*comm);
    r->held_comm = comm;
  }
  if (!t.predefined) core::retain_datatype(type);
}

void EngineImpl::register_id(PointRequest* r) {
  if (r->registered) return;
  by_id_[r->id] = r;
  r->registered = true;
}

PointRequest* EngineImpl::by_id(std::uint64_t id, frame::Kind kind, int world) {
  auto it = by_id_.find(id);
  if (it == by_id_.end())
    throw MpiError(MPI_ERR_INTERN, fmt::format("rank {}: {} frame from rank {} names unknown request {}", rank_,
                                               frame::kind_name(kind), world, id));
  return it->second;
}

void EngineImpl::reset_for_start(PointRequest* r) {
  r->id = next_id_++;
  r->complete = false;
  r->active = true;
  r->cancelled = false;
  r->error = MPI_SUCCESS;
  r->status = MPI_Status{};
  r->frames_outstanding = 0;
  r->awaiting_cts = r->awaiting_ack = false;
  r->message_size = r->expected = r->received = 0;
  r->message.reset();
  r->wire_data = {};
  r->message_id = 0;
  r->cancel_pending = false;
  r->rts_prefix = 0;
  r->external32 = false;
  r->capacity = r->bytes;
  r->direct = r->type && r->type->contiguous;
}

void EngineImpl::start_point(PointRequest* r) {
  reset_for_start(r);
  if (r->peer_world == MPI_PROC_NULL) {
    set_proc_null_status(r->status);
    complete(r);
    return;
  }
  if (r->role == PointRole::send)
    start_send(r);
  else
    start_recv(r);
}

void EngineImpl::start(Request* request) {
  auto* r = request->as_point();
  if (!r || !r->persistent) throw MpiError(MPI_ERR_REQUEST, "request is not a persistent point-to-point request");
  if (r->active) throw MpiError(MPI_ERR_REQUEST, "persistent request is already active");
  start_point(r);
}

void EngineImpl::detach_point(PointRequest* r) {
  if (r->posted) queues_.unpost(r);
  if (r->cancel_pending) cancelling_.erase(r->message_id);
  unregister_id(r);
  if (r->type && !r->type->predefined) {
    core::release_datatype(r->datatype);
    r->type = nullptr;
  }
  r->message.reset();
  if (core::Comm* held = r->held_comm) {
    r->held_comm = nullptr;
    core::comm_unhold(*held);  // may destroy a communicator freed meanwhile
  }
}

void EngineImpl::release(Request* request) {
  if (auto* r = request->as_point()) {
    detach_point(r);
  } else if (auto it = std::find(adopted_.begin(), adopted_.end(), request); it != adopted_.end()) {
    // Completed outside its poll function and freed before the next round.
    *it = adopted_.back();
    adopted_.pop_back();
  }
  request_table().release(request->handle);
}

Request* EngineImpl::adopt(std::unique_ptr<Request> request) {
  Request* r = add_to_table(std::move(request));
  // Only requests with a poll function need progress; generalized ones are
  // completed by MPI_Grequest_complete.
  if (!r->complete && r->poll) adopted_.push_back(r);
  return r;
}

void EngineImpl::repoll(Request* r) {
  if (r->complete || !r->poll) return;
  if (std::find(adopted_.begin(), adopted_.end(), r) == adopted_.end()) adopted_.push_back(r);
}

bool EngineImpl::poll_adopted() {
  bool worked = false;
  for (std::size_t i = 0; i < adopted_.size();) {
    Request* r = adopted_[i];
    if (!r->complete && r->poll && r->poll()) {
      r->complete = true;
      worked = true;
    }
    if (r->complete) {
      adopted_[i] = adopted_.back();
      adopted_.pop_back();
      // Generalized requests are freed by the API (their free_fn must run).
      if (r->freed && r->kind != RequestKind::generalized) release(r);
    } else {
      ++i;
    }
  }
  return worked;
}

// The request table has no iteration of its own: its user handles are
// visited in order until every live one has been seen.
void wait_for_comm(Engine& engine, MPI_Comm comm) {
  auto pending = [comm](Request& r) {
    if (r.comm != comm || r.complete) return false;
    // An unmatched receive is not waited for.
    if (const PointRequest* p = r.as_point()) return !(p->role == PointRole::recv && p->posted);
    // A non-blocking collective is; a request made of point-to-point ones
    // (MPI_Isendrecv) through its parts.
    return r.kind == RequestKind::collective;
  };
  engine.wait_until([&] {
    const auto& table = request_table();
    for (std::size_t h = 1, left = table.live_user_objects(); left > 0; ++h) {
      Request* r = table.find(static_cast<int>(h));
      if (!r || table.is_predefined(static_cast<int>(h))) continue;
      if (pending(*r)) return false;
      --left;
    }
    return true;
  });
}

}  // namespace gridmpi::request
