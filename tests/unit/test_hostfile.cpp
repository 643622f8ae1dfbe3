// Host files: every accepted line form, comments, and the error messages.
#include <catch2/catch.hpp>

#include "conf/hostfile.hpp"
#include "conf/registry.hpp"
#include "test_conf_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using gridmpi::conf::ConfigError;
using gridmpi::conf::HostEntry;
using gridmpi::conf::parse_hostfile;
using gridmpi::conf::parse_hostfile_text;

namespace {

std::vector<HostEntry> parse(const std::string& text) { return parse_hostfile_text(text, "mpi_conf"); }

}  // namespace

TEST_CASE("one host per line, one slot each", "[hostfile]") {
  const auto hosts = parse("node1\nnode2\nnode1\n");
  REQUIRE(hosts.size() == 3);
  CHECK(hosts[0].host == "node1");
  CHECK(hosts[0].slots == 1);
  CHECK(hosts[0].line == 1);
  CHECK(hosts[1].host == "node2");
  CHECK(hosts[2].host == "node1");  // repeated hosts keep their place in the order
  CHECK(hosts[2].line == 3);
}

TEST_CASE("slot counts in the three accepted forms", "[hostfile]") {
  const auto hosts = parse("node1 4\nnode2:2\nnode3 slots=8\nnode4\tslots=3\n  node5   6  \n");
  REQUIRE(hosts.size() == 5);
  CHECK(hosts[0].host == "node1");
  CHECK(hosts[0].slots == 4);
  CHECK(hosts[1].host == "node2");
  CHECK(hosts[1].slots == 2);
  CHECK(hosts[2].host == "node3");
  CHECK(hosts[2].slots == 8);
  CHECK(hosts[3].host == "node4");
  CHECK(hosts[3].slots == 3);
  CHECK(hosts[4].host == "node5");
  CHECK(hosts[4].slots == 6);
}

TEST_CASE("comments, blank lines and CRLF line ends are skipped", "[hostfile]") {
  const auto hosts = parse("# cluster A\n\n   \nnode1  # the head node\nnode2 2# two cpus\r\n\t# indented\n"
                           "node3.example.org:4\r\n10.0.0.7");
  REQUIRE(hosts.size() == 4);
  CHECK(hosts[0].host == "node1");
  CHECK(hosts[0].line == 4);
  CHECK(hosts[1].host == "node2");
  CHECK(hosts[1].slots == 2);
  CHECK(hosts[2].host == "node3.example.org");
  CHECK(hosts[2].slots == 4);
  CHECK(hosts[2].line == 7);
  CHECK(hosts[3].host == "10.0.0.7");  // last line without a newline
  CHECK(hosts[3].line == 8);
}

TEST_CASE("IPv6 addresses, bare or bracketed with a slot count", "[hostfile]") {
  const auto hosts = parse("fe80::1\n[::1]:3\n[2001:db8::5] 2\nfe80::2%eth0\n");
  REQUIRE(hosts.size() == 4);
  CHECK(hosts[0].host == "fe80::1");
  CHECK(hosts[0].slots == 1);
  CHECK(hosts[1].host == "::1");
  CHECK(hosts[1].slots == 3);
  CHECK(hosts[2].host == "2001:db8::5");
  CHECK(hosts[2].slots == 2);
  CHECK(hosts[3].host == "fe80::2%eth0");
}

TEST_CASE("non-positive or malformed slot counts name file, line and text", "[hostfile]") {
  CHECK_THROWS_WITH(parse("node1\nnode2 0\n"),
                    Equals("host file mpi_conf:2: slot count 0 is not positive in \"node2 0\""));
  CHECK_THROWS_WITH(parse("node2:-3"),
                    Equals("host file mpi_conf:1: slot count -3 is not positive in \"node2:-3\""));
  CHECK_THROWS_WITH(parse("node2 slots=0 # none"),
                    Equals("host file mpi_conf:1: slot count 0 is not positive in \"node2 slots=0\""));
  CHECK_THROWS_WITH(parse("node2 slots=four"),
                    Equals("host file mpi_conf:1: bad slot count \"four\" (expected a positive integer) in "
                           "\"node2 slots=four\""));
  CHECK_THROWS_WITH(parse("node2:"),
                    Equals("host file mpi_conf:1: bad slot count \"\" (expected a positive integer) in \"node2:\""));
  CHECK_THROWS_WITH(parse("node2 4x"), Contains("bad slot count \"4x\""));
  CHECK_THROWS_WITH(parse("node2 99999999999"), Contains("slot count 99999999999 is too large"));
}

TEST_CASE("garbage after the host is an error", "[hostfile]") {
  CHECK_THROWS_WITH(parse("\n\nnode1 4 extra\n"),
                    Equals("host file mpi_conf:3: unexpected \"extra\" after the slot count; expected \"HOST\", "
                           "\"HOST N\", \"HOST:N\" or \"HOST slots=N\" in \"node1 4 extra\""));
  CHECK_THROWS_WITH(parse("node1 ./a.out"),
                    Equals("host file mpi_conf:1: unexpected \"./a.out\" after the host; expected \"HOST\", "
                           "\"HOST N\", \"HOST:N\" or \"HOST slots=N\" in \"node1 ./a.out\""));
  CHECK_THROWS_WITH(parse("node1 max_slots=4"), Contains("unexpected \"max_slots=4\" after the host"));
  CHECK_THROWS_WITH(parse("node1:2 3"), Contains("unexpected \"3\" after the slot count"));
  CHECK_THROWS_WITH(parse("node1,node2"),
                    Equals("host file mpi_conf:1: bad host name \"node1,node2\" in \"node1,node2\""));
  CHECK_THROWS_WITH(parse("[::1"), Contains("missing \"]\" after the IPv6 address"));
  CHECK_THROWS_WITH(parse("[::1]x"), Contains("unexpected \"x\" after the host"));
  CHECK_THROWS_WITH(parse(":4"), Contains("missing host name"));
}

TEST_CASE("a file without hosts is an error", "[hostfile]") {
  CHECK_THROWS_WITH(parse(""), Equals("host file mpi_conf lists no hosts"));
  CHECK_THROWS_WITH(parse("# only a comment\n\n  \n"), Equals("host file mpi_conf lists no hosts"));
}

TEST_CASE("host files are read from disk with OS errors reported", "[hostfile]") {
  gridmpi::conf::testing::TemporaryDirectory dir;
  const std::string path = dir.write("mpi_conf", "node1 2\nnode2\n");
  const auto hosts = parse_hostfile(path);
  REQUIRE(hosts.size() == 2);
  CHECK(hosts[0].slots == 2);
  CHECK(hosts[1].host == "node2");
  CHECK_THROWS_WITH(parse_hostfile(dir.path() + "/missing"),
                    Equals("cannot read host file " + dir.path() + "/missing: No such file or directory"));
  const std::string empty = dir.write("empty", "");
  CHECK_THROWS_WITH(parse_hostfile(empty), Equals("host file " + empty + " lists no hosts"));
  const std::string bad = dir.write("bad", "node1\nnode2 -1\n");
  CHECK_THROWS_WITH(parse_hostfile(bad), Contains("host file " + bad + ":2: slot count -1 is not positive"));
}
