// impi-server: the IMPI rendezvous server (man page: docs/impi-server.md).
//
// This file is the I/O adapter: options, the listening socket, printing the
// contact string, -bg, signals and the Boost.Asio connections.  Every
// decision about the protocol and the job is ServerState's (impi/server.hpp).
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conf/registry.hpp"
#include "impi/params.hpp"
#include "impi/server.hpp"
#include "impi/tls.hpp"
#include "p2p/tcp/tcp_address.hpp"

namespace asio = boost::asio;
using asio::ip::tcp;

namespace gridmpi::impi {
namespace {

const char* const usage_text =
    "usage: impi-server -server M [-port P] [-host H] [-out FILE] [-bg|-fork] [-nl] [-pid|-getpid]\n"
    "                   [-verbose] [-ipv 4] [-help]\n"
    "  -server M      number of clients (mpirun -client 0..M-1), 1..32; required\n"
    "  -port P        listen on port P (default: IMPI_SERVER_PORT_RANGE=a:b, else any free port)\n"
    "  -host H        address printed for the clients (name or a.b.c.d; default: this host's first\n"
    "                 non-loopback IPv4 address); the server always listens on every address\n"
    "  -out FILE      write ADDR:PORT to FILE instead of stdout\n"
    "  -bg, -fork     print ADDR:PORT, then keep serving in the background (exit 0 at once)\n"
    "  -nl            print an empty line after ADDR:PORT\n"
    "  -pid, -getpid  print the server's pid on a second line\n"
    "  -verbose       one line per event on stderr\n"
    "  -ipv 4         IPv4 (the only version supported)\n"
    "environment: IMPI_AUTH_NONE and/or IMPI_AUTH_KEY=<number> (one is required, the same on every\n"
    "mpirun -client), IMPI_SERVER_PORT_RANGE=a:b; TLS: impi.tls, impi.tls_cert, impi.tls_key, impi.tls_ca\n"
    "(site file [impi] or GRIDMPI_IMPI_TLS*).  Exit status: 0 when every client sent FINI,\n"
    "1 when the job failed, 2 for a usage or configuration error.  See docs/impi-server.md.\n";

[[noreturn]] void usage_error(const std::string& line) {
  fmt::print(stderr, "impi-server: {}\n", line);
  std::exit(2);
}

[[noreturn]] void fatal(const std::string& line) {
  fmt::print(stderr, "impi-server: {}\n", line);
  std::exit(1);
}

struct Options {
  int clients = 0;
  std::optional<int> port;
  std::string host;
  std::string out_file;
  bool background = false;
  bool extra_newline = false;
  bool print_pid = false;
  bool verbose = false;
};

std::optional<long> parse_number(const std::string& text) {
  long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  bool have_clients = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* example) {
      if (i + 1 >= argc) usage_error(fmt::format("{} needs a value (e.g. {} {})", a, a, example));
      return std::string(argv[++i]);
    };
    if (a == "-help" || a == "-h" || a == "--help") {
      std::fputs(usage_text, stdout);
      std::exit(0);
    } else if (a == "-server") {
      std::string v = value("2");
      auto n = parse_number(v);
      if (!n || *n < 1 || *n > 32)
        usage_error(fmt::format("-server {}: the number of clients must be 1..32 (IMPI client masks are 32 bits)", v));
      o.clients = static_cast<int>(*n);
      have_clients = true;
    } else if (a == "-port") {
      std::string v = value("8000");
      auto n = parse_number(v);
      if (!n || *n < 0 || *n > 65535) usage_error(fmt::format("-port {}: use a port number 0..65535", v));
      o.port = static_cast<int>(*n);
    } else if (a == "-host") {
      o.host = value("gw.example.org");
      if (o.host.empty()) usage_error("-host: empty address");
    } else if (a == "-out") {
      o.out_file = value("server.addr");
      if (o.out_file.empty()) usage_error("-out: empty file name");
    } else if (a == "-bg" || a == "-fork") {
      o.background = true;
    } else if (a == "-nl") {
      o.extra_newline = true;
    } else if (a == "-pid" || a == "-getpid") {
      o.print_pid = true;
    } else if (a == "-verbose" || a == "-v") {
      o.verbose = true;
    } else if (a == "-ipv") {
      std::string v = value("4");
      if (v == "6")
        usage_error("-ipv 6: IPv6 is not supported by this impi-server (it listens and prints IPv4 only); use -ipv 4 "
                    "or leave -ipv out");
      if (v != "4") usage_error(fmt::format("-ipv {}: use 4 (or 6, which is not supported)", v));
    } else if (a.starts_with("-")) {
      usage_error(fmt::format("unknown option '{}'; run 'impi-server -help' for the list of options", a));
    } else {
      usage_error(fmt::format("unexpected argument '{}'; usage: impi-server -server M [-port P] ...", a));
    }
  }
  if (!have_clients) usage_error("-server M is required (the number of clients, 1..32); e.g. impi-server -server 2");
  return o;
}

