// impi/client: the client side of the IMPI server protocol driven by
// scripted server byte streams (no sockets): the exact bytes it sends
// (AUTH, the key, IMPI, the 14 labels for two local ranks, DONE, FINI), the
// collation it hands over, and every error path, with the server's bytes
// fed whole and one byte at a time.
#include <catch2/catch.hpp>
#include <cctype>

#include "core/datatype.hpp"
#include "impi/client.hpp"
#include "tests/unit/hex_bytes.hpp"

using namespace gridmpi::impi;
using namespace std::chrono_literals;

namespace {

using Bytes = std::vector<std::byte>;
using Clock = ClientSession::Clock;

using gridmpi::test::hex_bytes;
Bytes hex(std::string_view text) { return hex_bytes(text); }
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
Bytes int4s(std::initializer_list<std::int32_t> values) {
  Bytes out;
  for (auto v : values) append_u32(out, static_cast<std::uint32_t>(v));
  return out;
}

// The two local ranks of every test: 10.0.0.1:5000 pid 1234 and
// 10.0.0.2:5001 pid 1235 with different flow-control settings.
std::vector<LocalHost> two_hosts() {
  LocalHost a, b;
  a.address = host_id_from_ipv4(0x0a000001);
  a.port = 5000;
  a.pid = 1234;
  a.ackmark = 10;
  a.hiwater = 20;
  b.address = host_id_from_ipv4(0x0a000002);
  b.port = 5001;
  b.pid = 1235;
  b.ackmark = 5;
  b.hiwater = 40;
  return {a, b};
}

// Byte for byte what client 1 must send after IMPI: the 14 labels in
// canonical order, then DONE.
const char* const expected_labels =
    "434f4c4c 0000000c 00001000 00000000 00000000"  // C_VERSION: (0,0)
    "434f4c4c 00000008 00001100 00000002"           // C_NHOSTS 2
    "434f4c4c 00000008 00001200 00000002"           // C_NPROCS 2
    "434f4c4c 00000008 00001300 00008000"           // C_DATALEN 32768
    "434f4c4c 00000008 00001400 7fffffff"           // C_TAGUB
    "434f4c4c 00000008 00001500 ffffffff"           // C_COLL_XSIZE -1
    "434f4c4c 00000008 00001600 00000008"           // C_COLL_MAXLINEAR 8
    "434f4c4c 00000024 00002000"                    // H_IPV6
    "  00000000 00000000 00000000 0a000001  00000000 00000000 00000000 0a000002"
    "434f4c4c 0000000c 00002100 00001388 00001389"  // H_PORT 5000 5001
    "434f4c4c 0000000c 00002200 00000001 00000001"  // H_NPROCS
    "434f4c4c 0000000c 00002300 0000000a 00000005"  // H_ACKMARK 10 5
    "434f4c4c 0000000c 00002400 00000014 00000028"  // H_HIWATER 20 40
    "434f4c4c 00000024 00003000"                    // P_IPV6
    "  00000000 00000000 00000000 0a000001  00000000 00000000 00000000 0a000002"
    "434f4c4c 00000014 00003100 00000000 000004d2 00000000 000004d3"  // P_PID 1234 1235
    "444f4e45 00000000";                                              // DONE

// Client 0 of the tests: one host, 10.0.9.1:6000, pid 77, all defaults.
std::map<std::int32_t, Bytes> other_client() {
  Bytes id(16);
  put_u32(id.data() + 12, 0x0a000901);
  Bytes pid;
  append_u64(pid, 77);
  return {{label_c_version, Bytes(8)},      {label_c_nhosts, int4s({1})},    {label_c_nprocs, int4s({1})},
          {label_c_datalen, int4s({65536})}, {label_c_tagub, int4s({0x7fffffff})},
          {label_c_coll_xsize, int4s({-1})}, {label_c_coll_maxlinear, int4s({8})},
          {label_h_ipv6, id},                {label_h_port, int4s({6000})},  {label_h_nprocs, int4s({1})},
          {label_h_ackmark, int4s({10})},    {label_h_hiwater, int4s({20})}, {label_p_ipv6, id},
          {label_p_pid, pid}};
}

// Reads back the contributions a client sent (COLL ... DONE).
std::map<std::int32_t, Bytes> contributions(const Bytes& sent) {
  std::map<std::int32_t, Bytes> out;
  std::size_t at = 0;
  while (at + 8 <= sent.size()) {
    auto h = CommandHeader::decode(std::span(sent.data() + at, 8));
    if (h.command == static_cast<std::uint32_t>(Command::coll)) {
      auto code = static_cast<std::int32_t>(get_u32(sent.data() + at + 8));
      out[code].assign(sent.begin() + static_cast<std::ptrdiff_t>(at + 12),
                       sent.begin() + static_cast<std::ptrdiff_t>(at + 8 + h.length));
    }
    at += 8 + h.length;
  }
  return out;
}

// A server stream ending in DONE with one more COLL result put before it.
Bytes before_done(Bytes stream, const Bytes& result) {
  stream.resize(stream.size() - encode_done().size());
  stream.insert(stream.end(), result.begin(), result.end());
  Bytes done = encode_done();
  stream.insert(stream.end(), done.begin(), done.end());
  return stream;
}

// The server's broadcasts for clients 0 (other_client) and 1 (ours), plus
// DONE, as a scripted server would send them.
Bytes broadcasts(const std::map<std::int32_t, Bytes>& ours, const std::map<std::int32_t, Bytes>& theirs,
                 std::int32_t extra_label = 0) {
  Bytes out;
  for (const auto& info : standard_labels()) {
    std::uint32_t mask = 0;
    Bytes data;
    if (auto it = theirs.find(info.code); it != theirs.end()) {
      mask |= 1;
      data.insert(data.end(), it->second.begin(), it->second.end());
    }
    if (auto it = ours.find(info.code); it != ours.end()) {
      mask |= 2;
      data.insert(data.end(), it->second.begin(), it->second.end());
    }
    auto m = encode_coll_result(info.code, mask, data);
    out.insert(out.end(), m.begin(), m.end());
  }
  if (extra_label) {
    auto m = encode_coll_result(extra_label, 1, int4s({42}));
    out.insert(out.end(), m.begin(), m.end());
  }
  auto done = encode_done();
  out.insert(out.end(), done.begin(), done.end());
  return out;
}

struct Harness {
  explicit Harness(int client = 1, bool none = true, std::optional<std::uint64_t> key = std::nullopt) {
    ClientSettings s;
    s.client = client;
    s.auth.none = none;
    s.auth.key = key;
    s.datalen = 32768;
    s.coll_xsize = -1;
    s.coll_maxlinear = 8;
    s.startup_timeout = 300s;
    s.server = "10.0.0.100:4000";
    session = std::make_unique<ClientSession>(s);
  }

