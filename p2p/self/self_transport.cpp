#include "p2p/self/self_transport.hpp"

#include <boost/asio/post.hpp>


#include "base/error.hpp"

namespace gridmpi::p2p {

SelfTransport::SelfTransport(const TransportContext& context)
    : rank_(context.world_rank), sink_(context.sink), life_(std::make_shared<SelfTransport*>(this)) {
  if (context.progress == ProgressMode::thread) {
    io_ = context.io;
    gate_ = context.gate;
  }
}

SelfTransport::~SelfTransport() { *life_ = nullptr; }

void SelfTransport::post_delivery() {
  if (!io_ || delivery_posted_) return;
  delivery_posted_ = true;
  boost::asio::post(*io_, [life = life_, gate = gate_] {
    GateScope scope(gate);
    if (SelfTransport* self = *life) {
      self->delivery_posted_ = false;
      self->progress();
    }
  });
}

Capabilities SelfTransport::capabilities() const {
  Capabilities caps;
  caps.eager_limit = copy_limit;
  caps.copies_up_to = copy_limit;
  caps.max_fragment = std::size_t{1} << 30;
  caps.latency_us = 0.05;
  caps.bandwidth_bytes_per_s = 5e9;
  caps.can_block = true;  // its work is always finished by the progress round that sees it
  return caps;
}

SendStatus SelfTransport::send(int peer, const Frame& f, std::span<const std::byte> payload,
                               std::uint64_t token) {
  if (peer != rank_)
    throw MpiError(MPI_ERR_INTERN, "self transport of rank " + std::to_string(rank_) +
                                       " asked to send to rank " + std::to_string(peer));
  Queued frame;
  frame.frame = f;
  frame.token = token;
  if (payload.size() <= copy_limit) {
    frame.copied_payload.assign(payload.begin(), payload.end());
    queue_.push_back(std::move(frame));
    post_delivery();
    return SendStatus::complete;
  }
  frame.referenced = true;
  frame.referenced_payload = payload;
  queue_.push_back(std::move(frame));
  post_delivery();
  return SendStatus::in_flight;
}

bool SelfTransport::progress() {
  // Only the frames present now: the sink may queue answers while we deliver.
  if (queue_.empty()) return false;  // every round of every wait: cheaper than size()
  std::size_t pending = queue_.size();
  while (pending-- > 0 && !queue_.empty()) {
    Queued frame = std::move(queue_.front());
    queue_.pop_front();
    std::span<const std::byte> payload =
        frame.referenced ? frame.referenced_payload : std::span<const std::byte>(frame.copied_payload);
    sink_->on_frame(rank_, frame.frame, payload);
    if (frame.referenced) sink_->on_send_complete(rank_, frame.token);
  }
  return true;
}

}  // namespace gridmpi::p2p
