#include "request/progress_mode.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "conf/registry.hpp"
#include "base/error.hpp"

namespace gridmpi::request {

namespace {

const conf::ChoiceParam mode_param{
    "progress.mode", "poll", {"poll", "thread"},
    "how waiting works: poll = the waiting thread polls every transport in turn (backing off after "
    "progress.spin); thread = progress threads block in each transport's own wait and the application "
    "sleeps on a condition variable",
    conf::Level::user, {"GRIDMPI_PROGRESS"}};

const conf::ChoiceParam yield_param{
    "progress.yield", "auto", {"auto", "on", "off"},
    "poll mode: give the core away (sched_yield) in every idle round before sleeping, so that the "
    "rank being waited for runs sooner; thread mode: a wait polls and yields so before it sleeps, and "
    "the progress thread is woken only once the application has left MPI for a while; auto = when "
    "this host runs more of the job's ranks than it has cores for them (oversubscribed), on = always, "
    "off = never",
    conf::Level::tuner};

// A positive count from mpirun's environment (0 when it did not say).
long env_count(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return 0;
  char* end = nullptr;
  long n = std::strtol(text, &end, 10);
  return end && *end == '\0' && n > 0 ? n : 0;
}

// mpirun's count of this host's ranks (0 when it did not say).
long local_nprocs() { return env_count("_YAMPI_LOCAL_NPROCS"); }

// The cores this process may use, or more when mpirun (on this host) may
// use more: a vendor's launcher may bind each rank to one core, which does
// not make the host oversubscribed.
long usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  long mine = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  const char* text = std::getenv("_YAMPI_LOCAL_CORES");
  long launcher = text && *text ? std::strtol(text, nullptr, 10) : 0;
  return std::max(mine, launcher);
}

}  // namespace

long job_host_cores() noexcept {
  const long nprocs = env_count("_YAMPI_NPROCS");
  return nprocs > 0 && env_count("_YAMPI_LOCAL_NPROCS") == nprocs ? env_count("_YAMPI_LOCAL_CORES") : 0;
}

bool job_crowded() noexcept {
  const long nprocs = env_count("_YAMPI_NPROCS");
  const long cores = env_count("_YAMPI_LOCAL_CORES");
  return nprocs > 0 && cores > 0 && env_count("_YAMPI_LOCAL_NPROCS") == nprocs && nprocs > 2 * cores;
}

bool yield_when_idle_setting() {
  std::string value;
  try {
    value = yield_param.get();
  } catch (const conf::ConfigError& e) {
    throw gridmpi::MpiError(MPI_ERR_OTHER, e.what());
  }
  if (value == "on") return true;
  if (value == "off") return false;
  return local_nprocs() > usable_cores();
}

p2p::ProgressMode progress_mode_setting() {
  try {
    return mode_param.get() == "thread" ? p2p::ProgressMode::thread : p2p::ProgressMode::poll;
  } catch (const conf::ConfigError& e) {
    throw gridmpi::MpiError(MPI_ERR_OTHER, e.what());
  }
}

const char* progress_mode_name(p2p::ProgressMode mode) noexcept {
  return mode == p2p::ProgressMode::thread ? "thread" : "poll";
}

}  // namespace gridmpi::request
