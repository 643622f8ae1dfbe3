// Checks every parameter the library declares (the unit tests link the whole
// library): well-formed names, a description, a default that parses, and no
// environment variable claimed by two parameters.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "conf/registry.hpp"
#include "test_conf_support.hpp"

using gridmpi::conf::ParamBase;
using gridmpi::conf::testing::ScopedEnvironment;

namespace {

bool well_formed_name(const std::string& name) {
  if (name.empty() || name.front() == '.' || name.back() == '.' || name.find("..") != std::string::npos)
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  return name.front() >= 'a' && name.front() <= 'z';
}

}  // namespace

TEST_CASE("every declared parameter is well formed", "[conf]") {
  const auto params = gridmpi::conf::all_parameters();
  REQUIRE(gridmpi::conf::find_parameter("log.level") != nullptr);
  std::map<std::string, std::string> owner_of_variable;
  for (const ParamBase* param : params) {
    const auto& info = param->info();
    INFO("parameter " << info.name);
    CHECK(well_formed_name(info.name));
    CHECK(!info.description.empty());
    CHECK((info.type == "integer" || info.type == "boolean" || info.type == "float" || info.type == "string" ||
           info.type == "choice"));
    REQUIRE(!info.env_names.empty());
    CHECK(info.env_names.front() == gridmpi::conf::environment_name(info.name));
    for (const std::string& variable : info.env_names) {
      INFO("variable " << variable);
      const auto [it, inserted] = owner_of_variable.emplace(variable, info.name);
      CHECK((inserted || it->second == info.name));
    }
  }
}

TEST_CASE("every declared default is a valid value of its type", "[conf]") {
  ScopedEnvironment env;
  for (const ParamBase* param : gridmpi::conf::all_parameters())
    for (const std::string& variable : param->info().env_names) env.unset(variable);
  for (const ParamBase* param : gridmpi::conf::all_parameters()) {
    INFO("parameter " << param->info().name);
    CHECK(param->resolve().source == gridmpi::conf::Source::default_value);
    CHECK_NOTHROW(param->validate());
  }
}
