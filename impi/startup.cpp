// The process side of the IMPI start-up (impi/startup.hpp).
#include "impi/startup.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "base/error.hpp"
#include "conf/checked.hpp"
#include "conf/registry.hpp"
#include "impi/datarep.hpp"
#include "impi/params.hpp"
#include "impi/wire.hpp"
#include "p2p/tcp/tcp_address.hpp"

namespace gridmpi::impi {

namespace {

// For tests and benchmarks only: publish another ADDR:PORT than the
// listener's (e.g. a delaying relay that forwards to the listener; the
// listener's port is pinned with IMPI_PORT_RANGE).  npb/impi-bench uses it.
const conf::Param<std::string> advertise_param{
    "impi.advertise", "", "",
    "testing only: ADDR:PORT (IPv4) this process publishes to the other clusters instead of its listener's, "
    "e.g. a relay forwarding to the listener (empty: the listener's)",
    conf::Level::developer};

std::uint32_t server_address_from_environment() {
  const char* server = std::getenv("IMPI_SERVER");
  if (!server || !*server) return 0x7f000001;
  auto hp = p2p::tcp::split_host_port(server);
  if (!hp) return 0x7f000001;
  if (auto v4 = p2p::tcp::parse_ipv4(hp->host)) return *v4;
  std::string error;
  auto resolved = p2p::tcp::resolve_ipv4(hp->host, &error);
  return resolved ? *resolved : 0x7f000001;
}

// The local address the kernel would use to reach `destination` (a UDP
// connect sends nothing).
std::uint32_t local_address_towards(std::uint32_t destination) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0x7f000001;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  to.sin_addr.s_addr = htonl(destination);
  std::uint32_t result = 0x7f000001;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) {
    sockaddr_in local{};
    socklen_t n = sizeof local;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &n) == 0) result = ntohl(local.sin_addr.s_addr);
  }
  ::close(fd);
  return result;
}

std::uint32_t choose_address() {
  std::string network = conf::checked([] { return params::network(); });
  if (!network.empty()) {
    auto net = p2p::tcp::parse_network(network, "IMPI_NETWORK");
    auto found = p2p::tcp::interface_in(p2p::tcp::local_interfaces(), net);
    if (!found)
      throw MpiError(MPI_ERR_OTHER, fmt::format("IMPI_NETWORK is {}: no interface of this host is in that network "
                                                "(check the address, or unset IMPI_NETWORK)", network));
    return found->address;
  }
  return local_address_towards(server_address_from_environment());
}

int open_listener(std::uint32_t address, std::uint16_t* port) {
  auto range = p2p::tcp::parse_port_range(conf::checked([] { return params::port_range(); }), "IMPI_PORT_RANGE");
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw MpiError(MPI_ERR_OTHER, fmt::format("impi: cannot create a socket: {}", std::strerror(errno)));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(address);
  int error = 0;
  bool bound = false;
  for (std::uint32_t p = range.first; p <= range.last; ++p) {
    at.sin_port = htons(static_cast<std::uint16_t>(p));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0) {
      bound = true;
      break;
    }
    error = errno;
    if (error != EADDRINUSE) break;
  }
  if (!bound || ::listen(fd, 128) != 0) {
    if (bound) error = errno;
    ::close(fd);
    throw MpiError(MPI_ERR_OTHER,
                   range.any() ? fmt::format("impi: cannot listen on {}: {}", p2p::tcp::format_ipv4(address),
                                             std::strerror(error))
                               : fmt::format("impi: no free port on {} in IMPI_PORT_RANGE {}:{} ({}); widen the range",
                                             p2p::tcp::format_ipv4(address), range.first, range.last,
                                             std::strerror(error)));
  }
  sockaddr_in bound_at{};
  socklen_t n = sizeof bound_at;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound_at), &n);
  *port = ntohs(bound_at.sin_port);
  return fd;
}

}  // namespace

Startup::~Startup() {
  if (listen_fd >= 0) ::close(listen_fd);
}

bool started_as_client() {
  const char* id = std::getenv("IMPI_CLIENT_ID");
  return id && *id;
}

std::shared_ptr<Startup> open_host(std::string_view native_description) {
  auto s = std::make_shared<Startup>();
  std::uint32_t address = choose_address();
  std::uint16_t port = 0;
  s->listen_fd = open_listener(address, &port);
  std::string advertise = conf::checked([] { return advertise_param.get(); });
  if (!advertise.empty()) {
    auto hp = p2p::tcp::split_host_port(advertise);
    auto v4 = hp ? p2p::tcp::parse_ipv4(hp->host) : std::nullopt;
    if (!v4 || hp->port == 0)
      throw MpiError(MPI_ERR_OTHER, fmt::format("impi.advertise is {}: want a.b.c.d:port", advertise));
    address = *v4;
    port = hp->port;
  }
  s->self.address = host_id_from_ipv4(address);
  s->self.port = port;
  s->self.pid = static_cast<std::int64_t>(::getpid());
  s->self.ackmark = conf::checked([] { return params::h_ackmark(); });
  s->self.hiwater = conf::checked([] { return params::h_hiwater(); });
  s->self.datarep = conf::checked([&] { return announced_datarep(native_description); });
  return s;
}

void Startup::take_job(const std::vector<std::string>& values, int local_rank, int local_size) {
  if (values.size() != 1)
    throw MpiError(MPI_ERR_OTHER, fmt::format("impi: mpirun answered the start-up exchange with {} values (1 "
                                              "expected): is this mpirun a gridmpi mpirun -client?",
                                              values.size()));
  // Behind an impi-relay the answer starts with "relay a.b.c.d:port\n"
  // (the labels start with their binary magic, never with that).
  std::string_view labels = values[0];
  if (labels.substr(0, 6) == "relay ") {
    auto end = labels.find('\n');
    relay = end == std::string_view::npos ? std::nullopt : relay::parse_endpoint(labels.substr(6, end - 6));
    if (!relay)
      throw MpiError(MPI_ERR_OTHER, "impi: mpirun's start-up answer names a relay mpirun cannot have sent: is this "
                                    "mpirun a gridmpi mpirun -client of the same version?");
    labels.remove_prefix(end + 1);
  }
  try {
    map = JobMap::from_labels(CollatedLabels::decode(labels));
  } catch (const WireError& e) {
    throw MpiError(MPI_ERR_OTHER, fmt::format("impi: the job description from impi-server is unusable: {}", e.what()));
  }
  if (map.my_client < 0 || map.my_client >= map.nclients ||
      map.client_nprocs[static_cast<std::size_t>(map.my_client)] != local_size)
    throw MpiError(MPI_ERR_OTHER, fmt::format("impi: client {} announced {} processes, this cluster has {}",
                                              map.my_client, map.my_client < map.nclients
                                                                 ? map.client_nprocs[static_cast<std::size_t>(map.my_client)]
                                                                 : -1,
                                              local_size));
  my_rank = map.client_first_rank[static_cast<std::size_t>(map.my_client)] + local_rank;
  Proc me{self.address, self.pid};
  if (map.procs[static_cast<std::size_t>(my_rank)] != me)
    throw MpiError(MPI_ERR_OTHER, fmt::format("impi: the server's job description puts another process at rank {}",
                                              my_rank));
}

}  // namespace gridmpi::impi
