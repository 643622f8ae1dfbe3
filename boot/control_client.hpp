// The MPI process's side of mpirun's control service.  Owner: boot/ (the
// service itself is mpirun's, launcher/control_service.hpp).
//
// mpirun starts every rank with environment variables naming the control
// service (_YAMPI_PHOST, _YAMPI_PPORT), the rank (_YAMPI_MYRANK), the size
// (_YAMPI_NPROCS) and the job cookie (_YAMPI_PHASH).  A process started
// without them is a singleton (size 1) and has no control client.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gridmpi::boot {

class ControlClient {
 public:
  // Where a vendor MPI's mpiexec placed this process (mpirun -vendor: one
  // environment for all ranks, so the rank is the vendor's).
  struct VendorPlace {
    int rank = 0;
    int size = 1;
  };
  // Connects to mpirun if started by it; returns nullptr for a singleton.
  // Throws std::runtime_error with a clear message when the service is
  // unreachable.  `vendor`: the rank comes from the vendor MPI, not from
  // _YAMPI_MYRANK (which mpirun -vendor does not set).
  static std::unique_ptr<ControlClient> from_environment(std::optional<VendorPlace> vendor = std::nullopt);
  virtual ~ControlClient() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::uint64_t job_cookie() const = 0;

  // Publishes this process's value for `key` and waits until every rank has
  // done the same; returns every rank's value (index = rank).
  virtual std::vector<std::string> exchange(const std::string& key, const std::string& value) = 0;
  // The same fence, answered by mpirun itself (as the IMPI client agent) with
  // one value, or with every rank's when it passes the fence on: the values
  // as they came (the caller checks their number).
  virtual std::vector<std::string> exchange_with_agent(const std::string& key, const std::string& value) = 0;
  // Tells mpirun to terminate the whole job: MPI_Abort, or with
  // `error` set a fatal error (exit_code is its class; mpirun prints
  // "rank N failed (host, pid): message").  Returns after mpirun
  // acknowledged or a short timeout; false when mpirun could not be told.
  virtual bool abort(int exit_code, const std::string& message, bool error = false) = 0;
  // Tells mpirun that this rank reached MPI_Finalize (a later exit is normal).
  virtual void finalize() = 0;
};

}  // namespace gridmpi::boot
