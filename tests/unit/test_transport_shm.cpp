// The shm transport's ring on plain memory (wrap-around, padding, a full
// ring and the request for room, cleared stamps, corruption), and two shm
// transports in this process: eager records against both large-message
// paths, a payload many times the ring, the doorbell, and a forked peer
// that dies without saying goodbye.  The contract
// itself is checked by test_transport_conformance.cpp ("shm", "shm-copy").
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "base/error.hpp"
#include "p2p/shm/shm_ring.hpp"
#include "p2p/shm/shm_transport.hpp"

using namespace gridmpi::p2p;
using namespace gridmpi::p2p::shm;

namespace {

// A ring of `lines` cells in ordinary memory.
struct TestRing {
  explicit TestRing(std::uint64_t lines)
      : memory(static_cast<std::byte*>(std::aligned_alloc(page_size, page_size + lines * cache_line))) {
    std::memset(memory, 0, page_size + lines * cache_line);
    control = new (memory) RingControl;
    view = RingView{control, memory + page_size, lines};
  }
  ~TestRing() { std::free(memory); }
  std::uint64_t stamp_word(std::uint64_t line) const {
    std::uint64_t v;
    std::memcpy(&v, view.lines + line * cache_line, sizeof v);
    return v;
  }
  std::byte* memory;
  RingControl* control;
  RingView view;
};

std::vector<std::byte> bytes(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 7 + seed) & 0xff);
  return v;
}

}  // namespace

TEST_CASE("shm ring: records of every size survive wrap-around in order", "[shm]") {
  TestRing ring(64);  // 4 KiB: wraps every few records
  RingWriter writer(ring.view);
  RingReader reader(ring.view);
  unsigned written = 0, read = 0;
  std::uint64_t tail_before_padding = 0;
  bool padded = false;
  while (read < 500) {
    // Write what fits, then read it all back.
    for (;;) {
      auto h = bytes(written % 33, written), d = bytes((written * 37) % 900, written + 1);
      const std::uint64_t extras[1] = {written};
      tail_before_padding = writer.tail();
      const std::uint64_t lines = lines_for(record_bytes(h.size(), written % 2, d.size()));
      if (tail_before_padding % ring.view.count + lines > ring.view.count) padded = true;
      if (!writer.write(RecordKind::message, h, std::span<const std::uint64_t>(extras, written % 2), d)) break;
      ++written;
    }
    Record r;
    while (reader.peek(&r)) {
      INFO("record " << read);
      CHECK(r.kind == RecordKind::message);
      CHECK(std::vector<std::byte>(r.header.begin(), r.header.end()) == bytes(read % 33, read));
      CHECK(std::vector<std::byte>(r.data.begin(), r.data.end()) == bytes((read * 37) % 900, read + 1));
      if (read % 2) CHECK(r.extra(0) == read);
      reader.consume(r);
      ++read;
    }
    reader.publish();
  }
  CHECK(padded);  // some record did not fit before the end of the array
  // Every consumed line has its stamp cleared.
  for (std::uint64_t i = 0; i < ring.view.count; ++i) CHECK(ring.stamp_word(i) == 0);
}

TEST_CASE("shm ring: a full ring refuses, asks for room, and takes again once read", "[shm]") {
  TestRing ring(32);
  RingWriter writer(ring.view);
  RingReader reader(ring.view);
  auto d = bytes(100, 1);  // 2 lines per record
  int accepted = 0;
  while (writer.write(RecordKind::message, {}, {}, d)) ++accepted;
  CHECK(accepted == 16);
  CHECK(ring.control->space_wanted.load() == 1);
  Record r;
  REQUIRE(reader.peek(&r));
  reader.consume(r);
  CHECK_FALSE(writer.write(RecordKind::message, {}, {}, d));  // not published yet
  CHECK(reader.publish());                                    // the sender asked: ring it
  CHECK(ring.control->space_wanted.load() == 0);
  CHECK(writer.write(RecordKind::message, {}, {}, d));
  CHECK_FALSE(reader.publish());  // nothing consumed since
}