// ---- addresses --------------------------------------------------------------------

std::string dotted(std::uint32_t host_order) {
  return fmt::format("{}.{}.{}.{}", host_order >> 24, (host_order >> 16) & 255, (host_order >> 8) & 255,
                     host_order & 255);
}

// The IPv4 address of the first interface that is up and not loopback.
std::optional<std::string> first_up_interface_address() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> out;
  for (ifaddrs* i = list; i && !out; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
    std::uint32_t a = ntohl(reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
    if ((a >> 24) == 127) continue;
    out = dotted(a);
  }
  freeifaddrs(list);
  return out;
}

// What the clients are told: -host (a name is resolved once, here), else the
// first interface, else loopback.  Never a DNS lookup without -host.
std::string printed_address(const std::string& host) {
  if (host.empty()) return first_up_interface_address().value_or("127.0.0.1");
  in_addr a{};
  if (inet_pton(AF_INET, host.c_str(), &a) == 1) return host;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &result);
  if (rc != 0 || !result)
    usage_error(fmt::format("-host {}: cannot resolve it to an IPv4 address ({}); give a.b.c.d instead", host,
                            rc ? gai_strerror(rc) : "no address"));
  std::uint32_t v = ntohl(reinterpret_cast<const sockaddr_in*>(result->ai_addr)->sin_addr.s_addr);
  freeaddrinfo(result);
  return dotted(v);
}

// ---- listening --------------------------------------------------------------------

// Binds the any-address at `port`; -1 and errno on failure.
int try_listen(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fatal(fmt::format("cannot create a socket: {}", std::strerror(errno)));
  int one = 1;
  // A server restarted right after a run must get its port back (TIME_WAIT).
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 64) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int listen_socket(const Options& o, int& bound_port) {
  int fd = -1;
  if (o.port) {
    fd = try_listen(*o.port);
    if (fd < 0)
      fatal(fmt::format("cannot listen on port {}: {} (choose another -port, or leave it out for any free port)",
                        *o.port, std::strerror(errno)));
  } else {
    p2p::tcp::PortRange range;
    try {
      range = p2p::tcp::parse_port_range(params::server_port_range(), "IMPI_SERVER_PORT_RANGE");
    } catch (const std::exception& e) {
      usage_error(e.what());
    }
    if (range.any()) {
      fd = try_listen(0);
      if (fd < 0) fatal(fmt::format("cannot listen on any port: {}", std::strerror(errno)));
    } else {
      for (int p = range.first; p <= range.last && fd < 0; ++p) fd = try_listen(p);
      if (fd < 0)
        fatal(fmt::format("no free port in IMPI_SERVER_PORT_RANGE={}:{} (last error: {}); widen the range or free "
                          "a port",
                          range.first, range.last, std::strerror(errno)));
    }
  }
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  bound_port = ntohs(sa.sin_port);
  return fd;
}

// ---- printing the contact string ----------------------------------------------------

