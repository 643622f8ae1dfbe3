// Frames <-> IMPI packets (impi/translate.hpp).
#include "impi/translate.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "conf/log.hpp"

namespace gridmpi::impi {

namespace frame = p2p::frame;

namespace {
constexpr std::uint64_t private_flags_mark = std::uint64_t{0x4744} << 48;  // "GD"
}

Translator::Translator(const JobMap& map, int my_rank) : map_(map), my_rank_(my_rank), datalen_(map.datalen) {
  for (int c = 0; c < map.nclients; ++c) {
    const bool lam = static_cast<std::size_t>(c) < map.lam_client.size() && map.lam_client[static_cast<std::size_t>(c)];
    client_representation_.push_back(lam ? p2p::DataRepresentation::native_unmarked : map.representation_with(c));
  }
}

p2p::DataRepresentation Translator::representation(int peer) const {
  return client_representation_[static_cast<std::size_t>(map_.proc_client[static_cast<std::size_t>(peer)])];
}

std::size_t Translator::open_exchanges() const noexcept {
  return long_by_srqid_.size() + sync_by_srqid_.size() + long_by_drqid_.size() + first_by_srqid_.size() +
         receiving_.size();
}

PacketHeader Translator::header_to(int peer, PacketType type) const {
  PacketHeader h;
  h.type = type;
  h.src = proc(my_rank_);
  h.dest = proc(peer);
  h.count = carries_payload(type) ? 0 : -1;
  return h;
}

std::uint64_t Translator::private_flags(int peer, std::uint8_t flags, std::uint16_t basic) const {
  const p2p::DataRepresentation r = representation(peer);
  if (r == p2p::DataRepresentation::external32 || r == p2p::DataRepresentation::native_unmarked ||
      (flags == 0 && basic == 0))
    return 0;
  return private_flags_mark | std::uint64_t{flags} << 16 | basic;
}

void Translator::read_private_flags(int peer, std::uint64_t reserved, std::uint8_t* flags,
                                    std::uint16_t* basic) const {
  const p2p::DataRepresentation r = representation(peer);
  if (r == p2p::DataRepresentation::external32 || r == p2p::DataRepresentation::native_unmarked) return;
  if ((reserved & (std::uint64_t{0xffff} << 48)) != private_flags_mark) return;
  *flags = static_cast<std::uint8_t>(reserved >> 16);
  *basic = static_cast<std::uint16_t>(reserved);
}

Translator::Outgoing Translator::to_packet(int peer, const p2p::Frame& f, std::size_t payload_size) {
  Outgoing out;
  PacketHeader& h = out.header;
  switch (f.kind) {
    case frame::Kind::eager:
    case frame::Kind::sync_eager:
    case frame::Kind::rts: {
      h = header_to(peer, f.kind == frame::Kind::eager ? PacketType::data : PacketType::datasync);
      h.len = static_cast<std::uint32_t>(payload_size);
      h.msglen = f.size;
      h.srqid = f.sender_id;
      h.lsrank = f.envelope.source;
      h.tag = f.envelope.tag;
      h.cid = f.envelope.context;
      h.reserved = private_flags(peer, f.flags, f.basic);
      if (f.kind == frame::Kind::rts) {
        long_by_srqid_[f.sender_id] = LongSend{peer, f.size, f.envelope.source, f.envelope.tag, f.envelope.context,
                                               f.sender_id};
        out.reference = true;  // the send waits for SYNCACK anyway
      } else if (f.kind == frame::Kind::sync_eager) {
        sync_by_srqid_[f.sender_id] = peer;
      }
      break;
    }
    case frame::Kind::data: {
      auto it = long_by_drqid_.find({peer, f.receiver_id});
      if (it == long_by_drqid_.end())
        throw MpiError(MPI_ERR_INTERN, fmt::format("impi: rank {}: data for unknown receive {} of rank {}", my_rank_,
                                                   f.receiver_id, peer));
      const LongSend& l = it->second;
      h = header_to(peer, PacketType::data);
      h.len = static_cast<std::uint32_t>(payload_size);
      h.msglen = l.msglen;
      h.srqid = l.srqid;
      h.drqid = f.receiver_id;
      h.lsrank = l.lsrank;
      h.tag = l.tag;
      h.cid = l.cid;
      out.reference = true;
      if (f.offset + payload_size >= l.msglen) long_by_drqid_.erase(it);
      break;
    }
    case frame::Kind::cts: {
      auto first = first_by_srqid_.find({peer, f.sender_id});
      std::uint64_t offset = first == first_by_srqid_.end() ? 0 : first->second.first;
      std::uint64_t msglen = first == first_by_srqid_.end() ? f.accepted : first->second.second;
      if (first != first_by_srqid_.end()) first_by_srqid_.erase(first);
      receiving_[{peer, f.receiver_id}] = LongReceive{offset, msglen};
      h = header_to(peer, PacketType::syncack);
      h.srqid = f.sender_id;
      h.drqid = f.receiver_id;
      break;
    }
    case frame::Kind::sync_ack:
      h = header_to(peer, PacketType::syncack);
      h.srqid = f.sender_id;
      break;
    case frame::Kind::cancel_request:
      h = header_to(peer, PacketType::cancel);
      h.srqid = f.sender_id;
      break;
    case frame::Kind::cancel_reply:
      h = header_to(peer, f.cancelled ? PacketType::cancelyes : PacketType::cancelno);
      h.srqid = f.sender_id;
      // A cancelled long message will never be answered by SYNCACK; one not
      // cancelled (matched already) still needs its first packet's length.
      if (f.cancelled) first_by_srqid_.erase({peer, f.sender_id});
      break;
    case frame::Kind::credit:
      // Receive-message prediction's credit is the engine's own protocol; a
      // peer with a native rendezvous (this one) is never given one.
      throw MpiError(MPI_ERR_INTERN,
                     fmt::format("impi: rank {}: a credit frame for rank {} has no IMPI packet", my_rank_, peer));
  }
  return out;
}

Translator::Incoming Translator::to_frame(int peer, const PacketHeader& h) {
  Incoming in;
  auto cid32 = [&] {
    if (h.cid > 0xfffffffeu) throw WireError(fmt::format("context id {} is beyond this implementation's range", h.cid));
    return static_cast<std::uint32_t>(h.cid);
  };
  switch (h.type) {
    case PacketType::data:
    case PacketType::datasync: {
      if (h.len > h.msglen) throw WireError(fmt::format("pk_len {} exceeds pk_msglen {}", h.len, h.msglen));
      if (h.len > static_cast<std::uint32_t>(datalen_))
        throw WireError(fmt::format("pk_len {} exceeds the job's IMPI_C_DATALEN {}", h.len, datalen_));
      if (h.type == PacketType::data && h.len < h.msglen) {
        // A continuation of a long message, routed by drqid.
        auto it = receiving_.find({peer, h.drqid});
        if (it == receiving_.end())
          throw WireError(fmt::format("continuation DATA for unknown receive {} (no SYNCACK sent for it)", h.drqid));
        in.frame = p2p::Frame::data(h.drqid, it->second.offset);
        it->second.offset += h.len;
        if (it->second.offset > it->second.msglen)
          throw WireError(fmt::format("continuation DATA beyond the message's {} bytes", it->second.msglen));
        if (it->second.offset == it->second.msglen) receiving_.erase(it);
      } else {
        p2p::Frame& msg = in.frame;
        msg.kind = h.type == PacketType::data ? frame::Kind::eager
                   : h.len == h.msglen         ? frame::Kind::sync_eager
                                               : frame::Kind::rts;
        msg.envelope = {cid32(), h.lsrank, h.tag};
        msg.size = h.msglen;
        msg.sender_id = h.srqid;
        read_private_flags(peer, h.reserved, &msg.flags, &msg.basic);
        if (msg.kind == frame::Kind::rts) first_by_srqid_[{peer, h.srqid}] = {h.len, h.msglen};
      }
      in.deliver = true;
      in.carries_payload = true;
      return in;
    }
    case PacketType::syncack: {
      if (auto it = long_by_srqid_.find(h.srqid); it != long_by_srqid_.end() && it->second.peer == peer) {
        LongSend l = it->second;
        long_by_srqid_.erase(it);
        long_by_drqid_[{peer, h.drqid}] = l;
        in.frame = p2p::Frame::cts(h.srqid, h.drqid, l.msglen);
        in.deliver = true;
      } else if (auto s = sync_by_srqid_.find(h.srqid); s != sync_by_srqid_.end() && s->second == peer) {
        sync_by_srqid_.erase(s);
        in.frame = p2p::Frame::sync_ack(h.srqid);
        in.deliver = true;
      } else {
        log().warn("impi: rank {}: SYNCACK from rank {} for request {}, which expects none; ignored", my_rank_, peer,
                   h.srqid);
      }
      return in;
    }
    case PacketType::cancel:
      in.frame = p2p::Frame::cancel_request(frame::any_context, h.srqid);
      in.deliver = true;
      return in;
    case PacketType::cancelyes:
    case PacketType::cancelno:
      if (h.type == PacketType::cancelyes) {
        long_by_srqid_.erase(h.srqid);
        sync_by_srqid_.erase(h.srqid);
      }
      in.frame = p2p::Frame::cancel_reply(h.srqid, h.type == PacketType::cancelyes);
      in.deliver = true;
      return in;
    default:
      return in;
  }
}

}  // namespace gridmpi::impi
