// Which address and port a tcp transport listens on and advertises.
// Parsing and selection are pure functions (tested in
// tests/unit/test_transport_tcp_address.cpp); only local_interfaces() and
// resolve_ipv4() touch the system.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gridmpi::p2p::tcp {

struct PortRange {
  std::uint16_t first = 0;  // 0..0 = any port the kernel picks
  std::uint16_t last = 0;
  bool any() const noexcept { return first == 0 && last == 0; }
};
// "start:end" inclusive, or "" for any.  Throws MpiError(MPI_ERR_OTHER) naming
// the value and `origin` (the parameter or variable it came from).
PortRange parse_port_range(std::string_view text, std::string_view origin);

struct Network {
  std::uint32_t address = 0;  // host byte order
  int prefix = -1;            // -1: no "/n" given, use each interface's own netmask
};
// "10.9.0.0/24" or "10.9.0.0".  Throws MpiError(MPI_ERR_OTHER) on a malformed value.
Network parse_network(std::string_view text, std::string_view origin);

struct Interface {
  std::string name;
  std::uint32_t address = 0;  // host byte order
  std::uint32_t netmask = 0;
};
std::vector<Interface> local_interfaces();
// The first interface whose address lies inside the network, or nullopt.
std::optional<Interface> interface_in(const std::vector<Interface>& interfaces, const Network& network);

std::string format_ipv4(std::uint32_t address);
std::optional<std::uint32_t> parse_ipv4(std::string_view text);
// Resolves a host name to an IPv4 address (getaddrinfo); nullopt and the
// resolver's message on failure.
std::optional<std::uint32_t> resolve_ipv4(const std::string& host, std::string* error);

// "host:port" (the part after "tcp:" of an endpoint); nullopt when malformed.
struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};
std::optional<HostPort> split_host_port(std::string_view text);

// The address to advertise, in the order the README gives: the network
// prefix (tcp.network), else _YAMPI_NODENAME resolved, else
// GRIDMPI_LOCAL_ADDRESS, else 127.0.0.1.  `how` says which rule won.
// Throws MpiError(MPI_ERR_OTHER) when a rule that was asked for cannot be met.
std::string choose_advertised_address(const std::string& network_text, std::string* how);

}  // namespace gridmpi::p2p::tcp
