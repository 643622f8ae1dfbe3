// Small TCP helpers: the control service (mpirun, gridmpi-proxy and the
// ControlClient inside every MPI process) and the launcher's host checks.
// IPv4, like GridMPI's control path.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/unique_fd.hpp"

namespace gridmpi::net {

// Connects to host:port (name or dotted address), retrying refused
// connections until `timeout` (the listener may not be up yet).  Throws
// std::runtime_error naming the address and the OS error.
UniqueFd connect_tcp(const std::string& host, int port, std::chrono::milliseconds timeout);
// Listens on bind_address:port (port 0 = any); returns the socket and the port.
UniqueFd listen_tcp(const std::string& bind_address, int port, int& bound_port);

std::string local_address(int fd);  // the socket's own IPv4 address, dotted
std::string peer_name(int fd);      // "address:port" of the other end

// The local address the kernel would use to reach `host` (resolving it),
// or nothing when the host does not resolve or is unreachable.
std::optional<std::string> source_address_toward(const std::string& host);
// True for 127.x, and for an address assigned to one of this host's interfaces.
bool is_local_address(const std::string& dotted);
// The first non-loopback IPv4 address of this host, if any.
std::optional<std::string> first_interface_address();
// Resolves a host name to a dotted IPv4 address.
std::optional<std::string> resolve_ipv4(const std::string& host);

// Connects to address:port (IPv4, host order), sends `line`, and reads one
// line back (up to 512 bytes), all within `timeout`: the request-reply
// start of the impi-relay protocol.  Returns the open socket with the reply
// (without its newline) in *text, or an empty fd with the reason in *text.
UniqueFd request_line(std::uint32_t address, std::uint16_t port, const std::string& line,
                      std::chrono::milliseconds timeout, std::string* text);

// Blocking write of everything (retries EINTR); false on error (errno set).
bool write_all(int fd, std::span<const std::byte> bytes);
bool write_all(int fd, const std::string& text);

}  // namespace gridmpi::net
