// The request engine over in-process transports: protocols, matching order,
// truncation, cancel, probe, modes, persistent requests, buffered sends and
// the pending queue.  Engines are pumped by hand (test_request_support.hpp),
// except in the thread progress mode cases at the end ("[thread]").
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <thread>

#include "core/big_lock.hpp"
#include "base/error.hpp"
#include "request/predict.hpp"
#include "request/progress_mode.hpp"
#include "request/stats.hpp"
#include "test_conf_support.hpp"
#include "test_request_support.hpp"

using namespace gridmpi;
using gridmpi::test::EngineSet;
using gridmpi::test::pattern;
using gridmpi::test::Wire;
using request::Request;
using request::SendMode;

namespace {

constexpr std::uint32_t ctx = 100;

request::EngineOptions options(std::int64_t rsize = -1) {
  request::EngineOptions o;
  o.rsize = rsize;
  o.spin = 10;
  return o;
}

std::uint64_t next_cookie() {
  static std::uint64_t c = 0xc00c1e00;
  return ++c;
}

Request* send(EngineSet& s, int from, int to, const std::vector<std::byte>& data, int tag,
              SendMode mode = SendMode::standard) {
  return s[from].isend(data.data(), static_cast<int>(data.size()), MPI_BYTE, to, tag, s.comm(from), ctx, mode);
}

Request* recv(EngineSet& s, int at, std::vector<std::byte>& into, int source, int tag) {
  return s[at].irecv(into.data(), static_cast<int>(into.size()), MPI_BYTE, source, tag, s.comm(at), ctx);
}

void finish(EngineSet& s, int at, Request* r) { s[at].release(r); }

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Rank 0 waits 300 ms of wall time for nothing: the CPU seconds it used.
double cpu_seconds_of_an_idle_wait(EngineSet& s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  double before = process_cpu_seconds();
  s[0].wait_until([&] { return std::chrono::steady_clock::now() >= until; });
  double used = process_cpu_seconds() - before;
  return used;
}

}  // namespace

TEST_CASE("messages of every size arrive intact with the right status", "[engine]") {
  auto wire = GENERATE(Wire::template_transport, Wire::tcp);
  EngineSet s(2, wire, options(), next_cookie());
  // Template: eager below 4096, fragments of 16 KiB; tcp: eager up to 128 KiB
  // (its rts prefix), rendezvous above with the first 128 KiB on the rts.
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{4096},
                           std::size_t{70000}, std::size_t{131073}, std::size_t{5 << 20}}) {
    INFO("size " << size);
    auto out = pattern(size, static_cast<unsigned>(size));
    std::vector<std::byte> in(size + 10, std::byte{0xee});
    Request* rr = recv(s, 1, in, 0, 7);
    Request* sr = send(s, 0, 1, out, 7);
    s.pump_until([&] { return rr->complete && sr->complete; });
    CHECK(rr->error == MPI_SUCCESS);
    CHECK(rr->status.MPI_SOURCE == 0);
    CHECK(rr->status.MPI_TAG == 7);
    CHECK(rr->status.gridmpi_count == static_cast<long long>(size));
    CHECK(std::equal(out.begin(), out.end(), in.begin()));
    CHECK(in[size] == std::byte{0xee});  // nothing written past the message
    finish(s, 1, rr);
    finish(s, 0, sr);
  }
}

TEST_CASE("the switch point follows the transport unless rsize overrides it", "[engine]") {
  EngineSet a(2, Wire::template_transport, options(-1), next_cookie());
  CHECK(a.impl(0).rendezvous_threshold(1) == 4096);
  CHECK(a.impl(0).transport_name(1) == "template");
  CHECK(a.impl(0).transport_name(0) == "self");
  EngineSet b(2, Wire::template_transport, options(0), next_cookie());
  CHECK(b.impl(0).rendezvous_threshold(1) == std::numeric_limits<std::size_t>::max());
  EngineSet c(2, Wire::template_transport, options(100), next_cookie());
  CHECK(c.impl(0).rendezvous_threshold(1) == 100);
  // tcp's rts carries 128 KiB: a message it would carry whole goes eagerly,
  // unless rsize says otherwise.
  EngineSet d(2, Wire::tcp, options(-1), next_cookie());
  CHECK(d.impl(0).rendezvous_threshold(1) == 128 * 1024 + 1);
  EngineSet e(2, Wire::tcp, options(65536), next_cookie());
  CHECK(e.impl(0).rendezvous_threshold(1) == 65536);
}

TEST_CASE("rsize 0 sends eagerly up to the transport's frame limit, by rendezvous above", "[engine]") {
  EngineSet s(2, Wire::template_transport, options(0), next_cookie());
  auto below = pattern(1 << 20, 1), above = pattern((1 << 20) + 1, 2);
  Request* a = send(s, 0, 1, below, 1);
  Request* b = send(s, 0, 1, above, 1);
  s.pump_rounds(200);
  CHECK(a->complete);        // eager: no receive needed
  CHECK_FALSE(b->complete);  // too big for one frame: waits for its receive
  std::vector<std::byte> in1(below.size()), in2(above.size());
  Request* r1 = recv(s, 1, in1, 0, 1);
  Request* r2 = recv(s, 1, in2, 0, 1);
  s.pump_until([&] { return b->complete && r1->complete && r2->complete; });
  CHECK(in1 == below);
  CHECK(in2 == above);
  for (auto* r : {a, b}) finish(s, 0, r);
  for (auto* r : {r1, r2}) finish(s, 1, r);
}

