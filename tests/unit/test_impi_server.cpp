// impi-server's state machine (impi/server.hpp) driven by scripted byte
// streams, no sockets: authentication, client ranks, collation of COLL labels
// (skips, different speeds, unknown labels), DONE, FINI, and every way a
// client can end the job, and every way a connection that is not a client yet
// is refused alone.  Replies are compared byte for byte.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <map>
#include <set>

#include "impi/server.hpp"
#include "impi/wire.hpp"
#include "tests/unit/hex_bytes.hpp"

using namespace gridmpi::impi;

namespace {

using Bytes = std::vector<std::byte>;

using gridmpi::test::hex_bytes;

// Bytes -> "434f4c4c 00000010 ..." (groups of 4 bytes), for readable failures.
std::string hex(const Bytes& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i && i % 4 == 0) s += ' ';
    auto v = std::to_integer<unsigned>(bytes[i]);
    s += digits[v >> 4];
    s += digits[v & 15];
  }
  return s;
}

Bytes u32(std::uint32_t v) {
  Bytes b;
  append_u32(b, v);
  return b;
}

Bytes operator+(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes coll(std::int32_t label, const Bytes& data) { return encode_coll_contribution(label, data); }

constexpr std::uint64_t key = 12345678901234567890ull;

ServerSettings settings(int clients, bool none = true, std::optional<std::uint64_t> k = std::nullopt,
                        bool verbose = false) {
  ServerSettings s;
  s.clients = clients;
  s.auth_none = none;
  s.auth_key = k;
  s.verbose = verbose;
  return s;
}

struct Harness {
  explicit Harness(ServerSettings s) : server(std::move(s)) {}

  ServerState server;
  std::map<ConnectionId, Bytes> sent;  // everything sent, per connection
  std::vector<ConnectionId> closed;
  std::vector<std::string> printed;
  std::vector<int> finished;

  static std::string peer(ConnectionId id) { return "10.0.0.1:" + std::to_string(4000 + id); }

  void open(ConnectionId id) {
    server.connection_opened(id, peer(id));
    collect();
  }
  // Feeds `bytes` in pieces of `chunk` bytes (0 = all at once).
  void feed(ConnectionId id, const Bytes& bytes, std::size_t chunk = 0) {
    if (chunk == 0) chunk = std::max<std::size_t>(bytes.size(), 1);
    for (std::size_t i = 0; i < bytes.size(); i += chunk) {
      std::size_t n = std::min(chunk, bytes.size() - i);
      server.received(id, std::span<const std::byte>(bytes).subspan(i, n));
      collect();
    }
  }
  void close_by_peer(ConnectionId id) {
    server.connection_closed(id);
    collect();
  }
  // Opens connection `id` and joins as client `rank` with NONE.
  void join(ConnectionId id, int rank) {
    open(id);
    feed(id, encode_auth(0x1) + encode_impi(rank));
    CHECK(hex(take(id)) == hex(encode_auth_choice(auth_none) + encode_impi(server_clients)));
  }
  // Bytes sent to `id` since the last take().
  Bytes take(ConnectionId id) { return std::exchange(sent[id], {}); }
  bool is_closed(ConnectionId id) const { return std::find(closed.begin(), closed.end(), id) != closed.end(); }

  void collect() {
    for (auto& a : server.take_actions()) {
      if (auto* s = std::get_if<server_action::Send>(&a)) {
        REQUIRE_FALSE(is_closed(s->connection));  // nothing is sent after a close
        auto& out = sent[s->connection];
        out.insert(out.end(), s->bytes.begin(), s->bytes.end());
      } else if (auto* c = std::get_if<server_action::Close>(&a)) {
        REQUIRE_FALSE(is_closed(c->connection));  // closed once
        closed.push_back(c->connection);
      } else if (auto* p = std::get_if<server_action::Print>(&a)) {
        printed.push_back(p->line);
      } else if (auto* f = std::get_if<server_action::Finish>(&a)) {
        finished.push_back(f->exit_status);
      }
    }
  }

  int server_clients = 0;
};

Harness make(ServerSettings s) {
  int m = s.clients;
  Harness h(std::move(s));
  h.server_clients = m;
  return h;
}

// The one failure line, and the job ended with status 1.
void check_failed(const Harness& h, const std::string& line) {
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] == line);
  CHECK(h.finished == std::vector<int>{1});
  CHECK(h.server.exit_status() == 1);
}