bool write_fd(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// "ADDR:PORT\n" [+ "PID\n"] [+ "\n"] on stdout, or into -out FILE (written
// under a temporary name and renamed, so a script waiting for the file never
// reads half a line).  Returns an error text, empty on success.
std::string publish(const Options& o, const std::string& contact, pid_t server_pid) {
  std::string text = contact + "\n";
  if (o.print_pid) text += fmt::format("{}\n", server_pid);
  if (o.extra_newline) text += "\n";
  if (o.out_file.empty()) {
    if (!write_fd(1, text)) return fmt::format("cannot write ADDR:PORT on stdout: {}", std::strerror(errno));
    return {};
  }
  std::string temporary = fmt::format("{}.tmp.{}", o.out_file, ::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("-out {}: cannot create {}: {}", o.out_file, temporary, std::strerror(errno));
  bool ok = write_fd(fd, text);
  int saved = errno;
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(temporary.c_str(), o.out_file.c_str()) != 0) {
    if (ok) saved = errno;
    ::unlink(temporary.c_str());
    return fmt::format("-out {}: cannot write it: {}", o.out_file, std::strerror(saved));
  }
  return {};
}

// -bg: the parent prints (with the child's pid) and exits 0; the child keeps
// serving in its own session with stdin and stdout on /dev/null (so that
// $(impi-server -bg ...) returns at once).  stderr stays: failures are still
// reported where the user started it.
void go_background(const Options& o, const std::string& contact) {
  std::fflush(nullptr);
  pid_t child = ::fork();
  if (child < 0) fatal(fmt::format("-bg: cannot fork: {}", std::strerror(errno)));
  if (child > 0) {
    std::string error = publish(o, contact, child);
    if (!error.empty()) {
      ::kill(child, SIGTERM);
      fatal(error);
    }
    ::_exit(0);
  }
  ::setsid();
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    if (null > 1) ::close(null);
  }
}

// ---- the Asio adapter -------------------------------------------------------------

class Server {
 public:
  Server(asio::io_context& io, int listen_fd, ServerSettings settings, std::shared_ptr<tls::Context> tls)
      : io_(io),
        acceptor_(io),
        state_(settings),
        signals_(io, SIGINT, SIGTERM),
        retry_(io),
        drain_(io),
        tls_(std::move(tls)) {
    acceptor_.assign(tcp::v4(), listen_fd);
  }

  int run(const sigset_t& blocked) {
    signals_.async_wait([this](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      state_.interrupted(signo);
      apply();
    });
    ::sigprocmask(SIG_UNBLOCK, &blocked, nullptr);
    accept();
    io_.run();
    return exit_status_.value_or(1);
  }

