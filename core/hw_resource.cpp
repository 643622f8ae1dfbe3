// Hardware resource instances from /sys (see hw_resource.hpp).
#include "core/hw_resource.hpp"

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gridmpi::core {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// The lowest CPU of a Linux CPU list ("0-3,8,10-11"); nullopt when empty or
// unreadable.
std::optional<long> lowest_cpu(const std::string& path) {
  auto text = read_line(path);
  if (!text || text->empty() || !std::isdigit(static_cast<unsigned char>((*text)[0]))) return std::nullopt;
  long lowest = -1;
  std::stringstream parts(*text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    if (part.empty() || !std::isdigit(static_cast<unsigned char>(part[0]))) continue;
    long first = std::strtol(part.c_str(), nullptr, 10);
    if (lowest < 0 || first < lowest) lowest = first;
  }
  if (lowest < 0) return std::nullopt;
  return lowest;
}

// The cache of `level` and `kind` ("Data", "Instruction", "Unified"; empty:
// unified, else data) that CPU `cpu` uses: the lowest CPU sharing it.
std::optional<long> cache_instance(const std::string& cpu_dir, int level, const std::string& kind) {
  std::optional<long> fallback;
  for (int index = 0; index < 16; ++index) {
    std::string dir = cpu_dir + "/cache/index" + std::to_string(index);
    auto lv = read_line(dir + "/level");
    if (!lv) break;
    if (std::atoi(lv->c_str()) != level) continue;
    std::string type = read_line(dir + "/type").value_or("");
    if (!kind.empty()) {
      if (type == kind) return lowest_cpu(dir + "/shared_cpu_list");
      continue;
    }
    if (type == "Unified") return lowest_cpu(dir + "/shared_cpu_list");
    if (type == "Data") fallback = lowest_cpu(dir + "/shared_cpu_list");
  }
  return fallback;
}

std::optional<long> numa_node(const std::string& cpu_dir) {
  DIR* d = opendir(cpu_dir.c_str());
  if (!d) return std::nullopt;
  std::optional<long> node;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() > 4 && name.compare(0, 4, "node") == 0 &&
        std::all_of(name.begin() + 4, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      node = std::strtol(name.c_str() + 4, nullptr, 10);
  }
  closedir(d);
  return node;
}

// The instance of `type` (already canonical) that one CPU is in.
std::optional<long> instance_of_cpu(const std::string& type, int cpu, const std::string& root) {
  const std::string dir = root + "/cpu" + std::to_string(cpu);
  if (type == "hwthread") return cpu;
  if (type == "core") {
    if (auto v = lowest_cpu(dir + "/topology/core_cpus_list")) return v;
    return lowest_cpu(dir + "/topology/thread_siblings_list");
  }
  if (type == "package") {
    if (auto v = lowest_cpu(dir + "/topology/package_cpus_list")) return v;
    return lowest_cpu(dir + "/topology/core_siblings_list");
  }
  if (type == "die") return lowest_cpu(dir + "/topology/die_cpus_list");
  if (type == "numanode") return numa_node(dir);
  if (type.size() >= 7 && type[0] == 'l' && std::isdigit(static_cast<unsigned char>(type[1]))) {
    const int level = type[1] - '0';
    const std::string rest = type.substr(2);
    if (rest == "cache") return cache_instance(dir, level, "");
    if (rest == "ucache") return cache_instance(dir, level, "Unified");
    if (rest == "dcache") return cache_instance(dir, level, "Data");
    if (rest == "icache") return cache_instance(dir, level, "Instruction");
  }
  return std::nullopt;
}

std::string canonical(const std::string& type) {
  std::string t = lower(type);
  if (t == "socket") return "package";
  if (t == "pu") return "hwthread";
  if (t == "numa") return "numanode";
  return t;
}

std::vector<int> my_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace

const std::vector<std::string>& hw_resource_types() {
  static const std::vector<std::string> types = {"package", "die", "numanode", "l3cache", "l2cache",
                                                 "l1cache", "core", "hwthread"};
  return types;
}

bool hw_resource_is_host(const std::string& type) {
  std::string t = lower(type);
  return t == "mpi_shared_memory" || t == "machine" || t == "node";
}

std::optional<long> hw_resource_instance(const std::string& type, const std::vector<int>& cpus,
                                         const std::string& sysfs_cpu_root) {
  if (cpus.empty()) return std::nullopt;
  const std::string t = canonical(type);
  std::optional<long> common;
  for (int cpu : cpus) {
    std::optional<long> v = instance_of_cpu(t, cpu, sysfs_cpu_root);
    if (!v) return std::nullopt;
    if (common && *common != *v) return std::nullopt;
    common = v;
  }
  return common;
}

std::optional<long> hw_resource_instance(const std::string& type) {
  return hw_resource_instance(type, my_cpus(), "/sys/devices/system/cpu");
}

}  // namespace gridmpi::core