// One line for a connection refused alone: it is closed, the job goes on.
void check_refused(const Harness& h, ConnectionId id, const std::string& line) {
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] == line);
  CHECK(h.is_closed(id));
  CHECK(h.finished.empty());
  CHECK_FALSE(h.server.finished());
}

// Clients 0..M-1 on connections `ids` (already joined) finish the start-up
// and the job: the server exits with status 0.
void complete_job(Harness& h, const std::vector<ConnectionId>& ids) {
  for (ConnectionId id : ids) h.feed(id, encode_done());
  for (ConnectionId id : ids) CHECK(hex(h.take(id)) == "444f4e45 00000000");
  for (ConnectionId id : ids) h.feed(id, encode_fini());
  CHECK(h.finished == std::vector<int>{0});
  CHECK(h.server.exit_status() == 0);
}

}  // namespace

// ---- authentication ----------------------------------------------------------------

TEST_CASE("auth: NONE is chosen when the server enables only NONE", "[impi][server]") {
  for (std::uint32_t mask : {0x1u, 0x3u, 0x7u}) {
    auto h = make(settings(1));
    h.open(1);
    h.feed(1, hex_bytes("41555448 00000004") + u32(mask));
    CHECK(hex(h.take(1)) == "00000000 00000000");  // raw: method NONE, len 0, no header
    h.feed(1, hex_bytes("494d5049 00000004 00000000"));
    CHECK(hex(h.take(1)) == "494d5049 00000004 00000001");
    CHECK(h.printed.empty());
    CHECK(h.finished.empty());
  }
}

TEST_CASE("auth: KEY is chosen when both sides enable it, then the raw key", "[impi][server]") {
  auto h = make(settings(2, true, key));
  h.open(1);
  h.feed(1, hex_bytes("41555448 00000004 00000003"));
  CHECK(hex(h.take(1)) == "00000001 00000000");
  h.feed(1, encode_auth_key(key) + encode_impi(1));
  CHECK(hex(h.take(1)) == "494d5049 00000004 00000002");
  CHECK(h.server.clients_joined() == 1);
  CHECK(h.finished.empty());

  SECTION("a client with only NONE still gets NONE") {
    h.open(2);
    h.feed(2, encode_auth(0x1));
    CHECK(hex(h.take(2)) == "00000000 00000000");
  }
}

TEST_CASE("auth: a wrong key refuses that connection alone", "[impi][server]") {
  auto h = make(settings(2, false, key));
  h.open(1);
  h.feed(1, encode_auth(0x2) + encode_auth_key(key) + encode_impi(0));
  CHECK(hex(h.take(1)) == "00000001 00000000 494d5049 00000004 00000002");
  h.open(2);
  h.feed(2, encode_auth(0x3) + encode_auth_key(key + 1) + encode_impi(1));
  CHECK(hex(h.take(2)) == "00000001 00000000");  // nothing after the key
  check_refused(h, 2,
                "impi-server: client from 10.0.0.1:4002: wrong IMPI_AUTH_KEY (set the same key on the server and "
                "every cluster): refused, only this connection is closed; the job goes on (1 of 2 clients joined)");
  CHECK_FALSE(h.is_closed(1));
  CHECK(h.server.clients_joined() == 1);
  // The real client 1 comes with the right key and the job completes.
  h.open(3);
  h.feed(3, encode_auth(0x2) + encode_auth_key(key) + encode_impi(1));
  CHECK(hex(h.take(3)) == "00000001 00000000 494d5049 00000004 00000002");
  complete_job(h, {1, 3});
}

TEST_CASE("auth: no common method", "[impi][server]") {
  SECTION("client NONE, server KEY") {
    auto h = make(settings(1, false, key));
    h.open(1);
    h.feed(1, encode_auth(0x1));
    CHECK(h.take(1).empty());
    check_refused(h, 1,
                  "impi-server: client from 10.0.0.1:4001: no common authentication method (client offers 0x1 = "
                  "NONE, server enables 0x2 = KEY); set IMPI_AUTH_NONE, or the same IMPI_AUTH_KEY, on the server "
                  "and every cluster: refused, only this connection is closed; the job goes on (0 of 1 clients "
                  "joined)");
  }
  SECTION("client offers nothing") {
    auto h = make(settings(1, true, key));
    h.open(1);
    h.feed(1, encode_auth(0x0));
    CHECK(h.printed.at(0).find("client offers 0x0 = none, server enables 0x3 = NONE+KEY") != std::string::npos);
    CHECK(h.finished.empty());
    CHECK(h.is_closed(1));
  }
}

