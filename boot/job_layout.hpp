// The cluster structure of the job: which IMPI client (cluster) each
// MPI_COMM_WORLD rank belongs to, and the job-wide IMPI collective
// parameters.  Found by the start-up (boot/start.cpp) from the IMPI job map
// or from impi.fake_clients; core keeps it from MPI_Init on
// (core/job_layout.hpp) for communicator creation (the IMPI context-id rule)
// and the collectives (the IMPI two-tier algorithms on communicators that
// span clients).
//
// A single-cluster job is one client.  For tests, the developer parameter
// impi.fake_clients (GRIDMPI_IMPI_FAKE_CLIENTS="2,2": ranks per client, summing
// to the world size) makes a single-cluster job pretend to be several
// clients: every multi-client code path above the transports (context ids,
// IMPI collectives, the IMPI_CLIENT_* attributes) then runs over the
// cluster's own transport.
#pragma once
#include <vector>

#include "p2p/transport.hpp"

namespace gridmpi::boot {

struct JobLayout {
  int nclients = 1;
  int my_client = 0;
  std::vector<int> client_of;     // client of each world rank (empty: all in client 0)
  int coll_xsize = 1024;          // IMPI_COLL_XSIZE (bytes): long protocols from this size
  int coll_maxlinear = 4;         // IMPI_COLL_MAXLINEAR: linear up to this many masters
  bool fake = false;              // impi.fake_clients: one real cluster pretending
  double wan_bandwidth = 1.25e9;  // impi.link_bandwidth (bytes/s): the wide-area collectives' model
  int wan_datalen = 1048576;      // IMPI_C_DATALEN: longer messages between clusters wait for SYNCACK
  // Per client: it is LAM/MPI 7.1.4 (impi.lam_clients, IMPI_LAM_CLIENTS), whose
  // IMPI dialect differs from the protocol's text in two ways, both read in
  // LAM's source and seen on the wire (impi/README.md, "LAM/MPI 7.1.4"):
  //   * user data travels as the sender's native bytes (LAM's processes hand
  //     their native buffers to its IMPI daemon, which forwards them), not as
  //     external32: point-to-point with its ranks is native whatever else
  //     (JobMap::lam_client: the IMPI transport says native_unmarked), and
  //     for the collectives' streams LAM counts as a client of this
  //     machine's representation (boot/start.cpp, assume_lam_native);
  //   * its IMPI Reduce (and so Allreduce = Reduce + Bcast) sends the global
  //     phase on the communicator's point-to-point context, not on the
  //     collective one (its Barrier and Bcast use the collective one): our
  //     Reduce does the same with its ranks (core/coll/impi_reduce.cpp).
  // Empty: no LAM client.
  std::vector<bool> lam_client;
  // How the IMPI collectives carry user data in the streams they relay
  // between clients: native packed bytes when every client holds data alike,
  // else external32 or external64 (impi/datarep.hpp,
  // JobMap::common_representation).
  p2p::DataRepresentation coll_representation = p2p::DataRepresentation::external32;

  bool multi_client() const noexcept { return nclients > 1; }
  int client(int world_rank) const noexcept {
    return client_of.empty() ? 0 : client_of[static_cast<std::size_t>(world_rank)];
  }
  // Whether this world rank belongs to a LAM client.
  bool lam(int world_rank) const noexcept {
    return !lam_client.empty() && lam_client[static_cast<std::size_t>(client(world_rank))];
  }
};

}  // namespace gridmpi::boot
