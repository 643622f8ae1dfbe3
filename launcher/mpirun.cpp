// mpirun: reads the host file, starts every rank through an RPIM method and
// runs the control service (JobControl) under a poll() loop.  This file is
// the I/O adapter: sockets, pipes, child processes and signals; every
// decision about the job is JobControl's.  With -client K ADDR:PORT it is
// also the IMPI client agent: it holds the connection to impi-server and
// feeds it to impi::ClientSession, which makes the protocol's decisions.
// With -vendor NAME (the poe method, rpim/vendor.hpp) the whole job is one
// command, the vendor MPI's own mpiexec, whose processes are gridmpi-proxy
// agents: to JobControl every rank is then a "remote" rank with an agent.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "conf/hostfile.hpp"
#include "conf/registry.hpp"
#include "impi/client.hpp"
#include "impi/job_map.hpp"
#include "impi/params.hpp"
#include "impi/tls.hpp"
#include "launcher/control_service.hpp"
#include "base/net.hpp"
#include "launcher/options.hpp"
#include "launcher/output.hpp"
#include "launcher/settings.hpp"
#include "rpim/method.hpp"
#include "rpim/placement.hpp"
#include "rpim/spawn.hpp"
#include "rpim/vendor.hpp"

extern char** environ;

namespace gridmpi::launcher {
namespace {

namespace fs = std::filesystem;

using settings::change_dir;
using settings::config_file;
using settings::control_address;
using settings::control_port;
using settings::envs_list;
using settings::max_starting;
using settings::remote_shell;
using settings::show_rank;
using settings::startup_timeout;
using settings::startup_limit;
using settings::terminate_grace;

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

struct RankPlan {
  int rank = 0;
  std::string host;
  bool local = true;
  rpim::Method method;
  std::string phost;
  // How many of the job's ranks run on this host (the ranks' progress.yield
  // = auto compares it with the cores); in a vendor launch, where every
  // rank gets one environment, the largest count of any host.
  int host_ranks = 1;
};

int self_pipe_write = -1;

extern "C" void on_signal(int signo) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(signo);
  ssize_t ignored = ::write(self_pipe_write, &byte, 1);
  (void)ignored;
  errno = saved;
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

class Mpirun {
 public:
  int run(const std::vector<std::string>& args);

 private:
  void read_settings();
  void read_client_settings();
  void plan_ranks();
  std::vector<std::string> rank_environment(const RankPlan& p, bool with_cookie) const;
  std::vector<std::string> proxy_argv(const RankPlan& p) const;
  std::vector<std::string> launch_argv(const RankPlan& p) const;
  int dry_run() const;
  void launch(const RankPlan& p);
  void launch_more();
  // mpirun -vendor NAME (the poe method)
  bool vendor_mode() const { return !vendor_.name.empty(); }
  void read_vendor_settings();
  std::vector<std::string> vendor_job_argv(const std::string& hostfile) const;
  void launch_vendor();
  void vendor_tick(Clock::time_point now);
  void stop_vendor_launcher();
  void apply(std::vector<Action> actions);
  void apply_all();
  // mpirun -client: the impi-server connection.
  bool client_mode() const { return options_.client >= 0; }
  std::string server_name() const { return options_.server_host + ":" + std::to_string(options_.server_port); }
  void start_server_connect(Clock::time_point now);
  void server_connect_failed(int err, Clock::time_point now);
  void server_connected(Clock::time_point now);
  void server_io(short revents);
  void flush_server();
  void close_server();
  void apply_impi();
  void local_hosts_published(std::vector<std::string> values);
  void finish_server();
  void reap();
  void flush_connection(ConnectionId id);
  void close_connection(ConnectionId id);
  void accept_connections();
  void event_loop();
  void drain_and_reap();
  void forward_stream(std::size_t index);
  bool forwarding_stdin() const { return stdin_open_ && rank0_stdin_; }

  struct Connection {
    UniqueFd fd;
    std::string out;
    bool closing = false;
  };
  struct Stream {
    UniqueFd fd;
    LineBuffer lines;
    int target;  // 1 or 2
  };
  struct Child {
    pid_t pid;
    int rank;
    bool remote_shell;
    bool reaped = false;
  };