TEST_CASE("messages between a pair are not overtaken, whatever their protocol", "[engine]") {
  auto wire = GENERATE(Wire::template_transport, Wire::tcp);
  EngineSet s(2, wire, options(1000), next_cookie());
  // Alternate eager and rendezvous sizes with one tag: arrival order = send order.
  std::vector<std::vector<std::byte>> out;
  std::vector<Request*> sends;
  for (unsigned i = 0; i < 40; ++i) {
    out.push_back(pattern(i % 2 ? 3000 + i : 10 + i, i));
    sends.push_back(send(s, 0, 1, out.back(), 5));
  }
  s.pump_rounds(50);  // let them all become unexpected (eager) or rts
  std::vector<std::vector<std::byte>> in(out.size(), std::vector<std::byte>(4000));
  std::vector<Request*> recvs;
  for (auto& b : in) recvs.push_back(recv(s, 1, b, MPI_ANY_SOURCE, MPI_ANY_TAG));
  s.pump_until([&] {
    for (auto* r : recvs)
      if (!r->complete) return false;
    for (auto* r : sends)
      if (!r->complete) return false;
    return true;
  });
  for (std::size_t i = 0; i < out.size(); ++i) {
    INFO("message " << i);
    REQUIRE(recvs[i]->status.gridmpi_count == static_cast<long long>(out[i].size()));
    CHECK(std::equal(out[i].begin(), out[i].end(), in[i].begin()));
    finish(s, 1, recvs[i]);
    finish(s, 0, sends[i]);
  }
}

TEST_CASE("the earliest-posted matching receive wins across sources", "[engine]") {
  EngineSet s(3, Wire::template_transport, options(), next_cookie());
  std::vector<std::byte> any(8), from2(8), from1(8);
  Request* r_any = recv(s, 0, any, MPI_ANY_SOURCE, 1);
  Request* r_2 = recv(s, 0, from2, 2, 1);
  Request* r_1 = recv(s, 0, from1, 1, MPI_ANY_TAG);
  auto m2 = pattern(8, 2), m1 = pattern(8, 1);
  Request* s2 = send(s, 2, 0, m2, 1);
  s.pump_until([&] { return r_any->complete; });
  CHECK(r_any->status.MPI_SOURCE == 2);  // the wildcard was posted first
  CHECK_FALSE(r_2->complete);
  Request* s1 = send(s, 1, 0, m1, 1);
  s.pump_until([&] { return r_1->complete; });
  CHECK(r_1->status.MPI_SOURCE == 1);
  CHECK(from1 == m1);
  CHECK(s[0].cancel(r_2));
  CHECK(r_2->status.gridmpi_cancelled == 1);
  for (auto* r : {r_any, r_2, r_1}) finish(s, 0, r);
  s.pump_until([&] { return s1->complete && s2->complete; });
  finish(s, 1, s1);
  finish(s, 2, s2);
}

TEST_CASE("truncation reports MPI_ERR_TRUNCATE, keeps the prefix and consumes the message", "[engine]") {
  auto size = GENERATE(std::size_t{100}, std::size_t{50000});  // eager and rendezvous
  EngineSet s(2, Wire::template_transport, options(), next_cookie());
  auto out = pattern(size, 9);
  auto next = pattern(16, 10);
  Request* s1 = send(s, 0, 1, out, 3);
  Request* s2 = send(s, 0, 1, next, 3);
  std::vector<std::byte> small(40, std::byte{0xee}), second(16);
  Request* r1 = recv(s, 1, small, 0, 3);
  Request* r2 = recv(s, 1, second, 0, 3);
  s.pump_until([&] { return r1->complete && r2->complete && s1->complete && s2->complete; });
  CHECK(r1->error == MPI_ERR_TRUNCATE);
  CHECK(r1->status.MPI_ERROR == MPI_ERR_TRUNCATE);
  CHECK(r1->status.gridmpi_count == 40);
  CHECK(std::equal(small.begin(), small.end(), out.begin()));
  CHECK(s1->error == MPI_SUCCESS);  // the sender does not see the receiver's truncation
  // The truncated message was consumed: the next receive gets the next message.
  CHECK(r2->error == MPI_SUCCESS);
  CHECK(second == next);
  for (auto* r : {r1, r2}) finish(s, 1, r);
  for (auto* r : {s1, s2}) finish(s, 0, r);
}

TEST_CASE("a synchronous send completes only once the receive has matched", "[engine]") {
  auto size = GENERATE(std::size_t{10}, std::size_t{20000});
  EngineSet s(2, Wire::template_transport, options(), next_cookie());
  auto out = pattern(size, 4);
  Request* sr = send(s, 0, 1, out, 2, SendMode::synchronous);
  s.pump_rounds(100);
  CHECK_FALSE(sr->complete);
  std::vector<std::byte> in(size);
  Request* rr = recv(s, 1, in, 0, 2);
  s.pump_until([&] { return sr->complete && rr->complete; });
  CHECK(in == out);
  finish(s, 0, sr);
  finish(s, 1, rr);
}

