// Send protocols (request/engine.hpp, request/README.md): the request-free
// eager send, eager and synchronous sends, rendezvous (rts, then data on
// cts), buffered sends, and the representation of the data on the wire.
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
#include "request/stats.hpp"

namespace gridmpi::request {

using namespace engine_detail;

Request* EngineImpl::isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm,
                           std::uint32_t context, SendMode mode) {
  PointRequest* r = create_point(PointRole::send, buf, count, type, dest, tag, &comm, context, mode);
  try {
    start_point(r);
  } catch (...) {
    release(r);
    throw;
  }
  return r;
}

// What isend + start_send + wait would do for an eager message of a
// contiguous type to a peer of this cluster, without the request: MPI_Send's
// path is the message's path (a ping-pong waits for it).  Everything else
// (synchronous, buffered, MPI_PROC_NULL, derived types, communicators that
// span clusters, rendezvous sizes, frames queued to the peer, a transport
// that would keep the payload) goes the general way.
bool EngineImpl::send_now(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm,
                          std::uint32_t context) {
  if (count < 0 || dest < 0 || dest >= comm.peer_size()) return false;
  const core::Datatype& t = core::committed_datatype(type);
  if (!t.predefined || !t.contiguous || core::spans_clients(comm)) return false;
  const int world = comm.peer_world_rank(dest);
  Peer& p = peer(world);
  const std::size_t size = static_cast<std::size_t>(count) * t.size;
  if (size >= p.send_now_below || !p.pending.empty()) return false;
  // No request: nothing can name the message (MPI_Cancel of a blocking send does not exist).
  const p2p::Frame h = p2p::Frame::message(frame::Kind::eager, {context, comm.rank, tag}, size, next_id_++);
  std::span<const std::byte> payload;
  if (size > 0) payload = std::span<const std::byte>(static_cast<const std::byte*>(buf) + t.true_lb, size);
  switch (p.transport->send(world, h, payload, make_token(static_cast<PointRequest*>(nullptr), token_none))) {
    case p2p::SendStatus::complete: return true;
    case p2p::SendStatus::would_block: return false;
    case p2p::SendStatus::in_flight: break;
  }
  throw MpiError(MPI_ERR_INTERN, fmt::format("rank {}: the {} transport kept a {}-byte payload it declared to copy",
                                             rank_, p.transport->name(), size));
}

Request* EngineImpl::send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, core::Comm& comm,
                               std::uint32_t context, SendMode mode) {
  PointRequest* r = create_point(PointRole::send, buf, count, type, dest, tag, &comm, context, mode);
  r->persistent = true;
  r->active = false;
  r->complete = true;
  return r;
}

