// C API of process topologies (MPI-3.1 chapter 7): Cartesian, graph and
// distributed graph communicators, their queries, and the neighbourhood
// collectives.  Owner: topologies.
//
// reorder is ignored: rank i of a topology communicator is rank i of the old
// one.  A new topology communicator is made over the first n ranks (Cart,
// Graph), every rank (Dist_graph) or a sub-grid (Cart_sub) with the
// ordinary constructors of comm.cpp and inherits the old one's error handler.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "core/api.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/nbc.hpp"
#include "core/coll/neighbor.hpp"
#include "core/datatype.hpp"
#include "core/errhandler.hpp"
#include "core/group.hpp"
#include "core/runtime.hpp"
#include "core/topo.hpp"
#include "request/request.hpp"

namespace {

using gridmpi::MpiError;
using gridmpi::core::require_out;
using gridmpi::core::Comm;
using gridmpi::core::Topology;
namespace core = gridmpi::core;
namespace coll = gridmpi::coll;

// ---- argument checks -----------------------------------------------------------


void require_array(const void* p, int length, const char* name) {
  if (length > 0 && p == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{} is NULL", name));
}

Comm& intracomm(MPI_Comm handle, const char* function) {
  core::require_initialized(function);
  Comm& c = core::comm(handle);
  if (c.is_inter())
    throw MpiError(MPI_ERR_COMM, fmt::format("{} needs an intracommunicator; this one is an intercommunicator",
                                             function));
  return c;
}

// An intracommunicator with a topology (of `kind` unless MPI_UNDEFINED).
Comm& topology_comm(MPI_Comm handle, const char* function, int kind = MPI_UNDEFINED) {
  Comm& c = intracomm(handle, function);
  core::topology_of(c, function, kind);
  return c;
}

void check_rank(int rank, const Comm& c, const char* what) {
  if (rank < 0 || rank >= c.size)
    throw MpiError(MPI_ERR_RANK, fmt::format("{} {} is not a rank of the communicator (size {})", what, rank, c.size));
}

void check_count(int count, const char* what) {
  if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{} is negative ({})", what, count));
}

void check_counts(const int* counts, int n, const char* what) {
  require_array(counts, n, what);
  for (int i = 0; i < n; ++i)
    if (counts[i] < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{}[{}] is negative ({})", what, i, counts[i]));
}

void check_type(MPI_Datatype type, const char* what) {
  try {
    core::committed_datatype(type);
  } catch (const MpiError& e) {
    throw MpiError(e.error_class(), fmt::format("{}: {}", what, e.what()));
  }
}

void check_types(const MPI_Datatype* types, int n, const char* what) {
  require_array(types, n, what);
  for (int i = 0; i < n; ++i) check_type(types[i], fmt::format("{}[{}]", what, i).c_str());
}

void forbid_in_place(const void* sendbuf, const void* recvbuf) {
  if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE)
    throw MpiError(MPI_ERR_BUFFER, "MPI_IN_PLACE is not defined for the neighbourhood collectives");
}

void check_ndims(int ndims) {
  if (ndims < 0) throw MpiError(MPI_ERR_DIMS, fmt::format("ndims {} is negative", ndims));
}

// ---- making topology communicators ---------------------------------------------

// The new communicator takes the old one's error handler (MPI-3.1 8.3).
void inherit_errhandler(const Comm& parent, Comm& c) {
  if (c.errhandler == parent.errhandler) return;
  core::retain_errhandler(parent.errhandler);
  core::release_errhandler(c.errhandler);
  c.errhandler = parent.errhandler;
}

MPI_Comm attach(const Comm& parent, MPI_Comm handle, Topology topology) {
  if (handle == MPI_COMM_NULL) return handle;
  Comm& c = core::comm(handle);
  c.topology = std::make_shared<const Topology>(std::move(topology));
  inherit_errhandler(parent, c);
  return handle;
}

// A communicator over ranks 0..n-1 of parent (MPI_COMM_NULL elsewhere).
MPI_Comm first_ranks(Comm& parent, int n, Topology topology) {
  std::vector<int> members(parent.group->members.begin(), parent.group->members.begin() + n);
  core::Group g = core::make_group(std::move(members), core::runtime().world_rank);
  return attach(parent, core::comm_create(parent, g), std::move(topology));
}

std::vector<int> weights_or_empty(const int* weights, int degree, bool weighted, const char* what) {
  if (!weighted || degree == 0) return {};
  if (weights == nullptr || weights == MPI_WEIGHTS_EMPTY)
    throw MpiError(MPI_ERR_ARG, fmt::format("{} is missing for a weighted graph (give MPI_UNWEIGHTED for an "
                                            "unweighted one)",
                                            what));
  for (int i = 0; i < degree; ++i)
    if (weights[i] < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}[{}] is negative ({})", what, i, weights[i]));
  return {weights, weights + degree};
}

// MPI_Dist_graph_create: every edge (s, d, w) named anywhere is sent to s
// (as an outgoing edge to d) and to d (as an incoming edge from s), three
// ints per record; each process then lists its edges by the rank that named
// them, in the order named.
Topology gather_dist_graph(Comm& c, int n, const int sources[], const int degrees[], const int destinations[],
                           const int weights[], bool weighted) {
  enum : int { incoming = 0, outgoing = 1 };
  std::vector<std::vector<int>> to(c.size);
  int edge = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < degrees[i]; ++j, ++edge) {
      int s = sources[i], d = destinations[edge], w = weighted ? weights[edge] : 0;
      to[s].insert(to[s].end(), {outgoing, d, w});
      to[d].insert(to[d].end(), {incoming, s, w});
    }
  }
  std::vector<int> send_counts(c.size), send_displs(c.size), recv_counts(c.size), recv_displs(c.size);
  std::vector<int> outgoing_records;
  for (int r = 0; r < c.size; ++r) {
    send_counts[r] = static_cast<int>(to[r].size());
    send_displs[r] = static_cast<int>(outgoing_records.size());
    outgoing_records.insert(outgoing_records.end(), to[r].begin(), to[r].end());
  }
  coll::alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, c);
  std::exclusive_scan(recv_counts.begin(), recv_counts.end(), recv_displs.begin(), 0);
  std::vector<int> records(static_cast<std::size_t>(recv_displs.back()) + recv_counts.back());
  coll::alltoallv(outgoing_records.data(), send_counts.data(), send_displs.data(), MPI_INT, records.data(),
                  recv_counts.data(), recv_displs.data(), MPI_INT, c);
  Topology t;
  t.kind = MPI_DIST_GRAPH;
  t.weighted = weighted;
  for (std::size_t k = 0; k + 2 < records.size(); k += 3) {
    bool in = records[k] == incoming;
    (in ? t.sources : t.destinations).push_back(records[k + 1]);
    if (weighted) (in ? t.source_weights : t.destination_weights).push_back(records[k + 2]);
  }
  return t;
}