TEST_CASE("settings are checked", "[impi][server]") {
  CHECK_THROWS_AS(ServerState(settings(0)), std::invalid_argument);
  CHECK_THROWS_AS(ServerState(settings(33)), std::invalid_argument);
  CHECK_THROWS_AS(ServerState(settings(2, false)), std::invalid_argument);
  CHECK_NOTHROW(ServerState(settings(32)));
}

// ---- client ranks ----------------------------------------------------------------

TEST_CASE("IMPI: the size is answered at once, before the other clients join", "[impi][server]") {
  auto h = make(settings(3));
  h.open(7);
  h.feed(7, encode_auth(1) + encode_impi(2));
  CHECK(hex(h.take(7)) == "00000000 00000000 494d5049 00000004 00000003");
  CHECK(h.server.clients_joined() == 1);
}

TEST_CASE("IMPI: a rank out of range or taken refuses that connection alone", "[impi][server]") {
  SECTION("too large") {
    auto h = make(settings(2));
    h.join(1, 0);
    h.open(2);
    h.feed(2, encode_auth(1) + encode_impi(2));
    // The size is answered (a client checks rank < size), then the connection goes.
    CHECK(hex(h.take(2)) == "00000000 00000000 494d5049 00000004 00000002");
    check_refused(h, 2,
                  "impi-server: client from 10.0.0.1:4002: client rank 2 is out of range: impi-server -server 2 "
                  "takes clients 0..1 (check mpirun -client): refused, only this connection is closed; the job "
                  "goes on (1 of 2 clients joined)");
    CHECK_FALSE(h.is_closed(1));
    h.join(3, 1);
    complete_job(h, {1, 3});
  }
  SECTION("negative") {
    auto h = make(settings(2));
    h.open(2);
    h.feed(2, encode_auth(1) + encode_impi(-1));
    check_refused(h, 2,
                  "impi-server: client from 10.0.0.1:4002: client rank -1 is out of range: impi-server -server 2 "
                  "takes clients 0..1 (check mpirun -client): refused, only this connection is closed; the job "
                  "goes on (0 of 2 clients joined)");
  }
  SECTION("already taken, while the others are still joining") {
    auto h = make(settings(3));
    h.join(1, 1);
    h.open(2);
    h.feed(2, encode_auth(1) + encode_impi(1));
    CHECK(hex(h.take(2)) == "00000000 00000000");  // no IMPI answer
    check_refused(h, 2,
                  "impi-server: client from 10.0.0.1:4002: client rank 1 is already taken by 10.0.0.1:4001 (give "
                  "every mpirun -client a different number): refused, only this connection is closed; the job goes "
                  "on (1 of 3 clients joined)");
    CHECK_FALSE(h.is_closed(1));
    CHECK(h.server.clients_joined() == 1);
    h.join(3, 0);
    h.join(4, 2);
    complete_job(h, {3, 1, 4});
  }
  SECTION("already taken, in the middle of the start-up exchange and while the job runs") {
    auto h = make(settings(2));
    h.join(1, 0);
    h.join(2, 1);
    h.feed(1, coll(label_c_nhosts, u32(1)));
    h.open(3);
    h.feed(3, encode_auth(1) + encode_impi(0) + coll(label_c_nhosts, u32(7)));
    check_refused(h, 3,
                  "impi-server: client from 10.0.0.1:4003: client rank 0 is already taken by 10.0.0.1:4001 (give "
                  "every mpirun -client a different number): refused, only this connection is closed; the job goes "
                  "on");
    // The stray COLL went nowhere: client 1's label is collated with client 0's.
    h.feed(2, coll(label_c_nhosts, u32(2)));
    CHECK(hex(h.take(1)) == hex(encode_coll_result(label_c_nhosts, 0x3, u32(1) + u32(2))));
    CHECK(hex(h.take(2)) == hex(encode_coll_result(label_c_nhosts, 0x3, u32(1) + u32(2))));
    h.feed(1, encode_done());
    h.feed(2, encode_done());
    h.open(4);  // after DONE, while the job runs
    h.feed(4, encode_auth(1) + encode_impi(1));
    CHECK(h.printed.size() == 2);
    CHECK(h.is_closed(4));
    CHECK(h.finished.empty());
    h.feed(1, encode_fini());
    h.feed(2, encode_fini());
    CHECK(h.finished == std::vector<int>{0});
  }
}