void EngineImpl::start_send(PointRequest* s) {
  if (s->mode == SendMode::buffered && !s->internal) return start_buffered(s);
  Peer& p = peer(s->peer_world);
  if (!s->internal) choose_representation(s, p);  // a buffered copy inherits its user's
  if (s->wire_data.empty() && s->bytes > 0) {
    if (s->external32) {
      if (core::external32_is_native(s->datatype, s->format)) {
        s->wire_data = std::span<const std::byte>(static_cast<const std::byte*>(s->buf) + s->type->true_lb, s->bytes);
      } else {
        s->packed.resize(core::external_size(s->datatype, static_cast<std::size_t>(s->count), s->format));
        pack_for_peer(s, s->packed.data());
        s->wire_data = s->packed;
      }
    } else if (s->type->contiguous) {
      s->wire_data = std::span<const std::byte>(static_cast<const std::byte*>(s->buf) + s->type->true_lb, s->bytes);
    } else {
      s->packed.resize(s->bytes);
      s->type->pack(s->buf, static_cast<std::size_t>(s->count), s->packed.data());
      s->wire_data = s->packed;
    }
  }
  // The size of the message on the wire (external32 bytes for such peers).
  const std::size_t size = s->wire_data.size();
  // A payload above the transport's frame limit cannot travel as one eager frame.
  bool eager = size < p.threshold && size <= p.max_frame_payload;
  // A long message the receiver predicted and gave a credit for goes eagerly
  // (p2p/frame.hpp, credit); the credit of its context is used up either way.
  bool credited = false;
  if (!eager && !p.credits.empty() && use_credit(p, s->context, s->tag, size)) {
    eager = credited = true;
    stats::add_seconds(stats::predict_time_saved, p.handshake);
  }
  p2p::Frame h;
  h.envelope = {s->context, s->my_comm_rank, s->tag};
  h.size = size;
  if (s->external32 && !p.external32) {
    h.flags |= frame::flag_external32;
    if (s->format == core::ExternalFormat::external64) h.flags |= frame::flag_external64;
  }
  if (s->native_basic) {
    h.flags |= frame::flag_native_basic;
    h.basic = s->native_basic;
  }
  if (credited) h.flags |= frame::flag_credited;
  h.sender_id = s->id;  // names the message for MPI_Cancel (and for the answers below)
  s->message_id = s->id;
  if (eager) {
    if (s->mode == SendMode::synchronous) {
      h.kind = frame::Kind::sync_eager;
      h.sender_id = s->id;
      s->awaiting_ack = true;
      register_id(s);
    } else {
      h.kind = frame::Kind::eager;
    }
  } else {
    h.kind = frame::Kind::rts;
    h.sender_id = s->id;
    s->awaiting_cts = true;
    if (credits_) s->handshake_started_at = steady_seconds();
    register_id(s);
  }
  std::span<const std::byte> payload;
  if (eager) {
    payload = s->wire_data;
  } else if (p.rts_prefix > 0) {
    payload = s->wire_data.first(std::min(size, p.rts_prefix));
    s->rts_prefix = payload.size();
  }
  send_frame(s->peer_world, h, payload, s);
  maybe_complete_send(s);
}

void EngineImpl::start_buffered(PointRequest* s) {
  if (!bsend_.attached())
    throw MpiError(MPI_ERR_BUFFER, fmt::format("buffered send of {} bytes with no buffer attached "
                                               "(call MPI_Buffer_attach first)", s->bytes));
  auto block = bsend_.allocate(s->bytes);
  if (!block) {
    // Buffered messages that have left since the last round free their space.
    if (mode_ == p2p::ProgressMode::thread)
      thread_mode_progress(false);
    else
      poll_round();
    block = bsend_.allocate(s->bytes);
  }
  if (!block)
    throw MpiError(MPI_ERR_BUFFER,
                   fmt::format("buffered send of {} bytes (+{} overhead) does not fit in the attached buffer "
                               "({} messages still in it); attach a larger buffer",
                               s->bytes, MPI_BSEND_OVERHEAD, bsend_.live_blocks()));
  // External32 is never longer than the native packing (long and wchar_t
  // shrink, nothing grows), so the block sized for the native bytes holds it.
  std::size_t wire_size = s->bytes;
  choose_representation(s, peer(s->peer_world));
  if (s->bytes > 0) {
    if (s->external32) {
      wire_size = core::external_size(s->datatype, static_cast<std::size_t>(s->count), s->format);
      pack_for_peer(s, block->data.data());
    } else if (s->type->contiguous) {
      std::memcpy(block->data.data(), static_cast<const std::byte*>(s->buf) + s->type->true_lb, s->bytes);
    } else {
      s->type->pack(s->buf, static_cast<std::size_t>(s->count), block->data.data());
    }
  }
  auto copy = std::make_unique<PointRequest>();
  PointRequest* c = copy.get();
  c->kind = RequestKind::send;
  c->role = PointRole::send;
  c->internal = true;
  c->peer_world = s->peer_world;
  c->my_comm_rank = s->my_comm_rank;
  c->tag = s->tag;
  c->context = s->context;
  c->comm = s->comm;
  if (s->held_comm) {
    core::comm_hold(*s->held_comm);  // the message outlives the user's request
    c->held_comm = s->held_comm;
  }
  c->mode = SendMode::standard;
  c->bytes = s->bytes;
  c->spans_clients = s->spans_clients;
  c->external32 = s->external32;
  c->format = s->format;
  c->native_basic = s->native_basic;
  c->bsend_block = block->offset;
  add_to_table(std::move(copy));
  reset_for_start(c);
  c->wire_data = block->data.first(wire_size);  // the packed copy; start_send must not pack again
  std::uint64_t message_id = c->id;  // c is released when it completes
  start_send(c);
  s->message_id = message_id;  // MPI_Cancel of s cancels the copy's message
  // The user's request is done: its data is in the buffer.
  s->status.MPI_ERROR = MPI_SUCCESS;
  complete(s);
}

