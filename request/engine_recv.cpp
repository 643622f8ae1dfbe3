// Receives and matching (request/engine.hpp): posting a receive, matching
// it against the unexpected queue (request/matching.hpp), the frames that
// arrive from peers (FrameSink), and unpacking into the user's buffer.
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

Request* EngineImpl::irecv(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                           std::uint32_t context) {
  PointRequest* r = create_point(PointRole::recv, buf, count, type, source, tag, &comm, context, SendMode::standard);
  try {
    start_point(r);
  } catch (...) {
    release(r);
    throw;
  }
  return r;
}

Request* EngineImpl::recv_start(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                                std::uint32_t context) {
  retired_.reset();
  auto r = std::make_unique<PointRequest>();
  init_point(r.get(), PointRole::recv, buf, count, type, source, tag, &comm, context, SendMode::standard);
  try {
    start_point(r.get());
  } catch (...) {
    detach_point(r.get());
    throw;
  }
  return r.release();
}

void EngineImpl::recv_finish(Request* request) noexcept {
  auto* r = static_cast<PointRequest*>(request);
  try {
    if (!r->complete && !r->posted) {
      // The wait threw with the message matched and its data still on the
      // way: whatever delivers it may name the request, so the engine keeps
      // it (as if MPI_Request_free'd) until it completes.
      r->freed = true;
      add_to_table(std::unique_ptr<Request>(r));
      return;
    }
    detach_point(r);
    retired_.reset(r);
  } catch (...) {
    // Out of memory, or a datatype table in trouble: the request is left
    // behind (a transport may still name it) rather than freed half-way.
  }
}

Request* EngineImpl::recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, core::Comm& comm,
                               std::uint32_t context) {
  PointRequest* r =
      create_point(PointRole::recv, buf, count, type, source, tag, &comm, context, SendMode::standard);
  r->persistent = true;
  r->active = false;
  r->complete = true;
  return r;
}

void EngineImpl::start_recv(PointRequest* r) {
  if (auto m = queues_.take_unexpected(r->context, r->peer, r->tag)) {
    unexpected_taken(*m);
    attach_message(r, std::move(m));
  } else {
    queues_.post(r);
  }
}

std::byte* EngineImpl::recv_base(PointRequest* r) const {
  return static_cast<std::byte*>(r->recv_buf) + r->type->true_lb;
}

// Typed elements of one basic type from this cluster, received as
// MPI_PACKED on a communicator spanning clusters: the receiver's
// MPI_Unpack reads external32, so convert them where they landed (external32
// is never longer than native, so front to back never overwrites unread data).
std::size_t EngineImpl::native_to_external32_in_place(PointRequest* r, std::size_t bytes) {
  auto basic = static_cast<MPI_Datatype>(r->native_basic);
  const core::Datatype& t = core::datatype(basic);
  const std::size_t native = t.size, external = core::external32_size(basic, 1);
  if (native == 0) return bytes;
  const std::size_t n = bytes / native;
  std::byte* base = recv_base(r);
  std::array<std::byte, 64> element;
  for (std::size_t i = 0; i < n; ++i) {
    try {
      core::pack_external32(base + i * native, 1, basic, element.data());
    } catch (const MpiError& e) {
      // A value MPI_Unpack could not read back (a long beyond 32 bits): the
      // receive fails rather than hand over a changed value.
      if (e.error_class() != MPI_ERR_CONVERSION) throw;
      r->error = MPI_ERR_CONVERSION;
      return i * external;
    }
    std::memcpy(base + i * external, element.data(), external);
  }
  return n * external;
}

void EngineImpl::prepare_receive(PointRequest* r, int world, std::uint8_t flags) {
  const bool from_external_peer = world >= 0 && peer(world).external32;
  r->external32 = from_external_peer || (flags & frame::flag_external32);
  r->format = from_external_peer               ? peer(world).format
              : (flags & frame::flag_external64) ? core::ExternalFormat::external64
                                                : core::ExternalFormat::external32;
  r->native_basic = 0;
  if (r->external32) {
    r->capacity = core::external_size(r->datatype, static_cast<std::size_t>(r->count), r->format);
    r->direct = r->type->contiguous && core::external32_is_native(r->datatype, r->format);
  } else {
    r->capacity = r->bytes;
    r->direct = r->type->contiguous;
  }
}

