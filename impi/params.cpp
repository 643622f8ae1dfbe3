// IMPI parameters (impi/params.hpp).
#include "impi/params.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "conf/registry.hpp"

namespace gridmpi::impi::params {

namespace {

using conf::Level;
using conf::Param;

const Param<std::int64_t> datalen_param{
    "impi.c_datalen", 1048576, "bytes",
    "largest user-data payload of one IMPI packet this cluster accepts (the job uses the smallest offered); "
    "longer messages use the IMPI long protocol, which waits one round trip for the receiver's SYNCACK "
    "(1 MiB: a 1 MiB message goes in one packet, without that round trip, which halved a 1 MiB ping-pong "
    "over a 1-5 ms link at 256 KiB; at 64 KiB the per-packet work cost a third of the bandwidth on "
    "loopback, npb/README.md)",
    Level::tuner, {"IMPI_C_DATALEN"}};
const Param<std::int64_t> xsize_param{
    "impi.coll_xsize", -1, "bytes",
    "IMPI collectives switch to their long protocols from this many bytes; -1 = the protocol default (1024); "
    "every cluster must use the same value",
    Level::tuner, {"IMPI_COLL_XSIZE"}};
const Param<std::int64_t> maxlinear_param{
    "impi.coll_maxlinear", -1, "",
    "IMPI collectives use linear algorithms up to this many clusters, logarithmic ones above; -1 = the "
    "protocol default (4); every cluster must use the same value",
    Level::tuner, {"IMPI_COLL_MAXLINEAR"}};
const Param<std::int64_t> ackmark_param{
    "impi.h_ackmark", 10, "packets",
    "IMPI flow control: the receiver acknowledges every this many packets (the job uses the smallest offered)",
    Level::tuner, {"IMPI_H_ACKMARK"}};
const Param<std::int64_t> hiwater_param{
    "impi.h_hiwater", 64, "packets",
    "IMPI flow control: a sender stops at this many unacknowledged packets per process pair (the job uses "
    "the smallest offered).  Unless set, it is a ceiling: each host connection sizes its window to the "
    "round trip measured when it opens (impi.link_bandwidth x RTT, plus 2 x IMPI_H_ACKMARK packets)",
    Level::tuner, {"IMPI_H_HIWATER"}};
const Param<double> link_bandwidth_param{
    "impi.link_bandwidth", 1.25e9, "bytes/s",
    "the bandwidth an IMPI host connection's window is sized for, with the round trip it measures when it "
    "opens (default 10 Gb/s); ignored when IMPI_H_HIWATER is set",
    Level::tuner, {}};
const Param<std::int64_t> socbuf_param{
    "impi.socbuf", -1, "bytes",
    "socket send/receive buffer of IMPI connections; -1 = as _YAMPI_SOCBUF when that is set, else kernel "
    "autotuning; 0 = kernel autotuning (a fixed buffer caps a wide-area link at buffer / round trip)",
    Level::tuner, {"IMPI_SOCBUF"}};
const Param<std::string> port_range_param{
    "impi.port_range", "", "", "listening port range of IMPI host connections, start:end inclusive (empty: any)",
    Level::user, {"IMPI_PORT_RANGE"}};
const Param<std::string> server_port_range_param{
    "impi.server_port_range", "", "", "listening port range of impi-server, start:end inclusive (empty: any)",
    Level::user, {"IMPI_SERVER_PORT_RANGE"}};
const Param<std::string> network_param{
    "impi.network", "", "",
    "network address (a.b.c.d) selecting the interface used for traffic between clusters (empty: the "
    "interface that reaches impi-server)",
    Level::user, {"IMPI_NETWORK"}};
const Param<std::string> lam_clients_param{
    "impi.lam_clients", "", "",
    "IMPI client ranks of the job that are LAM/MPI 7.1.4 (comma-separated, e.g. \"1\"): gridmpi then speaks "
    "LAM's dialect with them (native data, LAM's Reduce context); every gridmpi cluster must give the same list",
    Level::user, {"IMPI_LAM_CLIENTS"}};

std::int32_t bounded(const Param<std::int64_t>& p, std::int64_t low, const char* what) {
  std::int64_t v = p.get();
  if (v < low || v > 0x7fffffff) {
    const auto& r = p.resolve();
    throw conf::ConfigError(fmt::format("{} is {} (from {}): {}", p.info().env_names.empty() ? p.info().name
                                                                                            : p.info().env_names.back(),
                                        r.text, r.origin.empty() ? conf::source_name(r.source) : r.origin, what));
  }
  return static_cast<std::int32_t>(v);
}

}  // namespace

std::int32_t c_datalen() { return bounded(datalen_param, 1, "use a byte count of at least 1"); }
std::int32_t coll_xsize() {
  std::int32_t v = bounded(xsize_param, -1, "use -1 (the default, 1024) or a byte count");
  return v;
}
std::int32_t coll_maxlinear() {
  std::int32_t v = bounded(maxlinear_param, -1, "use -1 (the default, 4) or a count of at least 1");
  if (v == 0) return bounded(maxlinear_param, 1, "use -1 (the default, 4) or a count of at least 1");
  return v;
}
std::int32_t h_ackmark() { return bounded(ackmark_param, 1, "use a packet count of at least 1"); }
std::int32_t h_hiwater() {
  std::int32_t ack = h_ackmark();
  return bounded(hiwater_param, ack, "use a packet count of at least IMPI_H_ACKMARK");
}
bool hiwater_set() { return hiwater_param.resolve().source != conf::Source::default_value; }
double link_bandwidth() {
  double v = link_bandwidth_param.get();
  if (!(v > 0)) {
    const auto& r = link_bandwidth_param.resolve();
    throw conf::ConfigError(fmt::format("impi.link_bandwidth is {} (from {}): use a positive byte rate", r.text,
                                        r.origin.empty() ? conf::source_name(r.source) : r.origin));
  }
  return v;
}
std::int64_t socbuf() {
  std::int64_t v = socbuf_param.get();
  if (v < 0) {
    // _YAMPI_SOCBUF is declared by the tcp transport (p2p/tcp/tcp_transport.cpp).
    // Kernel autotuning, as the tcp transport: GridMPI's fixed 64 KiB held
    // a 1+1 ping-pong on loopback to 0.65 of TCP at 1 MiB (npb/README.md),
    // and would hold a 10 ms wide-area link to 6.5 MB/s.
    const conf::ParamBase* tcp = conf::find_parameter("tcp.socbuf");
    bool set = tcp && tcp->resolve().source != conf::Source::default_value;
    v = set ? std::strtoll(tcp->canonical_text().c_str(), nullptr, 10) : 0;
  }
  return v < 0 ? 0 : v;
}
std::string port_range() { return port_range_param.get(); }
std::string server_port_range() { return server_port_range_param.get(); }
std::string network() { return network_param.get(); }

std::vector<int> lam_clients() {
  const std::string text = lam_clients_param.get();
  std::vector<int> clients;
  std::size_t pos = 0;
  while (!text.empty()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    const long c = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || c < 0 || c > 31)
      throw conf::ConfigError(fmt::format("IMPI_LAM_CLIENTS is \"{}\": give IMPI client ranks (0..31) separated by "
                                          "commas, e.g. IMPI_LAM_CLIENTS=1",
                                          text));
    clients.push_back(static_cast<int>(c));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return clients;
}

std::uint32_t Auth::mask() const noexcept {
  return (none ? 1u : 0u) | (key ? 2u : 0u);
}

Auth auth(bool required) {
  Auth a;
  a.none = std::getenv("IMPI_AUTH_NONE") != nullptr;
  if (const char* k = std::getenv("IMPI_AUTH_KEY")) {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(k, &end, 10);
    if (*k == '\0' || *k == '-' || *end != '\0' || errno == ERANGE)
      throw conf::ConfigError(fmt::format("IMPI_AUTH_KEY is \"{}\": use a decimal number from 0 to "
                                          "18446744073709551615, the same on the server and on every cluster", k));
    a.key = v;
  }
  if (required && !a.none && !a.key)
    throw conf::ConfigError("no IMPI authentication is enabled: set IMPI_AUTH_NONE=1 or IMPI_AUTH_KEY=<number> "
                            "(the same on impi-server and on every mpirun -client)");
  return a;
}

}  // namespace gridmpi::impi::params
