// mpirun -client K ADDR:PORT (launcher/mpirun.hpp): the IMPI client agent.
// It holds the connection to impi-server, feeds it to impi::ClientSession
// (which makes the protocol's decisions) and answers the ranks' IMPI
// start-up exchange with the server's labels.
#include "launcher/mpirun.hpp"

namespace gridmpi::launcher {

// mpirun -client: everything is checked before a rank is started, so that
// a missing authentication setting or a bad value starts nothing.
void Mpirun::read_client_settings() {
  try {
    impi_settings_.client = options_.client;
    impi_settings_.auth = impi::params::auth(true);
    impi_settings_.datalen = impi::params::c_datalen();
    impi_settings_.coll_xsize = impi::params::coll_xsize();
    impi_settings_.coll_maxlinear = impi::params::coll_maxlinear();
    impi_settings_.server = server_name();
    std::int64_t timeout = settings::impi_startup_timeout.get();
    if (timeout < 0)
      throw conf::ConfigError("impi.startup_timeout must be >= 0 seconds (0 = no limit), got " +
                              std::to_string(timeout));
    impi_settings_.startup_timeout = std::chrono::seconds(timeout);
    connect_retry_ = settings::server_connect_retry.get();
    if (connect_retry_ < 0 || connect_retry_ > 1000000)
      throw conf::ConfigError("IMPI_SERVER_CONNECT_RETRY must be a count 0..1000000, got " +
                              std::to_string(connect_retry_));
    double pause = settings::server_connect_sleep.get();
    if (!(pause >= 0 && pause <= 3600))
      throw conf::ConfigError("IMPI_SERVER_CONNECT_SLEEP must be between 0 and 3600 seconds, got " +
                              std::to_string(pause));
    connect_sleep_ = std::chrono::milliseconds(static_cast<long long>(pause * 1000));
    // A bad TLS setting (impi.tls_*) stops mpirun before any rank starts;
    // the ranks and the client session read the same parameters later.
    (void)impi::tls::context_from_parameters();
  } catch (const conf::ConfigError& e) {
    usage_exit(e.what());
  }
  if (options_.dryrun) return;
  auto address = net::resolve_ipv4(options_.server_host);
  server_address_.sin_family = AF_INET;
  server_address_.sin_port = htons(static_cast<std::uint16_t>(options_.server_port));
  if (!address || inet_pton(AF_INET, address->c_str(), &server_address_.sin_addr) != 1) {
    print_err("mpirun: cannot reach impi-server at " + server_name() + ": cannot resolve '" + options_.server_host +
              "' (pass the ADDR:PORT impi-server printed)");
    std::exit(255);
  }
  // GridMPI's second way to use a relay: the server's address on the
  // command line, the relay's in IMPI_RELAYADDR and IMPI_RELAYPORT.
  const char* relay_addr = std::getenv("IMPI_RELAYADDR");
  const char* relay_port = std::getenv("IMPI_RELAYPORT");
  if ((relay_addr && *relay_addr) || (relay_port && *relay_port)) {
    auto relay = impi::relay::parse_endpoint(std::string(relay_addr ? relay_addr : "") + ":" +
                                             (relay_port ? relay_port : ""));
    if (!relay) {
      print_err(std::string("mpirun: IMPI_RELAYADDR/IMPI_RELAYPORT are '") + (relay_addr ? relay_addr : "") + "' and '" +
                (relay_port ? relay_port : "") + "': set both, to the a.b.c.d and port impi-relay printed");
      std::exit(255);
    }
    relay_given_ = impi::relay::to_string(*relay);
    server_address_.sin_addr.s_addr = htonl(relay->address);
    server_address_.sin_port = htons(relay->port);
  }
  // And the third: IMPI_RELAY_RSH starts impi-relay, '#' here, next to
  // mpirun, any other value through that remote shell on the front end.
  const char* relay_rsh = std::getenv("IMPI_RELAY_RSH");
  if (relay_rsh && *relay_rsh) {
    std::vector<std::string> shell;
    if (std::string_view(relay_rsh) != "#") {
      std::istringstream words(relay_rsh);
      for (std::string w; words >> w;) shell.push_back(w);
      if (shell.empty()) {
        print_err(std::string("mpirun: IMPI_RELAY_RSH is '") + relay_rsh +
                  "': set it to '#' (impi-relay on this host) or to a remote shell and the front end, e.g. 'ssh "
                  "front'");
        std::exit(255);
      }
    }
    if (!relay_given_.empty()) {
      print_err("mpirun: IMPI_RELAY_RSH and IMPI_RELAYADDR/IMPI_RELAYPORT are both set: unset one");
      std::exit(255);
    }
    auto relay = start_relay(shell, relay_rsh);
    relay_given_ = impi::relay::to_string(relay);
    server_address_.sin_addr.s_addr = htonl(relay.address);
    server_address_.sin_port = htons(relay.port);
  }
}

// impi-relay for IMPI_RELAY_RSH (bin/ next to mpirun; through a remote
// shell, the same path on the front end).  Here ('#') it ends when mpirun's
// server connection does, and with mpirun (PR_SET_PDEATHSIG), so a failed
// mpirun leaves no relay.  Through a remote shell the shell gets that
// signal, and the relay, which may not hear of it, is started with -idle:
// it ends by itself if this mpirun never connects.  Returns the ADDR:PORT
// it prints; exits with one line when it does not start (the relay's or
// the shell's own line comes first).
impi::relay::Endpoint Mpirun::start_relay(const std::vector<std::string>& shell, const std::string& setting) {
  const std::string exe = (installation_root() / "bin" / "impi-relay").string();
  const std::string server = impi::relay::to_string(
      impi::relay::Endpoint{ntohl(server_address_.sin_addr.s_addr), ntohs(server_address_.sin_port)});
  const std::string what = "impi-relay (IMPI_RELAY_RSH='" + setting + "')";
  std::vector<std::string> argv = shell;
  for (std::string a : {exe, std::string("-relay"), std::to_string(options_.client), server}) argv.push_back(a);
  if (!shell.empty()) {
    argv.push_back("-idle");
    argv.push_back("60");
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    print_err("mpirun: cannot start " + what + ": " + std::strerror(errno));
    std::exit(255);
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    ::dup2(out[1], 1);
    int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) ::dup2(null, 0);  // a remote shell must not read mpirun's input
    ::execvp(args[0], args.data());
    std::string line = "!cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";  // for the parent's line
    (void)!::write(1, line.data(), line.size());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line;
  // A remote shell may take a while to log in.
  auto deadline = Clock::now() + std::chrono::seconds(shell.empty() ? 10 : 30);
  while (pid > 0 && line.find('\n') == std::string::npos && Clock::now() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    if (::poll(&p, 1, std::max(left, 0)) <= 0) break;
    char buffer[256];
    ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    line.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  auto relay = impi::relay::parse_endpoint(line.substr(0, line.find('\n')));
  if (!relay) {
    if (pid > 0) ::kill(pid, SIGTERM);
    std::string seen = line.substr(0, line.find('\n'));
    print_err("mpirun: " + what + " did not start" +
              (pid <= 0                 ? std::string(": ") + std::strerror(errno)
               : seen.starts_with('!') ? ": " + seen.substr(1)
               : !seen.empty()          ? " (it printed '" + seen.substr(0, 80) + "', not the relay's ADDR:PORT)"
                                        : std::string(" (its message, if any, is above)")));
    std::exit(255);
  }
  return *relay;
}

void Mpirun::start_server_connect(Clock::time_point now) {
  server_.retry_at.reset();
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) {
    server_connect_failed(errno, now);
    return;
  }
  int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&server_address_), sizeof server_address_);
  int err = errno;
  server_.fd = std::move(fd);
  if (rc == 0) {
    server_connected(now);
  } else if (err == EINPROGRESS || err == EINTR) {
    server_.connecting = true;
    // One attempt may not hang on a silent network; the retries follow.
    server_.attempt_deadline = now + std::chrono::seconds(10);
  } else {
    server_connect_failed(err, now);
  }
}