  void collect() {
    for (auto& a : session->take_actions()) {
      if (auto* s = std::get_if<client_action::Send>(&a)) {
        sent.insert(sent.end(), s->bytes.begin(), s->bytes.end());
      } else if (auto* c = std::get_if<client_action::StartupComplete>(&a)) {
        complete.push_back(c->labels);
      } else if (auto* f = std::get_if<client_action::Failed>(&a)) {
        failures.push_back(f->line);
      } else if (std::holds_alternative<client_action::Close>(a)) {
        ++closes;
      }
    }
  }
  // The server's bytes, whole or one byte at a time.
  void feed(const Bytes& bytes, bool bytewise) {
    if (bytewise) {
      for (std::byte b : bytes) {
        session->received(std::span(&b, 1), now);
        collect();
      }
    } else {
      session->received(bytes, now);
      collect();
    }
  }
  Bytes take_sent() {
    Bytes out;
    out.swap(sent);
    return out;
  }
  void connect() {
    session->connected(now);
    collect();
  }
  void hosts(std::vector<LocalHost> h = two_hosts()) {
    session->local_hosts(std::move(h), now);
    collect();
  }
  void lost(const std::string& error = "") {
    session->connection_lost(error, now);
    collect();
  }
  void advance(std::chrono::milliseconds d) {
    now += d;
    session->tick(now);
    collect();
  }
  // Up to the IMPI answer, auth NONE.
  void join(int size, bool bytewise = false) {
    connect();
    feed(hex("00000000 00000000"), bytewise);
    feed(encode_impi(size), bytewise);
  }
  std::string failure() const {
    REQUIRE(failures.size() == 1);
    return failures[0];
  }

