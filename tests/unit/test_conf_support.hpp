// Helpers for the conf/ unit tests: scoped environment changes and
// temporary files, both undone at scope exit.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>

#include "conf/registry.hpp"

namespace gridmpi::conf::testing {

// Sets or unsets environment variables; restores them (and drops the
// registry's cache) when destroyed.  By default it also switches the site and
// user files off so that the machine's own files cannot leak into a test.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(bool isolate_files = true) {
    if (isolate_files) {
      set("GRIDMPI_SITE_FILE", "");
      set("GRIDMPI_USER_FILE", "");
    }
    unset("GRIDMPI_FROM_COMMAND_LINE");
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
    reset_cache_for_tests();
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

  void set(const std::string& name, const std::string& value) {
    remember(name);
    ::setenv(name.c_str(), value.c_str(), 1);
    reset_cache_for_tests();
  }
  void unset(const std::string& name) {
    remember(name);
    ::unsetenv(name.c_str());
    reset_cache_for_tests();
  }

 private:
  void remember(const std::string& name) {
    if (saved_.count(name)) return;
    const char* value = std::getenv(name.c_str());
    saved_[name] = value ? std::optional<std::string>(value) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

// A private temporary directory, removed with everything in it.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gridmpi-conf-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  // Writes `contents` to a file of this directory and returns its path.
  std::string write(const std::string& name, const std::string& contents) const {
    const std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << contents;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace gridmpi::conf::testing