TEST_CASE("a standard eager send completes without a receive; a rendezvous one waits", "[engine]") {
  EngineSet s(2, Wire::template_transport, options(), next_cookie());
  auto small = pattern(100, 1), big = pattern(100000, 2);
  Request* a = send(s, 0, 1, small, 1);
  Request* b = send(s, 0, 1, big, 1);
  s.pump_rounds(100);
  CHECK(a->complete);
  CHECK_FALSE(b->complete);
  std::vector<std::byte> in1(100), in2(100000);
  Request* r1 = recv(s, 1, in1, 0, 1);
  Request* r2 = recv(s, 1, in2, 0, 1);
  s.pump_until([&] { return b->complete && r1->complete && r2->complete; });
  CHECK(in1 == small);
  CHECK(in2 == big);
  for (auto* r : {a, b}) finish(s, 0, r);
  for (auto* r : {r1, r2}) finish(s, 1, r);
}

TEST_CASE("cancel removes an unmatched receive and fails on a matched one", "[engine]") {
  EngineSet s(2, Wire::template_transport, options(), next_cookie());
  std::vector<std::byte> in(10);
  Request* r = recv(s, 1, in, 0, 1);
  CHECK(s[1].cancel(r));
  CHECK(r->complete);
  CHECK(r->cancelled);
  CHECK(r->status.gridmpi_cancelled == 1);
  finish(s, 1, r);
  // The cancelled receive takes no message: a later one does.
  auto out = pattern(10, 3);
  Request* sr = send(s, 0, 1, out, 1);
  Request* r2 = recv(s, 1, in, 0, 1);
  s.pump_until([&] { return r2->complete; });
  CHECK_FALSE(s[1].cancel(r2));
  CHECK(r2->status.gridmpi_cancelled == 0);
  CHECK(in == out);
  finish(s, 1, r2);
  finish(s, 0, sr);
}

TEST_CASE("cancel of an unmatched send removes it at the receiver, whatever the protocol", "[engine][cancel]") {
  auto wire = GENERATE(Wire::template_transport, Wire::tcp);
  EngineSet s(2, wire, options(1000), next_cookie());
  std::vector<std::byte> buffer(3 * (5000 + MPI_BSEND_OVERHEAD));
  s[0].buffer_attach(buffer.data(), static_cast<int>(buffer.size()));
  for (SendMode mode : {SendMode::standard, SendMode::synchronous, SendMode::buffered}) {
    for (std::size_t size : {std::size_t{10}, std::size_t{5000}}) {  // eager, rendezvous
      INFO("mode " << static_cast<int>(mode) << ", size " << size);
      auto first = pattern(size, 1), second = pattern(size, 2);
      Request* sr = send(s, 0, 1, first, 4, mode);
      s.pump_rounds(20);  // the message waits in the receiver's unexpected queue
      CHECK(s.impl(1).queues().unexpected_count() == 1);
      CHECK_FALSE(s[0].cancel(sr));  // the answer comes later
      CHECK_FALSE(sr->complete);
      s.pump_until([&] { return sr->complete; });
      CHECK(sr->cancelled);
      CHECK(sr->status.gridmpi_cancelled == 1);
      CHECK(s.impl(1).queues().unexpected_count() == 0);
      finish(s, 0, sr);
      // The next message with the same envelope is the one received.
      Request* sr2 = send(s, 0, 1, second, 4);
      std::vector<std::byte> in(size);
      Request* rr = recv(s, 1, in, 0, 4);
      s.pump_until([&] { return rr->complete && sr2->complete; });
      CHECK(in == second);
      finish(s, 1, rr);
      finish(s, 0, sr2);
    }
  }
  auto [attached, attached_size] = s[0].buffer_detach();  // every block was given back
  CHECK(attached == buffer.data());
}

TEST_CASE("cancel of a matched send fails and the message is delivered", "[engine][cancel]") {
  EngineSet s(2, Wire::template_transport, options(1000), next_cookie());
  for (std::size_t size : {std::size_t{10}, std::size_t{5000}}) {
    auto out = pattern(size, 3);
    std::vector<std::byte> in(size);
    Request* rr = recv(s, 1, in, 0, 9);
    Request* sr = send(s, 0, 1, out, 9);
    s.pump_until([&] { return rr->complete; });
    CHECK_FALSE(s[0].cancel(sr));
    s.pump_until([&] { return sr->complete; });
    CHECK_FALSE(sr->cancelled);
    CHECK(sr->status.gridmpi_cancelled == 0);
    CHECK(in == out);
    finish(s, 1, rr);
    finish(s, 0, sr);
  }
  // A message taken by a matched probe counts as matched.
  auto out = pattern(10, 4);
  Request* sr = send(s, 0, 1, out, 11);
  MPI_Message message = MPI_MESSAGE_NULL;
  s.pump_until([&] { return s[1].improbe(0, 11, s.comm(1), ctx, false, &message, nullptr); });
  s[0].cancel(sr);
  s.pump_until([&] { return sr->complete; });
  CHECK_FALSE(sr->cancelled);
  std::vector<std::byte> in(10);
  Request* rr = s[1].imrecv(in.data(), 10, MPI_BYTE, message);
  s.pump_until([&] { return rr->complete; });
  CHECK(in == out);
  finish(s, 1, rr);
  finish(s, 0, sr);
}

