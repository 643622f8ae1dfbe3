// The tcp transport's frame prefix and hello (p2p/tcp/tcp_wire.hpp).
#include <catch2/catch.hpp>

#include <cstring>

#include "p2p/tcp/tcp_wire.hpp"

using namespace gridmpi::p2p::tcp;

TEST_CASE("frame prefixes round-trip", "[wire][tcp]") {
  for (FrameType type : {FrameType::hello, FrameType::message, FrameType::goodbye}) {
    FramePrefix p{type, 32, (1ull << 40) + 5};
    std::array<std::byte, FramePrefix::size> b{};
    p.encode(b);
    std::string why;
    auto back = FramePrefix::decode(b, &why);
    REQUIRE(back);
    CHECK(*back == p);
  }
}

TEST_CASE("garbage prefixes are refused with a reason", "[wire][tcp]") {
  std::array<std::byte, FramePrefix::size> b{};
  std::string why;
  // Type 0.
  CHECK_FALSE(FramePrefix::decode(b, &why));
  CHECK(why.find("frame type") != std::string::npos);
  // Reserved bits.
  FramePrefix{FrameType::message, 4, 10}.encode(b);
  b[1] = std::byte{1};
  CHECK_FALSE(FramePrefix::decode(b, &why));
  // An absurd header length.
  FramePrefix{FrameType::message, 2000, 10}.encode(b);
  CHECK_FALSE(FramePrefix::decode(b, &why));
  CHECK(why.find("header length") != std::string::npos);
  // An absurd payload length ("GET / HTTP/1.1" read as a prefix is refused).
  const char http[] = "GET / HTTP/1.1\r\n";
  std::memcpy(b.data(), http, FramePrefix::size);
  CHECK_FALSE(FramePrefix::decode(b, &why));
}

TEST_CASE("hellos round-trip and a bad magic is refused", "[wire][tcp]") {
  Hello h{Hello::current_version, 0x1122334455667788ull, 7};
  std::array<std::byte, Hello::size> b{};
  h.encode(b);
  CHECK(b[0] == std::byte{'G'});
  CHECK(b[1] == std::byte{'M'});
  CHECK(b[2] == std::byte{'P'});
  CHECK(b[3] == std::byte{'I'});
  std::string why;
  auto back = Hello::decode(b, &why);
  REQUIRE(back);
  CHECK(*back == h);
  b[0] = std::byte{'X'};
  CHECK_FALSE(Hello::decode(b, &why));
  CHECK(why.find("magic") != std::string::npos);
}
