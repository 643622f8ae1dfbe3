// impi-relay: lets a cluster on a private network join a multi-cluster job
// (docs/multicluster.md "Private-address clusters").  It runs on a front end
// that reaches both the private cluster and impi-server's network, and
// splices TCP connections between them, never reading what they carry past
// one request line (impi/relay.hpp): TLS stays end to end.
//
//   impi-relay -relay K ADDR:PORT [-net PRIVNET] [-port P] [-idle S] [-v] [-h]
//
// It prints its own ADDR:PORT (on the private network) for the private
// cluster's `mpirun -client K ADDR:PORT`.  What arrives there:
//  * mpirun's connection to impi-server (an IMPI client's first bytes): the
//    relay dials ADDR:PORT, announces itself with one line, then splices;
//  * "CONNECT a.b.c.d:p" from a private process: dial it, splice;
//  * "LISTEN a.b.c.d:p" from mpirun for a private process: open a port on
//    the public side that forwards every connection to that listener, for
//    as long as the request's connection stays open.
// The relay ends when mpirun's server connection does (the job is over),
// on SIGTERM/SIGINT, with one line and status 1 when it cannot reach
// impi-server, and with -idle S (mpirun passes it when it starts the relay
// through IMPI_RELAY_RSH) when no mpirun came within S seconds: a relay on
// another host outlives a remote shell that mpirun's end only hangs up.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/net.hpp"
#include "impi/relay.hpp"
#include "p2p/tcp/tcp_address.hpp"

namespace gridmpi::impi {
namespace {

using Clock = std::chrono::steady_clock;
using relay::Endpoint;
using relay::Line;

const char* const usage_text =
    "usage: impi-relay -relay K ADDR:PORT [-net PRIVNET] [-port P] [-idle S] [-v] [-h]\n"
    "  -relay K ADDR:PORT  the private cluster is IMPI client K; ADDR:PORT is impi-server's\n"
    "  -net PRIVNET        the private network (a.b.c.d[/n]; default IMPI_NETWORK, else the first\n"
    "                      interface that is not the one towards impi-server)\n"
    "  -port P             the port for the private cluster (default: any free port)\n"
    "  -idle S             end (status 1) if no mpirun connected within S seconds\n"
    "  -v                  one line per connection on stderr\n"
    "Prints ADDR:PORT for the private cluster's mpirun -client K ADDR:PORT.\n";

struct Fatal {
  std::string line;
};

bool verbose = false;

void note(const std::string& text) {
  if (verbose) std::fprintf(stderr, "impi-relay: %s\n", text.c_str());
}

sockaddr_in to_sockaddr(const Endpoint& e) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(e.address);
  a.sin_port = htons(e.port);
  return a;
}

// The local address the kernel would use to reach `destination` (0: no route).
std::uint32_t local_address_towards(std::uint32_t destination) {
  auto local = net::source_address_toward(p2p::tcp::format_ipv4(destination));
  auto v4 = local ? p2p::tcp::parse_ipv4(*local) : std::nullopt;
  return v4 ? *v4 : 0;
}

int listen_on(std::uint32_t address, std::uint16_t port, std::uint16_t* bound) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in at = to_sockaddr({address, port});
  if (::bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 || ::listen(fd, 128) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  socklen_t n = sizeof at;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&at), &n);
  *bound = ntohs(at.sin_port);
  return fd;
}

class Relay;

// Everything that waits on an fd.
struct Handler {
  virtual ~Handler() = default;
  virtual void on_event(std::uint32_t events) = 0;
  virtual void on_tick(Clock::time_point) {}
  bool dead = false;
};

// Two connected sockets and the bytes between them.
class Splice : public Handler {
 public:
  Splice(Relay& r, int a, int b, std::string a_to_b, std::string b_to_a, std::string name, bool server)
      : relay_(r), name_(std::move(name)), server_(server) {
    side_[0].fd = a;
    side_[1].fd = b;
    side_[0].out = std::move(b_to_a);  // waiting to go to a
    side_[1].out = std::move(a_to_b);
  }
  ~Splice() override {
    for (auto& s : side_) {
      if (s.fd >= 0) ::close(s.fd);
      for (int p : s.pipe)
        if (p >= 0) ::close(p);
    }
  }
  void start();
  void on_event(std::uint32_t) override { pump(); }
  int fd(int k) const { return side_[k].fd; }