TEST_CASE("shm ring: after a padding record the reader stops at its own lines not yet given back", "[shm]") {
  TestRing ring(64);
  RingWriter writer(ring.view);
  RingReader reader(ring.view);
  auto eight = bytes(8 * cache_line - sizeof(RecordPrefix), 3);  // 8 lines
  auto nine = bytes(9 * cache_line - sizeof(RecordPrefix), 4);   // 9 lines
  for (int i = 0; i < 7; ++i) REQUIRE(writer.write(RecordKind::message, {}, {}, eight));
  // 56 lines used: the 9-line record pads the last 8 lines, then finds no room.
  CHECK_FALSE(writer.write(RecordKind::message, {}, {}, nine));
  Record r;
  for (int i = 0; i < 7; ++i) {
    REQUIRE(reader.peek(&r));
    reader.consume(r);
  }
  // Past the padding the head is line 0 again, which still holds the first
  // record's stamp (stamps are cleared when lines are given back): nothing
  // is there, and nothing is corrupted.
  CHECK(ring.stamp_word(0) == 1);
  CHECK_FALSE(reader.peek(&r));
  CHECK(reader.unpublished() == 64);
  reader.publish();
  for (std::uint64_t i = 0; i < ring.view.count; ++i) CHECK(ring.stamp_word(i) == 0);
  REQUIRE(writer.write(RecordKind::message, {}, {}, nine));
  REQUIRE(reader.peek(&r));
  CHECK(std::vector<std::byte>(r.data.begin(), r.data.end()) == nine);
  reader.consume(r);
  CHECK_FALSE(reader.peek(&r));
}

TEST_CASE("shm ring: limits and corruption are errors", "[shm]") {
  TestRing ring(64);
  RingWriter writer(ring.view);
  RingReader reader(ring.view);
  CHECK(writer.max_record() == 64 * cache_line / 4);
  auto big = bytes(writer.max_record(), 2);
  CHECK_THROWS_AS(writer.write(RecordKind::message, {}, {}, big), gridmpi::MpiError);
  Record r;
  CHECK_FALSE(reader.peek(&r));
  std::uint64_t bogus = 77;
  std::memcpy(ring.view.lines, &bogus, sizeof bogus);
  CHECK_THROWS_AS(reader.peek(&r), gridmpi::MpiError);
}

namespace {

struct Sink : FrameSink {
  std::vector<std::vector<std::byte>> payloads;
  std::vector<std::uint64_t> completed;
  std::vector<std::byte> destination;
  bool place = false;
  Placement on_frame_begin(int, const gridmpi::p2p::Frame&, std::size_t size) override {
    Placement p;
    if (place && size) {
      destination.assign(size, std::byte{0});
      p.destination = destination;
    }
    return p;
  }
  void on_frame_end(int, std::uint64_t, std::span<const std::byte> payload) override {
    payloads.emplace_back(payload.begin(), payload.end());
  }
  void on_send_complete(int, std::uint64_t token) override { completed.push_back(token); }
};

struct Pair {
  boost::asio::io_context io;
  Sink sink0, sink1;
  std::unique_ptr<ShmTransport> t0, t1;
  explicit Pair(ShmOptions o, std::uint64_t cookie) {
    t0 = std::make_unique<ShmTransport>(TransportContext{0, 2, cookie, &io, &sink0}, o);
    t1 = std::make_unique<ShmTransport>(TransportContext{1, 2, cookie, &io, &sink1}, o);
    t0->set_peer_endpoint(1, t1->endpoint());
    t1->set_peer_endpoint(0, t0->endpoint());
    pump_until([&] { return t0->large_path_from(1) != SingleCopy::unknown && t1->large_path_from(0) != SingleCopy::unknown; });
  }
  void pump() {
    io.poll();
    t0->progress();
    t1->progress();
  }
  template <class Pred>
  void pump_until(Pred pred) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!pred()) {
      pump();
      if (std::chrono::steady_clock::now() > deadline) FAIL("timed out");
    }
  }
};

}  // namespace

TEST_CASE("shm transport: eager records, then the chosen large path", "[shm]") {
  const bool two_copy = GENERATE(false, true);
  ShmOptions o;
  o.ring_size = 16 * 1024;
  o.eager_limit = 2048;
  o.large_path = two_copy ? LargePath::two_copy : LargePath::automatic;
  Pair pair(o, 0xabc000 + two_copy);
  INFO((two_copy ? "two copies" : "single copy"));
  CHECK(pair.t1->large_path_from(0) == (two_copy ? SingleCopy::not_permitted : SingleCopy::permitted));
  CHECK(pair.t0->capabilities().eager_limit == 2048);
  const auto h = gridmpi::p2p::Frame::sync_ack(8);

  // At the eager limit: one record, complete at once.
  auto at_limit = bytes(2048, 3);
  CHECK(pair.t0->send(1, h, at_limit, 1) == SendStatus::complete);
  // Above it: by address (in flight until read), or streamed in parts of a
  // quarter ring: 100 KiB is six rings' worth.
  auto large = bytes(100 * 1024 + 5, 4);
  SendStatus status = pair.t0->send(1, h, large, 2);
  CHECK(status == SendStatus::in_flight);
  // Nothing overtakes a streamed payload.
  if (two_copy) CHECK(pair.t0->send(1, h, at_limit, 3) == SendStatus::would_block);
  pair.sink1.place = true;
  pair.pump_until([&] { return pair.sink1.payloads.size() == 2 && pair.sink0.completed.size() == 1; });
  CHECK(pair.sink1.payloads[0] == at_limit);
  CHECK(pair.sink1.payloads[1] == large);
  CHECK(pair.sink0.completed == std::vector<std::uint64_t>{2});
}

