// The tcp transport's frame prefix and hello (p2p/tcp/tcp_wire.hpp).
#include <catch2/catch.hpp>

#include <cstring>

#include "p2p/tcp/tcp_wire.hpp"

using namespace gridmpi::p2p::tcp;

TEST_CASE("frame prefixes round-trip", "[wire][tcp]") {
  for (FrameType type : {FrameType::hello, FrameType::message, FrameType::goodbye}) {
    FramePrefix p{type, 32, (1ull << 40) + 5, 104};
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
  // Padding beyond its limit.
  FramePrefix{FrameType::message, 4, 70000, FramePrefix::max_padding + 1}.encode(b);
  CHECK_FALSE(FramePrefix::decode(b, &why));
  CHECK(why.find("padding") != std::string::npos);
  // An absurd header length.
  FramePrefix{FrameType::message, 2000, 10}.encode(b);
  CHECK_FALSE(FramePrefix::decode(b, &why));
  CHECK(why.find("header length") != std::string::npos);
  // An absurd payload length ("GET / HTTP/1.1" read as a prefix is refused).
  const char http[] = "GET / HTTP/1.1\r\n";
  std::memcpy(b.data(), http, FramePrefix::size);
  CHECK_FALSE(FramePrefix::decode(b, &why));
}

TEST_CASE("payload padding keeps the payload 128 to 3968 bytes past its address modulo 4 KiB", "[wire][tcp]") {
  for (std::uintptr_t address : {std::uintptr_t{0x10000}, std::uintptr_t{0x10010}, std::uintptr_t{0x10040},
                                 std::uintptr_t{0x10ff0}, std::uintptr_t{0x10800}, std::uintptr_t{0x10fb0}}) {
    for (std::size_t head : {std::size_t{16}, std::size_t{40}, std::size_t{64}, std::size_t{200}}) {
      std::uint32_t pad = payload_padding(address, head);
      std::size_t distance = (head + pad + 4096 - address % 4096) % 4096;
      INFO("address " << address << " head " << head << " padding " << pad);
      CHECK(pad <= 256);
      CHECK(distance >= 128);
      CHECK(distance <= 4096 - 128);
    }
  }
  // Already well apart: no padding.
  CHECK(payload_padding(0x10000, 40 + 1024) == 0);
  // A malloc'd block (16 bytes into its page) after a 40-byte head: 24
  // bytes apart, the slow case; padded to 128.
  CHECK(payload_padding(0x7f0000000010, 40) == 104);
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
