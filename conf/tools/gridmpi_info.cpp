// gridmpi-info: prints every configuration parameter with its value and the
// source it came from, one parameter in detail, or a commented site file.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "conf/registry.hpp"
#include "conf/suggest.hpp"

namespace {

using gridmpi::conf::ConfigError;
using gridmpi::conf::Level;
using gridmpi::conf::ParamBase;
using gridmpi::conf::ResolvedValue;
using gridmpi::conf::Source;

constexpr const char* usage =
    "usage: gridmpi-info [--all] [NAME...]   list parameters (user and tuner level; --all adds developer)\n"
    "       gridmpi-info --toml              print a commented site file with every default\n"
    "NAME is a dotted parameter name (tcp.socbuf) or one of its environment variables.\n";

std::string describe_source(const ResolvedValue& value) {
  switch (value.source) {
    case Source::default_value:
      return "default";
    case Source::site_file:
      return "site file " + value.origin;
    case Source::user_file:
      return "user file " + value.origin;
    case Source::environment:
      return "env " + value.origin;
    case Source::command_line:
      return "command line (" + value.origin + ")";
  }
  return value.origin;
}

std::string type_text(const gridmpi::conf::ParamInfo& info) {
  std::string text = info.type;
  if (!info.choices.empty()) {
    text += " of ";
    for (std::size_t i = 0; i < info.choices.size(); ++i) text += (i ? "|" : "") + info.choices[i];
  }
  if (!info.unit.empty()) text += ", unit " + info.unit;
  return text;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

std::string quoted_if_empty(const std::string& text) { return text.empty() ? "\"\"" : text; }

void print_parameter(const ParamBase& param, bool detailed) {
  const auto& info = param.info();
  const ResolvedValue& value = param.resolve();
  const std::string canonical = param.canonical_text();
  std::cout << info.name << " = " << quoted_if_empty(canonical);
  if (canonical != value.text) std::cout << " (given as \"" << value.text << "\")";
  std::cout << "\n    source: " << describe_source(value) << "\n    " << type_text(info) << "; level "
            << gridmpi::conf::level_name(info.level) << "; default " << quoted_if_empty(info.default_text)
            << "; environment " << join(info.env_names, ", ") << "\n    " << info.description << "\n";
  if (detailed) {
    std::cout << "    settings, lowest precedence first:\n";
    for (const ResolvedValue& setting : gridmpi::conf::all_settings(param))
      std::cout << "      " << describe_source(setting) << ": \"" << setting.text << "\"\n";
  }
}

std::string toml_value(const gridmpi::conf::ParamInfo& info) {
  if (info.type == "integer" || info.type == "boolean") return info.default_text;
  if (info.type == "float") {
    std::string text = info.default_text;
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // TOML floats need a point
    return text;
  }
  std::string text = "\"";
  for (char c : info.default_text) {
    if (c == '"' || c == '\\') text += '\\';
    text += c;
  }
  return text + "\"";
}

void print_toml(const std::vector<const ParamBase*>& params) {
  std::cout << "# gridmpi site file ($MPIROOT/etc/gridmpi.toml): every parameter with its built-in\n"
               "# default, as printed by gridmpi-info --toml (gridmpi " GRIDMPI_VERSION ").\n"
               "# Uncomment a line to change a value for every job of this installation; users\n"
               "# override it in ~/.gridmpi.toml, the environment or with mpirun flags.\n";
  // Keys without a table must precede the first [table] header.
  std::map<std::string, std::vector<const ParamBase*>> tables;
  for (const ParamBase* param : params) {
    const std::string& name = param->info().name;
    const auto dot = name.find_last_of('.');
    tables[dot == std::string::npos ? "" : name.substr(0, dot)].push_back(param);
  }
  for (const auto& [table, members] : tables) {
    std::cout << "\n";
    if (!table.empty()) std::cout << "[" << table << "]\n";
    for (const ParamBase* param : members) {
      if (param != members.front()) std::cout << "\n";
      const auto& info = param->info();
      const std::string key = table.empty() ? info.name : info.name.substr(table.size() + 1);
      std::cout << "# " << info.description << "\n# " << type_text(info) << "; level "
                << gridmpi::conf::level_name(info.level) << "; environment " << join(info.env_names, ", ")
                << "\n# " << key << " = " << toml_value(info) << "\n";
    }
  }
}

const ParamBase* lookup(const std::string& name) {
  if (const ParamBase* param = gridmpi::conf::find_parameter(name)) return param;
  for (const ParamBase* param : gridmpi::conf::all_parameters())
    for (const std::string& variable : param->info().env_names)
      if (variable == name) return param;
  return nullptr;
}

int run(int argc, char** argv) {
  bool all = false;
  bool toml = false;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--all" || argument == "-a") {
      all = true;
    } else if (argument == "--toml") {
      toml = true;
    } else if (argument == "--help" || argument == "-h") {
      std::cout << usage;
      return 0;
    } else if (argument == "--version") {
      std::cout << "gridmpi-info (gridmpi " GRIDMPI_VERSION ")\n";
      return 0;
    } else if (argument.starts_with("-")) {
      std::cerr << "gridmpi-info: unknown option \"" << argument << "\"\n" << usage;
      return 2;
    } else {
      names.push_back(argument);
    }
  }
  const auto params = gridmpi::conf::all_parameters();
  if (toml) {
    print_toml(params);
    return 0;
  }

