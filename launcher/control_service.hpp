// mpirun's control service as a socket-free state machine.
//
// The I/O adapter in mpirun.cpp owns the sockets and the processes; it feeds
// this object events (a connection opened, bytes arrived, a process exited,
// a signal arrived, time passed) and carries out the actions it returns
// (send bytes, close a connection, signal the local ranks, print a line,
// finish with an exit status).  Tests drive it with scripted events
// (tests/unit/test_control_service.cpp).
//
// What it decides:
//  * who may talk: a connection must start with hello / proxy_hello carrying
//    the job cookie and a valid rank, else it is refused and logged;
//  * the key-value exchange with fences (put_fence -> values to everyone),
//    except one key that mpirun -client answers from outside (the IMPI
//    start-up: action::ExternalFence out, answer_external_fence() in);
//  * failure: a rank killed by a signal, MPI_Abort, a rank of an MPI job
//    exiting without MPI_Finalize, a rank that cannot be started, a rank
//    that does not connect in time (the start-up timeout counts while the
//    rank is idle: a rank whose processes use CPU time, reported by the
//    adapter through rank_running(), is starting, not stuck; the start-up
//    limit bounds it all the same).  The first failure
//    prints ONE line and stops the job: the signal (SIGTERM) to every rank,
//    SIGKILL after the grace period;
//  * the exit status (see exit_status rules in launcher/README.md).
//
// A job is an "MPI job" as soon as one rank has connected; until then ranks
// are plain programs (mpirun -np 2 hostname) and neither the start-up timeout
// nor the MPI_Finalize rule applies.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "boot/control_protocol.hpp"

namespace gridmpi::launcher {

// The control protocol is the start-up layer's (boot/control_protocol.hpp):
// every MPI process speaks it through boot::ControlClient.
using boot::abort_key_error;
using boot::encode;
using boot::FrameDecoder;
using boot::Message;
using boot::message_type_name;
using boot::MessageType;
using boot::ProtocolError;

using Clock = std::chrono::steady_clock;
using ConnectionId = std::uint64_t;

struct JobSettings {
  std::uint64_t cookie = 0;
  std::vector<std::string> hosts;  // host of each rank (index = rank), as in the host file
  std::vector<bool> remote;        // true: started through a remote shell and gridmpi-proxy
  // A rank of an MPI job must connect within startup_timeout of its start or
  // of the last time it was seen using CPU (rank_running), whichever is
  // later, and within startup_limit of its start in any case.
  std::chrono::milliseconds startup_timeout{60000};  // 0 = no limit
  std::chrono::milliseconds startup_limit{600000};   // 0 = no limit
  std::chrono::milliseconds terminate_grace{2000};   // SIGTERM -> SIGKILL
  std::chrono::milliseconds kill_wait{3000};         // after SIGKILL, before giving up on a rank
  // How long an MPI_Abort waits to be reported: a rank that died a moment
  // earlier is often the cause (its peers abort on the lost connection
  // before mpirun has reaped it), and it is the one worth naming.
  std::chrono::milliseconds abort_settle{500};
  std::string remote_shell = "ssh";                  // for messages only
  // A fence key answered from outside (mpirun -client: impi::key_local_host).
  // When every rank has put it, the values go out as action::ExternalFence
  // instead of back to the ranks; the adapter answers with
  // answer_external_fence().  Empty: every fence is answered here.
  std::string external_fence_key;
};

namespace action {
struct Send {
  ConnectionId connection;
  std::vector<std::byte> bytes;
};
struct Close {
  ConnectionId connection;
};
// One line for mpirun's stderr (no trailing newline).
struct Print {
  std::string line;
};
// Send `signo` to every rank process mpirun started itself (local ranks, by
// process group) and to the remote shell of every remote rank whose agent
// has not connected yet.  Remote ranks with an agent are signalled by the
// state machine itself through proxy_signal frames.
struct SignalLocal {
  int signo;
};
struct Finish {
  int exit_status;
};
// Every rank has put the external fence key (JobSettings::external_fence_key):
// their values, index = rank.
struct ExternalFence {
  std::string key;
  std::vector<std::string> values;
};
}  // namespace action

using Action = std::variant<action::Send, action::Close, action::Print, action::SignalLocal, action::Finish,
                            action::ExternalFence>;

class JobControl {
 public:
  explicit JobControl(JobSettings settings);

  int size() const noexcept { return static_cast<int>(ranks_.size()); }

  // The adapter started rank `rank` (pid of the rank itself for a local
  // rank, of the remote shell for a remote one).
  void launched(int rank, int pid, Clock::time_point now);
  // The adapter saw the processes of local rank `rank` use CPU time since
  // its last look (it looks about once a second at the ranks for which
  // wants_cpu_samples() is true): the rank is starting, so the start-up
  // timeout counts from `now` again (up to the start-up limit).
  void rank_running(int rank, Clock::time_point now);
  // Whether the adapter should watch the CPU time of rank `rank`: a local
  // rank, started and not yet connected, within the start-up limit (its CPU
  // time counts from 0 at its start).
  bool wants_cpu_samples(int rank, Clock::time_point now) const;
  // The adapter could not start rank `rank` (fork/exec error, text says why).
  void launch_failed(int rank, const std::string& reason, Clock::time_point now);

