// impi/job_map: the records mpirun and its ranks exchange (LocalHost,
// CollatedLabels) and the derivation of the job map from the server's
// collated labels (docs/impi-protocol.md section 4): world rank order,
// minima, defaults, the must-agree rule, every validation error.
#include <catch2/catch.hpp>
#include <cstring>

#include "core/datatype.hpp"
#include "impi/job_map.hpp"

using namespace gridmpi::impi;

namespace {

using Bytes = std::vector<std::byte>;

Bytes int4s(std::initializer_list<std::int32_t> values) {
  Bytes out;
  for (auto v : values) append_u32(out, static_cast<std::uint32_t>(v));
  return out;
}
Bytes int8s(std::initializer_list<std::int64_t> values) {
  Bytes out;
  for (auto v : values) append_u64(out, static_cast<std::uint64_t>(v));
  return out;
}
HostId ip(std::uint32_t a) { return host_id_from_ipv4(a); }
Bytes ids(std::initializer_list<HostId> hosts) {
  Bytes out;
  for (const auto& h : hosts) out.insert(out.end(), h.begin(), h.end());
  return out;
}

// One client's contributions, label -> data; a label left out is skipped.
using Contribution = std::map<std::int32_t, Bytes>;

// What a LAM-style client sends: `procs_per_host` procs on each host
// 10.0.<client>.<host+1>, port 7000+host, pids 1000*client+proc.
Contribution client(int index, std::vector<int> procs_per_host, std::int32_t datalen = 65536,
                    std::int32_t ackmark = 10, std::int32_t hiwater = 20) {
  Contribution c;
  int nhosts = static_cast<int>(procs_per_host.size());
  int nprocs = 0;
  for (int p : procs_per_host) nprocs += p;
  c[label_c_version] = int4s({0, 0});
  c[label_c_nhosts] = int4s({nhosts});
  c[label_c_nprocs] = int4s({nprocs});
  c[label_c_datalen] = int4s({datalen});
  c[label_c_tagub] = int4s({0x7fffffff});
  c[label_c_coll_xsize] = int4s({-1});
  c[label_c_coll_maxlinear] = int4s({-1});
  Bytes hip, port, hn, ack, hi, pip, pid;
  int proc = 0;
  for (int h = 0; h < nhosts; ++h) {
    HostId id = ip(0x0a000000u | (static_cast<std::uint32_t>(index) << 8) | static_cast<std::uint32_t>(h + 1));
    hip.insert(hip.end(), id.begin(), id.end());
    append_u32(port, static_cast<std::uint32_t>(7000 + h));
    append_u32(hn, static_cast<std::uint32_t>(procs_per_host[static_cast<std::size_t>(h)]));
    append_u32(ack, static_cast<std::uint32_t>(ackmark));
    append_u32(hi, static_cast<std::uint32_t>(hiwater));
    for (int k = 0; k < procs_per_host[static_cast<std::size_t>(h)]; ++k, ++proc) {
      pip.insert(pip.end(), id.begin(), id.end());
      append_u64(pid, static_cast<std::uint64_t>(1000 * index + proc));
    }
  }
  c[label_h_ipv6] = hip;
  c[label_h_port] = port;
  c[label_h_nprocs] = hn;
  c[label_h_ackmark] = ack;
  c[label_h_hiwater] = hi;
  c[label_p_ipv6] = pip;
  c[label_p_pid] = pid;
  return c;
}

// What the server broadcasts: per label, the mask of contributors and their
// data concatenated in client order.
CollatedLabels collate(const std::vector<Contribution>& clients, int my_client = 0) {
  CollatedLabels out;
  out.nclients = static_cast<int>(clients.size());
  out.my_client = my_client;
  for (std::size_t c = 0; c < clients.size(); ++c) {
    for (const auto& [code, data] : clients[c]) {
      auto& label = out.labels[code];
      label.mask |= 1u << c;
      label.data.insert(label.data.end(), data.begin(), data.end());
    }
  }
  return out;
}

std::string error_of(const CollatedLabels& labels) {
  try {
    (void)JobMap::from_labels(labels);
  } catch (const WireError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("LocalHost: byte image and round trip", "[impi][job_map]") {
  LocalHost h;
  h.address = ip(0x7f000001);
  h.port = 0x1234;
  h.pid = 0x0102030405060708;
  h.ackmark = 7;
  h.hiwater = 0x100;
  std::string text = h.encode();
  REQUIRE(text.size() == 59);
  const unsigned char expected[35] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1, 0x12, 0x34,
                                      1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 7, 0, 0, 1, 0, 0};
  CHECK(std::memcmp(text.data(), expected, 35) == 0);  // then 24 zero bytes: no data representation
  CHECK(text.substr(35) == std::string(24, '\0'));
  CHECK(LocalHost::decode(text) == h);
  for (std::size_t n : {0, 1, 33, 58}) CHECK_THROWS_WITH(LocalHost::decode(text.substr(0, n)), Catch::Contains("needs 59"));
  h.datarep = Datarep::of_this_process(gridmpi::core::native_representation());
  text = h.encode();
  CHECK(text[34] == 1);
  CHECK(LocalHost::decode(text) == h);
  text[35] = 'X';  // not a record
  CHECK_THROWS_WITH(LocalHost::decode(text), Catch::Contains("data representation"));
  CHECK_THROWS_AS(LocalHost::decode(text + "x"), WireError);
}

TEST_CASE("CollatedLabels: round trip, and every truncation is an error", "[impi][job_map]") {
  CollatedLabels labels = collate({client(0, {1, 1}), client(1, {2})}, 1);
  labels.labels[0x7777] = CollatedLabel{0x2, int4s({5})};  // unknown labels travel too
  std::string text = labels.encode();
  CHECK(CollatedLabels::decode(text) == labels);
  for (std::size_t n = 0; n < text.size(); ++n)
    CHECK_THROWS_WITH(CollatedLabels::decode(text.substr(0, n)), Catch::Contains("truncated"));
  CHECK_THROWS_WITH(CollatedLabels::decode(text + "z"), Catch::Contains("1 bytes after its end"));
  std::string bad = text;
  bad[0] = 'X';
  CHECK_THROWS_WITH(CollatedLabels::decode(bad), Catch::Contains("wrong magic"));
  // A LocalHost where labels are expected (a value of the wrong key).
  CHECK_THROWS_AS(CollatedLabels::decode(LocalHost{}.encode()), WireError);
  // The same label twice.
  CollatedLabels one;
  one.nclients = 1;
  one.labels[label_c_nhosts] = CollatedLabel{1, int4s({1})};
  std::string once = one.encode();
  std::string twice = once.substr(0, 12) + std::string("\0\0\0\2", 4) + once.substr(16) + once.substr(16);
  CHECK_THROWS_WITH(CollatedLabels::decode(twice), Catch::Contains("IMPI_C_NHOSTS twice"));
}

TEST_CASE("two clients: world ranks client by client, host by host", "[impi][job_map]") {
  // Client 0: hosts with 2 and 1 procs (LAM-like); client 1: GridMPI-like,
  // one proc per host.
  auto map = JobMap::from_labels(collate({client(0, {2, 1}, 65536, 10, 20), client(1, {1, 1}, 4096, 4, 30)}, 1));
  CHECK(map.nclients == 2);
  CHECK(map.my_client == 1);
  CHECK(map.client_nhosts == std::vector<int>{2, 2});
  CHECK(map.client_nprocs == std::vector<int>{3, 2});
  CHECK(map.client_first_rank == std::vector<int>{0, 3});
  CHECK(map.world_size() == 5);
  REQUIRE(map.hosts.size() == 4);
  CHECK(to_string(map.hosts[0].address) == "10.0.0.1");
  CHECK(map.hosts[0].nprocs == 2);
  CHECK(map.hosts[0].first_rank == 0);
  CHECK(to_string(map.hosts[1].address) == "10.0.0.2");
  CHECK(map.hosts[1].first_rank == 2);
  CHECK(map.hosts[1].port == 7001);
  CHECK(to_string(map.hosts[2].address) == "10.0.1.1");
  CHECK(map.hosts[2].client == 1);
  CHECK(map.hosts[2].first_rank == 3);
  CHECK(map.hosts[3].first_rank == 4);
  CHECK(map.proc_host == std::vector<int>{0, 0, 1, 2, 3});
  CHECK(map.proc_client == std::vector<int>{0, 0, 0, 1, 1});
  std::vector<std::int64_t> pids;
  for (const auto& p : map.procs) pids.push_back(p.pid);
  CHECK(pids == std::vector<std::int64_t>{0, 1, 2, 1000, 1001});
  CHECK(to_string(map.procs[2].host) == "10.0.0.2");
  // Minima over clients and hosts; defaults substituted for -1.
  CHECK(map.datalen == 4096);
  CHECK(map.tagub == 0x7fffffff);
  CHECK(map.ackmark == 4);
  CHECK(map.hiwater == 20);
  CHECK(map.coll_xsize == 1024);
  CHECK(map.coll_maxlinear == 4);
  CHECK(map.versions == std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>>{{{0, 0}}, {{0, 0}}});
}

TEST_CASE("rank_of compares the 24-byte identity byte by byte", "[impi][job_map]") {
  auto map = JobMap::from_labels(collate({client(0, {2}), client(1, {1, 1})}));
  for (int r = 0; r < map.world_size(); ++r) CHECK(map.rank_of(map.procs[static_cast<std::size_t>(r)]) == r);
  Proc p = map.procs[3];
  CHECK(map.rank_of(p) == 3);
  p.pid += 1;
  CHECK(map.rank_of(p) == -1);
  // The same IPv4 address written IPv4-mapped is a different identity.
  Proc mapped = map.procs[0];
  mapped.host[10] = std::byte{0xff};
  mapped.host[11] = std::byte{0xff};
  CHECK(map.rank_of(mapped) == -1);
}

TEST_CASE("three clients, one skipping every optional label", "[impi][job_map]") {
  auto skipping = client(1, {1, 1, 1}, 100, 1, 1);
  for (auto code : {label_c_version, label_c_datalen, label_c_tagub, label_c_coll_xsize, label_c_coll_maxlinear,
                    label_h_ackmark, label_h_hiwater})
    skipping.erase(code);
  auto c2 = client(2, {1}, 8192, 6, 12);
  c2[label_c_tagub] = int4s({32767});
  c2[label_c_version] = int4s({0, 0, 1, 0});  // also speaks a version 1.0
  c2[label_c_coll_xsize] = int4s({1024});     // explicit default: agrees with -1
  auto map = JobMap::from_labels(collate({client(0, {1}, 65536, 8, 16), skipping, c2}, 2));
  CHECK(map.world_size() == 5);
  CHECK(map.client_first_rank == std::vector<int>{0, 1, 4});
  CHECK(map.proc_client == std::vector<int>{0, 1, 1, 1, 2});
  CHECK(map.datalen == 8192);  // the skipping client's 100 is not counted: it did not send it
  CHECK(map.tagub == 32767);
  CHECK(map.ackmark == 6);
  CHECK(map.hiwater == 12);
  CHECK(map.coll_xsize == 1024);
  REQUIRE(map.versions.size() == 3);
  CHECK(map.versions[1] == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0, 0}});
  CHECK(map.versions[2] == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0, 0}, {1, 0}});
}

