// gridmpi-info, run as a program from the build tree (<build>/bin next to
// <build>/tests).  Skipped with a warning when it has not been built.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <regex>
#include <string>

#include "test_conf_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using gridmpi::conf::testing::ScopedEnvironment;
using gridmpi::conf::testing::TemporaryDirectory;

namespace {

std::string info_program() {
  char exe[4096];
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (length <= 0) return {};
  std::string path(exe, static_cast<std::size_t>(length));
  path = path.substr(0, path.find_last_of('/'));  // <build>/tests
  path = path.substr(0, path.find_last_of('/'));  // <build>
  path += "/bin/gridmpi-info";
  return access(path.c_str(), X_OK) == 0 ? path : std::string();
}

struct Run {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Run run_info(const std::string& arguments) {
  Run run;
  const std::string command = "timeout 30 " + info_program() + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t count = 0;
  while ((count = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.output.append(buffer, count);
  const int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace

TEST_CASE("gridmpi-info lists parameters, shows one, prints a site file", "[conf]") {
  if (info_program().empty()) {
    WARN("gridmpi-info is not built; build the gridmpi-info target to run this test");
    return;
  }
  ScopedEnvironment env;
  env.unset("GRIDMPI_LOG_LEVEL");
  env.unset("_YAMPI_PRINTINFO");

  Run list = run_info("");
  CHECK(list.status == 0);
  CHECK_THAT(list.output, Contains("log.level = warn\n    source: default\n"));

  env.set("GRIDMPI_LOG_LEVEL", "debug");
  Run one = run_info("log.level");
  CHECK(one.status == 0);
  CHECK_THAT(one.output, StartsWith("log.level = debug\n    source: env GRIDMPI_LOG_LEVEL\n"));
  CHECK_THAT(one.output, Contains("settings, lowest precedence first:\n      default: \"warn\"\n"
                                  "      env GRIDMPI_LOG_LEVEL: \"debug\"\n"));
  // A parameter can also be named by its environment variable.
  CHECK_THAT(run_info("_YAMPI_PRINTINFO").output, StartsWith("log.printinfo = \"\"\n"));

  TemporaryDirectory dir;
  const std::string site = dir.write("site.toml", "[log]\nlevel = \"info\"\n");
  env.unset("GRIDMPI_LOG_LEVEL");
  env.set("GRIDMPI_SITE_FILE", site);
  CHECK_THAT(run_info("log.level").output, Contains("source: site file " + site + ":2\n"));

  env.set("GRIDMPI_LOG_LEVEL", "chatty");
  Run bad = run_info("");
  CHECK(bad.status == 1);
  CHECK(bad.output == "gridmpi-info: log.level: bad value \"chatty\" from environment variable GRIDMPI_LOG_LEVEL: "
                      "expected one of trace, debug, info, warn, error or off\n");
  env.unset("GRIDMPI_LOG_LEVEL");

  // A broken site file is reported once, not once per parameter.
  const std::string typo = dir.write("typo.toml", "[log]\nlevle = \"info\"\n");
  env.set("GRIDMPI_SITE_FILE", typo);
  Run broken = run_info("--all");
  CHECK(broken.status == 1);
  CHECK(broken.output == "gridmpi-info: unknown key \"log.levle\" in site file " + typo +
                             ":2 (did you mean \"log.level\"?)\n");
  env.set("GRIDMPI_SITE_FILE", site);

  Run unknown = run_info("log.levle");
  CHECK(unknown.status == 1);
  CHECK_THAT(unknown.output, Contains("no parameter named \"log.levle\" (did you mean \"log.level\"?)"));

  // The --toml output is a valid site file: feeding it back changes nothing.
  Run toml = run_info("--toml");
  CHECK(toml.status == 0);
  CHECK_THAT(toml.output, Contains("[log]\n"));
  CHECK_THAT(toml.output, Contains("# level = \"warn\"\n"));
  std::string uncommented;
  const std::regex setting_line("^# [A-Za-z0-9_.]+ = ");
  for (std::size_t start = 0; start < toml.output.size();) {
    std::size_t end = toml.output.find('\n', start);
    if (end == std::string::npos) end = toml.output.size();
    std::string line = toml.output.substr(start, end - start);
    if (std::regex_search(line, setting_line)) line = line.substr(2);
    uncommented += line + "\n";
    start = end + 1;
  }
  env.set("GRIDMPI_SITE_FILE", dir.write("all.toml", uncommented));
  Run all = run_info("--all");
  INFO(uncommented);
  CHECK(all.status == 0);
  CHECK_THAT(all.output, Contains("source: site file "));
  CHECK_THAT(all.output, !Contains("source: default"));
}
