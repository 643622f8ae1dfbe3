// The one runtime object of a process: created by MPI_Init, destroyed by
// MPI_Finalize.  Owner: core/runtime.cpp.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>

namespace gridmpi::request { class Engine; }
namespace gridmpi::launcher { class ControlClient; }

namespace gridmpi::core {

struct Runtime {
  int world_rank = 0;
  int world_size = 1;
  int thread_level = MPI_THREAD_SINGLE;
  std::string processor_name;
  std::unique_ptr<launcher::ControlClient> control;  // null for a singleton (no mpirun)
  std::unique_ptr<request::Engine> engine;
};

enum class State { not_initialized, initialized, finalized };
State state() noexcept;
// The runtime; throws MpiError(MPI_ERR_OTHER) outside Init..Finalize.
Runtime& runtime();

}  // namespace gridmpi::core