  std::unique_ptr<ClientSession> session;
  Clock::time_point now = Clock::time_point{} + 1000s;
  Bytes sent;
  std::vector<CollatedLabels> complete;
  std::vector<std::string> failures;
  int closes = 0;
};

}  // namespace

TEST_CASE("IMPI client: the whole start-up, byte for byte", "[impi][client]") {
  bool bytewise = GENERATE(false, true);
  Harness h(1);
  h.connect();
  CHECK(h.take_sent() == hex("41555448 00000004 00000001"));  // AUTH, mask: NONE
  CHECK(h.session->state() == ClientSession::State::auth_choice);
  h.feed(hex("00000000 00000000"), bytewise);  // the server chose NONE
  CHECK(h.take_sent() == hex("494d5049 00000004 00000001"));  // IMPI 1
  h.feed(hex("494d5049 00000004 00000002"), bytewise);        // size 2
  CHECK(h.session->nclients() == 2);
  CHECK(h.take_sent().empty());  // the ranks have not published yet
  h.hosts();
  Bytes labels = h.take_sent();
  CHECK(labels == hex(expected_labels));

  auto ours = contributions(labels);
  h.feed(broadcasts(ours, other_client(), 0x7777), bytewise);
  CHECK(h.failures.empty());
  REQUIRE(h.complete.size() == 1);
  const CollatedLabels& got = h.complete[0];
  CHECK(got.nclients == 2);
  CHECK(got.my_client == 1);
  CHECK(got.labels.size() == 15);  // the 14 and the unknown one, kept
  CHECK(got.labels.at(0x7777).mask == 1);
  CHECK(got.labels.at(label_h_port).mask == 3);
  CHECK(got.labels.at(label_h_port).data == hex("00001770 00001388 00001389"));
  auto map = JobMap::from_labels(got);
  CHECK(map.world_size() == 3);
  CHECK(map.client_first_rank == std::vector<int>{0, 1});
  CHECK(map.procs[2].pid == 1235);
  CHECK(map.datalen == 32768);
  CHECK(map.ackmark == 5);
  CHECK(map.coll_maxlinear == 8);
  CHECK(h.session->state() == ClientSession::State::ready);
  CHECK_FALSE(h.session->next_deadline());

  h.session->finish();
  h.collect();
  CHECK(h.take_sent() == hex("46494e49 00000000"));  // FINI
  CHECK(h.closes == 1);
  CHECK(h.session->state() == ClientSession::State::finished);
  // The server closing after FINI is normal.
  h.lost();
  CHECK(h.failures.empty());
}

TEST_CASE("IMPI client: the hosts may be known before the server's IMPI answer", "[impi][client]") {
  Harness h(0);
  h.connect();
  h.hosts();
  h.feed(hex("00000000 00000000"), false);
  CHECK(h.take_sent() == cat({hex("41555448 00000004 00000001"), hex("494d5049 00000004 00000000")}));
  h.feed(encode_impi(1), false);
  CHECK(h.take_sent() == hex(expected_labels));
}

TEST_CASE("IMPI client: key authentication", "[impi][client]") {
  bool bytewise = GENERATE(false, true);
  Harness h(1, true, 0x0102030405060708ull);
  h.connect();
  CHECK(h.take_sent() == hex("41555448 00000004 00000003"));  // NONE and KEY offered
  h.feed(hex("00000001 00000000"), bytewise);                  // the server chose KEY
  CHECK(h.take_sent() == hex("01020304 05060708  494d5049 00000004 00000001"));
  h.feed(encode_impi(2), bytewise);
  h.hosts();
  CHECK(h.take_sent() == hex(expected_labels));

  SECTION("a wrong key: the server closes the connection") {
    Harness k(0, false, 99);
    k.connect();
    k.feed(hex("00000001 00000000"), bytewise);
    k.lost();
    CHECK_THAT(k.failure(), Catch::StartsWith("impi-server closed the connection after authentication, when this "
                                              "cluster asked to be client 0: impi-server refuses a wrong "
                                              "IMPI_AUTH_KEY"));
    CHECK(k.session->state() == ClientSession::State::failed);
  }
}

