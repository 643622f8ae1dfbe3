// MPI_Info objects and the MPI_INFO_ENV contents.
#include "core/info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "base/error.hpp"

namespace gridmpi::core {

void Info::set(const std::string& key, const std::string& value) {
  if (key.empty() || key.size() > MPI_MAX_INFO_KEY)
    throw MpiError(MPI_ERR_INFO_KEY, fmt::format("info key of {} characters (must be 1..{})", key.size(),
                                                 MPI_MAX_INFO_KEY));
  if (value.size() > MPI_MAX_INFO_VAL)
    throw MpiError(MPI_ERR_INFO_VALUE, fmt::format("info value of {} characters for key '{}' (at most {})",
                                                   value.size(), key, MPI_MAX_INFO_VAL));
  for (auto& [k, v] : entries) {
    if (k == key) {
      v = value;
      return;
    }
  }
  entries.emplace_back(key, value);
}

std::optional<std::string> Info::get(const std::string& key) const {
  for (auto& [k, v] : entries)
    if (k == key) return v;
  return std::nullopt;
}

void Info::erase(const std::string& key) {
  auto it = std::find_if(entries.begin(), entries.end(), [&](auto& e) { return e.first == key; });
  if (it == entries.end()) throw MpiError(MPI_ERR_INFO_NOKEY, fmt::format("info key '{}' is not set", key));
  entries.erase(it);
}

HandleTable<Info>& info_table() {
  static HandleTable<Info>& table = []() -> HandleTable<Info>& {
    static HandleTable<Info> t(MPI_ERR_INFO);
    auto env = std::make_unique<Info>();
    env->handle = MPI_INFO_ENV;
    t.put_at(MPI_INFO_ENV, std::move(env));
    return t;
  }();
  return table;
}

Info& info(MPI_Info handle) {
  Info* i = info_table().find(handle);
  if (!i) {
    if (handle == MPI_INFO_NULL) throw MpiError(MPI_ERR_INFO, "the info object is MPI_INFO_NULL");
    throw MpiError(MPI_ERR_INFO, fmt::format("invalid info object {}", handle));
  }
  return *i;
}

namespace {

// The command line when MPI_Init got no argv (MPI_Init(NULL, NULL)).
std::vector<std::string> command_line_from_proc() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    args.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return args;
}


}  // namespace

std::string thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

std::vector<std::pair<std::string, std::string>> startup_info(int argc, char** argv, int world_size,
                                                              int thread_level, const std::string& host) {
  std::vector<std::string> args;
  if (argv) {
    for (int i = 0; i < argc && argv[i]; ++i) args.emplace_back(argv[i]);
  } else {
    args = command_line_from_proc();
  }
  Info env;
  auto set_clipped = [&](const char* key, std::string value) {
    if (value.size() > MPI_MAX_INFO_VAL) value.resize(MPI_MAX_INFO_VAL);
    env.set(key, value);
  };
  if (!args.empty()) {
    set_clipped("command", args[0]);
    std::string rest;
    for (size_t i = 1; i < args.size(); ++i) rest += (i > 1 ? " " : "") + args[i];
    set_clipped("argv", rest);
  }
  if (world_size > 0) {
    set_clipped("maxprocs", std::to_string(world_size));
    set_clipped("soft", std::to_string(world_size));
  }
  if (!host.empty()) {
    set_clipped("host", host);
  } else {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    if (gethostname(name, sizeof name - 1) == 0) set_clipped("host", name);
  }
  struct utsname uts {};
  if (uname(&uts) == 0) set_clipped("arch", uts.machine);
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd)) set_clipped("wdir", cwd);
  if (thread_level >= 0) set_clipped("thread_level", thread_level_name(thread_level));
  return std::move(env.entries);
}

void fill_info_env(int* argc, char*** argv, int world_size, int thread_level, const std::string& host) {
  const bool have_argv = argc && argv && *argv;
  info(MPI_INFO_ENV).entries =
      startup_info(have_argv ? *argc : 0, have_argv ? *argv : nullptr, world_size, thread_level, host);
}

}  // namespace gridmpi::core
