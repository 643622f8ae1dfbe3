// The collective algorithm registry and selection (core/coll/registry.cpp,
// select.cpp) and the helpers the algorithms share (core/coll/util.hpp).
// The algorithms themselves run in tests/mpi/coll_*.c (tests/mpi/coll.list
// runs every one of them).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "conf/registry.hpp"
#include "core/coll/algorithm.hpp"
#include "core/coll/util.hpp"
#include "core/datatype.hpp"
#include "base/error.hpp"
#include "core/op.hpp"

using namespace gridmpi;
using coll::Kind;

namespace {

template <Kind K>
void check_kind() {
  auto all = coll::algorithms<K>();
  INFO("collective " << coll::kind_name(K));
  REQUIRE(!all.empty());
  std::set<std::string_view> names;
  bool some_always_usable = false;
  for (const auto& a : all) {
    CHECK(names.insert(a.name).second);  // unique
    CHECK(a.run != nullptr);
    CHECK(coll::find_algorithm<K>(a.name) == &a);
    // The parameter (what gridmpi-info shows and the loader checks) accepts the name.
    auto choices = coll::algorithm_parameter_choices(K);
    CHECK(std::find(choices.begin(), choices.end(), std::string(a.name)) != choices.end());
    some_always_usable = some_always_usable || a.usable == nullptr;
  }
  // ... and nothing else but "auto".
  CHECK(coll::algorithm_parameter_choices(K).size() == all.size() + 1);
  // Selection can always fall back to an algorithm correct for any call.
  CHECK(some_always_usable);
  CHECK(coll::find_algorithm<K>("no_such_algorithm") == nullptr);
  CHECK(coll::parse_forced<K>("auto") == nullptr);
  CHECK(coll::parse_forced<K>("") == nullptr);
  CHECK(coll::parse_forced<K>(all.front().name) == &all.front());
}

core::Comm fake_comm(int size, int rank = 0) {
  core::Comm c;
  c.size = size;
  c.rank = rank;
  return c;
}

}  // namespace

TEST_CASE("every collective has a registry of uniquely named algorithms", "[coll]") {
  check_kind<Kind::barrier>();
  check_kind<Kind::bcast>();
  check_kind<Kind::gather>();
  check_kind<Kind::gatherv>();
  check_kind<Kind::scatter>();
  check_kind<Kind::scatterv>();
  check_kind<Kind::allgather>();
  check_kind<Kind::allgatherv>();
  check_kind<Kind::alltoall>();
  check_kind<Kind::alltoallv>();
  check_kind<Kind::alltoallw>();
  check_kind<Kind::reduce>();
  check_kind<Kind::allreduce>();
  check_kind<Kind::reduce_scatter>();
  check_kind<Kind::reduce_scatter_block>();
  check_kind<Kind::scan>();
  check_kind<Kind::exscan>();
}

TEST_CASE("the required algorithms are registered", "[coll]") {
  for (auto name : {"dissemination", "linear"}) CHECK(coll::find_algorithm<Kind::barrier>(name));
  for (auto name : {"linear", "binomial", "scatter_ring_allgather",
                    "scatter_recursive_doubling_allgather"})
    CHECK(coll::find_algorithm<Kind::bcast>(name));
  for (auto name : {"linear", "binomial"}) {
    CHECK(coll::find_algorithm<Kind::reduce>(name));
    CHECK(coll::find_algorithm<Kind::gather>(name));
    CHECK(coll::find_algorithm<Kind::scatter>(name));
  }
  CHECK(coll::find_algorithm<Kind::reduce>("rabenseifner"));
  for (auto name : {"reduce_bcast", "recursive_doubling", "ring", "rabenseifner"})
    CHECK(coll::find_algorithm<Kind::allreduce>(name));
  for (auto name : {"ring", "recursive_doubling", "bruck", "linear"})
    CHECK(coll::find_algorithm<Kind::allgather>(name));
  for (auto name : {"pairwise", "linear"}) CHECK(coll::find_algorithm<Kind::alltoall>(name));
  for (auto name : {"reduce_scatterv", "recursive_halving"})
    CHECK(coll::find_algorithm<Kind::reduce_scatter>(name));
  for (auto name : {"linear", "recursive_doubling"}) {
    CHECK(coll::find_algorithm<Kind::scan>(name));
    CHECK(coll::find_algorithm<Kind::exscan>(name));
  }
}

TEST_CASE("an unknown forced algorithm is an error that lists the valid names", "[coll]") {
  try {
    coll::parse_forced<Kind::bcast>("binomal");
    FAIL("no error");
  } catch (const MpiError& e) {
    CHECK(e.error_class() == MPI_ERR_ARG);
    std::string what = e.what();
    CHECK(what.find("GRIDMPI_BCAST_ALGORITHM=binomal") != std::string::npos);
    CHECK(what.find("binomial") != std::string::npos);
    CHECK(what.find("scatter_ring_allgather") != std::string::npos);
  }
  CHECK_THROWS_AS(coll::parse_forced<Kind::reduce_scatter_block>("ring"), MpiError);
}

