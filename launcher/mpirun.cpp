// mpirun: reads the host file, starts every rank and runs the control
// service (JobControl) under one poll() loop.  This file is the program and
// its event loop: settings, the I/O adapter (sockets, pipes, child
// processes, signals) and the end of the job; every decision about the job
// is JobControl's.  The ways of starting a job each have a file
// (launcher/mpirun.hpp):
//
//   mpirun_local.cpp   ranks started one by one, by fork or a remote shell
//                      (rpim/), a gridmpi-proxy agent for remote ones
//   mpirun_vendor.cpp  -vendor NAME (the poe method, rpim/vendor.hpp): the
//                      whole job is one command, the vendor MPI's own
//                      mpiexec, whose processes are gridmpi-proxy agents
//   mpirun_client.cpp  -client K ADDR:PORT: also the IMPI client agent, on
//                      the connection to impi-server (impi::ClientSession
//                      makes the protocol's decisions)
#include "launcher/mpirun.hpp"

extern char** environ;

namespace gridmpi::launcher {

[[noreturn]] void usage_exit(const std::string& line) {
  std::string text = "mpirun: " + line + "\n";
  net::write_all(2, text);
  std::exit(2);
}

void print_err(const std::string& line) { net::write_all(2, line + "\n"); }

fs::path installation_root() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path().parent_path();
}

// The program as an absolute path when it can be found here, so that ranks
// started elsewhere (remote shells with a minimal PATH) find it too.
std::string resolve_program(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (program[0] == '/') return program;
    return (fs::current_path() / program).lexically_normal().string();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    fs::path candidate = fs::path(dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) {
      if (candidate.is_relative()) candidate = fs::current_path() / candidate;
      return candidate.lexically_normal().string();
    }
    start = end + 1;
  }
  return program;
}

std::uint64_t make_cookie() {
  std::random_device device;
  std::uint64_t cookie = 0;
  while (cookie == 0) cookie = (std::uint64_t{device()} << 32) ^ device();
  return cookie;
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (char c : text + ",") {
    if (c == ',' || c == ':' || c == ' ') {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  return out;
}

// Environment that follows a rank to a remote host.  ssh gives a fresh
// login environment, so the library's own settings must travel explicitly.
std::vector<std::string> environment_for_remote(const std::vector<std::string>& extra_names) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    // The IMPI key is mpirun's alone (it talks to impi-server): it must not
    // show on a remote command line.
    bool ours = name.starts_with("GRIDMPI_") || name.starts_with("_YAMPI_") ||
                (name.starts_with("IMPI_") && name != "IMPI_AUTH_KEY") || name == "MPIROOT";
    bool listed = std::find(extra_names.begin(), extra_names.end(), name) != extra_names.end();
    if (ours || listed) out.push_back(entry);
  }
  return out;
}



int self_pipe_write = -1;

extern "C" void on_signal(int signo) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(signo);
  ssize_t ignored = ::write(self_pipe_write, &byte, 1);
  (void)ignored;
  errno = saved;
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Calls f(pid, fields) for every process in /proc, `fields` being its stat
// line after "(comm)": state ppid pgrp session tty_nr tpgid flags minflt
// cminflt majflt cmajflt utime stime cutime cstime ... (proc(5)).
template <class F>
void for_each_process_stat(F f) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    std::getline(stat, text);
    auto close = text.rfind(')');
    if (close == std::string::npos) continue;
    f(static_cast<pid_t>(std::atoi(name.c_str())), text.c_str() + close + 1);
  }
}

// Every process below mpirun (mpirun -vendor is a child subreaper, so the
// vendor's daemons and ranks come back to it when their parents die).
std::vector<pid_t> descendants() {
  std::map<pid_t, std::vector<pid_t>> children;
  for_each_process_stat([&](pid_t pid, const char* fields) {
    char state = 0;
    int ppid = 0;
    if (std::sscanf(fields, " %c %d", &state, &ppid) != 2) return;
    if (state == 'Z' || state == 'X') return;  // gone; only its parent can reap it
    children[ppid].push_back(pid);
  });
  std::vector<pid_t> out;
  std::vector<pid_t> todo{::getpid()};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    for (pid_t c : children[p]) {
      out.push_back(c);
      todo.push_back(c);
    }
  }
  return out;
}

