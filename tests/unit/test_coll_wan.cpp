// The wide-area collectives' cost model (core/coll/wan_model.cpp): which
// algorithm it picks for the machines it was measured on.  The algorithms
// themselves run in tests/mpi/coll_wan.c and the coll_*__wan_* entries of
// tests/mpi/coll.list, split over clusters.
#include <catch2/catch.hpp>

#include <vector>

#include "core/coll/wan.hpp"
#include "core/group.hpp"

using namespace gridmpi;
using coll::Kind;
using coll::wan::Variant;

namespace {

// Clusters of the given sizes, consecutive comm ranks each.
core::ClientMap clusters(const std::vector<int>& sizes) {
  core::ClientMap map;
  int rank = 0;
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    map.masters.push_back(rank);
    map.members.emplace_back();
    for (int i = 0; i < sizes[c]; ++i, ++rank) {
      map.master_of.push_back(static_cast<int>(c));
      map.local_rank.push_back(i);
      map.members.back().push_back(rank);
    }
  }
  return map;
}

// As calibrate() measured through the emulator at 5 ms one-way (shared
// memory inside each cluster, 4 MiB tcp_wmem).
coll::wan::Model five_ms() {
  return {2e-6, 0.15e-9, 5e-3, 1 / (0.65 * 4194304 / 10e-3), 1 / 1.25e9};
}

}  // namespace

TEST_CASE("wan model: at 5 ms one-way the choices are the ones npb/wan-bench measured fastest", "[wan]") {
  coll::wan::set_model_for_tests(five_ms());
  const core::ClientMap map = clusters({2, 2});
  // Crossing once beats IMPI's two crossings.
  CHECK(coll::wan::choose(Kind::barrier, 0, map, -1) == Variant::leaders);
  CHECK(coll::wan::choose(Kind::allreduce, 8, map, -1) != Variant::impi);
  // Large messages: over every connection at once.
  CHECK(coll::wan::choose(Kind::allreduce, 4 << 20, map, -1) == Variant::split);
  CHECK(coll::wan::choose(Kind::alltoall, 4 << 20, map, -1) == Variant::split);
  CHECK(coll::wan::choose(Kind::bcast, 4 << 20, map, 0) == Variant::split);
  // Small and middle-sized broadcasts: the root straight to the other
  // cluster (IMPI's own), within the margin of the split one at 64 KiB.
  CHECK(coll::wan::choose(Kind::bcast, 8, map, 0) == Variant::impi);
  CHECK(coll::wan::choose(Kind::bcast, 65536, map, 0) == Variant::impi);
  // The estimates order as measured: IMPI's Allreduce of 4 MiB costs about
  // twice the crossing of the split one.
  const double impi = coll::wan::estimate(Kind::allreduce, Variant::impi, 4 << 20, map, -1);
  const double split = coll::wan::estimate(Kind::allreduce, Variant::split, 4 << 20, map, -1);
  CHECK(impi > 2 * split);
}

TEST_CASE("wan model: a variant that does not apply is never chosen", "[wan]") {
  coll::wan::set_model_for_tests(five_ms());
  // A cluster of one: nothing to split over.
  const core::ClientMap uneven = clusters({1, 3});
  CHECK(coll::wan::estimate(Kind::allreduce, Variant::split, 4 << 20, uneven, -1) < 0);
  CHECK(coll::wan::estimate(Kind::bcast, Variant::split, 4 << 20, uneven, 0) < 0);
  CHECK(coll::wan::choose(Kind::allreduce, 4 << 20, uneven, -1) != Variant::split);
  CHECK(coll::wan::choose(Kind::bcast, 4 << 20, uneven, 0) == Variant::impi);
  // The root's cluster has 3: the broadcast can split there.
  CHECK(coll::wan::estimate(Kind::bcast, Variant::split, 4 << 20, uneven, 1) >= 0);
  // No leaders variant of Bcast, Reduce, Allgather, Alltoall.
  for (Kind k : {Kind::bcast, Kind::reduce, Kind::allgather, Kind::alltoall})
    CHECK(coll::wan::estimate(k, Variant::leaders, 4096, clusters({2, 2}), 0) < 0);
  // Collectives without wide-area algorithms.
  CHECK(coll::wan::estimate(Kind::scan, Variant::split, 4096, clusters({2, 2}), -1) < 0);
}

TEST_CASE("wan model: on a fast link the wide-area algorithms still cross once", "[wan]") {
  coll::wan::Model lan = five_ms();
  lan.wan_latency = 30e-6;
  lan.path_byte = 1 / 1.25e9;
  coll::wan::set_model_for_tests(lan);
  const core::ClientMap map = clusters({4, 4});
  CHECK(coll::wan::choose(Kind::barrier, 0, map, -1) == Variant::leaders);
  CHECK(coll::wan::choose(Kind::allreduce, 8, map, -1) == Variant::leaders);
}