TEST_CASE("optional labels that every client skipped take their defaults", "[impi][job_map]") {
  std::vector<Contribution> clients{client(0, {1}), client(1, {1})};
  for (auto& c : clients)
    for (auto code : {label_c_version, label_c_datalen, label_c_tagub, label_c_coll_xsize, label_c_coll_maxlinear,
                      label_h_ackmark, label_h_hiwater})
      c.erase(code);
  auto map = JobMap::from_labels(collate(clients));
  CHECK(map.datalen == 65536);
  CHECK(map.tagub == 0x7fffffff);
  CHECK(map.coll_xsize == 1024);
  CHECK(map.coll_maxlinear == 4);
  CHECK(map.ackmark == 10);
  CHECK(map.hiwater == 20);
}

TEST_CASE("COLL_XSIZE and COLL_MAXLINEAR must agree after the default substitution", "[impi][job_map]") {
  auto c0 = client(0, {1}), c1 = client(1, {1});
  c1[label_c_coll_xsize] = int4s({4096});
  CHECK(error_of(collate({c0, c1})) ==
        "client 0 uses IMPI_COLL_XSIZE 1024, client 1 uses 4096: set the same value on every cluster");
  c1[label_c_coll_xsize] = int4s({1024});
  c0[label_c_coll_maxlinear] = int4s({8});
  CHECK(error_of(collate({c0, c1})) ==
        "client 0 uses IMPI_COLL_MAXLINEAR 8, client 1 uses 4: set the same value on every cluster");
  c0[label_c_coll_maxlinear] = int4s({-7});
  CHECK_THAT(error_of(collate({c0, c1})), Catch::Contains("client 0 sent IMPI_C_COLL_MAXLINEAR -7"));
}

