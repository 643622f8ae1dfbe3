// The parameter registry: precedence of every source, value syntax, the
// error messages, site/user files in TOML, mpirun's command-line marking.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "conf/registry.hpp"
#include "conf/registry_detail.hpp"
#include "test_conf_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using gridmpi::conf::ChoiceParam;
using gridmpi::conf::ConfigError;
using gridmpi::conf::Level;
using gridmpi::conf::Param;
using gridmpi::conf::Source;
using gridmpi::conf::testing::ScopedEnvironment;
using gridmpi::conf::testing::TemporaryDirectory;

namespace {

const Param<std::int64_t> test_buffer{"conftest.buffer", 65536, "bytes", "test: a byte count", Level::tuner,
                                      {"_CONFTEST_BUFFER", "_CONFTEST_OLD_BUFFER"}};
const Param<std::int64_t> test_count{"conftest.count", 4, "", "test: a plain integer", Level::user};
const Param<bool> test_flag{"conftest.flag", false, "", "test: a boolean", Level::developer};
const Param<double> test_ratio{"conftest.ratio", 0.5, "", "test: a float", Level::user};
const Param<std::string> test_text{"conftest.nested.text", "ssh", "", "test: a string", Level::user};
const ChoiceParam test_mode{"conftest.mode", "poll", {"poll", "thread"}, "test: a choice", Level::user};

// Clears every variable the test parameters read.
void clear_test_environment(ScopedEnvironment& env) {
  for (const char* name : {"GRIDMPI_CONFTEST_BUFFER", "_CONFTEST_BUFFER", "_CONFTEST_OLD_BUFFER",
                           "GRIDMPI_CONFTEST_COUNT", "GRIDMPI_CONFTEST_FLAG", "GRIDMPI_CONFTEST_RATIO",
                           "GRIDMPI_CONFTEST_NESTED_TEXT", "GRIDMPI_CONFTEST_MODE"})
    env.unset(name);
}

}  // namespace

TEST_CASE("environment names are GRIDMPI_ plus the dotted name in upper case", "[conf]") {
  CHECK(gridmpi::conf::environment_name("tcp.socbuf") == "GRIDMPI_TCP_SOCBUF");
  CHECK(gridmpi::conf::environment_name("log.level") == "GRIDMPI_LOG_LEVEL");
  CHECK(test_buffer.info().env_names ==
        std::vector<std::string>{"GRIDMPI_CONFTEST_BUFFER", "_CONFTEST_BUFFER", "_CONFTEST_OLD_BUFFER"});
  CHECK(test_buffer.info().type == "integer");
  CHECK(test_buffer.info().unit == "bytes");
  CHECK(test_buffer.info().default_text == "65536");
  CHECK(test_flag.info().default_text == "false");
  CHECK(test_ratio.info().default_text == "0.5");
  CHECK(test_mode.info().type == "choice");
}

