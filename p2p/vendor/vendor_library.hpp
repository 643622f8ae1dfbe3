// The vendor MPI (the site's own MPI: here Debian's Open MPI or MPICH),
// loaded as a plug-in into a link-map namespace of its own, so that its
// MPI_* symbols and ours never resolve to each other.  Owner: p2p/vendor/.
//
// The plug-in (p2p/vendor/plugin.c, built once per vendor MPI found at build
// time with that vendor's own compiler wrapper) exports a C function table
// (vendor_abi.h); nothing C++ crosses the namespace boundary.
//
// How a process comes to use it: `mpirun -vendor NAME` starts the job with
// the vendor's own mpiexec and puts in every rank's environment
//   GRIDMPI_VENDOR=NAME                 (openmpi, mpich, or a site-defined name)
//   GRIDMPI_VENDOR_PLUGIN=/path/to/libgridmpi-vendor-NAME.so
// Such ranks have no _YAMPI_MYRANK: at MPI_Init the runtime opens the
// library first (open_process_library), and the rank inside the cluster is
// the vendor's MPI_COMM_WORLD rank (the size must equal _YAMPI_NPROCS).
// The vendor transport (p2p/vendor/vendor_transport.hpp) is created only
// when process_library() is set, and reaches the ranks of the same cluster.
#pragma once
#include <memory>
#include <string>

struct gridmpi_vendor_ops;  // vendor_abi.h

namespace gridmpi::p2p::vendor {

class Library {
 public:
  // Loads the plug-in at plugin_path with dlmopen(LM_ID_NEWLM) and calls the
  // vendor's MPI_Init_thread asking for thread_level (an MPI_THREAD_* value;
  // the vendor may grant less: provided_thread_level()).  Throws
  // std::runtime_error with one line naming the file and the cause (missing
  // file, not a gridmpi plug-in, ABI version mismatch, the vendor's init
  // failing) and what to do about it.
  static std::unique_ptr<Library> open(const std::string& plugin_path, int thread_level);
  ~Library();  // finalizes the vendor MPI if finalize() was not called

  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  int rank() const noexcept;                   // the vendor's MPI_COMM_WORLD rank
  int size() const noexcept;                   // and size
  int provided_thread_level() const noexcept;  // what MPI_Init_thread granted
  std::string version() const;                 // MPI_Get_library_version, first line
  const std::string& path() const noexcept;
  const gridmpi_vendor_ops& ops() const noexcept;

  void finalize();                      // the vendor's MPI_Finalize (once)
  [[noreturn]] void abort(int code);    // the vendor's MPI_Abort

 private:
  Library() = default;
  struct State;
  std::unique_ptr<State> state_;
};

// The process's vendor library: opened by the runtime at MPI_Init when
// GRIDMPI_VENDOR_PLUGIN is set, before anything else (the rank comes from
// it); used by the vendor transport; finalized and released by
// close_process_library() at the end of MPI_Finalize, after the transports
// are shut down.  process_library() is null in every other process.
Library* process_library() noexcept;
Library& open_process_library(const std::string& plugin_path, int thread_level);
void close_process_library() noexcept;

}  // namespace gridmpi::p2p::vendor
