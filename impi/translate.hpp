// Frames of the transport contract (p2p/frame.hpp) <-> IMPI packets
// (docs/impi-protocol.md section 7): what the IMPI transport does to every
// frame it sends and every packet it receives, and the state IMPI's long-
// message and synchronous protocols need for it.  Socket-free: the
// transport (impi/transport.cpp) adds sequence numbers, flow control and
// the connections; tests/unit/test_impi_translate.cpp checks the packets
// byte for byte.
//
//   frame                     IMPI packet
//   eager                     DATA        (len == msglen <= maxdatalen)
//   sync_eager                DATASYNC    (len == msglen)
//   rts + first fragment      DATASYNC    (len < msglen: first packet of a long message)
//   cts                       SYNCACK     (drqid = the receive's id; answers a long DATASYNC)
//   sync_ack                  SYNCACK     (answers a short DATASYNC)
//   data                      DATA        (continuation: len < msglen, routed by drqid)
//   cancel_request            CANCEL
//   cancel_reply              CANCELYES / CANCELNO
//
// The request layer's representation flags (p2p/frame.hpp flag_external32,
// flag_native_basic + basic) matter when a peer takes native data; towards a
// gridmpi client that negotiated native or external64 they ride in
// pk_reserved (0 in IMPI, never read from others).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "impi/job_map.hpp"
#include "impi/wire.hpp"
#include "p2p/frame.hpp"
#include "p2p/transport.hpp"

namespace gridmpi::impi {

class Translator {
 public:
  // `map` must outlive the translator; `my_rank` is this process's world rank.
  Translator(const JobMap& map, int my_rank);

  // The representation of user data towards `peer` (JobMap::representation_with).
  p2p::DataRepresentation representation(int peer) const;

  // A frame to send: its packet (seqnum 0: the transport numbers packets)
  // and whether the payload must stay referenced until written (parts of a
  // long message: the request waits for them anyway).  Throws MpiError for
  // a frame IMPI cannot carry (data for a receive that never answered).
  struct Outgoing {
    PacketHeader header;
    bool reference = false;
  };
  Outgoing to_packet(int peer, const p2p::Frame& frame, std::size_t payload_size);

  // A packet that arrived from `peer` (any type but PROTOACK, which is flow
  // control): the frame to deliver (deliver false: nothing, e.g. a SYNCACK
  // nobody waits for), and whether it carries the packet's payload (DATA,
  // DATASYNC: pk_len bytes).  Throws WireError for a packet that breaks the
  // protocol.
  struct Incoming {
    p2p::Frame frame;
    bool deliver = false;
    bool carries_payload = false;
  };
  Incoming to_frame(int peer, const PacketHeader& packet);

  // A packet header from this process to `peer` (src, dest, count).
  PacketHeader header_to(int peer, PacketType type) const;

  // Protocol state left over (for tests and the shut-down's diagnostics).
  std::size_t open_exchanges() const noexcept;

 private:
  // A long message we send: what its continuation packets repeat.
  struct LongSend {
    int peer = -1;
    std::uint64_t msglen = 0;
    std::int32_t lsrank = 0, tag = 0;
    std::uint64_t cid = 0;
    std::uint64_t srqid = 0;
  };
  // A long message we receive: where its next continuation goes.
  struct LongReceive {
    std::uint64_t offset = 0;
    std::uint64_t msglen = 0;
  };

  std::uint64_t private_flags(int peer, std::uint8_t flags, std::uint16_t basic) const;
  void read_private_flags(int peer, std::uint64_t reserved, std::uint8_t* flags, std::uint16_t* basic) const;
  Proc proc(int rank) const { return map_.procs[static_cast<std::size_t>(rank)]; }

  const JobMap& map_;
  int my_rank_;
  std::int32_t datalen_;
  std::vector<p2p::DataRepresentation> client_representation_;  // by client
  std::map<std::uint64_t, LongSend> long_by_srqid_;  // sent DATASYNC (long), waiting for SYNCACK
  std::map<std::uint64_t, int> sync_by_srqid_;       // sent DATASYNC (short), waiting for SYNCACK
  std::map<std::pair<int, std::uint64_t>, LongSend> long_by_drqid_;  // (peer, drqid): continuations to send
  // (peer, srqid) -> (first packet's len, msglen) of a long message not yet answered by SYNCACK.
  std::map<std::pair<int, std::uint64_t>, std::pair<std::uint64_t, std::uint64_t>> first_by_srqid_;
  std::map<std::pair<int, std::uint64_t>, LongReceive> receiving_;  // (peer, drqid)
};

}  // namespace gridmpi::impi
