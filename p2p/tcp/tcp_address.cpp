#include "p2p/tcp/tcp_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <cstdlib>
#include <fmt/format.h>
#include <memory>

#include "base/error.hpp"

namespace gridmpi::p2p::tcp {

namespace {

std::optional<long> parse_long(std::string_view text) {
  long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

PortRange parse_port_range(std::string_view text, std::string_view origin) {
  if (text.empty()) return {};
  auto bad = [&](const char* why) {
    return MpiError(MPI_ERR_OTHER, fmt::format("{}='{}': {} (expected start:end, e.g. 40000:40100)", origin, text, why));
  };
  auto colon = text.find(':');
  if (colon == std::string_view::npos) throw bad("no ':'");
  auto first = parse_long(text.substr(0, colon));
  auto last = parse_long(text.substr(colon + 1));
  if (!first || !last) throw bad("not two numbers");
  if (*first < 1 || *last > 65535 || *first > *last) throw bad("ports must satisfy 1 <= start <= end <= 65535");
  return {static_cast<std::uint16_t>(*first), static_cast<std::uint16_t>(*last)};
}

std::optional<std::uint32_t> parse_ipv4(std::string_view text) {
  in_addr a{};
  std::string s(text);
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

std::string format_ipv4(std::uint32_t address) {
  return fmt::format("{}.{}.{}.{}", address >> 24, (address >> 16) & 255, (address >> 8) & 255, address & 255);
}

Network parse_network(std::string_view text, std::string_view origin) {
  Network n;
  auto slash = text.find('/');
  auto address = parse_ipv4(text.substr(0, slash));
  if (!address)
    throw MpiError(MPI_ERR_OTHER,
                   fmt::format("{}='{}': not an IPv4 network (expected e.g. 10.9.0.0/24)", origin, text));
  n.address = *address;
  if (slash != std::string_view::npos) {
    auto prefix = parse_long(text.substr(slash + 1));
    if (!prefix || *prefix < 0 || *prefix > 32)
      throw MpiError(MPI_ERR_OTHER, fmt::format("{}='{}': prefix length must be 0..32", origin, text));
    n.prefix = static_cast<int>(*prefix);
  }
  return n;
}

std::vector<Interface> local_interfaces() {
  std::vector<Interface> result;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return result;
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> guard(list, freeifaddrs);
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    Interface itf;
    itf.name = i->ifa_name ? i->ifa_name : "";
    itf.address = ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
    itf.netmask = i->ifa_netmask ? ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr) : 0;
    result.push_back(itf);
  }
  return result;
}

std::optional<Interface> interface_in(const std::vector<Interface>& interfaces, const Network& network) {
  for (const auto& itf : interfaces) {
    std::uint32_t mask = network.prefix < 0 ? itf.netmask
                         : network.prefix == 0 ? 0u
                                               : ~std::uint32_t{0} << (32 - network.prefix);
    if ((itf.address & mask) == (network.address & mask)) return itf;
  }
  return std::nullopt;
}

std::optional<std::uint32_t> resolve_ipv4(const std::string& host, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (rc != 0 || !result) {
    if (error) *error = gai_strerror(rc);
    return std::nullopt;
  }
  std::uint32_t a = ntohl(reinterpret_cast<sockaddr_in*>(result->ai_addr)->sin_addr.s_addr);
  freeaddrinfo(result);
  return a;
}

std::optional<HostPort> split_host_port(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  auto port = parse_long(text.substr(colon + 1));
  if (!port || *port < 1 || *port > 65535) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return HostPort{std::string(host), static_cast<std::uint16_t>(*port)};
}

std::string choose_advertised_address(const std::string& network_text, std::string* how) {
  auto said = [&](std::string text) {
    if (how) *how = std::move(text);
  };
  if (!network_text.empty()) {
    Network net = parse_network(network_text, "tcp.network (GRIDMPI_TCP_NETWORK)");
    auto interfaces = local_interfaces();
    auto itf = interface_in(interfaces, net);
    if (!itf) {
      std::string have;
      for (const auto& i : interfaces) have += fmt::format(" {}={}", i.name, format_ipv4(i.address));
      throw MpiError(MPI_ERR_OTHER, fmt::format("tcp.network (GRIDMPI_TCP_NETWORK)='{}': no local interface "
                                                "inside it (this host has:{})",
                                                network_text, have.empty() ? " none" : have));
    }
    said(fmt::format("interface {} inside {}", itf->name, network_text));
    return format_ipv4(itf->address);
  }
  if (const char* node = std::getenv("_YAMPI_NODENAME"); node && *node) {
    std::string error;
    auto a = resolve_ipv4(node, &error);
    if (!a)
      throw MpiError(MPI_ERR_OTHER, fmt::format("cannot resolve _YAMPI_NODENAME='{}' (the host file's name for "
                                                "this rank): {}; fix the host file or set GRIDMPI_TCP_NETWORK",
                                                node, error));
    said(fmt::format("_YAMPI_NODENAME={}", node));
    return format_ipv4(*a);
  }
  if (const char* local = std::getenv("GRIDMPI_LOCAL_ADDRESS"); local && *local) {
    if (!parse_ipv4(local))
      throw MpiError(MPI_ERR_OTHER, fmt::format("GRIDMPI_LOCAL_ADDRESS='{}' is not an IPv4 address", local));
    said("GRIDMPI_LOCAL_ADDRESS");
    return local;
  }
  said("default");
  return "127.0.0.1";
}

}  // namespace gridmpi::p2p::tcp
