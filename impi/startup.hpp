// The process side of the IMPI start-up (docs/impi-protocol.md section 4):
// this process's listening socket and host description, and the job the
// server put together.  The start-up layer (boot/start.cpp) drives it: it
// publishes LocalHost through mpirun (the IMPI client agent) and hands the
// answer to take_job(); the transport (impi/transport.hpp) then adopts the
// listener and makes the host connections.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "impi/job_map.hpp"
#include "impi/relay.hpp"

namespace gridmpi::impi {

// What MPI_Init learnt from the IMPI start-up, handed to the transport.
struct Startup {
  JobMap map;
  int my_rank = 0;      // MPI_COMM_WORLD rank
  int listen_fd = -1;   // this host's listening socket (the transport adopts it)
  LocalHost self;       // what this host publishes (key_local_host)
  // The impi-relay this cluster reaches the others through (mpirun's second
  // answer value, "relay a.b.c.d:port"); connections go through it.
  std::optional<relay::Endpoint> relay;

  // Takes mpirun's answer to the key_local_host exchange (one value: the
  // server's collated labels, behind an impi-relay after a line
  // "relay a.b.c.d:port") and places this process in the job;
  // `local_rank` and `local_size` are the control service's (this cluster's).
  // Throws MpiError with a clear message when the answer is unusable.
  void take_job(const std::vector<std::string>& answer, int local_rank, int local_size);
  ~Startup();
};

// Whether this process was started by mpirun -client (IMPI_CLIENT_ID set).
bool started_as_client();
// Opens this host's listener (address: IMPI_NETWORK, else the interface that
// reaches impi-server, from IMPI_SERVER; port from IMPI_PORT_RANGE) and
// describes it in Startup::self, with the data representation of
// `native_description` (impi/datarep.hpp).  Throws MpiError with a clear
// message.
std::shared_ptr<Startup> open_host(std::string_view native_description);

}  // namespace gridmpi::impi
