// Frames <-> IMPI packets without sockets (impi/translate.hpp): every frame
// kind's packet checked byte for byte against the 128-byte layout of
// docs/impi-protocol.md section 6 (written out here as hex, not produced by
// the encoder under test), the packets' translation back into frames, and a
// long message and a synchronous one carried through both sides.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>

#include "base/error.hpp"
#include "impi/translate.hpp"
#include "impi/wire.hpp"
#include "tests/unit/hex_bytes.hpp"

using namespace gridmpi::impi;
namespace frame = gridmpi::p2p::frame;
using gridmpi::test::hex_bytes;

namespace {

// Two clients of one proc each: rank 0 at 10.0.0.1 pid 0x100, rank 1 at
// 10.0.0.2 pid 0x200; IMPI_C_DATALEN 1000.  `me` is the client (= rank) of
// the side that uses the map.
JobMap two_procs(int me) {
  JobMap m;
  m.nclients = 2;
  m.my_client = me;
  m.client_nhosts = {1, 1};
  m.client_nprocs = {1, 1};
  m.client_first_rank = {0, 1};
  for (int r = 0; r < 2; ++r) {
    HostEntry h;
    h.client = r;
    h.address = host_id_from_ipv4(0x0a000001u + static_cast<std::uint32_t>(r));
    h.port = static_cast<std::uint16_t>(5000 + r);
    h.nprocs = 1;
    h.first_rank = r;
    m.hosts.push_back(h);
    m.procs.push_back(Proc{h.address, 0x100 * (r + 1)});
    m.proc_host.push_back(r);
    m.proc_client.push_back(r);
  }
  m.datalen = 1000;
  return m;
}

// The proc fields of the layout: 16-byte host id (IPv4-compatible), 8-byte pid.
const char* const proc0 = "00000000 00000000 00000000 0a000001 | 00000000 00000100";
const char* const proc1 = "00000000 00000000 00000000 0a000002 | 00000000 00000200";

std::vector<std::byte> encoded(const PacketHeader& h) {
  std::vector<std::byte> out(PacketHeader::size);
  h.encode(out.data());
  return out;
}

// type, len, src, dest, srqid, drqid, msglen, lsrank, tag, cid, seqnum, count, dtype, reserved
std::vector<std::byte> layout(const char* type, const char* len, const char* src, const char* dest, const char* srqid,
                              const char* drqid, const char* msglen, const char* lsrank, const char* tag,
                              const char* cid, const char* count, const char* reserved = "0000000000000000") {
  std::string text = std::string(type) + len + src + dest + srqid + drqid + msglen + lsrank + tag + cid +
                     "0000000000000000" /* seqnum: the transport's */ + count + "0000000000000000" /* dtype */ +
                     reserved;
  auto bytes = hex_bytes(text);
  REQUIRE(bytes.size() == PacketHeader::size);
  return bytes;
}

using Frame = gridmpi::p2p::Frame;

Frame message(frame::Kind kind, std::uint64_t size, std::uint64_t sender_id) {
  // context 7, source rank 3 in the communicator, tag 42
  return Frame::message(kind, {7, 3, 42}, size, sender_id);
}

}  // namespace

TEST_CASE("an eager frame is one DATA packet laid out as the IMPI header", "[impi][translate]") {
  JobMap map = two_procs(0);
  Translator t(map, 0);
  auto out = t.to_packet(1, message(frame::Kind::eager, 12, 0x55), 12);
  CHECK_FALSE(out.reference);
  CHECK(encoded(out.header) ==
        layout("00000000", "0000000c", proc0, proc1, "0000000000000055", "0000000000000000", "000000000000000c",
               "00000003", "0000002a", "0000000000000007", "0000000000000000"));
  CHECK(t.open_exchanges() == 0);

  // The receiving side gives the request layer the same message back.
  JobMap other = two_procs(1);
  Translator r(other, 1);
  auto in = r.to_frame(0, PacketHeader::decode(encoded(out.header)));
  CHECK(in.carries_payload);
  CHECK(in.frame == message(frame::Kind::eager, 12, 0x55));
}

