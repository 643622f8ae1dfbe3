// The IMPI wire formats (impi/wire.hpp) against the byte images of
// docs/impi-protocol.md: server commands (the verified COLL example, the raw
// AUTH answers), labels in canonical order, host ids (IPv4-compatible and
// IPv4-mapped), the 128-byte packet header (the verified LAM header, every
// field offset, round trip) and WireError on short or unknown input.
#include <catch2/catch.hpp>

#include <string_view>

#include "impi/wire.hpp"
#include "tests/unit/hex_bytes.hpp"

using namespace gridmpi::impi;

namespace {

using Bytes = std::vector<std::byte>;

using gridmpi::test::hex_bytes;

std::string hex(std::span<const std::byte> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i && i % 4 == 0) s += ' ';
    auto v = std::to_integer<unsigned>(bytes[i]);
    s += digits[v >> 4];
    s += digits[v & 15];
  }
  return s;
}

}  // namespace

// ---- integers ---------------------------------------------------------------------

TEST_CASE("integers are big-endian", "[impi][wire]") {
  std::byte b[8]{};
  put_u32(b, 0x01020304);
  CHECK(hex(std::span(b, 4)) == "01020304");
  CHECK(get_u32(b) == 0x01020304u);
  put_u64(b, 0x0102030405060708ull);
  CHECK(hex(std::span(b, 8)) == "01020304 05060708");
  CHECK(get_u64(b) == 0x0102030405060708ull);
  Bytes v;
  append_u32(v, 0xdeadbeef);
  append_u64(v, 0xffffffffffffffffull);
  CHECK(hex(v) == "deadbeef ffffffff ffffffff");
}

// ---- commands ---------------------------------------------------------------------

TEST_CASE("command codes are the ASCII names", "[impi][wire]") {
  CHECK(static_cast<std::uint32_t>(Command::auth) == 0x41555448u);
  CHECK(static_cast<std::uint32_t>(Command::impi) == 0x494d5049u);
  CHECK(static_cast<std::uint32_t>(Command::coll) == 0x434f4c4cu);
  CHECK(static_cast<std::uint32_t>(Command::done) == 0x444f4e45u);
  CHECK(static_cast<std::uint32_t>(Command::fini) == 0x46494e49u);
  CHECK(command_name(0x434f4c4c) == "COLL");
  CHECK(command_name(0x46494e49) == "FINI");
  CHECK(command_name(0x47455420) == "0x47455420");  // "GET " is not a command
  CHECK(is_known_command(0x41555448));
  CHECK_FALSE(is_known_command(0));
  CHECK_FALSE(is_known_command(0x41555449));
}

TEST_CASE("command header: byte image, decode, short input", "[impi][wire]") {
  std::byte b[8];
  CommandHeader{0x434f4c4c, 16}.encode(b);
  CHECK(hex(b) == "434f4c4c 00000010");
  auto h = CommandHeader::decode(hex_bytes("444f4e45 00000000 ffff"));  // trailing bytes are not its business
  CHECK(h.command == 0x444f4e45u);
  CHECK(h.length == 0u);
  h = CommandHeader::decode(hex_bytes("12345678 ffffffff"));  // unknown codes are kept for messages
  CHECK(h.command == 0x12345678u);
  CHECK(h.length == 0xffffffffu);
  CHECK_THROWS_AS(CommandHeader::decode(hex_bytes("434f4c4c 000000")), WireError);
  CHECK_THROWS_WITH(CommandHeader::decode({}), Catch::Contains("0 bytes"));
}

TEST_CASE("AUTH: client mask, the server's raw 8-byte answers, the raw key", "[impi][wire]") {
  CHECK(auth_bit(auth_none) == 0x1u);
  CHECK(auth_bit(auth_key) == 0x2u);
  CHECK(hex(encode_auth(0x3)) == "41555448 00000004 00000003");
  // No command header: method, then the length of method data (0).
  CHECK(hex(encode_auth_choice(auth_none)) == "00000000 00000000");
  CHECK(hex(encode_auth_choice(auth_key)) == "00000001 00000000");
  CHECK(hex(encode_auth_key(0x0102030405060708ull)) == "01020304 05060708");
  CHECK(hex(encode_auth_key(12345678901234567890ull)) == "ab54a98c eb1f0ad2");
}

TEST_CASE("IMPI, DONE, FINI", "[impi][wire]") {
  CHECK(hex(encode_impi(1)) == "494d5049 00000004 00000001");
  CHECK(hex(encode_impi(32)) == "494d5049 00000004 00000020");
  CHECK(hex(encode_impi(-1)) == "494d5049 00000004 ffffffff");
  CHECK(hex(encode_done()) == "444f4e45 00000000");
  CHECK(hex(encode_fini()) == "46494e49 00000000");
}

