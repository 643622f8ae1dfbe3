// impi/relay: the impi-relay's one-line protocol (requests, answers, the
// relay's greeting on mpirun's server connection) and how mpirun tells the
// greeting from impi-server's first bytes.
#include <catch2/catch.hpp>

#include "impi/relay.hpp"

using namespace gridmpi::impi::relay;

TEST_CASE("relay lines round-trip through format and parse", "[relay]") {
  Endpoint e{0x0a5d0102, 40000};  // 10.93.1.2
  for (auto kind : {Line::Kind::connect, Line::Kind::listen, Line::Kind::relay, Line::Kind::ok}) {
    Line l{kind, e, ""};
    std::string text = format(l);
    REQUIRE(text.back() == '\n');
    auto back = parse(std::string_view(text).substr(0, text.size() - 1));
    REQUIRE(back);
    CHECK(back->kind == kind);
    REQUIRE(back->endpoint);
    CHECK(*back->endpoint == e);
  }
  CHECK(format(Line{Line::Kind::connect, e, ""}) == "GRIDMPI-RELAY 1 CONNECT 10.93.1.2:40000\n");
  auto ok = parse("GRIDMPI-RELAY 1 OK");
  REQUIRE(ok);
  CHECK(ok->kind == Line::Kind::ok);
  CHECK(!ok->endpoint);
}

TEST_CASE("an ERR line keeps its text on one line", "[relay]") {
  std::string text = format(Line{Line::Kind::err, std::nullopt, "cannot reach\nimpi-server"});
  CHECK(text == "GRIDMPI-RELAY 1 ERR cannot reach impi-server\n");
  auto back = parse(std::string_view(text).substr(0, text.size() - 1));
  REQUIRE(back);
  CHECK(back->kind == Line::Kind::err);
  CHECK(back->text == "cannot reach impi-server");
  // Too long: cut to the line limit, still one line.
  std::string longer = format(Line{Line::Kind::err, std::nullopt, std::string(2000, 'x')});
  CHECK(longer.size() == max_line);
  CHECK(longer.find('\n') == longer.size() - 1);
}

TEST_CASE("malformed relay lines are refused", "[relay]") {
  CHECK(!parse(""));
  CHECK(!parse("GRIDMPI-RELAY 2 CONNECT 10.0.0.1:5"));
  CHECK(!parse("GRIDMPI-RELAY 1 CONNECT"));
  CHECK(!parse("GRIDMPI-RELAY 1 CONNECT 10.0.0.1"));
  CHECK(!parse("GRIDMPI-RELAY 1 CONNECT 10.0.0.1:0"));
  CHECK(!parse("GRIDMPI-RELAY 1 CONNECT 10.0.0.300:5"));
  CHECK(!parse("GRIDMPI-RELAY 1 LISTEN host.example:5"));
  CHECK(!parse("GRIDMPI-RELAY 1 OK notanaddress"));
  CHECK(!parse("GRIDMPI-RELAY 1 FLY 10.0.0.1:5"));
}

TEST_CASE("the relay's greeting is told from impi-server's first bytes", "[relay]") {
  CHECK(starts_with_prefix("") == Start::undecided);
  CHECK(starts_with_prefix("GRIDMPI-RE") == Start::undecided);
  CHECK(starts_with_prefix("GRIDMPI-RELAY 1 RELAY 1.2.3.4:5\n") == Start::yes);
  CHECK(starts_with_prefix("GRIDMPI-RELAY 2 ") == Start::no);
  // IMPI commands start with a big-endian int4 (0x00 first), TLS records with 0x16.
  CHECK(starts_with_prefix(std::string("\0\0\0\x01", 4)) == Start::no);
  CHECK(starts_with_prefix("\x16\x03\x03") == Start::no);
}