TEST_CASE("each source overrides the one below it", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  TemporaryDirectory dir;

  // Built-in default.
  CHECK(test_buffer.get() == 65536);
  CHECK(test_buffer.resolve().source == Source::default_value);

  // Site file.
  const std::string site = dir.write("site.toml", "# site\n[conftest]\nbuffer = 1024\ncount = 7\n");
  env.set("GRIDMPI_SITE_FILE", site);
  CHECK(test_buffer.get() == 1024);
  CHECK(test_buffer.resolve().source == Source::site_file);
  CHECK(test_buffer.resolve().origin == site + ":3");

  // User file beats the site file, for that key only.
  const std::string user = dir.write("user.toml", "[conftest]\nbuffer = \"2k\"\n");
  env.set("GRIDMPI_USER_FILE", user);
  CHECK(test_buffer.get() == 2048);
  CHECK(test_buffer.resolve().source == Source::user_file);
  CHECK(test_buffer.resolve().origin == user + ":2");
  CHECK(test_count.get() == 7);
  CHECK(test_count.resolve().source == Source::site_file);

  // Legacy environment names beat the files; the first-listed legacy name wins.
  env.set("_CONFTEST_OLD_BUFFER", "3k");
  CHECK(test_buffer.get() == 3 * 1024);
  CHECK(test_buffer.resolve().source == Source::environment);
  CHECK(test_buffer.resolve().origin == "_CONFTEST_OLD_BUFFER");
  env.set("_CONFTEST_BUFFER", "4k");
  CHECK(test_buffer.get() == 4 * 1024);
  CHECK(test_buffer.resolve().origin == "_CONFTEST_BUFFER");

  // GRIDMPI_<NAME> beats the legacy names.
  env.set("GRIDMPI_CONFTEST_BUFFER", "5k");
  CHECK(test_buffer.get() == 5 * 1024);
  CHECK(test_buffer.resolve().source == Source::environment);
  CHECK(test_buffer.resolve().origin == "GRIDMPI_CONFTEST_BUFFER");

  // An mpirun flag: mpirun sets GRIDMPI_<NAME> and lists the name.
  env.set("GRIDMPI_FROM_COMMAND_LINE", "conftest.buffer");
  CHECK(test_buffer.get() == 5 * 1024);
  CHECK(test_buffer.resolve().source == Source::command_line);
  CHECK(test_buffer.resolve().origin == "GRIDMPI_CONFTEST_BUFFER");

  // all_settings lists every source, lowest first.
  const auto settings = gridmpi::conf::all_settings(test_buffer);
  REQUIRE(settings.size() == 6);
  CHECK(settings[0].source == Source::default_value);
  CHECK(settings[1].source == Source::site_file);
  CHECK(settings[1].text == "1024");
  CHECK(settings[2].source == Source::user_file);
  CHECK(settings[2].text == "2k");
  CHECK(settings[3].origin == "_CONFTEST_OLD_BUFFER");
  CHECK(settings[4].origin == "_CONFTEST_BUFFER");
  CHECK(settings[5].source == Source::command_line);
}

TEST_CASE("a command-line value beats legacy environment names", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  env.set("_CONFTEST_BUFFER", "1k");
  gridmpi::conf::set_from_command_line("conftest.buffer", "8k");
  CHECK(std::getenv("GRIDMPI_CONFTEST_BUFFER") == std::string("8k"));
  CHECK(std::getenv("GRIDMPI_FROM_COMMAND_LINE") == std::string("conftest.buffer"));
  CHECK(test_buffer.get() == 8192);
  CHECK(test_buffer.resolve().source == Source::command_line);

  gridmpi::conf::set_from_command_line("conftest.mode", "thread");
  CHECK(std::getenv("GRIDMPI_FROM_COMMAND_LINE") == std::string("conftest.buffer,conftest.mode"));
  CHECK(test_mode.get() == "thread");
  // Setting the same name twice lists it once.
  gridmpi::conf::set_from_command_line("conftest.buffer", "16k");
  CHECK(std::getenv("GRIDMPI_FROM_COMMAND_LINE") == std::string("conftest.buffer,conftest.mode"));
  CHECK(test_buffer.get() == 16384);

  const auto forwarded = gridmpi::conf::command_line_environment();
  const auto find = [&](const std::string& name) {
    auto it = std::find_if(forwarded.begin(), forwarded.end(), [&](const auto& e) { return e.first == name; });
    return it == forwarded.end() ? std::string("<missing>") : it->second;
  };
  CHECK(find("GRIDMPI_CONFTEST_BUFFER") == "16k");
  CHECK(find("GRIDMPI_CONFTEST_MODE") == "thread");
  CHECK(find("GRIDMPI_FROM_COMMAND_LINE") == "conftest.buffer,conftest.mode");
}