TEST_CASE("shm transport: an idle receiver is woken through its eventfd", "[shm]") {
  ShmOptions o;
  o.arm_after = std::chrono::microseconds(0);
  Pair pair(o, 0xabd000);
  // Idle rounds: the receiver tells senders to ring.
  for (int i = 0; i < 20; ++i) pair.t1->progress();
  const auto h = gridmpi::p2p::Frame::sync_ack(4);
  CHECK(pair.t0->send(1, h, {}, 0) == SendStatus::complete);
  // The doorbell wakes an io_context that would otherwise wait 5 s.
  auto start = std::chrono::steady_clock::now();
  std::size_t handlers = pair.io.run_one_for(std::chrono::seconds(5));
  CHECK(handlers == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  pair.t1->progress();
  CHECK(pair.sink1.payloads.size() == 1);
}

TEST_CASE("shm transport: endpoints of another host or user are not reachable", "[shm]") {
  boost::asio::io_context io;
  Sink sink;
  ShmTransport t(TransportContext{0, 4, 0xabe000, &io, &sink}, ShmOptions{});
  std::string mine = t.endpoint();
  CHECK(mine.rfind("shm:" + host_key() + ":", 0) == 0);
  t.set_peer_endpoint(1, "shm:otherhost.1.2:0:1234");
  auto uid_at = mine.find(':', 4);
  t.set_peer_endpoint(2, mine.substr(0, uid_at) + ":4242:1234");
  CHECK_FALSE(t.reachable(1));
  CHECK_FALSE(t.reachable(2));
  CHECK_FALSE(t.reachable(0));
  CHECK_THROWS_AS(t.set_peer_endpoint(3, "shm:garbage"), gridmpi::MpiError);
}

namespace {

void write_line(int fd, const std::string& text) {
  std::string line = text + "\n";
  if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(90);
}

std::string read_line(int fd) {
  std::string line;
  char c;
  while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

}  // namespace

TEST_CASE("shm transport: a local peer that dies without goodbye is an error naming both ranks", "[shm]") {
  int down[2], up[2];
  REQUIRE(::pipe(down) == 0);
  REQUIRE(::pipe(up) == 0);
  const std::uint64_t cookie = 0xabf000 ^ static_cast<std::uint64_t>(::getpid());
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Rank 1: wires up, says so, then exits without a goodbye when told.
    boost::asio::io_context io;
    Sink sink;
    ShmTransport t(TransportContext{1, 2, cookie, &io, &sink}, ShmOptions{});
    write_line(up[1], t.endpoint());
    t.set_peer_endpoint(0, read_line(down[0]));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (t.large_path_from(0) == SingleCopy::unknown && std::chrono::steady_clock::now() < deadline) {
      io.poll();
      t.progress();
    }
    write_line(up[1], "ready");
    read_line(down[0]);
    _exit(0);
  }
  boost::asio::io_context io;
  Sink sink;
  std::string error;
  {
    ShmTransport t(TransportContext{0, 2, cookie, &io, &sink}, ShmOptions{});
    t.set_peer_endpoint(1, read_line(up[0]));
    write_line(down[1], t.endpoint());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (t.large_path_from(1) == SingleCopy::unknown && std::chrono::steady_clock::now() < deadline) {
      io.poll();
      t.progress();
    }
    CHECK(read_line(up[0]) == "ready");
    write_line(down[1], "exit");
    int status = 0;
    ::waitpid(child, &status, 0);
    deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (error.empty() && std::chrono::steady_clock::now() < deadline) {
      try {
        io.poll();
        t.progress();
      } catch (const gridmpi::MpiError& e) {
        error = e.what();
      }
    }
  }
  for (int fd : {down[0], down[1], up[0], up[1]}) ::close(fd);
  CHECK_THAT(error, Catch::Contains("shm: rank 0: local peer rank 1") && Catch::Contains("without saying goodbye"));
}
