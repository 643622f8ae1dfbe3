// How the tcp transport picks its port range and advertised address
// (p2p/tcp/tcp_address.hpp).
#include <catch2/catch.hpp>

#include <cstdlib>

#include "base/error.hpp"
#include "p2p/tcp/tcp_address.hpp"

using namespace gridmpi::p2p::tcp;

namespace {
// Sets or clears an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::string old;
  bool had;
  ScopedEnv(const char* n, const char* value) : name(n) {
    const char* o = std::getenv(n);
    had = o != nullptr;
    if (had) old = o;
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};
}  // namespace

TEST_CASE("port ranges are start:end inclusive, empty for any", "[tcp][address]") {
  CHECK(parse_port_range("", "x").any());
  auto r = parse_port_range("40000:40100", "x");
  CHECK(r.first == 40000);
  CHECK(r.last == 40100);
  CHECK(parse_port_range("5000:5000", "x").first == 5000);
  for (const char* bad : {"40000", "a:b", "100:50", "0:10", "1:70000", "1:2:3", ":5"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_port_range(bad, "_YAMPI_PORT_RANGE"), Catch::Contains("_YAMPI_PORT_RANGE='"));
  }
}

TEST_CASE("networks parse with or without a prefix and select the interface inside", "[tcp][address]") {
  Network n = parse_network("10.9.0.0/24", "x");
  CHECK(n.address == 0x0a090000u);
  CHECK(n.prefix == 24);
  CHECK(parse_network("192.168.1.0", "x").prefix == -1);
  CHECK_THROWS_AS(parse_network("10.9.0.0/33", "x"), gridmpi::MpiError);
  CHECK_THROWS_AS(parse_network("not-an-address", "x"), gridmpi::MpiError);

  std::vector<Interface> interfaces{{"lo", 0x7f000001u, 0xff000000u},
                                    {"eth0", 0xc0a80105u, 0xffffff00u},
                                    {"eth1", 0x0a090007u, 0xffff0000u}};
  CHECK(interface_in(interfaces, parse_network("10.9.0.0/24", "x"))->name == "eth1");
  CHECK(interface_in(interfaces, parse_network("192.168.1.0", "x"))->name == "eth0");  // its own netmask
  CHECK_FALSE(interface_in(interfaces, parse_network("172.16.0.0/12", "x")));
  CHECK(interface_in(interfaces, parse_network("0.0.0.0/0", "x"))->name == "lo");
}

TEST_CASE("endpoints split into host and port", "[tcp][address]") {
  auto hp = split_host_port("10.0.0.2:40123");
  REQUIRE(hp);
  CHECK(hp->host == "10.0.0.2");
  CHECK(hp->port == 40123);
  CHECK(split_host_port("[::1]:80")->host == "::1");
  CHECK_FALSE(split_host_port("10.0.0.2"));
  CHECK_FALSE(split_host_port("10.0.0.2:0"));
  CHECK_FALSE(split_host_port("10.0.0.2:99999"));
  CHECK(format_ipv4(0x0a000002u) == "10.0.0.2");
  CHECK(parse_ipv4("10.0.0.2") == 0x0a000002u);
}

TEST_CASE("the advertised address follows network, node name, local address, default", "[tcp][address]") {
  std::string how;
  {
    ScopedEnv a("_YAMPI_NODENAME", nullptr), b("GRIDMPI_LOCAL_ADDRESS", nullptr);
    CHECK(choose_advertised_address("", &how) == "127.0.0.1");
    CHECK(how == "default");
  }
  {
    ScopedEnv a("_YAMPI_NODENAME", nullptr), b("GRIDMPI_LOCAL_ADDRESS", "10.1.2.3");
    CHECK(choose_advertised_address("", &how) == "10.1.2.3");
  }
  {
    ScopedEnv a("_YAMPI_NODENAME", "localhost"), b("GRIDMPI_LOCAL_ADDRESS", "10.1.2.3");
    CHECK(choose_advertised_address("", &how) == "127.0.0.1");  // the host file's name wins
    CHECK(how.find("_YAMPI_NODENAME") != std::string::npos);
  }
  {
    ScopedEnv a("_YAMPI_NODENAME", "no-such-host.invalid"), b("GRIDMPI_LOCAL_ADDRESS", nullptr);
    CHECK_THROWS_WITH(choose_advertised_address("", &how), Catch::Contains("no-such-host.invalid"));
  }
  {
    // The network prefix wins over everything; loopback is inside 127.0.0.0/8.
    ScopedEnv a("_YAMPI_NODENAME", "no-such-host.invalid");
    CHECK(choose_advertised_address("127.0.0.0/8", &how).rfind("127.", 0) == 0);
    CHECK_THROWS_WITH(choose_advertised_address("203.0.113.0/24", &how), Catch::Contains("no local interface"));
  }
}