TEST_CASE("COLL: contribution and the verified broadcast example", "[impi][wire]") {
  Bytes three = hex_bytes("00000003");
  CHECK(hex(encode_coll_contribution(label_c_nprocs, three)) == "434f4c4c 00000008 00001200 00000003");
  CHECK(hex(encode_coll_contribution(0x7777, {})) == "434f4c4c 00000004 00007777");
  // 2 clients, IMPI_C_NPROCS 2 and 3 (docs/impi-protocol.md 3.5, verified against the IU server).
  Bytes data = hex_bytes("00000002 00000003");
  CHECK(hex(encode_coll_result(label_c_nprocs, 0x3, data)) ==
        "434f4c4c 00000010 00001200 00000003 00000002 00000003");
  // Client 1 skipped IMPI_C_TAGUB.
  CHECK(hex(encode_coll_result(label_c_tagub, 0x1, hex_bytes("00007fff"))) ==
        "434f4c4c 0000000c 00001400 00000001 00007fff");
}

// ---- labels -----------------------------------------------------------------------

TEST_CASE("the 14 standard labels in canonical order", "[impi][wire]") {
  const std::int32_t codes[] = {0x1000, 0x1100, 0x1200, 0x1300, 0x1400, 0x1500, 0x1600,
                                0x2000, 0x2100, 0x2200, 0x2300, 0x2400, 0x3000, 0x3100};
  const char* names[] = {"IMPI_C_VERSION", "IMPI_C_NHOSTS", "IMPI_C_NPROCS", "IMPI_C_DATALEN", "IMPI_C_TAGUB",
                         "IMPI_C_COLL_XSIZE", "IMPI_C_COLL_MAXLINEAR", "IMPI_H_IPV6", "IMPI_H_PORT",
                         "IMPI_H_NPROCS", "IMPI_H_ACKMARK", "IMPI_H_HIWATER", "IMPI_P_IPV6", "IMPI_P_PID"};
  const auto& labels = standard_labels();
  REQUIRE(labels.size() == 14);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    CAPTURE(i);
    CHECK(labels[i].code == codes[i]);
    CHECK(std::string(labels[i].name) == names[i]);
    CHECK(label_index(codes[i]) == static_cast<int>(i));
    CHECK(label_name(codes[i]) == names[i]);
  }
  CHECK(labels[0].scope == Scope::client);
  CHECK(labels[0].element == 8);  // {major, minor}
  CHECK(labels[7].scope == Scope::host);
  CHECK(labels[7].element == 16);
  CHECK(labels[12].scope == Scope::proc);
  CHECK(labels[13].element == 8);  // P_PID is an Int8
  CHECK(label_index(0) == -1);     // IMPI_NO_LABEL
  CHECK(label_index(0x7777) == -1);
  CHECK(label_index(0x1001) == -1);
  CHECK(label_name(0x7777) == "label 0x7777");
}

// ---- host ids ----------------------------------------------------------------------

TEST_CASE("host ids: IPv4-compatible written, both IPv4 forms read", "[impi][wire]") {
  HostId id = host_id_from_ipv4(0x7f000001);
  CHECK(hex(id) == "00000000 00000000 00000000 7f000001");
  CHECK(ipv4_from_host_id(id) == 0x7f000001u);
  CHECK(to_string(id) == "127.0.0.1");

  HostId mapped{};  // ::ffff:10.1.2.3, what MetaMPICH sends
  auto m = hex_bytes("00000000 00000000 0000ffff 0a010203");
  std::copy(m.begin(), m.end(), mapped.begin());
  CHECK(ipv4_from_host_id(mapped) == 0x0a010203u);
  CHECK(to_string(mapped) == "10.1.2.3");

  HostId v6{};  // 2001:db8::1
  auto b = hex_bytes("20010db8 00000000 00000000 00000001");
  std::copy(b.begin(), b.end(), v6.begin());
  CHECK_FALSE(ipv4_from_host_id(v6).has_value());
  CHECK(to_string(v6) == "20010db8000000000000000000000001");
  HostId odd{};  // bytes 10..11 neither 0000 nor ffff
  odd[10] = std::byte{0x12};
  odd[15] = std::byte{1};
  CHECK_FALSE(ipv4_from_host_id(odd).has_value());
}

// ---- packets ------------------------------------------------------------------------

