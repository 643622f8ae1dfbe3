// The parameter registry: declaration, the five sources, resolution and the
// value parsers.  See registry.hpp for the contract and README.md for the
// rules a value follows.
#include "conf/registry.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <toml++/toml.h>

#include "conf/registry_detail.hpp"
#include "conf/suggest.hpp"

namespace gridmpi::conf {

namespace {

constexpr const char* site_file_variable = "GRIDMPI_SITE_FILE";
constexpr const char* user_file_variable = "GRIDMPI_USER_FILE";
constexpr const char* command_line_variable = "GRIDMPI_FROM_COMMAND_LINE";

// One key=value found in a site or user file.
struct FileSetting {
  std::string text;
  std::string origin;  // "path:line"
};
using FileSettings = std::map<std::string, FileSetting, std::less<>>;

struct LoadedFiles {
  FileSettings site;
  FileSettings user;
};

// Function-local static so that a Param constructed during static
// initialization of any translation unit finds it ready.
struct Registry {
  std::mutex mutex;
  std::vector<ParamBase*> params;  // registration order
  std::uint64_t generation = 1;    // bumped by reset_cache_for_tests and set_from_command_line
  std::uint64_t files_generation = 0;
  std::optional<LoadedFiles> files;
  std::optional<std::string> files_error;  // a load failure is rethrown on every resolve
  std::vector<std::pair<std::string, std::string>> command_line_variables;
  bool unknown_keys_are_errors = false;  // see registry_detail.hpp
};

Registry& registry() {
  static Registry instance;
  return instance;
}

// ---------------------------------------------------------------- helpers

std::string_view trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::string> environment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string describe_origin(const ResolvedValue& value) {
  switch (value.source) {
    case Source::default_value:
      return "the built-in default";
    case Source::site_file:
      return "site file " + value.origin;
    case Source::user_file:
      return "user file " + value.origin;
    case Source::environment:
      return "environment variable " + value.origin;
    case Source::command_line:
      return "mpirun flag (" + value.origin + ")";
  }
  return value.origin;
}

[[noreturn]] void bad_value(const ParamInfo& info, const ResolvedValue& value, std::string_view expected) {
  throw ConfigError(info.name + ": bad value \"" + value.text + "\" from " + describe_origin(value) +
                    ": expected " + std::string(expected));
}

std::string format_double(double value) {
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (error != std::errc{}) return std::to_string(value);
  return std::string(buffer, end);
}

// ----------------------------------------------------------------- parsers

std::int64_t parse_integer(const ParamInfo& info, const ResolvedValue& value) {
  const bool bytes = info.unit == "bytes";
  const char* expected = bytes ? "a byte count such as 65536, 64k, 1m or 2g (powers of 1024)"
                               : "an integer such as 42 (or 0x2a)";
  std::string_view text = trim(value.text);
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  std::uint64_t magnitude = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), magnitude, base);
  if (end == text.data()) bad_value(info, value, expected);
  if (error == std::errc::result_out_of_range) bad_value(info, value, "a value that fits in a signed 64-bit integer");
  std::string suffix = lower(trim(std::string_view(end, text.data() + text.size() - end)));
  std::uint64_t multiplier = 1;
  if (!suffix.empty()) {
    if (!bytes || base != 10) bad_value(info, value, expected);
    static const std::pair<const char*, std::uint64_t> units[] = {
        {"k", 1ull << 10}, {"kb", 1ull << 10}, {"kib", 1ull << 10}, {"m", 1ull << 20},
        {"mb", 1ull << 20}, {"mib", 1ull << 20}, {"g", 1ull << 30}, {"gb", 1ull << 30},
        {"gib", 1ull << 30}, {"t", 1ull << 40}, {"tb", 1ull << 40}, {"tib", 1ull << 40},
        {"b", 1}};
    const auto* unit = std::find_if(std::begin(units), std::end(units),
                                    [&](const auto& entry) { return suffix == entry.first; });
    if (unit == std::end(units)) bad_value(info, value, expected);
    multiplier = unit->second;
  }
  std::uint64_t product = 0;
  const std::uint64_t limit = negative ? (1ull << 63) : (1ull << 63) - 1;
  if (__builtin_mul_overflow(magnitude, multiplier, &product) || product > limit)
    bad_value(info, value, "a value that fits in a signed 64-bit integer");
  if (negative) return product == (1ull << 63) ? INT64_MIN : -static_cast<std::int64_t>(product);
  return static_cast<std::int64_t>(product);
}