  MpirunOptions options_;
  fs::path root_;
  std::vector<conf::HostEntry> hosts_;
  std::vector<RankPlan> plans_;
  std::vector<std::string> program_;
  std::string rsh_;
  std::vector<std::string> extra_env_names_;
  bool showrank_ = false;
  bool chdir_ = true;
  std::int64_t max_starting_ = 8;
  std::chrono::milliseconds startup_timeout_{60000};
  std::chrono::milliseconds startup_limit_{600000};
  // The start-up watch (JobControl::rank_running): CPU clock ticks of each
  // local rank's process group at the last look, and when to look next.
  std::map<int, unsigned long long> rank_cpu_ticks_;
  std::optional<Clock::time_point> next_cpu_sample_;
  void sample_rank_cpu(Clock::time_point now);
  std::int64_t job_timeout_ = 0;  // seconds, 0 = none
  std::chrono::milliseconds grace_{2000};
  std::string address_setting_;
  int port_setting_ = 0;
  std::uint64_t cookie_ = 0;
  int port_ = 0;

  std::unique_ptr<JobControl> job_;
  UniqueFd listener_;
  UniqueFd signal_read_;
  ConnectionId next_connection_ = 1;
  std::map<ConnectionId, Connection> connections_;
  std::vector<Stream> streams_;
  std::vector<Child> children_;
  std::size_t next_launch_ = 0;
  UniqueFd rank0_stdin_;
  bool stdin_open_ = false;
  std::string stdin_buffer_;
  int exit_status_ = 255;

  struct ServerLink {
    UniqueFd fd;
    bool connecting = false;  // a non-blocking connect() in progress
    bool done = false;        // closed for good (FINI sent, failure, job over)
    int failed_attempts = 0;
    std::optional<Clock::time_point> retry_at;
    Clock::time_point attempt_deadline{};
    std::string out;
  };
  std::unique_ptr<impi::ClientSession> impi_;
  impi::ClientSettings impi_settings_;
  sockaddr_in server_address_{};
  std::int64_t connect_retry_ = 10;
  std::chrono::milliseconds connect_sleep_{1000};
  ServerLink server_;