TEST_CASE("the command-line list also accepts variable names", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  env.set("GRIDMPI_CONFTEST_COUNT", "9");
  env.set("GRIDMPI_FROM_COMMAND_LINE", "other.thing, GRIDMPI_CONFTEST_COUNT");
  CHECK(test_count.get() == 9);
  CHECK(test_count.resolve().source == Source::command_line);
  // Listed but not set: nothing comes from the command line.
  env.set("GRIDMPI_FROM_COMMAND_LINE", "conftest.ratio");
  CHECK(test_ratio.resolve().source == Source::default_value);
}

TEST_CASE("set_from_command_line rejects bad values and unknown names", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  REQUIRE_THROWS_WITH(gridmpi::conf::set_from_command_line("conftest.buffer", "lots"),
                      Equals("conftest.buffer: bad value \"lots\" from mpirun flag (GRIDMPI_CONFTEST_BUFFER): "
                             "expected a byte count such as 65536, 64k, 1m or 2g (powers of 1024)"));
  CHECK(std::getenv("GRIDMPI_CONFTEST_BUFFER") == nullptr);
  CHECK(std::getenv("GRIDMPI_FROM_COMMAND_LINE") == nullptr);
  REQUIRE_THROWS_WITH(gridmpi::conf::set_from_command_line("conftest.bufer", "1"),
                      Equals("unknown parameter \"conftest.bufer\" (did you mean \"conftest.buffer\"?)"));
  REQUIRE_THROWS_WITH(gridmpi::conf::set_from_command_line("zzzz.qqqq", "1"),
                      Equals("unknown parameter \"zzzz.qqqq\""));
}

TEST_CASE("byte counts take k, m, g and t suffixes in powers of 1024", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  const std::pair<const char*, std::int64_t> cases[] = {
      {"0", 0},           {"65536", 65536},   {"64k", 65536},         {"64K", 65536},
      {"1M", 1 << 20},    {"1m", 1 << 20},    {"2G", 2LL << 30},      {"3t", 3LL << 40},
      {"64KiB", 65536},   {"64kb", 65536},    {" 8k ", 8192},         {"1 k", 1024},
      {"-1", -1},         {"+5", 5},          {"100b", 100},          {"8589934592", 8LL << 30}};
  for (const auto& [text, expected] : cases) {
    env.set("GRIDMPI_CONFTEST_BUFFER", text);
    INFO("value " << text);
    CHECK(test_buffer.get() == expected);
  }
  for (const char* text : {"", "k", "64q", "1.5k", "64 kk", "0x10k", "ten", "64k1"}) {
    env.set("GRIDMPI_CONFTEST_BUFFER", text);
    INFO("value " << text);
    CHECK_THROWS_WITH(test_buffer.get(),
                      Equals(std::string("conftest.buffer: bad value \"") + text +
                             "\" from environment variable GRIDMPI_CONFTEST_BUFFER: expected a byte count such as "
                             "65536, 64k, 1m or 2g (powers of 1024)"));
  }
  env.set("GRIDMPI_CONFTEST_BUFFER", "16777216t");
  CHECK_THROWS_WITH(test_buffer.get(), Contains("expected a value that fits in a signed 64-bit integer"));
  env.set("GRIDMPI_CONFTEST_BUFFER", "99999999999999999999");
  CHECK_THROWS_WITH(test_buffer.get(), Contains("expected a value that fits in a signed 64-bit integer"));
}

TEST_CASE("plain integers take no unit suffix but accept hexadecimal", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  env.set("GRIDMPI_CONFTEST_COUNT", "0x1f");
  CHECK(test_count.get() == 31);
  env.set("GRIDMPI_CONFTEST_COUNT", "-12");
  CHECK(test_count.get() == -12);
  env.set("GRIDMPI_CONFTEST_COUNT", "-9223372036854775808");
  CHECK(test_count.get() == INT64_MIN);
  env.set("GRIDMPI_CONFTEST_COUNT", "9223372036854775808");
  CHECK_THROWS_WITH(test_count.get(), Contains("fits in a signed 64-bit integer"));
  env.set("GRIDMPI_CONFTEST_COUNT", "4k");
  CHECK_THROWS_WITH(test_count.get(),
                    Equals("conftest.count: bad value \"4k\" from environment variable GRIDMPI_CONFTEST_COUNT: "
                           "expected an integer such as 42 (or 0x2a)"));
  env.set("GRIDMPI_CONFTEST_COUNT", "4.0");
  CHECK_THROWS_AS(test_count.get(), ConfigError);
}

