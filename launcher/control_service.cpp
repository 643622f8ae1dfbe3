#include "launcher/control_service.hpp"

#include <sys/wait.h>

#include <csignal>
#include <cstring>

namespace gridmpi::launcher {

namespace {
long long seconds(std::chrono::milliseconds ms) { return (ms.count() + 999) / 1000; }
}  // namespace

std::string describe_signal(int signo) {
  const char* name = strsignal(signo);
  return "signal " + std::to_string(signo) + " (" + (name ? name : "unknown signal") + ")";
}

JobControl::JobControl(JobSettings settings) : settings_(std::move(settings)) {
  ranks_.resize(settings_.hosts.size());
  settings_.remote.resize(settings_.hosts.size(), false);
}

std::string JobControl::name(int rank) const {
  if (rank_offset_) return "rank " + std::to_string(*rank_offset_ + rank);
  // mpirun -client before the IMPI start-up: world ranks are not known yet.
  if (!settings_.external_fence_key.empty()) return "local rank " + std::to_string(rank);
  return "rank " + std::to_string(rank);
}

std::string JobControl::where(int rank) const {
  const Rank& r = ranks_[rank];
  std::string s = "(" + settings_.hosts[rank];
  if (r.pid > 0) s += ", pid " + std::to_string(r.pid);
  return s + ")";
}

bool JobControl::mpi_job() const {
  for (const Rank& r : ranks_)
    if (r.connected) return true;
  return false;
}

bool JobControl::agent_connected(int rank) const { return ranks_.at(rank).agent.has_value(); }
bool JobControl::rank_gone(int rank) const { return ranks_.at(rank).gone; }

std::vector<Action> JobControl::take_actions() {
  std::vector<Action> out;
  out.swap(actions_);
  return out;
}

void JobControl::send(ConnectionId id, const Message& m) { actions_.emplace_back(action::Send{id, encode(m)}); }

void JobControl::launched(int rank, int pid, Clock::time_point now) {
  Rank& r = ranks_.at(rank);
  r.launched = true;
  r.launched_at = now;
  r.running_at = now;
  if (!settings_.remote[rank]) r.pid = pid;
  // A rank started while the job is already stopping is stopped at once.
  if (stopping_ && !settings_.remote[rank]) actions_.emplace_back(action::SignalLocal{SIGKILL});
}

void JobControl::rank_running(int rank, Clock::time_point now) {
  Rank& r = ranks_.at(static_cast<std::size_t>(rank));
  if (r.launched && !r.connected && !r.gone && now > r.running_at) r.running_at = now;
}

bool JobControl::wants_cpu_samples(int rank, Clock::time_point now) const {
  const Rank& r = ranks_.at(static_cast<std::size_t>(rank));
  // Also before the job is known to be an MPI job: a rank busy since its
  // start must not look idle when the first rank connects.
  return stop_ == Stop::none && settings_.startup_timeout.count() > 0 && !settings_.remote[rank] && r.launched &&
         !r.gone && !r.connected &&
         (settings_.startup_limit.count() <= 0 || now < r.launched_at + settings_.startup_limit);
}

std::optional<Clock::time_point> JobControl::startup_deadline(std::size_t i, bool mpi) const {
  const Rank& r = ranks_[i];
  if (!r.launched || r.gone || r.connected) return std::nullopt;
  if (settings_.remote[i] && !r.agent_seen) return r.launched_at + settings_.startup_timeout;
  if (!mpi) return std::nullopt;
  auto idle = std::max(r.launched_at, r.running_at) + settings_.startup_timeout;
  if (settings_.startup_limit.count() > 0) return std::min(idle, r.launched_at + settings_.startup_limit);
  return idle;
}

void JobControl::launch_failed(int rank, const std::string& reason, Clock::time_point now) {
  Rank& r = ranks_.at(rank);
  if (r.gone) return;
  r.gone = true;
  fail("cannot start " + name(rank) + " on host " + settings_.hosts[rank] + ": " + reason, 255,
       now);
  check_finished();
}

void JobControl::connection_opened(ConnectionId connection, const std::string& peer) {
  Connection c;
  c.peer = peer;
  connections_.emplace(connection, std::move(c));
}

void JobControl::received(ConnectionId id, std::span<const std::byte> bytes, Clock::time_point now) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = it->second;
  try {
    c.decoder.feed(bytes);
    while (auto m = c.decoder.next()) {
      handle(id, c, *m, now);
      // handle() may have refused and erased the connection.
      if (!connections_.contains(id)) return;
    }
  } catch (const ProtocolError& e) {
    std::string who = c.role == Connection::Role::unknown ? "" : " (rank " + std::to_string(c.rank) + ")";
    actions_.emplace_back(action::Print{"mpirun: closing control connection from " + c.peer + who + ": " +
                                        e.what() + "; is a program of another MPI or version connecting?"});
    actions_.emplace_back(action::Close{id});
    connection_closed(id, now);
  }
}

