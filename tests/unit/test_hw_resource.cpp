// Hardware resource instances (core/hw_resource.cpp) on a made-up /sys tree:
// two packages of two cores of two hardware threads, an L3 per package, an
// L2 and L1 data/instruction caches per core, NUMA nodes = packages.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/hw_resource.hpp"

using namespace gridmpi::core;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

// cpu c: package c / 4, core c / 2, thread c % 2.
struct FakeSys {
  fs::path root;
  FakeSys() {
    root = fs::temp_directory_path() / ("gridmpi-hw-" + std::to_string(::getpid()));
    fs::remove_all(root);
    for (int c = 0; c < 8; ++c) {
      fs::path cpu = root / ("cpu" + std::to_string(c));
      int pkg = c / 4, core = c / 2;
      auto list = [](int first, int n) { return std::to_string(first) + "-" + std::to_string(first + n - 1); };
      put(cpu / "topology/package_cpus_list", list(pkg * 4, 4));
      put(cpu / "topology/core_cpus_list", list(core * 2, 2));
      fs::create_directories(cpu / ("node" + std::to_string(pkg)));
      const char* types[] = {"Data", "Instruction", "Unified", "Unified"};
      int levels[] = {1, 1, 2, 3};
      for (int i = 0; i < 4; ++i) {
        fs::path idx = cpu / "cache" / ("index" + std::to_string(i));
        put(idx / "level", std::to_string(levels[i]));
        put(idx / "type", types[i]);
        put(idx / "shared_cpu_list", levels[i] == 3 ? list(pkg * 4, 4) : list(core * 2, 2));
      }
    }
  }
  ~FakeSys() { fs::remove_all(root); }
  std::optional<long> at(const std::string& type, std::vector<int> cpus) const {
    return hw_resource_instance(type, cpus, root.string());
  }
};

}  // namespace

TEST_CASE("hw_resource: a process on one hardware thread is in one of everything", "[hw_resource]") {
  FakeSys sys;
  CHECK(sys.at("hwthread", {5}) == 5);
  CHECK(sys.at("PU", {5}) == 5);
  CHECK(sys.at("core", {5}) == 4);
  CHECK(sys.at("package", {5}) == 4);
  CHECK(sys.at("socket", {5}) == 4);
  CHECK(sys.at("numanode", {5}) == 1);
  CHECK(sys.at("l3cache", {5}) == 4);
  CHECK(sys.at("l2cache", {5}) == 4);
  CHECK(sys.at("l1cache", {5}) == 4);   // the data cache
  CHECK(sys.at("l1icache", {5}) == 4);
  CHECK(sys.at("l1ucache", {5}) == std::nullopt);  // no unified L1 here
}

TEST_CASE("hw_resource: CPUs spanning instances give none of that type", "[hw_resource]") {
  FakeSys sys;
  // Both threads of core 1: one core, but two hardware threads.
  CHECK(sys.at("core", {2, 3}) == 2);
  CHECK(sys.at("hwthread", {2, 3}) == std::nullopt);
  // Cores of both packages: in no package, NUMA node or L3.
  CHECK(sys.at("package", {1, 6}) == std::nullopt);
  CHECK(sys.at("numanode", {1, 6}) == std::nullopt);
  CHECK(sys.at("l3cache", {1, 6}) == std::nullopt);
  CHECK(sys.at("package", {0, 1, 2, 3}) == 0);
  CHECK(sys.at("core", {0, 1, 2, 3}) == std::nullopt);
}

TEST_CASE("hw_resource: unknown types and the host's names", "[hw_resource]") {
  FakeSys sys;
  CHECK(sys.at("gpu", {0}) == std::nullopt);
  CHECK(sys.at("eth", {0}) == std::nullopt);
  CHECK(sys.at("l4cache", {0}) == std::nullopt);
  CHECK(sys.at("core", {}) == std::nullopt);
  CHECK(hw_resource_is_host("mpi_shared_memory"));
  CHECK(hw_resource_is_host("Machine"));
  CHECK_FALSE(hw_resource_is_host("package"));
}