TEST_CASE("booleans accept 1/0, true/false, yes/no, on/off in any case", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  for (const char* text : {"1", "true", "TRUE", "yes", "Yes", "on", " on "}) {
    env.set("GRIDMPI_CONFTEST_FLAG", text);
    INFO("value " << text);
    CHECK(test_flag.get() == true);
  }
  for (const char* text : {"0", "false", "no", "OFF"}) {
    env.set("GRIDMPI_CONFTEST_FLAG", text);
    INFO("value " << text);
    CHECK(test_flag.get() == false);
  }
  env.set("GRIDMPI_CONFTEST_FLAG", "maybe");
  CHECK_THROWS_WITH(test_flag.get(),
                    Equals("conftest.flag: bad value \"maybe\" from environment variable GRIDMPI_CONFTEST_FLAG: "
                           "expected one of 1, 0, true, false, yes, no, on, off"));
  env.set("GRIDMPI_CONFTEST_FLAG", "2");
  CHECK_THROWS_AS(test_flag.get(), ConfigError);
}

TEST_CASE("floats, strings and choices", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  env.set("GRIDMPI_CONFTEST_RATIO", "1e-3");
  CHECK(test_ratio.get() == Approx(0.001));
  env.set("GRIDMPI_CONFTEST_RATIO", "2");
  CHECK(test_ratio.get() == 2.0);
  for (const char* text : {"half", "0.5x", "inf", "nan", ""}) {
    env.set("GRIDMPI_CONFTEST_RATIO", text);
    INFO("value " << text);
    CHECK_THROWS_WITH(test_ratio.get(),
                      Equals(std::string("conftest.ratio: bad value \"") + text +
                             "\" from environment variable GRIDMPI_CONFTEST_RATIO: expected a finite number such "
                             "as 0.5, 2 or 1e-3"));
  }

  CHECK(test_text.get() == "ssh");
  env.set("GRIDMPI_CONFTEST_NESTED_TEXT", "ssh -x");
  CHECK(test_text.get() == "ssh -x");
  env.set("GRIDMPI_CONFTEST_NESTED_TEXT", "");  // an empty string is a value
  CHECK(test_text.get().empty());
  CHECK(test_text.resolve().source == Source::environment);

  CHECK(test_mode.get() == "poll");
  env.set("GRIDMPI_CONFTEST_MODE", "THREAD");
  CHECK(test_mode.get() == "thread");  // returned as declared
  CHECK(test_mode.canonical_text() == "thread");
  env.set("GRIDMPI_CONFTEST_MODE", "busy");
  CHECK_THROWS_WITH(test_mode.get(),
                    Equals("conftest.mode: bad value \"busy\" from environment variable GRIDMPI_CONFTEST_MODE: "
                           "expected one of poll or thread"));
  CHECK_THROWS_AS(test_mode.validate(), ConfigError);
}

TEST_CASE("malformed values name the file and line they come from", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  TemporaryDirectory dir;
  const std::string site = dir.write("site.toml", "\n[conftest]\nflag = \"sometimes\"\n");
  env.set("GRIDMPI_SITE_FILE", site);
  CHECK_THROWS_WITH(test_flag.get(), Equals("conftest.flag: bad value \"sometimes\" from site file " + site +
                                            ":3: expected one of 1, 0, true, false, yes, no, on, off"));
  const std::string user = dir.write("user.toml", "conftest.count = 1.5\n");
  env.set("GRIDMPI_USER_FILE", user);
  CHECK_THROWS_WITH(test_count.get(), Equals("conftest.count: bad value \"1.5\" from user file " + user +
                                             ":1: expected an integer such as 42 (or 0x2a)"));
}