TEST_CASE("IMPI client: authentication errors", "[impi][client]") {
  bool bytewise = GENERATE(false, true);
  SECTION("the server chose a method this side did not offer") {
    Harness h(0, true);
    h.connect();
    h.feed(hex("00000001 00000000"), bytewise);
    CHECK(h.failure() ==
          "impi-server chose IMPI_AUTH_KEY, which this side did not offer (it offers IMPI_AUTH_NONE): set the same "
          "IMPI_AUTH_NONE / IMPI_AUTH_KEY on impi-server and on every mpirun -client");
    h.take_sent();
  }
  SECTION("NONE chosen when only KEY was offered") {
    Harness h(0, false, 5);
    h.connect();
    h.feed(hex("00000000 00000000"), bytewise);
    CHECK_THAT(h.failure(), Catch::Contains("chose IMPI_AUTH_NONE, which this side did not offer (it offers "
                                            "IMPI_AUTH_KEY)"));
  }
  SECTION("an unknown method") {
    Harness h(0);
    h.connect();
    h.feed(hex("00000007 00000000"), bytewise);
    CHECK_THAT(h.failure(), Catch::Contains("chose authentication method 7, unknown here"));
  }
  SECTION("method data where the method has none") {
    Harness h(0);
    h.connect();
    h.feed(hex("00000000 00000004"), bytewise);
    CHECK_THAT(h.failure(), Catch::Contains("announces 4 bytes of IMPI_AUTH_NONE data"));
  }
  SECTION("the server closes before choosing") {
    Harness h(0);
    h.connect();
    h.feed(hex("0000"), bytewise);
    h.lost();
    CHECK_THAT(h.failure(), Catch::Contains("in the middle of a message (2 bytes of it arrived)"));
    Harness g(0);
    g.connect();
    g.lost();
    CHECK_THAT(g.failure(), Catch::StartsWith("impi-server closed the connection during authentication: it accepts "
                                              "none of the methods this side enables (IMPI_AUTH_NONE)"));
  }
  SECTION("no method enabled") {
    Harness h(0, false);
    h.connect();
    CHECK_THAT(h.failure(), Catch::StartsWith("no IMPI authentication is enabled"));
    CHECK(h.take_sent().empty());
  }
}

TEST_CASE("IMPI client: joining", "[impi][client]") {
  bool bytewise = GENERATE(false, true);
  SECTION("client number out of range") {
    Harness h(2);
    h.join(2, bytewise);
    CHECK_THAT(h.failure(), Catch::StartsWith("-client 2 is out of range: the server expects clients 0..1; use a "
                                              "client number below 2"));
    h.hosts();
    CHECK(h.take_sent() == cat({hex("41555448 00000004 00000001"), encode_impi(2)}));  // no labels
  }
  SECTION("a size IMPI does not allow") {
    for (int size : {0, 33, -1}) {
      Harness h(0);
      h.join(size, bytewise);
      CHECK_THAT(h.failure(), Catch::Contains("announced " + std::to_string(size) + " clients"));
    }
  }
  SECTION("IMPI with the wrong length") {
    Harness h(0);
    h.connect();
    h.feed(cat({hex("00000000 00000000"), hex("494d5049 00000008 00000002 00000000")}), bytewise);
    CHECK_THAT(h.failure(), Catch::Contains("answered IMPI with 8 bytes instead of 4"));
  }
  SECTION("the server closes instead of answering IMPI") {
    Harness h(3);
    h.connect();
    h.feed(hex("00000000 00000000"), bytewise);
    h.lost();
    CHECK_THAT(h.failure(), Catch::Contains("when this cluster asked to be client 3: impi-server refuses a client number "
                                            "that another mpirun already has or that is beyond its -server count"));
  }
  SECTION("something else than IMPI") {
    Harness h(0);
    h.connect();
    h.feed(cat({hex("00000000 00000000"), encode_done()}), bytewise);
    CHECK(h.failure() ==
          "impi-server at 10.0.0.100:4000 sent an unexpected DONE command (0 bytes) while joining: a protocol error "
          "of the server");
  }
}