// CPU clock ticks used by the processes of each process group in `groups`
// (a local rank and whatever it started), in one pass over /proc: utime +
// stime of each process, and cutime + cstime of the children it reaped.
void group_cpu_ticks(std::map<pid_t, unsigned long long>& groups) {
  for_each_process_stat([&](pid_t, const char* fields) {
    char state = 0;
    int ppid = 0, pgrp = 0;
    unsigned long long utime = 0, stime = 0;
    long long cutime = 0, cstime = 0;
    if (std::sscanf(fields, " %c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &state, &ppid, &pgrp,
                    &utime, &stime, &cutime, &cstime) != 7)
      return;
    auto it = groups.find(pgrp);
    if (it == groups.end()) return;
    it->second += utime + stime + static_cast<unsigned long long>(std::max(0LL, cutime) + std::max(0LL, cstime));
  });
}

void Mpirun::read_settings() {
  try {
    // Every parameter the ranks will read is checked here, once, so that a
    // malformed value is one mpirun line instead of an MPI_Init failure per rank.
    for (const conf::ParamBase* param : conf::all_parameters()) param->validate();
    rsh_ = remote_shell.get();
    showrank_ = options_.showrank || show_rank.get();
    chdir_ = change_dir.get();
    max_starting_ = max_starting.get();
    std::int64_t seconds = startup_timeout.get();
    if (seconds < 0) throw conf::ConfigError("mpirun.startup_timeout must be >= 0, got " + std::to_string(seconds));
    startup_timeout_ = std::chrono::seconds(seconds);
    std::int64_t limit = startup_limit.get();
    if (limit < 0) throw conf::ConfigError("mpirun.startup_limit must be >= 0, got " + std::to_string(limit));
    startup_limit_ = std::chrono::seconds(limit);
    job_timeout_ = settings::job_timeout.get();
    if (job_timeout_ < 0) throw conf::ConfigError("mpirun.timeout must be >= 0, got " + std::to_string(job_timeout_));
    double grace = terminate_grace.get();
    if (grace < 0 || grace > 3600)
      throw conf::ConfigError("mpirun.terminate_grace must be between 0 and 3600 seconds, got " +
                              std::to_string(grace));
    grace_ = std::chrono::milliseconds(static_cast<long long>(grace * 1000));
    extra_env_names_ = split_names(envs_list.get());
    address_setting_ = control_address.get();
    std::int64_t port = control_port.get();
    if (port < 0 || port > 65535)
      throw conf::ConfigError("mpirun.port must be a port number 0..65535, got " + std::to_string(port));
    port_setting_ = static_cast<int>(port);

    std::string file = options_.hostfile;
    bool must_exist = !file.empty();
    if (file.empty()) {
      const auto& resolved = config_file.resolve();
      file = config_file.get();
      must_exist = resolved.source != conf::Source::default_value;
      if (file.empty()) {
        file = "mpi_conf";
        must_exist = false;
      }
    }
    std::error_code ec;
    if (!must_exist && !fs::exists(file, ec)) {
      hosts_.clear();
    } else {
      if (!fs::exists(file, ec))
        throw UsageError("cannot read host file '" + file + "': " + std::strerror(ENOENT) +
                         "; check the -c argument (or _YAMPI_CONFIG_FILE)");
      try {
        hosts_ = conf::parse_hostfile(file);
      } catch (const conf::ConfigError& e) {
        throw UsageError(std::string(e.what()) + "; fix the host file (or name another with -c)");
      }
      if (hosts_.empty())
        throw UsageError("host file '" + file + "' lists no hosts; put one host name per line (optionally with a "
                         "slot count: 'node1 4')");
    }
  } catch (const conf::ConfigError& e) {
    usage_exit(std::string(e.what()) + "; correct the value (or unset it) and run again");
  } catch (const UsageError& e) {
    usage_exit(e.what());
  }
  if (rsh_.find_first_not_of(" \t") == std::string::npos) rsh_ = rpim::default_remote_shell;
  try {
    (void)rpim::split_words(rsh_);
  } catch (const std::exception& e) {
    usage_exit("malformed _YAMPI_RSH '" + rsh_ + "': " + e.what() + "; fix the quoting");
  }
}

