// The wide-area collectives: Barrier, Bcast, Reduce, Allreduce, Allgather and
// Alltoall on communicators that span clusters when every cluster of the job
// runs gridmpi (no third-party IMPI client, core::JobLayout::lam_client).
// They use every inter-cluster path at once instead of funnelling the data
// through one pair of masters, and they cross the wide area once where the
// IMPI phases cross it twice; a cost model fed by the latency and bandwidth
// measured at MPI_Init for each level (inside a cluster, between clusters)
// picks, per call, between them and the IMPI two-tier algorithms
// (core/coll/impi.hpp).  With a third-party client in the job the IMPI
// phases run unchanged (interoperability first).
//
// coll.wan (GRIDMPI_COLL_WAN) = auto | impi | leaders | split forces a
// family; a collective without that variant uses the model's choice.  See
// core/coll/README.md, "Wide-area collectives", for the algorithms, the
// model and the measurements.
#pragma once
#include <string_view>

#include "core/coll/algorithm.hpp"
#include "core/group.hpp"

namespace gridmpi::coll::wan {

// The algorithms a call can take.
enum class Variant { impi, leaders, split };
std::string_view variant_name(Variant v);

// The machine as the model sees it: one-way latency (s) and time per byte
// (s/byte) of each level.  Equal in every process of the job (computed by
// world rank 0 from the measurements of every cluster's master and sent to
// all).
struct Model {
  double local_latency = 0;  // a message inside a cluster
  double local_byte = 0;     // per byte inside a cluster
  double wan_latency = 0;    // a message between clusters (half the round trip)
  double path_byte = 0;      // per byte through one connection between clusters (its TCP window / RTT)
  double link_byte = 0;      // per byte of the link between two clusters (impi.link_bandwidth)
};

// Measures the levels on MPI_COMM_WORLD (a collective over the whole job,
// called by MPI_Init when the job spans gridmpi clusters only) and keeps the
// model.  Cost: three round trips between master 0 and every other master,
// a few inside each cluster.
void calibrate(core::Comm& world);
// The model (all zero before calibrate).
const Model& model();
// Unit tests: the model as if calibrate() had measured it.
void set_model_for_tests(const Model& model);
// Whether calibrate() found a job whose clusters all run gridmpi (and
// coll.wan is not "impi").
bool enabled();

// The model's estimate of collective `kind` in `variant` for a message of
// `bytes` (the whole message for Bcast/Reduce/Allreduce, one block for
// Allgather/Alltoall) on a communicator spread as `clients`, the root in
// cluster root_client (-1: no root); negative when the variant does not
// exist for the kind or does not apply.
double estimate(Kind kind, Variant variant, std::size_t bytes, const core::ClientMap& clients, int root_client);
// The variant for a call: coll.wan when that variant exists for the kind,
// else the cheapest estimate.
Variant choose(Kind kind, std::size_t bytes, const core::ClientMap& clients, int root_client);

// Runs collective K on c (c.clients set) when the wide-area collectives
// apply to it; false: the caller runs the IMPI algorithm.
template <Kind K> bool run(const Args<K>& a, core::Comm& c);

}  // namespace gridmpi::coll::wan