// ---- collation ------------------------------------------------------------------------

TEST_CASE("COLL: the verified two-client example, byte for byte", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.join(2, 1);
  h.feed(1, hex_bytes("434f4c4c 00000008 00001200 00000002"));
  CHECK(h.take(1).empty());  // client 1 has not answered yet
  CHECK(h.take(2).empty());
  h.feed(2, coll(label_c_nprocs, u32(3)));
  const std::string expected = "434f4c4c 00000010 00001200 00000003 00000002 00000003";
  CHECK(hex(h.take(1)) == expected);
  CHECK(hex(h.take(2)) == expected);
}

TEST_CASE("COLL: a client that skips a label has its bit cleared (verified example)", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.join(2, 1);
  h.feed(1, coll(label_c_tagub, u32(0x7fff)));
  CHECK(h.take(1).empty());
  // client 1 goes straight to C_COLL_XSIZE: it is past C_TAGUB.
  h.feed(2, coll(label_c_coll_xsize, u32(0xffffffff)));
  const std::string tagub = "434f4c4c 0000000c 00001400 00000001 00007fff";
  CHECK(hex(h.take(1)) == tagub);
  CHECK(hex(h.take(2)) == tagub);
  h.feed(1, coll(label_c_coll_xsize, u32(1024)));
  const std::string xsize = "434f4c4c 00000010 00001500 00000003 00000400 ffffffff";
  CHECK(hex(h.take(1)) == xsize);
  CHECK(hex(h.take(2)) == xsize);
}

TEST_CASE("COLL: a label nobody submitted is not sent; DONE counts as past everything", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.join(2, 1);
  h.feed(1, coll(label_c_version, hex_bytes("00000000 00000000")) + encode_done());
  CHECK(h.take(1).empty());
  h.feed(2, coll(label_p_pid, hex_bytes("00000000 0000abcd")));
  // C_VERSION from client 0 only; P_PID waits for nothing (client 0 is DONE)
  // but client 1 has not sent DONE yet.
  CHECK(hex(h.take(2)) ==
        "434f4c4c 00000010 00001000 00000001 00000000 00000000 "
        "434f4c4c 00000010 00003100 00000002 00000000 0000abcd");
  CHECK(h.server.broadcast_labels() == std::vector<std::int32_t>{label_c_version, label_p_pid});
  h.take(1);
  h.feed(2, encode_done());
  CHECK(hex(h.take(1)) == "444f4e45 00000000");
  CHECK(hex(h.take(2)) == "444f4e45 00000000");
}

namespace {

// One client's contribution to label `index`: distinct bytes per client and label.
Bytes value(int client, std::size_t index, std::size_t elements = 1) {
  Bytes b;
  for (std::size_t e = 0; e < elements; ++e) {
    b.push_back(static_cast<std::byte>(client));
    b.push_back(static_cast<std::byte>(index));
    b.push_back(static_cast<std::byte>(e));
    b.push_back(std::byte{0xee});
  }
  return b;
}

// The whole stream a LAM-like client sends after joining: the 14 labels
// (except `skip`, an index or -1) and DONE.
Bytes labels_and_done(int client, int skip = -1) {
  Bytes out;
  for (std::size_t i = 0; i < standard_labels().size(); ++i) {
    if (static_cast<int>(i) == skip) continue;
    out = out + coll(standard_labels()[i].code, value(client, i, static_cast<std::size_t>(client) + 1));
  }
  return out + encode_done();
}

// What every client receives for that run.
Bytes expected_broadcasts(int clients, int skipping_client = -1, int skip = -1) {
  Bytes out;
  for (std::size_t i = 0; i < standard_labels().size(); ++i) {
    std::uint32_t mask = 0;
    Bytes data;
    for (int c = 0; c < clients; ++c) {
      if (c == skipping_client && static_cast<int>(i) == skip) continue;
      mask |= 1u << c;
      data = data + value(c, i, static_cast<std::size_t>(c) + 1);
    }
    out = out + encode_coll_result(standard_labels()[i].code, mask, data);
  }
  return out + encode_done();
}

}  // namespace