template <class Make>
void run_or_start(Comm& c, MPI_Request* request, Make&& make) {
  int tag = coll::nb::next_tag(c);
  if (request) *request = coll::nb::start(make(tag), c)->handle;
  else coll::nb::run(make(tag));
}

}  // namespace

// ---- Cartesian topologies ------------------------------------------------------

extern "C" int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  return core::api_call(MPI_COMM_WORLD, "MPI_Dims_create", [&] {
    core::require_initialized("MPI_Dims_create");
    check_ndims(ndims);
    require_array(dims, ndims, "dims");
    core::dims_create(nnodes, std::span<int>(dims, static_cast<std::size_t>(ndims)));
  });
}
GRIDMPI_WEAK(Dims_create)

extern "C" int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                                MPI_Comm* comm_cart) {
  (void)reorder;
  return core::api_call(comm_old, "MPI_Cart_create", [&] {
    Comm& parent = intracomm(comm_old, "MPI_Cart_create");
    check_ndims(ndims);
    require_array(dims, ndims, "dims");
    require_array(periods, ndims, "periods");
    require_out(comm_cart, "comm_cart");
    *comm_cart = MPI_COMM_NULL;  // what a caller that gets an error code sees
    std::size_t n = static_cast<std::size_t>(ndims);
    Topology t = core::make_cart({dims, n}, {periods, n});
    int size = core::cart_size(t.dims);
    if (size > parent.size)
      throw MpiError(MPI_ERR_ARG, fmt::format("the grid has {} processes but the communicator only {}", size,
                                              parent.size));
    *comm_cart = first_ranks(parent, size, std::move(t));
  });
}
GRIDMPI_WEAK(Cart_create)

