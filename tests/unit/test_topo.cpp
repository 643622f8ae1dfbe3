// Process topologies (core/topo.cpp) without a job: dims factorisation,
// Cartesian arithmetic, graph lists and neighbourhoods.
#include <catch2/catch.hpp>

#include <functional>
#include <vector>

#include "base/error.hpp"
#include "core/topo.hpp"

using gridmpi::MpiError;
using namespace gridmpi::core;

namespace {

std::vector<int> dims_of(int nnodes, std::vector<int> dims) {
  dims_create(nnodes, dims);
  return dims;
}

int error_class_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const MpiError& e) {
    return e.error_class();
  }
  return MPI_SUCCESS;
}

Topology grid(std::vector<int> dims, std::vector<int> periods) { return make_cart(dims, periods); }

}  // namespace

TEST_CASE("dims_create: the standard's examples", "[topo]") {
  CHECK(dims_of(6, {0, 0}) == std::vector<int>{3, 2});
  CHECK(dims_of(7, {0, 0}) == std::vector<int>{7, 1});
  CHECK(dims_of(6, {0, 3, 0}) == std::vector<int>{2, 3, 1});
  CHECK(error_class_of([] { dims_of(7, {0, 3, 0}); }) == MPI_ERR_DIMS);
}

TEST_CASE("dims_create: balanced, non-increasing", "[topo]") {
  CHECK(dims_of(1, {0, 0, 0}) == std::vector<int>{1, 1, 1});
  CHECK(dims_of(8, {0, 0, 0}) == std::vector<int>{2, 2, 2});
  CHECK(dims_of(12, {0, 0, 0}) == std::vector<int>{3, 2, 2});
  CHECK(dims_of(16, {0, 0, 0}) == std::vector<int>{4, 2, 2});
  CHECK(dims_of(30, {0, 0, 0}) == std::vector<int>{5, 3, 2});
  CHECK(dims_of(64, {0, 0, 0}) == std::vector<int>{4, 4, 4});
  CHECK(dims_of(36, {0, 0, 0, 0}) == std::vector<int>{3, 3, 2, 2});
  // Greedy prime assignment would give 12x6.
  CHECK(dims_of(72, {0, 0}) == std::vector<int>{9, 8});
  // Equal spreads: the largest smallest factor, then the largest next one.
  CHECK(dims_of(5040, {0, 0, 0}) == std::vector<int>{21, 16, 15});
  CHECK(dims_of(10800, {0, 0, 0}) == std::vector<int>{27, 20, 20});
  CHECK(dims_of(7344, {0, 0, 0, 0}) == std::vector<int>{17, 9, 8, 6});
  CHECK(dims_of(119952, {0, 0, 0, 0, 0}) == std::vector<int>{17, 14, 9, 8, 7});
  CHECK(dims_of(4, {0}) == std::vector<int>{4});
  CHECK(dims_of(8, {0, 0, 2}) == std::vector<int>{2, 2, 2});
  CHECK(dims_of(12, {0, 2, 0}) == std::vector<int>{3, 2, 2});
  CHECK(dims_of(6, {2, 3}) == std::vector<int>{2, 3});
  CHECK(dims_of(2147483647, {0, 0}) == std::vector<int>{2147483647, 1});
  // 2 * 3 * 7 * 11 * 31 * 151 * 331: many divisors, still quick.
  std::vector<int> big = dims_of(2147483646, {0, 0, 0, 0, 0, 0});
  long long product = 1;
  for (std::size_t i = 0; i < big.size(); ++i) {
    product *= big[i];
    if (i > 0) CHECK(big[i - 1] >= big[i]);
  }
  CHECK(product == 2147483646LL);
  std::vector<int> none;
  dims_create(1, none);
  CHECK(none.empty());
}

TEST_CASE("dims_create: erroneous arguments", "[topo]") {
  CHECK(error_class_of([] { dims_of(6, {4, 0}); }) == MPI_ERR_DIMS);
  CHECK(error_class_of([] { dims_of(6, {2, 2}); }) == MPI_ERR_DIMS);
  CHECK(error_class_of([] { dims_of(6, {-1, 0}); }) == MPI_ERR_DIMS);
  CHECK(error_class_of([] { dims_of(2, {}); }) == MPI_ERR_DIMS);
  CHECK(error_class_of([] { dims_of(0, {0}); }) == MPI_ERR_ARG);
}