void JobControl::refuse(ConnectionId id, const std::string& why_for_log, const std::string& why_for_peer) {
  auto it = connections_.find(id);
  std::string peer = it != connections_.end() ? it->second.peer : "?";
  actions_.emplace_back(action::Print{"mpirun: refused control connection from " + peer + ": " + why_for_log});
  Message m;
  m.type = MessageType::refuse;
  m.text = why_for_peer;
  send(id, m);
  actions_.emplace_back(action::Close{id});
  if (it != connections_.end()) connections_.erase(it);
}

void JobControl::handle_hello(ConnectionId id, Connection& c, const Message& m, Clock::time_point now) {
  bool agent = m.type == MessageType::proxy_hello;
  if (m.cookie != settings_.cookie) {
    refuse(id, "wrong job cookie (a process of another job, or a stray connection)", "wrong job cookie");
    return;
  }
  if (m.rank < 0 || m.rank >= size()) {
    refuse(id, "rank " + std::to_string(m.rank) + " out of range 0.." + std::to_string(size() - 1),
           "rank out of range");
    return;
  }
  Rank& r = ranks_[m.rank];
  if (agent ? r.agent_seen : r.connected) {
    refuse(id, std::string("rank ") + std::to_string(m.rank) + " already has " + (agent ? "an agent" : "a connection"),
           "duplicate rank");
    return;
  }
  c.rank = m.rank;
  if (agent) {
    c.role = Connection::Role::agent;
    r.agent = id;
    r.agent_seen = true;
    // Stop a rank whose agent arrives after the job started stopping.
    if (stopping_) {
      Message s;
      s.type = MessageType::proxy_signal;
      s.code = stop_ == Stop::kill_sent ? SIGKILL : SIGTERM;
      send(id, s);
    }
    return;
  }
  c.role = Connection::Role::rank;
  bool first_mpi = !mpi_job();
  r.connection = id;
  r.connected = true;
  if (r.pid == 0) r.pid = m.pid;
  Message w;
  w.type = MessageType::welcome;
  w.size = size();
  send(id, w);
  // Ranks that exited before anyone connected were MPI processes that died
  // before MPI_Init; the others would wait for them forever.
  if (first_mpi && !stopping_) {
    for (int i = 0; i < size(); ++i) {
      if (ranks_[i].exited_unconnected) {
        fail("mpirun: " + name(i) + " exited with status " + std::to_string(ranks_[i].exit_code) +
                 " without calling MPI_Finalize " + where(i),
             255, now);
        break;
      }
    }
  }
}