  rpim::VendorSpec vendor_;
  std::string vendor_hostfile_;  // the translated host file (removed at the end)
  bool vendor_all_local_ = true;  // every rank on this host
  int local_cores_ = 0;           // cores mpirun may use (sched_getaffinity; 0: unknown)
  std::string vendor_shm_dir_;    // Open MPI's shared-memory files (removed at the end)
  pid_t vendor_pid_ = -1;
  bool vendor_reaped_ = false;
  int vendor_status_ = 0;
  bool vendor_agents_seen_ = false;
  // The vendor's mpiexec ended; the ranks that have not reported are told
  // about it a moment later (an MPI_Abort being settled is reported first).
  std::optional<Clock::time_point> vendor_exit_report_at_;
  // Per rank: its agent's connection closed without a report (the vendor
  // killed the agent); told to JobControl at that time, as a lost contact.
  std::vector<bool> vendor_agent_was_connected_;
  std::vector<std::optional<Clock::time_point>> vendor_agent_lost_at_;
};

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

// Stops everything left below mpirun: SIGTERM, SIGKILL after `grace`.
// reap() collects what ends (mpirun's own children are reported by it).
template <class Reap>
void stop_descendants(std::chrono::milliseconds grace, Reap reap) {
  auto left = descendants();
  if (left.empty()) return;
  for (pid_t p : left) ::kill(p, SIGTERM);
  auto deadline = Clock::now() + grace;
  for (;;) {
    reap();
    left = descendants();
    if (left.empty() || Clock::now() >= deadline) break;
    ::poll(nullptr, 0, 20);
  }
  for (pid_t p : left) ::kill(p, SIGKILL);
  auto reap_deadline = Clock::now() + std::chrono::seconds(2);
  while (!descendants().empty() && Clock::now() < reap_deadline) {
    reap();
    ::poll(nullptr, 0, 10);
  }
  reap();
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

// mpirun -vendor NAME (or vendor.name): which vendor, and that its launcher
// and plug-in are there, checked before anything starts (one line, exit 2).
void Mpirun::read_vendor_settings() {
  try {
    rpim::VendorSettings v;
    v.name = settings::vendor_name.get();
    v.mpiexec = settings::vendor_mpiexec.get();
    v.plugin = settings::vendor_plugin.get();
    v.style = settings::vendor_style.get();
    v.mpiexec_args = settings::vendor_mpiexec_args.get();
    v.rank_env = settings::vendor_rank_env.get();
    std::string root = conf::mpiroot();
    vendor_ = rpim::resolve_vendor(v, root.empty() ? root_.string() : root);
  } catch (const conf::ConfigError& e) {
    usage_exit(std::string(e.what()) + "; correct the value (or unset it) and run again");
  } catch (const rpim::VendorError& e) {
    usage_exit(e.what());
  }
  if (!vendor_mode()) return;
  const std::string& command = vendor_.mpiexec.front();
  std::string found = resolve_program(command);
  if (::access(found.c_str(), X_OK) != 0 || fs::is_directory(found))
    usage_exit("the " + vendor_.name + " vendor's launcher '" + command +
               "' is not installed or not on PATH; install that MPI (Debian: openmpi-bin, mpich) or name its "
               "mpiexec in vendor.mpiexec");
  std::error_code ec;
  if (!fs::is_regular_file(vendor_.plugin, ec))
    usage_exit("the " + vendor_.name + " vendor plug-in " + vendor_.plugin +
               " does not exist; build gridmpi where that MPI's mpicc is installed (p2p/vendor/) or name the "
               "plug-in in vendor.plugin (GRIDMPI_VENDOR_PLUGIN)");
}

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

void Mpirun::plan_ranks() {
  int np = options_.np;
  if (np == 0) np = hosts_.empty() ? 1 : rpim::total_slots(hosts_);
  auto assignment = rpim::assign_ranks(hosts_, np);
  std::map<std::string, bool> local_cache;
  bool any_remote = false;
  for (int r = 0; r < np; ++r) {
    RankPlan p;
    p.rank = r;
    p.host = assignment[static_cast<std::size_t>(r)];
    auto it = local_cache.find(p.host);
    if (it == local_cache.end()) it = local_cache.emplace(p.host, rpim::is_local_host(p.host)).first;
    p.method = rpim::choose_method(rsh_, it->second);
    p.local = p.method.kind == rpim::Kind::fork;
    any_remote = any_remote || !p.local;
    plans_.push_back(std::move(p));
  }
  // Ranks forked locally share this host whatever their host file names
  // ("localhost", this host's name or address).
  auto host_key = [](const RankPlan& q) { return q.local ? std::string() : q.host; };
  std::map<std::string, int> per_host;
  int most = 0;
  for (const auto& p : plans_) most = std::max(most, ++per_host[host_key(p)]);
  for (auto& p : plans_) p.host_ranks = vendor_mode() ? most : per_host[host_key(p)];
  cpu_set_t cores;
  CPU_ZERO(&cores);
  if (sched_getaffinity(0, sizeof cores, &cores) == 0) local_cores_ = CPU_COUNT(&cores);
  // Which address each rank dials to reach mpirun.  It also becomes the
  // rank's default advertised address (GRIDMPI_LOCAL_ADDRESS), so on a job
  // that spans hosts it must not be the loopback.
  std::string toward_remote;
  if (any_remote) {
    for (const auto& p : plans_) {
      if (p.local) continue;
      if (auto a = net::source_address_toward(p.host)) {
        toward_remote = *a;
        break;
      }
    }
    if (toward_remote.empty()) toward_remote = net::first_interface_address().value_or("127.0.0.1");
  }
  for (auto& p : plans_) {
    if (!address_setting_.empty()) {
      p.phost = address_setting_;
    } else if (!any_remote) {
      p.phost = "127.0.0.1";
    } else if (p.local) {
      auto a = net::resolve_ipv4(p.host);
      p.phost = (a && net::is_local_address(*a) && a->rfind("127.", 0) != 0) ? *a : toward_remote;
    } else {
      p.phost = net::source_address_toward(p.host).value_or(toward_remote);
    }
  }
  if (!vendor_mode()) return;
  // The vendor's mpiexec starts every rank, wherever the host file says,
  // with ONE environment: one address for mpirun, chosen by the hosts
  // (not by _YAMPI_RSH, which the vendor does not use).
  std::string remote_host;
  for (const auto& p : plans_) {
    auto it = local_cache.find(p.host);
    if (it != local_cache.end() && !it->second) {
      remote_host = p.host;
      break;
    }
  }
  vendor_all_local_ = remote_host.empty();
  std::string phost = "127.0.0.1";
  if (!address_setting_.empty())
    phost = address_setting_;
  else if (!remote_host.empty())
    phost = net::source_address_toward(remote_host).value_or(net::first_interface_address().value_or("127.0.0.1"));
  for (auto& p : plans_) {
    p.method = rpim::Method{rpim::Kind::poe, vendor_.mpiexec};
    p.local = false;
    p.phost = phost;
  }
}

std::vector<std::string> Mpirun::rank_environment(const RankPlan& p, bool with_cookie) const {
  std::vector<std::string> env = {
      "_YAMPI_NPROCS=" + std::to_string(plans_.size()),
      "_YAMPI_PHOST=" + p.phost,
      "_YAMPI_PPORT=" + (options_.dryrun ? std::string("<port>") : std::to_string(port_)),
  };
  if (vendor_mode()) {
    // One environment for every rank: the rank is the vendor's
    // MPI_COMM_WORLD rank, which the runtime learns from the plug-in.
    env.push_back("GRIDMPI_VENDOR=" + vendor_.name);
    env.push_back("GRIDMPI_VENDOR_PLUGIN=" + vendor_.plugin);
  } else {
    env.push_back("_YAMPI_MYRANK=" + std::to_string(p.rank));
    env.push_back("_YAMPI_NODENAME=" + p.host);
  }
  env.push_back("_YAMPI_LOCAL_NPROCS=" + std::to_string(p.host_ranks));
  // The cores of this host that mpirun may use: a rank that a vendor's
  // launcher binds to one core must not take itself for oversubscribed.
  if (local_cores_ > 0 && (vendor_mode() ? vendor_all_local_ : p.local))
    env.push_back("_YAMPI_LOCAL_CORES=" + std::to_string(local_cores_));
  if (with_cookie) env.push_back("_YAMPI_PHASH=" + (options_.dryrun ? std::string("<cookie>") : std::to_string(cookie_)));
  if (options_.nounix) env.push_back("_YAMPI_DISABLE_UNIX=1");
  if (client_mode()) {
    // The processes choose the interface that reaches the server from it.
    env.push_back("IMPI_CLIENT_ID=" + std::to_string(options_.client));
    env.push_back("IMPI_SERVER=" + server_name());
  }
  return env;
}

std::vector<std::string> Mpirun::proxy_argv(const RankPlan& p) const {
  const char* mpiroot = std::getenv("MPIROOT");
  fs::path base = mpiroot && *mpiroot ? fs::path(mpiroot) : root_;
  std::vector<std::string> argv = {(base / "bin" / "gridmpi-proxy").string(), "--control",
                                   p.phost + ":" + (options_.dryrun ? std::string("<port>") : std::to_string(port_)),
                                   "--rank", std::to_string(p.rank)};
  if (chdir_) {
    argv.push_back("--cwd");
    argv.push_back(fs::current_path().string());
  }
  auto env = environment_for_remote(extra_env_names_);
  for (auto& e : rank_environment(p, false)) env.push_back(e);
  for (auto& e : env) {
    argv.push_back("--env");
    argv.push_back(e);
  }
  argv.push_back("--");
  argv.insert(argv.end(), program_.begin(), program_.end());
  return argv;
}

std::vector<std::string> Mpirun::launch_argv(const RankPlan& p) const {
  if (p.local) return program_;
  return rpim::remote_shell_argv(p.method, p.host, proxy_argv(p));
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

void Mpirun::launch(const RankPlan& p) {
  rpim::SpawnRequest request;
  request.argv = launch_argv(p);
  request.env = p.local ? rpim::environment_with(rank_environment(p, true)) : rpim::environment_with({});
  bool wants_stdin = !p.local || (p.rank == 0 && stdin_open_);
  request.stdin_mode = wants_stdin ? rpim::StdinMode::pipe : rpim::StdinMode::null;
  auto now = Clock::now();
  rpim::SpawnedProcess process;
  try {
    process = rpim::spawn(request);
  } catch (const rpim::SpawnError& e) {
    std::string fix = p.local ? "; check the program name, its path and that it is executable"
                              : "; install the remote shell or set _YAMPI_RSH";
    job_->launch_failed(p.rank, e.what() + fix, now);
    return;
  }
  job_->launched(p.rank, process.pid, now);
  children_.push_back(Child{process.pid, p.rank, !p.local});
  std::string prefix = showrank_ ? "[" + std::to_string(p.rank) + "] " : "";
  set_nonblocking(process.stdout_fd.get());
  set_nonblocking(process.stderr_fd.get());
  streams_.push_back(Stream{std::move(process.stdout_fd), LineBuffer(prefix), 1});
  streams_.push_back(Stream{std::move(process.stderr_fd), LineBuffer(prefix), 2});
  if (!p.local) {
    // The agent reads the job cookie as its first line of input, so that it
    // never shows on a command line.
    net::write_all(process.stdin_fd.get(), std::to_string(cookie_) + "\n");
  }
  if (p.rank == 0 && stdin_open_) {
    set_nonblocking(process.stdin_fd.get());
    rank0_stdin_ = std::move(process.stdin_fd);
  }
}

std::vector<std::string> Mpirun::vendor_job_argv(const std::string& hostfile) const {
  const char* mpiroot = std::getenv("MPIROOT");
  fs::path base = mpiroot && *mpiroot ? fs::path(mpiroot) : root_;
  rpim::VendorLaunch launch;
  launch.np = static_cast<int>(plans_.size());
  launch.hostfile = hostfile;
  launch.showrank = showrank_;
  launch.as_root = ::geteuid() == 0;
  // Open MPI refuses more processes than slots (without a host file: cores).
  long slots = hosts_.empty() ? ::sysconf(_SC_NPROCESSORS_ONLN) : rpim::total_slots(hosts_);
  launch.oversubscribe = launch.np > slots;
  // Remote hosts get exactly what a remote shell start would pass, by name.
  std::vector<std::string> names;
  auto add_name = [&](const std::string& entry) {
    std::string name = entry.substr(0, entry.find('='));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const auto& e : environment_for_remote(extra_env_names_)) add_name(e);
  for (const auto& e : rank_environment(plans_[0], true)) add_name(e);
  launch.env_names = std::move(names);

  launch.agent_argv = {(base / "bin" / "gridmpi-proxy").string(), "--vendor", "--rank-env", vendor_.rank_env};
  if (chdir_) {
    launch.agent_argv.push_back("--cwd");
    launch.agent_argv.push_back(fs::current_path().string());
  }
  launch.agent_argv.push_back("--");
  launch.agent_argv.insert(launch.agent_argv.end(), program_.begin(), program_.end());
  rpim::VendorSpec spec = vendor_;
  if (!vendor_shm_dir_.empty()) {
    // Open MPI leaves its shared-memory files in /dev/shm when a rank is
    // killed; in a directory of the job's own they go with it.
    spec.extra_args.insert(spec.extra_args.begin(), {"--mca", "btl_vader_backing_directory", vendor_shm_dir_});
  }
  return rpim::vendor_argv(spec, launch);
}

// The whole job: the vendor's mpiexec, once.
void Mpirun::launch_vendor() {
  auto now = Clock::now();
  if (!hosts_.empty()) {
    // A private file (mode 0600) in TMPDIR, removed when mpirun ends.
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gridmpi-hosts-XXXXXX";
    int fd = ::mkstemp(pattern.data());
    std::string text = rpim::vendor_hostfile_text(vendor_.style, hosts_);
    if (fd < 0 || !net::write_all(fd, text)) {
      if (fd >= 0) ::close(fd);
      job_->launch_failed(0, "cannot write the vendor's host file in " + pattern + ": " + std::strerror(errno) +
                                 "; set TMPDIR to a writable directory", now);
      return;
    }
    ::close(fd);
    vendor_hostfile_ = pattern;
  }
  // Debian's Open MPI 4 on one host: its shared-memory files in a private
  // directory (a site-defined or remote job keeps the vendor's default).
  if (vendor_.name == "openmpi" && vendor_all_local_) {
    std::string pattern = "/dev/shm/gridmpi-vendor-XXXXXX";
    if (::mkdtemp(pattern.data())) vendor_shm_dir_ = pattern;
  }
  // Orphans (the vendor's daemons, ranks whose agent died) come back to
  // mpirun, which stops whatever is left at the end.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  rpim::SpawnRequest request;
  request.argv = vendor_job_argv(vendor_hostfile_);
  request.env = rpim::environment_with(rank_environment(plans_[0], true));
  request.stdin_mode = stdin_open_ ? rpim::StdinMode::pipe : rpim::StdinMode::null;
  rpim::SpawnedProcess process;
  try {
    process = rpim::spawn(request);
  } catch (const rpim::SpawnError& e) {
    job_->launch_failed(0, std::string("the vendor's mpiexec: ") + e.what() + "; check vendor.mpiexec", now);
    return;
  }
  vendor_pid_ = process.pid;
  for (const auto& p : plans_) job_->launched(p.rank, 0, now);
  children_.push_back(Child{process.pid, -1, true});
  set_nonblocking(process.stdout_fd.get());
  set_nonblocking(process.stderr_fd.get());
  // The vendor tags lines itself (-showrank: --tag-output, -prepend-rank).
  streams_.push_back(Stream{std::move(process.stdout_fd), LineBuffer(""), 1});
  streams_.push_back(Stream{std::move(process.stderr_fd), LineBuffer(""), 2});
  if (stdin_open_) {
    // The vendor forwards its input to rank 0.
    set_nonblocking(process.stdin_fd.get());
    rank0_stdin_ = std::move(process.stdin_fd);
  }
}

void Mpirun::vendor_tick(Clock::time_point now) {
  if (!vendor_mode() || vendor_pid_ < 0) return;
  vendor_agent_was_connected_.resize(plans_.size(), false);
  vendor_agent_lost_at_.resize(plans_.size());
  for (const auto& p : plans_) {
    auto r = static_cast<std::size_t>(p.rank);
    bool connected = job_->agent_connected(p.rank);
    if (connected || job_->rank_gone(p.rank)) vendor_agents_seen_ = true;
    // An agent gone without its report (its last frame is read before its
    // end of file): the vendor killed it, usually stopping the job after
    // another rank's failure, which is reported first (an abort settles
    // within abort_settle, less than this delay).
    if (vendor_agent_was_connected_[r] && !connected && !job_->rank_gone(p.rank) && !vendor_agent_lost_at_[r])
      vendor_agent_lost_at_[r] = now + std::chrono::milliseconds(1000);
    vendor_agent_was_connected_[r] = connected;
    if (vendor_agent_lost_at_[r] && now >= *vendor_agent_lost_at_[r]) {
      vendor_agent_lost_at_[r].reset();
      if (!job_->rank_gone(p.rank)) job_->remote_shell_exited(p.rank, W_EXITCODE(0, SIGKILL), now);
    }
  }
  if (!vendor_exit_report_at_ || now < *vendor_exit_report_at_) return;
  vendor_exit_report_at_.reset();
  if (!vendor_agents_seen_ && !job_->failed()) {
    std::string status = WIFSIGNALED(vendor_status_) ? "was killed by " + describe_signal(WTERMSIG(vendor_status_))
                                                      : "exited with status " +
                                                            std::to_string(WEXITSTATUS(vendor_status_));
    job_->external_failure("mpirun: the " + vendor_.name + " vendor's mpiexec (" + vendor_.mpiexec.front() + ") " +
                               status + " before starting any rank (its messages are above); check that '" +
                               vendor_.mpiexec.front() + " -n 1 true' works",
                           now);
  }
  // Ranks whose agent never reported their end are lost with the launcher.
  for (const auto& p : plans_)
    if (!job_->rank_gone(p.rank)) job_->remote_shell_exited(p.rank, vendor_status_, now);
}

// SIGTERM to the vendor's mpiexec (its process group): it stops its ranks
// and daemons itself.  SIGKILL stops everything below mpirun.
void Mpirun::stop_vendor_launcher() {
  if (vendor_pid_ > 0 && !vendor_reaped_) ::kill(-vendor_pid_, SIGTERM);
}

void Mpirun::launch_more() {
  if (vendor_mode()) {
    if (next_launch_ == 0 && !job_->failed()) launch_vendor();
    next_launch_ = plans_.size();
    return;
  }
  while (next_launch_ < plans_.size() && !job_->failed()) {
    const RankPlan& p = plans_[next_launch_];
    if (!p.local && max_starting_ > 0) {
      std::int64_t starting = 0;
      for (const auto& c : children_)
        if (c.remote_shell && !c.reaped && !job_->agent_connected(c.rank) && !job_->rank_gone(c.rank)) ++starting;
      if (starting >= max_starting_) return;
    }
    ++next_launch_;
    launch(p);
  }
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

// ---- mpirun -client: the impi-server connection ------------------------------

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

}  // namespace
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