extern "C" int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  return core::api_call(comm, "MPI_Cartdim_get", [&] {
    Comm& c = topology_comm(comm, "MPI_Cartdim_get", MPI_CART);
    require_out(ndims, "ndims");
    *ndims = static_cast<int>(c.topology->dims.size());
  });
}
GRIDMPI_WEAK(Cartdim_get)

extern "C" int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  return core::api_call(comm, "MPI_Cart_get", [&] {
    Comm& c = topology_comm(comm, "MPI_Cart_get", MPI_CART);
    const Topology& t = *c.topology;
    const int n = std::min(maxdims, static_cast<int>(t.dims.size()));
    require_array(dims, n, "dims");
    require_array(periods, n, "periods");
    require_array(coords, n, "coords");
    std::vector<int> mine = core::cart_coords(t, c.rank);
    for (int i = 0; i < n; ++i) {
      dims[i] = t.dims[i];
      periods[i] = t.periods[i];
      coords[i] = mine[i];
    }
  });
}
GRIDMPI_WEAK(Cart_get)

extern "C" int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  return core::api_call(comm, "MPI_Cart_rank", [&] {
    Comm& c = topology_comm(comm, "MPI_Cart_rank", MPI_CART);
    const Topology& t = *c.topology;
    require_array(coords, static_cast<int>(t.dims.size()), "coords");
    require_out(rank, "rank");
    *rank = core::cart_rank(t, {coords, t.dims.size()});
  });
}
GRIDMPI_WEAK(Cart_rank)

extern "C" int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  return core::api_call(comm, "MPI_Cart_coords", [&] {
    Comm& c = topology_comm(comm, "MPI_Cart_coords", MPI_CART);
    check_rank(rank, c, "rank");
    const Topology& t = *c.topology;
    if (maxdims < static_cast<int>(t.dims.size()))
      throw MpiError(MPI_ERR_ARG, fmt::format("maxdims {} is smaller than the {} dimensions of the grid", maxdims,
                                              t.dims.size()));
    require_array(coords, static_cast<int>(t.dims.size()), "coords");
    std::vector<int> result = core::cart_coords(t, rank);
    std::copy(result.begin(), result.end(), coords);
  });
}
GRIDMPI_WEAK(Cart_coords)

extern "C" int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  return core::api_call(comm, "MPI_Cart_shift", [&] {
    Comm& c = topology_comm(comm, "MPI_Cart_shift", MPI_CART);
    require_out(rank_source, "rank_source");
    require_out(rank_dest, "rank_dest");
    auto [source, dest] = core::cart_shift(*c.topology, c.rank, direction, disp);
    *rank_source = source;
    *rank_dest = dest;
  });
}
GRIDMPI_WEAK(Cart_shift)

extern "C" int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return core::api_call(comm, "MPI_Cart_sub", [&] {
    Comm& c = topology_comm(comm, "MPI_Cart_sub", MPI_CART);
    const Topology& t = *c.topology;
    require_array(remain_dims, static_cast<int>(t.dims.size()), "remain_dims");
    require_out(newcomm, "newcomm");
    core::CartSub sub = core::cart_sub(t, c.rank, {remain_dims, t.dims.size()});
    // Colour: the smallest rank of my sub-grid; key: my rank within it.
    int key = static_cast<int>(std::find(sub.ranks.begin(), sub.ranks.end(), c.rank) - sub.ranks.begin());
    MPI_Comm h = core::comm_split(c, sub.ranks.front(), key);
    *newcomm = attach(c, h, std::move(sub.topology));
  });
}
GRIDMPI_WEAK(Cart_sub)