void EngineImpl::unpack_into(PointRequest* r, std::span<const std::byte> bytes, std::size_t offset) {
  // Bytes beyond the receive buffer (a truncated message whose transport
  // sends everything anyway) are dropped.
  if (offset >= r->capacity) return;
  bytes = bytes.first(std::min(bytes.size(), r->capacity - offset));
  if (bytes.empty()) return;
  if (r->direct) {
    std::byte* dst = recv_base(r) + offset;
    if (dst != bytes.data()) p2p::copy_bytes(dst, bytes.data(), bytes.size());
  } else if (r->external32) {
    core::unpack_external32_range(bytes, static_cast<std::size_t>(r->count), r->datatype, offset, r->recv_buf,
                                  r->format);
  } else if (offset == 0 && bytes.size() == r->bytes) {
    r->type->unpack(bytes.data(), static_cast<std::size_t>(r->count), r->recv_buf);
  } else {
    r->type->unpack_range(bytes, static_cast<std::size_t>(r->count), offset, r->recv_buf);
  }
}

void EngineImpl::complete_recv(PointRequest* r) {
  std::size_t stored = std::min(r->message_size, r->capacity);
  if (r->native_basic && stored > 0) stored = native_to_external32_in_place(r, stored);
  if (r->external32 && !r->direct)
    stored = core::native_bytes_of_external32(r->datatype, static_cast<std::size_t>(r->count), stored, r->format);
  r->status.gridmpi_count = static_cast<long long>(stored);
  r->status.gridmpi_cancelled = 0;
  if (r->message_size > r->capacity) r->error = MPI_ERR_TRUNCATE;
  r->status.MPI_ERROR = r->error;
  complete(r);
}

void EngineImpl::attach_message(PointRequest* r, std::unique_ptr<UnexpectedMessage> m) {
  try {
    attach_message_to(r, m);
  } catch (...) {
    // An answer (sync_ack, cts) could not be sent.  A payload still
    // arriving names the message: it stays alive, unclaimed, until the
    // engine goes (the caller frees the request).
    if (m && !m->data_complete) {
      m->claimed_by = nullptr;
      try {
        // Those whose payload has come in since are named by nothing now.
        std::erase_if(orphans_, [](const auto& o) { return o->data_complete; });
        orphans_.push_back(std::move(m));
      } catch (...) {
        (void)m.release();  // out of memory: leaked rather than written after its free
      }
    }
    throw;
  }
}

void EngineImpl::attach_message_to(PointRequest* r, std::unique_ptr<UnexpectedMessage>& m) {
  r->peer_world = m->peer_world;
  r->status.MPI_SOURCE = m->envelope.source;
  r->status.MPI_TAG = m->envelope.tag;
  r->message_size = m->size;
  prepare_receive(r, m->peer_world, m->flags);
  if ((m->flags & frame::flag_native_basic) && r->datatype == MPI_PACKED) r->native_basic = m->basic;
  if (m->kind == frame::Kind::rts) {
    accept_rendezvous(r, m->peer_world, m->sender_id, m->size, m->data.size(),
                      m->arrived_at > 0 ? steady_seconds() - m->arrived_at : 0);
    if (m->data.size() == 0) return;
    // The rts carried the message's first bytes (Capabilities::rts_prefix).
    if (!m->data_complete) {
      m->claimed_by = r;
      r->message = std::move(m);
      return;
    }
    unpack_into(r, m->data, 0);
    r->received += m->data.size();
    if (r->received >= r->expected) complete_recv(r);
    return;
  }
  if (m->kind == frame::Kind::sync_eager) send_sync_ack(m->peer_world, m->sender_id);
  if (m->data_complete) {
    unpack_into(r, std::span<const std::byte>(m->data).first(std::min<std::size_t>(m->size, r->capacity)), 0);
    complete_recv(r);
  } else {
    m->claimed_by = r;
    r->message = std::move(m);
  }
}

void EngineImpl::accept_rendezvous(PointRequest* r, int sender_world, std::uint64_t sender_id, std::uint64_t size,
                                   std::size_t prefix, double waited) {
  r->peer_world = sender_world;
  r->message_size = size;
  // A transport's native rendezvous (IMPI's) sends the whole message
  // whatever we accept: it gets an acceptance of everything.  The bytes the
  // rts carried are accepted in any case; the excess is dropped in unpack_into.
  r->expected = peer(sender_world).native_rendezvous
                    ? size
                    : std::max<std::size_t>(std::min<std::size_t>(size, r->capacity), prefix);
  r->received = 0;
  if (r->expected > 0) register_id(r);
  p2p::Frame cts = p2p::Frame::cts(sender_id, r->expected > 0 ? r->id : 0, r->expected);
  cts.waited_us = static_cast<std::uint32_t>(std::clamp(waited * 1e6, 0.0, 4294967295.0));
  if (credits_ && r->expected > prefix) r->handshake_started_at = steady_seconds();
  send_frame(sender_world, cts, {}, nullptr);
  if (r->expected == 0) complete_recv(r);
}