TEST_CASE("TOML values of every type become parameter values", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  TemporaryDirectory dir;
  env.set("GRIDMPI_SITE_FILE", dir.write("site.toml", R"(
[conftest]
count = 12
buffer = "1m"                # a byte count as a string
flag = true
ratio = 0.25
mode = "thread"
nested.text = "rsh"          # a dotted key inside a table
)"));
  CHECK(test_count.get() == 12);
  CHECK(test_buffer.get() == 1 << 20);
  CHECK(test_flag.get() == true);
  CHECK(test_ratio.get() == 0.25);
  CHECK(test_mode.get() == "thread");
  CHECK(test_text.get() == "rsh");
  CHECK(test_text.resolve().source == Source::site_file);

  // A float parameter takes a TOML integer, a boolean takes 1/0; a dotted
  // key at top level and a [table.subtable] header work as well.
  env.set("GRIDMPI_SITE_FILE",
          dir.write("site2.toml", "conftest.ratio = 3\nconftest.flag = 1\n[conftest.nested]\ntext = \"ssh\"\n"));
  CHECK(test_ratio.get() == 3.0);
  CHECK(test_flag.get() == true);
  CHECK(test_text.get() == "ssh");
  CHECK(test_text.resolve().origin.ends_with("site2.toml:4"));
}

TEST_CASE("unknown keys in a site or user file are errors with a suggestion", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  TemporaryDirectory dir;
  const std::string site = dir.write("site.toml", "[conftest]\nbufer = 4096\n");
  env.set("GRIDMPI_SITE_FILE", site);
  // Reading any parameter reports it: the file as a whole is wrong.
  CHECK_THROWS_WITH(test_count.get(), Equals("unknown key \"conftest.bufer\" in site file " + site +
                                             ":2 (did you mean \"conftest.buffer\"?)"));
  CHECK_THROWS_AS(test_buffer.resolve(), ConfigError);

  const std::string user = dir.write("user.toml", "[somewhere]\nelse = 1\n");
  env.set("GRIDMPI_SITE_FILE", "");
  env.set("GRIDMPI_USER_FILE", user);
  CHECK_THROWS_WITH(test_count.get(), Equals("unknown key \"somewhere.else\" in user file " + user + ":2"));

  // A table whose name is a parameter is not that parameter.
  env.set("GRIDMPI_USER_FILE", dir.write("user2.toml", "[conftest.count]\nvalue = 1\n"));
  CHECK_THROWS_WITH(test_count.get(), Contains("unknown key \"conftest.count.value\""));
}

TEST_CASE("a program without the whole library does not judge file keys", "[conf]") {
  // The unit tests link the whole library, so the check is on.
  REQUIRE(gridmpi::conf::detail::unknown_keys_are_errors());
  ScopedEnvironment env;
  clear_test_environment(env);
  TemporaryDirectory dir;
  env.set("GRIDMPI_SITE_FILE", dir.write("site.toml", "[conftest]\ncount = 3\n[elsewhere]\nknob = 1\n"));
  CHECK_THROWS_WITH(test_count.get(), Contains("unknown key \"elsewhere.knob\""));
  gridmpi::conf::detail::set_unknown_keys_are_errors(false);
  CHECK(test_count.get() == 3);
  gridmpi::conf::detail::set_unknown_keys_are_errors(true);
  CHECK_THROWS_AS(test_count.get(), ConfigError);
}

TEST_CASE("arrays, dates and syntax errors in TOML are reported with file and line", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  TemporaryDirectory dir;
  const std::string arrays = dir.write("arrays.toml", "[conftest]\n\nbuffer = [1, 2]\n");
  env.set("GRIDMPI_SITE_FILE", arrays);
  CHECK_THROWS_WITH(test_buffer.get(), Equals("conftest.buffer: bad value in site file " + arrays +
                                              ":3: expected a string, number or boolean, not an array"));
  const std::string dates = dir.write("dates.toml", "[conftest]\ncount = 1979-05-27\n");
  env.set("GRIDMPI_SITE_FILE", dates);
  CHECK_THROWS_WITH(test_count.get(), Contains("not a date or time"));
  const std::string broken = dir.write("broken.toml", "[conftest\ncount = 1\n");
  env.set("GRIDMPI_SITE_FILE", broken);
  CHECK_THROWS_WITH(test_count.get(), Contains("cannot parse site file " + broken + ":1:"));
  const std::string duplicate = dir.write("duplicate.toml", "[conftest]\ncount = 1\ncount = 2\n");
  env.set("GRIDMPI_SITE_FILE", duplicate);
  CHECK_THROWS_WITH(test_count.get(), Contains("cannot parse site file " + duplicate + ":3:"));
}

TEST_CASE("a file named by GRIDMPI_SITE_FILE or GRIDMPI_USER_FILE must exist", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  TemporaryDirectory dir;
  env.set("GRIDMPI_SITE_FILE", dir.path() + "/missing.toml");
  CHECK_THROWS_WITH(test_count.get(),
                    Equals("cannot read site file " + dir.path() + "/missing.toml: No such file or directory"));
  env.set("GRIDMPI_SITE_FILE", "");
  env.set("GRIDMPI_USER_FILE", dir.path() + "/nope.toml");
  CHECK_THROWS_WITH(test_count.get(), Contains("cannot read user file " + dir.path() + "/nope.toml"));
}

TEST_CASE("default file locations: $MPIROOT/etc/gridmpi.toml and ~/.gridmpi.toml", "[conf]") {
  ScopedEnvironment env(false);
  clear_test_environment(env);
  env.unset("GRIDMPI_SITE_FILE");
  env.unset("GRIDMPI_USER_FILE");
  TemporaryDirectory root;
  TemporaryDirectory home;
  env.set("MPIROOT", root.path() + "/");
  env.set("HOME", home.path());
  CHECK(gridmpi::conf::mpiroot() == root.path());
  CHECK(gridmpi::conf::site_file_path() == root.path() + "/etc/gridmpi.toml");
  CHECK(gridmpi::conf::user_file_path() == home.path() + "/.gridmpi.toml");

  // Missing default files are fine.
  CHECK(test_count.get() == 4);
  root.write("etc/gridmpi.toml", "[conftest]\ncount = 5\nratio = 0.75\n");
  gridmpi::conf::reset_cache_for_tests();
  CHECK(test_count.get() == 5);
  CHECK(test_count.resolve().origin == root.path() + "/etc/gridmpi.toml:2");
  home.write(".gridmpi.toml", "[conftest]\ncount = 6\n");
  gridmpi::conf::reset_cache_for_tests();
  CHECK(test_count.get() == 6);
  CHECK(test_count.resolve().source == Source::user_file);
  CHECK(test_ratio.get() == 0.75);

  // An empty variable switches a file off.
  env.set("GRIDMPI_USER_FILE", "");
  CHECK(gridmpi::conf::user_file_path().empty());
  CHECK(test_count.get() == 5);
}

TEST_CASE("without MPIROOT the root is found from the running program", "[conf]") {
  ScopedEnvironment env;
  env.unset("MPIROOT");
  // The unit tests run from <build>/tests/unit_tests, so the root is <build>.
  char exe[4096];
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  REQUIRE(length > 0);
  const std::string program(exe, static_cast<std::size_t>(length));
  const std::string folder = program.substr(0, program.find_last_of('/'));
  const std::string expected = folder.substr(0, folder.find_last_of('/'));
  CHECK(gridmpi::conf::mpiroot() == expected);
}

TEST_CASE("resolved values are cached until the cache is reset", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  env.set("GRIDMPI_CONFTEST_COUNT", "1");
  CHECK(test_count.get() == 1);
  ::setenv("GRIDMPI_CONFTEST_COUNT", "2", 1);  // behind the registry's back
  CHECK(test_count.get() == 1);
  gridmpi::conf::reset_cache_for_tests();
  CHECK(test_count.get() == 2);
}

TEST_CASE("the registry lists parameters by name and forgets destroyed ones", "[conf]") {
  const auto before = gridmpi::conf::all_parameters();
  CHECK(std::is_sorted(before.begin(), before.end(),
                       [](auto* a, auto* b) { return a->info().name < b->info().name; }));
  CHECK(gridmpi::conf::find_parameter("conftest.buffer") == &test_buffer);
  CHECK(gridmpi::conf::find_parameter("conftest.nothing") == nullptr);
  {
    const Param<std::int64_t> local{"conftest.local", 1, "", "test: a scoped parameter", Level::developer};
    CHECK(gridmpi::conf::find_parameter("conftest.local") == &local);
    // A second declaration of a name is listed once (the first one).
    const Param<std::int64_t> twin{"conftest.local", 2, "", "test: the same name again", Level::developer};
    const auto during = gridmpi::conf::all_parameters();
    CHECK(during.size() == before.size() + 1);
    CHECK(gridmpi::conf::find_parameter("conftest.local") == &local);
  }
  CHECK(gridmpi::conf::find_parameter("conftest.local") == nullptr);
  CHECK(gridmpi::conf::all_parameters().size() == before.size());
}

TEST_CASE("names and levels print as users read them", "[conf]") {
  CHECK(gridmpi::conf::source_name(Source::default_value) == std::string("default"));
  CHECK(gridmpi::conf::source_name(Source::site_file) == std::string("site file"));
  CHECK(gridmpi::conf::source_name(Source::user_file) == std::string("user file"));
  CHECK(gridmpi::conf::source_name(Source::environment) == std::string("environment"));
  CHECK(gridmpi::conf::source_name(Source::command_line) == std::string("command line"));
  CHECK(gridmpi::conf::level_name(Level::user) == std::string("user"));
  CHECK(gridmpi::conf::level_name(Level::tuner) == std::string("tuner"));
  CHECK(gridmpi::conf::level_name(Level::developer) == std::string("developer"));
}

TEST_CASE("canonical text normalises units and spellings", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  env.set("GRIDMPI_CONFTEST_BUFFER", "64k");
  CHECK(test_buffer.canonical_text() == "65536");
  CHECK(test_buffer.resolve().text == "64k");
  env.set("GRIDMPI_CONFTEST_FLAG", "on");
  CHECK(test_flag.canonical_text() == "true");
  env.set("GRIDMPI_CONFTEST_RATIO", "2.50");
  CHECK(test_ratio.canonical_text() == "2.5");
}

TEST_CASE("misspelt GRIDMPI_ variables are found with a suggestion", "[conf]") {
  ScopedEnvironment env;
  clear_test_environment(env);
  env.set("GRIDMPI_CONFTEST_BUFER", "1");
  env.set("GRIDMPI_CONFTEST_ZZZZZZZZZZZZ", "1");
  std::map<std::string, std::string> unknown;
  for (const auto& entry : gridmpi::conf::unknown_environment_names()) unknown[entry.name] = entry.suggestion;
  REQUIRE(unknown.count("GRIDMPI_CONFTEST_BUFER") == 1);
  CHECK(unknown["GRIDMPI_CONFTEST_BUFER"] == "GRIDMPI_CONFTEST_BUFFER");
  REQUIRE(unknown.count("GRIDMPI_CONFTEST_ZZZZZZZZZZZZ") == 1);
  CHECK(unknown["GRIDMPI_CONFTEST_ZZZZZZZZZZZZ"].empty());
  CHECK(unknown.count("GRIDMPI_SITE_FILE") == 0);
  CHECK(unknown.count("GRIDMPI_USER_FILE") == 0);
}