TEST_CASE("probe sees an arrived message without receiving it", "[engine]") {
  EngineSet s(2, Wire::template_transport, options(), next_cookie());
  MPI_Status st{};
  CHECK_FALSE(s[1].probe(MPI_ANY_SOURCE, MPI_ANY_TAG, s.comm(1), ctx, false, &st));
  auto big = pattern(30000, 5);  // rendezvous: only the rts has arrived
  Request* sr = send(s, 0, 1, big, 12);
  s.pump_until([&] { return s[1].probe(0, 12, s.comm(1), ctx, false, &st); });
  CHECK(st.MPI_SOURCE == 0);
  CHECK(st.MPI_TAG == 12);
  CHECK(st.gridmpi_count == 30000);
  CHECK_FALSE(s[1].probe(0, 13, s.comm(1), ctx, false, &st));
  // A matched probe takes it out of the queue; the message handle receives it.
  MPI_Message message = MPI_MESSAGE_NULL;
  REQUIRE(s[1].improbe(0, 12, s.comm(1), ctx, false, &message, &st));
  CHECK(message != MPI_MESSAGE_NULL);
  CHECK(message != MPI_MESSAGE_NO_PROC);
  CHECK_FALSE(s[1].probe(0, 12, s.comm(1), ctx, false, &st));
  std::vector<std::byte> in(30000);
  Request* rr = s[1].imrecv(in.data(), 30000, MPI_BYTE, message);
  s.pump_until([&] { return rr->complete && sr->complete; });
  CHECK(in == big);
  CHECK(rr->status.MPI_TAG == 12);
  finish(s, 1, rr);
  finish(s, 0, sr);
}

TEST_CASE("MPI_PROC_NULL completes at once with the standard's status", "[engine]") {
  EngineSet s(2, Wire::template_transport, options(), next_cookie());
  std::vector<std::byte> buf(4);
  Request* r = recv(s, 0, buf, MPI_PROC_NULL, 3);
  CHECK(r->complete);
  CHECK(r->status.MPI_SOURCE == MPI_PROC_NULL);
  CHECK(r->status.MPI_TAG == MPI_ANY_TAG);
  CHECK(r->status.gridmpi_count == 0);
  finish(s, 0, r);
  Request* w = send(s, 0, MPI_PROC_NULL, buf, 3);
  CHECK(w->complete);
  finish(s, 0, w);
}

TEST_CASE("messages to oneself work in every protocol", "[engine]") {
  EngineSet s(1, Wire::template_transport, options(), next_cookie());
  // A small standard send to self completes before its receive is posted.
  auto small = pattern(64, 1);
  Request* sr = send(s, 0, 0, small, 1);
  s.pump_rounds(2);
  CHECK(sr->complete);
  std::vector<std::byte> in(64);
  Request* rr = recv(s, 0, in, 0, 1);
  s.pump_until([&] { return rr->complete; });
  CHECK(in == small);
  finish(s, 0, sr);
  finish(s, 0, rr);
  // Large: receive posted first (Sendrecv), one copy straight into the buffer.
  auto big = pattern(4 << 20, 2);
  std::vector<std::byte> in2(big.size());
  Request* r2 = recv(s, 0, in2, 0, 2);
  Request* s2 = send(s, 0, 0, big, 2, SendMode::synchronous);
  s[0].wait_until([&] { return r2->complete && s2->complete; });
  CHECK(in2 == big);
  finish(s, 0, r2);
  finish(s, 0, s2);
}

TEST_CASE("persistent requests run again at every start", "[engine]") {
  EngineSet s(2, Wire::template_transport, options(), next_cookie());
  std::vector<std::byte> out(5000), in(5000);
  Request* ps = s[0].send_init(out.data(), 5000, MPI_BYTE, 1, 4, s.comm(0), ctx, SendMode::standard);
  Request* pr = s[1].recv_init(in.data(), 5000, MPI_BYTE, 0, 4, s.comm(1), ctx);
  CHECK(ps->persistent);
  CHECK_FALSE(ps->active);
  for (unsigned round = 0; round < 3; ++round) {
    auto fresh = pattern(5000, round);
    std::copy(fresh.begin(), fresh.end(), out.begin());  // same memory: the request holds its address
    s[1].start(pr);
    s[0].start(ps);
    CHECK_THROWS_AS(s[0].start(ps), MpiError);  // already active
    s.pump_until([&] { return ps->complete && pr->complete; });
    CHECK(in == out);
    ps->active = pr->active = false;  // what MPI_Wait does
  }
  finish(s, 0, ps);
  finish(s, 1, pr);
}

