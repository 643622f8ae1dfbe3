// Process topologies: dims factorisation, Cartesian arithmetic, graph and
// neighbourhood lists (topo.hpp).  Owner: topologies.
#include "core/topo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "base/error.hpp"
#include "core/group.hpp"

namespace gridmpi::core {

namespace {

const char* kind_name(int kind) {
  switch (kind) {
    case MPI_CART: return "Cartesian";
    case MPI_GRAPH: return "graph";
    case MPI_DIST_GRAPH: return "distributed graph";
    default: return "unknown";
  }
}

// Divisors of n (n >= 1), descending.
std::vector<int> divisors_descending(int n) {
  std::vector<int> small, large;
  for (int d = 1; static_cast<std::int64_t>(d) * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  std::vector<int> all(large.begin(), large.end());
  all.insert(all.end(), small.rbegin(), small.rend());
  std::sort(all.begin(), all.end(), std::greater<>());
  return all;
}

// Balanced factorisation of m into `slots` non-increasing factors: the one
// with the smallest spread (largest - smallest factor), ties broken by the
// largest smallest factor, then the largest next-to-smallest, and so on (the
// standard leaves the tie open; this is the choice MPICH makes, e.g. 5040 in
// 3 = 21 x 16 x 15, not 20 x 18 x 14).  Depth-first over the divisors of m.
class Factoriser {
 public:
  Factoriser(int m, int slots) : divisors_(divisors_descending(m)), current_(slots), slots_(slots) {}

  std::vector<int> run(int m) {
    search(m, 0, m);
    return best_;
  }

 private:
  // Fills current_[slot..] with factors of `rest`, each <= `bound`.
  void search(int rest, int slot, int bound) {
    if (slot == slots_ - 1) {
      if (rest > bound) return;
      current_[slot] = rest;
      offer();
      return;
    }
    const int left = slots_ - slot;
    for (int f : divisors_) {
      if (f > bound || rest % f != 0) continue;
      if (!reaches(f, left, rest)) break;  // smaller f cannot reach rest either
      // Every later factor is <= f, so the spread is at least first - f.
      if (!best_.empty() && slot > 0 && current_[0] - f > best_spread_) break;
      current_[slot] = f;
      search(rest / f, slot + 1, f);
    }
  }

  // f^count >= target, without overflow.
  static bool reaches(int f, int count, int target) {
    std::int64_t p = 1;
    for (int i = 0; i < count; ++i) {
      p *= f;
      if (p >= target) return true;
    }
    return p >= target;
  }

  void offer() {
    int spread = current_.front() - current_.back();
    if (best_.empty() || spread < best_spread_ ||
        (spread == best_spread_ &&
         std::lexicographical_compare(best_.rbegin(), best_.rend(), current_.rbegin(), current_.rend()))) {
      best_ = current_;
      best_spread_ = spread;
    }
  }

  std::vector<int> divisors_;
  std::vector<int> current_;
  std::vector<int> best_;
  int best_spread_ = INT_MAX;
  int slots_;
};

void check_direction(const Topology& cart, int direction) {
  if (direction < 0 || direction >= static_cast<int>(cart.dims.size()))
    throw MpiError(MPI_ERR_ARG, fmt::format("direction {} is not a dimension of the {}-dimensional grid",
                                            direction, cart.dims.size()));
}

}  // namespace

const Topology& topology_of(const Comm& comm, const char* function, int kind) {
  if (!comm.topology)
    throw MpiError(MPI_ERR_TOPOLOGY,
                   fmt::format("{}: the communicator has no process topology (create one with "
                               "MPI_Cart_create, MPI_Graph_create or MPI_Dist_graph_create)",
                               function));
  if (kind != MPI_UNDEFINED && comm.topology->kind != kind)
    throw MpiError(MPI_ERR_TOPOLOGY, fmt::format("{}: the communicator has a {} topology, not a {} one", function,
                                                 kind_name(comm.topology->kind), kind_name(kind)));
  return *comm.topology;
}

void dims_create(int nnodes, std::span<int> dims) {
  if (nnodes <= 0) throw MpiError(MPI_ERR_ARG, fmt::format("nnodes {} is not positive", nnodes));
  std::int64_t fixed = 1;
  int free_slots = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0)
      throw MpiError(MPI_ERR_DIMS, fmt::format("dims[{}] is negative ({}); give 0 (free) or an extent", i, dims[i]));
    if (dims[i] == 0) ++free_slots;
    else fixed = std::min<std::int64_t>(fixed * dims[i], std::int64_t{INT_MAX} + 1);
  }
  if (nnodes % fixed != 0)
    throw MpiError(MPI_ERR_DIMS, fmt::format("nnodes {} is not a multiple of the product {} of the fixed dims",
                                             nnodes, fixed));
  const int rest = static_cast<int>(nnodes / fixed);
  if (free_slots == 0) {
    if (rest != 1)
      throw MpiError(MPI_ERR_DIMS,
                     fmt::format("every dims entry is fixed and their product {} differs from nnodes {}", fixed, nnodes));
    return;
  }
  std::vector<int> factors = Factoriser(rest, free_slots).run(rest);
  std::size_t next = 0;
  for (int& d : dims)
    if (d == 0) d = factors[next++];
}

int cart_size(std::span<const int> dims) {
  std::int64_t n = 1;
  for (int d : dims) {
    n *= d;
    if (n > INT_MAX) throw MpiError(MPI_ERR_DIMS, "the grid has more than INT_MAX processes");
  }
  return static_cast<int>(n);
}