TEST_CASE("a synchronous eager frame is DATASYNC, answered by SYNCACK with src and dest swapped",
          "[impi][translate]") {
  JobMap map0 = two_procs(0), map1 = two_procs(1);
  Translator sender(map0, 0), receiver(map1, 1);
  auto out = sender.to_packet(1, message(frame::Kind::sync_eager, 8, 0x66), 8);
  CHECK(encoded(out.header) ==
        layout("00000001", "00000008", proc0, proc1, "0000000000000066", "0000000000000000", "0000000000000008",
               "00000003", "0000002a", "0000000000000007", "0000000000000000"));
  auto in = receiver.to_frame(0, out.header);
  CHECK(in.frame == message(frame::Kind::sync_eager, 8, 0x66));

  // The receiver's sync_ack: SYNCACK, srqid echoed, count -1 (a control packet).
  auto ack = receiver.to_packet(0, Frame::sync_ack(0x66), 0);
  CHECK(encoded(ack.header) ==
        layout("00000003", "00000000", proc1, proc0, "0000000000000066", "0000000000000000", "0000000000000000",
               "00000000", "00000000", "0000000000000000", "ffffffffffffffff"));
  auto back = sender.to_frame(1, ack.header);
  CHECK_FALSE(back.carries_payload);
  CHECK(back.frame == Frame::sync_ack(0x66));
  CHECK(sender.open_exchanges() == 0);
  // A second SYNCACK for it is dropped (with a warning), not delivered.
  CHECK(sender.to_frame(1, ack.header).deliver == false);
}

TEST_CASE("a long message: DATASYNC with the first fragment, SYNCACK as cts, DATA continuations by drqid",
          "[impi][translate]") {
  JobMap map0 = two_procs(0), map1 = two_procs(1);
  Translator sender(map0, 0), receiver(map1, 1);
  // 2500 bytes with IMPI_C_DATALEN 1000: the rts carries the first 1000.
  auto rts = sender.to_packet(1, message(frame::Kind::rts, 2500, 0x77), 1000);
  CHECK(rts.reference);
  CHECK(encoded(rts.header) ==
        layout("00000001", "000003e8", proc0, proc1, "0000000000000077", "0000000000000000", "00000000000009c4",
               "00000003", "0000002a", "0000000000000007", "0000000000000000"));
  auto rts_in = receiver.to_frame(0, rts.header);
  CHECK(rts_in.carries_payload);
  CHECK(rts_in.frame == message(frame::Kind::rts, 2500, 0x77));

  // The receive (id 0xabc) accepts: SYNCACK with its drqid.
  auto cts = receiver.to_packet(0, Frame::cts(0x77, 0xabc, 2500), 0);
  CHECK(encoded(cts.header) ==
        layout("00000003", "00000000", proc1, proc0, "0000000000000077", "0000000000000abc", "0000000000000000",
               "00000000", "00000000", "0000000000000000", "ffffffffffffffff"));
  auto cts_in = sender.to_frame(1, cts.header);
  CHECK(cts_in.frame == Frame::cts(0x77, 0xabc, 2500));

  // Continuations repeat srqid, tag, cid and lsrank; drqid routes them.
  for (std::uint64_t offset : {1000u, 2000u}) {
    std::size_t n = offset == 2000 ? 500 : 1000;
    auto data = sender.to_packet(1, Frame::data(0xabc, offset), n);
    CHECK(data.reference);
    CHECK(encoded(data.header) ==
          layout("00000000", n == 1000 ? "000003e8" : "000001f4", proc0, proc1, "0000000000000077",
                 "0000000000000abc", "00000000000009c4", "00000003", "0000002a", "0000000000000007",
                 "0000000000000000"));
    auto in = receiver.to_frame(0, data.header);
    CHECK(in.carries_payload);
    // The receiving side fills the offset itself (IMPI's packets carry none).
    CHECK(in.frame == Frame::data(0xabc, offset));
  }
  CHECK(sender.open_exchanges() == 0);
  CHECK(receiver.open_exchanges() == 0);
  // A continuation for that receive now breaks the protocol.
  PacketHeader stray = rts.header;
  stray.type = PacketType::data;
  stray.drqid = 0xabc;
  CHECK_THROWS_AS(receiver.to_frame(0, stray), WireError);
}

