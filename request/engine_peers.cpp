// Peers and their transports (request/engine.hpp): which transport reaches
// a rank, with what limits (chosen at the first message to it), and the
// frames a transport refused for now (would_block), sent again in order.
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
#include "p2p/copy_bytes.hpp"
#include "request/comm_wait.hpp"
#include "request/progress_mode.hpp"
#include "request/engine_internal.hpp"

namespace gridmpi::request {

using namespace engine_detail;

void EngineImpl::choose_io_stride() {
  // Is any peer reached through an fd (select_transport's choice)?
  bool fd_peer = false;
  for (int r = 0; r < size_ && !fd_peer; ++r) {
    if (r == rank_) continue;
    p2p::Capabilities caps;
    fd_peer = !best_transport(r, &caps) || (caps.can_block && !caps.polled);
  }
  polled_io_stride_cap_ = fd_peer ? polled_io_stride_max : polled_io_stride_quiet;
}

EngineImpl::Peer& EngineImpl::first_use(int world) {
  if (world < 0 || world >= size_)
    throw MpiError(MPI_ERR_RANK, fmt::format("world rank {} outside 0..{}", world, size_ - 1));
  Peer& p = peers_[world];
  if (!p.transport) select_transport(world, p);
  return p;
}

p2p::Transport* EngineImpl::best_transport(int world, p2p::Capabilities* best_caps) const {
  p2p::Transport* best = nullptr;
  for (const auto& t : transports_) {
    if (!t->reachable(world)) continue;
    auto caps = t->capabilities();
    if (!best || caps.latency_us < best_caps->latency_us) {
      best = t.get();
      *best_caps = caps;
    }
  }
  return best;
}

void EngineImpl::select_transport(int world, Peer& p) {
  p2p::Capabilities best_caps;
  p2p::Transport* best = best_transport(world, &best_caps);
  if (!best)
    throw MpiError(MPI_ERR_OTHER,
                   fmt::format("rank {}: no transport reaches rank {} (was its endpoint published?)", rank_, world));
  p.transport = best;
  p.max_fragment = std::max<std::size_t>(best_caps.max_fragment, 1);
  p.max_frame_payload = std::max(best_caps.max_frame_payload, p.max_fragment);
  const p2p::DataRepresentation representation = best->representation(world);
  p.native_only = representation == p2p::DataRepresentation::native_unmarked;
  p.external32 = representation == p2p::DataRepresentation::external32 ||
                 representation == p2p::DataRepresentation::external64;
  p.format = representation == p2p::DataRepresentation::external64 ? core::ExternalFormat::external64
                                                                    : core::ExternalFormat::external32;
  p.native_rendezvous = best_caps.rendezvous == p2p::Rendezvous::native;
  p.rts_prefix = p.native_rendezvous ? p.max_fragment : std::min(best_caps.rts_prefix, p.max_fragment);
  p.copies_up_to = best_caps.copies_up_to;
  p.declared_handshake = 2e-6 * best_caps.latency_us;
  p.eager_credits = best_caps.eager_credits;
  const char* why;
  if (p.native_rendezvous) {
    p.threshold = best_caps.eager_limit;
    why = "fixed by the transport's protocol";
  } else if (rsize_ == -1 && p.rts_prefix > 0 && p.rts_prefix >= best_caps.eager_limit) {
    // A message the rendezvous request carries whole gains nothing from the
    // rendezvous but a wait for the clear-to-send (a round trip per message
    // on a wide-area link): it goes eagerly, into the same buffer an
    // unexpected rts's prefix would take.
    p.threshold = p.rts_prefix + 1;
    why = "the transport's rendezvous request carries the whole message up to there";
  } else if (rsize_ == -1) {
    p.threshold = best_caps.eager_limit;
    why = "the transport's eager limit";
  } else if (rsize_ == 0) {
    p.threshold = std::numeric_limits<std::size_t>::max();
    why = "request.rsize=0: always eager";
  } else {
    p.threshold = static_cast<std::size_t>(rsize_);
    why = "request.rsize (_YAMPI_RSIZE)";
  }
  if (!p.external32 && p.copies_up_to > 0) {
    auto above = [](std::size_t n) { return n == std::numeric_limits<std::size_t>::max() ? n : n + 1; };
    p.send_now_below = std::min({p.threshold, above(p.copies_up_to), above(p.max_frame_payload)});
  }
  if (proto_info_) {
    std::string switch_text = p.threshold == std::numeric_limits<std::size_t>::max()
                                  ? std::string("always eager")
                                  : fmt::format("eager below {} bytes, rendezvous from {} bytes", p.threshold, p.threshold);
    std::string prefix_text =
        p.rts_prefix > 0 && p.threshold != std::numeric_limits<std::size_t>::max()
            ? fmt::format(", the rendezvous request carries the first {} bytes", p.rts_prefix)
            : std::string();
    std::fprintf(stderr, "gridmpi[rank %d]: to rank %d: %s transport, %s (%s), fragments of %zu bytes%s\n", rank_,
                 world, best->name(), switch_text.c_str(), why, p.max_fragment, prefix_text.c_str());
  }
}

std::size_t EngineImpl::rendezvous_threshold(int world) { return peer(world).threshold; }

std::string EngineImpl::transport_name(int world) { return peer(world).transport->name(); }

Engine::PeerLink EngineImpl::peer_link(int world) const {
  if (world < 0 || world >= size_)
    throw MpiError(MPI_ERR_RANK, fmt::format("world rank {} outside 0..{}", world, size_ - 1));
  p2p::Capabilities caps;
  p2p::Transport* t = best_transport(world, &caps);
  if (!t) throw MpiError(MPI_ERR_OTHER, fmt::format("rank {}: no transport reaches rank {}", rank_, world));
  return PeerLink{t->name(), caps.latency_us, caps.bandwidth_bytes_per_s};
}

std::size_t EngineImpl::pending_frames() const noexcept {
  std::size_t n = 0;
  for (int w : peers_with_pending_) n += peers_[w].pending.size();
  return n;
}

void EngineImpl::send_frame(int world, const p2p::Frame& frame, std::span<const std::byte> payload,
                            PointRequest* owner) {
  Peer& p = peer(world);
  auto enqueue = [&] {
    PendingFrame f;
    f.frame = frame;
    f.payload = payload;
    f.owner = owner;
    p.pending.push_back(f);
    if (owner) {
      ++owner->frames_outstanding;
      ++frames_outstanding_;
    }
    if (!p.listed) {
      p.listed = true;
      peers_with_pending_.push_back(world);
    }
  };
  // Frames behind refused ones must wait their turn: order per peer is MPI's
  // non-overtaking rule.
  if (!p.pending.empty()) return enqueue();
  switch (p.transport->send(world, frame, payload, make_token(owner, token_none))) {
    case p2p::SendStatus::complete: return;
    case p2p::SendStatus::in_flight:
      if (owner) {
        ++owner->frames_outstanding;
        ++frames_outstanding_;
      }
      return;
    case p2p::SendStatus::would_block: return enqueue();
  }
}

bool EngineImpl::drain_pending() {
  bool worked = false;
  for (std::size_t i = 0; i < peers_with_pending_.size();) {
    int world = peers_with_pending_[i];
    Peer& p = peers_[world];
    while (!p.pending.empty()) {
      PendingFrame& f = p.pending.front();
      auto status = p.transport->send(world, f.frame, f.payload, make_token(f.owner, token_none));
      if (status == p2p::SendStatus::would_block) break;
      worked = true;
      PointRequest* owner = f.owner;
      p.pending.pop_front();
      if (owner && status == p2p::SendStatus::complete) {
        --owner->frames_outstanding;
        --frames_outstanding_;
        maybe_complete_send(owner);
      }
    }
    if (p.pending.empty()) {
      p.listed = false;
      peers_with_pending_[i] = peers_with_pending_.back();
      peers_with_pending_.pop_back();
    } else {
      ++i;
    }
  }
  return worked;
}

void EngineImpl::on_send_complete(int, std::uint64_t token) {
  auto* owner = token_pointer<PointRequest>(token);
  if (!owner) return;
  --owner->frames_outstanding;
  --frames_outstanding_;
  maybe_complete_send(owner);
}

}  // namespace gridmpi::request