TEST_CASE("buffered sends complete at once and are accounted in the attached buffer", "[engine]") {
  EngineSet s(2, Wire::template_transport, options(), next_cookie());
  auto out = pattern(20000, 6);  // rendezvous: stays in the buffer until received
  try {
    send(s, 0, 1, out, 1, SendMode::buffered);
    FAIL("buffered send without a buffer accepted");
  } catch (const MpiError& e) {
    CHECK(e.error_class() == MPI_ERR_BUFFER);
  }
  std::vector<std::byte> buffer(20000 + MPI_BSEND_OVERHEAD);
  s[0].buffer_attach(buffer.data(), static_cast<int>(buffer.size()));
  Request* b1 = send(s, 0, 1, out, 1, SendMode::buffered);
  CHECK(b1->complete);
  std::fill(out.begin(), out.end(), std::byte{0});  // the user's buffer is free at once
  try {
    send(s, 0, 1, out, 1, SendMode::buffered);
    FAIL("second buffered send fit in a full buffer");
  } catch (const MpiError& e) {
    CHECK(e.error_class() == MPI_ERR_BUFFER);
  }
  std::vector<std::byte> in(20000);
  Request* rr = recv(s, 1, in, 0, 1);
  s.pump_until([&] { return rr->complete; });
  CHECK(in == pattern(20000, 6));
  s.pump_rounds(10);
  auto [address, size] = s[0].buffer_detach();  // nothing left in it: returns at once
  CHECK(address == buffer.data());
  CHECK(size == static_cast<int>(buffer.size()));
  finish(s, 0, b1);
  finish(s, 1, rr);
}

TEST_CASE("frames refused with would_block wait in order in the engine", "[engine]") {
  p2p::TemplateOptions tiny;
  tiny.inbox_frames = 2;
  EngineSet s(2, Wire::template_transport, options(), next_cookie(), tiny);
  std::vector<std::vector<std::byte>> out;
  std::vector<Request*> sends;
  for (unsigned i = 0; i < 30; ++i) {
    out.push_back(pattern(100 + i, i));
    sends.push_back(send(s, 0, 1, out.back(), 8));
  }
  CHECK(s.impl(0).pending_frames() > 0);
  CHECK_FALSE(sends.back()->complete);  // its frame is still ours
  std::vector<std::vector<std::byte>> in(30, std::vector<std::byte>(200));
  std::vector<Request*> recvs;
  for (auto& b : in) recvs.push_back(recv(s, 1, b, 0, 8));
  s.pump_until([&] {
    for (auto* r : recvs)
      if (!r->complete) return false;
    return s.impl(0).pending_frames() == 0;
  });
  for (std::size_t i = 0; i < out.size(); ++i) {
    CHECK(std::equal(out[i].begin(), out[i].end(), in[i].begin()));
    CHECK(sends[i]->complete);
    finish(s, 1, recvs[i]);
    finish(s, 0, sends[i]);
  }
}

TEST_CASE("a freed active request completes in the background and is released", "[engine]") {
  EngineSet s(2, Wire::template_transport, options(), next_cookie());
  auto out = pattern(50000, 1);
  Request* sr = send(s, 0, 1, out, 1);
  MPI_Request handle = sr->handle;
  sr->freed = true;  // MPI_Request_free
  std::vector<std::byte> in(50000);
  Request* rr = recv(s, 1, in, 0, 1);
  s.pump_until([&] { return rr->complete && request::find_request(handle) == nullptr; });
  CHECK(in == out);
  finish(s, 1, rr);
}

TEST_CASE("adopted requests are polled by progress", "[engine]") {
  EngineSet s(1, Wire::template_transport, options(), next_cookie());
  int polls = 0;
  auto r = std::make_unique<Request>();
  r->kind = request::RequestKind::collective;
  r->poll = [&polls] { return ++polls == 3; };
  Request* adopted = s[0].adopt(std::move(r));
  CHECK(request::find_request(adopted->handle) == adopted);
  s[0].wait_until([&] { return adopted->complete; });
  CHECK(polls == 3);
  finish(s, 0, adopted);
}

TEST_CASE("a waiting engine sleeps after its spin instead of burning the core", "[engine]") {
  request::EngineOptions o = options();
  o.spin = 50;  // microseconds
  EngineSet s(2, Wire::tcp, o, next_cookie());
  CHECK(cpu_seconds_of_an_idle_wait(s) < 0.1);
}

TEST_CASE("with a transport that has no fd, a waiting engine backs off instead of spinning", "[engine]") {
  // The template transport says can_block = false: nothing wakes a sleep in
  // the io_context, so the wait keeps polling, with sched_yield and then
  // sleeps between polls (20 us growing to 500 us) after its spin.
  EngineSet s(2, Wire::template_transport, options(), next_cookie());
  CHECK(cpu_seconds_of_an_idle_wait(s) < 0.1);
}

TEST_CASE("progress.yield: auto yields only when the host has more ranks than cores", "[engine]") {
  conf::testing::ScopedEnvironment env;
  env.unset("GRIDMPI_PROGRESS_YIELD");
  env.unset("_YAMPI_LOCAL_NPROCS");
  env.unset("_YAMPI_LOCAL_CORES");
  CHECK_FALSE(request::yield_when_idle_setting());  // not started by mpirun: no count
  env.set("_YAMPI_LOCAL_NPROCS", "1");
  CHECK_FALSE(request::yield_when_idle_setting());
  env.set("_YAMPI_LOCAL_NPROCS", "100000");
  CHECK(request::yield_when_idle_setting());
  // A rank bound to one core by a vendor's launcher, on a host with enough.
  env.set("_YAMPI_LOCAL_CORES", "200000");
  CHECK_FALSE(request::yield_when_idle_setting());
  env.unset("_YAMPI_LOCAL_CORES");
  env.set("GRIDMPI_PROGRESS_YIELD", "off");
  CHECK_FALSE(request::yield_when_idle_setting());
  env.set("_YAMPI_LOCAL_NPROCS", "1");
  env.set("GRIDMPI_PROGRESS_YIELD", "on");
  CHECK(request::yield_when_idle_setting());
  env.set("GRIDMPI_PROGRESS_YIELD", "sometimes");
  CHECK_THROWS_WITH(request::yield_when_idle_setting(), Catch::Contains("progress.yield"));
}