extern "C" int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  return core::api_call(comm, "MPI_Cart_map", [&] {
    Comm& c = intracomm(comm, "MPI_Cart_map");
    check_ndims(ndims);
    require_array(dims, ndims, "dims");
    require_out(newrank, "newrank");
    std::size_t n = static_cast<std::size_t>(ndims);
    std::vector<int> no_periods(n, 0);
    Topology t = core::make_cart({dims, n}, periods ? std::span<const int>(periods, n) : no_periods);
    int size = core::cart_size(t.dims);
    if (size > c.size)
      throw MpiError(MPI_ERR_ARG, fmt::format("the grid has {} processes but the communicator only {}", size, c.size));
    *newrank = c.rank < size ? c.rank : MPI_UNDEFINED;
  });
}
GRIDMPI_WEAK(Cart_map)

// ---- graph topologies --------------------------------------------------------

namespace {

Topology checked_graph(const Comm& c, int nnodes, const int index[], const int edges[]) {
  if (nnodes < 0) throw MpiError(MPI_ERR_ARG, fmt::format("nnodes {} is negative", nnodes));
  if (nnodes > c.size)
    throw MpiError(MPI_ERR_ARG, fmt::format("the graph has {} nodes but the communicator only {} processes", nnodes,
                                            c.size));
  require_array(index, nnodes, "index");
  const int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
  if (nedges < 0) throw MpiError(MPI_ERR_ARG, fmt::format("index[nnodes-1] = {} is negative", nedges));
  require_array(edges, nedges, "edges");
  return core::make_graph({index, static_cast<std::size_t>(nnodes)}, {edges, static_cast<std::size_t>(nedges)});
}

}  // namespace

extern "C" int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                                 MPI_Comm* comm_graph) {
  (void)reorder;
  return core::api_call(comm_old, "MPI_Graph_create", [&] {
    Comm& parent = intracomm(comm_old, "MPI_Graph_create");
    require_out(comm_graph, "comm_graph");
    *comm_graph = MPI_COMM_NULL;  // what a caller that gets an error code sees
    Topology t = checked_graph(parent, nnodes, index, edges);
    *comm_graph = first_ranks(parent, nnodes, std::move(t));
  });
}
GRIDMPI_WEAK(Graph_create)

extern "C" int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  return core::api_call(comm, "MPI_Graphdims_get", [&] {
    Comm& c = topology_comm(comm, "MPI_Graphdims_get", MPI_GRAPH);
    require_out(nnodes, "nnodes");
    require_out(nedges, "nedges");
    *nnodes = static_cast<int>(c.topology->index.size());
    *nedges = static_cast<int>(c.topology->edges.size());
  });
}
GRIDMPI_WEAK(Graphdims_get)

extern "C" int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  return core::api_call(comm, "MPI_Graph_get", [&] {
    Comm& c = topology_comm(comm, "MPI_Graph_get", MPI_GRAPH);
    const Topology& t = *c.topology;
    const int ni = std::min(maxindex, static_cast<int>(t.index.size()));
    const int ne = std::min(maxedges, static_cast<int>(t.edges.size()));
    require_array(index, ni, "index");
    require_array(edges, ne, "edges");
    std::copy_n(t.index.begin(), std::max(ni, 0), index);
    std::copy_n(t.edges.begin(), std::max(ne, 0), edges);
  });
}
GRIDMPI_WEAK(Graph_get)

extern "C" int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  return core::api_call(comm, "MPI_Graph_neighbors_count", [&] {
    Comm& c = topology_comm(comm, "MPI_Graph_neighbors_count", MPI_GRAPH);
    check_rank(rank, c, "rank");
    require_out(nneighbors, "nneighbors");
    *nneighbors = static_cast<int>(core::graph_neighbors(*c.topology, rank).size());
  });
}
GRIDMPI_WEAK(Graph_neighbors_count)

