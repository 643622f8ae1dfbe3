// The runtime object and the MPI_Init / MPI_Finalize sequences.
#include "core/runtime.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <numeric>
#include <stdexcept>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "boot/control_client.hpp"
#include "boot/start.hpp"
#include "conf/log.hpp"
#include "conf/registry.hpp"
#include "core/api.hpp"
#include "core/attr.hpp"
#include "core/big_lock.hpp"
#include "core/coll/coll.hpp"
#include "core/coll/wan.hpp"
#include "core/datatype.hpp"
#include "core/errhandler.hpp"
#include "core/group.hpp"
#include "core/info.hpp"
#include "core/job_layout.hpp"
#include "request/progress_mode.hpp"
#include "request/request.hpp"

namespace gridmpi::core {

namespace {

// Atomic: MPI_Initialized and MPI_Finalized may be called from any thread at
// any time, also before the big lock is enabled.
// current_state is the runtime's (up from the first MPI_Init or
// MPI_Session_init to the last of MPI_Finalize and MPI_Session_finalize);
// world_state is the world model's alone (MPI_Initialized, MPI_Finalized).
std::atomic<State> current_state{State::not_initialized};
std::atomic<State> world_state{State::not_initialized};
// Sessions not finalized yet.  Session and world starts and ends take
// lifecycle_mutex (inside the big lock when that is enabled), so that
// threads starting sessions at once start the runtime once.
int open_sessions = 0;
bool stopping = false;  // the runtime is shutting down
std::mutex lifecycle_mutex;
std::unique_ptr<Runtime> the_runtime;
std::thread::id main_thread;
JobLayout the_layout;

// IMPI_HOST_SIZE / IMPI_HOST_COLOR: hosts numbered in order of their lowest rank.
std::pair<int, int> host_size_and_color(const std::vector<std::string>& hosts, int my_rank) {
  std::vector<std::string> distinct;
  int my_color = 0;
  for (int r = 0; r < static_cast<int>(hosts.size()); ++r) {
    auto it = std::find(distinct.begin(), distinct.end(), hosts[r]);
    int color = static_cast<int>(it - distinct.begin());
    if (it == distinct.end()) distinct.push_back(hosts[r]);
    if (r == my_rank) my_color = color;
  }
  return {static_cast<int>(distinct.size()), my_color};
}

int appnum_from_environment() {
  const char* text = std::getenv("_YAMPI_APPNUM");
  if (!text || !*text) return 0;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  return (*end == '\0' && v >= 0 && v < 1 << 30) ? static_cast<int>(v) : 0;
}

void set_world_attributes(const Runtime& rt) {
  set_predefined_attribute(MPI_TAG_UB, 0x7fffffff);
  set_predefined_attribute(MPI_HOST, MPI_PROC_NULL);
  // Every rank's stdout/stderr reaches the user (mpirun forwards them).
  set_predefined_attribute(MPI_IO, MPI_ANY_SOURCE);
  set_predefined_attribute(MPI_WTIME_IS_GLOBAL, 0);
  set_predefined_attribute(MPI_UNIVERSE_SIZE, rt.world_size);
  set_predefined_attribute(MPI_LASTUSEDCODE, last_used_code());
  set_predefined_attribute(MPI_APPNUM, appnum_from_environment());
  set_predefined_attribute(IMPI_CLIENT_SIZE, job_layout().nclients);
  set_predefined_attribute(IMPI_CLIENT_COLOR, job_layout().my_client);
  auto [host_size, host_color] = host_size_and_color(rt.host_names, rt.world_rank);
  set_predefined_attribute(IMPI_HOST_SIZE, host_size);
  set_predefined_attribute(IMPI_HOST_COLOR, host_color);
}

void build_predefined_communicators(const Runtime& rt) {
  std::vector<int> all(rt.world_size);
  std::iota(all.begin(), all.end(), 0);
  auto world_group = std::make_shared<Group>(make_group(std::move(all), rt.world_rank));
  auto self_group = std::make_shared<Group>(make_group({rt.world_rank}, rt.world_rank));
  context_pool().reserve(0);
  context_pool().reserve(2);
  Comm& world = make_comm(MPI_COMM_WORLD, 0, std::move(world_group));
  world.name = "MPI_COMM_WORLD";
  make_comm(MPI_COMM_SELF, 2, std::move(self_group)).name = "MPI_COMM_SELF";
  // Multi-client jobs: ids 0/1 and 2/3 as IMPI fixes them, 4/5 for the
  // client-local part of MPI_COMM_WORLD; the IMPI rule allocates above 5.
  set_impi_max_context(5);
  attach_client_comm(world, 4);
}

}  // namespace

State state() noexcept { return current_state; }
State world_model_state() noexcept { return world_state; }

const JobLayout& job_layout() noexcept { return the_layout; }
void set_job_layout(JobLayout layout) { the_layout = std::move(layout); }

bool spans_clients(MPI_Comm handle) {
  if (!the_layout.multi_client()) return false;
  const Comm* c = comm_table().find(handle);
  return c && spans_clients(*c);
}

bool spans_clients(const Comm& comm) {
  if (!the_layout.multi_client()) return false;
  // Intracommunicators know it already (their IMPI roles, core/group.hpp).
  if (!comm.is_inter()) return comm.clients != nullptr;
  const Comm* c = &comm;
  int first = -1;
  for (const auto* g : {c->group.get(), c->remote_group.get()}) {
    if (!g) continue;
    for (int world : g->members) {
      int client = the_layout.client(world);
      if (first < 0) first = client;
      else if (client != first) return true;
    }
  }
  return false;
}

Runtime& runtime() {
  if (current_state != State::initialized || !the_runtime)
    throw MpiError(MPI_ERR_OTHER, current_state == State::finalized ? "mpi has already been finalized"
                                                                    : "mpi is not initialized yet");
  return *the_runtime;
}

void require_initialized(const char* function) {
  if (current_state == State::initialized) return;
  (void)function;  // api_call already prefixes the message with the function name
  if (current_state == State::finalized)
    throw MpiError(MPI_ERR_OTHER, "called after MPI_Finalize (no MPI calls are allowed then)");
  throw MpiError(MPI_ERR_OTHER, "called before MPI_Init (call MPI_Init or MPI_Init_thread first)");
}

boot::ControlClient* control_client() noexcept {
  return current_state == State::finalized ? nullptr : boot::control();
}

bool is_main_thread() noexcept { return std::this_thread::get_id() == main_thread; }

const conf::Param<bool> no_flush_param{
    "io.noflush", false, "",
    "keep stdout fully buffered when it is not a terminal (default: line-buffered from MPI_Init)",
    conf::Level::tuner, {"_YAMPI_NOFLUSH"}};

namespace {

// Wires the process up: the first MPI_Init or MPI_Session_init.
int start_runtime(int required_thread_level, int* argc, char*** argv) {
  log();  // sets up the logger (level from GRIDMPI_LOG_LEVEL)
  // A rank's stdout is a pipe to mpirun, hence fully buffered by default:
  // what a rank printed before crashing would be lost.  GridMPI line-buffers
  // in MPI_Init too; _YAMPI_NOFLUSH keeps the C library's choice.
  if (!no_flush_param.get()) std::setvbuf(stdout, nullptr, _IOLBF, 0);

  auto rt = std::make_unique<Runtime>();
  // A failure from here on ends the process (MPI_Init's errors are fatal):
  // its cause goes to mpirun first (fatal_exit), with this process's
  // transports still open.  Closing them while unwinding would make the
  // local peers report this rank's disappearance, and mpirun could print
  // that consequence instead of the cause.
  boot::Process process;
  struct KeepOnFailure {
    std::unique_ptr<Runtime>& rt;
    std::shared_ptr<impi::Startup>& impi;  // its listening socket, too
    int uncaught = std::uncaught_exceptions();
    ~KeepOnFailure() {
      if (std::uncaught_exceptions() <= uncaught) return;
      (void)rt.release();
      if (impi) (void)new (std::nothrow) std::shared_ptr<impi::Startup>(impi);
    }
  } keep_on_failure{rt, process.impi};
  boot::StartOptions options;
  options.vendor_thread_level =
      request::progress_mode_setting() == p2p::ProgressMode::thread ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
  options.native_description = native_representation();
  process = boot::start(options);
  rt->world_rank = process.world_rank;
  rt->world_size = process.world_size;
  rt->processor_name = process.processor_name;
  rt->host_names = process.host_names;
  rt->thread_level = std::clamp(required_thread_level, MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE);
  set_job_layout(process.layout);

  rt->engine = request::make_engine(rt->world_rank, rt->world_size, process.cookie, process.impi);
  // Thread progress mode: the engine has enabled the big lock (its progress
  // thread delivers events under it from wire-up on).  This call's own
  // api_call did not take it, so MPI_Init holds it from here to its return.
  ApiLock engine_lock;
  rt->engine->set_peer_endpoints(process.exchange("endpoint", rt->engine->endpoint()));
  // IMPI host connections to the other clusters are made before MPI_Init returns.
  if (process.impi) rt->engine->wait_ready();

  build_predefined_communicators(*rt);
  set_world_attributes(*rt);
  fill_info_env(argc, argv, rt->world_size, rt->thread_level, rt->processor_name);
  main_thread = std::this_thread::get_id();
  the_runtime = std::move(rt);
  current_state = State::initialized;
  // A job over several clusters that all run gridmpi: the wide-area
  // collectives' model, measured once for every communicator.
  if (the_layout.multi_client()) coll::wan::calibrate(comm(MPI_COMM_WORLD));
  // From here on every entry point takes the big lock (this call's own
  // api_call did not, and does not release it either).
  if (the_runtime->thread_level == MPI_THREAD_MULTIPLE) big_lock().enable();
  log().info("initialized: rank {} of {} on {}, thread level {}", the_runtime->world_rank,
             the_runtime->world_size, the_runtime->processor_name, the_runtime->thread_level);
  return the_runtime->thread_level;
}

// Shuts the process's MPI down: the last of MPI_Finalize and
// MPI_Session_finalize.
void stop_runtime() {
  Runtime& rt = runtime();
  // Completes the pending work of every rank before the transports close.
  if (rt.world_size > 1) coll::barrier(comm(MPI_COMM_WORLD));
  rt.engine->shutdown();
  boot::finish();
  current_state = State::finalized;
  log().info("finalized");
  // Objects that outlive MPI (user communicators never freed) must not reach
  // the engine through their collective state once it is gone.
  for (MPI_Comm c : {MPI_COMM_WORLD, MPI_COMM_SELF})
    if (Comm* p = comm_table().find(c)) p->coll_state.reset();
  the_runtime.reset();
  the_layout = JobLayout{};
  // The control connection and the vendor MPI (mpirun -vendor) end last:
  // the engine and its transports are gone now.
  boot::release();
}

const char* const ended_text =
    "mpi has ended in this process (MPI_Finalize, or the last MPI_Session_finalize, shut it down) and "
    "cannot be started again";

}  // namespace

// Locking (core/README.md, "sessions"): lifecycle_mutex guards the counts
// and states and is held while the runtime starts, never while it stops
// and never across a call that may wait for messages (a wait gives the big
// lock away, and a thread holding the big lock must not then block on this
// mutex).  Starting runs before the big lock is enabled, so the callers of
// initialize and session_started do not hold the big lock; stopping runs
// under the big lock, after `stopping` turned later starts away.
int initialize(int required_thread_level, int* argc, char*** argv) {
  std::lock_guard<std::mutex> hold(lifecycle_mutex);
  if (world_state == State::initialized) throw MpiError(MPI_ERR_OTHER, "mpi is already initialized");
  if (world_state == State::finalized)
    throw MpiError(MPI_ERR_OTHER, "mpi cannot be initialized again after MPI_Finalize");
  if (current_state == State::finalized || stopping) throw MpiError(MPI_ERR_OTHER, ended_text);
  int provided = 0;
  if (current_state == State::initialized) {
    // A session started the runtime: the world model joins it, at the
    // thread level it has.
    ApiLock lock;
    provided = the_runtime->thread_level;
    fill_info_env(argc, argv, the_runtime->world_size, provided, the_runtime->processor_name);
  } else {
    provided = start_runtime(required_thread_level, argc, argv);
  }
  world_state = State::initialized;
  return provided;
}

void finalize() {
  {
    std::lock_guard<std::mutex> hold(lifecycle_mutex);
    if (world_state != State::initialized)
      throw MpiError(MPI_ERR_OTHER, world_state == State::finalized ? "MPI_Finalize was called already"
                                                                     : "called before MPI_Init");
  }
  // MPI-2.2: MPI_Finalize first frees the attributes of MPI_COMM_SELF (their
  // callbacks may still communicate), then those of MPI_COMM_WORLD.
  for (MPI_Comm c : {MPI_COMM_SELF, MPI_COMM_WORLD}) {
    try {
      delete_all_comm_attributes(comm(c));
    } catch (const MpiError& e) {
      log().warn("MPI_Finalize: an attribute delete callback on {} failed: {}", comm(c).name, e.what());
    }
  }
  {
    std::lock_guard<std::mutex> hold(lifecycle_mutex);
    world_state = State::finalized;
    // Sessions still open keep the runtime up until the last one ends.
    if (open_sessions > 0) return;
    stopping = true;
  }
  stop_runtime();
}

int session_started() {
  std::lock_guard<std::mutex> hold(lifecycle_mutex);
  if (current_state == State::finalized || stopping) throw MpiError(MPI_ERR_OTHER, ended_text);
  // A runtime that a session starts offers every thread level: a later
  // session (or MPI_Init_thread) may ask for MPI_THREAD_MULTIPLE, and the
  // level cannot be raised once threads use MPI.
  int provided = current_state == State::initialized ? the_runtime->thread_level
                                                     : start_runtime(MPI_THREAD_MULTIPLE, nullptr, nullptr);
  ++open_sessions;
  return provided;
}

void session_ended() {
  {
    std::lock_guard<std::mutex> hold(lifecycle_mutex);
    if (open_sessions > 0) --open_sessions;
    if (open_sessions > 0 || world_state == State::initialized || current_state != State::initialized) return;
    stopping = true;
  }
  ApiLock lock;
  stop_runtime();
}

}  // namespace gridmpi::core
