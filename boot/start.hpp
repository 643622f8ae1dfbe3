// The start-up layer: everything a process does to find its place in the
// job before the engine opens its transports, and the matching last steps.
// core/runtime.cpp calls it from MPI_Init (or the first MPI_Session_init)
// and MPI_Finalize; it sits below core and above the transports:
//
//   * a vendor MPI (mpirun -vendor): open the site's MPI library first, its
//     MPI_COMM_WORLD rank is this process's (p2p/vendor/vendor_library.hpp);
//   * mpirun's control service (boot/control_client.hpp): rank, size, job
//     cookie, the exchanges of MPI_Init, and the abort and finalize reports;
//   * a multi-cluster job (mpirun -client): this process's IMPI host, the
//     job the server put together, the world rank (impi/startup.hpp);
//   * the job layout: which cluster each rank belongs to
//     (boot/job_layout.hpp), from the IMPI job or impi.fake_clients.
//
// Everything returns in one Process; failures throw MpiError with a message
// that names the cause.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "boot/job_layout.hpp"
#include "impi/startup.hpp"

namespace gridmpi::boot {

class ControlClient;

// What the start-up found out about this process.
struct Process {
  int world_rank = 0;
  int world_size = 1;
  int local_rank = 0;  // the rank inside this cluster (the control service's)
  std::uint64_t cookie = 0;
  std::string processor_name;
  // Processor name of every world rank (index = world rank); processes of
  // other clusters are "impi:ADDRESS" (Comm_split_type SHARED never joins
  // clusters).
  std::vector<std::string> host_names;
  JobLayout layout;
  std::shared_ptr<impi::Startup> impi;  // a multi-cluster job (mpirun -client); else null

  // Publishes this process's value of `key` inside its cluster (mpirun's
  // exchange) and returns every world rank's; the other clusters' ranks get
  // `other`.  A singleton gets its own value.
  std::vector<std::string> exchange(const std::string& key, const std::string& value,
                                    const std::string& other = "") const;
};

// What the layers above tell the start-up.
struct StartOptions {
  int vendor_thread_level = 0;     // the thread level to ask of a vendor MPI (mpirun -vendor)
  std::string native_description;  // core::native_representation(): announced to other clusters
};

// The start-up.  Throws MpiError.  What was set up before a failure stays
// (the control connection reports the cause, the IMPI listener stays open)
// until the process ends.
Process start(const StartOptions& options);
// mpirun's control connection from start() on (also while start() fails);
// null before, after release(), and in a singleton.
ControlClient* control() noexcept;
// Tells mpirun that this process reached MPI_Finalize.
void finish();
// The last step, after the engine and its transports are gone: drops the
// control connection and closes the vendor MPI.
void release();

}  // namespace gridmpi::boot