p2p::Placement EngineImpl::on_frame_begin(int world, const p2p::Frame& h, std::size_t payload_size) {
  const frame::Kind kind = h.kind;
  switch (kind) {
    case frame::Kind::eager:
    case frame::Kind::sync_eager:
    case frame::Kind::rts: {
      stats::bump(stats::messages_received);
      if (kind != frame::Kind::rts)
        check_eager_size(world, h, payload_size);
      else if (payload_size > h.size)
        throw MpiError(MPI_ERR_INTERN, fmt::format("rank {}: rts from rank {} announces {} bytes, carries {}", rank_,
                                                   world, h.size, payload_size));
      PointRequest* r = match_posted(world, h);
      // (A matched rts's after its cts, which is the more urgent.)
      if (predict_method_ != predict::Method::off && !(r && kind == frame::Kind::rts)) [[unlikely]]
        observe_arrival(world, h.envelope, h.size, kind);
      if (r) {
        if (kind == frame::Kind::rts) {
          accept_rendezvous(r, world, h.sender_id, h.size, payload_size);
          if (predict_method_ != predict::Method::off) [[unlikely]]
            observe_arrival(world, h.envelope, h.size, kind);
          if (payload_size == 0) return {};
          // The message's first bytes ride on the rts (Capabilities::rts_prefix).
          r->fragment_offset = 0;
          p2p::Placement placement;
          placement.token = make_token(r, token_data);
          if (r->direct && payload_size <= r->capacity)
            placement.destination = std::span<std::byte>(recv_base(r), payload_size);
          return placement;
        }
        if (kind == frame::Kind::sync_eager) send_sync_ack(world, h.sender_id);
        if (h.size == 0) {
          complete_recv(r);
          return {};
        }
        p2p::Placement placement;
        placement.token = make_token(r, token_eager);
        if (r->direct && h.size <= r->capacity)
          placement.destination = std::span<std::byte>(recv_base(r), h.size);
        return placement;
      }
      return queue_unexpected(world, h, payload_size, nullptr);
    }
    case frame::Kind::cts: {
      PointRequest* s = by_id(h.sender_id, kind, world);
      unregister_id(s);
      s->awaiting_cts = false;
      if (s->handshake_started_at > 0) [[unlikely]] {
        Peer& p = peer(world);
        // The round trip: the time to the cts less what the rts waited there
        // for its receive (the program's, not the protocol's); the least seen.
        const double trip = std::max(0.0, steady_seconds() - s->handshake_started_at - h.waited_us * 1e-6);
        p.observe_handshake(trip);
        s->handshake_started_at = 0;
      }
      for (std::size_t offset = s->rts_prefix; offset < h.accepted;) {
        std::size_t n = std::min<std::size_t>(peer(world).max_fragment, h.accepted - offset);
        send_frame(world, p2p::Frame::data(h.receiver_id, offset), s->wire_data.subspan(offset, n), s);
        offset += n;
      }
      maybe_complete_send(s);
      return {};
    }
    case frame::Kind::data: {
      PointRequest* r = by_id(h.receiver_id, kind, world);
      if (h.offset + payload_size > r->expected)
        throw MpiError(MPI_ERR_INTERN, fmt::format("rank {}: data from rank {} at {}+{} beyond the {} bytes accepted",
                                                   rank_, world, h.offset, payload_size, r->expected));
      r->fragment_offset = h.offset;
      if (r->handshake_started_at > 0) [[unlikely]] {
        // cts to the first data: the round trip a credit would have saved.
        const double trip = steady_seconds() - r->handshake_started_at;
        Peer& p = peer(world);
        p.observe_handshake(trip);
        r->handshake_started_at = 0;
      }
      p2p::Placement placement;
      placement.token = make_token(r, token_data);
      if (r->direct && payload_size > 0 && h.offset + payload_size <= r->capacity)
        placement.destination = std::span<std::byte>(recv_base(r) + h.offset, payload_size);
      return placement;
    }
    case frame::Kind::sync_ack: {
      PointRequest* s = by_id(h.sender_id, kind, world);
      s->awaiting_ack = false;
      unregister_id(s);
      maybe_complete_send(s);
      return {};
    }
    case frame::Kind::cancel_request:
      on_cancel_request(world, h);
      return {};
    case frame::Kind::cancel_reply:
      on_cancel_reply(world, h);
      return {};
    case frame::Kind::credit: {
      // One per context: a newer one replaces it.
      auto& credits = peer(world).credits;
      auto it = std::find_if(credits.begin(), credits.end(),
                             [&](const Peer::Credit& c) { return c.context == h.envelope.context; });
      if (it == credits.end()) it = credits.insert(credits.end(), Peer::Credit{});
      *it = Peer::Credit{h.envelope.context, h.envelope.tag, h.size};
      return {};
    }
  }
  return {};
}

