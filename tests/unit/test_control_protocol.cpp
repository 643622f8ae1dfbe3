// Control-service wire format: round trips of every message type and the
// frame decoder's handling of split, merged and malformed input.
#include <catch2/catch.hpp>

#include "boot/control_protocol.hpp"

using namespace gridmpi::boot;

namespace {
Message sample(MessageType type) {
  Message m;
  m.type = type;
  switch (type) {
    case MessageType::hello:
    case MessageType::proxy_hello:
      m.cookie = 0xfedcba9876543210ull;
      m.rank = 7;
      m.pid = 4242;
      m.host = "node07";
      break;
    case MessageType::put_fence:
      m.key = "endpoint";
      m.value = std::string("tcp://10.0.0.1:4000\0binary", 26);
      break;
    case MessageType::abort:
      m.code = -3;
      m.text = "bad input";
      m.key = abort_key_error;
      break;
    case MessageType::welcome:
      m.size = 64;
      break;
    case MessageType::refuse:
    case MessageType::proxy_failed:
      m.text = "wrong job cookie";
      break;
    case MessageType::values:
      m.key = "endpoint";
      m.values = {"a", "", "ccc"};
      break;
    case MessageType::proxy_started:
      m.pid = 99;
      break;
    case MessageType::proxy_exit:
    case MessageType::proxy_signal:
      m.code = -11;
      break;
    default:
      break;
  }
  return m;
}
}  // namespace

TEST_CASE("control messages survive encode and decode", "[control]") {
  for (auto type : {MessageType::hello, MessageType::put_fence, MessageType::abort, MessageType::finalize,
                    MessageType::welcome, MessageType::refuse, MessageType::values, MessageType::abort_ack,
                    MessageType::finalize_ack, MessageType::proxy_hello, MessageType::proxy_started,
                    MessageType::proxy_failed, MessageType::proxy_exit, MessageType::proxy_signal}) {
    Message m = sample(type);
    FrameDecoder decoder;
    decoder.feed(encode(m));
    auto back = decoder.next();
    INFO(message_type_name(type));
    REQUIRE(back);
    CHECK(*back == m);
    CHECK_FALSE(decoder.next());
    CHECK(decoder.buffered() == 0);
  }
}

TEST_CASE("hello frame layout is big-endian length, type, fields", "[control]") {
  Message m;
  m.type = MessageType::hello;
  m.cookie = 0x0102030405060708ull;
  m.rank = 1;
  m.pid = 2;
  m.host = "h";
  auto bytes = encode(m);
  REQUIRE(bytes.size() == 4 + 1 + 8 + 4 + 4 + 4 + 1);
  CHECK(std::to_integer<int>(bytes[3]) == 22);  // payload length
  CHECK(std::to_integer<int>(bytes[4]) == 1);   // hello
  CHECK(std::to_integer<int>(bytes[5]) == 1);   // cookie, most significant byte first
  CHECK(std::to_integer<int>(bytes[12]) == 8);
}

TEST_CASE("frame decoder reassembles byte-by-byte and merged input", "[control]") {
  std::vector<std::byte> stream;
  encode(sample(MessageType::put_fence), stream);
  encode(sample(MessageType::finalize), stream);
  encode(sample(MessageType::values), stream);

  FrameDecoder one_by_one;
  std::vector<Message> got;
  for (auto b : stream) {
    one_by_one.feed(std::span(&b, 1));
    while (auto m = one_by_one.next()) got.push_back(*m);
  }
  REQUIRE(got.size() == 3);
  CHECK(got[0] == sample(MessageType::put_fence));
  CHECK(got[1].type == MessageType::finalize);
  CHECK(got[2] == sample(MessageType::values));

  FrameDecoder all_at_once;
  all_at_once.feed(stream);
  int n = 0;
  while (all_at_once.next()) ++n;
  CHECK(n == 3);
}

TEST_CASE("frame decoder rejects malformed frames", "[control]") {
  SECTION("unknown type") {
    std::vector<std::byte> bad = {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{1}, std::byte{99}};
    FrameDecoder d;
    d.feed(bad);
    CHECK_THROWS_AS(d.next(), ProtocolError);
  }
  SECTION("oversized frame") {
    std::vector<std::byte> bad = {std::byte{0x7f}, std::byte{0}, std::byte{0}, std::byte{0}};
    FrameDecoder d(1024);
    d.feed(bad);
    CHECK_THROWS_WITH(d.next(), Catch::Contains("exceeds the limit"));
  }
  SECTION("string longer than its frame") {
    auto bytes = encode(sample(MessageType::refuse));
    bytes[7] = std::byte{0x01};  // the string length claims 256 bytes more than the frame has
    FrameDecoder d;
    d.feed(bytes);
    CHECK_THROWS_AS(d.next(), ProtocolError);
  }
  SECTION("trailing bytes inside a frame") {
    auto bytes = encode(sample(MessageType::finalize));
    bytes[3] = std::byte{2};
    bytes.push_back(std::byte{0});
    FrameDecoder d;
    d.feed(bytes);
    CHECK_THROWS_WITH(d.next(), Catch::Contains("trailing"));
  }
}