TEST_CASE("cart rank and coords are inverse, row-major", "[topo]") {
  Topology t = grid({3, 4, 2}, {0, 1, 0});
  CHECK(cart_size(t.dims) == 24);
  for (int r = 0; r < 24; ++r) CHECK(cart_rank(t, cart_coords(t, r)) == r);
  CHECK(cart_coords(t, 0) == std::vector<int>{0, 0, 0});
  CHECK(cart_coords(t, 1) == std::vector<int>{0, 0, 1});
  CHECK(cart_coords(t, 2) == std::vector<int>{0, 1, 0});
  CHECK(cart_coords(t, 23) == std::vector<int>{2, 3, 1});
  // Periodic coordinates wrap; non-periodic ones out of range are errors.
  CHECK(cart_rank(t, std::vector<int>{1, -1, 1}) == cart_rank(t, std::vector<int>{1, 3, 1}));
  CHECK(cart_rank(t, std::vector<int>{1, 9, 1}) == cart_rank(t, std::vector<int>{1, 1, 1}));
  CHECK(error_class_of([&] { cart_rank(t, std::vector<int>{3, 0, 0}); }) == MPI_ERR_ARG);
  CHECK(error_class_of([&] { cart_rank(t, std::vector<int>{0, 0, -1}); }) == MPI_ERR_ARG);
  CHECK(error_class_of([] { grid({2, 0}, {0, 0}); }) == MPI_ERR_DIMS);
  Topology zero = grid({}, {});
  CHECK(cart_size(zero.dims) == 1);
  CHECK(cart_rank(zero, std::vector<int>{}) == 0);
}

TEST_CASE("cart shift with displacements", "[topo]") {
  Topology t = grid({4, 3}, {1, 0});
  // rank 4 = (1, 1)
  CHECK(cart_shift(t, 4, 0, 1) == std::pair<int, int>{1, 7});
  CHECK(cart_shift(t, 4, 0, 2) == std::pair<int, int>{10, 10});
  CHECK(cart_shift(t, 4, 0, -3) == std::pair<int, int>{1, 7});
  CHECK(cart_shift(t, 4, 1, 1) == std::pair<int, int>{3, 5});
  CHECK(cart_shift(t, 4, 1, 2) == std::pair<int, int>{MPI_PROC_NULL, MPI_PROC_NULL});
  CHECK(cart_shift(t, 3, 1, 1) == std::pair<int, int>{MPI_PROC_NULL, 4});
  CHECK(cart_shift(t, 4, 1, 0) == std::pair<int, int>{4, 4});
  CHECK(error_class_of([&] { cart_shift(t, 4, 2, 1); }) == MPI_ERR_ARG);
}

TEST_CASE("cart sub keeps the chosen dimensions", "[topo]") {
  Topology t = grid({2, 3, 4}, {1, 0, 1});
  // rank 17 = (1, 1, 1)
  CartSub rows = cart_sub(t, 17, std::vector<int>{0, 0, 1});
  CHECK(rows.ranks == std::vector<int>{16, 17, 18, 19});
  CHECK(rows.topology.dims == std::vector<int>{4});
  CHECK(rows.topology.periods == std::vector<int>{1});
  CartSub planes = cart_sub(t, 17, std::vector<int>{1, 1, 0});
  CHECK(planes.ranks == std::vector<int>{1, 5, 9, 13, 17, 21});
  CHECK(planes.topology.dims == std::vector<int>{2, 3});
  CHECK(planes.topology.periods == std::vector<int>{1, 0});
  CartSub point = cart_sub(t, 17, std::vector<int>{0, 0, 0});
  CHECK(point.ranks == std::vector<int>{17});
  CHECK(point.topology.dims.empty());
}

TEST_CASE("graph neighbours and checks", "[topo]") {
  // The standard's example: 4 nodes, index {2,3,4,6}, edges {1,3,0,3,0,2}.
  Topology g = make_graph(std::vector<int>{2, 3, 4, 6}, std::vector<int>{1, 3, 0, 3, 0, 2});
  CHECK(graph_neighbors(g, 0) == std::vector<int>{1, 3});
  CHECK(graph_neighbors(g, 1) == std::vector<int>{0});
  CHECK(graph_neighbors(g, 3) == std::vector<int>{0, 2});
  CHECK(error_class_of([] { make_graph(std::vector<int>{2, 1}, std::vector<int>{1, 0}); }) == MPI_ERR_ARG);
  CHECK(error_class_of([] { make_graph(std::vector<int>{1, 2}, std::vector<int>{1, 2}); }) == MPI_ERR_ARG);
}

TEST_CASE("neighbourhoods in the standard's order", "[topo]") {
  Topology t = grid({3, 2}, {0, 1});
  // rank 2 = (1, 0): dim 0 -> 0, 4; dim 1 (periodic, extent 2) -> 3, 3.
  Neighborhood n = neighborhood(t, 2);
  CHECK(n.sources == std::vector<int>{0, 4, 3, 3});
  CHECK(n.destinations == n.sources);
  CHECK(n.swap_receive_pairs);
  Neighborhood edge = neighborhood(t, 0);
  CHECK(edge.sources == std::vector<int>{MPI_PROC_NULL, 2, 1, 1});

  Topology d;
  d.kind = MPI_DIST_GRAPH;
  d.sources = {3, 1};
  d.destinations = {2};
  Neighborhood dn = neighborhood(d, 0);
  CHECK(dn.sources == std::vector<int>{3, 1});
  CHECK(dn.destinations == std::vector<int>{2});
  CHECK_FALSE(dn.swap_receive_pairs);
}
