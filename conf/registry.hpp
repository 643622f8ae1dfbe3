// The parameter registry.  Every knob is declared once, next to the code
// that reads it, as a static Param<T>:
//
//   static const gridmpi::conf::Param<std::int64_t> socket_buffer{
//       "tcp.socbuf", 65536, "bytes",
//       "socket send/receive buffer size; 0 = kernel autotuning",
//       gridmpi::conf::Level::tuner, {"_YAMPI_SOCBUF"}};
//   ... socket_buffer.get() ...
//
// Sources, lowest to highest precedence: built-in default < site file
// ($MPIROOT/etc/gridmpi.toml, or GRIDMPI_SITE_FILE) < user file
// (~/.gridmpi.toml, or GRIDMPI_USER_FILE) < environment (GRIDMPI_<NAME> with
// dots as underscores, upper case, plus the listed legacy names such as
// _YAMPI_SOCBUF) < mpirun flag (mpirun exports GRIDMPI_<NAME> to ranks and
// marks it as coming from the command line).  Owner: conf/.
//
// Declare every Param in a library source (a .cpp of gridmpi_obj, not a
// program's own file or a tools/ folder): MPI processes (libmpi.so) reject a
// site-file key that no library parameter has, and gridmpi-info lists only
// what the library declares.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gridmpi::conf {

enum class Level { user, tuner, developer };
enum class Source { default_value, site_file, user_file, environment, command_line };

// Thrown for a malformed or unknown value; what() names the parameter, the
// value, where it came from and what is expected.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ParamInfo {
  std::string name;          // dotted, e.g. "tcp.socbuf"
  std::string type;          // "integer", "boolean", "string", "float", "choice"
  std::string unit;          // "bytes", "seconds", "" ...
  std::string default_text;
  std::string description;
  Level level;
  std::vector<std::string> env_names;  // every environment name accepted
  std::vector<std::string> choices = {};  // allowed values of a "choice" parameter
};

struct ResolvedValue {
  std::string text;  // the value as given (or the default)
  Source source;
  std::string origin;  // file path and line, or the environment variable name
};

class ParamBase {
 public:
  ParamBase(ParamInfo info);
  ~ParamBase();  // unregisters (parameters declared in a function scope)
  ParamBase(const ParamBase&) = delete;
  ParamBase& operator=(const ParamBase&) = delete;

  const ParamInfo& info() const noexcept { return info_; }
  // Finds the winning value among the sources (cached after the first call).
  // Throws ConfigError when a site or user file cannot be read or parsed, or
  // sets a key no parameter has.
  const ResolvedValue& resolve() const;
  // Checks the winning value against the type; throws ConfigError (the one
  // line get() would throw) when it is malformed.
  void validate() const;
  // The winning value in canonical form ("65536" for "64k", "true" for "on").
  std::string canonical_text() const;

 private:
  ParamInfo info_;
  mutable bool resolved_ = false;
  mutable ResolvedValue value_;
  mutable std::uint64_t generation_ = 0;  // registry generation of value_
};

// T is one of std::int64_t, bool, double, std::string.  Integers with unit
// "bytes" accept k/K, m/M, g/G, t/T suffixes (powers of 1024, optionally
// followed by "b" or "ib").  Booleans accept 1/0, true/false, yes/no, on/off.
// get() throws ConfigError for a malformed value.  get() takes a lock and
// parses: read it once (at initialization), not per message.
template <class T>
class Param : public ParamBase {
 public:
  Param(const char* name, T default_value, const char* unit, const char* description,
        Level level, std::initializer_list<const char*> extra_env_names = {});
  T get() const;
};

// A string parameter restricted to a fixed set of values (compared
// case-insensitively, returned as declared), e.g. log.level or an algorithm
// name.  get() throws ConfigError naming the allowed values.
class ChoiceParam : public ParamBase {
 public:
  ChoiceParam(const char* name, const char* default_value, std::initializer_list<const char*> choices,
              const char* description, Level level, std::initializer_list<const char*> extra_env_names = {});
  std::string get() const;
};

// Every declared parameter (for gridmpi-info and the docs), sorted by name.
// When two objects declare the same name, the first one registered is listed.
std::vector<const ParamBase*> all_parameters();
// The parameter called `name` (dotted), or nullptr.
const ParamBase* find_parameter(std::string_view name);
const char* source_name(Source source);  // "default", "site file", ...
const char* level_name(Level level);     // "user", "tuner", "developer"
// GRIDMPI_TCP_SOCBUF for "tcp.socbuf".
std::string environment_name(std::string_view parameter_name);
// Forgets cached values (tests change the environment between calls).
void reset_cache_for_tests();

// Every source that sets `param`, lowest precedence first; the last one is
// what resolve() returns.  The default is always the first element.
std::vector<ResolvedValue> all_settings(const ParamBase& param);

// The installation root: $MPIROOT, else the parent of the folder holding the
// running library (libmpi.so) or executable.  Empty when it cannot be found.
std::string mpiroot();
// The site and user files in use: GRIDMPI_SITE_FILE / $MPIROOT/etc/gridmpi.toml
// and GRIDMPI_USER_FILE / ~/.gridmpi.toml.  Empty when there is none (an empty
// GRIDMPI_SITE_FILE or GRIDMPI_USER_FILE switches that file off).  The file
// may not exist; only one named by GRIDMPI_*_FILE must.
std::string site_file_path();
std::string user_file_path();

// For mpirun: a flag set parameter `name` (dotted) to `value`.  Checks the
// value (throws ConfigError naming the flag's value and what is expected, or
// the unknown name), sets GRIDMPI_<NAME> in this process's environment (the
// ranks inherit it) and adds `name` to GRIDMPI_FROM_COMMAND_LINE, so that
// the processes report the source as "command line" and let it win over
// every other environment name of the parameter.
void set_from_command_line(std::string_view name, std::string_view value);
// The variables set_from_command_line() set so far, including
// GRIDMPI_FROM_COMMAND_LINE, as (name, value) pairs: what a remote start
// (ssh) must pass on.
std::vector<std::pair<std::string, std::string>> command_line_environment();

// Environment variables starting with GRIDMPI_ that name no parameter (typos),
// sorted, each with the closest known variable when one is close (else "").
// The bootstrap variables (GRIDMPI_SITE_FILE, GRIDMPI_USER_FILE,
// GRIDMPI_FROM_COMMAND_LINE) are known.
struct UnknownVariable {
  std::string name;
  std::string suggestion;
};
std::vector<UnknownVariable> unknown_environment_names();

}  // namespace gridmpi::conf
