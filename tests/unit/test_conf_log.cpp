// The logger: prefix, level from log.level, _YAMPI_PRINTINFO, a bad level
// reported once and ignored.
#include <catch2/catch.hpp>

#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <vector>
#include <sstream>

#include "conf/log.hpp"
#include "test_conf_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using gridmpi::conf::testing::ScopedEnvironment;

namespace {

// Sends the logger's output to memory instead of stderr for the test's
// lifetime.
class CapturedLog {
 public:
  CapturedLog() : saved_(gridmpi::log().sinks()) {
    gridmpi::log().sinks() = {std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)};
    gridmpi::set_log_program("gridmpi");  // applies the pattern to the new sink
  }
  ~CapturedLog() { gridmpi::log().sinks() = saved_; }
  std::string text() const { return stream_.str(); }

 private:
  std::vector<spdlog::sink_ptr> saved_;
  std::ostringstream stream_;
};

void reload(ScopedEnvironment&) { gridmpi::reload_log_level_for_tests(); }

}  // namespace

TEST_CASE("log lines carry program, rank and pid", "[conf]") {
  ScopedEnvironment env;
  env.unset("GRIDMPI_LOG_LEVEL");
  env.unset("_YAMPI_PRINTINFO");
  reload(env);
  CapturedLog captured;
  gridmpi::set_log_rank(3);
  gridmpi::log().warn("tcp connect to node07:40123 refused");
  const std::string expected = "gridmpi[rank 3 pid " + std::to_string(getpid()) +
                               "]: warning: tcp connect to node07:40123 refused";
  CHECK_THAT(captured.text(), StartsWith(expected));
  gridmpi::set_log_program("mpirun");
  gridmpi::log().error("x");
  CHECK_THAT(captured.text(), Contains("mpirun[rank 3 pid "));
  gridmpi::set_log_program("gridmpi");
}

TEST_CASE("the default level is warn and GRIDMPI_LOG_LEVEL changes it", "[conf]") {
  ScopedEnvironment env;
  env.unset("GRIDMPI_LOG_LEVEL");
  env.unset("_YAMPI_PRINTINFO");
  reload(env);
  CHECK(gridmpi::log().level() == spdlog::level::warn);
  const std::pair<const char*, spdlog::level::level_enum> levels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
      {"WARN", spdlog::level::warn},   {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  for (const auto& [text, level] : levels) {
    env.set("GRIDMPI_LOG_LEVEL", text);
    reload(env);
    INFO("level " << text);
    CHECK(gridmpi::log().level() == level);
  }
  env.unset("GRIDMPI_LOG_LEVEL");
  reload(env);
}

TEST_CASE("a bad log level is reported once and ignored", "[conf]") {
  ScopedEnvironment env;
  env.unset("_YAMPI_PRINTINFO");
  CapturedLog captured;
  env.set("GRIDMPI_LOG_LEVEL", "verbose");
  reload(env);
  CHECK(gridmpi::log().level() == spdlog::level::warn);
  const std::string text = captured.text();
  CHECK_THAT(text, Contains("warning: log.level: bad value \"verbose\" from environment variable GRIDMPI_LOG_LEVEL: "
                            "expected one of trace, debug, info, warn, error or off (logging at level warn)"));
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  env.unset("GRIDMPI_LOG_LEVEL");
  reload(env);
}

TEST_CASE("_YAMPI_PRINTINFO selects debug unless log.level is set", "[conf]") {
  ScopedEnvironment env;
  env.unset("GRIDMPI_LOG_LEVEL");
  env.set("_YAMPI_PRINTINFO", "ALL");
  reload(env);
  CHECK(gridmpi::log().level() == spdlog::level::debug);
  env.set("GRIDMPI_LOG_LEVEL", "error");
  reload(env);
  CHECK(gridmpi::log().level() == spdlog::level::err);
  env.unset("GRIDMPI_LOG_LEVEL");
  env.unset("_YAMPI_PRINTINFO");
  reload(env);
  CHECK(gridmpi::log().level() == spdlog::level::warn);
}

TEST_CASE("a broken site file is left to the parameter readers to report", "[conf]") {
  ScopedEnvironment env;
  env.unset("GRIDMPI_LOG_LEVEL");
  env.unset("_YAMPI_PRINTINFO");
  gridmpi::conf::testing::TemporaryDirectory dir;
  env.set("GRIDMPI_SITE_FILE", dir.write("site.toml", "[log]\nlevle = \"debug\"\n"));
  CapturedLog captured;
  reload(env);
  CHECK(gridmpi::log().level() == spdlog::level::warn);
  CHECK(captured.text().empty());
}
