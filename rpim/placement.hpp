// "Which hosts": turning a host list into one host per rank.  Owner: rpim/.
#pragma once
#include <string>
#include <vector>

#include "conf/hostfile.hpp"

namespace gridmpi::rpim {

// Ranks are assigned from the top of the host list: the first host gets as
// many ranks as it has slots, then the next host, and so on.  When np is
// larger than the total number of slots the assignment wraps around and
// fills the slots again in the same order (rank r goes to slot r mod total).
// An empty host list means every rank on "localhost".
std::vector<std::string> assign_ranks(const std::vector<conf::HostEntry>& hosts, int np);

// Total number of slots of a host list.
int total_slots(const std::vector<conf::HostEntry>& hosts);

// True when `host` names this machine: "localhost", this host's name (with or
// without domain), a 127.x address, or an address of one of its interfaces.
bool is_local_host(const std::string& host);

}  // namespace gridmpi::rpim
