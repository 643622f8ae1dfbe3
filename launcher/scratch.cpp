// launcher/scratch.hpp.
#include "launcher/scratch.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>

namespace gridmpi::launcher {

namespace {

std::string prefix_of(std::string_view kind) {
  std::string prefix = "gridmpi-";
  prefix.append(kind);
  prefix += '-';
  return prefix;
}

}  // namespace

std::string make_scratch(const std::string& dir, std::string_view kind, bool directory, int* fd) {
  std::string path = dir;
  path += '/';
  path += prefix_of(kind);
  path += std::to_string(::getpid());
  path += "-XXXXXX";
  if (directory) return ::mkdtemp(path.data()) ? path : std::string();
  int made = ::mkstemp(path.data());
  if (made < 0) return {};
  if (fd) {
    *fd = made;
  } else {
    ::close(made);
  }
  return path;
}

int sweep_scratch(const std::string& dir, std::string_view kind) {
  namespace fs = std::filesystem;
  const std::string prefix = prefix_of(kind);
  int removed = 0;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const char* first = name.data() + prefix.size();
    const char* last = name.data() + name.size();
    long pid = 0;
    auto [stop, err] = std::from_chars(first, last, pid);
    if (err != std::errc() || stop == first || stop == last || *stop != '-' || pid <= 0) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || st.st_uid != ::geteuid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code gone;
    if (fs::remove_all(it->path(), gone) > 0 && !gone) ++removed;
  }
  return removed;
}

}  // namespace gridmpi::launcher