TEST_CASE("COLL: three clients at different speeds", "[impi][server]") {
  auto h = make(settings(3));
  // Client 0 sends everything before the others even connect: nothing can go out.
  h.join(10, 0);
  h.feed(10, labels_and_done(0));
  CHECK(h.take(10).empty());
  // Client 2 (skipping IMPI_H_PORT) joins and sends half its labels.
  h.join(12, 2);
  Bytes stream2 = labels_and_done(2, 8);
  Bytes first_half(stream2.begin(), stream2.begin() + static_cast<std::ptrdiff_t>(stream2.size() / 2));
  Bytes second_half(stream2.begin() + static_cast<std::ptrdiff_t>(stream2.size() / 2), stream2.end());
  h.feed(12, first_half);
  CHECK(h.take(10).empty());  // client 1 has not joined: no label can go out
  // Client 1 joins and sends its first three labels.
  h.join(11, 1);
  Bytes stream1 = labels_and_done(1);
  Bytes until_nprocs;
  for (std::size_t i = 0; i < 3; ++i) until_nprocs = until_nprocs + coll(standard_labels()[i].code, value(1, i, 2));
  h.feed(11, until_nprocs);
  Bytes expected = expected_broadcasts(3, 2, 8);
  Bytes first_three;  // labels 0..2 from all three clients, in rank order
  for (std::size_t i = 0; i < 3; ++i)
    first_three = first_three + encode_coll_result(standard_labels()[i].code, 0x7,
                                                   value(0, i, 1) + value(1, i, 2) + value(2, i, 3));
  for (ConnectionId id : {10, 11, 12}) CHECK(hex(h.take(id)) == hex(first_three));
  CHECK(h.server.broadcast_labels().size() == 3);
  // The rest of client 1, then the rest of client 2.
  h.feed(11, Bytes(stream1.begin() + static_cast<std::ptrdiff_t>(until_nprocs.size()), stream1.end()));
  Bytes after_three(expected.begin() + static_cast<std::ptrdiff_t>(first_three.size()), expected.end());
  Bytes so_far = h.take(10);
  // Client 2 is still at its sixth label: only labels up to there are out, no DONE yet.
  CHECK(so_far.size() < after_three.size());
  CHECK(std::equal(so_far.begin(), so_far.end(), after_three.begin()));
  h.feed(12, second_half);
  Bytes rest = so_far + h.take(10);
  CHECK(hex(rest) == hex(after_three));
  CHECK(hex(h.take(11)) == hex(after_three));
  CHECK(hex(h.take(12)) == hex(after_three));
  // The skipped label went out with client 2's bit cleared.
  Bytes port = encode_coll_result(label_h_port, 0x3, value(0, 8, 1) + value(1, 8, 2));
  CHECK(std::search(expected.begin(), expected.end(), port.begin(), port.end()) != expected.end());
  CHECK(h.printed.empty());
  CHECK(h.finished.empty());
}

TEST_CASE("COLL: one byte at a time gives the same bytes", "[impi][server]") {
  for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{7}}) {
    auto h = make(settings(2, true, key));
    for (int rank = 0; rank < 2; ++rank) {
      ConnectionId id = static_cast<ConnectionId>(rank + 1);
      h.open(id);
      h.feed(id, encode_auth(0x3) + encode_auth_key(key) + encode_impi(rank), chunk);
      CHECK(hex(h.take(id)) == "00000001 00000000 494d5049 00000004 00000002");
    }
    h.feed(1, labels_and_done(0), chunk);
    h.feed(2, labels_and_done(1, 4), chunk);
    Bytes expected = expected_broadcasts(2, 1, 4);
    CHECK(hex(h.take(1)) == hex(expected));
    CHECK(hex(h.take(2)) == hex(expected));
    h.feed(2, encode_fini(), chunk);
    h.feed(1, encode_fini(), chunk);
    CHECK(h.finished == std::vector<int>{0});
    CHECK(h.printed.empty());
  }
}

