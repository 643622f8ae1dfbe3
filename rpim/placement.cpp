#include "rpim/placement.hpp"

#include <unistd.h>

#include "base/net.hpp"

namespace gridmpi::rpim {

int total_slots(const std::vector<conf::HostEntry>& hosts) {
  int total = 0;
  for (const auto& h : hosts) total += h.slots > 0 ? h.slots : 0;
  return total;
}

std::vector<std::string> assign_ranks(const std::vector<conf::HostEntry>& hosts, int np) {
  std::vector<std::string> slots;
  for (const auto& h : hosts)
    for (int i = 0; i < h.slots; ++i) slots.push_back(h.host);
  if (slots.empty()) slots.push_back("localhost");
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(np));
  for (int rank = 0; rank < np; ++rank) out.push_back(slots[static_cast<std::size_t>(rank) % slots.size()]);
  return out;
}

bool is_local_host(const std::string& host) {
  if (host == "localhost" || host == "localhost.localdomain" || host == "ip6-localhost" || host == "::1")
    return true;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string self = name;
  std::string self_short = self.substr(0, self.find('.'));
  if (host == self || host == self_short) return true;
  if (host.substr(0, host.find('.')) == self_short && host.find_first_not_of("0123456789.") != std::string::npos)
    return true;
  return net::is_local_address(host);
}

}  // namespace gridmpi::rpim
