// The vendor transport under the request engine, started directly by a
// vendor's mpiexec (no gridmpi launcher):
//   mpiexec.openmpi -n 3 vendor_engine_test lib/gridmpi/vendor/libgridmpi-vendor-openmpi.so [poll|thread]
// Every rank opens the plug-in (the vendor's MPI_Init), builds an engine over
// the self and vendor transports only, and exchanges messages of every size
// class: below, at and above vendor.short_limit (GRIDMPI_VENDOR_SHORT_LIMIT),
// eager and rendezvous, zero bytes, unexpected, many in order, ANY_SOURCE.
//
// poll: the test thread drives the engine (Engine::wait_until).
// thread: the vendor asked for MPI_THREAD_MULTIPLE and the transport's own
// thread delivers frames under a test gate; the waits below then only sleep
// and look (they never call the engine's progress), so a delivery that does
// not come from the thread fails the test by its deadline.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/datatype.hpp"
#include "core/group.hpp"
#include "p2p/self/self_transport.hpp"
#include "p2p/vendor/vendor_abi.h"
#include "p2p/vendor/vendor_library.hpp"
#include "p2p/vendor/vendor_transport.hpp"
#include "request/engine.hpp"

namespace {

using namespace gridmpi;
using Clock = std::chrono::steady_clock;

int failures = 0;
int my_rank = -1;

#define EXPECT(cond, ...)                                                                        \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      ++failures;                                                                                \
      std::fprintf(stderr, "rank %d: %s:%d: check failed: %s: %s\n", my_rank, __FILE__, __LINE__, \
                   #cond, fmt::format(__VA_ARGS__).c_str());                                     \
    }                                                                                            \
  } while (0)

// The engine's lock, as the thread-mode engine will provide it.
class TestGate final : public p2p::EventGate {
 public:
  void enter() override { mutex_.lock(); }
  void leave() noexcept override { mutex_.unlock(); }
  std::recursive_mutex mutex_;
};

void ensure_basic_datatypes() {
  auto& table = core::datatype_table();
  if (table.find(MPI_BYTE)) return;
  auto t = std::make_unique<core::Datatype>();
  t->handle = MPI_BYTE;
  t->size = 1;
  t->ub = t->true_ub = 1;
  t->committed = t->predefined = t->contiguous = true;
  t->basic_elements = 1;
  table.put_at(MPI_BYTE, std::move(t));
}

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return v;
}

struct World {
  std::unique_ptr<request::Engine> engine;
  std::unique_ptr<core::Comm> comm;
  p2p::vendor::VendorTransport* vendor = nullptr;
  TestGate* gate = nullptr;  // thread mode only
  int rank = 0;
  int size = 0;
  static constexpr std::uint32_t context = 100;

