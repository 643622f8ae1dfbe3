// Which connection the tcp transport's frames travel on: a process answers
// on the connection its peer opened (so that one socket carries both ways),
// and two processes that connect to each other at once end up on the lower
// rank's connection without losing the order of any frame.  Two transports
// in this process, over loopback.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "p2p/tcp/tcp_transport.hpp"

using namespace gridmpi::p2p;

namespace {

struct Sink : FrameSink {
  struct Got {
    int peer;
    std::uint32_t seq;
    std::vector<std::byte> payload;
  };
  std::vector<Got> frames;
  std::map<std::uint64_t, std::uint32_t> seq_of;
  std::vector<std::uint64_t> completed;
  std::uint64_t next = 1;

  Placement on_frame_begin(int, const gridmpi::p2p::Frame& header, std::size_t) override {
    Placement p;
    p.token = next++;
    seq_of[p.token] = static_cast<std::uint32_t>(header.sender_id);
    return p;
  }
  void on_frame_end(int peer, std::uint64_t token, std::span<const std::byte> payload) override {
    frames.push_back({peer, seq_of[token], {payload.begin(), payload.end()}});
  }
  void on_send_complete(int, std::uint64_t token) override { completed.push_back(token); }
};

// Each transport has an io_context of its own, so that a test can let one
// rank run while the other stands still.
struct Pair {
  boost::asio::io_context io[2];
  Sink sink[2];
  std::unique_ptr<tcp::TcpTransport> t[2];

  explicit Pair(bool one_connection = true) {
    for (int r = 0; r < 2; ++r) {
      TransportContext c{r, 2, 0x7c9c0001, &io[r], &sink[r]};
      tcp::TcpOptions o;
      o.network = "127.0.0.0/8";
      o.one_connection = one_connection;
      t[r] = std::make_unique<tcp::TcpTransport>(c, o);
    }
    std::string e0 = t[0]->endpoint(), e1 = t[1]->endpoint();
    t[0]->set_peer_endpoint(1, e1);
    t[1]->set_peer_endpoint(0, e0);
  }
  // Goodbyes on every connection, the idle one after a move included: how
  // long both took to finish (a missing goodbye shows as the transports'
  // 10 s deadline).
  std::chrono::steady_clock::duration shut_down() {
    const auto start = std::chrono::steady_clock::now();
    for (auto& x : t) x->begin_shutdown();
    while (!(t[0]->shutdown_complete() && t[1]->shutdown_complete()) &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(20))
      pump();
    return std::chrono::steady_clock::now() - start;
  }
  void pump_rank(int r) {
    io[r].poll();
    t[r]->progress();
  }
  void pump() {
    pump_rank(0);
    pump_rank(1);
  }
  template <class Pred>
  void pump_until(Pred pred, int only = -1) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!pred()) {
      if (only >= 0)
        pump_rank(only);
      else
        pump();
      if (std::chrono::steady_clock::now() > deadline) FAIL("timed out");
    }
  }
  // Frame `seq` from `from` to the other rank, retrying on would_block.
  SendStatus send(int from, std::uint32_t seq, std::span<const std::byte> payload = {}, std::uint64_t token = 0) {
    const auto header = gridmpi::p2p::Frame::sync_ack(seq);  // the sequence number as its sender_id
    for (;;) {
      auto s = t[from]->send(1 - from, header, payload, token);
      if (s != SendStatus::would_block) return s;
      pump();
    }
  }
  // The sequence numbers rank `r` received, in order.
  std::vector<std::uint32_t> received(int r) const {
    std::vector<std::uint32_t> v;
    for (const auto& f : sink[r].frames) v.push_back(f.seq);
    return v;
  }
};

std::vector<std::uint32_t> range(std::uint32_t from, std::uint32_t to) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

}  // namespace