void JobControl::handle(ConnectionId id, Connection& c, const Message& m, Clock::time_point now) {
  if (m.type == MessageType::hello || m.type == MessageType::proxy_hello) {
    if (c.role != Connection::Role::unknown) {
      refuse(id, "second hello on one connection", "protocol error");
      return;
    }
    handle_hello(id, c, m, now);
    return;
  }
  if (c.role == Connection::Role::unknown) {
    refuse(id, std::string("'") + message_type_name(m.type) + "' before hello", "protocol error");
    return;
  }
  Rank& r = ranks_[c.rank];
  int rank = c.rank;
  if (c.role == Connection::Role::agent) {
    switch (m.type) {
      case MessageType::proxy_started:
        r.pid = m.pid;
        return;
      case MessageType::proxy_failed:
        if (!r.gone) {
          r.gone = true;
          fail("mpirun: cannot start " + name(rank) + " on host " + settings_.hosts[rank] + ": " +
                   m.text,
               255, now);
          check_finished();
        }
        return;
      case MessageType::proxy_exit:
        if (m.code >= 0)
          rank_ended(rank, true, m.code, now);
        else
          rank_ended(rank, false, -m.code, now);
        return;
      default:
        refuse(id, std::string("'") + message_type_name(m.type) + "' from the agent of rank " + std::to_string(rank),
               "protocol error");
        return;
    }
  }
  switch (m.type) {
    case MessageType::put_fence: {
      auto& slot = fences_[m.key];
      slot.resize(size());
      if (slot[rank]) {
        refuse(id, "rank " + std::to_string(rank) + " published '" + m.key + "' twice in one fence",
               "protocol error");
        return;
      }
      slot[rank] = m.value;
      for (const auto& v : slot)
        if (!v) return;
      Message out;
      out.type = MessageType::values;
      out.key = m.key;
      for (auto& v : slot) out.values.push_back(std::move(*v));
      fences_.erase(m.key);
      if (!settings_.external_fence_key.empty() && m.key == settings_.external_fence_key) {
        if (!stopping_) {
          external_fence_pending_ = true;
          actions_.emplace_back(action::ExternalFence{m.key, std::move(out.values)});
        }
        return;
      }
      auto bytes = encode(out);
      for (const Rank& each : ranks_)
        if (each.connection) actions_.emplace_back(action::Send{*each.connection, bytes});
      return;
    }
    case MessageType::abort: {
      Message ack;
      ack.type = MessageType::abort_ack;
      send(id, ack);
      // key "error": an error handler ended the rank (MPI_ERRORS_ARE_FATAL),
      // m.code is the error class; otherwise the program called MPI_Abort.
      std::string line = m.key == abort_key_error
                             ? "mpirun: " + name(rank) + " failed " + where(rank)
                             : "mpirun: " + name(rank) + " called MPI_Abort with code " + std::to_string(m.code) +
                                   " " + where(rank);
      if (!m.text.empty()) line += ": " + m.text;
      r.aborted = true;
      // Only the first abort counts; later ones are usually its echoes.
      if (!stopping_ && !pending_abort_)
        pending_abort_ =
            PendingAbort{rank, line, m.code >= 0 && m.code <= 255 ? m.code : 255, now + settings_.abort_settle};
      if (settings_.abort_settle.count() <= 0) tick(now);
      return;
    }
    case MessageType::finalize: {
      r.finalized = true;
      Message ack;
      ack.type = MessageType::finalize_ack;
      send(id, ack);
      return;
    }
    default:
      refuse(id, std::string("'") + message_type_name(m.type) + "' from rank " + std::to_string(rank),
             "protocol error");
      return;
  }
}

void JobControl::connection_closed(ConnectionId id, Clock::time_point now) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  const Connection& c = it->second;
  if (c.rank >= 0) {
    Rank& r = ranks_[c.rank];
    if (c.role == Connection::Role::rank && r.connection == id) r.connection.reset();
    // The rank's end is learned from its process (local) or its remote
    // shell (remote), which report the real cause.
    bool shell_done = false;
    if (c.role == Connection::Role::agent && r.agent == id) {
      r.agent.reset();
      shell_done = r.shell_status.has_value();
    }
    connections_.erase(it);
    if (shell_done) lost_contact(c.rank, now);
    return;
  }
  connections_.erase(it);
}

void JobControl::process_exited(int rank, int wait_status, Clock::time_point now) {
  if (WIFSIGNALED(wait_status))
    rank_ended(rank, false, WTERMSIG(wait_status), now);
  else
    rank_ended(rank, true, WEXITSTATUS(wait_status), now);
}

