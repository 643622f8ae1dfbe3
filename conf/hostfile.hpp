// Host files (mpi_conf, -c FILE, -machinefile FILE): one host per line,
// '#' starts a comment, optional slot count ("node1 4", "node1:4" or
// "node1 slots=4"; IPv6 addresses bare, or as "[addr]:N" with slots).
// Repeated hosts stay separate entries, in file order.  Owner: conf/.
#pragma once
#include <string>
#include <vector>

namespace gridmpi::conf {

struct HostEntry {
  std::string host;
  int slots = 1;
  int line = 0;  // line number in the file, for messages
};

// Throws ConfigError naming the file, line and the problem.
std::vector<HostEntry> parse_hostfile(const std::string& path);
std::vector<HostEntry> parse_hostfile_text(const std::string& text, const std::string& path_for_messages);

}  // namespace gridmpi::conf
