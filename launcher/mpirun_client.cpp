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
    job_->external_failure("mpirun: cannot reach impi-server at " + server_name() + ": " + std::strerror(err) +
                               " (start impi-server first and pass the ADDR:PORT it printed)",
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
    impi_->received(std::span(buffer, static_cast<std::size_t>(n)), now);
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
      // Every rank gets the same ONE value: what the server said, encoded.
      job_->answer_external_fence(impi::key_local_host, {complete->labels.encode()});
      // From now on mpirun names ranks by their MPI_COMM_WORLD rank.  (A
      // malformed answer is the ranks' to report: they decode it too.)
      try {
        impi::JobMap map = impi::JobMap::from_labels(complete->labels);
        job_->set_rank_offset(map.client_first_rank.at(static_cast<std::size_t>(map.my_client)));
      } catch (const std::exception&) {
      }
    } else if (auto* failed = std::get_if<impi::client_action::Failed>(&a)) {
      close_server();
      job_->external_failure(failed->line, Clock::now());
    } else if (std::holds_alternative<impi::client_action::Close>(a)) {
      // After FINI: the last bytes go out before the close (finish_server).
      server_.done = true;
    }
  }
}

void Mpirun::local_hosts_published(std::vector<std::string> values) {
  if (!impi_) return;
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
  impi_->local_hosts(std::move(hosts), Clock::now());
  apply_impi();
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