void JobControl::remote_shell_exited(int rank, int wait_status, Clock::time_point now) {
  Rank& r = ranks_.at(rank);
  if (r.gone) return;
  r.shell_status = wait_status;
  if (r.agent || !r.agent_seen) {
    // The agent's hello and exit report travel on its own connection and may
    // be read after the shell's end is reaped (a rank that runs 'true' ends
    // at once): give them a moment before calling it a failure.
    r.shell_deadline = now + std::chrono::seconds(2);
    return;
  }
  lost_contact(rank, now);
}

void JobControl::agent_never_started(int rank, Clock::time_point now) {
  Rank& r = ranks_.at(rank);
  r.gone = true;
  if (!stopping_) {
    const std::string& host = settings_.hosts[rank];
    int wait_status = r.shell_status.value_or(0);
    std::string status = WIFSIGNALED(wait_status) ? "was killed by " + describe_signal(WTERMSIG(wait_status))
                                                  : "exited with status " + std::to_string(WEXITSTATUS(wait_status));
    fail("mpirun: cannot start " + name(rank) + " on host " + host + ": the remote shell (" +
             settings_.remote_shell + ") " + status + " before gridmpi-proxy started; check that '" +
             settings_.remote_shell + " " + host +
             " true' works without a password prompt and that gridmpi is installed at the same path there "
             "(or set MPIROOT, _YAMPI_RSH)",
         255, now);
  }
  check_finished();
}

void JobControl::lost_contact(int rank, Clock::time_point now) {
  Rank& r = ranks_.at(rank);
  if (r.gone) return;
  r.gone = true;
  int wait_status = r.shell_status.value_or(0);
  std::string status = WIFSIGNALED(wait_status) ? "was killed by " + describe_signal(WTERMSIG(wait_status))
                                                : "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (!stopping_)
    fail("mpirun: lost contact with " + name(rank) + " " + where(rank) + ": the remote shell " + status +
             " without a report from gridmpi-proxy",
         255, now);
  check_finished();
}

void JobControl::rank_ended(int rank, bool exited, int code_or_signal, Clock::time_point now) {
  Rank& r = ranks_.at(rank);
  if (r.gone) return;
  r.gone = true;
  if (r.aborted) {
    // An aborting rank ending (exit or abort()) is part of its abort.
    check_finished();
    return;
  }
  if (!exited) {
    if (!stopping_)
      fail("mpirun: " + name(rank) + " " + where(rank) + " killed by " + describe_signal(code_or_signal),
           255, now);
  } else {
    r.exit_code = code_or_signal;
    if (r.connected && !r.finalized) {
      if (!stopping_)
        fail("mpirun: " + name(rank) + " exited with status " + std::to_string(code_or_signal) +
                 " without calling MPI_Finalize " + where(rank),
             255, now);
    } else if (!r.connected && mpi_job()) {
      if (!stopping_)
        fail("mpirun: " + name(rank) + " exited with status " + std::to_string(code_or_signal) +
                 " without calling MPI_Finalize " + where(rank),
             255, now);
    } else {
      r.exited_normally = true;
      if (!r.connected) r.exited_unconnected = true;
    }
  }
  check_finished();
}

void JobControl::signal_all(int signo) {
  actions_.emplace_back(action::SignalLocal{signo});
  Message s;
  s.type = MessageType::proxy_signal;
  s.code = signo;
  for (const Rank& r : ranks_)
    if (r.agent && !r.gone) send(*r.agent, s);
}

void JobControl::fail(const std::string& line, int exit_status, Clock::time_point now) {
  if (stopping_) return;
  // A failure seen while an abort settles is its likely cause: report it instead.
  pending_abort_.reset();
  stopping_ = true;
  failure_status_ = exit_status;
  std::string text = line.starts_with("mpirun: ") ? line : "mpirun: " + line;
  actions_.emplace_back(action::Print{text});
  stop_ = Stop::term_sent;
  stop_deadline_ = now + settings_.terminate_grace;
  signal_all(SIGTERM);
  check_finished();
}