TEST_CASE("tcp: the answer goes back on the connection the asker opened", "[transport][tcp]") {
  auto first = GENERATE(0, 1);
  INFO("rank " << first << " sends first");
  Pair p;
  const int other = 1 - first;
  p.send(first, 1);
  p.pump_until([&] { return p.sink[other].frames.size() == 1; });
  for (std::uint32_t i = 2; i <= 20; ++i) p.send(other, i);
  p.send(first, 2);
  p.pump_until([&] { return p.sink[first].frames.size() == 19 && p.sink[other].frames.size() == 2; });
  CHECK(p.received(first) == range(2, 21));
  CHECK(p.received(other) == range(1, 3));
  CHECK_FALSE(p.t[first]->sends_on_peer_connection(other));
  CHECK(p.t[other]->sends_on_peer_connection(first));
  CHECK(p.shut_down() < std::chrono::seconds(5));
}

TEST_CASE("tcp: two processes that connect at once move to one connection, in order", "[transport][tcp]") {
  std::vector<std::byte> big(24 << 20);  // outlives the transports, which may still reference it
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::byte>(i * 7 + 3);
  Pair p;
  // Both send before either has run: each opens a connection of its own.
  // Rank 1's last frame is too large to be written at once.
  for (std::uint32_t i = 0; i < 30; ++i) {
    p.send(0, i);
    p.send(1, i);
  }
  auto status = p.send(1, 30, big, 77);
  CHECK_FALSE(p.t[0]->sends_on_peer_connection(1));
  CHECK_FALSE(p.t[1]->sends_on_peer_connection(0));

  // Rank 0 runs until its own connection has carried its frames (rank 1
  // has written nothing yet); then rank 1 runs until it has them, which
  // writes its hello and frames and fills its socket with the large one.
  auto settle = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (std::chrono::steady_clock::now() < settle) p.pump_rank(0);
  p.pump_until([&] { return p.sink[1].frames.size() == 30; }, 1);
  CHECK(p.sink[0].frames.empty());

  // Rank 1 moves at its next send: `moved` waits behind the large payload on
  // its own connection, while `switched` and the frames after it reach rank
  // 0 at once on the other.  Rank 0 must hold them until it has read the
  // large one.
  for (std::uint32_t i = 31; i < 60; ++i) {
    p.send(1, i);
    p.send(0, i);
  }
  CHECK(p.t[1]->sends_on_peer_connection(0));
  CHECK_FALSE(p.t[0]->sends_on_peer_connection(1));
  p.pump_until([&] {
    return p.sink[0].frames.size() == 60 && p.sink[1].frames.size() == 59 &&
           (status == SendStatus::complete || !p.sink[1].completed.empty());
  });
  CHECK(p.received(0) == range(0, 60));
  CHECK(p.received(1) == [] {
    auto v = range(0, 30);
    auto w = range(31, 60);
    v.insert(v.end(), w.begin(), w.end());
    return v;
  }());
  CHECK(p.sink[0].frames[30].payload == big);
  // And both ways go on after the move.
  for (std::uint32_t i = 60; i < 70; ++i) {
    p.send(0, i);
    p.send(1, i);
  }
  p.pump_until([&] { return p.sink[0].frames.size() == 70 && p.sink[1].frames.size() == 69; });
  CHECK(p.received(0) == range(0, 70));
  CHECK(p.shut_down() < std::chrono::seconds(5));
}

TEST_CASE("tcp: with one_connection false each process sends on connections it opened", "[transport][tcp]") {
  Pair p(false);
  p.send(0, 1);
  p.pump_until([&] { return p.sink[1].frames.size() == 1; });
  for (std::uint32_t i = 2; i <= 20; ++i) p.send(1, i);
  for (std::uint32_t i = 2; i <= 20; ++i) p.send(0, i);
  p.pump_until([&] { return p.sink[0].frames.size() == 19 && p.sink[1].frames.size() == 20; });
  CHECK(p.received(0) == range(2, 21));
  CHECK(p.received(1) == range(1, 21));
  CHECK_FALSE(p.t[0]->sends_on_peer_connection(1));
  CHECK_FALSE(p.t[1]->sends_on_peer_connection(0));
  CHECK(p.shut_down() < std::chrono::seconds(5));
}