TEST_CASE("H_NPROCS must sum to C_NPROCS", "[impi][job_map]") {
  auto c1 = client(1, {1, 1});
  c1[label_c_nprocs] = int4s({3});
  c1[label_p_ipv6] = ids({ip(1), ip(2), ip(3)});
  c1[label_p_pid] = int8s({1, 2, 3});
  CHECK(error_of(collate({client(0, {1}), c1})) == "client 1: its IMPI_H_NPROCS sum to 2 but its IMPI_C_NPROCS is 3");
  c1[label_h_nprocs] = int4s({-1, 4});
  CHECK_THAT(error_of(collate({client(0, {1}), c1})), Catch::Contains("client 1 host 0 sent IMPI_H_NPROCS -1"));
}

TEST_CASE("data that does not match the counts is refused, naming the label", "[impi][job_map]") {
  auto c1 = client(1, {1, 1});
  c1[label_h_port].pop_back();
  CHECK_THAT(error_of(collate({client(0, {1}), c1})),
             Catch::Contains("IMPI_H_PORT carries 11 bytes, but the contributing clients 0,1 need 12"));
  c1 = client(1, {1, 1});
  c1[label_p_pid].resize(8);  // one pid for two procs
  CHECK_THAT(error_of(collate({client(0, {1}), c1})), Catch::Contains("IMPI_P_PID carries 16 bytes"));
  c1 = client(1, {1, 1});
  c1[label_c_datalen] = int4s({1, 2});
  CHECK_THAT(error_of(collate({client(0, {1}), c1})), Catch::Contains("IMPI_C_DATALEN carries 12 bytes"));
  c1 = client(1, {1, 1});
  c1[label_c_version] = Bytes(12);
  CHECK_THAT(error_of(collate({client(0, {1}), c1})), Catch::Contains("not a whole number of 8-byte version pairs"));
}