TEST_CASE("IMPI client: malformed server messages during the exchange", "[impi][client]") {
  bool bytewise = GENERATE(false, true);
  Harness h(1);
  h.join(2, bytewise);
  h.hosts();
  h.take_sent();
  std::string expect;
  SECTION("an unknown command") {
    h.feed(hex("12345678 00000000"), bytewise);
    expect = "sent an unknown command 0x12345678 while exchanging labels";
  }
  SECTION("an unexpected command") {
    h.feed(encode_fini(), bytewise);
    expect = "sent an unexpected FINI command (0 bytes) while exchanging labels";
  }
  SECTION("an oversized length") {
    h.feed(hex("434f4c4c 7fffffff"), bytewise);
    expect = "announced a COLL command of 2147483647 bytes (at most 67108864 accepted)";
  }
  SECTION("a COLL too short for label and mask") {
    h.feed(hex("434f4c4c 00000004 00001000"), bytewise);
    expect = "sent a COLL answer of 4 bytes (at least 8: label and mask)";
  }
  SECTION("a client mask beyond the job's clients") {
    h.feed(encode_coll_result(label_c_nhosts, 0x5, int4s({1, 1})), bytewise);
    expect = "sent IMPI_C_NHOSTS with client mask 0x5, but the job has clients 0..1";
  }
  SECTION("data without a contributor") {
    h.feed(encode_coll_result(label_c_tagub, 0, int4s({1})), bytewise);
    expect = "sent IMPI_C_TAGUB with data but no contributing client";
  }
  SECTION("a label twice") {
    h.feed(cat({encode_coll_result(label_c_nhosts, 3, int4s({1, 2})),
                encode_coll_result(label_c_nhosts, 3, int4s({1, 2}))}),
           bytewise);
    expect = "sent IMPI_C_NHOSTS twice";
  }
  SECTION("DONE with a payload") {
    h.feed(hex("444f4e45 00000001 00"), bytewise);
    expect = "sent DONE with 1 bytes of payload";
  }
  SECTION("a truncated message, then the end") {
    Bytes m = encode_coll_result(label_c_nhosts, 3, int4s({1, 2}));
    m.resize(m.size() - 3);
    h.feed(m, bytewise);
    CHECK(h.failures.empty());
    h.lost();
    expect = "impi-server closed the connection in the middle of a message (21 bytes of it arrived)";
  }
  SECTION("the server omits this cluster's label") {
    auto ours = contributions(hex(expected_labels));
    ours.erase(label_h_port);
    h.feed(broadcasts(ours, other_client()), bytewise);
    expect = "finished the start-up without this cluster's IMPI_H_PORT";
  }
  SECTION("the clusters' data do not fit together") {
    auto theirs = other_client();
    theirs[label_c_coll_xsize] = int4s({4096});
    h.feed(broadcasts(contributions(hex(expected_labels)), theirs), bytewise);
    expect = "the clusters' IMPI start-up data do not fit together: client 0 uses IMPI_COLL_XSIZE 4096, client 1 "
             "uses 1024: set the same value on every cluster";
  }
  SECTION("the server closes during the exchange") {
    h.lost();
    expect = "impi-server closed the connection during the start-up: another cluster's job failed or the server "
             "stopped; ending this cluster's job";
  }
  SECTION("the connection breaks") {
    h.lost("Connection reset by peer");
    expect = "lost the connection to impi-server (Connection reset by peer) during the start-up";
  }
  CHECK_THAT(h.failure(), Catch::Contains(expect));
  CHECK(h.complete.empty());
  CHECK(h.session->state() == ClientSession::State::failed);
  // Over is over: nothing more comes out.
  h.feed(broadcasts(contributions(hex(expected_labels)), other_client()), bytewise);
  h.lost();
  h.session->finish();
  h.collect();
  CHECK(h.failures.size() == 1);
  CHECK(h.take_sent().empty());
  CHECK(h.closes == 0);
}

TEST_CASE("IMPI client: DONE before this cluster's labels is a protocol error", "[impi][client]") {
  Harness h(1);
  h.join(2);
  h.feed(encode_done(), false);
  CHECK_THAT(h.failure(), Catch::Contains("sent DONE before this cluster sent its labels"));
}

