#include "request/progress_mode.hpp"

#include "conf/registry.hpp"
#include "core/error.hpp"

namespace gridmpi::request {

namespace {

const conf::ChoiceParam mode_param{
    "progress.mode", "poll", {"poll", "thread"},
    "how waiting works: poll = the waiting thread polls every transport in turn (backing off after "
    "progress.spin); thread = progress threads block in each transport's own wait and the application "
    "sleeps on a condition variable",
    conf::Level::user, {"GRIDMPI_PROGRESS"}};

}  // namespace

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