  request::Request* isend(const std::vector<std::byte>& b, int dest, int tag) {
    std::unique_lock lock = guard();
    return engine->isend(b.data(), static_cast<int>(b.size()), MPI_BYTE, dest, tag, *comm, context,
                         request::SendMode::standard);
  }
  request::Request* irecv(std::vector<std::byte>& b, int source, int tag) {
    std::unique_lock lock = guard();
    return engine->irecv(b.data(), static_cast<int>(b.size()), MPI_BYTE, source, tag, *comm, context);
  }
  // Waits for r and releases it; returns its status.
  MPI_Status wait(request::Request* r, const char* what, bool pump = false) {
    wait_until([&] { return r->complete; }, what, pump);
    std::unique_lock lock = guard();
    MPI_Status st = r->status;
    EXPECT(r->error == MPI_SUCCESS, "{}: request error {}", what, r->error);
    engine->release(r);
    return st;
  }
  // pump: thread mode too drives the engine (for the self transport, which
  // is the engine's thread's business in the real thread mode).
  void wait_until(const std::function<bool()>& done, const char* what, bool pump = false) {
    if (!gate) {
      auto deadline = Clock::now() + std::chrono::seconds(60);
      engine->wait_until([&] { return done() || Clock::now() > deadline; });
      if (!done()) {
        std::fprintf(stderr, "rank %d: timed out waiting for %s\n", rank, what);
        std::exit(2);
      }
      return;
    }
    // Thread mode: look under the gate, sleep outside it.
    auto deadline = Clock::now() + std::chrono::seconds(60);
    for (;;) {
      {
        std::unique_lock lock(gate->mutex_);
        if (pump) engine->progress();
        if (done()) return;
      }
      if (Clock::now() > deadline) {
        std::fprintf(stderr, "rank %d: timed out waiting for %s (thread mode)\n", rank, what);
        std::exit(2);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  std::unique_lock<std::recursive_mutex> guard() {
    return gate ? std::unique_lock(gate->mutex_) : std::unique_lock<std::recursive_mutex>();
  }
  // Everyone to 0, 0 to everyone (zero-byte messages through the engine).
  void barrier(int tag) {
    std::vector<std::byte> none;
    if (rank == 0) {
      for (int r = 1; r < size; ++r) wait(irecv(none, r, tag), "barrier in");
      for (int r = 1; r < size; ++r) wait(isend(none, r, tag), "barrier out");
    } else {
      wait(isend(none, 0, tag), "barrier in");
      wait(irecv(none, 0, tag), "barrier out");
    }
  }
};

// Rank a sends `sizes` to rank b and b sends them back; both check contents.
void both_ways(World& w, int a, int b, std::size_t n, int tag) {
  if (w.rank != a && w.rank != b) return;
  int other = w.rank == a ? b : a;
  auto out = pattern(n, static_cast<unsigned>(w.rank * 1000 + tag));
  std::vector<std::byte> in(n, std::byte{0x5a});
  auto* r = w.irecv(in, other, tag);
  auto* s = w.isend(out, other, tag);
  MPI_Status st = w.wait(r, "both-ways receive");
  w.wait(s, "both-ways send");
  auto expect = pattern(n, static_cast<unsigned>(other * 1000 + tag));
  EXPECT(in == expect, "{} bytes from rank {}: contents differ", n, other);
  EXPECT(st.MPI_SOURCE == other && st.MPI_TAG == tag, "{} bytes: status source {} tag {}", n, st.MPI_SOURCE,
         st.MPI_TAG);
}

// The sender's message is unexpected at the receiver: it arrives before the
// receive is posted (the "marker" after it proves it has arrived).
void unexpected(World& w, std::size_t n, int tag) {
  if (w.rank == 0) {
    auto out = pattern(n, 77);
    auto* s = w.isend(out, 1, tag);
    std::vector<std::byte> marker(1, std::byte{1});
    auto* m = w.isend(marker, 1, tag + 1);
    w.wait(m, "unexpected marker send");
    w.wait(s, "unexpected send");
  } else if (w.rank == 1) {
    std::vector<std::byte> marker(1);
    w.wait(w.irecv(marker, 0, tag + 1), "unexpected marker");
    std::vector<std::byte> in(n, std::byte{0x5a});
    w.wait(w.irecv(in, 0, tag), "unexpected receive");
    EXPECT(in == pattern(n, 77), "unexpected {}-byte message: contents differ", n);
  }
}

// Many messages of mixed sizes, one tag: they must match in sending order.
void order(World& w, std::size_t short_limit, int tag) {
  constexpr int count = 400;
  auto size_of = [&](int i) -> std::size_t {
    switch (i % 5) {
      case 0: return 4;
      case 1: return short_limit;
      case 2: return short_limit + 1 + static_cast<std::size_t>(i);
      case 3: return 0;
      default: return 100000 + static_cast<std::size_t>(i);  // rendezvous
    }
  };
  if (w.rank == 0) {
    std::vector<std::vector<std::byte>> out(count);
    std::vector<request::Request*> reqs;
    for (int i = 0; i < count; ++i) {
      out[static_cast<std::size_t>(i)] = pattern(size_of(i), static_cast<unsigned>(i));
      reqs.push_back(w.isend(out[static_cast<std::size_t>(i)], 1, tag));
    }
    for (auto* r : reqs) w.wait(r, "order send");
  } else if (w.rank == 1) {
    std::vector<std::vector<std::byte>> in(count);
    std::vector<request::Request*> reqs;
    for (int i = 0; i < count; ++i) {
      in[static_cast<std::size_t>(i)].assign(size_of(i), std::byte{0});
      reqs.push_back(w.irecv(in[static_cast<std::size_t>(i)], 0, tag));
    }
    for (int i = 0; i < count; ++i) {
      MPI_Status st = w.wait(reqs[static_cast<std::size_t>(i)], "order receive");
      EXPECT(st.MPI_SOURCE == 0, "message {} from {}", i, st.MPI_SOURCE);
      EXPECT(in[static_cast<std::size_t>(i)] == pattern(size_of(i), static_cast<unsigned>(i)),
             "message {} ({} bytes) out of order or damaged", i, size_of(i));
    }
  }
}

// Every rank but 0 sends `per_rank` numbered messages to 0, which receives
// them with MPI_ANY_SOURCE and checks the per-source order.
void any_source(World& w, int tag) {
  constexpr int per_rank = 50;
  if (w.rank != 0) {
    std::vector<std::vector<std::byte>> out;
    std::vector<request::Request*> reqs;
    for (int i = 0; i < per_rank; ++i) {
      std::vector<std::byte> b(8 + static_cast<std::size_t>(i % 3) * 3000);
      std::int32_t v[2] = {w.rank, i};
      std::memcpy(b.data(), v, sizeof v);
      out.push_back(std::move(b));
    }
    for (auto& b : out) reqs.push_back(w.isend(b, 0, tag));
    for (auto* r : reqs) w.wait(r, "any-source send");
    return;
  }
  std::vector<int> next(static_cast<std::size_t>(w.size), 0);
  for (int n = 0; n < per_rank * (w.size - 1); ++n) {
    std::vector<std::byte> b(8 + 2 * 3000);
    MPI_Status st = w.wait(w.irecv(b, MPI_ANY_SOURCE, tag), "any-source receive");
    std::int32_t v[2];
    std::memcpy(v, b.data(), sizeof v);
    EXPECT(st.MPI_SOURCE == v[0], "status says rank {}, the message says {}", st.MPI_SOURCE, v[0]);
    EXPECT(v[0] > 0 && v[0] < w.size, "message from rank {}", v[0]);
    if (v[0] > 0 && v[0] < w.size) {
      EXPECT(v[1] == next[static_cast<std::size_t>(v[0])], "from rank {}: message {} where {} was due", v[0], v[1],
             next[static_cast<std::size_t>(v[0])]);
      next[static_cast<std::size_t>(v[0])] = v[1] + 1;
    }
  }
  for (int r = 1; r < w.size; ++r) EXPECT(next[static_cast<std::size_t>(r)] == per_rank, "rank {}", r);
}

void to_self(World& w, int tag) {
  if (w.vendor)
    EXPECT(!w.vendor->reachable(w.rank), "the vendor transport claims to reach its own rank {}", w.rank);
  auto out = pattern(5000, 9);
  std::vector<std::byte> in(5000);
  auto* r = w.irecv(in, w.rank, tag);
  auto* s = w.isend(out, w.rank, tag);
  w.wait(r, "self receive", true);
  w.wait(s, "self send", true);
  EXPECT(in == out, "message to self damaged");
}

// Something else on the vendor's MPI_COMM_WORLD (rank 1 sends raw bytes
// with the transport's tag straight through the plug-in): rank 0's progress
// must throw an MpiError naming both ranks and the cause, not deliver it.
void foreign_message(World& w, const gridmpi_vendor_ops& ops) {
  if (w.rank == 1) {
    static const char garbage[] = "not a frame of gridmpi, but long enough to look like one";
    int slot = -1;
    EXPECT(ops.isend(garbage, sizeof garbage, 0, p2p::vendor::VendorTransport::first_tag, &slot) == 0, "isend");
    // No frame of ours is outstanding after the barrier: this is the only send.
    int done[8192];
    int count = 0;
    int failed = -1;
    auto deadline = Clock::now() + std::chrono::seconds(30);
    while (count == 0 && Clock::now() < deadline) ops.testsome(done, 8192, &count, &failed);
    EXPECT(count == 1 && done[0] == slot, "raw send completed: {} slots", count);
  } else if (w.rank == 0) {
    std::string error;
    auto deadline = Clock::now() + std::chrono::seconds(30);
    while (error.empty() && Clock::now() < deadline) {
      try {
        w.engine->progress();
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    EXPECT(error.find("is not a gridmpi frame") != std::string::npos, "error '{}'", error);
    EXPECT(error.find("rank 0") != std::string::npos && error.find("rank 1") != std::string::npos,
           "error '{}' names both ranks", error);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PLUGIN [poll|thread]\n", argv[0]);
    return 2;
  }
  const std::string mode = argc > 2 ? argv[2] : "poll";
  const bool thread_mode = mode == "thread";
  // registry: the engine the runtime builds (p2p/registry.cpp's factories,
  // tcp included but given no endpoints): the vendor transport must be
  // created from the process library and carry everything.
  const bool registry_mode = mode == "registry";
  auto& lib = p2p::vendor::open_process_library(argv[1], thread_mode ? 3 : 0);
  my_rank = lib.rank();
  ensure_basic_datatypes();
  if (thread_mode && lib.provided_thread_level() < 3)
    std::fprintf(stderr, "rank %d: vendor granted thread level %d: the thread polls\n", lib.rank(),
                 lib.provided_thread_level());

  World w;
  w.rank = lib.rank();
  w.size = lib.size();
  if (w.size < 2) {
    // The plug-in's vendor is not the one whose mpiexec started us (or no
    // mpiexec at all): every process is a singleton of its own.
    std::fprintf(stderr, "vendor_engine_test: a vendor job of %d rank; start it with %s's mpiexec -n 2 or more\n",
                 w.size, lib.ops().name);
    return 1;
  }
  TestGate gate;
  if (thread_mode) w.gate = &gate;
  const auto options = p2p::vendor::VendorOptions::from_configuration();
  if (registry_mode) {
    w.engine = request::make_engine(w.rank, w.size, 0x1234);
  } else {
  w.engine = request::make_engine_with(
      w.rank, w.size, 0x1234,
      [&](const p2p::TransportContext& c) {
        p2p::TransportContext context = c;
        if (thread_mode) {
          context.progress = p2p::ProgressMode::thread;
          context.gate = &gate;
        }
        std::vector<std::unique_ptr<p2p::Transport>> ts;
        ts.push_back(std::make_unique<p2p::SelfTransport>(context));
        auto v = std::make_unique<p2p::vendor::VendorTransport>(context, lib, options);
        w.vendor = v.get();
        ts.push_back(std::move(v));
        return ts;
      },
      request::EngineOptions{});
  }
  w.comm = std::make_unique<core::Comm>();
  w.comm->handle = MPI_COMM_WORLD;
  w.comm->context_id = World::context;
  w.comm->group = std::make_shared<core::Group>();
  for (int i = 0; i < w.size; ++i) w.comm->group->members.push_back(i);
  w.comm->group->my_rank = w.rank;
  w.comm->rank = w.rank;
  w.comm->size = w.size;

  // Wire-up: every rank's endpoint is "vendor:<job>.<vendor rank>" (the job
  // id is common, so no exchange is needed here; the launcher publishes them).
  std::string mine = w.engine->endpoint();
  EXPECT(mine.find(fmt::format("vendor:{:x}.{}", lib.ops().job_id(), w.rank)) != std::string::npos, "endpoint '{}'",
         mine);
  std::vector<std::string> endpoints;
  for (int r = 0; r < w.size; ++r) endpoints.push_back(fmt::format("vendor:{:x}.{}", lib.ops().job_id(), r));
  // Another cluster's vendor job (a different id) must not be reachable.
  if (w.vendor) {
    w.vendor->set_peer_endpoint(0, fmt::format("vendor:{:x}.0", lib.ops().job_id() + 1));
    EXPECT(!w.vendor->reachable(0) || w.rank != 0, "rank 0 reachable through a foreign vendor job");
  }
  // A peer of our vendor job with another vendor.short_limit is refused
  // (its first parts would not fit our pre-posted receives).
  if (w.vendor && w.size > 1) {
    int other = w.rank == 0 ? 1 : 0;
    std::string error;
    try {
      w.vendor->set_peer_endpoint(other, fmt::format("vendor:{:x}.{}.{}", lib.ops().job_id(), other,
                                                     w.vendor->short_limit() + 1));
    } catch (const std::exception& e) {
      error = e.what();
    }
    EXPECT(error.find("vendor.short_limit") != std::string::npos, "limit mismatch error '{}'", error);
  }
  w.engine->set_peer_endpoints(endpoints);
  if (w.vendor)
    for (int r = 0; r < w.size; ++r)
      EXPECT(w.vendor->reachable(r) == (r != w.rank), "reachable({}) is {}", r, w.vendor->reachable(r));
  if (thread_mode) w.vendor->start_progress_thread();

  std::size_t s = options.short_limit;
  if (s == p2p::vendor::VendorOptions::automatic) s = p2p::vendor::VendorOptions::automatic_short_limit(lib.ops().name);
  if (w.vendor) EXPECT(w.vendor->short_limit() == s, "short limit {} where {} was expected", w.vendor->short_limit(), s);
  using VT = p2p::vendor::VendorTransport;
  std::vector<std::size_t> sizes{0, 1, 8, s == 0 ? 1 : s - 1, s, s + 1, 3 * s + 17, VT::eager_limit,
                                 VT::eager_limit + 1, std::size_t{1} << 20, VT::max_fragment * 2 + 12345};
  int tag = 10;
  for (std::size_t n : sizes) {
    both_ways(w, 0, 1, n, tag++);
    if (w.size > 2) both_ways(w, 2, 1, n, tag++);
  }
  for (std::size_t n : {std::size_t{0}, s, s + 1, std::size_t{300000}}) {
    unexpected(w, n, tag);
    tag += 2;
  }
  order(w, s, tag++);
  if (w.size > 2) any_source(w, tag++);
  to_self(w, tag++);
  w.barrier(tag++);
  if (!thread_mode) {
    foreign_message(w, lib.ops());
    w.barrier(tag++);
  }

  if (thread_mode) {
    // The transport's thread ends in its own time (it needs the gate once
    // more): stop it first, waiting outside the gate, as the thread-mode
    // engine's shutdown does.
    {
      std::unique_lock lock = w.guard();
      w.vendor->begin_shutdown();
    }
    w.wait_until([&] { return w.vendor->shutdown_complete(); }, "the vendor thread to end");
  }
  {
    std::unique_lock lock = w.guard();
    w.engine->shutdown();
  }
  w.engine.reset();
  p2p::vendor::close_process_library();
  if (failures) {
    std::fprintf(stderr, "rank %d: %d checks failed\n", my_rank, failures);
    return 1;
  }
  if (my_rank == 0)
    std::printf("vendor engine test passed (%d ranks, short limit %zu, %s mode)\n", w.size, s,
                mode.c_str());
  return 0;
}
