// The same cases against every transport (p2p/transport.hpp): template,
// self, tcp over loopback, shm (single copy, and forced through the ring:
// shm-copy) and impi (two IMPI clients of one proc each, joined over
// loopback) between two transports in this process.
// Each case talks through a recording sink.  The transports that carry
// headers as bytes get arbitrary ones; impi translates frames to IMPI
// packets, so it gets eager frames (p2p/frame.hpp) whose tag is the marker.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.hpp"
#include "impi/transport.hpp"
#include "impi/wire.hpp"
#include "p2p/frame.hpp"
#include "p2p/self/self_transport.hpp"
#include "p2p/shm/shm_transport.hpp"
#include "p2p/tcp/tcp_transport.hpp"
#include "p2p/template/template_transport.hpp"

using namespace gridmpi::p2p;

namespace {

namespace frame = gridmpi::p2p::frame;

// A test frame: `marker` tells frames apart.  For impi a valid eager
// message carrying the payload size (its tag is the marker: IMPI carries the
// messages the request layer sends); for the others a frame of `kind` whose
// every field used by that kind is set, so that a field lost or swapped on
// the way shows.
Frame test_header(bool impi, unsigned marker, std::size_t payload, frame::Kind kind = frame::Kind::eager) {
  if (impi) return Frame::message(frame::Kind::eager, {9, 0, static_cast<std::int32_t>(marker)}, payload, 0);
  const std::uint64_t big = 0x0102030405060708ull * (marker + 1);
  switch (kind) {
    case frame::Kind::data: return Frame::data(marker, big);
    case frame::Kind::cancel_reply: return Frame::cancel_reply(marker, marker % 2 == 1);
    case frame::Kind::credit: return Frame::credit(0x80000000u + marker, -static_cast<std::int32_t>(marker), big);
    case frame::Kind::cts: {
      Frame f = Frame::cts(marker, big, big >> 8);
      f.waited_us = marker * 1000u + 7u;
      return f;
    }
    default: {
      Frame f = Frame::message(kind, {0x80000000u + marker, -static_cast<std::int32_t>(marker) - 1,
                                      static_cast<std::int32_t>(marker)},
                               payload, big);
      f.flags = static_cast<std::uint8_t>(marker & 7);
      f.basic = static_cast<std::uint16_t>(marker * 3);
      return f;
    }
  }
}

unsigned marker_of(const Frame& f) {
  if (f.is_message()) return static_cast<unsigned>(f.envelope.tag);
  return static_cast<unsigned>(f.kind == frame::Kind::data ? f.receiver_id : f.sender_id);
}

struct Received {
  int peer;
  Frame header;
  std::vector<std::byte> payload;
  bool placed;  // the payload went to the destination we named
};

// Records frames; optionally names a destination for payloads and answers
// frames marked 'Q' with a frame 'A' (send from an upcall).
struct RecordingSink : FrameSink {
  std::vector<Received> frames;
  std::vector<std::uint64_t> completed;
  bool place = false;
  bool impi = false;  // answer with frames IMPI carries (test_header)
  Transport* reply_through = nullptr;
  std::map<std::uint64_t, std::vector<std::byte>> destinations;
  std::map<std::uint64_t, Frame> headers;
  std::uint64_t next = 1;

  Placement on_frame_begin(int, const Frame& header, std::size_t payload_size) override {
    Placement p;
    p.token = next++;
    headers[p.token] = header;
    if (place && payload_size > 0) {
      auto& d = destinations[p.token];
      d.resize(payload_size);
      p.destination = d;
    }
    return p;
  }
  void on_frame_end(int peer, std::uint64_t token, std::span<const std::byte> payload) override {
    Received r{peer, headers[token], {payload.begin(), payload.end()}, false};
    auto d = destinations.find(token);
    r.placed = d != destinations.end() && payload.data() == d->second.data();
    frames.push_back(std::move(r));
    if (reply_through && marker_of(frames.back().header) == 'Q') {
      auto answer = test_header(impi, 'A', 0);
      auto status = reply_through->send(peer, answer, {}, 0);
      CHECK(status != SendStatus::would_block);
    }
  }
  void on_send_complete(int, std::uint64_t token) override { completed.push_back(token); }
};

// A sender and a receiver (the same object for self).
struct Setup {
  boost::asio::io_context io;
  RecordingSink sender_sink, receiver_sink;
  std::unique_ptr<Transport> sender, receiver;
  int sender_rank = 0, receiver_rank = 1;
  std::string kind;
  bool impi = false;

