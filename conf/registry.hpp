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
#pragma once
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
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
  std::string type;          // "integer", "boolean", "string", "float"
  std::string unit;          // "bytes", "seconds", "" ...
  std::string default_text;
  std::string description;
  Level level;
  std::vector<std::string> env_names;  // every environment name accepted
};

struct ResolvedValue {
  std::string text;  // the value as given (or the default)
  Source source;
  std::string origin;  // file path and line, or the environment variable name
};

class ParamBase {
 public:
  ParamBase(ParamInfo info);
  const ParamInfo& info() const noexcept { return info_; }
  // Finds the winning value among the sources (cached after the first call).
  const ResolvedValue& resolve() const;

 private:
  ParamInfo info_;
  mutable bool resolved_ = false;
  mutable ResolvedValue value_;
};

// T is one of std::int64_t, bool, double, std::string.  Integers with unit
// "bytes" accept k/K, m/M, g/G suffixes (powers of 1024).  get() throws
// ConfigError for a malformed value.
template <class T>
class Param : public ParamBase {
 public:
  Param(const char* name, T default_value, const char* unit, const char* description,
        Level level, std::initializer_list<const char*> extra_env_names = {});
  T get() const;
};

// Every declared parameter (for gridmpi-info and the docs), sorted by name.
std::vector<const ParamBase*> all_parameters();
const char* source_name(Source source);  // "default", "site file", ...
// Forgets cached values (tests change the environment between calls).
void reset_cache_for_tests();

}  // namespace gridmpi::conf