Topology make_cart(std::span<const int> dims, std::span<const int> periods) {
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i] <= 0)
      throw MpiError(MPI_ERR_DIMS, fmt::format("dims[{}] is {}; every extent must be positive", i, dims[i]));
  cart_size(dims);
  Topology t;
  t.kind = MPI_CART;
  t.dims.assign(dims.begin(), dims.end());
  t.periods.reserve(periods.size());
  for (int p : periods) t.periods.push_back(p ? 1 : 0);
  return t;
}

int cart_rank(const Topology& cart, std::span<const int> coords) {
  int rank = 0;
  for (std::size_t i = 0; i < cart.dims.size(); ++i) {
    int n = cart.dims[i], c = coords[i];
    if (cart.periods[i]) {
      c %= n;
      if (c < 0) c += n;
    } else if (c < 0 || c >= n) {
      throw MpiError(MPI_ERR_ARG, fmt::format("coords[{}] = {} is outside the non-periodic dimension of extent {}", i,
                                              coords[i], n));
    }
    rank = rank * n + c;
  }
  return rank;
}

std::vector<int> cart_coords(const Topology& cart, int rank) {
  std::vector<int> coords(cart.dims.size());
  for (std::size_t i = cart.dims.size(); i-- > 0;) {
    coords[i] = rank % cart.dims[i];
    rank /= cart.dims[i];
  }
  return coords;
}

std::pair<int, int> cart_shift(const Topology& cart, int rank, int direction, int displacement) {
  check_direction(cart, direction);
  std::vector<int> coords = cart_coords(cart, rank);
  const int n = cart.dims[direction], here = coords[direction];
  auto moved = [&](std::int64_t by) {
    std::int64_t c = here + by;
    if (cart.periods[direction]) {
      c %= n;
      if (c < 0) c += n;
    } else if (c < 0 || c >= n) {
      return MPI_PROC_NULL;
    }
    coords[direction] = static_cast<int>(c);
    return cart_rank(cart, coords);
  };
  int source = moved(-static_cast<std::int64_t>(displacement));
  int destination = moved(displacement);
  return {source, destination};
}

CartSub cart_sub(const Topology& cart, int rank, std::span<const int> remain_dims) {
  const std::vector<int> mine = cart_coords(cart, rank);
  std::vector<int> sub_dims, sub_periods;
  for (std::size_t i = 0; i < cart.dims.size(); ++i) {
    if (!remain_dims[i]) continue;
    sub_dims.push_back(cart.dims[i]);
    sub_periods.push_back(cart.periods[i]);
  }
  CartSub result;
  result.topology = make_cart(sub_dims, sub_periods);
  // The members vary the kept coordinates, row-major, the others fixed at mine.
  const int n = cart_size(sub_dims);
  std::vector<int> coords = mine;
  for (int s = 0; s < n; ++s) {
    int rest = s;
    for (std::size_t i = cart.dims.size(); i-- > 0;) {
      if (!remain_dims[i]) continue;
      coords[i] = rest % cart.dims[i];
      rest /= cart.dims[i];
    }
    result.ranks.push_back(cart_rank(cart, coords));
  }
  return result;
}

Topology make_graph(std::span<const int> index, std::span<const int> edges) {
  const int nnodes = static_cast<int>(index.size());
  int previous = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < previous)
      throw MpiError(MPI_ERR_ARG, fmt::format("index[{}] = {} is smaller than the entry before it ({}); index is "
                                              "the cumulative neighbour count",
                                              i, index[i], previous));
    previous = index[i];
  }
  if (static_cast<std::size_t>(previous) != edges.size())
    throw MpiError(MPI_ERR_ARG, "the edge count does not match index[nnodes-1]");
  for (std::size_t e = 0; e < edges.size(); ++e)
    if (edges[e] < 0 || edges[e] >= nnodes)
      throw MpiError(MPI_ERR_ARG, fmt::format("edges[{}] = {} is not a node of the {}-node graph", e, edges[e], nnodes));
  Topology t;
  t.kind = MPI_GRAPH;
  t.index.assign(index.begin(), index.end());
  t.edges.assign(edges.begin(), edges.end());
  return t;
}

std::vector<int> graph_neighbors(const Topology& graph, int rank) {
  if (rank < 0 || rank >= static_cast<int>(graph.index.size()))
    throw MpiError(MPI_ERR_RANK, fmt::format("rank {} is not a node of the {}-node graph", rank, graph.index.size()));
  int begin = rank == 0 ? 0 : graph.index[rank - 1];
  int end = graph.index[rank];
  return {graph.edges.begin() + begin, graph.edges.begin() + end};
}

Neighborhood neighborhood(const Topology& topology, int rank) {
  Neighborhood n;
  switch (topology.kind) {
    case MPI_CART:
      for (int d = 0; d < static_cast<int>(topology.dims.size()); ++d) {
        auto [source, destination] = cart_shift(topology, rank, d, 1);
        n.sources.push_back(source);
        n.sources.push_back(destination);
      }
      n.destinations = n.sources;
      n.swap_receive_pairs = true;
      break;
    case MPI_GRAPH:
      n.sources = graph_neighbors(topology, rank);
      n.destinations = n.sources;
      break;
    case MPI_DIST_GRAPH:
      n.sources = topology.sources;
      n.destinations = topology.destinations;
      break;
    default:
      throw MpiError(MPI_ERR_TOPOLOGY, "the communicator has no process topology");
  }
  return n;
}

}  // namespace gridmpi::core