void EngineImpl::check_eager_size(int world, const p2p::Frame& h, std::size_t payload_size) const {
  if (payload_size != h.size)
    throw MpiError(MPI_ERR_INTERN, fmt::format("rank {}: eager frame from rank {} announces {} bytes, carries {}",
                                               rank_, world, h.size, payload_size));
}

PointRequest* EngineImpl::match_posted(int world, const p2p::Frame& h) {
  PointRequest* r = queues_.take_posted(h.envelope);
  if (!r) return nullptr;
  r->peer_world = world;
  r->status.MPI_SOURCE = h.envelope.source;
  r->status.MPI_TAG = h.envelope.tag;
  r->message_size = h.size;
  prepare_receive(r, world, h.flags);
  if ((h.flags & frame::flag_native_basic) && r->datatype == MPI_PACKED) r->native_basic = h.basic;
  return r;
}

p2p::Placement EngineImpl::queue_unexpected(int world, const p2p::Frame& h, std::size_t payload_size,
                                            const std::byte* payload) {
  // Default-initialised (not make_unique): the inline payload is not zeroed.
  std::unique_ptr<UnexpectedMessage> m(new UnexpectedMessage);
  m->kind = h.kind;
  m->envelope = h.envelope;
  m->size = h.size;
  m->sender_id = h.sender_id;
  m->peer_world = world;
  m->flags = h.flags;
  m->basic = h.basic;
  if (h.kind == frame::Kind::rts) m->arrived_at = steady_seconds();
  if (h.flags & frame::flag_credited) credited_unexpected_ += h.size;
  p2p::Placement placement;
  if (payload_size > 0) {  // eager data, or an rts's first fragment
    m->data.resize(payload_size);
    if (payload) {
      std::memcpy(m->data.data(), payload, payload_size);
      m->data_complete = true;
    } else {
      placement.destination = m->data;
      placement.token = make_token(m.get(), token_unexpected);
    }
  } else {
    m->data_complete = true;
  }
  queues_.add_unexpected(std::move(m));
  return placement;
}

// The common case in one call: an eager message (no answer owed), matched
// or queued as it stands.
void EngineImpl::on_frame(int world, const p2p::Frame& h, std::span<const std::byte> payload) {
  if (h.kind != frame::Kind::eager) return FrameSink::on_frame(world, h, payload);
  stats::bump(stats::messages_received);
  check_eager_size(world, h, payload.size());
  PointRequest* r = match_posted(world, h);
  if (predict_method_ != predict::Method::off) [[unlikely]]
    observe_arrival(world, h.envelope, h.size, h.kind);
  if (r) {
    unpack_into(r, payload, 0);
    return complete_recv(r);
  }
  queue_unexpected(world, h, payload.size(), payload.data());
}

void EngineImpl::on_frame_end(int, std::uint64_t token, std::span<const std::byte> payload) {
  switch (token & tag_mask) {
    case token_eager: {
      auto* r = token_pointer<PointRequest>(token);
      unpack_into(r, payload, 0);
      complete_recv(r);
      return;
    }
    case token_data: {
      auto* r = token_pointer<PointRequest>(token);
      unpack_into(r, payload, r->fragment_offset);
      r->received += payload.size();
      if (r->received >= r->expected) complete_recv(r);
      return;
    }
    case token_unexpected: {
      auto* m = token_pointer<UnexpectedMessage>(token);
      m->data_complete = true;
      if (PointRequest* r = m->claimed_by) {
        bool fragment = m->kind == frame::Kind::rts;  // the first fragment of a long message
        unpack_into(r, m->data, 0);
        std::size_t n = m->data.size();
        r->message.reset();  // destroys m
        if (!fragment) return complete_recv(r);
        r->received += n;
        if (r->received >= r->expected) complete_recv(r);
      }
      return;
    }
    default: return;
  }
}