TEST_CASE("COLL: unknown labels are read and dropped", "[impi][server]") {
  auto h = make(settings(2, true, std::nullopt, true));
  h.join(1, 0);
  h.join(2, 1);
  h.printed.clear();
  h.feed(1, coll(0x7777, hex_bytes("01020304 05")) + coll(label_c_nhosts, u32(1)));
  CHECK(h.printed == std::vector<std::string>{
                         "impi-server: client 0 (10.0.0.1:4001): dropped unknown label 0x7777 (5 bytes)",
                         "impi-server: client 0 (10.0.0.1:4001): IMPI_C_NHOSTS (4 bytes)"});
  h.feed(2, coll(0, {}) + coll(label_c_nhosts, u32(2)));  // IMPI_NO_LABEL is unknown too
  const std::string nhosts = "434f4c4c 00000010 00001100 00000003 00000001 00000002";
  CHECK(hex(h.take(1)) == nhosts);
  CHECK(hex(h.take(2)) == nhosts);
  CHECK(h.finished.empty());
}

TEST_CASE("COLL: repeated or out-of-order labels end the job", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.join(2, 1);
  SECTION("twice") {
    h.feed(2, coll(label_c_nprocs, u32(1)) + coll(label_c_nprocs, u32(1)));
    check_failed(h,
                 "impi-server: client 1 (10.0.0.1:4002) sent IMPI_C_NPROCS twice: the job is over; closing the "
                 "other clients");
  }
  SECTION("backwards") {
    h.feed(1, coll(label_h_port, u32(1)) + coll(label_c_tagub, u32(1)));
    check_failed(h,
                 "impi-server: client 0 (10.0.0.1:4001) sent IMPI_C_TAGUB after IMPI_H_PORT (labels must come in "
                 "the canonical order, docs/impi-protocol.md 3.6): the job is over; closing the other clients");
  }
  CHECK(h.is_closed(1));
  CHECK(h.is_closed(2));
}

// ---- DONE and FINI -----------------------------------------------------------------

TEST_CASE("DONE waits for every client, FINI from all ends with status 0", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.join(2, 1);
  h.feed(1, encode_done());
  CHECK(h.take(1).empty());
  h.feed(2, coll(label_c_nprocs, u32(5)) + encode_done());
  CHECK(hex(h.take(1)) == "434f4c4c 0000000c 00001200 00000002 00000005 444f4e45 00000000");
  CHECK(hex(h.take(2)) == "434f4c4c 0000000c 00001200 00000002 00000005 444f4e45 00000000");
  h.feed(2, hex_bytes("46494e49 00000000"));
  CHECK(h.is_closed(2));  // the server closes a client's socket after its FINI
  CHECK_FALSE(h.is_closed(1));
  CHECK(h.finished.empty());
  CHECK(h.server.clients_finished() == 1);
  h.close_by_peer(2);  // late close report of a connection already closed: no effect
  CHECK(h.finished.empty());
  h.feed(1, encode_fini() + hex_bytes("deadbeef"));  // bytes after FINI are not read
  CHECK(h.is_closed(1));
  CHECK(h.finished == std::vector<int>{0});
  CHECK(h.printed.empty());
  CHECK(h.take(1).empty());
  CHECK(h.take(2).empty());
}

TEST_CASE("FINI before the server's DONE is a protocol error", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.join(2, 1);
  h.feed(1, encode_done() + encode_fini());
  check_failed(h,
               "impi-server: client 0 (10.0.0.1:4001) sent FINI before the start-up exchange ended (the server had "
               "not sent DONE yet): the job is over; closing the other clients");
}

TEST_CASE("a client that disconnects before FINI ends the job", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.join(2, 1);
  h.close_by_peer(2);
  check_failed(h,
               "impi-server: client 1 (10.0.0.1:4002) disconnected before FINI: the job is over; closing the "
               "other clients");
  CHECK(h.is_closed(1));
  CHECK_FALSE(h.is_closed(2));  // the adapter already dropped it
  // Nothing more happens after the end.
  h.feed(1, encode_done());
  h.open(3);
  CHECK(h.is_closed(3));
  CHECK(h.finished.size() == 1);
  CHECK(h.take(1).empty());
}

TEST_CASE("a client that disconnects while the job runs (after DONE) ends it too", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.join(2, 1);
  h.feed(1, encode_done());
  h.feed(2, encode_done());
  CHECK(hex(h.take(1)) == "444f4e45 00000000");
  h.feed(1, encode_fini());
  CHECK(h.is_closed(1));
  h.close_by_peer(2);
  check_failed(h, "impi-server: client 1 (10.0.0.1:4002) disconnected before FINI: the job is over");
}