TEST_CASE("job_crowded: every process on mpirun's host, more than two per core", "[engine]") {
  conf::testing::ScopedEnvironment env;
  env.unset("_YAMPI_NPROCS");
  env.unset("_YAMPI_LOCAL_NPROCS");
  env.unset("_YAMPI_LOCAL_CORES");
  CHECK_FALSE(request::job_crowded());  // not started by mpirun
  env.set("_YAMPI_NPROCS", "8");
  env.set("_YAMPI_LOCAL_NPROCS", "8");
  CHECK_FALSE(request::job_crowded());  // mpirun did not say how many cores
  env.set("_YAMPI_LOCAL_CORES", "2");
  CHECK(request::job_crowded());
  env.set("_YAMPI_LOCAL_CORES", "4");
  CHECK_FALSE(request::job_crowded());  // two per core: not crowded
  env.set("_YAMPI_LOCAL_CORES", "3");
  CHECK(request::job_crowded());
  // Spread over hosts: the processes on other hosts see other counts, so
  // nobody may call the job crowded.
  env.set("_YAMPI_LOCAL_CORES", "1");
  env.set("_YAMPI_LOCAL_NPROCS", "4");
  CHECK_FALSE(request::job_crowded());
  env.set("_YAMPI_LOCAL_NPROCS", "8x");
  CHECK_FALSE(request::job_crowded());
}

// ---- the thread progress mode ------------------------------------------------
// Each engine runs its own progress thread; the test thread plays the
// application: it holds the big lock around engine calls (as every MPI call
// does) and never pumps the engines.

namespace {

request::EngineOptions thread_options(std::int64_t rsize = -1) {
  request::EngineOptions o = options(rsize);
  o.progress = p2p::ProgressMode::thread;
  return o;
}

// What an MPI entry point holds for its whole call.
struct Call {
  Call() { core::big_lock().lock(); }
  ~Call() { core::big_lock().unlock(); }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
};

}  // namespace

TEST_CASE("a yielding engine still sleeps after its spin", "[engine]") {
  request::EngineOptions o = options();
  o.spin = 50;
  o.yield = true;
  EngineSet s(2, Wire::tcp, o, next_cookie());
  CHECK(cpu_seconds_of_an_idle_wait(s) < 0.1);
}

TEST_CASE("thread mode: a rendezvous message completes while only the receiver waits", "[engine][thread]") {
  EngineSet s(2, Wire::tcp, thread_options(), next_cookie());
  CHECK(s.impl(0).progress_thread_running());
  CHECK(s.impl(1).progress_thread_running());
  CHECK(core::big_lock().enabled());
  // 5 MiB goes by rendezvous: the sender's clear-to-send and data frames are
  // handled by engine 0's progress thread, which nobody here pumps.
  auto out = pattern(5 << 20, 3);
  std::vector<std::byte> in(out.size());
  Call call;
  Request* sr = send(s, 0, 1, out, 4);
  Request* rr = recv(s, 1, in, 0, 4);
  s[1].wait_until([&] { return rr->complete; });
  CHECK(in == out);
  CHECK(rr->status.MPI_TAG == 4);
  s[0].wait_until([&] { return sr->complete; });
  finish(s, 0, sr);
  finish(s, 1, rr);
}

TEST_CASE("thread mode: a waiter sleeps, and wakes when another thread completes its request",
          "[engine][thread]") {
  EngineSet s(1, Wire::tcp, thread_options(), next_cookie());
  Request* r = nullptr;
  {
    Call call;
    auto owned = std::make_unique<Request>();
    owned->kind = request::RequestKind::generalized;  // completed by "MPI_Grequest_complete"
    r = s[0].adopt(std::move(owned));
  }
  using clock = std::chrono::steady_clock;
  // The safety net wakes a sleeper every 50 ms; completing 60 ms into the
  // wait, only the release hook gets the waiter out within 30 ms.
  clock::time_point completed_at;
  std::thread completer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    Call call;
    r->complete = true;
    completed_at = clock::now();
  });
  double cpu_before = process_cpu_seconds();
  {
    Call call;
    s[0].wait_until([&] { return r->complete; });
  }
  auto woke_at = clock::now();
  double cpu_used = process_cpu_seconds() - cpu_before;
  completer.join();
  auto late = std::chrono::duration_cast<std::chrono::milliseconds>(woke_at - completed_at);
  INFO("woke " << late.count() << " ms after the completion, " << cpu_used << " s of CPU");
  CHECK(late.count() < 30);
  CHECK(cpu_used < 0.03);  // 60 ms of sleeping, not of spinning
  Call call;
  finish(s, 0, r);
}

