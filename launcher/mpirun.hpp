// mpirun's pieces (launcher/mpirun.cpp and the files it lists): the
// Mpirun object and what its files share.  Internal to the mpirun program.
#pragma once
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
#include <sstream>

#include "conf/hostfile.hpp"
#include "conf/registry.hpp"
#include "impi/client.hpp"
#include "impi/job_map.hpp"
#include "impi/params.hpp"
#include "impi/relay.hpp"
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

[[noreturn]] void usage_exit(const std::string& line);
void print_err(const std::string& line);
fs::path installation_root();
// The program as an absolute path when it can be found here, so that ranks
// started elsewhere (remote shells with a minimal PATH) find it too.
std::string resolve_program(const std::string& program);
std::uint64_t make_cookie();
std::vector<std::string> split_names(const std::string& text);
// Environment that follows a rank to a remote host.  ssh gives a fresh
// login environment, so the library's own settings must travel explicitly.
std::vector<std::string> environment_for_remote(const std::vector<std::string>& extra_names);
void set_nonblocking(int fd);
// The write end of the self-pipe that on_signal writes the signal number to.
extern int self_pipe_write;
extern "C" void on_signal(int signo);
// Every process below mpirun (mpirun -vendor is a child subreaper, so the
// vendor's daemons and ranks come back to it when their parents die).
std::vector<pid_t> descendants();
// CPU clock ticks used by the processes of each process group in `groups`.
void group_cpu_ticks(std::map<pid_t, unsigned long long>& groups);

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
  // impi-relay (docs/multicluster.md "Private-address clusters"): mpirun
  // learns it from the relay's first line on the server connection (it was
  // given the relay's ADDR:PORT, or IMPI_RELAYADDR/IMPI_RELAYPORT), then has
  // the relay forward a public port to each rank's listener and tells the
  // ranks the relay (they reach other clusters through it).
  enum class RelayState { unknown, none, relayed };
  RelayState relay_state_ = RelayState::unknown;
  std::string relay_probe_;                        // the server connection's first bytes, until decided
  std::optional<impi::relay::Endpoint> relay_;     // the relay's private ADDR:PORT
  std::string relay_given_;                        // IMPI_RELAYADDR:IMPI_RELAYPORT when set
  std::optional<std::vector<std::string>> pending_hosts_;  // published before the decision
  std::vector<UniqueFd> relay_forwards_;           // one LISTEN per rank, open for the job
  void relay_bytes(const std::byte* data, std::size_t n, Clock::time_point now);
  bool forward_through_relay(std::vector<impi::LocalHost>& hosts);
  // IMPI_RELAY_RSH: impi-relay here ('#': `shell` empty) or through the
  // remote shell's words (e.g. "ssh front"); returns the ADDR:PORT it prints.
  impi::relay::Endpoint start_relay(const std::vector<std::string>& shell, const std::string& setting);
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

}  // namespace gridmpi::launcher