TEST_CASE("one failing client ends the job before everyone has joined", "[impi][server]") {
  auto h = make(settings(3));
  h.join(1, 0);
  h.join(2, 1);
  h.close_by_peer(2);
  check_failed(h, "impi-server: client 1 (10.0.0.1:4002) disconnected before FINI: the job is over; closing the "
                  "other clients");
  CHECK(h.is_closed(1));
}

TEST_CASE("a connection that disconnects before it said which client it is goes alone", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.open(2);
  h.feed(2, encode_auth(1));
  h.close_by_peer(2);
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] == "impi-server: client from 10.0.0.1:4002 disconnected before sending IMPI (its client rank): "
                        "it was not a client yet; the job goes on (1 of 2 clients joined)");
  CHECK_FALSE(h.is_closed(1));
  h.open(3);
  h.feed(3, hex_bytes("41555448"));  // half an AUTH header
  h.close_by_peer(3);
  CHECK(h.printed.at(1).find("disconnected during authentication: it was not a client yet") != std::string::npos);
  h.join(4, 1);
  complete_job(h, {1, 4});
}

TEST_CASE("a TLS failure of a connection that is not a client yet refuses it alone", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.open(2);
  h.server.connection_failed(2, "TLS handshake failed: certificate verify failed");
  h.collect();
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] == "impi-server: client from 10.0.0.1:4002: TLS handshake failed: certificate verify failed: "
                        "refused, only this connection is closed; the job goes on (1 of 2 clients joined)");
  CHECK_FALSE(h.is_closed(2));  // the adapter closes it
  h.open(3);
  h.feed(3, hex_bytes("16030100 05"));  // a TLS ClientHello at a plain server
  CHECK(h.is_closed(3));
  CHECK(h.printed.at(1).find("speaks TLS") != std::string::npos);
  h.join(4, 1);
  complete_job(h, {1, 4});
}

TEST_CASE("a connection that sends nothing is a probe, not a client", "[impi][server]") {
  auto h = make(settings(1, true, std::nullopt, true));
  h.open(5);
  h.close_by_peer(5);
  CHECK(h.finished.empty());
  CHECK(h.printed.back().find("closed without sending anything") != std::string::npos);
  h.open(6);
  h.feed(6, encode_auth(1) + encode_impi(0) + encode_done());
  CHECK(hex(h.take(6)) == "00000000 00000000 494d5049 00000004 00000001 444f4e45 00000000");
  h.feed(6, encode_fini());
  CHECK(h.finished == std::vector<int>{0});
}

// ---- malformed input ------------------------------------------------------------------

TEST_CASE("garbage and misplaced commands: refused before IMPI, the end of the job after", "[impi][server]") {
  struct Case {
    const char* name;
    Bytes before_impi;  // sent right after opening (empty: join first as client 0)
    Bytes after_join;
    std::string line;
  };
  std::vector<Case> cases = {
      {"http", hex_bytes("47455420 2f204854 5450"), {},
       "impi-server: client from 10.0.0.1:4002 sent 0x47455420 where a command was expected (not an IMPI client, "
       "or out of step with the protocol): refused, only this connection is closed; the job goes on (1 of 3 "
       "clients joined)"},
      {"IMPI before AUTH", encode_impi(1), {},
       "impi-server: client from 10.0.0.1:4002 sent IMPI before AUTH (a client starts with AUTH): refused, only "
       "this connection is closed; the job goes on (1 of 3 clients joined)"},
      {"COLL before IMPI", encode_auth(1) + coll(label_c_nhosts, u32(1)), {},
       "impi-server: client from 10.0.0.1:4002 sent COLL before IMPI (its client rank): refused, only "
       "this connection is closed; the job goes on (1 of 3 clients joined)"},
      {"AUTH twice", encode_auth(1) + encode_auth(1), {},
       "impi-server: client from 10.0.0.1:4002 sent AUTH twice: refused, only this connection is closed; the job "
       "goes on (1 of 3 clients joined)"},
      {"AUTH of length 8", hex_bytes("41555448 00000008 00000001 00000000"), {},
       "impi-server: client from 10.0.0.1:4002 sent AUTH with length 8 (must be 4): refused, only "
       "this connection is closed; the job goes on (1 of 3 clients joined)"},
      {"IMPI again", {}, encode_impi(1),
       "impi-server: client 1 (10.0.0.1:4002) sent IMPI again after joining: the job is over; closing the other "
       "clients"},
      {"FINI before DONE", {}, encode_fini(),
       "impi-server: client 1 (10.0.0.1:4002) sent FINI before DONE: the job is over; closing the other clients"},
      {"COLL after DONE", {}, encode_done() + coll(label_c_nhosts, u32(1)),
       "impi-server: client 1 (10.0.0.1:4002) sent COLL after DONE: the job is over; closing the other clients"},
      {"DONE with a payload", {}, hex_bytes("444f4e45 00000004 00000000"),
       "impi-server: client 1 (10.0.0.1:4002) sent DONE with length 4 (must be 0): the job is over; closing the "
       "other clients"},
      {"COLL without label", {}, hex_bytes("434f4c4c 00000002 0000"),
       "impi-server: client 1 (10.0.0.1:4002) sent COLL with length 2 (must be at least 4, for the label): the "
       "job is over; closing the other clients"},
      // Refused from the header alone: the 2 GiB payload is never awaited.
      {"huge COLL", {}, hex_bytes("434f4c4c 7fffffff 00001000"),
       "impi-server: client 1 (10.0.0.1:4002) sent COLL with length 2147483647 (more than the limit of 16777216 "
       "bytes): the job is over; closing the other clients"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      auto h = make(settings(3));
      h.join(1, 0);
      if (c.before_impi.empty()) {
        h.join(2, 1);
        h.feed(2, c.after_join);
        check_failed(h, c.line);
        CHECK(h.is_closed(1));
        CHECK(h.is_closed(2));
      } else {
        h.open(2);
        h.feed(2, c.before_impi);
        check_refused(h, 2, c.line);
        CHECK_FALSE(h.is_closed(1));
        h.join(3, 1);
        h.join(4, 2);
        complete_job(h, {1, 3, 4});
      }
    }
  }
}