int Mpirun::dry_run() const {
  if (vendor_mode()) {
    std::string line = "job (poe, " + vendor_.name + "): " + rpim::shell_join(rank_environment(plans_[0], true)) +
                       " " + rpim::shell_join(vendor_job_argv(hosts_.empty() ? "" : "<host file>"));
    net::write_all(1, line + "\n");
    if (!hosts_.empty())
      net::write_all(1, "<host file>:\n" + rpim::vendor_hostfile_text(vendor_.style, hosts_));
    return 0;
  }
  for (const auto& p : plans_) {
    std::string line = "rank " + std::to_string(p.rank) + " on " + p.host + " (" + p.method.name() + "): ";
    if (p.local) line += rpim::shell_join(rank_environment(p, true)) + " ";
    line += rpim::shell_join(launch_argv(p));
    net::write_all(1, line + "\n");
  }
  return 0;
}

void Mpirun::flush_connection(ConnectionId id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = it->second;
  while (!c.out.empty()) {
    ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0) {
      c.out.clear();  // the peer is gone; its end arrives as EOF
      break;
    }
    c.out.erase(0, static_cast<std::size_t>(n));
  }
  if (c.closing) connections_.erase(it);
}

void Mpirun::close_connection(ConnectionId id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  it->second.closing = true;
  flush_connection(id);
}

void Mpirun::apply(std::vector<Action> actions) {
  for (auto& a : actions) {
    if (auto* send = std::get_if<action::Send>(&a)) {
      auto it = connections_.find(send->connection);
      if (it == connections_.end()) continue;
      it->second.out.append(reinterpret_cast<const char*>(send->bytes.data()), send->bytes.size());
      flush_connection(send->connection);
    } else if (auto* close = std::get_if<action::Close>(&a)) {
      close_connection(close->connection);
    } else if (auto* print = std::get_if<action::Print>(&a)) {
      print_err(print->line);
    } else if (auto* sig = std::get_if<action::SignalLocal>(&a)) {
      if (vendor_mode()) {
        // Ranks with an agent are signalled through it (proxy_signal); the
        // launcher itself only when no agent is there to do it, or at the end.
        bool any_agent = false;
        for (const auto& p : plans_) any_agent = any_agent || job_->agent_connected(p.rank);
        if (sig->signo == SIGKILL)
          stop_descendants(std::chrono::milliseconds(0), [this] { reap(); });
        else if (!any_agent)
          stop_vendor_launcher();
        continue;
      }
      for (const auto& c : children_) {
        if (!c.remote_shell) {
          // The whole process group: the rank and whatever it started.
          ::kill(-c.pid, sig->signo);
        } else if (!c.reaped && (!job_->agent_connected(c.rank) || sig->signo == SIGKILL)) {
          ::kill(-c.pid, sig->signo == SIGKILL ? SIGKILL : SIGTERM);
        }
      }
    } else if (auto* finish = std::get_if<action::Finish>(&a)) {
      exit_status_ = finish->exit_status;
    } else if (auto* fence = std::get_if<action::ExternalFence>(&a)) {
      local_hosts_published(std::move(fence->values));
    }
  }
}

// Actions can lead to more actions (an external fence answered at once).
void Mpirun::apply_all() {
  for (;;) {
    auto actions = job_->take_actions();
    if (actions.empty()) return;
    apply(std::move(actions));
  }
}

void Mpirun::reap() {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (auto& c : children_) {
      if (c.pid != pid || c.reaped) continue;
      c.reaped = true;
      if (pid == vendor_pid_) {
        vendor_reaped_ = true;
        vendor_status_ = status;
        // The agents' last reports may still be in flight, and an abort
        // settling (abort_settle) is the cause worth naming.
        vendor_exit_report_at_ = Clock::now() + std::chrono::milliseconds(1000);
      } else if (c.remote_shell)
        job_->remote_shell_exited(c.rank, status, Clock::now());
      else
        job_->process_exited(c.rank, status, Clock::now());
    }
  }
}

void Mpirun::accept_connections() {
  for (;;) {
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    ConnectionId id = next_connection_++;
    connections_[id].fd.reset(fd);
    job_->connection_opened(id, net::peer_name(fd));
  }
}

void Mpirun::forward_stream(std::size_t index) {
  Stream& s = streams_[index];
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(s.fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      net::write_all(s.target, s.lines.finish(plans_.size() > 1 || showrank_));
      s.fd.reset();
      return;
    }
    std::string out = s.lines.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    if (!out.empty()) net::write_all(s.target, out);
  }
}