bool parse_boolean(const ParamInfo& info, const ResolvedValue& value) {
  const std::string text = lower(trim(value.text));
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text == "0" || text == "false" || text == "no" || text == "off") return false;
  bad_value(info, value, "one of 1, 0, true, false, yes, no, on, off");
}

double parse_float(const ParamInfo& info, const ResolvedValue& value) {
  std::string_view text = trim(value.text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double result = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), result);
  if (end == text.data() || end != text.data() + text.size() || error != std::errc{} || !std::isfinite(result))
    bad_value(info, value, "a finite number such as 0.5, 2 or 1e-3");
  return result;
}

std::string parse_choice(const ParamInfo& info, const ResolvedValue& value) {
  const std::string text = lower(trim(value.text));
  for (const std::string& choice : info.choices)
    if (lower(choice) == text) return choice;
  std::string expected = "one of ";
  for (std::size_t i = 0; i < info.choices.size(); ++i) {
    if (i > 0) expected += i + 1 == info.choices.size() ? " or " : ", ";
    expected += info.choices[i];
  }
  bad_value(info, value, expected);
}

// Parses by the declared type and returns the value in canonical form.
std::string canonical(const ParamInfo& info, const ResolvedValue& value) {
  if (info.type == "integer") return std::to_string(parse_integer(info, value));
  if (info.type == "boolean") return parse_boolean(info, value) ? "true" : "false";
  if (info.type == "float") return format_double(parse_float(info, value));
  if (info.type == "choice") return parse_choice(info, value);
  return value.text;
}

// ------------------------------------------------------------------ files

std::string home_directory() {
  if (auto home = environment("HOME"); home && !home->empty()) return *home;
  if (const passwd* entry = getpwuid(getuid()); entry != nullptr && entry->pw_dir != nullptr) return entry->pw_dir;
  return {};
}

// The path of the loaded object (libmpi.so, or the executable when the
// library is linked statically) that contains this function.
std::string running_object_path() {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(&running_object_path), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) != 0 &&
      map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0') {
    return map->l_name;  // may be relative (a relative LD_LIBRARY_PATH entry); realpath() resolves it
  }
  // The main program has an empty name in the link map.
  char buffer[4096];
  const ssize_t length = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (length <= 0) return {};
  return std::string(buffer, static_cast<std::size_t>(length));
}

std::string parent_directory(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return {};
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    const int error = errno;
    throw ConfigError("cannot read " + what + " " + path + ": " + std::strerror(error));
  }
  std::ostringstream contents;
  contents << stream.rdbuf();
  return contents.str();
}

void flatten(const toml::table& table, const std::string& prefix, const std::string& path, const char* what,
             FileSettings& out) {
  for (auto&& [key, node] : table) {
    const std::string name = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    const std::string origin = path + ":" + std::to_string(node.source().begin.line);
    if (const toml::table* inner = node.as_table()) {
      flatten(*inner, name, path, what, out);
      continue;
    }
    std::string text;
    if (auto v = node.value_exact<std::string>())
      text = *v;
    else if (auto i = node.value_exact<std::int64_t>())
      text = std::to_string(*i);
    else if (auto d = node.value_exact<double>())
      text = format_double(*d);
    else if (auto b = node.value_exact<bool>())
      text = *b ? "true" : "false";
    else
      throw ConfigError(name + ": bad value in " + std::string(what) + " " + origin +
                        ": expected a string, number or boolean, not " +
                        (node.is_array() ? "an array" : "a date or time"));
    out[name] = FileSetting{std::move(text), origin};
  }
}