TEST_CASE("thread mode: a blocked wait uses almost no CPU", "[engine][thread]") {
  EngineSet s(2, Wire::tcp, thread_options(), next_cookie());
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  double before = process_cpu_seconds();
  {
    Call call;
    // Nothing completes it but time: only the safety net looks (6 times).
    s[0].wait_until([&] { return std::chrono::steady_clock::now() >= until; });
  }
  double used = process_cpu_seconds() - before;
  CHECK(used < 0.03);
}

TEST_CASE("thread mode: a message to oneself arrives while its receiver sleeps", "[engine][thread]") {
  EngineSet s(1, Wire::tcp, thread_options(), next_cookie());
  auto out = pattern(100, 5);
  std::vector<std::byte> in(out.size());
  Request* rr = nullptr;
  {
    Call call;
    rr = recv(s, 0, in, 0, 9);
  }
  // Another thread sends while this one sleeps in wait_until: the self
  // transport's posted delivery, run by the progress thread, completes it.
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Call call;
    s[0].release(send(s, 0, 0, out, 9));
  });
  {
    Call call;
    s[0].wait_until([&] { return rr->complete; });
    CHECK(in == out);
    finish(s, 0, rr);
  }
  sender.join();
}

TEST_CASE("thread mode: adopted requests progress while the application only sleeps", "[engine][thread]") {
  EngineSet s(2, Wire::tcp, thread_options(), next_cookie());
  auto out = pattern(64, 7);
  std::vector<std::byte> in(out.size());
  Request* adopted = nullptr;
  Request* rr = nullptr;
  {
    Call call;
    rr = recv(s, 1, in, 0, 11);
    // A "non-blocking collective": done when its receive is.
    auto owned = std::make_unique<Request>();
    owned->kind = request::RequestKind::collective;
    owned->poll = [rr] { return rr->complete; };
    adopted = s[1].adopt(std::move(owned));
    s[0].release(send(s, 0, 1, out, 11));
  }
  // No engine call from here: engine 1's progress thread receives the
  // frame and, finishing that round, polls the adopted request.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool done = false;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    Call call;
    done = adopted->complete;
  }
  CHECK(done);
  Call call;
  CHECK(in == out);
  finish(s, 1, adopted);
  finish(s, 1, rr);
}

TEST_CASE("thread mode: shutdown stops the progress thread", "[engine][thread]") {
  EngineSet s(2, Wire::tcp, thread_options(), next_cookie());
  std::thread other([&] {
    Call call;
    s[1].shutdown();
  });
  {
    Call call;
    s[0].shutdown();
    CHECK_FALSE(s.impl(0).progress_thread_running());
  }
  other.join();
  CHECK_FALSE(s.impl(1).progress_thread_running());
}

TEST_CASE("big lock wait releases every level and comes back at the same depth", "[engine][thread][big_lock]") {
  core::BigLock lock;
  std::condition_variable cv;
  bool ready = false;
  bool other_entered = false;
  lock.lock();
  lock.lock();
  std::thread other([&] {
    lock.lock();  // only possible while the owner waits
    other_entered = true;
    ready = true;
    cv.notify_one();
    lock.unlock();
  });
  lock.wait(cv, std::chrono::seconds(10), ready);
  CHECK(ready);
  CHECK(other_entered);
  CHECK(lock.depth() == 2);
  lock.unlock();
  CHECK(lock.depth() == 1);
  lock.unlock();
  CHECK(lock.depth() == 0);
  other.join();
}

// Receive-message prediction's credit (request/predict.hpp, p2p/frame.hpp):
// a long message the receiver predicted comes eagerly, so its send
// completes before any receive is posted.  The counters are the process's
// (both engines), read as differences.
namespace {

// credit_rate: a credit for any size the limit allows, unless given (the
// round trips of engines pumped by hand say nothing of a real link's).
request::EngineOptions predict_options(request::predict::Method method, std::uint64_t credit_limit = 16 << 20,
                                       double credit_rate = 1e18) {
  request::EngineOptions o = options();
  o.predict = method;
  o.credit_limit = credit_limit;
  o.credit_rate = credit_rate;
  return o;
}

// One round of the stream: rank 0 sends `size` bytes (tag), rank 1 receives
// them into a buffer of `room` bytes; when `send_first`, the send is given
// 200 rounds before the receive is posted and whether it completed alone is
// returned.  The data is checked; the receive's error is in *error.
bool stream_round(EngineSet& s, std::size_t size, int tag, unsigned seed, bool send_first, int* error = nullptr,
                  std::size_t room = 0) {
  auto out = pattern(size, seed);
  std::vector<std::byte> in(room ? room : size);
  Request* rr = nullptr;
  if (!send_first) rr = recv(s, 1, in, 0, tag);
  Request* sr = send(s, 0, 1, out, tag);
  bool alone = false;
  if (send_first) {
    s.pump_rounds(200);
    alone = sr->complete;
    rr = recv(s, 1, in, 0, tag);
  }
  s.pump_until([&] { return rr->complete && sr->complete; });
  const std::size_t got = std::min(size, in.size());
  CHECK(std::equal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(got), in.begin()));
  if (error) *error = rr->error;
  else CHECK(rr->error == MPI_SUCCESS);
  finish(s, 1, rr);
  finish(s, 0, sr);
  return alone;
}

std::uint64_t credits_used() { return request::stats::predict_credits_used.load(); }
std::uint64_t credits_given() { return request::stats::predict_credits.load(); }

}  // namespace

