// The impi-relay's line protocol (impi/relay.hpp).
#include "impi/relay.hpp"

#include <fmt/format.h>

#include "p2p/tcp/tcp_address.hpp"

namespace gridmpi::impi::relay {

std::string to_string(const Endpoint& e) { return fmt::format("{}:{}", p2p::tcp::format_ipv4(e.address), e.port); }

std::optional<Endpoint> parse_endpoint(std::string_view text) {
  auto hp = p2p::tcp::split_host_port(text);
  if (!hp || hp->port == 0) return std::nullopt;
  auto v4 = p2p::tcp::parse_ipv4(hp->host);
  if (!v4) return std::nullopt;
  return Endpoint{*v4, hp->port};
}

std::string format(const Line& line) {
  // append, not operator+: GCC 12 warns falsely (-Wrestrict) on the chain at -O3.
  std::string out(prefix);
  switch (line.kind) {
    case Line::Kind::connect: out.append("CONNECT ").append(to_string(*line.endpoint)); break;
    case Line::Kind::listen: out.append("LISTEN ").append(to_string(*line.endpoint)); break;
    case Line::Kind::relay: out.append("RELAY ").append(to_string(*line.endpoint)); break;
    case Line::Kind::ok:
      out.append("OK");
      if (line.endpoint) out.append(" ").append(to_string(*line.endpoint));
      break;
    case Line::Kind::err:
      out.append("ERR ");
      for (char c : line.text) out.push_back((c == '\n' || c == '\r') ? ' ' : c);
      break;
  }
  if (out.size() >= max_line) out.resize(max_line - 1);
  out.push_back('\n');
  return out;
}

std::optional<Line> parse(std::string_view line) {
  if (line.substr(0, prefix.size()) != prefix) return std::nullopt;
  line.remove_prefix(prefix.size());
  auto space = line.find(' ');
  std::string_view word = line.substr(0, space);
  std::string_view rest = space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
  Line out;
  if (word == "ERR") {
    out.kind = Line::Kind::err;
    out.text = std::string(rest);
    return out;
  }
  if (word == "OK") {
    out.kind = Line::Kind::ok;
    if (rest.empty()) return out;
    out.endpoint = parse_endpoint(rest);
    return out.endpoint ? std::optional<Line>(out) : std::nullopt;
  }
  if (word == "CONNECT") out.kind = Line::Kind::connect;
  else if (word == "LISTEN") out.kind = Line::Kind::listen;
  else if (word == "RELAY") out.kind = Line::Kind::relay;
  else return std::nullopt;
  out.endpoint = parse_endpoint(rest);
  return out.endpoint ? std::optional<Line>(out) : std::nullopt;
}

Start starts_with_prefix(std::string_view bytes) {
  std::size_t n = std::min(bytes.size(), prefix.size());
  if (bytes.substr(0, n) != prefix.substr(0, n)) return Start::no;
  return n == prefix.size() ? Start::yes : Start::undecided;
}

}  // namespace gridmpi::impi::relay