// Reads one TOML file; every key must name a declared parameter when
// `check_keys` (the program has the whole library).
FileSettings load_file(const std::string& path, const char* what, const std::vector<ParamBase*>& params,
                       bool check_keys) {
  const std::string contents = read_file(path, what);
  toml::table table;
  try {
    table = toml::parse(contents, path);
  } catch (const toml::parse_error& error) {
    throw ConfigError("cannot parse " + std::string(what) + " " + path + ":" +
                      std::to_string(error.source().begin.line) + ":" + std::to_string(error.source().begin.column) +
                      ": " + std::string(error.description()));
  }
  FileSettings settings;
  flatten(table, "", path, what, settings);
  if (!check_keys) return settings;
  std::vector<std::string> names;
  for (const ParamBase* param : params) names.push_back(param->info().name);
  for (const auto& [name, setting] : settings) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::string message = "unknown key \"" + name + "\" in " + what + " " + setting.origin;
    if (auto close = closest_match(name, names)) message += " (did you mean \"" + *close + "\"?)";
    throw ConfigError(message);
  }
  return settings;
}

// Path of a configuration file and whether it must exist.
struct FileChoice {
  std::string path;
  bool required = false;
};

FileChoice choose_site_file() {
  if (auto path = environment(site_file_variable)) return {*path, !path->empty()};
  const std::string root = mpiroot();
  if (root.empty()) return {};
  return {root + "/etc/gridmpi.toml", false};
}

FileChoice choose_user_file() {
  if (auto path = environment(user_file_variable)) return {*path, !path->empty()};
  const std::string home = home_directory();
  if (home.empty()) return {};
  return {home + "/.gridmpi.toml", false};
}

FileSettings load_optional(const FileChoice& choice, const char* what, const Registry& reg) {
  if (choice.path.empty()) return {};
  if (!choice.required && access(choice.path.c_str(), F_OK) != 0) return {};
  return load_file(choice.path, what, reg.params, reg.unknown_keys_are_errors);
}

// Caller holds the registry lock.
const LoadedFiles& loaded_files(Registry& reg) {
  if (reg.files_generation != reg.generation) {
    reg.files.reset();
    reg.files_error.reset();
    reg.files_generation = reg.generation;
    try {
      LoadedFiles files;
      files.site = load_optional(choose_site_file(), "site file", reg);
      files.user = load_optional(choose_user_file(), "user file", reg);
      reg.files = std::move(files);
    } catch (const ConfigError& error) {
      reg.files_error = error.what();
    }
  }
  if (reg.files_error) throw ConfigError(*reg.files_error);
  return *reg.files;
}

// ------------------------------------------------------------ resolution

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

bool set_from_command_line_flag(const ParamInfo& info) {
  const auto listed = environment(command_line_variable);
  if (!listed) return false;
  for (const std::string& item : split_list(*listed))
    if (item == info.name || item == info.env_names.front()) return true;
  return false;
}

// Caller holds the registry lock.
std::vector<ResolvedValue> settings_locked(Registry& reg, const ParamInfo& info) {
  std::vector<ResolvedValue> settings;
  settings.push_back({info.default_text, Source::default_value, "default"});
  const LoadedFiles& files = loaded_files(reg);
  if (auto it = files.site.find(info.name); it != files.site.end())
    settings.push_back({it->second.text, Source::site_file, it->second.origin});
  if (auto it = files.user.find(info.name); it != files.user.end())
    settings.push_back({it->second.text, Source::user_file, it->second.origin});
  // env_names is ordered highest precedence first (GRIDMPI_<NAME>, then the
  // legacy names as declared); list them lowest first.
  const bool from_flag = set_from_command_line_flag(info);
  std::optional<ResolvedValue> flag;
  for (auto name = info.env_names.rbegin(); name != info.env_names.rend(); ++name) {
    const auto value = environment(*name);
    if (!value) continue;
    if (from_flag && *name == info.env_names.front())
      flag = ResolvedValue{*value, Source::command_line, *name};
    else
      settings.push_back({*value, Source::environment, *name});
  }
  if (flag) settings.push_back(*flag);
  return settings;
}