void Mpirun::server_connect_failed(int err, Clock::time_point now) {
  server_.fd.reset();
  server_.connecting = false;
  if (++server_.failed_attempts > connect_retry_) {
    server_.done = true;
    job_->external_failure(relay_given_.empty()
                               ? "mpirun: cannot reach impi-server at " + server_name() + ": " + std::strerror(err) +
                                     " (start impi-server first and pass the ADDR:PORT it printed)"
                               : "mpirun: cannot reach impi-relay at " + relay_given_ +
                                     " (IMPI_RELAYADDR/IMPI_RELAYPORT): " + std::strerror(err) +
                                     " (start impi-relay first and set the ADDR:PORT it printed)",
                           now);
    return;
  }
  server_.retry_at = now + connect_sleep_;
}

void Mpirun::server_connected(Clock::time_point now) {
  server_.connecting = false;
  int one = 1;
  setsockopt(server_.fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  impi_->connected(now);
  apply_impi();
}

void Mpirun::close_server() {
  server_.fd.reset();
  server_.connecting = false;
  server_.retry_at.reset();
  server_.out.clear();
  server_.done = true;
}

void Mpirun::flush_server() {
  while (server_.fd && !server_.connecting && !server_.out.empty()) {
    ssize_t n = ::send(server_.fd.get(), server_.out.data(), server_.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0) {
      int err = errno;
      close_server();
      impi_->connection_lost(err == ECONNRESET || err == EPIPE ? "" : std::strerror(err), Clock::now());
      apply_impi();
      return;
    }
    server_.out.erase(0, static_cast<std::size_t>(n));
  }
}

void Mpirun::server_io(short revents) {
  auto now = Clock::now();
  if (server_.connecting) {
    int err = 0;
    socklen_t length = sizeof err;
    if (getsockopt(server_.fd.get(), SOL_SOCKET, SO_ERROR, &err, &length) != 0) err = errno;
    if (err != 0)
      server_connect_failed(err, now);
    else if (revents & (POLLOUT | POLLERR | POLLHUP))
      server_connected(now);
    return;
  }
  if (revents & POLLOUT) flush_server();
  if (!server_.fd || !(revents & (POLLIN | POLLHUP | POLLERR))) return;
  std::byte buffer[65536];
  ssize_t n = ::recv(server_.fd.get(), buffer, sizeof buffer, 0);
  if (n > 0) {
    relay_bytes(buffer, static_cast<std::size_t>(n), now);
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    // A reset is the server closing with our last bytes unread (after a
    // wrong key, say): to the user that is the server closing.
    std::string error = n == 0 || errno == ECONNRESET ? "" : std::strerror(errno);
    close_server();
    impi_->connection_lost(error, now);
  }
  apply_impi();
}

void Mpirun::apply_impi() {
  for (auto& a : impi_->take_actions()) {
    if (auto* send = std::get_if<impi::client_action::Send>(&a)) {
      if (!server_.fd) continue;
      server_.out.append(reinterpret_cast<const char*>(send->bytes.data()), send->bytes.size());
      flush_server();
    } else if (auto* complete = std::get_if<impi::client_action::StartupComplete>(&a)) {
      // Every rank gets the same ONE value: what the server said, encoded,
      // behind a relay after a line naming it (Startup::take_job).
      std::string answer = relay_ ? "relay " + impi::relay::to_string(*relay_) + "\n" : std::string();
      answer += complete->labels.encode();
      job_->answer_external_fence(impi::key_local_host, {std::move(answer)});
      // From now on mpirun names ranks by their MPI_COMM_WORLD rank.  (A
      // malformed answer is the ranks' to report: they decode it too.)
      try {
        impi::JobMap map = impi::JobMap::from_labels(complete->labels);
        job_->set_rank_offset(map.client_first_rank.at(static_cast<std::size_t>(map.my_client)));
      } catch (const std::exception&) {
      }
    } else if (auto* failed = std::get_if<impi::client_action::Failed>(&a)) {
      close_server();
      job_->external_failure(relay_ ? failed->line + " (through impi-relay at " + impi::relay::to_string(*relay_) +
                                          ": the relay or impi-server ended)"
                                    : failed->line,
                             Clock::now());
    } else if (std::holds_alternative<impi::client_action::Close>(a)) {
      // After FINI: the last bytes go out before the close (finish_server).
      server_.done = true;
    }
  }
}

void Mpirun::local_hosts_published(std::vector<std::string> values) {
  if (!impi_) return;
  if (relay_state_ == RelayState::unknown) {
    // Whether a relay stands between us and impi-server is not known yet
    // (its first line has not arrived): wait for it (relay_bytes).
    pending_hosts_ = std::move(values);
    return;
  }
  std::vector<impi::LocalHost> hosts;
  for (std::size_t rank = 0; rank < values.size(); ++rank) {
    try {
      hosts.push_back(impi::LocalHost::decode(values[rank]));
    } catch (const impi::WireError& e) {
      close_server();
      job_->external_failure("mpirun: rank " + std::to_string(rank) + " published a malformed IMPI address (" +
                                 e.what() + ")",
                             Clock::now());
      return;
    }
  }
  if (relay_ && !forward_through_relay(hosts)) return;
  impi_->local_hosts(std::move(hosts), Clock::now());
  apply_impi();
}

// The first bytes of the server connection: an impi-relay announces itself
// with one line before impi-server's bytes; anything else is the server.
void Mpirun::relay_bytes(const std::byte* data, std::size_t n, Clock::time_point now) {
  if (relay_state_ != RelayState::unknown) {
    impi_->received(std::span(data, n), now);
    return;
  }
  relay_probe_.append(reinterpret_cast<const char*>(data), n);
  auto start = impi::relay::starts_with_prefix(relay_probe_);
  if (start == impi::relay::Start::undecided) return;
  std::string rest;
  if (start == impi::relay::Start::no) {
    relay_state_ = RelayState::none;
    rest = std::move(relay_probe_);
  } else {
    auto end = relay_probe_.find('\n');
    if (end == std::string::npos) {
      if (relay_probe_.size() <= impi::relay::max_line) return;
      end = relay_probe_.size();
    }
    auto line = impi::relay::parse(std::string_view(relay_probe_).substr(0, end));
    std::string where = relay_given_.empty() ? server_name() : relay_given_;
    if (!line || (line->kind != impi::relay::Line::Kind::relay && line->kind != impi::relay::Line::Kind::err)) {
      close_server();
      job_->external_failure("mpirun: " + where + " answered with a line mpirun does not understand ('" +
                                 relay_probe_.substr(0, std::min<std::size_t>(end, 80)) +
                                 "'): is it an impi-relay of another version?",
                             now);
      return;
    }
    if (line->kind == impi::relay::Line::Kind::err) {
      close_server();
      job_->external_failure("mpirun: impi-relay at " + where + ": " + line->text, now);
      return;
    }
    relay_state_ = RelayState::relayed;
    relay_ = line->endpoint;
    rest = end < relay_probe_.size() ? relay_probe_.substr(end + 1) : std::string();
  }
  relay_probe_.clear();
  if (!rest.empty()) impi_->received(std::span(reinterpret_cast<const std::byte*>(rest.data()), rest.size()), now);
  apply_impi();
  if (pending_hosts_) {
    auto values = std::move(*pending_hosts_);
    pending_hosts_.reset();
    local_hosts_published(std::move(values));
  }
}

// Behind a relay, the other clusters reach each rank at a public port of
// the relay that forwards to the rank's listener: one LISTEN request per
// rank, whose connection stays open for the job.  False (and the job
// failed with one line) when the relay refuses.
bool Mpirun::forward_through_relay(std::vector<impi::LocalHost>& hosts) {
  std::string where = impi::relay::to_string(*relay_);
  for (std::size_t rank = 0; rank < hosts.size(); ++rank) {
    auto v4 = impi::ipv4_from_host_id(hosts[rank].address);
    std::string why;
    std::optional<impi::relay::Line> reply;
    UniqueFd fd;
    if (!v4) {
      why = "its address is not IPv4";
    } else {
      impi::relay::Line request{impi::relay::Line::Kind::listen, impi::relay::Endpoint{*v4, hosts[rank].port}, ""};
      fd = net::request_line(relay_->address, relay_->port, impi::relay::format(request), std::chrono::seconds(10),
                             &why);
      if (fd) {
        reply = impi::relay::parse(why);
        if (!reply || reply->kind != impi::relay::Line::Kind::ok || !reply->endpoint)
          why = reply && reply->kind == impi::relay::Line::Kind::err ? reply->text : "unexpected answer '" + why + "'";
        else why.clear();
      }
    }
    if (!why.empty()) {
      close_server();
      job_->external_failure("mpirun: impi-relay at " + where + " cannot forward a port to rank " +
                                 std::to_string(rank) + ": " + why,
                             Clock::now());
      return false;
    }
    hosts[rank].reach_address = impi::host_id_from_ipv4(reply->endpoint->address);
    hosts[rank].reach_port = reply->endpoint->port;
    relay_forwards_.push_back(std::move(fd));
  }
  return true;
}

// The local job is over.  A completed MPI job says FINI; anything else
// closes without it, which tells the server (and through it the other
// clusters) that this cluster's job did not complete.
void Mpirun::finish_server() {
  if (!impi_) return;
  bool completed = job_->completed_mpi_job();
  bool running = server_.fd && !server_.done && impi_->state() == impi::ClientSession::State::ready;
  if (completed && running) {
    impi_->finish();
    apply_impi();
    auto deadline = Clock::now() + std::chrono::seconds(5);
    while (server_.fd && !server_.out.empty() && Clock::now() < deadline) {
      pollfd p{server_.fd.get(), POLLOUT, 0};
      ::poll(&p, 1, 100);
      flush_server();
    }
  } else if (!job_->failed()) {
    print_err(completed ? "mpirun: the MPI job ended without the IMPI start-up (its ranks never published their "
                          "IMPI address); closed the impi-server connection without FINI"
                        : "mpirun: the program did not start an MPI job (no rank called MPI_Init), so this cluster "
                          "never completed the IMPI start-up; closed the impi-server connection without FINI "
                          "(mpirun -client runs MPI programs)");
  }
  close_server();
}

}  // namespace gridmpi::launcher