  explicit Setup(const std::string& which) : kind(which), impi(which == "impi") {
    sender_sink.impi = receiver_sink.impi = impi;
    std::uint64_t cookie = 0x5eed0000 + std::hash<std::string>{}(which) % 1000;
    TransportContext c0{0, 2, cookie, &io, &sender_sink};
    TransportContext c1{1, 2, cookie, &io, &receiver_sink};
    if (which == "template") {
      sender = std::make_unique<TemplateTransport>(c0);
      receiver = std::make_unique<TemplateTransport>(c1);
    } else if (which == "tcp") {
      tcp::TcpOptions o;
      o.network = "127.0.0.0/8";
      sender = std::make_unique<tcp::TcpTransport>(c0, o);
      receiver = std::make_unique<tcp::TcpTransport>(c1, o);
    } else if (which == "impi") {
      // Two IMPI clients of one proc each, both in this process: their
      // procs differ by the pid field (identities are compared byte-wise).
      auto listener = [](std::uint16_t* port) {
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(fd >= 0);
        sockaddr_in at{};
        at.sin_family = AF_INET;
        at.sin_addr.s_addr = htonl(0x7f000001);
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
        REQUIRE(::listen(fd, 16) == 0);
        socklen_t n = sizeof at;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&at), &n);
        *port = ntohs(at.sin_port);
        return fd;
      };
      std::uint16_t ports[2];
      int fds[2] = {listener(&ports[0]), listener(&ports[1])};
      gridmpi::impi::JobMap map;
      map.nclients = 2;
      map.client_nhosts = {1, 1};
      map.client_nprocs = {1, 1};
      map.client_first_rank = {0, 1};
      map.datalen = 256 * 1024;
      for (int r = 0; r < 2; ++r) {
        gridmpi::impi::HostEntry h;
        h.client = r;
        h.address = gridmpi::impi::host_id_from_ipv4(0x7f000001);
        h.port = ports[r];
        h.first_rank = r;
        map.hosts.push_back(h);
        map.procs.push_back(gridmpi::impi::Proc{h.address, 1000 + r});
        map.proc_host.push_back(r);
        map.proc_client.push_back(r);
      }
      for (int r = 0; r < 2; ++r) {
        auto start = std::make_shared<gridmpi::impi::Startup>();
        start->map = map;
        start->map.my_client = r;
        start->my_rank = r;
        start->listen_fd = fds[r];
        (r == 0 ? c0 : c1).impi = start;
      }
      sender = gridmpi::impi::make_transport(c0);
      receiver = gridmpi::impi::make_transport(c1);
      pump_until([&] { return sender->ready() && receiver->ready(); });
      return;
    } else if (which == "shm" || which == "shm-copy") {
      shm::ShmOptions o;
      if (which == "shm-copy") o.large_path = shm::LargePath::two_copy;
      sender = std::make_unique<shm::ShmTransport>(c0, o);
      receiver = std::make_unique<shm::ShmTransport>(c1, o);
    } else {
      // self: one transport, sender and receiver are rank 0
      TransportContext c{0, 1, cookie, &io, &receiver_sink};
      sender = std::make_unique<SelfTransport>(c);
      receiver_rank = 0;
      return;
    }
    std::string e0 = sender->endpoint(), e1 = receiver->endpoint();
    sender->set_peer_endpoint(1, e1);
    receiver->set_peer_endpoint(0, e0);
  }
  Transport& rx() { return receiver ? *receiver : *sender; }
  RecordingSink& rx_sink() { return receiver_sink; }
  RecordingSink& tx_sink() { return receiver ? sender_sink : receiver_sink; }

  void pump() {
    io.poll();
    sender->progress();
    if (receiver) receiver->progress();
  }
  template <class Pred>
  void pump_until(Pred pred) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!pred()) {
      pump();
      if (std::chrono::steady_clock::now() > deadline) FAIL(kind << ": timed out");
    }
  }
  // Sends, retrying on would_block as the request layer does.
  SendStatus send(const Frame& header, std::span<const std::byte> payload, std::uint64_t token) {
    for (;;) {
      auto s = sender->send(receiver_rank, header, payload, token);
      if (s != SendStatus::would_block) return s;
      pump();
    }
  }
};

