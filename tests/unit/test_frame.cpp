// Round trips of every request-layer header (p2p/frame.hpp), its exact
// byte layout, and refusal of malformed headers.
#include <catch2/catch.hpp>

#include "base/error.hpp"
#include "p2p/frame.hpp"

using namespace gridmpi::p2p::frame;

namespace {
template <class H>
H round_trip(const H& h, std::size_t expected_size) {
  HeaderBuffer buffer{};
  std::size_t n = h.encode(buffer);
  REQUIRE(n == expected_size);
  return H::decode(std::span<const std::byte>(buffer.data(), n));
}
}  // namespace

TEST_CASE("message headers round-trip for eager, sync-eager and rts", "[wire]") {
  for (Kind kind : {Kind::eager, Kind::sync_eager, Kind::rts}) {
    MessageHeader h;
    h.kind = kind;
    h.envelope = {0xfedcba98u, 123456, 0x7fffffff};
    h.size = 0x0102030405060708ull;
    h.sender_id = 0xffffffffffffffffull;
    CHECK(round_trip(h, MessageHeader::encoded_size) == h);
    h.envelope.source = -2;  // negative values survive too
    h.envelope.tag = 0;
    CHECK(round_trip(h, MessageHeader::encoded_size) == h);
  }
}

TEST_CASE("cts, data and sync-ack headers round-trip", "[wire]") {
  CtsHeader cts{11, 22, 1ull << 40};
  CHECK(round_trip(cts, CtsHeader::encoded_size) == cts);
  DataHeader data{0xabcdef, 1ull << 33};
  CHECK(round_trip(data, DataHeader::encoded_size) == data);
  SyncAckHeader ack{77};
  CHECK(round_trip(ack, SyncAckHeader::encoded_size) == ack);
}

TEST_CASE("cancel request and reply headers round-trip", "[wire]") {
  CancelRequestHeader request{0xfedcba98u, 0x0102030405060708ull};
  CHECK(round_trip(request, CancelRequestHeader::encoded_size) == request);
  for (bool cancelled : {false, true}) {
    CancelReplyHeader reply{0xffffffffffffffffull, cancelled};
    CHECK(round_trip(reply, CancelReplyHeader::encoded_size) == reply);
  }
  HeaderBuffer b{};
  CancelReplyHeader{5, true}.encode(b);
  CHECK(peek_kind(b) == Kind::cancel_reply);
  CHECK(b[0] == std::byte{8});
  CHECK(b[4] == std::byte{1});  // cancelled, as a u32
  CHECK(b[8] == std::byte{5});  // sender_id
  b[4] = std::byte{2};
  CHECK_THROWS_WITH(CancelReplyHeader::decode(b), Catch::Contains("cancelled = 2"));
  CancelRequestHeader{7, 9}.encode(b);
  CHECK(b[0] == std::byte{7});
  CHECK(kind_name(peek_kind(b)) == "cancel-request");
}

TEST_CASE("header bytes are little-endian whatever the host", "[wire]") {
  MessageHeader h;
  h.kind = Kind::rts;
  h.envelope = {0x11223344u, 1, 2};
  h.size = 0x0a0b;
  HeaderBuffer b{};
  h.encode(b);
  CHECK(b[0] == std::byte{3});  // kind rts
  CHECK(b[4] == std::byte{0x44});
  CHECK(b[7] == std::byte{0x11});
  CHECK(b[16] == std::byte{0x0b});
  CHECK(b[17] == std::byte{0x0a});
  CHECK(peek_kind(b) == Kind::rts);
}

TEST_CASE("malformed headers are refused with a reason", "[wire]") {
  HeaderBuffer b{};
  SyncAckHeader{5}.encode(b);
  // Too short for its kind.
  CHECK_THROWS_AS(SyncAckHeader::decode(std::span<const std::byte>(b.data(), 8)), gridmpi::MpiError);
  // Unknown kind.
  b[0] = std::byte{42};
  CHECK_THROWS_WITH(peek_kind(b), Catch::Contains("unknown frame kind 42"));
  // A cts where a message header is expected.
  CtsHeader{1, 2, 3}.encode(b);
  CHECK_THROWS_AS(MessageHeader::decode(b), gridmpi::MpiError);
  // Encoding into a too small buffer.
  std::array<std::byte, 8> small{};
  CHECK_THROWS_AS(DataHeader{}.encode(small), gridmpi::MpiError);
}