void Mpirun::event_loop() {
  std::vector<pollfd> fds;
  enum class Kind { signal, listener, connection, stream, stdin_read, stdin_write, server };
  std::vector<std::pair<Kind, std::uint64_t>> what;
  std::optional<Clock::time_point> time_limit;
  if (job_timeout_ > 0) time_limit = Clock::now() + std::chrono::seconds(job_timeout_);
  while (!job_->finished()) {
    if (time_limit && Clock::now() >= *time_limit) {
      job_->time_limit_reached(job_timeout_, Clock::now());
      time_limit.reset();
    }
    apply_all();
    launch_more();
    apply_all();
    // A failed cluster tells the others at once: the server sees the
    // connection close without FINI.
    if (impi_ && job_->failed() && !server_.done) close_server();
    if (job_->finished()) break;
    fds.clear();
    what.clear();
    auto add = [&](int fd, short events, Kind kind, std::uint64_t index) {
      fds.push_back(pollfd{fd, events, 0});
      what.emplace_back(kind, index);
    };
    add(signal_read_.get(), POLLIN, Kind::signal, 0);
    add(listener_.get(), POLLIN, Kind::listener, 0);
    if (server_.fd && !server_.done)
      add(server_.fd.get(),
          static_cast<short>(server_.connecting ? POLLOUT : (POLLIN | (server_.out.empty() ? 0 : POLLOUT))),
          Kind::server, 0);
    for (auto& [id, c] : connections_)
      add(c.fd.get(), static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), Kind::connection, id);
    for (std::size_t i = 0; i < streams_.size(); ++i)
      if (streams_[i].fd) add(streams_[i].fd.get(), POLLIN, Kind::stream, i);
    if (forwarding_stdin()) {
      if (stdin_buffer_.empty())
        add(0, POLLIN, Kind::stdin_read, 0);
      else
        add(rank0_stdin_.get(), POLLOUT, Kind::stdin_write, 0);
    }
    int timeout = -1;
    auto deadline = job_->next_deadline();
    if (time_limit && (!deadline || *time_limit < *deadline)) deadline = time_limit;
    auto earliest = [&](std::optional<Clock::time_point> t) {
      if (t && (!deadline || *t < *deadline)) deadline = t;
    };
    earliest(vendor_exit_report_at_);
    earliest(next_cpu_sample_);
    for (const auto& t : vendor_agent_lost_at_) earliest(t);
    if (impi_ && !server_.done) {
      earliest(impi_->next_deadline());
      earliest(server_.retry_at);
      if (server_.connecting) earliest(server_.attempt_deadline);
    }
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      timeout = static_cast<int>(std::clamp<long long>(left + 1, 0, INT_MAX));
    }
    int ready = ::poll(fds.data(), fds.size(), timeout);
    if (ready < 0 && errno != EINTR) {
      print_err(std::string("mpirun: poll: ") + std::strerror(errno));
      job_->interrupted(SIGTERM, Clock::now());
      continue;
    }
    for (std::size_t k = 0; ready > 0 && k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      auto [kind, index] = what[k];
      switch (kind) {
        case Kind::signal: {
          unsigned char signals[64];
          ssize_t n = ::read(signal_read_.get(), signals, sizeof signals);
          for (ssize_t i = 0; i < n; ++i) {
            if (signals[i] == SIGCHLD)
              reap();
            else
              job_->interrupted(signals[i], Clock::now());
          }
          break;
        }
        case Kind::listener:
          accept_connections();
          break;
        case Kind::connection: {
          auto it = connections_.find(index);
          if (it == connections_.end()) break;
          if (fds[k].revents & POLLOUT) flush_connection(index);
          if (!connections_.contains(index)) break;
          if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
            std::byte buffer[65536];
            ssize_t n = ::recv(it->second.fd.get(), buffer, sizeof buffer, 0);
            if (n > 0) {
              job_->received(index, std::span(buffer, static_cast<std::size_t>(n)), Clock::now());
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
              connections_.erase(it);
              job_->connection_closed(index, Clock::now());
            }
          }
          break;
        }
        case Kind::stream:
          forward_stream(index);
          break;
        case Kind::server:
          server_io(fds[k].revents);
          break;
        case Kind::stdin_read: {
          char buffer[16384];
          ssize_t n = ::read(0, buffer, sizeof buffer);
          if (n > 0) {
            stdin_buffer_.assign(buffer, static_cast<std::size_t>(n));
          } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            stdin_open_ = false;
            rank0_stdin_.reset();  // rank 0 sees end of file
          }
          break;
        }
        case Kind::stdin_write: {
          ssize_t n = ::write(rank0_stdin_.get(), stdin_buffer_.data(), stdin_buffer_.size());
          if (n > 0) {
            stdin_buffer_.erase(0, static_cast<std::size_t>(n));
          } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
            stdin_open_ = false;  // rank 0 closed its input or ended
            rank0_stdin_.reset();
            stdin_buffer_.clear();
          }
          break;
        }
      }
    }
    if (impi_ && !server_.done) {
      auto now = Clock::now();
      if (server_.retry_at && now >= *server_.retry_at && !job_->failed()) start_server_connect(now);
      if (server_.connecting && now >= server_.attempt_deadline) server_connect_failed(ETIMEDOUT, now);
      impi_->tick(now);
      apply_impi();
    }
    vendor_tick(Clock::now());
    sample_rank_cpu(Clock::now());
    apply_all();
    job_->tick(Clock::now());
  }
  apply_all();
}