  void connection_opened(ConnectionId connection, const std::string& peer);
  void received(ConnectionId connection, std::span<const std::byte> bytes, Clock::time_point now);
  void connection_closed(ConnectionId connection, Clock::time_point now);

  // A local rank's process ended (wait status as from waitpid).
  void process_exited(int rank, int wait_status, Clock::time_point now);
  // The remote shell (ssh, rsh) of a remote rank ended.
  void remote_shell_exited(int rank, int wait_status, Clock::time_point now);
  // mpirun received SIGINT, SIGTERM or SIGHUP.
  void interrupted(int signo, Clock::time_point now);
  // The job ran longer than its time limit (mpirun.timeout): stop every rank.
  void time_limit_reached(std::int64_t seconds, Clock::time_point now);
  // Answers the pending external fence: every rank receives `values` (for
  // mpirun -client, ONE value: the encoded impi::CollatedLabels).  Ignored
  // when no such fence is pending (the job is stopping, or a stale answer).
  void answer_external_fence(const std::string& key, std::vector<std::string> values);
  // Something outside the ranks failed (the impi-server connection): ONE
  // line (the "mpirun: " prefix is added when missing), the job is stopped,
  // exit status 255.
  void external_failure(const std::string& line, Clock::time_point now);
  // mpirun -client: local rank 0 is world rank `offset`; messages name
  // world ranks from now on.
  void set_rank_offset(int offset);
  void tick(Clock::time_point now);

  // The next time tick() has something to do, if any.
  std::optional<Clock::time_point> next_deadline() const;
  std::vector<Action> take_actions();

  bool agent_connected(int rank) const;
  bool rank_gone(int rank) const;
  bool finished() const noexcept { return finished_; }
  bool failed() const noexcept { return stopping_; }
  // Every rank connected, called MPI_Finalize and ended normally, and the
  // job was not stopped: a completed MPI job (mpirun -client then sends FINI).
  bool completed_mpi_job() const;

 private:
  struct Rank {
    bool launched = false;
    Clock::time_point launched_at{};
    Clock::time_point running_at{};  // the last rank_running (launched_at before)
    int pid = 0;
    std::optional<ConnectionId> connection;  // the rank's own control connection
    std::optional<ConnectionId> agent;       // its gridmpi-proxy (remote ranks)
    bool agent_seen = false;
    bool connected = false;  // said hello: this is an MPI process
    bool finalized = false;
    bool aborted = false;  // sent an abort: its end is part of that abort
    bool gone = false;
    bool exited_normally = false;  // exit() rather than a signal
    int exit_code = 0;
    bool exited_unconnected = false;  // exited before ever connecting
    // The remote shell ended while the agent's last report may still be in
    // flight on the other connection: wait a moment for it.
    std::optional<int> shell_status;
    Clock::time_point shell_deadline{};
  };
  struct Connection {
    std::string peer;
    FrameDecoder decoder;
    enum class Role { unknown, rank, agent } role = Role::unknown;
    int rank = -1;
  };
  enum class Stop { none, term_sent, kill_sent };
  struct PendingAbort {
    int rank;
    std::string line;
    int exit_status;
    Clock::time_point deadline;
  };

  void handle(ConnectionId id, Connection& c, const Message& m, Clock::time_point now);
  void handle_hello(ConnectionId id, Connection& c, const Message& m, Clock::time_point now);
  void refuse(ConnectionId id, const std::string& why_for_log, const std::string& why_for_peer);
  void rank_ended(int rank, bool exited, int code_or_signal, Clock::time_point now);
  void fail(const std::string& line, int exit_status, Clock::time_point now);
  void signal_all(int signo);
  void send(ConnectionId id, const Message& m);
  void check_finished();
  void lost_contact(int rank, Clock::time_point now);
  void agent_never_started(int rank, Clock::time_point now);
  std::string where(int rank) const;  // "(host, pid N)"
  // "rank N": the world rank (mpirun -client: once the IMPI start-up gave
  // this cluster's first rank; "local rank N" before).
  std::string name(int rank) const;
  bool mpi_job() const;
  // When rank i's start-up runs out (the idle timeout or the limit); nullopt
  // when no start-up deadline applies to it now.
  std::optional<Clock::time_point> startup_deadline(std::size_t i, bool mpi) const;

  JobSettings settings_;
  std::vector<Rank> ranks_;
  std::map<ConnectionId, Connection> connections_;
  std::map<std::string, std::vector<std::optional<std::string>>> fences_;
  bool external_fence_pending_ = false;
  std::vector<Action> actions_;
  Stop stop_ = Stop::none;
  bool stopping_ = false;
  bool finished_ = false;
  int failure_status_ = 255;
  Clock::time_point stop_deadline_{};
  std::optional<PendingAbort> pending_abort_;
  std::optional<int> rank_offset_;  // world rank of local rank 0 (set_rank_offset)
};

// "killed by signal 11 (Segmentation fault)" and friends, for messages.
std::string describe_signal(int signo);

}  // namespace gridmpi::launcher