 private:
  struct Side {
    int fd = -1;
    std::string out;       // bytes to write to this side (before the spliced ones)
    bool read_eof = false; // this side sent FIN
    bool write_shut = false;
    int pipe[2] = {-1, -1};     // what was read from this side, on its way to the other
    std::size_t in_pipe = 0;
  };
  void pump();
  void finish();
  Relay& relay_;
  Side side_[2];
  std::size_t pipe_capacity_ = 1 << 16;
  std::string name_;
  bool server_;
};

class Relay {
 public:
  Relay(Endpoint server, std::uint32_t private_address, std::uint16_t port)
      : server_(server), private_address_(private_address) {
    public_address_ = local_address_towards(server.address);
    if (public_address_ == 0)
      throw Fatal{fmt::format("no route to impi-server at {} from this host (check the address, or run the "
                              "relay on a front end that reaches it)",
                              relay::to_string(server))};
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    std::uint16_t bound = 0;
    listen_fd_ = listen_on(private_address_, port, &bound);
    if (listen_fd_ < 0)
      throw Fatal{fmt::format("cannot listen on {}:{}: {}", p2p::tcp::format_ipv4(private_address_), port,
                              std::strerror(errno))};
    me_ = {private_address_, bound};
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    signals_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  }

  Endpoint me() const { return me_; }
  std::uint32_t public_address() const { return public_address_; }

  void add(std::unique_ptr<Handler> h, std::vector<std::pair<int, std::uint32_t>> fds) {
    for (auto [fd, events] : fds) watch(fd, events, h.get());
    handlers_.insert(std::move(h));
  }
  void watch(int fd, std::uint32_t events, Handler* h) {
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = h;
    if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &ev);
  }
  void modify(int fd, std::uint32_t events, Handler* h) {
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = h;
    epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &ev);
  }
  void unwatch(int fd) { epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr); }

  // A splice of mpirun's server connection ended: the job is over.
  void server_splice_ended() { done_ = true; }
  // mpirun's server connection arrived (-idle stops counting).
  void mpirun_came() { mpirun_came_ = true; }
  void set_idle_limit(std::chrono::seconds s) { idle_limit_ = s; }
  void fatal(const std::string& line) {
    if (!fatal_) fatal_ = line;
  }

  const Endpoint& server() const { return server_; }

  int run();

  // Non-blocking connect; the handler's on_event sees EPOLLOUT when it is done.
  static int start_connect(const Endpoint& to, int* error) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      *error = errno;
      return -1;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in a = to_sockaddr(to);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
      *error = errno;
      ::close(fd);
      return -1;
    }
    *error = 0;
    return fd;
  }

 private:
  void accept_private();
  Endpoint server_;
  std::uint32_t private_address_, public_address_ = 0;
  Endpoint me_;
  int epoll_ = -1, listen_fd_ = -1, signals_ = -1;
  std::set<std::unique_ptr<Handler>> handlers_;
  bool done_ = false;
  bool mpirun_came_ = false;
  std::optional<std::chrono::seconds> idle_limit_;
  std::optional<std::string> fatal_;
};