std::vector<ParamBase*> unique_sorted(const std::vector<ParamBase*>& params) {
  std::vector<ParamBase*> sorted = params;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const ParamBase* a, const ParamBase* b) { return a->info().name < b->info().name; });
  sorted.erase(std::unique(sorted.begin(), sorted.end(),
                           [](const ParamBase* a, const ParamBase* b) { return a->info().name == b->info().name; }),
               sorted.end());
  return sorted;
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, std::int64_t>) return "integer";
  if constexpr (std::is_same_v<T, bool>) return "boolean";
  if constexpr (std::is_same_v<T, double>) return "float";
  if constexpr (std::is_same_v<T, std::string>) return "string";
}

template <class T>
std::string default_text(const T& value) {
  if constexpr (std::is_same_v<T, std::int64_t>) return std::to_string(value);
  if constexpr (std::is_same_v<T, bool>) return value ? "true" : "false";
  if constexpr (std::is_same_v<T, double>) return format_double(value);
  if constexpr (std::is_same_v<T, std::string>) return value;
}

std::vector<std::string> env_names_for(const char* name, std::initializer_list<const char*> extra) {
  std::vector<std::string> names{environment_name(name)};
  for (const char* legacy : extra) names.emplace_back(legacy);
  return names;
}

}  // namespace

// ------------------------------------------------------------------ detail

void detail::set_unknown_keys_are_errors(bool on) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  reg.unknown_keys_are_errors = on;
  ++reg.generation;
}

bool detail::unknown_keys_are_errors() {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  return reg.unknown_keys_are_errors;
}

// ------------------------------------------------------------- ParamBase

ParamBase::ParamBase(ParamInfo info) : info_(std::move(info)) {
  if (info_.env_names.empty() || info_.env_names.front() != environment_name(info_.name))
    info_.env_names.insert(info_.env_names.begin(), environment_name(info_.name));
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  reg.params.push_back(this);
}

ParamBase::~ParamBase() {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  std::erase(reg.params, this);
}

const ResolvedValue& ParamBase::resolve() const {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  if (!resolved_ || generation_ != reg.generation) {
    value_ = settings_locked(reg, info_).back();
    generation_ = reg.generation;
    resolved_ = true;
  }
  return value_;
}

void ParamBase::validate() const { (void)canonical_text(); }

std::string ParamBase::canonical_text() const { return canonical(info_, resolve()); }

// ----------------------------------------------------------------- Param

template <class T>
Param<T>::Param(const char* name, T default_value, const char* unit, const char* description, Level level,
                std::initializer_list<const char*> extra_env_names)
    : ParamBase(ParamInfo{name, type_name<T>(), unit, default_text(default_value), description, level,
                          env_names_for(name, extra_env_names)}) {}

template <class T>
T Param<T>::get() const {
  const ResolvedValue& value = resolve();
  if constexpr (std::is_same_v<T, std::int64_t>) return parse_integer(info(), value);
  if constexpr (std::is_same_v<T, bool>) return parse_boolean(info(), value);
  if constexpr (std::is_same_v<T, double>) return parse_float(info(), value);
  if constexpr (std::is_same_v<T, std::string>) return value.text;
}

template class Param<std::int64_t>;
template class Param<bool>;
template class Param<double>;
template class Param<std::string>;

ChoiceParam::ChoiceParam(const char* name, const char* default_value, std::initializer_list<const char*> choices,
                         const char* description, Level level, std::initializer_list<const char*> extra_env_names)
    : ParamBase(ParamInfo{name, "choice", "", default_value, description, level,
                          env_names_for(name, extra_env_names),
                          std::vector<std::string>(choices.begin(), choices.end())}) {}

std::string ChoiceParam::get() const { return parse_choice(info(), resolve()); }

// ------------------------------------------------------------ free functions

std::vector<const ParamBase*> all_parameters() {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  const auto sorted = unique_sorted(reg.params);
  return {sorted.begin(), sorted.end()};
}

const ParamBase* find_parameter(std::string_view name) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  for (const ParamBase* param : reg.params)
    if (param->info().name == name) return param;
  return nullptr;
}

