// Round trips of every frame kind (p2p/frame.hpp), its exact byte layout,
// and refusal of malformed headers.
#include <catch2/catch.hpp>

#include "base/error.hpp"
#include "p2p/frame.hpp"

using namespace gridmpi::p2p::frame;

namespace {
Frame round_trip(const Frame& f, std::size_t expected_size) {
  HeaderBuffer buffer{};
  std::size_t n = encode(f, buffer);
  REQUIRE(n == expected_size);
  REQUIRE(encoded_size(f.kind) == expected_size);
  return decode(std::span<const std::byte>(buffer.data(), n));
}
}  // namespace

TEST_CASE("message frames round-trip for eager, sync-eager and rts", "[wire]") {
  for (Kind kind : {Kind::eager, Kind::sync_eager, Kind::rts}) {
    Frame h = Frame::message(kind, {0xfedcba98u, 123456, 0x7fffffff}, 0x0102030405060708ull, 0xffffffffffffffffull);
    CHECK(round_trip(h, 32) == h);
    h.envelope.source = -2;  // negative values survive too
    h.envelope.tag = 0;
    CHECK(round_trip(h, 32) == h);
    h.flags = flag_native_basic | flag_external64;
    h.basic = 0xbeef;
    CHECK(round_trip(h, 32) == h);
  }
}

TEST_CASE("cts, data and sync-ack frames round-trip", "[wire]") {
  Frame cts = Frame::cts(11, 22, 1ull << 40);
  CHECK(round_trip(cts, 32) == cts);
  cts.waited_us = 0xfedcba98u;  // how long the rts waited for its receive
  CHECK(round_trip(cts, 32).waited_us == 0xfedcba98u);
  Frame data = Frame::data(0xabcdef, 1ull << 33);
  CHECK(round_trip(data, 24) == data);
  Frame ack = Frame::sync_ack(77);
  CHECK(round_trip(ack, 16) == ack);
}

TEST_CASE("cancel request and reply frames round-trip", "[wire]") {
  Frame request = Frame::cancel_request(0xfedcba98u, 0x0102030405060708ull);
  CHECK(round_trip(request, 16) == request);
  CHECK(round_trip(Frame::cancel_request(any_context, 3), 16).envelope.context == any_context);
  for (bool cancelled : {false, true}) {
    Frame reply = Frame::cancel_reply(0xffffffffffffffffull, cancelled);
    CHECK(round_trip(reply, 16) == reply);
  }
  HeaderBuffer b{};
  encode(Frame::cancel_reply(5, true), b);
  CHECK(peek_kind(b) == Kind::cancel_reply);
  CHECK(b[0] == std::byte{8});
  CHECK(b[4] == std::byte{1});  // cancelled, as a u32
  CHECK(b[8] == std::byte{5});  // sender_id
  b[4] = std::byte{2};
  CHECK_THROWS_WITH(decode(b), Catch::Contains("cancelled = 2"));
  encode(Frame::cancel_request(7, 9), b);
  CHECK(b[0] == std::byte{7});
  CHECK(b[4] == std::byte{7});  // context
  CHECK(b[8] == std::byte{9});  // sender_id
  CHECK(kind_name(peek_kind(b)) == "cancel-request");
}

TEST_CASE("credit frames round-trip, laid out as documented", "[wire]") {
  Frame credit = Frame::credit(0xfedcba98u, -7, 1ull << 35);
  CHECK(round_trip(credit, 24) == credit);
  HeaderBuffer b{};
  encode(Frame::credit(3, 5, 0x0102), b);
  CHECK(peek_kind(b) == Kind::credit);
  CHECK(b[0] == std::byte{9});
  CHECK(b[4] == std::byte{3});    // context
  CHECK(b[8] == std::byte{5});    // tag
  CHECK(b[12] == std::byte{0});   // reserved
  CHECK(b[16] == std::byte{2});   // bytes, little-endian
  CHECK(b[17] == std::byte{1});
  CHECK(kind_name(Kind::credit) == "credit");
  CHECK_THROWS_WITH(decode(std::span<const std::byte>(b.data(), 20)), Catch::Contains("credit header of 20 bytes"));
}

TEST_CASE("header bytes are little-endian whatever the host", "[wire]") {
  Frame h = Frame::message(Kind::rts, {0x11223344u, 1, 2}, 0x0a0b, 0);
  h.flags = flag_native_basic;
  h.basic = 0x0102;
  HeaderBuffer b{};
  encode(h, b);
  CHECK(b[0] == std::byte{3});  // kind rts
  CHECK(b[1] == std::byte{2});  // flags
  CHECK(b[2] == std::byte{0x02});  // basic
  CHECK(b[3] == std::byte{0x01});
  CHECK(b[4] == std::byte{0x44});
  CHECK(b[7] == std::byte{0x11});
  CHECK(b[16] == std::byte{0x0b});
  CHECK(b[17] == std::byte{0x0a});
  CHECK(peek_kind(b) == Kind::rts);
  // The other kinds: u8 kind, then zero flags and reserved bytes.
  encode(Frame::cts(0x0102, 0x0304, 0x0506), b);
  CHECK(b[0] == std::byte{4});
  CHECK(b[1] == std::byte{0});
  CHECK(b[8] == std::byte{0x02});
  CHECK(b[16] == std::byte{0x04});
  CHECK(b[24] == std::byte{0x06});
  encode(Frame::data(0x0708, 0x090a), b);
  CHECK(b[0] == std::byte{5});
  CHECK(b[8] == std::byte{0x08});
  CHECK(b[16] == std::byte{0x0a});
}

TEST_CASE("malformed headers are refused with a reason", "[wire]") {
  HeaderBuffer b{};
  encode(Frame::sync_ack(5), b);
  // Too short for its kind.
  CHECK_THROWS_AS(decode(std::span<const std::byte>(b.data(), 8)), gridmpi::MpiError);
  CHECK_THROWS_WITH(decode(std::span<const std::byte>(b.data(), 2)), Catch::Contains("frame header of 2 bytes"));
  encode(Frame::cts(1, 2, 3), b);
  CHECK_THROWS_WITH(decode(std::span<const std::byte>(b.data(), 24)),
                    Catch::Contains("clear-to-send header of 24 bytes, expected 32"));
  // Unknown kind.
  b[0] = std::byte{42};
  CHECK_THROWS_WITH(peek_kind(b), Catch::Contains("unknown frame kind 42"));
  CHECK_THROWS_WITH(decode(b), Catch::Contains("unknown frame kind 42"));
  b[0] = std::byte{0};
  CHECK_THROWS_AS(decode(b), gridmpi::MpiError);
  // Encoding into a too small buffer.
  std::array<std::byte, 8> small{};
  CHECK_THROWS_AS(encode(Frame::data(1, 2), small), gridmpi::MpiError);
}
