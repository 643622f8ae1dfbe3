// FrameSink's delivery of a frame whose payload is all at hand.
#include <cstring>

#include "base/error.hpp"
#include "p2p/transport.hpp"

namespace gridmpi::p2p {

void FrameSink::on_frame(int peer, const Frame& frame, std::span<const std::byte> payload) {
  Placement placement = on_frame_begin(peer, frame, payload.size());
  if (placement.destination.empty()) return on_frame_end(peer, placement.token, payload);
  if (placement.destination.size() != payload.size())
    throw MpiError(MPI_ERR_INTERN, "the request layer named a destination of the wrong size");
  if (!payload.empty()) std::memcpy(placement.destination.data(), payload.data(), payload.size());
  on_frame_end(peer, placement.token, placement.destination);
}

}  // namespace gridmpi::p2p
