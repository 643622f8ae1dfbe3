#include "base/net.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace gridmpi::net {

namespace {

std::string os_error(int err) { return std::strerror(err); }

std::string dotted(const in_addr& a) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, text, sizeof text);
  return text;
}

}  // namespace

std::optional<std::string> resolve_ipv4(const std::string& host) {
  in_addr a{};
  if (inet_pton(AF_INET, host.c_str(), &a) == 1) return host;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &list) != 0 || !list) return std::nullopt;
  std::string out = dotted(reinterpret_cast<sockaddr_in*>(list->ai_addr)->sin_addr);
  freeaddrinfo(list);
  return out;
}

UniqueFd connect_tcp(const std::string& host, int port, std::chrono::milliseconds timeout) {
  auto address = resolve_ipv4(host);
  if (!address) throw std::runtime_error("cannot resolve host '" + host + "'");
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, address->c_str(), &sa.sin_addr);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) throw std::runtime_error("socket: " + os_error(errno));
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
      int one = 1;
      setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    int err = errno;
    bool retry = err == ECONNREFUSED || err == EINTR || err == ETIMEDOUT || err == EAGAIN;
    if (!retry || std::chrono::steady_clock::now() + pause > deadline)
      throw std::runtime_error("connect to " + *address + ":" + std::to_string(port) + ": " + os_error(err));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
}

UniqueFd listen_tcp(const std::string& bind_address, int port, int& bound_port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) throw std::runtime_error("socket: " + os_error(errno));
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, bind_address.c_str(), &sa.sin_addr) != 1)
    throw std::runtime_error("not an IPv4 address: '" + bind_address + "'");
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    throw std::runtime_error("bind " + bind_address + ":" + std::to_string(port) + ": " + os_error(errno));
  // Large jobs connect all at once during MPI_Init.
  if (::listen(fd.get(), SOMAXCONN) != 0) throw std::runtime_error("listen: " + os_error(errno));
  socklen_t len = sizeof sa;
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  bound_port = ntohs(sa.sin_port);
  return fd;
}

std::string local_address(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0 || sa.sin_family != AF_INET) return "";
  return dotted(sa.sin_addr);
}

std::string peer_name(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0 || sa.sin_family != AF_INET) return "?";
  return dotted(sa.sin_addr) + ":" + std::to_string(ntohs(sa.sin_port));
}

std::optional<std::string> source_address_toward(const std::string& host) {
  auto address = resolve_ipv4(host);
  if (!address) return std::nullopt;
  // A connected UDP socket sends nothing but makes the kernel pick the route.
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return std::nullopt;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(9);
  inet_pton(AF_INET, address->c_str(), &sa.sin_addr);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return std::nullopt;
  std::string local = local_address(fd.get());
  if (local.empty() || local == "0.0.0.0") return std::nullopt;
  return local;
}

bool is_local_address(const std::string& text) {
  in_addr a{};
  if (inet_pton(AF_INET, text.c_str(), &a) != 1) return false;
  if ((ntohl(a.s_addr) >> 24) == 127) return true;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
        reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr == a.s_addr) {
      found = true;
      break;
    }
  }
  freeifaddrs(list);
  return found;
}

std::optional<std::string> first_interface_address() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> out;
  for (ifaddrs* i = list; i && !out; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    const in_addr& a = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr;
    if ((ntohl(a.s_addr) >> 24) == 127) continue;
    out = dotted(a);
  }
  freeifaddrs(list);
  return out;
}

bool write_all(int fd, std::span<const std::byte> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, 1000);
        continue;
      }
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool write_all(int fd, const std::string& text) {
  return write_all(fd, std::as_bytes(std::span(text.data(), text.size())));
}

UniqueFd request_line(std::uint32_t address, std::uint16_t port, const std::string& line,
                      std::chrono::milliseconds timeout, std::string* text) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left_ms = [&] {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    return static_cast<int>(std::max<long long>(0, ms));
  };
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) {
    *text = std::strerror(errno);
    return {};
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(address);
  to.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    if (errno != EINPROGRESS) {
      *text = std::strerror(errno);
      return {};
    }
    pollfd p{fd.get(), POLLOUT, 0};
    if (::poll(&p, 1, left_ms()) <= 0) {
      *text = "no answer within the time limit";
      return {};
    }
    int err = 0;
    socklen_t n = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &n);
    if (err != 0) {
      *text = std::strerror(err);
      return {};
    }
  }
  std::size_t sent = 0;
  while (sent < line.size()) {
    ssize_t n = ::send(fd.get(), line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd p{fd.get(), POLLOUT, 0};
      if (::poll(&p, 1, left_ms()) <= 0) {
        *text = "no answer within the time limit";
        return {};
      }
      continue;
    }
    *text = std::strerror(errno);
    return {};
  }
  std::string reply;
  for (;;) {
    char c;
    ssize_t n = ::recv(fd.get(), &c, 1, 0);
    if (n == 1) {
      if (c == '\n') break;
      reply.push_back(c);
      if (reply.size() > 512) {
        *text = "an answer line longer than 512 bytes";
        return {};
      }
      continue;
    }
    if (n == 0) {
      *text = "the connection closed without an answer";
      return {};
    }
    if (errno != EAGAIN && errno != EINTR) {
      *text = std::strerror(errno);
      return {};
    }
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, left_ms()) <= 0) {
      *text = "no answer within the time limit";
      return {};
    }
  }
  *text = std::move(reply);
  return fd;
}

}  // namespace gridmpi::net