extern "C" int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  return core::api_call(comm, "MPI_Graph_neighbors", [&] {
    Comm& c = topology_comm(comm, "MPI_Graph_neighbors", MPI_GRAPH);
    check_rank(rank, c, "rank");
    std::vector<int> all = core::graph_neighbors(*c.topology, rank);
    const int n = std::min(maxneighbors, static_cast<int>(all.size()));
    require_array(neighbors, n, "neighbors");
    std::copy_n(all.begin(), std::max(n, 0), neighbors);
  });
}
GRIDMPI_WEAK(Graph_neighbors)

extern "C" int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  return core::api_call(comm, "MPI_Graph_map", [&] {
    Comm& c = intracomm(comm, "MPI_Graph_map");
    require_out(newrank, "newrank");
    checked_graph(c, nnodes, index, edges);
    *newrank = c.rank < nnodes ? c.rank : MPI_UNDEFINED;
  });
}
GRIDMPI_WEAK(Graph_map)

// ---- distributed graph topologies ----------------------------------------------

extern "C" int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                               const int sourceweights[], int outdegree, const int destinations[],
                                               const int destweights[], MPI_Info info, int reorder,
                                               MPI_Comm* comm_dist_graph) {
  (void)info;  // no hints are acted on
  (void)reorder;
  return core::api_call(comm_old, "MPI_Dist_graph_create_adjacent", [&] {
    Comm& parent = intracomm(comm_old, "MPI_Dist_graph_create_adjacent");
    require_out(comm_dist_graph, "comm_dist_graph");
    if (indegree < 0 || outdegree < 0)
      throw MpiError(MPI_ERR_ARG, fmt::format("indegree {} / outdegree {}: degrees must not be negative", indegree,
                                              outdegree));
    require_array(sources, indegree, "sources");
    require_array(destinations, outdegree, "destinations");
    for (int i = 0; i < indegree; ++i) check_rank(sources[i], parent, "a source");
    for (int i = 0; i < outdegree; ++i) check_rank(destinations[i], parent, "a destination");
    Topology t;
    t.kind = MPI_DIST_GRAPH;
    t.weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    t.sources.assign(sources, sources + indegree);
    t.destinations.assign(destinations, destinations + outdegree);
    t.source_weights = weights_or_empty(sourceweights, indegree, t.weighted, "sourceweights");
    t.destination_weights = weights_or_empty(destweights, outdegree, t.weighted, "destweights");
    *comm_dist_graph = first_ranks(parent, parent.size, std::move(t));
  });
}
GRIDMPI_WEAK(Dist_graph_create_adjacent)

extern "C" int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                      const int destinations[], const int weights[], MPI_Info info, int reorder,
                                      MPI_Comm* comm_dist_graph) {
  (void)info;
  (void)reorder;
  return core::api_call(comm_old, "MPI_Dist_graph_create", [&] {
    Comm& parent = intracomm(comm_old, "MPI_Dist_graph_create");
    require_out(comm_dist_graph, "comm_dist_graph");
    if (n < 0) throw MpiError(MPI_ERR_ARG, fmt::format("n {} is negative", n));
    require_array(sources, n, "sources");
    require_array(degrees, n, "degrees");
    int nedges = 0;
    for (int i = 0; i < n; ++i) {
      check_rank(sources[i], parent, "a source");
      if (degrees[i] < 0) throw MpiError(MPI_ERR_ARG, fmt::format("degrees[{}] is negative ({})", i, degrees[i]));
      nedges += degrees[i];
    }
    require_array(destinations, nedges, "destinations");
    for (int e = 0; e < nedges; ++e) check_rank(destinations[e], parent, "a destination");
    const bool weighted = weights != MPI_UNWEIGHTED;
    weights_or_empty(weights, nedges, weighted, "weights");
    Topology t = gather_dist_graph(parent, n, sources, degrees, destinations, weights, weighted);
    *comm_dist_graph = first_ranks(parent, parent.size, std::move(t));
  });
}
GRIDMPI_WEAK(Dist_graph_create)