TEST_CASE("IMPI client: after DONE the server must stay silent", "[impi][client]") {
  bool bytewise = GENERATE(false, true);
  bool same_chunk = GENERATE(false, true);
  Harness h(1);
  h.join(2, bytewise);
  h.hosts();
  Bytes stream = broadcasts(contributions(h.take_sent()), other_client());
  Bytes extra = encode_coll_result(label_c_nhosts, 1, int4s({1}));
  if (same_chunk) {
    h.feed(cat({stream, extra}), bytewise);
  } else {
    h.feed(stream, bytewise);
    REQUIRE(h.complete.size() == 1);
    h.feed(extra, bytewise);
  }
  CHECK(h.complete.size() == 1);  // DONE was complete: its labels were handed over first
  CHECK_THAT(h.failure(), Catch::Contains("after") && Catch::Contains("nothing is expected until FINI"));
  h.session->finish();
  h.collect();
  CHECK(h.take_sent().empty());  // no FINI after a failure
}

TEST_CASE("IMPI client: the server closing during the run", "[impi][client]") {
  Harness h(1);
  h.join(2);
  h.hosts();
  h.feed(broadcasts(contributions(h.take_sent()), other_client()), false);
  REQUIRE(h.complete.size() == 1);
  h.advance(3600s);  // no time limit once running
  CHECK(h.failures.empty());
  h.lost();
  CHECK(h.failure() == "impi-server closed the connection: another cluster's job failed or the server stopped; "
                       "ending this cluster's job");
}

TEST_CASE("IMPI client: the start-up is bounded in time", "[impi][client]") {
  SECTION("the other clusters never come") {
    Harness h(1);
    h.join(2);
    h.hosts();
    REQUIRE(h.session->next_deadline());
    CHECK(*h.session->next_deadline() == h.now + 300s);
    h.advance(299s);
    CHECK(h.failures.empty());
    h.advance(1s);
    CHECK(h.failure() == "impi-server did not complete the start-up within 300 s: are all 2 clusters started with "
                         "mpirun -client 0..1? (impi.startup_timeout)");
  }
  SECTION("the server never answers IMPI") {
    Harness h(1);
    h.connect();
    h.feed(hex("00000000 00000000"), false);
    h.advance(300s);
    CHECK_THAT(h.failure(), Catch::StartsWith("impi-server did not complete the start-up within 300 s: are all "
                                              "clusters started"));
  }
  SECTION("the local ranks never publish") {
    Harness h(1);
    h.join(2);
    h.advance(300s);
    CHECK_THAT(h.failure(), Catch::StartsWith("this cluster's ranks did not all publish their IMPI address within "
                                              "300 s"));
  }
  SECTION("FINI only once running") {
    Harness h(1);
    h.join(2);
    h.session->finish();
    h.collect();
    CHECK(h.take_sent() == cat({hex("41555448 00000004 00000001"), encode_impi(1)}));
    CHECK(h.closes == 0);
  }
}

// gridmpi's data-representation label (impi/datarep.hpp).
namespace {
Datarep some_datarep(std::uint8_t long_size, std::uint64_t hash) {
  Datarep d;
  d.long_size = long_size;
  d.wchar_size = 4;
  d.description_size = 1000;
  d.description_hash = hash;
  return d;
}
}  // namespace