TEST_CASE("packet header: the verified LAM DATA header decodes", "[impi][wire]") {
  // Short MPI_Send of 4 ints from world rank 1 (LAM) to 0, tag 7 (docs/impi-protocol.md 6.3).
  Bytes raw = hex_bytes(
      "00000000 00000010"
      "00000000 00000000 00000000 7f000002 00000000 00005693"
      "00000000 00000000 00000000 7f000001 00000000 00001092"
      "00000000 00000000 | 00000000 00000000 | 00000000 00000010 | 00000001 | 00000007"
      "00000000 00000000 | 00000000 00000001 | 00000000 00000000 | 00000000 00000000 | 00000000 00000000");
  REQUIRE(raw.size() == 128);
  PacketHeader h = PacketHeader::decode(raw);
  CHECK(h.type == PacketType::data);
  CHECK(h.len == 16u);
  CHECK(to_string(h.src.host) == "127.0.0.2");
  CHECK(h.src.pid == 0x5693);
  CHECK(to_string(h.dest.host) == "127.0.0.1");
  CHECK(h.dest.pid == 0x1092);
  CHECK(h.msglen == 16u);
  CHECK(h.lsrank == 1);
  CHECK(h.tag == 7);
  CHECK(h.cid == 0u);
  CHECK(h.seqnum == 1u);
  CHECK(h.count == 0);
  std::array<std::byte, 128> again{};
  h.encode(again.data());
  CHECK(hex(again) == hex(raw));
}

TEST_CASE("packet header: every field at its offset, round trip", "[impi][wire]") {
  PacketHeader h;
  h.type = PacketType::cancelno;
  h.len = 0x01020304;
  h.src = {host_id_from_ipv4(0x0a000001), 0x1112131415161718};
  h.dest = {host_id_from_ipv4(0x0a000002), -2};
  h.srqid = 0x2122232425262728;
  h.drqid = 0x3132333435363738;
  h.msglen = 0x4142434445464748;
  h.lsrank = -1;
  h.tag = 0x51525354;
  h.cid = 0x6162636465666768;
  h.seqnum = 0x7172737475767778;
  h.count = -1;
  h.dtype = 0x8182838485868788;
  h.reserved = 0x9192939495969798;
  std::array<std::byte, 128> b{};
  h.encode(b.data());
  auto at = [&](std::size_t offset, std::size_t size) { return hex(std::span(b).subspan(offset, size)); };
  CHECK(at(0, 4) == "00000006");
  CHECK(at(4, 4) == "01020304");
  CHECK(at(8, 16) == "00000000 00000000 00000000 0a000001");
  CHECK(at(24, 8) == "11121314 15161718");
  CHECK(at(32, 16) == "00000000 00000000 00000000 0a000002");
  CHECK(at(48, 8) == "ffffffff fffffffe");
  CHECK(at(56, 8) == "21222324 25262728");
  CHECK(at(64, 8) == "31323334 35363738");
  CHECK(at(72, 8) == "41424344 45464748");
  CHECK(at(80, 4) == "ffffffff");
  CHECK(at(84, 4) == "51525354");
  CHECK(at(88, 8) == "61626364 65666768");
  CHECK(at(96, 8) == "71727374 75767778");
  CHECK(at(104, 8) == "ffffffff ffffffff");
  CHECK(at(112, 8) == "81828384 85868788");
  CHECK(at(120, 8) == "91929394 95969798");
  CHECK(PacketHeader::decode(b) == h);
  for (std::uint32_t t = 0; t <= 7; ++t) {
    h.type = static_cast<PacketType>(t);
    h.encode(b.data());
    CHECK(PacketHeader::decode(b) == h);
  }
}

TEST_CASE("packet header: short input and unknown types are WireError", "[impi][wire]") {
  std::array<std::byte, 128> b{};
  PacketHeader{}.encode(b.data());
  CHECK_THROWS_WITH(PacketHeader::decode(std::span(b).first(127)), Catch::Contains("127 bytes"));
  CHECK_THROWS_AS(PacketHeader::decode({}), WireError);
  b[3] = std::byte{8};
  CHECK_THROWS_WITH(PacketHeader::decode(b), Catch::Contains("unknown packet type 8"));
  b[0] = std::byte{0x80};
  b[3] = std::byte{0};
  CHECK_THROWS_AS(PacketHeader::decode(b), WireError);
}

TEST_CASE("packet types: names, flow control, payload", "[impi][wire]") {
  CHECK(std::string(packet_type_name(PacketType::datasync)) == "DATASYNC");
  CHECK(std::string(packet_type_name(PacketType::fini)) == "FINI");
  int counted = 0;
  int with_payload = 0;
  for (std::uint32_t t = 0; t <= 7; ++t) {
    counted += counts_for_flow_control(static_cast<PacketType>(t));
    with_payload += carries_payload(static_cast<PacketType>(t));
  }
  CHECK(counted == 6);
  CHECK_FALSE(counts_for_flow_control(PacketType::protoack));
  CHECK_FALSE(counts_for_flow_control(PacketType::fini));
  CHECK(with_payload == 2);
  CHECK(carries_payload(PacketType::data));
  CHECK(carries_payload(PacketType::datasync));
  CHECK_FALSE(carries_payload(PacketType::syncack));  // LAM writes pk_len 128 there
}
