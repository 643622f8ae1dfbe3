#include "p2p/template/template_transport.hpp"

#include <fmt/format.h>

#include "base/error.hpp"

namespace gridmpi::p2p {

namespace {
// The in-process "network".  Single-threaded like the engines that use it.
std::map<std::string, TemplateTransport*>& directory() {
  static std::map<std::string, TemplateTransport*> d;
  return d;
}
std::string endpoint_of(std::uint64_t cookie, int rank) { return fmt::format("template:{:x}.{}", cookie, rank); }
}  // namespace

TemplateTransport::TemplateTransport(const TransportContext& context, TemplateOptions options)
    : context_(context), options_(options) {
  directory()[endpoint_of(context_.job_cookie, context_.world_rank)] = this;
}

TemplateTransport::~TemplateTransport() {
  directory().erase(endpoint_of(context_.job_cookie, context_.world_rank));
  // Frames we sent by reference into other inboxes must not outlive us.
  for (auto& [name, other] : directory()) other->sender_gone(this);
}

void TemplateTransport::sender_gone(TemplateTransport* sender) {
  for (auto& f : inbox_)
    if (f.sender == sender) f.sender = nullptr;
}

Capabilities TemplateTransport::capabilities() const {
  Capabilities caps;
  caps.eager_limit = options_.eager_limit;
  caps.max_fragment = options_.max_fragment;
  caps.max_frame_payload = options_.max_frame_payload;
  caps.latency_us = 1000;  // never preferred over a real transport
  caps.bandwidth_bytes_per_s = 1e8;
  caps.can_block = false;  // no fd: a waiting engine must keep polling
  return caps;
}

bool TemplateTransport::reachable(int peer) const { return peer_endpoints_.count(peer) != 0; }

std::string TemplateTransport::endpoint() { return endpoint_of(context_.job_cookie, context_.world_rank); }

void TemplateTransport::set_peer_endpoint(int peer, std::string_view endpoint) {
  peer_endpoints_[peer] = std::string(endpoint);
}

TemplateTransport* TemplateTransport::find_peer(int peer) const {
  auto e = peer_endpoints_.find(peer);
  if (e == peer_endpoints_.end())
    throw MpiError(MPI_ERR_INTERN,
                   fmt::format("template transport of rank {}: no endpoint for rank {}", context_.world_rank, peer));
  auto d = directory().find(e->second);
  if (d == directory().end())
    throw MpiError(MPI_ERR_OTHER, fmt::format("template transport of rank {}: rank {} ({}) is gone",
                                              context_.world_rank, peer, e->second));
  return d->second;
}

SendStatus TemplateTransport::send(int peer, const Frame& f, std::span<const std::byte> payload,
                                   std::uint64_t token) {
  if (payload.size() > options_.max_frame_payload)
    throw MpiError(MPI_ERR_INTERN, fmt::format("template transport: frame of {} bytes above its limit of {}",
                                               payload.size(), options_.max_frame_payload));
  TemplateTransport* target = find_peer(peer);
  if (target->inbox_.size() >= options_.inbox_frames) return SendStatus::would_block;
  InboxFrame frame;
  frame.source = context_.world_rank;
  frame.header_size = frame::encode(f, frame.header);
  frame.token = token;
  if (payload.size() <= options_.copy_limit) {
    frame.copied_payload.assign(payload.begin(), payload.end());
    target->inbox_.push_back(std::move(frame));
    return SendStatus::complete;
  }
  frame.referenced = true;
  frame.referenced_payload = payload;
  frame.sender = this;
  target->inbox_.push_back(std::move(frame));
  return SendStatus::in_flight;
}

bool TemplateTransport::progress() {
  bool worked = false;
  while (!completions_.empty()) {
    auto [peer, token] = completions_.front();
    completions_.pop_front();
    context_.sink->on_send_complete(peer, token);
    worked = true;
  }
  std::size_t pending = inbox_.size();
  while (pending-- > 0 && !inbox_.empty()) {
    InboxFrame frame = std::move(inbox_.front());
    inbox_.pop_front();
    std::span<const std::byte> payload =
        frame.referenced ? frame.referenced_payload : std::span<const std::byte>(frame.copied_payload);
    if (frame.referenced && frame.sender == nullptr)
      throw MpiError(MPI_ERR_OTHER, fmt::format("template transport of rank {}: rank {} vanished while sending",
                                                context_.world_rank, frame.source));
    context_.sink->on_frame(frame.source, frame::decode({frame.header.data(), frame.header_size}), payload);
    if (frame.referenced) frame.sender->completions_.emplace_back(context_.world_rank, frame.token);
    worked = true;
  }
  return worked;
}

void TemplateTransport::begin_shutdown() { shutting_down_ = true; }

bool TemplateTransport::shutdown_complete() const { return inbox_.empty() && completions_.empty(); }

}  // namespace gridmpi::p2p