TEST_CASE("selection keeps to algorithms correct for the call", "[coll]") {
  // The fixed rules of select.cpp (MPI_Bcast's cost model needs a running
  // job; test_coll_model.cpp tests it).
  ::setenv("GRIDMPI_COLL_MODEL", "rules", 1);
  conf::reset_cache_for_tests();
  auto comm = fake_comm(8);
  std::vector<int> buf(4096);
  coll::ReduceArgs small{buf.data(), buf.data(), 4, MPI_INT, MPI_SUM, 0};
  coll::ReduceArgs large{buf.data(), buf.data(), 4096, MPI_INT, MPI_SUM, 0};
  CHECK(coll::select<Kind::allreduce>(small, comm).name == "recursive_doubling");
  CHECK(coll::select<Kind::allreduce>(large, comm).name == "rabenseifner");

  // A non-commutative op never gets ring, rabenseifner or recursive halving.
  MPI_Op noncommutative = core::op_create(
      [](void*, void*, int*, MPI_Datatype*) {}, /*commutative=*/false);
  coll::ReduceArgs ordered{buf.data(), buf.data(), 4096, MPI_INT, noncommutative, 0};
  CHECK(coll::select<Kind::allreduce>(ordered, comm).name == "recursive_doubling");
  const auto* ring = coll::find_algorithm<Kind::allreduce>("ring");
  REQUIRE(ring);
  CHECK_FALSE(ring->usable(ordered, comm));
  CHECK(ring->usable(large, comm));
  // MPI_Reduce's Rabenseifner takes commutative operations only; the rules
  // keep the binomial tree.
  const auto* reduce_rab = coll::find_algorithm<Kind::reduce>("rabenseifner");
  REQUIRE(reduce_rab);
  CHECK_FALSE(reduce_rab->usable(ordered, comm));
  CHECK(reduce_rab->usable(large, comm));
  CHECK(coll::select<Kind::reduce>(large, comm).name == "binomial");
  std::vector<int> counts(8, 512);
  coll::ReduceScatterArgs rs{buf.data(), buf.data(), counts.data(), MPI_INT, noncommutative};
  CHECK(coll::select<Kind::reduce_scatter>(rs, comm).name == "reduce_scatterv");
  coll::ReduceScatterArgs rs_sum{buf.data(), buf.data(), counts.data(), MPI_INT, MPI_SUM};
  CHECK(coll::select<Kind::reduce_scatter>(rs_sum, comm).name == "recursive_halving");
  core::op_free(noncommutative);

  // Power-of-two-only algorithms are skipped on other sizes.
  auto odd = fake_comm(6);
  coll::BcastArgs bcast{buf.data(), 4096, MPI_INT, 0};
  CHECK(coll::select<Kind::bcast>(bcast, comm).name == "scatter_recursive_doubling_allgather");
  CHECK(coll::select<Kind::bcast>(bcast, odd).name == "scatter_ring_allgather");
  coll::GatherArgs allgather{buf.data(), 4, MPI_INT, buf.data(), 4, MPI_INT, 0};
  CHECK(coll::select<Kind::allgather>(allgather, comm).name == "recursive_doubling");
  CHECK(coll::select<Kind::allgather>(allgather, odd).name == "bruck");
  coll::BcastArgs short_bcast{buf.data(), 4, MPI_INT, 0};
  CHECK(coll::select<Kind::bcast>(short_bcast, odd).name == "binomial");
}

TEST_CASE("Split cuts n items into nearly equal contiguous pieces", "[coll]") {
  for (std::size_t n : {0u, 1u, 5u, 8u, 13u, 1000u}) {
    for (int parts : {1, 2, 3, 7, 8}) {
      coll::Split s{n, parts};
      std::size_t total = 0;
      for (int i = 0; i < parts; ++i) {
        CHECK(s.offset(i) == total);
        CHECK(s.count(i) + 1 >= s.count(0));  // sizes differ by at most one
        CHECK(s.count(i) <= s.count(0));
        total += s.count(i);
      }
      CHECK(total == n);
      CHECK(s.offset(parts) == n);
    }
  }
}

TEST_CASE("powers of two", "[coll]") {
  CHECK(coll::is_power_of_two(1));
  CHECK(coll::is_power_of_two(8));
  CHECK_FALSE(coll::is_power_of_two(6));
  CHECK_FALSE(coll::is_power_of_two(0));
  CHECK(coll::floor_power_of_two(1) == 1);
  CHECK(coll::floor_power_of_two(7) == 4);
  CHECK(coll::floor_power_of_two(8) == 8);
}