std::vector<std::byte> bytes(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
  return v;
}

}  // namespace

TEST_CASE("transport conformance", "[transport]") {
  auto which = GENERATE(as<std::string>{}, "template", "self", "tcp", "shm", "shm-copy", "impi");
  Setup s(which);
  INFO("transport " << which);
  Capabilities caps = s.sender->capabilities();
  CHECK(caps.eager_limit > 0);
  // An eager message (fewer than eager_limit bytes) fits one fragment.
  CHECK(caps.max_fragment + 1 >= caps.eager_limit);
  CHECK(s.sender->reachable(s.receiver_rank));
  CHECK_FALSE(s.sender->reachable(5));
  // The largest payloads the cases use, within what the transport declares.
  auto large = [&](std::size_t wanted) { return std::min(wanted, caps.max_frame_payload); };

  SECTION("frame and payload arrive intact, from the right peer") {
    auto p = bytes(100, 2);
    auto h = test_header(s.impi, 1, p.size());
    s.send(h, p, 0);
    s.pump_until([&] { return s.rx_sink().frames.size() == 1; });
    const Received& r = s.rx_sink().frames[0];
    CHECK(r.peer == s.sender_rank);
    CHECK(r.header == h);
    CHECK(r.payload == p);
  }

  SECTION("every kind of frame arrives intact") {
    if (s.impi) return;  // IMPI's kinds follow its protocol: test_impi_translate.cpp
    const frame::Kind kinds[] = {frame::Kind::eager, frame::Kind::sync_eager, frame::Kind::rts,
                                 frame::Kind::cts,   frame::Kind::data,       frame::Kind::cancel_reply,
                                 frame::Kind::credit};
    std::vector<Frame> sent;
    for (unsigned i = 0; i < 14; ++i) {
      auto p = bytes(i % 3 == 0 ? 0 : 40 + i, i);
      sent.push_back(test_header(false, i, p.size(), kinds[i % 7]));
      s.send(sent.back(), p, 0);
    }
    s.pump_until([&] { return s.rx_sink().frames.size() == sent.size(); });
    for (unsigned i = 0; i < sent.size(); ++i) {
      INFO("frame " << i << ": " << frame::kind_name(sent[i].kind));
      CHECK(s.rx_sink().frames[i].header == sent[i]);
      CHECK(s.rx_sink().frames[i].payload == bytes(i % 3 == 0 ? 0 : 40 + i, i));
    }
  }

  SECTION("frames keep their order, and empty payloads work") {
    std::vector<std::vector<std::byte>> sent;
    for (unsigned i = 0; i < 300; ++i) {
      sent.push_back(bytes(i % 7 == 0 ? 0 : i * 13 % 2000, i));
      s.send(test_header(s.impi, i, sent.back().size()), sent.back(), 0);
    }
    s.pump_until([&] { return s.rx_sink().frames.size() == sent.size(); });
    for (unsigned i = 0; i < sent.size(); ++i) {
      INFO("frame " << i);
      CHECK(marker_of(s.rx_sink().frames[i].header) == i);
      CHECK(s.rx_sink().frames[i].payload == sent[i]);
    }
  }

  SECTION("a large payload lands in the destination named by the receiver") {
    s.rx_sink().place = true;
    auto p = bytes(large(3 * 1024 * 1024 + 17), 4);
    auto h = test_header(s.impi, 3, p.size(), frame::Kind::data);
    auto status = s.send(h, p, 42);
    s.pump_until([&] {
      return s.rx_sink().frames.size() == 1 &&
             (status == SendStatus::complete || !s.tx_sink().completed.empty());
    });
    CHECK(s.rx_sink().frames[0].placed);
    CHECK(s.rx_sink().frames[0].payload == p);
    if (status == SendStatus::in_flight) CHECK(s.tx_sink().completed == std::vector<std::uint64_t>{42});
  }

  SECTION("a large payload without a destination is supplied by the transport") {
    auto p = bytes(large(1024 * 1024 + 3), 6);
    auto h = test_header(s.impi, 5, p.size(), frame::Kind::rts);
    s.send(h, p, 7);
    s.pump_until([&] { return s.rx_sink().frames.size() == 1; });
    CHECK(s.rx_sink().frames[0].payload == p);
  }

  SECTION("the receiver may send from inside an upcall") {
    // The reply goes back to the sender; for self it is the same transport.
    s.rx_sink().reply_through = &s.rx();
    s.send(test_header(s.impi, 'Q', 0), {}, 0);
    s.pump_until([&] { return !s.tx_sink().frames.empty() && marker_of(s.tx_sink().frames.back().header) == 'A'; });
    CHECK(s.tx_sink().frames.back().peer == s.receiver_rank);
  }

  SECTION("a referenced payload is not reused before completion is reported") {
    auto p = bytes(large(512 * 1024), 8);
    auto copy = p;
    auto status = s.send(test_header(s.impi, 'R', p.size()), p, 99);
    if (status == SendStatus::in_flight) {
      s.pump_until([&] { return !s.tx_sink().completed.empty(); });
      CHECK(s.tx_sink().completed.back() == 99);
    }
    std::fill(p.begin(), p.end(), std::byte{0});  // reused only now
    s.pump_until([&] { return s.rx_sink().frames.size() == 1; });
    CHECK(s.rx_sink().frames[0].payload == copy);
  }
}