void Splice::start() {
  for (auto& s : side_) {
    if (::pipe2(s.pipe, O_CLOEXEC | O_NONBLOCK) != 0) return finish();
    // 1 MiB (the default pipe-max-size) when allowed; else the 64 KiB default.
    int size = ::fcntl(s.pipe[1], F_SETPIPE_SZ, 1 << 20);
    if (size > 0) pipe_capacity_ = static_cast<std::size_t>(size);
  }
  for (int k = 0; k < 2; ++k) {
    int one = 1;
    ::setsockopt(side_[k].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    relay_.watch(side_[k].fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, this);
  }
  pump();
}

// Moves bytes with splice(2) through a pipe per direction: the kernel moves
// the pages, the relay never copies them (a 2-core front end forwarding a
// 1+ GB/s link was the limit with recv/send through a buffer).  Bytes the
// relay itself adds or held back (its greeting, what followed a request
// line) go first, with send.
void Splice::pump() {
  if (dead) return;
  bool progress = true;
  while (progress && !dead) {
    progress = false;
    for (int k = 0; k < 2; ++k) {
      Side& from = side_[k];
      Side& to = side_[1 - k];
      while (!to.out.empty()) {
        ssize_t n = ::send(to.fd, to.out.data(), to.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
          to.out.erase(0, static_cast<std::size_t>(n));
          progress = true;
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
          break;
        } else {
          return finish();
        }
      }
      if (!to.out.empty()) continue;
      for (;;) {
        bool moved = false;
        if (!from.read_eof && from.in_pipe < pipe_capacity_) {
          ssize_t n = ::splice(from.fd, nullptr, from.pipe[1], nullptr, pipe_capacity_ - from.in_pipe,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
          if (n > 0) {
            from.in_pipe += static_cast<std::size_t>(n);
            moved = true;
          } else if (n == 0) {
            from.read_eof = true;
            moved = true;
          } else if (errno != EAGAIN && errno != EINTR) {
            return finish();
          }
        }
        if (from.in_pipe > 0) {
          ssize_t n = ::splice(from.pipe[0], nullptr, to.fd, nullptr, from.in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
          if (n > 0) {
            from.in_pipe -= static_cast<std::size_t>(n);
            moved = true;
          } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            return finish();
          }
        }
        if (!moved) break;
        progress = true;
      }
      if (from.read_eof && from.in_pipe == 0 && !to.write_shut) {
        ::shutdown(to.fd, SHUT_WR);
        to.write_shut = true;
      }
    }
  }
  if (side_[0].read_eof && side_[1].read_eof && side_[0].in_pipe == 0 && side_[1].in_pipe == 0 &&
      side_[0].out.empty() && side_[1].out.empty())
    finish();
}

void Splice::finish() {
  if (dead) return;
  dead = true;
  // Bytes still in a pipe when a side fails are lost with the connection.
  note("closed " + name_);
  for (auto& s : side_) {
    relay_.unwatch(s.fd);
    ::close(s.fd);
    s.fd = -1;
  }
  if (server_) relay_.server_splice_ended();
}

// A connection whose outbound partner is being dialled: then a splice.
class Dial : public Handler {
 public:
  Dial(Relay& r, int client, Endpoint to, std::string client_bytes, std::string greeting, std::string what,
       bool server)
      : relay_(r), client_(client), to_(to), pending_(std::move(client_bytes)), greeting_(std::move(greeting)),
        what_(std::move(what)), server_(server), deadline_(Clock::now() + std::chrono::seconds(10)) {}
  ~Dial() override {
    if (client_ >= 0) ::close(client_);
    if (fd_ >= 0) ::close(fd_);
  }
  bool begin() {
    int err = 0;
    fd_ = Relay::start_connect(to_, &err);
    if (fd_ < 0) {
      failed(std::strerror(err));
      return false;
    }
    relay_.watch(fd_, EPOLLOUT, this);
    return true;
  }
  void on_event(std::uint32_t) override {
    if (dead) return;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) return failed(std::strerror(err));
    relay_.unwatch(fd_);
    note("spliced " + what_);
    auto splice = std::make_unique<Splice>(relay_, client_, fd_, pending_, greeting_, what_, server_);
    client_ = fd_ = -1;
    dead = true;
    Splice* s = splice.get();
    relay_.add(std::move(splice), {});
    s->start();
  }
  void on_tick(Clock::time_point now) override {
    if (!dead && now > deadline_) failed("no answer within 10 s");
  }

 private:
  void failed(const std::string& why) {
    dead = true;
    std::string line = server_ ? fmt::format("cannot reach impi-server at {}: {}", relay::to_string(to_), why)
                               : fmt::format("cannot connect to {} for {}: {}", relay::to_string(to_), what_, why);
    std::string reply = relay::format(Line{Line::Kind::err, std::nullopt, line});
    if (client_ >= 0) ::send(client_, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (fd_ >= 0) relay_.unwatch(fd_);
    if (server_) relay_.fatal(line);
    else std::fprintf(stderr, "impi-relay: %s\n", line.c_str());
  }
  Relay& relay_;
  int client_, fd_ = -1;
  Endpoint to_;
  std::string pending_, greeting_, what_;
  bool server_;
  Clock::time_point deadline_;
};

// A public port forwarding to one private listener while its request's
// connection stays open.  Two fds: the control connection (this object)
// and the listener (its member `on_listener`).
class Forward : public Handler {
 public:
  Forward(Relay& r, int control, int listener, Endpoint target)
      : on_listener(this), relay_(r), control_(control), listener_(listener), target_(target) {}
  struct ListenerEvents : Handler {
    explicit ListenerEvents(Forward* f) : forward(f) {}
    void on_event(std::uint32_t) override {
      if (!forward->dead) forward->accept_one();
    }
    Forward* forward;
  } on_listener;
  ~Forward() override {
    if (control_ >= 0) ::close(control_);
    if (listener_ >= 0) ::close(listener_);
  }
  void on_event(std::uint32_t) override {
    if (dead) return;
    // The control connection: anything (EOF) ends the forward.
    char b[64];
    ssize_t n = ::recv(control_, b, sizeof b, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      dead = true;
      relay_.unwatch(control_);
      relay_.unwatch(listener_);
      note("closed the forward to " + relay::to_string(target_));
    }
  }
  void accept_one() {
    for (;;) {
      int c = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (c < 0) return;
      auto dial = std::make_unique<Dial>(relay_, c, target_, "", "", "a connection to " + relay::to_string(target_),
                                         false);
      Dial* d = dial.get();
      relay_.add(std::move(dial), {});
      d->begin();
    }
  }
  int listener() const { return listener_; }
  int control() const { return control_; }

 private:
  Relay& relay_;
  int control_, listener_;
  Endpoint target_;
};

// A connection on the private port, before we know what it is.
class Accepted : public Handler {
 public:
  Accepted(Relay& r, int fd) : relay_(r), fd_(fd), deadline_(Clock::now() + std::chrono::seconds(30)) {}
  ~Accepted() override {
    if (fd_ >= 0) ::close(fd_);
  }
  void on_event(std::uint32_t) override {
    if (dead) return;
    char b[4096];
    for (;;) {
      ssize_t n = ::recv(fd_, b, sizeof b, MSG_DONTWAIT);
      if (n > 0) {
        bytes_.append(b, static_cast<std::size_t>(n));
        if (bytes_.size() > 64 * 1024) return drop("more than 64 KiB before any decision");
        continue;
      }
      if (n == 0) return drop("");
      if (errno == EAGAIN || errno == EINTR) break;
      return drop("");
    }
    decide();
  }
  void on_tick(Clock::time_point now) override {
    if (!dead && now > deadline_) drop("sent nothing within 30 s");
  }

 private:
  void drop(const std::string& why) {
    if (!why.empty()) note("dropped a private connection: " + why);
    dead = true;
    relay_.unwatch(fd_);
  }
  void give_up_fd() {
    relay_.unwatch(fd_);
    fd_ = -1;
    dead = true;
  }
  void decide() {
    switch (relay::starts_with_prefix(bytes_)) {
      case relay::Start::undecided: return;
      case relay::Start::no: {
        // mpirun's IMPI client: to impi-server, announced.
        relay_.mpirun_came();
        std::string greeting = relay::format(Line{Line::Kind::relay, relay_.me(), ""});
        int fd = fd_;
        give_up_fd();
        auto dial = std::make_unique<Dial>(relay_, fd, relay_.server(), bytes_, greeting,
                                           "mpirun's connection to impi-server", true);
        Dial* d = dial.get();
        relay_.add(std::move(dial), {});
        d->begin();
        return;
      }
      case relay::Start::yes: break;
    }
    auto end = bytes_.find('\n');
    if (end == std::string::npos) {
      if (bytes_.size() > relay::max_line) drop("request line too long");
      return;
    }
    auto line = relay::parse(std::string_view(bytes_).substr(0, end));
    std::string rest = bytes_.substr(end + 1);
    if (!line || (line->kind != Line::Kind::connect && line->kind != Line::Kind::listen)) {
      std::string reply = relay::format(Line{Line::Kind::err, std::nullopt, "unknown request"});
      ::send(fd_, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      return drop("unknown request: " + bytes_.substr(0, end));
    }
    if (line->kind == Line::Kind::connect) {
      std::string ok = relay::format(Line{Line::Kind::ok, std::nullopt, ""});
      int fd = fd_;
      give_up_fd();
      auto dial = std::make_unique<Dial>(relay_, fd, *line->endpoint, rest, ok,
                                         "a connection to " + relay::to_string(*line->endpoint), false);
      Dial* d = dial.get();
      relay_.add(std::move(dial), {});
      d->begin();
      return;
    }
    // LISTEN
    std::uint16_t port = 0;
    int listener = listen_on(relay_.public_address(), 0, &port);
    if (listener < 0) {
      std::string reply = relay::format(
          Line{Line::Kind::err, std::nullopt, fmt::format("cannot open a public port: {}", std::strerror(errno))});
      ::send(fd_, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      return drop("cannot open a public port");
    }
    std::string reply = relay::format(Line{Line::Kind::ok, Endpoint{relay_.public_address(), port}, ""});
    ::send(fd_, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    note(fmt::format("forwarding {}:{} to {}", p2p::tcp::format_ipv4(relay_.public_address()), port,
                     relay::to_string(*line->endpoint)));
    int control = fd_;
    give_up_fd();
    auto forward = std::make_unique<Forward>(relay_, control, listener, *line->endpoint);
    relay_.watch(listener, EPOLLIN, &forward->on_listener);
    relay_.add(std::move(forward), {{control, EPOLLIN | EPOLLRDHUP}});
  }
  Relay& relay_;
  int fd_;
  std::string bytes_;
  Clock::time_point deadline_;
};

void Relay::accept_private() {
  for (;;) {
    int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) return;
    auto a = std::make_unique<Accepted>(*this, c);
    Handler* h = a.get();
    add(std::move(a), {{c, EPOLLIN | EPOLLRDHUP}});
    h->on_event(EPOLLIN);
  }
}

int Relay::run() {
  struct Listening : Handler {
    explicit Listening(Relay& r) : relay(r) {}
    void on_event(std::uint32_t) override { relay.accept_private(); }
    Relay& relay;
  };
  struct Signals : Handler {
    explicit Signals(int fd, bool* stop) : fd(fd), stop(stop) {}
    void on_event(std::uint32_t) override {
      signalfd_siginfo si{};
      while (::read(fd, &si, sizeof si) == static_cast<ssize_t>(sizeof si))
        if (si.ssi_signo != SIGPIPE) *stop = true;
    }
    int fd;
    bool* stop;
  };
  bool stop = false;
  add(std::make_unique<Listening>(*this), {{listen_fd_, EPOLLIN}});
  add(std::make_unique<Signals>(signals_, &stop), {{signals_, EPOLLIN}});
  epoll_event events[64];
  const auto started = Clock::now();
  while (!stop && !done_ && !fatal_) {
    int n = epoll_wait(epoll_, events, 64, 200);
    for (int k = 0; k < n; ++k) static_cast<Handler*>(events[k].data.ptr)->on_event(events[k].events);
    auto now = Clock::now();
    if (idle_limit_ && !mpirun_came_ && now - started >= *idle_limit_)
      fatal_ = fmt::format("no mpirun -client connected within {} s (-idle): ending", idle_limit_->count());
    for (auto& h : handlers_) h->on_tick(now);
    for (auto it = handlers_.begin(); it != handlers_.end();) {
      if ((*it)->dead) it = handlers_.erase(it);
      else ++it;
    }
  }
  if (fatal_) {
    std::fprintf(stderr, "impi-relay: %s\n", fatal_->c_str());
    return 1;
  }
  return 0;
}

int main_impl(int argc, char** argv) {
  std::optional<Endpoint> server;
  std::string net;
  long port = 0;
  long idle = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-relay" && i + 2 < argc) {
      char* end = nullptr;
      long k = std::strtol(argv[i + 1], &end, 10);
      if (!*argv[i + 1] || *end || k < 0 || k > 31) throw Fatal{fmt::format("-relay {}: K is a client number 0..31", argv[i + 1])};
      server = relay::parse_endpoint(argv[i + 2]);
      if (!server) throw Fatal{fmt::format("-relay {} {}: want impi-server's a.b.c.d:port", argv[i + 1], argv[i + 2])};
      i += 2;
    } else if (a == "-net" && i + 1 < argc) {
      net = argv[++i];
    } else if (a == "-port" && i + 1 < argc) {
      char* end = nullptr;
      port = std::strtol(argv[++i], &end, 10);
      if (*end || port < 0 || port > 65535) throw Fatal{fmt::format("-port {}: want 0..65535", argv[i])};
    } else if (a == "-idle" && i + 1 < argc) {
      char* end = nullptr;
      idle = std::strtol(argv[++i], &end, 10);
      if (!*argv[i] || *end || idle < 1 || idle > 86400) throw Fatal{fmt::format("-idle {}: want 1..86400 seconds", argv[i])};
    } else if (a == "-v") {
      verbose = true;
    } else if (a == "-h" || a == "-help" || a == "--help") {
      std::fputs(usage_text, stdout);
      return 0;
    } else {
      throw Fatal{fmt::format("unknown or incomplete option '{}' (see impi-relay -h)", a)};
    }
  }
  if (!server) throw Fatal{"-relay K ADDR:PORT is required (see impi-relay -h)"};
  if (net.empty()) {
    const char* env = std::getenv("IMPI_NETWORK");
    if (env) net = env;
  }
  std::uint32_t towards_server = local_address_towards(server->address);
  std::uint32_t private_address = 0;
  auto interfaces = p2p::tcp::local_interfaces();
  if (!net.empty()) {
    p2p::tcp::Network n;
    try {
      n = p2p::tcp::parse_network(net, "-net");
    } catch (const std::exception& e) {
      throw Fatal{e.what()};
    }
    auto found = p2p::tcp::interface_in(interfaces, n);
    if (!found)
      throw Fatal{fmt::format("-net {}: no interface of this host is in that network, so the private cluster "
                              "cannot reach the relay (run it on a front end joined to that network)",
                              net)};
    private_address = found->address;
  } else {
    for (const auto& i : interfaces)
      if ((i.address >> 24) != 127 && i.address != towards_server) {
        private_address = i.address;
        break;
      }
    if (private_address == 0) private_address = towards_server;
  }
  Relay relay(*server, private_address, static_cast<std::uint16_t>(port));
  if (idle > 0) relay.set_idle_limit(std::chrono::seconds(idle));
  std::printf("%s\n", relay::to_string(relay.me()).c_str());
  std::fflush(stdout);
  note(fmt::format("relaying for impi-server {}; public side {}", relay::to_string(*server),
                   p2p::tcp::format_ipv4(relay.public_address())));
  return relay.run();
}

}  // namespace
}  // namespace gridmpi::impi

int main(int argc, char** argv) {
  try {
    return gridmpi::impi::main_impl(argc, argv);
  } catch (const gridmpi::impi::Fatal& f) {
    std::fprintf(stderr, "impi-relay: %s\n", f.line.c_str());
    return 1;
  }
}