// The start-up watch: once a second, the CPU time of every local rank that
// has not connected yet; one that grew means the rank is starting (a Python
// rank importing its modules on a loaded machine), not stuck.
void Mpirun::sample_rank_cpu(Clock::time_point now) {
  if (next_cpu_sample_ && now < *next_cpu_sample_) return;
  next_cpu_sample_.reset();
  std::map<pid_t, unsigned long long> groups;
  for (const Child& c : children_) {
    if (c.rank >= 0 && !c.remote_shell && !c.reaped && job_->wants_cpu_samples(c.rank, now))
      groups[c.pid] = 0;
    else if (c.rank >= 0)
      rank_cpu_ticks_.erase(c.rank);
  }
  if (groups.empty()) return;
  group_cpu_ticks(groups);
  for (const Child& c : children_) {
    auto g = groups.find(c.pid);
    if (c.rank < 0 || c.remote_shell || g == groups.end()) continue;
    auto [it, first] = rank_cpu_ticks_.try_emplace(c.rank, 0);  // a new process starts at 0
    if (g->second > it->second) job_->rank_running(c.rank, now);
    it->second = std::max(it->second, g->second);
  }
  next_cpu_sample_ = now + std::chrono::seconds(1);
}

void Mpirun::drain_and_reap() {
  listener_.reset();
  rank0_stdin_.reset();
  // Output still in the pipes, and remote shells that have not ended yet.
  auto deadline = Clock::now() + std::chrono::seconds(3);
  std::optional<Clock::time_point> all_reaped_at;
  for (;;) {
    bool children_left = false;
    for (const auto& c : children_) children_left = children_left || !c.reaped;
    bool streams_left = false;
    for (const auto& s : streams_) streams_left = streams_left || bool(s.fd);
    auto now = Clock::now();
    if (!children_left && !all_reaped_at) all_reaped_at = now;
    // A pipe kept open by a process the rank left behind must not hold mpirun.
    if (all_reaped_at) deadline = std::min(deadline, *all_reaped_at + std::chrono::milliseconds(500));
    if ((!children_left && !streams_left) || now >= deadline) break;
    std::vector<pollfd> fds{pollfd{signal_read_.get(), POLLIN, 0}};
    std::vector<std::size_t> index{0};
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (!streams_[i].fd) continue;
      fds.push_back(pollfd{streams_[i].fd.get(), POLLIN, 0});
      index.push_back(i);
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    if (::poll(fds.data(), fds.size(), static_cast<int>(left + 1)) <= 0) continue;
    if (fds[0].revents) {
      unsigned char signals[64];
      ssize_t n = ::read(signal_read_.get(), signals, sizeof signals);
      (void)n;
      reap();
    }
    for (std::size_t k = 1; k < fds.size(); ++k)
      if (fds[k].revents) forward_stream(index[k]);
  }
  if (vendor_mode() && vendor_pid_ > 0 && !vendor_reaped_) {
    // The vendor's mpiexec outlived its ranks: SIGTERM first, so that it
    // stops its daemons (orted, hydra_pmi_proxy) itself; SIGKILL after the grace.
    stop_vendor_launcher();
    auto until = Clock::now() + grace_;
    while (!vendor_reaped_ && Clock::now() < until) {
      pollfd p{signal_read_.get(), POLLIN, 0};
      if (::poll(&p, 1, 20) > 0) {
        unsigned char signals[64];
        ssize_t n = ::read(signal_read_.get(), signals, sizeof signals);
        (void)n;
      }
      reap();
    }
  }
  for (auto& c : children_) {
    if (c.reaped) continue;
    ::kill(-c.pid, SIGKILL);
    ::kill(c.pid, SIGKILL);
    int status;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    c.reaped = true;
  }
  for (std::size_t i = 0; i < streams_.size(); ++i)
    if (streams_[i].fd) {
      forward_stream(i);
      net::write_all(streams_[i].target, streams_[i].lines.finish(plans_.size() > 1 || showrank_));
    }
  for (auto& [id, c] : connections_) {
    if (!c.out.empty()) net::write_all(c.fd.get(), std::as_bytes(std::span(c.out.data(), c.out.size())));
  }
  connections_.clear();
  // Nothing of a vendor job outlives mpirun: daemons the vendor left, ranks
  // orphaned by a killed agent, what the ranks started (mpirun is their
  // subreaper, so all of them are below it).
  if (vendor_mode()) stop_descendants(grace_, [this] { reap(); });
}