void JobControl::interrupted(int signo, Clock::time_point now) {
  if (finished_) return;
  if (!stopping_) {
    pending_abort_.reset();
    stopping_ = true;
    failure_status_ = 128 + signo;
    actions_.emplace_back(action::Print{"mpirun: received " + describe_signal(signo) + "; stopping all " +
                                        std::to_string(size()) + " ranks"});
    stop_ = Stop::term_sent;
    stop_deadline_ = now + settings_.terminate_grace;
    signal_all(signo);
    return;
  }
  // A second interrupt: no more grace.
  if (stop_ == Stop::term_sent) {
    stop_ = Stop::kill_sent;
    stop_deadline_ = now + settings_.kill_wait;
    signal_all(SIGKILL);
  }
}

void JobControl::time_limit_reached(std::int64_t seconds, Clock::time_point now) {
  if (finished_ || stopping_) return;
  pending_abort_.reset();
  stopping_ = true;
  failure_status_ = 255;
  actions_.emplace_back(action::Print{"mpirun: the job ran longer than its time limit of " + std::to_string(seconds) +
                                      " s (MPIEXEC_TIMEOUT / mpirun.timeout); stopping all " +
                                      std::to_string(size()) + " ranks"});
  stop_ = Stop::term_sent;
  stop_deadline_ = now + settings_.terminate_grace;
  signal_all(SIGTERM);
}

void JobControl::answer_external_fence(const std::string& key, std::vector<std::string> values) {
  if (!external_fence_pending_ || key != settings_.external_fence_key || stopping_ || finished_) return;
  external_fence_pending_ = false;
  Message out;
  out.type = MessageType::values;
  out.key = key;
  out.values = std::move(values);
  auto bytes = encode(out);
  for (const Rank& each : ranks_)
    if (each.connection) actions_.emplace_back(action::Send{*each.connection, bytes});
}

void JobControl::set_rank_offset(int offset) { rank_offset_ = offset; }

void JobControl::external_failure(const std::string& line, Clock::time_point now) {
  if (finished_) return;
  if (pending_abort_ && !stopping_) {
    // One of our ranks called MPI_Abort a moment ago: that is why the other
    // clusters ended (the server closing on us follows from it).
    PendingAbort abort = *pending_abort_;
    pending_abort_.reset();
    fail(abort.line, abort.exit_status, now);
    return;
  }
  fail(line, 255, now);
}

bool JobControl::completed_mpi_job() const {
  if (stopping_ || !finished_) return false;
  for (const Rank& r : ranks_)
    if (!r.connected || !r.finalized || !r.exited_normally) return false;
  return !ranks_.empty();
}

std::optional<Clock::time_point> JobControl::next_deadline() const {
  if (finished_) return std::nullopt;
  std::optional<Clock::time_point> shell;
  for (const Rank& r : ranks_)
    if (!r.gone && r.shell_status && (!shell || r.shell_deadline < *shell)) shell = r.shell_deadline;
  if (pending_abort_ && (!shell || pending_abort_->deadline < *shell)) shell = pending_abort_->deadline;
  if (stop_ != Stop::none) return shell && *shell < stop_deadline_ ? *shell : stop_deadline_;
  if (settings_.startup_timeout.count() <= 0) return std::nullopt;
  std::optional<Clock::time_point> best;
  bool mpi = mpi_job();
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    auto t = startup_deadline(i, mpi);
    if (t && (!best || *t < *best)) best = t;
  }
  if (shell && (!best || *shell < *best)) best = shell;
  return best;
}

