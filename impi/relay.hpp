// The impi-relay's own protocol (docs/multicluster.md "Private-address
// clusters"): one text line at the start of a TCP connection to the relay,
// after which the relay splices bytes, never reading them (TLS records pass
// through untouched).
//
// From a gridmpi process or mpirun to the relay:
//   "GRIDMPI-RELAY 1 CONNECT a.b.c.d:port\n"  dial this address of another
//                                             cluster, then splice
//   "GRIDMPI-RELAY 1 LISTEN a.b.c.d:port\n"   open a public port forwarding to
//                                             this private listener, for as
//                                             long as this connection stays open
// The relay answers "GRIDMPI-RELAY 1 OK [a.b.c.d:port]\n" (LISTEN: the public
// address) or "GRIDMPI-RELAY 1 ERR <one line>\n" and closes.
//
// Anything else a connection starts with (an IMPI client's AUTH, a TLS
// ClientHello) is mpirun talking to impi-server: the relay dials the
// server, sends first "GRIDMPI-RELAY 1 RELAY a.b.c.d:port\n" (its own
// address for the requests above) or "GRIDMPI-RELAY 1 ERR <line>\n", then
// splices.  No IMPI server's first byte is 'G' (commands start with 0x00,
// TLS records with 0x16), so mpirun tells the two apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gridmpi::impi::relay {

inline constexpr std::string_view prefix = "GRIDMPI-RELAY 1 ";
inline constexpr std::size_t max_line = 512;

struct Endpoint {
  std::uint32_t address = 0;  // IPv4, host order
  std::uint16_t port = 0;
  bool operator==(const Endpoint&) const = default;
};

std::string to_string(const Endpoint& e);
std::optional<Endpoint> parse_endpoint(std::string_view text);

// One line of the protocol, without its "\n".
struct Line {
  enum class Kind { connect, listen, ok, err, relay } kind = Kind::err;
  std::optional<Endpoint> endpoint;  // connect, listen, relay; ok when it names one
  std::string text;                  // err
};
std::string format(const Line& line);  // with the trailing "\n"
// nullopt: not a line of this protocol (or a malformed one).
std::optional<Line> parse(std::string_view line);

// How far `bytes` (the first bytes of a connection) tell whether it starts
// with the protocol's prefix: yes, no, or not yet (a proper prefix of it).
enum class Start { yes, no, undecided };
Start starts_with_prefix(std::string_view bytes);

}  // namespace gridmpi::impi::relay
