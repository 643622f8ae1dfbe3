// The one runtime object of a process: created by MPI_Init, destroyed by
// MPI_Finalize.  Owner: core/runtime.cpp.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

namespace gridmpi::request { class Engine; }
namespace gridmpi::boot { class ControlClient; }

namespace gridmpi::core {

struct Runtime {
  int world_rank = 0;
  int world_size = 1;
  int thread_level = MPI_THREAD_SINGLE;
  std::string processor_name;
  std::unique_ptr<request::Engine> engine;
  // Processor name of every world rank (index = world rank), exchanged in
  // MPI_Init; processes with equal names share a host.
  std::vector<std::string> host_names;
};

enum class State { not_initialized, initialized, finalized };
// The runtime's state: initialized from the first MPI_Init or
// MPI_Session_init to the last of MPI_Finalize and MPI_Session_finalize.
State state() noexcept;
// The world model's state alone (MPI_Initialized, MPI_Finalized): a process
// that uses only sessions never initializes it.
State world_model_state() noexcept;
// The runtime; throws MpiError(MPI_ERR_OTHER) outside Init..Finalize.
Runtime& runtime();

// MPI_Init_thread's work: wires the process up (control service, engine,
// endpoints) and builds MPI_COMM_WORLD / MPI_COMM_SELF, unless a session
// did already.  Returns the thread level provided.  argc/argv may be null.
int initialize(int required_thread_level, int* argc, char*** argv);
// MPI_Finalize's work: attribute delete callbacks on MPI_COMM_SELF (then
// MPI_COMM_WORLD); then, unless sessions are still open, a barrier on
// MPI_COMM_WORLD, engine and control shut-down.
void finalize();
// MPI_Session_init / MPI_Session_finalize (core/src/api_session.cpp): the
// first starts the runtime if MPI_Init has not (at MPI_THREAD_MULTIPLE)
// and returns the runtime's thread level; the last ending after (or
// without) MPI_Finalize shuts it down as MPI_Finalize would.  The runtime
// does not start twice in a process.
int session_started();
void session_ended();
// mpirun's control connection (boot/start.hpp), from MPI_Init's first steps
// to MPI_Finalize (so that a failing MPI_Init reports its cause to mpirun);
// null before and after, and in a singleton (no mpirun).
boot::ControlClient* control_client() noexcept;
// MPI_Is_thread_main: whether the calling thread is the one that called MPI_Init.
bool is_main_thread() noexcept;

}  // namespace gridmpi::core