TEST_CASE("a predicted long message comes eagerly on a credit", "[engine][predict]") {
  auto method = GENERATE(request::predict::Method::last, request::predict::Method::markov,
                         request::predict::Method::periodic);
  INFO("method " << request::predict::method_name(method));
  EngineSet s(2, Wire::tcp, predict_options(method), next_cookie());
  constexpr std::size_t long_size = 256 * 1024;  // above tcp's switch point (128 KiB + 1)
  const std::uint64_t used = credits_used();
  // The stream becomes predictable (periodic: after 8 + 1 headers).
  for (unsigned i = 0; i < 12; ++i) stream_round(s, long_size, 5, i, false);
  CHECK(credits_used() > used);
  // Now a send completes with no receive posted, and the data is intact.
  const std::uint64_t before = credits_used();
  CHECK(stream_round(s, long_size, 5, 100, true));
  CHECK(credits_used() == before + 1);
  // A smaller one of the same tag takes the credit too.
  CHECK(stream_round(s, long_size - 1000, 5, 101, true));
}

TEST_CASE("a credit is not used by a larger message or another tag, which wait for their receive",
          "[engine][predict]") {
  EngineSet s(2, Wire::tcp, predict_options(request::predict::Method::last), next_cookie());
  constexpr std::size_t long_size = 256 * 1024;
  for (unsigned i = 0; i < 3; ++i) stream_round(s, long_size, 5, i, false);
  const std::uint64_t before = credits_used();
  CHECK_FALSE(stream_round(s, 2 * long_size, 5, 10, true));  // larger than predicted
  CHECK(credits_used() == before);
  for (unsigned i = 0; i < 3; ++i) stream_round(s, long_size, 5, 20 + i, false);
  CHECK(credits_used() > before);  // the stream predictable again
  const std::uint64_t again = credits_used();
  CHECK_FALSE(stream_round(s, long_size, 6, 30, true));  // another tag
  CHECK(credits_used() == again);
}

TEST_CASE("a credited message into a receive too small is truncated, and the stream goes on", "[engine][predict]") {
  EngineSet s(2, Wire::tcp, predict_options(request::predict::Method::last), next_cookie());
  constexpr std::size_t long_size = 256 * 1024;
  for (unsigned i = 0; i < 3; ++i) stream_round(s, long_size, 5, i, false);
  int error = MPI_SUCCESS;
  const std::uint64_t before = credits_used();
  CHECK(stream_round(s, long_size, 5, 40, true, &error, 1000));
  CHECK(credits_used() == before + 1);
  CHECK(error == MPI_ERR_TRUNCATE);
  CHECK(stream_round(s, long_size, 5, 41, true));
}

TEST_CASE("no credit with prediction off, to itself, or beyond the credit limit", "[engine][predict]") {
  constexpr std::size_t long_size = 256 * 1024;
  SECTION("off") {
    EngineSet s(2, Wire::tcp, predict_options(request::predict::Method::off), next_cookie());
    const std::uint64_t given = credits_given();
    for (unsigned i = 0; i < 4; ++i) stream_round(s, long_size, 5, i, false);
    CHECK_FALSE(stream_round(s, long_size, 5, 9, true));
    CHECK(credits_given() == given);
  }
  SECTION("a message larger than the round trip saved pays for (request.predict_credit_rate)") {
    // 1 byte per second: no round trip pays for a long message.
    EngineSet s(2, Wire::tcp, predict_options(request::predict::Method::last, 16 << 20, 1.0), next_cookie());
    const std::uint64_t given = credits_given();
    for (unsigned i = 0; i < 4; ++i) stream_round(s, long_size, 5, i, false);
    CHECK_FALSE(stream_round(s, long_size, 5, 9, true));
    CHECK(credits_given() == given);
  }
  SECTION("the limit: credited messages waiting unmatched and the next would pass it") {
    // 1.5 long messages.  The credit for the second goes at the first's
    // arrival, before the first is buffered (the documented "one credit in
    // flight per stream" beyond the limit); the third finds two waiting.
    EngineSet s(2, Wire::tcp, predict_options(request::predict::Method::last, long_size * 3 / 2), next_cookie());
    for (unsigned i = 0; i < 3; ++i) stream_round(s, long_size, 5, i, false);
    std::vector<std::vector<std::byte>> out{pattern(long_size, 50), pattern(long_size, 51), pattern(long_size, 52)};
    std::vector<Request*> sends;
    for (auto& o : out) {
      sends.push_back(send(s, 0, 1, o, 5));
      s.pump_rounds(200);
    }
    CHECK(sends[0]->complete);  // on the credit given at the last round's arrival
    CHECK(sends[1]->complete);
    CHECK_FALSE(sends[2]->complete);  // no credit: two wait unmatched
    std::vector<std::vector<std::byte>> in(3, std::vector<std::byte>(long_size));
    std::vector<Request*> recvs;
    for (auto& i : in) recvs.push_back(recv(s, 1, i, 0, 5));
    s.pump_until([&] { return std::all_of(recvs.begin(), recvs.end(), [](Request* r) { return r->complete; }) &&
                              sends[2]->complete; });
    CHECK(in == out);
    for (Request* r : recvs) finish(s, 1, r);
    for (Request* r : sends) finish(s, 0, r);
  }
}