// External32 to other clusters (IMPI).  On a communicator that spans
// clusters, to a peer of this cluster: MPI_PACKED data is external32 already
// (MPI_Pack made it so); elements of one basic type go native, marked with
// the type so that a receive into MPI_PACKED can convert them; mixed types
// go external32 (which narrows long to 32 bits, as across clusters).
void EngineImpl::choose_representation(PointRequest* s, const Peer& p) {
  s->external32 = false;
  s->format = core::ExternalFormat::external32;
  s->native_basic = 0;
  if (p.external32) {
    s->external32 = true;
    s->format = p.format;
    return;
  }
  if (p.native_only || !s->spans_clients || !s->type) return;
  if (core::external32_is_native(s->datatype)) {
    s->external32 = true;  // bytes, characters, MPI_PACKED: no conversion
    return;
  }
  MPI_Datatype basic = s->type->reduction_basic;
  if (basic != MPI_DATATYPE_NULL && basic > 0 && basic <= 0xffff) {
    s->native_basic = static_cast<std::uint16_t>(basic);
    return;
  }
  // Mixed types: external64 where long is 64 bits, so that no value changes
  // (external32 has no room for such a long), flagged for the receiver.
  s->external32 = true;
  if (sizeof(long) == 8 && sizeof(wchar_t) == 4) s->format = core::ExternalFormat::external64;
}

// Packs a send's data in its external representation.  A value the
// representation cannot hold (a long beyond 32 bits in external32) fails the
// send with MPI_ERR_CONVERSION, saying where it was going.
void EngineImpl::pack_for_peer(PointRequest* s, std::byte* out) {
  try {
    core::pack_external32(s->buf, static_cast<std::size_t>(s->count), s->datatype, out, s->format);
  } catch (const MpiError& e) {
    if (e.error_class() != MPI_ERR_CONVERSION) throw;
    const Peer& p = peer(s->peer_world);
    std::string to = p.external32 ? fmt::format("to rank {} of another cluster, which takes {}", s->peer_world,
                                                core::external_format_name(s->format))
                                  : fmt::format("on a communicator spanning clusters ({})",
                                                core::external_format_name(s->format));
    throw MpiError(MPI_ERR_CONVERSION, fmt::format("cannot send {}: {}", to, e.what()));
  }
}

void EngineImpl::maybe_complete_send(PointRequest* s) {
  if (s->complete || s->frames_outstanding > 0 || s->awaiting_cts || s->awaiting_ack || s->cancel_pending) return;
  s->status.MPI_SOURCE = s->peer;
  s->status.MPI_TAG = s->tag;
  s->status.MPI_ERROR = s->error;
  s->status.gridmpi_count = s->cancelled ? 0 : static_cast<long long>(s->bytes);
  s->status.gridmpi_cancelled = s->cancelled ? 1 : 0;
  complete(s);
}

void EngineImpl::send_sync_ack(int world, std::uint64_t sender_id) {
  send_frame(world, p2p::Frame::sync_ack(sender_id), {}, nullptr);
}

void EngineImpl::buffer_attach(void* buffer, int size) {
  if (size < 0) throw MpiError(MPI_ERR_ARG, fmt::format("buffer size {} is negative", size));
  bsend_.attach(buffer, static_cast<std::size_t>(size));
}

std::pair<void*, int> EngineImpl::buffer_detach() {
  if (!bsend_.attached()) return {nullptr, 0};
  wait_until([&] { return bsend_.empty(); });
  auto [buffer, size] = bsend_.detach();
  return {buffer, static_cast<int>(size)};
}

}  // namespace gridmpi::request