void JobControl::tick(Clock::time_point now) {
  if (finished_) return;
  for (int i = 0; i < size(); ++i)
    if (!ranks_[i].gone && ranks_[i].shell_status && now >= ranks_[i].shell_deadline) {
      if (ranks_[i].agent_seen)
        lost_contact(i, now);
      else
        agent_never_started(i, now);
    }
  if (finished_) return;
  if (pending_abort_ && now >= pending_abort_->deadline) {
    PendingAbort abort = *pending_abort_;
    pending_abort_.reset();
    fail(abort.line, abort.exit_status, now);
    return;
  }
  if (stop_ == Stop::term_sent && now >= stop_deadline_) {
    stop_ = Stop::kill_sent;
    stop_deadline_ = now + settings_.kill_wait;
    signal_all(SIGKILL);
    return;
  }
  if (stop_ == Stop::kill_sent && now >= stop_deadline_) {
    // Whatever has not reported by now is out of reach (a remote host that
    // went away); say so rather than wait forever.
    for (int i = 0; i < size(); ++i) {
      if (!ranks_[i].gone && ranks_[i].launched) {
        actions_.emplace_back(action::Print{"mpirun: " + name(i) + " " + where(i) +
                                            " did not report its end; it may still be running on " +
                                            settings_.hosts[i]});
      }
      ranks_[i].gone = true;
    }
    check_finished();
    return;
  }
  if (stop_ != Stop::none || settings_.startup_timeout.count() <= 0) return;
  bool mpi = mpi_job();
  for (int i = 0; i < size(); ++i) {
    const Rank& r = ranks_[i];
    auto deadline = startup_deadline(static_cast<std::size_t>(i), mpi);
    if (!deadline || now < *deadline) continue;
    long long limit = seconds(settings_.startup_timeout);
    if (settings_.remote[i] && !r.agent_seen) {
      fail("mpirun: cannot start " + name(i) + " on host " + settings_.hosts[i] +
               ": the remote shell did not start gridmpi-proxy within " + std::to_string(limit) +
               " s; check that '" + settings_.remote_shell + " " + settings_.hosts[i] +
               " true' works without a password prompt, or raise _YAMPI_MPIRUN_STARTUP_TIMEOUT",
           255, now);
      return;
    }
    if (mpi && r.running_at > r.launched_at && settings_.startup_limit.count() > 0 &&
        now >= r.launched_at + settings_.startup_limit) {
      fail("mpirun: " + name(i) + " " + where(i) + " did not connect to mpirun within " +
               std::to_string(seconds(settings_.startup_limit)) +
               " s of its start although it was running (other ranks are in MPI_Init); it is busy before "
               "MPI_Init or cannot reach mpirun; raise mpirun.startup_limit (GRIDMPI_MPIRUN_STARTUP_LIMIT) if it is "
               "just slow",
           255, now);
      return;
    }
    if (mpi) {
      std::string idle = r.running_at > r.launched_at
                             ? " of the last time it used CPU time"
                             : " of its start, using no CPU time";
      fail("mpirun: " + name(i) + " " + where(i) + " did not connect to mpirun within " + std::to_string(limit) +
               " s" + idle +
               " (other ranks are in MPI_Init); it is stuck before MPI_Init or cannot reach mpirun; raise "
               "_YAMPI_MPIRUN_STARTUP_TIMEOUT if it is just slow",
           255, now);
      return;
    }
  }
}

void JobControl::check_finished() {
  if (finished_) return;
  // Once the job is stopping, ranks not started yet never will be.
  for (const Rank& r : ranks_)
    if (!r.gone && (r.launched || !stopping_)) return;
  if (pending_abort_) {
    // Everyone is gone before the abort settled: report it now.
    PendingAbort abort = *pending_abort_;
    pending_abort_.reset();
    fail(abort.line, abort.exit_status, abort.deadline);
    return;
  }
  finished_ = true;
  int status = 255;
  if (stopping_) {
    status = failure_status_;
  } else {
    for (const Rank& r : ranks_) {
      if (r.exited_normally) {
        status = r.exit_code;
        break;
      }
    }
  }
  // Nobody will read from these connections any more.
  for (const auto& [id, c] : connections_) actions_.emplace_back(action::Close{id});
  connections_.clear();
  actions_.emplace_back(action::Finish{status});
}

}  // namespace gridmpi::launcher
