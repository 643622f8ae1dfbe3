// The process's logger: one spdlog logger writing to stderr, its level from
// the registry.  The registry never logs, so reading log.level here cannot
// recurse.
#include "conf/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "conf/registry.hpp"

namespace gridmpi {

namespace {

struct LogParams {
  conf::ChoiceParam level{"log.level", "warn", {"trace", "debug", "info", "warn", "error", "off"},
                          "threshold of the messages gridmpi writes to stderr", conf::Level::user};
  conf::Param<std::string> print_info{
      "log.printinfo", "", "",
      "GridMPI compatibility: any non-empty value (YAMPI keywords such as ALL or TCP) selects the debug "
      "level when log.level is not set",
      conf::Level::user, {"_YAMPI_PRINTINFO"}};
};

// Function-local so that a message logged from another file's static
// initializer finds the parameters constructed...
LogParams& log_params() {
  static LogParams params;
  return params;
}
// ...and referenced at namespace scope so that they are registered (and
// listed by gridmpi-info) even in a process that never logs.
[[maybe_unused]] const LogParams& registered_log_params = log_params();

struct LogState {
  std::mutex mutex;
  std::shared_ptr<spdlog::logger> logger;
  std::string program = "gridmpi";
  std::optional<int> rank;
};

LogState& state() {
  static LogState instance;
  return instance;
}

std::atomic<spdlog::logger*> ready_logger{nullptr};

std::optional<int> rank_from_environment() {
  const char* text = std::getenv("_YAMPI_MYRANK");
  if (text == nullptr) return std::nullopt;
  int rank = 0;
  const char* end = text + std::char_traits<char>::length(text);
  const auto [stop, error] = std::from_chars(text, end, rank);
  if (error != std::errc{} || stop != end || rank < 0) return std::nullopt;
  return rank;
}

// Caller holds the state lock.  spdlog expands %P to the pid at each
// message, so a forked child shows its own pid.
void apply_pattern(LogState& s) {
  std::string prefix = s.program + "[";
  if (s.rank) prefix += "rank " + std::to_string(*s.rank) + " ";
  s.logger->set_pattern(prefix + "pid %P]: %l: %v");
}

// Caller holds the state lock.  Returns the warning to print, if any.
std::optional<std::string> apply_level(LogState& s) {
  spdlog::level::level_enum level = spdlog::level::warn;
  std::optional<std::string> problem;
  LogParams& params = log_params();
  try {
    params.level.resolve();
    params.print_info.resolve();
  } catch (const conf::ConfigError&) {
    // A site or user file that cannot be used: every parameter read fails
    // with that message, and the first reader outside logging reports it
    // (MPI_Init does); saying it here too would only repeat it.
    s.logger->set_level(level);
    return std::nullopt;
  }
  try {
    const conf::ResolvedValue& chosen = params.level.resolve();
    std::string name = params.level.get();
    if (chosen.source == conf::Source::default_value && !params.print_info.get().empty()) name = "debug";
    level = spdlog::level::from_str(name);
  } catch (const std::exception& error) {
    problem = std::string(error.what()) + " (logging at level warn)";
  }
  s.logger->set_level(level);
  return problem;
}

}  // namespace

spdlog::logger& log() {
  if (spdlog::logger* logger = ready_logger.load(std::memory_order_acquire)) return *logger;
  LogState& s = state();
  std::optional<std::string> problem;
  {
    std::lock_guard lock(s.mutex);
    if (!s.logger) {
      s.logger = std::make_shared<spdlog::logger>("gridmpi", std::make_shared<spdlog::sinks::stderr_sink_mt>());
      s.rank = rank_from_environment();
      apply_pattern(s);
      problem = apply_level(s);
      // Warnings are rare and must not be lost if the process dies next.
      s.logger->flush_on(spdlog::level::warn);
      ready_logger.store(s.logger.get(), std::memory_order_release);
    }
  }
  if (problem) s.logger->warn("{}", *problem);
  return *s.logger;
}

void set_log_rank(int rank) {
  log();
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  s.rank = rank;
  apply_pattern(s);
}

void set_log_program(std::string_view name) {
  log();
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  s.program = std::string(name);
  apply_pattern(s);
}

void reload_log_level_for_tests() {
  log();
  LogState& s = state();
  std::optional<std::string> problem;
  {
    std::lock_guard lock(s.mutex);
    problem = apply_level(s);
  }
  if (problem) s.logger->warn("{}", *problem);
}

}  // namespace gridmpi