namespace {

std::uint64_t stream_key(std::uint32_t context, int source) {
  return static_cast<std::uint64_t>(context) << 32 | static_cast<std::uint32_t>(source);
}

}  // namespace

void EngineImpl::observe_arrival(int world, const frame::Envelope& envelope, std::uint64_t size, frame::Kind kind) {
  const std::uint64_t key = stream_key(envelope.context, envelope.source);
  auto it = predicted_.find(key);
  if (it == predicted_.end()) {
    // The first max_predicted_streams streams are followed, from their first
    // message (the credit helps a sender whose receiver never waits).
    if (predicted_.size() >= max_predicted_streams) return;
    it = predicted_.try_emplace(key, predict_method_).first;
  }
  PredictedStream& s = it->second;
  // A long message is a long one however it came (rts, or eager or
  // synchronous eager on a credit).
  if (kind != frame::Kind::rts && size >= peer(world).threshold) kind = frame::Kind::rts;
  const predict::Header header{size, envelope.tag, static_cast<std::uint8_t>(kind)};
  if (s.pending) {
    stats::bump(*s.pending == header ? stats::predict_hits : stats::predict_misses);
    s.pending.reset();
  }
  s.stream.observe(header);
  s.credited = false;
  // The next one, if long: its credit goes now, a whole exchange ahead of it
  // (the periodic search runs here too, once per message, only while the
  // stream's messages are long: a rendezvous message costs far more).
  if (credits_) {
    std::optional<predict::Header> next =
        kind == frame::Kind::rts ? s.stream.predict() : s.stream.peek();
    if (next && next->kind == static_cast<std::uint8_t>(frame::Kind::rts)) {
      s.credited = true;
      grant_credit(world, envelope.context, *next);
    }
  }
}

void EngineImpl::grant_credit(int world, std::uint32_t context, const predict::Header& next) {
  // A receiver behind its sender buffers credited messages: no more
  // credits while those waiting unmatched and this one would pass the limit.
  if (world == rank_ || shut_down_ || credited_unexpected_ + next.size > credit_limit_) return;
  Peer& p = peer(world);
  if (!p.eager_credits || p.native_rendezvous || p.external32 || p.native_only || next.size < p.threshold ||
      next.size > p.max_frame_payload)
    return;
  // Worth it only while the round trip saved outweighs what an eager copy of
  // the message may cost more than the rendezvous (request/README.md).
  const double trip = p.handshake_samples >= Peer::trusted_handshakes ? p.handshake : p.declared_handshake;
  if (static_cast<double>(next.size) > trip * credit_rate_) return;
  send_frame(world, p2p::Frame::credit(context, next.tag, next.size), {}, nullptr);
  stats::bump(stats::predict_credits);
}

bool EngineImpl::use_credit(Peer& p, std::uint32_t context, int tag, std::size_t size) {
  auto it = std::find_if(p.credits.begin(), p.credits.end(), [&](const Peer::Credit& c) { return c.context == context; });
  if (it == p.credits.end()) return false;
  const bool usable = it->tag == tag && size <= it->bytes && size <= p.max_frame_payload;
  p.credits.erase(it);
  if (usable) stats::bump(stats::predict_credits_used);
  return usable;
}

void EngineImpl::predict_posted() {
  stats::bump(stats::predict_idle_waits);
  std::size_t looked_at = 0;
  queues_.for_each_posted([this, &looked_at](PointRequest* r) {
    if (r->peer == MPI_ANY_SOURCE || ++looked_at > max_predicted_receives) return;
    auto it = predicted_.find(stream_key(r->context, r->peer));
    if (it == predicted_.end() || it->second.pending) return;  // nothing seen (or followed), or predicted already
    std::optional<predict::Header> next = it->second.stream.predict();
    if (!next) return;
    if (credits_ && !it->second.credited && r->peer_world >= 0 &&
        next->kind == static_cast<std::uint8_t>(frame::Kind::rts) && (r->tag == MPI_ANY_TAG || r->tag == next->tag)) {
      it->second.credited = true;
      grant_credit(r->peer_world, r->context, *next);
    }
    it->second.pending = next;
    stats::bump(stats::predict_predictions);
  });
}

}  // namespace gridmpi::request