  std::vector<const ParamBase*> selected;
  if (names.empty()) {
    for (const ParamBase* param : params)
      if (all || param->info().level != Level::developer) selected.push_back(param);
  } else {
    std::vector<std::string> known;
    for (const ParamBase* param : params) known.push_back(param->info().name);
    for (const std::string& name : names) {
      const ParamBase* param = lookup(name);
      if (param == nullptr) {
        std::cerr << "gridmpi-info: no parameter named \"" << name << "\"";
        if (auto close = gridmpi::conf::closest_match(name, known)) std::cerr << " (did you mean \"" << *close << "\"?)";
        std::cerr << "; gridmpi-info --all lists them all\n";
        return 1;
      }
      selected.push_back(param);
    }
  }

  // Every value is checked before anything is printed, so that a malformed
  // setting is the one line the user sees.
  // A broken file makes every parameter fail with the same line: print it once.
  std::vector<std::string> errors;
  for (const ParamBase* param : selected) {
    try {
      param->validate();
    } catch (const ConfigError& error) {
      if (std::find(errors.begin(), errors.end(), error.what()) == errors.end()) errors.emplace_back(error.what());
    }
  }
  for (const std::string& error : errors) std::cerr << "gridmpi-info: " << error << "\n";
  if (!errors.empty()) return 1;

  if (names.empty()) {
    const std::string root = gridmpi::conf::mpiroot();
    const std::string site = gridmpi::conf::site_file_path();
    const std::string user = gridmpi::conf::user_file_path();
    const auto present = [](const std::string& path) {
      if (path.empty()) return std::string("(none)");
      return path + (access(path.c_str(), F_OK) == 0 ? "" : " (not present)");
    };
    std::cout << "gridmpi " GRIDMPI_VERSION "\nMPIROOT:   " << (root.empty() ? "(unknown)" : root)
              << "\nsite file: " << present(site) << "\nuser file: " << present(user) << "\n";
  }
  for (std::size_t i = 0; i < selected.size(); ++i) {
    if (names.empty() || i > 0) std::cout << "\n";  // the header needs a blank line too
    print_parameter(*selected[i], !names.empty());
  }
  if (names.empty() && !all) {
    const auto hidden = params.size() - selected.size();
    if (hidden > 0) std::cout << "\n(" << hidden << " developer-level parameters not shown; use --all)\n";
  }
  for (const auto& unknown : gridmpi::conf::unknown_environment_names()) {
    std::cerr << "gridmpi-info: warning: environment variable " << unknown.name << " names no parameter";
    if (!unknown.suggestion.empty()) std::cerr << " (did you mean " << unknown.suggestion << "?)";
    std::cerr << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ConfigError& error) {
    std::cerr << "gridmpi-info: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "gridmpi-info: internal error: " << error.what() << "\n";
    return 1;
  }
}