TEST_CASE("temporary buffers cover a derived type's true extent", "[coll]") {
  // Two ints at byte offsets 8 and 16, extent 32: true_lb 8, true extent 12.
  int blocklengths[2] = {1, 1};
  MPI_Aint displacements[2] = {8, 16};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Datatype pair = core::type_struct(2, blocklengths, displacements, types);
  MPI_Datatype spaced = core::type_resized(pair, 0, 32);
  core::type_commit(spaced);
  coll::TypedBuffer tmp(3, spaced);
  int src[24];
  for (int i = 0; i < 24; ++i) src[i] = i;
  // Copying 3 elements into the scratch and back must round-trip the data
  // ints and touch nothing outside the allocation (checked by ASan builds).
  coll::copy(src, tmp.get(), 3, spaced);
  int back[24];
  std::memset(back, -1, sizeof back);
  coll::copy(tmp.get(), back, 3, spaced);
  for (int e = 0; e < 3; ++e) {
    CHECK(back[8 * e + 2] == src[8 * e + 2]);
    CHECK(back[8 * e + 4] == src[8 * e + 4]);
    CHECK(back[8 * e] == -1);  // holes untouched
  }
  // Packing gives the data ints in type-map order.
  coll::PackedInput packed(src, 3, spaced);
  REQUIRE(packed.size() == 6 * sizeof(int));
  std::vector<int> ints(6);
  std::memcpy(ints.data(), packed.data(), packed.size());
  CHECK(ints == std::vector<int>{2, 4, 10, 12, 18, 20});
  core::type_free(spaced);
  core::type_free(pair);
}

TEST_CASE("scratch bytes: none when empty, inline up to 64 bytes and carried by a move, heap above", "[coll]") {
  coll::Bytes empty(0);
  CHECK(empty.data() == nullptr);  // PackedOutput::finish() relies on it
  CHECK(coll::Bytes().data() == nullptr);

  coll::Bytes small(64);
  REQUIRE(small.data() != nullptr);
  for (int i = 0; i < 64; ++i) small.data()[i] = static_cast<std::byte>(i);
  coll::Bytes moved(std::move(small));
  REQUIRE(moved.size() == 64);
  for (int i = 0; i < 64; ++i) CHECK(moved.data()[i] == static_cast<std::byte>(i));
  CHECK(reinterpret_cast<std::uintptr_t>(moved.data()) % 16 == 0);

  coll::Bytes large(65);
  std::byte* heap = large.data();
  REQUIRE(heap != nullptr);
  heap[64] = std::byte{7};
  coll::Bytes taken;
  taken = std::move(large);
  CHECK(taken.data() == heap);  // a heap buffer moves without a copy
  CHECK(taken.data()[64] == std::byte{7});
}

TEST_CASE("scratch bytes: large blocks go back to a per-thread cache and are reused, within its limits",
          "[coll]") {
  using coll::Bytes;
  // Start from an empty cache: fill it with small-enough blocks and let
  // them age out (a block only comes back for a request it fits 4x over).
  {
    std::vector<Bytes> hold;
    for (std::size_t i = 0; i < Bytes::scratch_blocks; ++i) hold.emplace_back(Bytes::scratch_min);
  }
  const std::size_t n = 300 * 1024;
  std::byte* first = nullptr;
  {
    Bytes a(n);
    first = a.data();
    a.data()[n - 1] = std::byte{1};
  }
  CHECK(Bytes::cached_blocks() >= 1);
  {
    Bytes again(n - 1000);  // fits the cached block
    CHECK(again.data() == first);
    CHECK(again.size() == n - 1000);
    // Taken out while in use: a second request of that size gets another.
    Bytes other(n);
    CHECK(other.data() != first);
  }
  {
    // The 300 KiB block is more than 4x this request: not spent on it.
    Bytes small(Bytes::scratch_min);
    CHECK(small.data() != first);
  }
  // A moved-from block is released once, by its new owner.
  const std::size_t before = Bytes::cached_blocks();
  {
    Bytes a(n);
    Bytes b(std::move(a));
    Bytes c;
    c = std::move(b);
    CHECK(c.data() != nullptr);
  }
  CHECK(Bytes::cached_blocks() == std::min(before, Bytes::scratch_blocks));
  // Never more than scratch_blocks blocks or scratch_bytes bytes.
  {
    std::vector<Bytes> many;
    for (std::size_t i = 0; i < Bytes::scratch_blocks + 4; ++i) many.emplace_back(n + i);
  }
  CHECK(Bytes::cached_blocks() == Bytes::scratch_blocks);
  CHECK(Bytes::cached_bytes() <= Bytes::scratch_bytes);
  { Bytes huge(Bytes::scratch_bytes + 1); }  // too large to keep
  CHECK(Bytes::cached_bytes() <= Bytes::scratch_bytes);
  // Blocks below scratch_min are not cached.
  const std::size_t blocks = Bytes::cached_blocks();
  { Bytes below(Bytes::scratch_min - 1); }
  CHECK(Bytes::cached_blocks() == blocks);
}

TEST_CASE("a packed output of a contiguous type writes the user's buffer once, with no scratch to unpack",
          "[coll]") {
  int buf[4] = {1, 2, 3, 4};
  coll::PackedOutput out(buf, 4, MPI_INT);
  CHECK(out.data() == reinterpret_cast<std::byte*>(buf));
  int replacement[4] = {5, 6, 7, 8};
  std::memcpy(out.data(), replacement, sizeof replacement);
  out.finish();  // must not unpack anything over buf
  CHECK(std::vector<int>(buf, buf + 4) == std::vector<int>{5, 6, 7, 8});
}