TEST_CASE("IMPI client: GRIDMPI_DATAREP goes after the 14 labels when every rank announced the same", "[impi][client]") {
  Harness h(1);
  h.join(2);
  auto hosts = two_hosts();
  for (auto& host : hosts) host.datarep = some_datarep(8, 0x1122334455667788ULL);
  h.hosts(hosts);
  Bytes labels = h.take_sent();
  auto ours = contributions(labels);
  REQUIRE(ours.count(label_gridmpi_datarep) == 1);
  auto record = hosts[0].datarep->encode();
  CHECK(ours.at(label_gridmpi_datarep) == Bytes(record.begin(), record.end()));
  CHECK(ours.at(label_gridmpi_datarep) ==
        hex("47445231 08040000 000003e8 11223344 55667788 00000000"));
  // The last label before DONE: canonical order, the standard ones first.
  Bytes tail(labels.end() - 8 - 36, labels.end() - 8);
  CHECK(get_u32(tail.data() + 8) == static_cast<std::uint32_t>(label_gridmpi_datarep));

  SECTION("a server that drops it (IU): the start-up completes, every client without a record: external32") {
    h.feed(broadcasts(ours, other_client()), false);
    CHECK(h.failures.empty());
    REQUIRE(h.complete.size() == 1);
    auto map = JobMap::from_labels(h.complete[0]);
    REQUIRE(map.client_datarep.size() == 2);
    CHECK_FALSE(map.client_datarep[1]);
    CHECK(map.representation_with(0) == gridmpi::p2p::DataRepresentation::external32);
  }
  SECTION("gridmpi's server collates it: the records per client") {
    Bytes answer = broadcasts(ours, other_client());
    auto theirs = some_datarep(8, 0x1122334455667788ULL).encode();
    Bytes data(theirs.begin(), theirs.end());
    data.insert(data.end(), record.begin(), record.end());
    answer = before_done(answer, encode_coll_result(label_gridmpi_datarep, 3, data));
    h.feed(answer, false);
    CHECK(h.failures.empty());
    REQUIRE(h.complete.size() == 1);
    auto map = JobMap::from_labels(h.complete[0]);
    CHECK(map.client_datarep[0] == some_datarep(8, 0x1122334455667788ULL));
    CHECK(map.client_datarep[1] == hosts[0].datarep);
    CHECK(map.representation_with(0) == gridmpi::p2p::DataRepresentation::native);
  }
}

TEST_CASE("IMPI client: no GRIDMPI_DATAREP when a rank announced none or another one", "[impi][client]") {
  Harness h(1);
  h.join(2);
  auto hosts = two_hosts();
  hosts[0].datarep = some_datarep(8, 1);
  bool none = GENERATE(false, true);
  if (!none) hosts[1].datarep = some_datarep(8, 2);
  h.hosts(hosts);
  CHECK(contributions(h.take_sent()).count(label_gridmpi_datarep) == 0);
}

TEST_CASE("IMPI datarep: the choice per pair of clients", "[impi][client]") {
  using gridmpi::p2p::DataRepresentation;
  auto x86 = some_datarep(8, 1), x86_again = some_datarep(8, 1), s390x = some_datarep(8, 2);
  s390x.big_endian = true;
  auto ilp32 = some_datarep(4, 3);
  CHECK(representation_between(x86, x86_again) == DataRepresentation::native);
  CHECK(representation_between(x86, s390x) == DataRepresentation::external64);
  CHECK(representation_between(s390x, x86) == DataRepresentation::external64);
  CHECK(representation_between(x86, ilp32) == DataRepresentation::external32);
  CHECK(representation_between(ilp32, some_datarep(4, 3)) == DataRepresentation::native);
  CHECK(representation_between(ilp32, some_datarep(4, 4)) == DataRepresentation::external32);
  CHECK(representation_between(x86, std::nullopt) == DataRepresentation::external32);
  CHECK(representation_between(std::nullopt, x86) == DataRepresentation::external32);
  auto narrow_wchar = some_datarep(8, 5);
  narrow_wchar.wchar_size = 2;
  CHECK(representation_between(x86, narrow_wchar) == DataRepresentation::external32);
  // This process's own record, through the label and back.
  auto mine = Datarep::of_this_process(gridmpi::core::native_representation());
  CHECK(mine.long_size == sizeof(long));
  auto bytes = mine.encode();
  CHECK(Datarep::decode(bytes) == mine);
  bytes[3] = std::byte{'2'};  // another version's record: none
  CHECK_FALSE(Datarep::decode(bytes));
}

TEST_CASE("IMPI job map: a GRIDMPI_DATAREP of the wrong length is ignored, not an error", "[impi][client]") {
  Harness h(1);
  h.join(2);
  h.hosts();
  auto ours = contributions(h.take_sent());
  Bytes answer = broadcasts(ours, other_client());
  answer = before_done(answer, encode_coll_result(label_gridmpi_datarep, 3, Bytes(30)));
  h.feed(answer, false);
  CHECK(h.failures.empty());
  REQUIRE(h.complete.size() == 1);
  auto map = JobMap::from_labels(h.complete[0]);
  CHECK_FALSE(map.client_datarep[0]);
  CHECK_FALSE(map.client_datarep[1]);
}