TEST_CASE("SIGINT or SIGTERM closes every client, status 1", "[impi][server]") {
  auto h = make(settings(3));
  h.join(1, 0);
  h.join(2, 1);
  h.server.interrupted(SIGTERM);
  h.collect();
  check_failed(h, "impi-server: interrupted by SIGTERM: closing 2 client connections");
  CHECK(h.is_closed(1));
  CHECK(h.is_closed(2));
}

TEST_CASE("describe_auth_mask", "[impi][server]") {
  CHECK(describe_auth_mask(0) == "0x0 = none");
  CHECK(describe_auth_mask(1) == "0x1 = NONE");
  CHECK(describe_auth_mask(2) == "0x2 = KEY");
  CHECK(describe_auth_mask(3) == "0x3 = NONE+KEY");
  CHECK(describe_auth_mask(0x83) == "0x83 = NONE+KEY+unknown");
}

TEST_CASE("COLL: gridmpi's GRIDMPI_DATAREP comes after the 14, to the clients that sent it only", "[impi][server]") {
  auto h = make(settings(2));
  h.join(1, 0);
  h.join(2, 1);
  Bytes record = value(0, 14, 6);  // 24 bytes
  // Client 0 (gridmpi) sends it last; client 1 (third-party) does not.
  Bytes stream0 = labels_and_done(0);
  Bytes done = encode_done();
  stream0.resize(stream0.size() - done.size());
  stream0 = stream0 + coll(label_gridmpi_datarep, record) + done;
  h.feed(1, stream0);
  h.feed(2, labels_and_done(1));
  Bytes expected = expected_broadcasts(2);
  Bytes third_party = expected;  // the 14 and DONE: LAM/MPI takes anything else for an error
  expected.resize(expected.size() - done.size());
  expected = expected + encode_coll_result(label_gridmpi_datarep, 0x1, record) + done;
  CHECK(hex(h.take(1)) == hex(expected));
  CHECK(hex(h.take(2)) == hex(third_party));
  CHECK(h.server.broadcast_labels().back() == label_gridmpi_datarep);
  CHECK(h.finished.empty());
  // Sending it before a standard label breaks the canonical order.
  auto bad = make(settings(1));
  bad.join(1, 0);
  bad.feed(1, coll(label_gridmpi_datarep, record) + coll(label_c_version, Bytes(8)));
  REQUIRE(bad.printed.size() == 1);
  CHECK_THAT(bad.printed[0], Catch::Contains("GRIDMPI_DATAREP") && Catch::Contains("canonical order"));
}