TEST_CASE("mandatory labels", "[impi][job_map]") {
  for (auto code : {label_c_nhosts, label_c_nprocs, label_h_ipv6, label_h_port, label_h_nprocs, label_p_ipv6,
                    label_p_pid}) {
    auto c1 = client(1, {1});
    c1.erase(code);
    CHECK(error_of(collate({client(0, {1}), c1})) ==
          "client(s) 1 did not send " + label_name(code) + " (mandatory): they cannot take part in the job");
    auto labels = collate({client(0, {1}), client(1, {1})});
    labels.labels.erase(code);
    CHECK_THAT(error_of(labels), Catch::Contains("the server sent no " + label_name(code)));
  }
}

TEST_CASE("versions: split at each 0.0, ascending, 0.0 first", "[impi][job_map]") {
  auto c0 = client(0, {1}), c1 = client(1, {1});
  c0[label_c_version] = int4s({1, 0});
  CHECK_THAT(error_of(collate({c0, c1})),
             Catch::Contains("IMPI_C_VERSION of client 0 does not start with version 0.0"));
  c0[label_c_version] = int4s({0, 0, 2, 0, 1, 0});
  CHECK_THAT(error_of(collate({c0, c1})), Catch::Contains("IMPI_C_VERSION of client 0 is not strictly ascending"));
  c0[label_c_version] = int4s({0, 0, 0, 0});  // two lists for one client
  CHECK_THAT(error_of(collate({c0, c1})), Catch::Contains("holds 3 version lists for contributing clients 0,1"));
}