 private:
  struct Connection {
    explicit Connection(tcp::socket s) : socket(std::move(s)), timer(socket.get_executor()) {}
    tcp::socket socket;
    // With impi.tls: the TLS stream over `socket` (handshake first).
    std::optional<asio::ssl::stream<tcp::socket&>> tls;
    asio::steady_timer timer;  // bounds the TLS handshake
    std::array<std::byte, 65536> buffer{};
    std::deque<std::vector<std::byte>> out;
    bool writing = false;
    bool closing = false;  // close once `out` is sent
  };
  using Pointer = std::shared_ptr<Connection>;

  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || exit_status_) return;
      if (ec) {
        // EMFILE and friends: say so (once per burst) and try again shortly.
        fmt::print(stderr, "impi-server: accept failed: {}; retrying\n", ec.message());
        retry_.expires_after(std::chrono::milliseconds(200));
        retry_.async_wait([this](const boost::system::error_code& e) {
          if (!e) accept();
        });
        return;
      }
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      // A client host that vanishes without a FIN is found out eventually.
      socket.set_option(asio::socket_base::keep_alive(true), ignored);
      auto remote = socket.remote_endpoint(ignored);
      std::string peer = fmt::format("{}:{}", remote.address().to_string(), remote.port());
      ConnectionId id = next_id_++;
      auto c = std::make_shared<Connection>(std::move(socket));
      connections_[id] = c;
      state_.connection_opened(id, peer);
      apply();
      if (tls_)
        handshake(id, c);
      else
        read(id, c);
      accept();
    });
  }

  // TLS: the first byte must start a handshake record (a plain client's is
  // the "A" of AUTH: it gets a TLS alert, which a GridMPI client recognizes,
  // and the job ends with one line); then the handshake, bounded in time.
  void handshake(ConnectionId id, const Pointer& c) {
    c->tls.emplace(c->socket, *tls_);
    c->timer.expires_after(tls::handshake_timeout());
    c->timer.async_wait([this, id, c](const boost::system::error_code& ec) {
      if (ec || !connections_.contains(id) || c->closing) return;
      tls_failed(id, c, fmt::format("no TLS handshake within {} s (impi.tls_handshake_timeout): is impi.tls on "
                                    "there? set it on both sides",
                                    std::chrono::duration_cast<std::chrono::seconds>(tls::handshake_timeout()).count()));
    });
    c->socket.async_receive(asio::buffer(c->buffer.data(), 1), asio::socket_base::message_peek,
                            [this, id, c](const boost::system::error_code& ec, std::size_t n) {
                              if (c->closing || !connections_.contains(id)) return;
                              if (ec || n == 0) {
                                c->timer.cancel();
                                lost(id);  // closed before a byte: a probe
                                return;
                              }
                              if (c->buffer[0] != tls::handshake_record) {
                                boost::system::error_code ignored;
                                auto alert = tls::plaintext_rejection_alert();
                                asio::write(c->socket, asio::buffer(alert), ignored);
                                tls_failed(id, c,
                                           fmt::format("does not speak TLS (its first byte is 0x{:02x}, not a TLS "
                                                       "handshake): impi.tls is off there and on at impi-server; set "
                                                       "impi.tls on both sides (or off on both)",
                                                       static_cast<unsigned>(c->buffer[0])));
                                return;
                              }
                              c->tls->async_handshake(
                                  asio::ssl::stream_base::server, [this, id, c](const boost::system::error_code& e) {
                                    if (c->closing || !connections_.contains(id)) return;
                                    c->timer.cancel();
                                    if (e) {
                                      tls_failed(id, c,
                                                 "TLS handshake failed: " + tls::describe_error(e, c->tls->native_handle()));
                                      return;
                                    }
                                    if (state_.finished()) return;
                                    read(id, c);
                                  });
                            });
  }

  void tls_failed(ConnectionId id, const Pointer& c, const std::string& why) {
    boost::system::error_code ignored;
    c->timer.cancel();
    c->socket.close(ignored);
    connections_.erase(id);
    state_.connection_failed(id, why);
    apply();
  }

  void read(ConnectionId id, const Pointer& c) {
    auto on_read = [this, id, c](const boost::system::error_code& ec, std::size_t n) {
      if (c->closing || !connections_.contains(id)) return;
      if (ec) {
        lost(id);
        return;
      }
      state_.received(id, std::span<const std::byte>(c->buffer.data(), n));
      apply();
      if (!c->closing && connections_.contains(id)) read(id, c);
    };
    if (c->tls)
      c->tls->async_read_some(asio::buffer(c->buffer), std::move(on_read));
    else
      c->socket.async_read_some(asio::buffer(c->buffer), std::move(on_read));
  }

  void write(ConnectionId id, const Pointer& c) {
    if (c->writing || c->out.empty()) return;
    c->writing = true;
    auto on_written = [this, id, c](const boost::system::error_code& ec, std::size_t) {
                        c->writing = false;
                        if (ec) {
                          c->out.clear();
                          if (c->closing) {
                            finish_close(id, c);
                          } else {
                            lost(id);
                          }
                          return;
                        }
                        c->out.pop_front();
                        if (!c->out.empty()) {
                          write(id, c);
                        } else if (c->closing) {
                          finish_close(id, c);
                        }
                      };
    if (c->tls)
      asio::async_write(*c->tls, asio::buffer(c->out.front()), std::move(on_written));
    else
      asio::async_write(c->socket, asio::buffer(c->out.front()), std::move(on_written));
  }

  // The peer is gone (EOF, reset, write error) before the server closed it.
  void lost(ConnectionId id) {
    auto it = connections_.find(id);
    if (it == connections_.end()) return;
    boost::system::error_code ignored;
    it->second->socket.close(ignored);
    connections_.erase(it);
    state_.connection_closed(id);
    apply();
  }

  void finish_close(ConnectionId id, const Pointer& c) {
    boost::system::error_code ignored;
    c->timer.cancel();
    c->socket.shutdown(tcp::socket::shutdown_both, ignored);
    c->socket.close(ignored);
    connections_.erase(id);
    check_drained();
  }

  void apply() {
    for (auto& a : state_.take_actions()) {
      if (auto* s = std::get_if<server_action::Send>(&a)) {
        auto it = connections_.find(s->connection);
        if (it == connections_.end() || it->second->closing) continue;
        it->second->out.push_back(std::move(s->bytes));
        write(s->connection, it->second);
      } else if (auto* cl = std::get_if<server_action::Close>(&a)) {
        auto it = connections_.find(cl->connection);
        if (it == connections_.end()) continue;
        Pointer c = it->second;
        c->closing = true;
        if (!c->writing) finish_close(cl->connection, c);
      } else if (auto* p = std::get_if<server_action::Print>(&a)) {
        fmt::print(stderr, "{}\n", p->line);
      } else if (auto* f = std::get_if<server_action::Finish>(&a)) {
        exit_status_ = f->exit_status;
        boost::system::error_code ignored;
        acceptor_.close(ignored);
        signals_.cancel(ignored);
        retry_.cancel();
        // Queued bytes get a moment to leave, then everything goes.
        drain_.expires_after(std::chrono::seconds(5));
        drain_.async_wait([this](const boost::system::error_code& e) {
          if (!e) io_.stop();
        });
        check_drained();
      }
    }
  }

  void check_drained() {
    if (exit_status_ && connections_.empty()) io_.stop();
  }

  asio::io_context& io_;
  tcp::acceptor acceptor_;
  ServerState state_;
  asio::signal_set signals_;
  asio::steady_timer retry_;
  asio::steady_timer drain_;
  std::map<ConnectionId, Pointer> connections_;
  ConnectionId next_id_ = 1;
  std::optional<int> exit_status_;
  std::shared_ptr<tls::Context> tls_;
};

