// Process topologies (MPI-3.1 chapter 7): the topology object attached to a
// communicator, and the pure functions behind the topology calls (dims
// factorisation, Cartesian rank/coordinate arithmetic, neighbour lists), so
// that unit tests run them without a job.  Owner: topologies
// (core/topo.*, core/src/api_topo.cpp, core/coll/neighbor.cpp).
//
// A communicator made by MPI_Cart_create, MPI_Graph_create or
// MPI_Dist_graph_create[_adjacent] holds a shared, immutable Topology
// (Comm::topology); MPI_Comm_dup / idup / dup_with_info share it, other
// constructors do not.  Ranks are ranks of the communicator (reorder is
// ignored: rank i of the new communicator is rank i of the old one).
#pragma once
#include <mpi.h>

#include <span>
#include <utility>
#include <vector>

namespace gridmpi::core {

struct Comm;

struct Topology {
  int kind = MPI_UNDEFINED;  // MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH

  // MPI_CART: extent and periodicity of each dimension (row-major ranks).
  std::vector<int> dims;
  std::vector<int> periods;  // 0 or 1

  // MPI_GRAPH: the arguments of MPI_Graph_create (index is cumulative).
  std::vector<int> index;
  std::vector<int> edges;

  // MPI_DIST_GRAPH: this process's adjacency.  Weights are empty when the
  // graph is unweighted.
  std::vector<int> sources, source_weights;
  std::vector<int> destinations, destination_weights;
  bool weighted = false;
};

// The topology of comm; throws MpiError(MPI_ERR_TOPOLOGY) when it has none,
// or (kind != MPI_UNDEFINED) when it has another kind.  `function` names the
// caller in the message.
const Topology& topology_of(const Comm& comm, const char* function, int kind = MPI_UNDEFINED);

// ---- pure functions ----------------------------------------------------------

// MPI_Dims_create: fills the zero entries of dims so that the product is
// nnodes, the filled entries as close to each other as possible and in
// non-increasing order.  Throws MpiError(MPI_ERR_DIMS) when impossible
// (nnodes not divisible by the product of the fixed entries, a negative
// entry) and MPI_ERR_ARG for nnodes < 0 or ndims < 0.
void dims_create(int nnodes, std::span<int> dims);

// Builds and checks a Cartesian topology (MPI_ERR_DIMS for a negative extent).
Topology make_cart(std::span<const int> dims, std::span<const int> periods);
// Number of processes of a Cartesian grid (1 for zero dimensions).
int cart_size(std::span<const int> dims);
// Rank of coords (MPI_Cart_rank): periodic coordinates are wrapped; one out
// of range in a non-periodic dimension throws MpiError(MPI_ERR_ARG).
int cart_rank(const Topology& cart, std::span<const int> coords);
// Coordinates of rank (MPI_Cart_coords).
std::vector<int> cart_coords(const Topology& cart, int rank);
// MPI_Cart_shift: (source, destination), MPI_PROC_NULL off a non-periodic edge.
std::pair<int, int> cart_shift(const Topology& cart, int rank, int direction, int displacement);
// MPI_Cart_sub: the ranks of comm that share my sub-grid, in sub-grid rank
// order, and the sub-grid itself.
struct CartSub {
  std::vector<int> ranks;
  Topology topology;
};
CartSub cart_sub(const Topology& cart, int rank, std::span<const int> remain_dims);

// Builds and checks a graph topology of nnodes nodes (MPI_Graph_create):
// MPI_ERR_ARG for a decreasing index or an edge out of range.
Topology make_graph(std::span<const int> index, std::span<const int> edges);
// Neighbours of rank in a graph topology, in the order given at creation.
std::vector<int> graph_neighbors(const Topology& graph, int rank);

// The neighbourhood of rank for the neighbourhood collectives (MPI-3.1
// 7.6): sources (receive order) and destinations (send order).  Cartesian:
// for each dimension the -1 then the +1 shift neighbour (MPI_PROC_NULL off a
// non-periodic edge, still occupying its slot); graph: the neighbours both
// ways; dist graph: the sources and destinations given at creation.
struct Neighborhood {
  std::vector<int> sources;
  std::vector<int> destinations;
  // Cartesian: the block sent in direction s of a dimension arrives in block
  // s^1 of the receiver, even when both directions reach the same process
  // (a periodic dimension of extent 1 or 2; MPI-4.0 erratum to 7.6).
  bool swap_receive_pairs = false;
};
Neighborhood neighborhood(const Topology& topology, int rank);

}  // namespace gridmpi::core
