// Probe, matched probe and cancel (request/engine.hpp): MPI_Probe and
// MPI_Iprobe, MPI_Mprobe / MPI_Mrecv, and MPI_Cancel with its
// cancel_request / cancel_reply protocol for sends.
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

bool EngineImpl::probe(int source, int tag, core::Comm&, std::uint32_t context, bool blocking, MPI_Status* status) {
  // A call returning one status leaves its MPI_ERROR alone.
  MPI_Status local{};
  MPI_Status& s = status ? *status : local;
  if (source == MPI_PROC_NULL) {
    int error = s.MPI_ERROR;
    set_proc_null_status(s);
    s.MPI_ERROR = error;
    return true;
  }
  auto find = [&] { return queues_.find_unexpected(context, source, tag); };
  if (!find()) {
    if (blocking)
      wait_until([&] { return find() != nullptr; });
    else
      progress();
  }
  const UnexpectedMessage* m = find();
  if (!m) return false;
  s.MPI_SOURCE = m->envelope.source;
  s.MPI_TAG = m->envelope.tag;
  s.gridmpi_count = static_cast<long long>(m->size);
  // The size of an external32 message (from another cluster, or mixed
  // types on a communicator spanning clusters) is external32 bytes:
  // MPI_Get_count/Get_elements convert them for the type they are given.
  const Peer& from = peer(m->peer_world);
  const bool ext32 = (m->flags & frame::flag_external32) != 0 || from.external32;
  s.gridmpi_cancelled = ext32 ? core::status_external32 : 0;
  if ((from.external32 && from.format == core::ExternalFormat::external64) || (m->flags & frame::flag_external64))
    s.gridmpi_cancelled |= core::status_external64;
  return true;
}

bool EngineImpl::improbe(int source, int tag, core::Comm& comm, std::uint32_t context, bool blocking,
                         MPI_Message* message, MPI_Status* status) {
  if (source == MPI_PROC_NULL) {
    probe(source, tag, comm, context, blocking, status);
    *message = MPI_MESSAGE_NO_PROC;
    return true;
  }
  if (!probe(source, tag, comm, context, blocking, status)) return false;
  auto slot = std::make_unique<MessageSlot>();
  slot->message = queues_.take_unexpected(context, source, tag);
  if (slot->message) unexpected_taken(*slot->message);
  slot->comm = comm.handle;
  *message = messages_.add(std::move(slot));
  return true;
}

Request* EngineImpl::imrecv(void* buf, int count, MPI_Datatype type, MPI_Message message) {
  if (message == MPI_MESSAGE_NO_PROC) {
    PointRequest* r = create_point(PointRole::recv, buf, count, type, MPI_PROC_NULL, MPI_ANY_TAG, nullptr, 0,
                                   SendMode::standard);
    r->peer_world = MPI_PROC_NULL;
    start_point(r);
    return r;
  }
  if (message == MPI_MESSAGE_NULL || !messages_.find(message))
    throw MpiError(MPI_ERR_REQUEST, fmt::format("invalid message handle {}", message));
  MessageSlot& slot = messages_.get(message);
  PointRequest* r = create_point(PointRole::recv, buf, count, type, slot.message->envelope.source,
                                 slot.message->envelope.tag, nullptr, slot.message->envelope.context,
                                 SendMode::standard);
  r->comm = slot.comm;
  std::unique_ptr<UnexpectedMessage> m = std::move(slot.message);
  messages_.release(message);
  try {
    reset_for_start(r);
    attach_message(r, std::move(m));
  } catch (...) {
    release(r);
    throw;
  }
  return r;
}

bool EngineImpl::cancel(Request* request) {
  auto* r = request->as_point();
  if (!r) return false;
  if (r->role == PointRole::send) {
    cancel_send(r);
    return false;
  }
  if (!r->posted) return false;
  queues_.unpost(r);
  r->cancelled = true;
  r->status.MPI_SOURCE = MPI_ANY_SOURCE;
  r->status.MPI_TAG = MPI_ANY_TAG;
  r->status.MPI_ERROR = MPI_SUCCESS;
  r->status.gridmpi_count = 0;
  r->status.gridmpi_cancelled = 1;
  complete(r);
  return true;
}

// MPI_Cancel of a send (MPI-3.1 3.8.4): it may fail only when the message was
// matched already, so even a send complete here (eager) asks the receiver,
// which alone knows whether the message still waits in its unexpected queue.
// The request is incomplete again until the reply: Wait returns once it is
// known, and MPI_Cancel waits for it (await_cancel).
void EngineImpl::cancel_send(PointRequest* s) {
  if (s->internal || s->message_id == 0 || s->cancel_pending || s->cancelled) return;
  if (s->peer_world < 0) return;  // MPI_PROC_NULL: nothing was sent
  if (shut_down_) return;          // the connections are closing: it completes normally
  s->cancel_pending = true;
  s->complete = false;
  cancelling_[s->message_id] = s;
  send_frame(s->peer_world, p2p::Frame::cancel_request(s->context, s->message_id), {}, nullptr);
}

void EngineImpl::await_cancel(Request* request) {
  auto* s = request->as_point();
  if (!s || !s->cancel_pending) return;
  // By the message's id: the entry goes when the reply arrives, and also
  // if the request is released meanwhile (detach_point).
  const std::uint64_t id = s->message_id;
  wait_until([&] { return !cancelling_.contains(id); });
}

void EngineImpl::on_cancel_request(int world, const p2p::Frame& h) {
  // Dropping an rts or sync_eager message needs no answer of its own: the
  // sender stops waiting for cts / sync_ack when it reads the reply.
  auto message = queues_.take_unexpected_by_sender(h.envelope.context, world, h.sender_id);
  if (message) unexpected_taken(*message);
  const bool removed = message != nullptr;
  send_frame(world, p2p::Frame::cancel_reply(h.sender_id, removed), {}, nullptr);
}

void EngineImpl::on_cancel_reply(int world, const p2p::Frame& h) {
  auto it = cancelling_.find(h.sender_id);
  if (it == cancelling_.end()) {
    // The request was released while its cancel was in flight (e.g. by
    // shutdown): nobody is waiting for this answer any more.
    log().debug("rank {}: cancel-reply from rank {} for message {}, no longer wanted", rank_, world, h.sender_id);
    return;
  }
  PointRequest* s = it->second;
  cancelling_.erase(it);
  s->cancel_pending = false;
  if (h.cancelled) {
    s->cancelled = true;
    // The request that carries the message (s, or the internal copy of a
    // buffered send) stops waiting for an answer that will never come; the
    // copy gives its buffer space back when it completes.
    if (auto live = by_id_.find(h.sender_id); live != by_id_.end()) {
      PointRequest* carrier = live->second;
      unregister_id(carrier);
      carrier->awaiting_cts = carrier->awaiting_ack = false;
      carrier->cancelled = true;
      if (carrier != s) maybe_complete_send(carrier);
    }
  }
  maybe_complete_send(s);
}

}  // namespace gridmpi::request