extern "C" int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  return core::api_call(comm, "MPI_Dist_graph_neighbors_count", [&] {
    Comm& c = topology_comm(comm, "MPI_Dist_graph_neighbors_count", MPI_DIST_GRAPH);
    require_out(indegree, "indegree");
    require_out(outdegree, "outdegree");
    require_out(weighted, "weighted");
    *indegree = static_cast<int>(c.topology->sources.size());
    *outdegree = static_cast<int>(c.topology->destinations.size());
    *weighted = c.topology->weighted ? 1 : 0;
  });
}
GRIDMPI_WEAK(Dist_graph_neighbors_count)

extern "C" int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                         int maxoutdegree, int destinations[], int destweights[]) {
  return core::api_call(comm, "MPI_Dist_graph_neighbors", [&] {
    Comm& c = topology_comm(comm, "MPI_Dist_graph_neighbors", MPI_DIST_GRAPH);
    const Topology& t = *c.topology;
    const int ni = std::max(0, std::min(maxindegree, static_cast<int>(t.sources.size())));
    const int no = std::max(0, std::min(maxoutdegree, static_cast<int>(t.destinations.size())));
    require_array(sources, ni, "sources");
    require_array(destinations, no, "destinations");
    std::copy_n(t.sources.begin(), ni, sources);
    std::copy_n(t.destinations.begin(), no, destinations);
    if (t.weighted && sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY && sourceweights)
      std::copy_n(t.source_weights.begin(), ni, sourceweights);
    if (t.weighted && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY && destweights)
      std::copy_n(t.destination_weights.begin(), no, destweights);
  });
}
GRIDMPI_WEAK(Dist_graph_neighbors)

extern "C" int PMPI_Topo_test(MPI_Comm comm, int* status) {
  return core::api_call(comm, "MPI_Topo_test", [&] {
    core::require_initialized("MPI_Topo_test");
    Comm& c = core::comm(comm);
    require_out(status, "status");
    *status = c.topology ? c.topology->kind : MPI_UNDEFINED;
  });
}
GRIDMPI_WEAK(Topo_test)

// ---- neighbourhood collectives -------------------------------------------------

namespace {

struct Degrees {
  int in, out;
};

Degrees degrees_of(const Comm& c) {
  core::Neighborhood n = core::neighborhood(*c.topology, c.rank);
  return {static_cast<int>(n.sources.size()), static_cast<int>(n.destinations.size())};
}

Comm& neighbor_comm(MPI_Comm comm, const char* function, const void* sendbuf, const void* recvbuf,
                    const MPI_Request* request, bool nonblocking) {
  Comm& c = topology_comm(comm, function);
  forbid_in_place(sendbuf, recvbuf);
  if (nonblocking) require_out(request, "request");
  return c;
}

void allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, Comm& c, MPI_Request* request) {
  check_count(sendcount, "sendcount");
  check_count(recvcount, "recvcount");
  check_type(sendtype, "sendtype");
  check_type(recvtype, "recvtype");
  run_or_start(c, request, [&](int tag) {
    return coll::neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c, tag);
  });
}

void allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, Comm& c, MPI_Request* request) {
  Degrees d = degrees_of(c);
  check_count(sendcount, "sendcount");
  check_type(sendtype, "sendtype");
  check_counts(recvcounts, d.in, "recvcounts");
  require_array(displs, d.in, "displs");
  check_type(recvtype, "recvtype");
  run_or_start(c, request, [&](int tag) {
    return coll::neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, c, tag);
  });
}

void alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, Comm& c, MPI_Request* request) {
  check_count(sendcount, "sendcount");
  check_count(recvcount, "recvcount");
  check_type(sendtype, "sendtype");
  check_type(recvtype, "recvtype");
  run_or_start(c, request, [&](int tag) {
    return coll::neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c, tag);
  });
}

void alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
               void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, Comm& c,
               MPI_Request* request) {
  Degrees d = degrees_of(c);
  check_counts(sendcounts, d.out, "sendcounts");
  require_array(sdispls, d.out, "sdispls");
  check_type(sendtype, "sendtype");
  check_counts(recvcounts, d.in, "recvcounts");
  require_array(rdispls, d.in, "rdispls");
  check_type(recvtype, "recvtype");
  run_or_start(c, request, [&](int tag) {
    return coll::neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                    c, tag);
  });
}

void alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
               void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
               Comm& c, MPI_Request* request) {
  Degrees d = degrees_of(c);
  check_counts(sendcounts, d.out, "sendcounts");
  require_array(sdispls, d.out, "sdispls");
  check_types(sendtypes, d.out, "sendtypes");
  check_counts(recvcounts, d.in, "recvcounts");
  require_array(rdispls, d.in, "rdispls");
  check_types(recvtypes, d.in, "recvtypes");
  run_or_start(c, request, [&](int tag) {
    return coll::neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                    recvtypes, c, tag);
  });
}

}  // namespace

extern "C" int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Neighbor_allgather", [&] {
    Comm& c = neighbor_comm(comm, "MPI_Neighbor_allgather", sendbuf, recvbuf, nullptr, false);
    allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c, nullptr);
  });
}
GRIDMPI_WEAK(Neighbor_allgather)

extern "C" int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Ineighbor_allgather", [&] {
    Comm& c = neighbor_comm(comm, "MPI_Ineighbor_allgather", sendbuf, recvbuf, request, true);
    allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c, request);
  });
}
GRIDMPI_WEAK(Ineighbor_allgather)

extern "C" int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                        MPI_Comm comm) {
  return core::api_call(comm, "MPI_Neighbor_allgatherv", [&] {
    Comm& c = neighbor_comm(comm, "MPI_Neighbor_allgatherv", sendbuf, recvbuf, nullptr, false);
    allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, c, nullptr);
  });
}
GRIDMPI_WEAK(Neighbor_allgatherv)

extern "C" int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                         MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Ineighbor_allgatherv", [&] {
    Comm& c = neighbor_comm(comm, "MPI_Ineighbor_allgatherv", sendbuf, recvbuf, request, true);
    allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, c, request);
  });
}
GRIDMPI_WEAK(Ineighbor_allgatherv)

extern "C" int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Neighbor_alltoall", [&] {
    Comm& c = neighbor_comm(comm, "MPI_Neighbor_alltoall", sendbuf, recvbuf, nullptr, false);
    alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c, nullptr);
  });
}
GRIDMPI_WEAK(Neighbor_alltoall)

extern "C" int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return core::api_call(comm, "MPI_Ineighbor_alltoall", [&] {
    Comm& c = neighbor_comm(comm, "MPI_Ineighbor_alltoall", sendbuf, recvbuf, request, true);
    alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c, request);
  });
}
GRIDMPI_WEAK(Ineighbor_alltoall)

extern "C" int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return core::api_call(comm, "MPI_Neighbor_alltoallv", [&] {
    Comm& c = neighbor_comm(comm, "MPI_Neighbor_alltoallv", sendbuf, recvbuf, nullptr, false);
    alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, c, nullptr);
  });
}
GRIDMPI_WEAK(Neighbor_alltoallv)

extern "C" int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                        MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                        MPI_Request* request) {
  return core::api_call(comm, "MPI_Ineighbor_alltoallv", [&] {
    Comm& c = neighbor_comm(comm, "MPI_Ineighbor_alltoallv", sendbuf, recvbuf, request, true);
    alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, c, request);
  });
}
GRIDMPI_WEAK(Ineighbor_alltoallv)

extern "C" int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return core::api_call(comm, "MPI_Neighbor_alltoallw", [&] {
    Comm& c = neighbor_comm(comm, "MPI_Neighbor_alltoallw", sendbuf, recvbuf, nullptr, false);
    alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, c, nullptr);
  });
}
GRIDMPI_WEAK(Neighbor_alltoallw)

extern "C" int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                        const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                        MPI_Request* request) {
  return core::api_call(comm, "MPI_Ineighbor_alltoallw", [&] {
    Comm& c = neighbor_comm(comm, "MPI_Ineighbor_alltoallw", sendbuf, recvbuf, request, true);
    alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, c, request);
  });
}
GRIDMPI_WEAK(Ineighbor_alltoallw)