const char* source_name(Source source) {
  switch (source) {
    case Source::default_value:
      return "default";
    case Source::site_file:
      return "site file";
    case Source::user_file:
      return "user file";
    case Source::environment:
      return "environment";
    case Source::command_line:
      return "command line";
  }
  return "unknown";
}

const char* level_name(Level level) {
  switch (level) {
    case Level::user:
      return "user";
    case Level::tuner:
      return "tuner";
    case Level::developer:
      return "developer";
  }
  return "unknown";
}

std::string environment_name(std::string_view parameter_name) {
  std::string name = "GRIDMPI_";
  for (char c : parameter_name)
    name += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

void reset_cache_for_tests() {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  ++reg.generation;
}

std::vector<ResolvedValue> all_settings(const ParamBase& param) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  return settings_locked(reg, param.info());
}

std::string mpiroot() {
  if (auto root = environment("MPIROOT"); root && !root->empty()) {
    while (root->size() > 1 && root->back() == '/') root->pop_back();
    return *root;
  }
  std::string object = running_object_path();
  if (object.empty()) return {};
  char resolved[PATH_MAX];
  if (realpath(object.c_str(), resolved) != nullptr) object = resolved;
  // <root>/lib/libmpi.so, <root>/bin/program, or a multiarch
  // <root>/lib/x86_64-linux-gnu/libmpi.so.
  std::string directory = parent_directory(object);
  if (directory.find("-linux-", directory.find_last_of('/')) != std::string::npos &&
      parent_directory(directory).ends_with("/lib"))
    directory = parent_directory(directory);
  return parent_directory(directory);
}

std::string site_file_path() { return choose_site_file().path; }
std::string user_file_path() { return choose_user_file().path; }

void set_from_command_line(std::string_view name, std::string_view value) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  const ParamBase* param = nullptr;
  std::vector<std::string> names;
  for (const ParamBase* candidate : reg.params) {
    names.push_back(candidate->info().name);
    if (candidate->info().name == name) param = candidate;
  }
  if (param == nullptr) {
    std::string message = "unknown parameter \"" + std::string(name) + "\"";
    if (auto close = closest_match(name, names)) message += " (did you mean \"" + *close + "\"?)";
    throw ConfigError(message);
  }
  const std::string variable = param->info().env_names.front();
  (void)canonical(param->info(), ResolvedValue{std::string(value), Source::command_line, variable});
  if (setenv(variable.c_str(), std::string(value).c_str(), 1) != 0)
    throw ConfigError("cannot set " + variable + ": " + std::strerror(errno));
  std::vector<std::string> listed = split_list(environment(command_line_variable).value_or(""));
  if (std::find(listed.begin(), listed.end(), name) == listed.end()) listed.emplace_back(name);
  std::string joined;
  for (const std::string& item : listed) joined += (joined.empty() ? "" : ",") + item;
  setenv(command_line_variable, joined.c_str(), 1);

  auto remember = [&](const std::string& key, const std::string& text) {
    auto it = std::find_if(reg.command_line_variables.begin(), reg.command_line_variables.end(),
                           [&](const auto& entry) { return entry.first == key; });
    if (it != reg.command_line_variables.end())
      it->second = text;
    else
      reg.command_line_variables.emplace_back(key, text);
  };
  remember(variable, std::string(value));
  remember(command_line_variable, joined);
  ++reg.generation;
}

std::vector<std::pair<std::string, std::string>> command_line_environment() {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  return reg.command_line_variables;
}

std::vector<UnknownVariable> unknown_environment_names() {
  std::vector<std::string> known{site_file_variable, user_file_variable, command_line_variable};
  {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    for (const ParamBase* param : reg.params)
      for (const std::string& name : param->info().env_names)
        if (name.starts_with("GRIDMPI_")) known.push_back(name);
  }
  std::vector<UnknownVariable> unknown;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (!text.starts_with("GRIDMPI_")) continue;
    const std::string name(text.substr(0, text.find('=')));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    unknown.push_back({name, closest_match(name, known).value_or("")});
  }
  std::sort(unknown.begin(), unknown.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return unknown;
}

}  // namespace gridmpi::conf