TEST_CASE("values out of the protocol's ranges", "[impi][job_map]") {
  auto c1 = client(1, {1});
  c1[label_c_tagub] = int4s({1000});
  CHECK(error_of(collate({client(0, {1}), c1})) ==
        "client 1 sent IMPI_C_TAGUB 1000: the protocol requires 32767 to 2147483647");
  c1 = client(1, {1});
  c1[label_c_datalen] = int4s({0});
  CHECK_THAT(error_of(collate({client(0, {1}), c1})), Catch::Contains("client 1 sent IMPI_C_DATALEN 0"));
  CHECK_THAT(error_of(collate({client(0, {1}, 65536, 0, 20), client(1, {1})})),
             Catch::Contains("IMPI_H_ACKMARK 0: it must be at least 1"));
  CHECK_THAT(error_of(collate({client(0, {1}, 65536, 10, 20), client(1, {1}, 65536, 10, 5)})),
             Catch::Contains("job-wide IMPI_H_HIWATER 5 (host 1) is below the job-wide IMPI_H_ACKMARK 10"));
  c1 = client(1, {1});
  c1[label_h_port] = int4s({70000});
  CHECK_THAT(error_of(collate({client(0, {1}), c1})), Catch::Contains("IMPI_H_PORT 70000: not a TCP port"));
  c1 = client(1, {1});
  c1[label_c_nhosts] = int4s({0});
  CHECK_THAT(error_of(collate({client(0, {1}), c1})), Catch::Contains("client 1 sent IMPI_C_NHOSTS 0"));
}

TEST_CASE("client counts, masks and identities", "[impi][job_map]") {
  std::vector<Contribution> many;
  for (int c = 0; c < 32; ++c) many.push_back(client(c, {1}));
  auto map = JobMap::from_labels(collate(many, 31));
  CHECK(map.world_size() == 32);
  CHECK(map.client_first_rank[31] == 31);
  auto labels = collate(many);
  labels.nclients = 33;
  CHECK_THAT(error_of(labels), Catch::Contains("33 clients: IMPI allows 1 to 32"));
  labels = collate({client(0, {1}), client(1, {1})}, 2);
  CHECK_THAT(error_of(labels), Catch::Contains("this cluster is client 2, outside 0..1"));
  labels = collate({client(0, {1}), client(1, {1})});
  labels.labels[label_c_tagub].mask |= 0x4;
  CHECK_THAT(error_of(labels), Catch::Contains("IMPI_C_TAGUB names client(s) 2, but the job has only clients 0..1"));
  // Two procs with one identity cannot be told apart.
  auto c1 = client(1, {1});
  c1[label_p_ipv6] = ids({ip(0x0a000001)});
  c1[label_p_pid] = int8s({0});
  CHECK_THAT(error_of(collate({client(0, {1}), c1})),
             Catch::Contains("world rank 1 (client 1) has the same IMPI identity as an earlier rank (10.0.0.1, "
                             "pid 0)"));
}
