// Round-trip time through the request engine over the vendor transport, to
// choose vendor.short_limit (p2p/vendor/README.md has the numbers):
//   GRIDMPI_VENDOR_SHORT_LIMIT=0 mpiexec.openmpi -n 2 vendor_bench PLUGIN 8 4096 ...
// Compare with plain_pingpong.c (the vendor alone).  Rank 0 prints one line
// per size: bytes, round-trip microseconds (best of 20 runs of 1000: the
// minimum is what survives other load on the machine).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <vector>

#include "core/datatype.hpp"
#include "core/group.hpp"
#include "p2p/self/self_transport.hpp"
#include "p2p/vendor/vendor_abi.h"
#include "p2p/vendor/vendor_library.hpp"
#include "p2p/vendor/vendor_transport.hpp"
#include "request/engine.hpp"

using namespace gridmpi;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PLUGIN SIZE...\n", argv[0]);
    return 2;
  }
  auto& lib = p2p::vendor::open_process_library(argv[1], 0);
  const int rank = lib.rank();
  if (lib.size() != 2) {
    std::fprintf(stderr, "vendor_bench: run it with 2 ranks of %s's mpiexec\n", lib.ops().name);
    return 2;
  }
  auto& table = core::datatype_table();
  if (!table.find(MPI_BYTE)) {
    auto t = std::make_unique<core::Datatype>();
    t->handle = MPI_BYTE;
    t->size = 1;
    t->ub = t->true_ub = 1;
    t->committed = t->predefined = t->contiguous = true;
    t->basic_elements = 1;
    table.put_at(MPI_BYTE, std::move(t));
  }
  const auto options = p2p::vendor::VendorOptions::from_configuration();
  p2p::vendor::VendorTransport* vendor = nullptr;
  auto engine = request::make_engine_with(rank, 2, 7, [&](const p2p::TransportContext& c) {
    std::vector<std::unique_ptr<p2p::Transport>> ts;
    ts.push_back(std::make_unique<p2p::SelfTransport>(c));
    auto v = std::make_unique<p2p::vendor::VendorTransport>(c, lib, options);
    vendor = v.get();
    ts.push_back(std::move(v));
    return ts;
  });
  core::Comm comm;
  comm.handle = MPI_COMM_WORLD;
  comm.context_id = 100;
  comm.group = std::make_shared<core::Group>();
  comm.group->members = {0, 1};
  comm.group->my_rank = rank;
  comm.rank = rank;
  comm.size = 2;
  std::vector<std::string> endpoints;
  for (int r = 0; r < 2; ++r) endpoints.push_back(fmt::format("vendor:{:x}.{}", lib.ops().job_id(), r));
  engine->set_peer_endpoints(endpoints);

  const int other = 1 - rank;
  auto wait = [&](request::Request* r) {
    engine->wait_until([&] { return r->complete; });
    engine->release(r);
  };
  auto exchange = [&](std::vector<char>& buf, int n) {
    for (int i = 0; i < n; ++i) {
      if (rank == 0) {
        wait(engine->isend(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, other, 1, comm, 100,
                           request::SendMode::standard));
        wait(engine->irecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, other, 1, comm, 100));
      } else {
        wait(engine->irecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, other, 1, comm, 100));
        wait(engine->isend(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, other, 1, comm, 100,
                           request::SendMode::standard));
      }
    }
  };
  if (rank == 0) std::printf("# engine over vendor (%s), short_limit %zu\n", lib.ops().name, vendor->short_limit());
  for (int a = 2; a < argc; ++a) {
    std::vector<char> buf(std::strtoul(argv[a], nullptr, 10));
    const int iterations = buf.size() > 100000 ? 100 : 1000;
    exchange(buf, 100);  // warm-up
    double best = 1e30;
    for (int run = 0; run < 20; ++run) {
      auto t0 = std::chrono::steady_clock::now();
      exchange(buf, iterations);
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, us / iterations);
    }
    if (rank == 0) std::printf("%zu %.2f\n", buf.size(), best);
  }
  engine->shutdown();
  engine.reset();
  p2p::vendor::close_process_library();
  return 0;
}