int Mpirun::run(const std::vector<std::string>& args) {
  root_ = installation_root();
  // Ranks and conf/ find the site file through MPIROOT; the remote agent is
  // looked for under it too.
  if (!std::getenv("MPIROOT") && !root_.empty()) setenv("MPIROOT", root_.c_str(), 1);
  try {
    options_ = parse_mpirun_options(args);
  } catch (const UsageError& e) {
    usage_exit(e.what());
  }
  if (options_.help) {
    net::write_all(1, std::string(mpirun_usage));
    return 0;
  }
  if (options_.version) {
    net::write_all(1, std::string("mpirun (gridmpi) " GRIDMPI_VERSION "\n"));
    return 0;
  }
  try {
    // Flags that are parameters: the ranks see them as set on the command line.
    if (!options_.vendor.empty()) conf::set_from_command_line("vendor.name", options_.vendor);
    if (!options_.progress.empty()) conf::set_from_command_line("progress.mode", options_.progress);
  } catch (const conf::ConfigError& e) {
    usage_exit(e.what());
  }
  read_settings();
  read_vendor_settings();
  if (client_mode()) read_client_settings();
  program_ = options_.program;
  program_[0] = resolve_program(program_[0]);
  plan_ranks();
  if (options_.dryrun) return dry_run();
  cookie_ = make_cookie();

  bool any_remote = false;
  for (const auto& p : plans_) any_remote = any_remote || !p.local;
  try {
    std::string bind = (any_remote || !address_setting_.empty()) ? "0.0.0.0" : "127.0.0.1";
    listener_ = net::listen_tcp(bind, port_setting_, port_);
  } catch (const std::exception& e) {
    print_err(std::string("mpirun: cannot open the control service: ") + e.what() +
              "; choose another port with GRIDMPI_MPIRUN_PORT or leave it 0");
    return 255;
  }

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    print_err(std::string("mpirun: pipe: ") + std::strerror(errno));
    return 255;
  }
  signal_read_.reset(pipe_fds[0]);
  self_pipe_write = pipe_fds[1];
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  // Reading a terminal from the background must not stop mpirun.
  ::signal(SIGTTIN, SIG_IGN);

  // Rank 0 gets mpirun's input, unless mpirun runs in the background of a terminal.
  stdin_open_ = fcntl(0, F_GETFD) != -1 && !(isatty(0) && tcgetpgrp(0) != getpgrp());

  JobSettings settings;
  settings.cookie = cookie_;
  for (const auto& p : plans_) {
    settings.hosts.push_back(p.host);
    settings.remote.push_back(!p.local);
    if (!p.local) settings.remote_shell = p.method.name();
  }
  settings.startup_timeout = startup_timeout_;
  settings.startup_limit = startup_limit_;
  settings.terminate_grace = grace_;
  if (client_mode()) settings.external_fence_key = impi::key_local_host;
  job_ = std::make_unique<JobControl>(std::move(settings));
  if (client_mode()) {
    // Ranks and the connection to the server start together: the ranks'
    // start-up overlaps the server's handshake.
    impi_ = std::make_unique<impi::ClientSession>(impi_settings_);
    start_server_connect(Clock::now());
  }

  event_loop();
  finish_server();
  drain_and_reap();
  if (!vendor_hostfile_.empty()) ::unlink(vendor_hostfile_.c_str());
  if (!vendor_shm_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(vendor_shm_dir_, ec);
  }
  return exit_status_;
}

}  // namespace gridmpi::launcher

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  gridmpi::launcher::Mpirun mpirun;
  try {
    return mpirun.run(args);
  } catch (const std::exception& e) {
    std::string line = std::string("mpirun: internal error: ") + e.what() + "; please report it\n";
    gridmpi::net::write_all(2, line);
    return 255;
  }
}
