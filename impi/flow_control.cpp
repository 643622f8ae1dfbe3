// IMPI's flow control per proc pair (docs/impi-protocol.md section 8;
// impi/transport_internal.hpp): a sender holds counted packets beyond
// the connection's window (at most IMPI_H_HIWATER; sized to the round trip,
// Connection::window) of unacknowledged ones in a FIFO per destination, and the
// receiver acknowledges every IMPI_H_ACKMARK with a PROTOACK
// (ImpiTransport::on_packet counts them).
#include <algorithm>
#include <cstring>
#include <fmt/format.h>

#include "base/error.hpp"
#include "impi/transport_internal.hpp"

namespace gridmpi::impi {

using transport_detail::copy_limit;

p2p::SendStatus ImpiTransport::submit(int peer, OutPacket&& packet, bool counted) {
  PeerState& ps = peers_[static_cast<std::size_t>(peer)];
  auto& c = hosts_[static_cast<std::size_t>(ps.host)];
  packet.peer = peer;
  packet.counted = counted;
  bool may_go = c && c->open() && (!counted || (ps.held.empty() && ps.sent < c->window()));
  if (may_go) {
    if (counted) ++ps.sent;
    std::size_t written = 0;
    if (packet.copy.empty() && c->try_write_now(packet.head, packet.payload, &written)) return p2p::SendStatus::complete;
    packet.written = written;
  }
  p2p::SendStatus result;
  if (packet.copy.empty() && !packet.reference && packet.payload.size() <= copy_limit) {
    packet.copy.assign(packet.payload.begin(), packet.payload.end());
    packet.payload = packet.copy;
    result = p2p::SendStatus::complete;
  } else if (!packet.copy.empty()) {
    result = p2p::SendStatus::complete;
  } else {
    packet.report = true;
    result = p2p::SendStatus::in_flight;
  }
  if (may_go)
    c->enqueue(std::move(packet));
  else
    ps.held.push_back(std::move(packet));  // moving keeps the copy's heap buffer: payload stays valid
  return result;
}

void ImpiTransport::release_held(int peer) {
  PeerState& ps = peers_[static_cast<std::size_t>(peer)];
  auto& c = hosts_[static_cast<std::size_t>(ps.host)];
  if (!c || !c->open()) return;
  while (!ps.held.empty() && (!ps.held.front().counted || ps.sent < c->window())) {
    if (ps.held.front().counted) ++ps.sent;
    c->enqueue(std::move(ps.held.front()));
    ps.held.pop_front();
  }
}

void ImpiTransport::send_control(int peer, PacketType type, std::uint64_t srqid, std::uint64_t drqid) {
  PacketHeader h = translator_.header_to(peer, type);
  h.srqid = srqid;
  h.drqid = drqid;
  h.seqnum = ++seqnum_;
  OutPacket p;
  h.encode(p.head.data());
  submit(peer, std::move(p), counts_for_flow_control(type));
}

}  // namespace gridmpi::impi
