// The IMPI collectives: the blocking collectives of intracommunicators whose
// members span >= 2 IMPI clients (Comm::clients set, core/job_layout.hpp).
// The entry points of coll.hpp hand such calls here (select.cpp), so that a
// third-party IMPI implementation in another cluster takes part in them.
//
// Every collective = local phases inside each client (the existing
// algorithms, on the hidden Comm::client_comm, which no other traffic uses)
// + global phases among the masters (the lowest comm rank of each client)
// on the communicator's collective context with the IMPI tags below.
// Barrier, Bcast, Reduce and Allreduce follow docs/impi-protocol.md 10
// message for message; the others are our own two-tier designs (see
// core/coll/README.md, "IMPI collectives"): their global messages carry the
// external32 packing of the data as MPI_PACKED, so that clusters of
// different data representations can forward each other's blocks.
//
// Linear global phases when the number of masters is at most
// IMPI_COLL_MAXLINEAR (max_linear()), binomial trees above.
#pragma once
#include <mpi.h>

#include "core/coll/algorithm.hpp"
#include "core/group.hpp"

namespace gridmpi::coll::impi {

// The tags of docs/impi-protocol.md 9 (LAM's values), on Comm::coll_context().
namespace tag {
inline constexpr int barrier = 110, bcast = 120, gather = 130, gatherv = 140, scatter = 150,
                     scatterv = 160, alltoall = 170, alltoallv = 180, reduce = 190, scan = 200;
}
// IMPI also names Comm_dup 210, Intercomm_merge 220 and Comm_free 230: the
// non-blocking collectives of a multi-client communicator take their tags
// from here up (coll::nb::next_tag), so they never meet IMPI traffic.
inline constexpr int first_tag_after_impi = 256;

// IMPI_COLL_MAXLINEAR: linear global phases up to this many masters (as LAM:
// num_masters <= max_linear).  The job layout's value; a fake layout
// (impi.fake_clients) reads the IMPI_COLL_MAXLINEAR parameter here.
int max_linear();

void barrier(const BarrierArgs&, core::Comm&);
void bcast(const BcastArgs&, core::Comm&);
void reduce(const ReduceArgs&, core::Comm&);
void allreduce(const ReduceArgs&, core::Comm&);
void gather(const GatherArgs&, core::Comm&);
void gatherv(const GathervArgs&, core::Comm&);
void scatter(const GatherArgs&, core::Comm&);
void scatterv(const ScattervArgs&, core::Comm&);
void allgather(const GatherArgs&, core::Comm&);
void allgatherv(const GathervArgs&, core::Comm&);
void alltoall(const GatherArgs&, core::Comm&);
void alltoallv(const AlltoallvArgs&, core::Comm&);
void alltoallw(const AlltoallwArgs&, core::Comm&);
void reduce_scatter(const ReduceScatterArgs&, core::Comm&);
void reduce_scatter_block(const ReduceArgs&, core::Comm&);
void scan(const ReduceArgs&, core::Comm&);
void exscan(const ReduceArgs&, core::Comm&);

// The IMPI algorithm of collective K (select.cpp's dispatch).
template <Kind K>
void run(const Args<K>& a, core::Comm& c) {
  if constexpr (K == Kind::barrier) barrier(a, c);
  else if constexpr (K == Kind::bcast) bcast(a, c);
  else if constexpr (K == Kind::gather) gather(a, c);
  else if constexpr (K == Kind::gatherv) gatherv(a, c);
  else if constexpr (K == Kind::scatter) scatter(a, c);
  else if constexpr (K == Kind::scatterv) scatterv(a, c);
  else if constexpr (K == Kind::allgather) allgather(a, c);
  else if constexpr (K == Kind::allgatherv) allgatherv(a, c);
  else if constexpr (K == Kind::alltoall) alltoall(a, c);
  else if constexpr (K == Kind::alltoallv) alltoallv(a, c);
  else if constexpr (K == Kind::alltoallw) alltoallw(a, c);
  else if constexpr (K == Kind::reduce) reduce(a, c);
  else if constexpr (K == Kind::allreduce) allreduce(a, c);
  else if constexpr (K == Kind::reduce_scatter) reduce_scatter(a, c);
  else if constexpr (K == Kind::reduce_scatter_block) reduce_scatter_block(a, c);
  else if constexpr (K == Kind::scan) scan(a, c);
  else if constexpr (K == Kind::exscan) exscan(a, c);
}

}  // namespace gridmpi::coll::impi