int main_impl(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  params::Auth auth;
  try {
    auth = params::auth(true);
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
  std::shared_ptr<tls::Context> tls;
  try {
    tls = tls::context_from_parameters();
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
  std::string address = printed_address(o.host);
  std::signal(SIGPIPE, SIG_IGN);
  int port = 0;
  int fd = listen_socket(o, port);
  std::string contact = fmt::format("{}:{}", address, port);

  ServerSettings settings;
  settings.clients = o.clients;
  settings.auth_none = auth.none;
  settings.auth_key = auth.key;
  settings.verbose = o.verbose;
  if (o.verbose)
    fmt::print(stderr,
               "impi-server: listening on 0.0.0.0:{} for {} client{} (authentication {}{}), telling them {}\n", port,
               o.clients, o.clients == 1 ? "" : "s", describe_auth_mask(auth.mask()), tls ? ", inside TLS" : "",
               contact);

  // SIGINT/SIGTERM wait (blocked) until the Asio handler is installed: once
  // ADDR:PORT is out, an interruption is always reported and closes the clients.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  if (o.background) {
    go_background(o, contact);
  } else {
    std::string error = publish(o, contact, ::getpid());
    if (!error.empty()) fatal(error);
  }
  asio::io_context io;
  Server server(io, fd, settings, tls);
  return server.run(stop_signals);
}

}  // namespace
}  // namespace gridmpi::impi

int main(int argc, char** argv) {
  try {
    return gridmpi::impi::main_impl(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "impi-server: {}\n", e.what());
    return 1;
  }
}