TEST_CASE("cancel: CANCEL names the send, CANCELYES / CANCELNO answer", "[impi][translate]") {
  JobMap map0 = two_procs(0), map1 = two_procs(1);
  Translator sender(map0, 0), receiver(map1, 1);
  auto rts = sender.to_packet(1, message(frame::Kind::rts, 5000, 0x88), 1000);
  (void)receiver.to_frame(0, rts.header);
  auto cancel = sender.to_packet(1, Frame::cancel_request(7, 0x88), 0);
  CHECK(encoded(cancel.header) ==
        layout("00000004", "00000000", proc0, proc1, "0000000000000088", "0000000000000000", "0000000000000000",
               "00000000", "00000000", "0000000000000000", "ffffffffffffffff"));
  // IMPI's CANCEL does not name the context.
  CHECK(receiver.to_frame(0, cancel.header).frame ==
        Frame::cancel_request(frame::any_context, 0x88));
  auto yes = receiver.to_packet(0, Frame::cancel_reply(0x88, true), 0);
  CHECK(encoded(yes.header) ==
        layout("00000005", "00000000", proc1, proc0, "0000000000000088", "0000000000000000", "0000000000000000",
               "00000000", "00000000", "0000000000000000", "ffffffffffffffff"));
  CHECK(sender.to_frame(1, yes.header).frame == Frame::cancel_reply(0x88, true));
  CHECK(sender.open_exchanges() == 0);
  CHECK(receiver.open_exchanges() == 0);
  auto no = receiver.to_packet(0, Frame::cancel_reply(0x89, false), 0);
  CHECK(no.header.type == PacketType::cancelno);
}

TEST_CASE("packets that break the protocol are refused", "[impi][translate]") {
  JobMap map1 = two_procs(1);
  Translator receiver(map1, 1);
  JobMap map0 = two_procs(0);
  Translator sender(map0, 0);
  PacketHeader h = sender.to_packet(1, message(frame::Kind::eager, 10, 1), 10).header;
  PacketHeader longer = h;
  longer.len = 11;  // more than the message
  CHECK_THROWS_AS(receiver.to_frame(0, longer), WireError);
  PacketHeader big = h;
  big.len = big.msglen = 1001;  // beyond IMPI_C_DATALEN
  CHECK_THROWS_AS(receiver.to_frame(0, big), WireError);
  PacketHeader cid = h;
  cid.cid = 0xffffffffull;  // beyond 32 bits of context
  CHECK_THROWS_AS(receiver.to_frame(0, cid), WireError);
  PacketHeader unknown_receive = h;
  unknown_receive.len = 5;  // a continuation no SYNCACK announced
  unknown_receive.drqid = 99;
  CHECK_THROWS_AS(receiver.to_frame(0, unknown_receive), WireError);
  // Data for a receive that never answered cannot be sent.
  CHECK_THROWS_AS(sender.to_packet(1, Frame::data(0xdead, 0), 10), gridmpi::MpiError);
}

TEST_CASE("representation flags ride in pk_reserved only towards a client that takes native data",
          "[impi][translate]") {
  JobMap map0 = two_procs(0), map1 = two_procs(1);
  Frame m = message(frame::Kind::eager, 4, 1);
  m.flags = frame::flag_native_basic;
  m.basic = 0x12;
  {
    Translator t(map0, 0);  // no representation records: external32, IMPI's pk_reserved 0
    CHECK(t.to_packet(1, m, 4).header.reserved == 0);
  }
  Datarep d;
  d.long_size = 8;
  d.wchar_size = 4;
  d.description_size = 10;
  d.description_hash = 1;
  map0.client_datarep = {d, d};
  map1.client_datarep = {d, d};
  Translator sender(map0, 0), receiver(map1, 1);
  REQUIRE(sender.representation(1) == gridmpi::p2p::DataRepresentation::native);
  auto out = sender.to_packet(1, m, 4);
  CHECK(out.header.reserved == 0x4744000000020012ull);  // "GD", flags << 16, basic
  CHECK(receiver.to_frame(0, out.header).frame == m);
}

TEST_CASE("a LAM client's procs take native bytes, unmarked", "[impi][translate]") {
  JobMap map0 = two_procs(0);
  Datarep d;
  d.long_size = 8;
  d.wchar_size = 4;
  d.description_size = 10;
  d.description_hash = 1;
  map0.client_datarep = {d, d};  // as boot's assume_lam_native records it
  map0.lam_client = {false, true};
  Translator sender(map0, 0);
  CHECK(sender.representation(1) == gridmpi::p2p::DataRepresentation::native_unmarked);
  Frame m = message(frame::Kind::eager, 4, 1);
  m.flags = frame::flag_native_basic;
  m.basic = 0x12;
  CHECK(sender.to_packet(1, m, 4).header.reserved == 0);  // LAM reads no marks
  // Marks a LAM packet's pk_reserved might hold are not read either.
  PacketHeader h = sender.to_packet(1, message(frame::Kind::eager, 4, 2), 4).header;
  std::swap(h.src, h.dest);
  h.reserved = 0x4744000000020012ull;
  CHECK(sender.to_frame(1, h).frame.flags == 0);
}