TEST_CASE("the template transport says would_block when the peer's inbox is full", "[transport]") {
  boost::asio::io_context io;
  RecordingSink a, b;
  TemplateOptions o;
  o.inbox_frames = 2;
  TemplateTransport t0({0, 2, 77, &io, &a}, o), t1({1, 2, 77, &io, &b}, o);
  t0.set_peer_endpoint(1, t1.endpoint());
  const Frame h = Frame::sync_ack(1);
  CHECK(t0.send(1, h, {}, 0) == SendStatus::complete);
  CHECK(t0.send(1, h, {}, 0) == SendStatus::complete);
  CHECK(t0.send(1, h, {}, 0) == SendStatus::would_block);
  t1.progress();
  CHECK(b.frames.size() == 2);
  CHECK(t0.send(1, h, {}, 0) == SendStatus::complete);
}

namespace {

// Records what FrameSink::on_frame's default makes of a whole frame.
struct PlacingSink : FrameSink {
  std::vector<std::byte> target;
  bool give_target = true;
  bool wrong_size = false;
  std::uint64_t ended_token = 0;
  std::vector<std::byte> ended_payload;
  const std::byte* ended_at = nullptr;
  Placement on_frame_begin(int, const Frame&, std::size_t size) override {
    Placement p;
    p.token = 42;
    if (give_target) {
      target.assign(wrong_size ? size + 1 : size, std::byte{0});
      p.destination = target;
    }
    return p;
  }
  void on_frame_end(int, std::uint64_t token, std::span<const std::byte> payload) override {
    ended_token = token;
    ended_payload.assign(payload.begin(), payload.end());
    ended_at = payload.data();
  }
  void on_send_complete(int, std::uint64_t) override {}
};

}  // namespace

TEST_CASE("FrameSink::on_frame: begin, the payload copied to the placement, end", "[transport]") {
  const Frame header = Frame::message(frame::Kind::eager, {1, 2, 3}, 5, 4);
  const std::byte payload[5] = {std::byte{9}, std::byte{8}, std::byte{7}, std::byte{6}, std::byte{5}};
  PlacingSink sink;
  SECTION("into the destination the sink names") {
    sink.on_frame(3, header, payload);
    CHECK(sink.ended_token == 42);
    CHECK(sink.ended_at == sink.target.data());
    CHECK(sink.target == std::vector<std::byte>(payload, payload + 5));
  }
  SECTION("handed over as it is when the sink names none") {
    sink.give_target = false;
    sink.on_frame(3, header, payload);
    CHECK(sink.ended_token == 42);
    CHECK(sink.ended_at == payload);
    CHECK(sink.ended_payload == std::vector<std::byte>(payload, payload + 5));
  }
  SECTION("a destination of the wrong size is an internal error, not an overrun") {
    sink.wrong_size = true;
    CHECK_THROWS_AS(sink.on_frame(3, header, payload), gridmpi::MpiError);
    CHECK(sink.ended_at == nullptr);
  }
}
