// mpirun's control service state machine, driven by scripted events (no
// sockets, no processes): exchange with fences, refusal of strangers, every
// failure cause and its one-line message, stopping and exit status.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <csignal>

#include "launcher/control_service.hpp"

using namespace gridmpi::launcher;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t cookie = 0x1234567890abcdefull;

int exited(int code) { return code << 8; }
int killed(int signo) { return signo; }

struct Harness {
  explicit Harness(int n, std::vector<bool> remote = {}, std::string external_fence = "") {
    JobSettings s;
    s.external_fence_key = external_fence;
    s.cookie = cookie;
    for (int i = 0; i < n; ++i) s.hosts.push_back("node" + std::to_string(i));
    s.remote = remote;
    s.startup_timeout = 10s;
    s.terminate_grace = 2s;
    s.kill_wait = 3s;
    job = std::make_unique<JobControl>(s);
  }

  void launch_all() {
    for (int r = 0; r < job->size(); ++r) job->launched(r, 100 + r, now);
  }
  void open(ConnectionId c) { job->connection_opened(c, "10.0.0.9:" + std::to_string(40000 + c)); }
  void send(ConnectionId c, const Message& m) {
    job->received(c, encode(m), now);
    collect();
  }
  void hello(ConnectionId c, int rank, std::uint64_t with_cookie = cookie) {
    open(c);
    Message m;
    m.type = MessageType::hello;
    m.cookie = with_cookie;
    m.rank = rank;
    m.pid = 100 + rank;
    m.host = "node" + std::to_string(rank);
    send(c, m);
  }
  void put(ConnectionId c, const std::string& key, const std::string& value) {
    Message m;
    m.type = MessageType::put_fence;
    m.key = key;
    m.value = value;
    send(c, m);
  }
  void simple(ConnectionId c, MessageType type, int code = 0) {
    Message m;
    m.type = type;
    m.code = code;
    send(c, m);
  }
  void collect() {
    for (auto& a : job->take_actions()) {
      if (auto* s = std::get_if<action::Send>(&a)) {
        FrameDecoder d;
        d.feed(s->bytes);
        while (auto m = d.next()) sent.emplace_back(s->connection, *m);
      } else if (auto* c = std::get_if<action::Close>(&a)) {
        closed.push_back(c->connection);
      } else if (auto* p = std::get_if<action::Print>(&a)) {
        printed.push_back(p->line);
      } else if (auto* k = std::get_if<action::SignalLocal>(&a)) {
        signals.push_back(k->signo);
      } else if (auto* f = std::get_if<action::Finish>(&a)) {
        finished.push_back(f->exit_status);
      } else if (auto* e = std::get_if<action::ExternalFence>(&a)) {
        external.push_back(*e);
      }
    }
  }
  void exit_rank(int rank, int status) {
    job->process_exited(rank, status, now);
    collect();
  }
  void advance(std::chrono::milliseconds d) {
    now += d;
    job->tick(now);
    collect();
  }
  std::vector<Message> sent_to(ConnectionId c, MessageType type) const {
    std::vector<Message> out;
    for (const auto& [id, m] : sent)
      if (id == c && m.type == type) out.push_back(m);
    return out;
  }

  std::unique_ptr<JobControl> job;
  Clock::time_point now = Clock::time_point{} + 1000s;
  std::vector<std::pair<ConnectionId, Message>> sent;
  std::vector<ConnectionId> closed;
  std::vector<std::string> printed;
  std::vector<int> signals;
  std::vector<int> finished;
  std::vector<action::ExternalFence> external;
};

}  // namespace

TEST_CASE("a normal MPI job: hello, exchange, finalize, exit", "[control]") {
  Harness h(2);
  h.launch_all();
  h.hello(1, 0);
  h.hello(2, 1);
  REQUIRE(h.sent_to(1, MessageType::welcome).size() == 1);
  CHECK(h.sent_to(1, MessageType::welcome)[0].size == 2);

  h.put(2, "endpoint", "tcp:b");
  CHECK(h.sent_to(2, MessageType::values).empty());  // the fence waits for rank 0
  h.put(1, "endpoint", "tcp:a");
  for (ConnectionId c : {1, 2}) {
    auto v = h.sent_to(c, MessageType::values);
    REQUIRE(v.size() == 1);
    CHECK(v[0].key == "endpoint");
    CHECK(v[0].values == std::vector<std::string>{"tcp:a", "tcp:b"});
  }
  // The same key can be used again for a new round.
  h.put(1, "endpoint", "x");
  h.put(2, "endpoint", "y");
  CHECK(h.sent_to(1, MessageType::values).size() == 2);

  h.simple(1, MessageType::finalize);
  h.simple(2, MessageType::finalize);
  CHECK(h.sent_to(1, MessageType::finalize_ack).size() == 1);
  h.exit_rank(1, exited(3));
  CHECK(h.finished.empty());
  h.exit_rank(0, exited(0));
  CHECK(h.printed.empty());
  CHECK(h.signals.empty());
  REQUIRE(h.finished == std::vector<int>{0});  // the lowest rank's status
  CHECK_FALSE(h.job->failed());
}

TEST_CASE("exit status is the lowest rank's", "[control]") {
  Harness h(3);
  h.launch_all();
  h.exit_rank(2, exited(0));
  h.exit_rank(0, exited(4));
  h.exit_rank(1, exited(1));
  CHECK(h.finished == std::vector<int>{4});
}

TEST_CASE("plain programs (never connecting) have no MPI rules", "[control]") {
  Harness h(2);
  h.launch_all();
  CHECK_FALSE(h.job->next_deadline());  // no start-up timeout for non-MPI programs
  h.advance(3600s);
  h.exit_rank(0, exited(0));
  h.exit_rank(1, exited(2));
  CHECK(h.printed.empty());
  CHECK(h.finished == std::vector<int>{0});
}

TEST_CASE("a wrong cookie is refused and logged, the job goes on", "[control]") {
  Harness h(1);
  h.launch_all();
  h.hello(5, 0, cookie + 1);
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::Contains("refused control connection from 10.0.0.9:40005") &&
                               Catch::Contains("wrong job cookie"));
  CHECK(h.sent_to(5, MessageType::refuse).size() == 1);
  CHECK(h.closed == std::vector<ConnectionId>{5});
  CHECK_FALSE(h.job->failed());
  // The real rank 0 still gets in.
  h.hello(6, 0);
  CHECK(h.sent_to(6, MessageType::welcome).size() == 1);
}

TEST_CASE("out-of-range, duplicate and early messages are refused", "[control]") {
  Harness h(2);
  h.launch_all();
  h.hello(1, 2);
  CHECK_THAT(h.printed.back(), Catch::Contains("rank 2 out of range"));
  h.hello(2, 0);
  h.hello(3, 0);
  CHECK_THAT(h.printed.back(), Catch::Contains("already has a connection"));
  h.open(4);
  h.simple(4, MessageType::finalize);
  CHECK_THAT(h.printed.back(), Catch::Contains("before hello"));
  CHECK_FALSE(h.job->failed());
}

TEST_CASE("a rank killed by a signal stops the job: SIGTERM, then SIGKILL", "[control]") {
  Harness h(4);
  h.launch_all();
  for (int r = 0; r < 4; ++r) h.hello(10 + r, r);
  h.exit_rank(3, killed(SIGSEGV));
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] == "mpirun: rank 3 (node3, pid 103) killed by signal 11 (Segmentation fault)");
  CHECK(h.signals == std::vector<int>{SIGTERM});
  h.advance(1s);
  CHECK(h.signals.size() == 1);
  h.advance(1s);
  CHECK(h.signals == std::vector<int>{SIGTERM, SIGKILL});
  for (int r = 0; r < 3; ++r) h.exit_rank(r, killed(r == 0 ? SIGKILL : SIGTERM));
  CHECK(h.printed.size() == 1);  // one line only
  CHECK(h.finished == std::vector<int>{255});
}

TEST_CASE("MPI_Abort: acknowledged, one line, exit status is the code", "[control]") {
  Harness h(2);
  h.launch_all();
  h.hello(1, 0);
  h.hello(2, 1);
  Message m;
  m.type = MessageType::abort;
  m.code = 7;
  m.text = "giving up";
  h.send(2, m);
  CHECK(h.sent_to(2, MessageType::abort_ack).size() == 1);
  CHECK(h.printed.empty());  // reported once it settled (a rank dying just before would be the cause)
  h.advance(499ms);
  CHECK(h.printed.empty());
  h.advance(1ms);
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::StartsWith("mpirun: rank 1 called MPI_Abort with code 7 (node1, pid 101)") &&
                               Catch::EndsWith(": giving up"));
  CHECK(h.signals == std::vector<int>{SIGTERM});
  h.exit_rank(1, exited(7));
  h.exit_rank(0, killed(SIGTERM));
  CHECK(h.printed.size() == 1);
  CHECK(h.finished == std::vector<int>{7});
}

TEST_CASE("an abort caused by a rank's death names the dead rank", "[control]") {
  Harness h(4);
  h.launch_all();
  for (int r = 0; r < 4; ++r) h.hello(r + 1, r);
  // Rank 1 sees its connection to rank 3 drop and aborts before mpirun reaps rank 3.
  h.simple(2, MessageType::abort, 16);
  h.advance(100ms);
  h.exit_rank(1, exited(16));  // the aborting rank's own end is part of its abort
  h.simple(3, MessageType::abort, 16);  // an echo from rank 2, which then exits
  h.exit_rank(2, exited(16));
  CHECK(h.printed.empty());
  h.exit_rank(3, killed(SIGSEGV));
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] == "mpirun: rank 3 (node3, pid 103) killed by signal 11 (Segmentation fault)");
  h.advance(1s);
  h.exit_rank(0, killed(SIGTERM));
  CHECK(h.printed.size() == 1);
  CHECK(h.finished == std::vector<int>{255});
}

TEST_CASE("a fatal error: 'rank N failed', one line, later errors are its echoes", "[control]") {
  Harness h(3);
  h.launch_all();
  for (int r = 0; r < 3; ++r) h.hello(r + 1, r);
  Message m;
  m.type = MessageType::abort;
  m.code = 16;
  m.key = abort_key_error;
  m.text = "MPI_Barrier: tcp: rank 2 lost the connection to rank 0 (MPI_ERR_OTHER)";
  h.send(3, m);
  m.text = "MPI_Barrier: tcp: rank 1 lost the connection to rank 2 (MPI_ERR_OTHER)";
  h.send(2, m);
  h.advance(1s);
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] ==
        "mpirun: rank 2 failed (node2, pid 102): MPI_Barrier: tcp: rank 2 lost the connection to rank 0 "
        "(MPI_ERR_OTHER)");
  h.exit_rank(2, exited(16));
  h.exit_rank(1, exited(16));
  h.exit_rank(0, killed(SIGTERM));
  CHECK(h.printed.size() == 1);
  CHECK(h.finished == std::vector<int>{16});
}

TEST_CASE("mpirun -client names world ranks once the IMPI start-up gave its first rank", "[control]") {
  Harness h(2, {}, "impi-host");
  h.launch_all();
  h.hello(1, 0);
  h.hello(2, 1);
  h.job->set_rank_offset(4);
  h.simple(2, MessageType::abort, 3);
  h.advance(1s);
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::StartsWith("mpirun: rank 5 called MPI_Abort with code 3 (node1, pid 101)"));

  Harness early(2, {}, "impi-host");  // before the start-up: local numbers, said so
  early.launch_all();
  early.hello(1, 0);
  early.exit_rank(1, killed(SIGKILL));
  REQUIRE(early.printed.size() == 1);
  CHECK_THAT(early.printed[0], Catch::StartsWith("mpirun: local rank 1 (node1, pid 101) killed by signal 9"));
}

TEST_CASE("an abort by the last rank standing is still reported", "[control]") {
  Harness h(1);
  h.launch_all();
  h.hello(1, 0);
  h.simple(1, MessageType::abort, 3);
  h.exit_rank(0, exited(3));
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::StartsWith("mpirun: rank 0 called MPI_Abort with code 3"));
  CHECK(h.finished == std::vector<int>{3});
}

TEST_CASE("exit without MPI_Finalize is a failure", "[control]") {
  Harness h(3);
  h.launch_all();
  for (int r = 0; r < 3; ++r) h.hello(r + 1, r);
  h.simple(1, MessageType::finalize);
  h.exit_rank(0, exited(0));
  CHECK(h.printed.empty());
  h.exit_rank(2, exited(0));
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] == "mpirun: rank 2 exited with status 0 without calling MPI_Finalize (node2, pid 102)");
  h.exit_rank(1, killed(SIGTERM));
  CHECK(h.finished == std::vector<int>{255});
}

TEST_CASE("a rank that dies before MPI_Init fails the job once the others connect", "[control]") {
  Harness h(2);
  h.launch_all();
  h.exit_rank(1, exited(1));
  CHECK(h.printed.empty());  // could still be a plain program
  h.hello(1, 0);
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::Contains("rank 1 exited with status 1 without calling MPI_Finalize"));
  h.exit_rank(0, killed(SIGTERM));
  CHECK(h.finished == std::vector<int>{255});
}

TEST_CASE("start-up timeout names the rank that did not connect", "[control]") {
  Harness h(3);
  h.launch_all();
  h.hello(1, 0);
  h.hello(3, 2);
  auto deadline = h.job->next_deadline();
  REQUIRE(deadline);
  CHECK(*deadline == h.now + 10s);
  h.advance(9s);
  CHECK(h.printed.empty());
  h.advance(1s);
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::StartsWith("mpirun: rank 1 (node1, pid 101) did not connect to mpirun within 10 s"));
  CHECK(h.signals == std::vector<int>{SIGTERM});
}

TEST_CASE("start-up: a rank that keeps using CPU gets more time, up to the start-up limit", "[control]") {
  Harness h(2);  // timeout 10 s, limit 600 s (the default)
  h.launch_all();
  CHECK(h.job->wants_cpu_samples(1, h.now));  // watched before the job is known to be MPI
  h.hello(1, 0);
  CHECK_FALSE(h.job->wants_cpu_samples(0, h.now));  // connected
  // Busy (an import on a loaded machine): every report moves the timeout on.
  for (int i = 0; i < 30; ++i) {
    h.advance(9s);
    h.job->rank_running(1, h.now);
    CHECK(*h.job->next_deadline() == h.now + 10s);
  }
  CHECK(h.printed.empty());
  // Then idle for 10 s: the timeout, naming the idleness.
  h.advance(10s);
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] == "mpirun: rank 1 (node1, pid 101) did not connect to mpirun within 10 s of the last time it "
                        "used CPU time (other ranks are in MPI_Init); it is stuck before MPI_Init or cannot reach "
                        "mpirun; raise _YAMPI_MPIRUN_STARTUP_TIMEOUT if it is just slow");
  CHECK(h.finished.empty());
  CHECK(h.signals == std::vector<int>{SIGTERM});
}

TEST_CASE("start-up: the limit stops a rank that runs but never connects", "[control]") {
  Harness h(2);
  h.launch_all();
  h.hello(1, 0);
  for (int i = 0; i < 66; ++i) {
    h.job->rank_running(1, h.now);
    if (i < 65) CHECK(h.printed.empty());
    h.advance(9s + 100ms);
  }
  // 600 s after its start (66 * 9.1 s = 600.6 s).
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::StartsWith("mpirun: rank 1 (node1, pid 101) did not connect to mpirun within 600 "
                                             "s of its start although it was running"));
  CHECK_THAT(h.printed[0], Catch::Contains("mpirun.startup_limit"));
}

TEST_CASE("start-up: an idle rank fails at the timeout, reports after a stop change nothing", "[control]") {
  Harness h(2);
  h.launch_all();
  h.hello(1, 0);
  h.advance(10s);
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::Contains("within 10 s of its start, using no CPU time"));
  CHECK_FALSE(h.job->wants_cpu_samples(1, h.now));  // stopping
}

TEST_CASE("SIGINT is forwarded, then SIGKILL; exit 128+signal", "[control]") {
  Harness h(2);
  h.launch_all();
  h.job->interrupted(SIGINT, h.now);
  h.collect();
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::Contains("received signal 2 (Interrupt)"));
  CHECK(h.signals == std::vector<int>{SIGINT});
  h.advance(2s);
  CHECK(h.signals == std::vector<int>{SIGINT, SIGKILL});
  h.exit_rank(0, killed(SIGINT));
  h.exit_rank(1, killed(SIGKILL));
  CHECK(h.finished == std::vector<int>{130});
}

TEST_CASE("ranks that never report are given up after the kill wait", "[control]") {
  Harness h(2);
  h.launch_all();
  h.exit_rank(0, killed(SIGKILL));
  h.advance(2s);  // SIGKILL sent
  h.advance(3s);  // nothing came back from rank 1
  CHECK_THAT(h.printed.back(), Catch::Contains("rank 1 (node1, pid 101) did not report its end"));
  CHECK(h.finished == std::vector<int>{255});
}

TEST_CASE("remote ranks: agent reports pid and end; signals go through the agent", "[control]") {
  Harness h(2, {false, true});
  h.launch_all();
  h.open(50);
  Message hello;
  hello.type = MessageType::proxy_hello;
  hello.cookie = cookie;
  hello.rank = 1;
  hello.pid = 900;
  h.send(50, hello);
  CHECK(h.job->agent_connected(1));
  Message started;
  started.type = MessageType::proxy_started;
  started.pid = 901;
  h.send(50, started);
  h.hello(1, 0);
  h.hello(2, 1);
  h.simple(50, MessageType::proxy_exit, -SIGKILL);
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] == "mpirun: rank 1 (node1, pid 901) killed by signal 9 (Killed)");
  // Rank 1 is gone: no signal for its agent; rank 0 is local.
  CHECK(h.sent_to(50, MessageType::proxy_signal).empty());
  CHECK(h.signals == std::vector<int>{SIGTERM});
  h.exit_rank(0, killed(SIGTERM));
  CHECK(h.finished == std::vector<int>{255});
}

TEST_CASE("a stop reaches remote ranks as proxy_signal frames", "[control]") {
  Harness h(2, {true, true});
  h.launch_all();
  for (int r = 0; r < 2; ++r) {
    h.open(60 + r);
    Message hello;
    hello.type = MessageType::proxy_hello;
    hello.cookie = cookie;
    hello.rank = r;
    h.send(60 + r, hello);
  }
  h.simple(60, MessageType::proxy_exit, -SIGSEGV);
  auto to_other = h.sent_to(61, MessageType::proxy_signal);
  REQUIRE(to_other.size() == 1);
  CHECK(to_other[0].code == SIGTERM);
  h.advance(2s);
  to_other = h.sent_to(61, MessageType::proxy_signal);
  REQUIRE(to_other.size() == 2);
  CHECK(to_other[1].code == SIGKILL);
  h.simple(61, MessageType::proxy_exit, -SIGKILL);
  CHECK(h.finished == std::vector<int>{255});
}

TEST_CASE("a remote shell that fails before the agent starts names the host and the fix", "[control]") {
  Harness h(2, {false, true});
  h.launch_all();
  h.job->remote_shell_exited(1, exited(255), h.now);
  h.collect();
  CHECK(h.printed.empty());  // the agent's hello may still be on its way
  h.advance(2s);
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::StartsWith("mpirun: cannot start rank 1 on host node1: the remote shell (ssh) "
                                             "exited with status 255") &&
                               Catch::Contains("'ssh node1 true'"));
  h.exit_rank(0, killed(SIGTERM));
  CHECK(h.finished == std::vector<int>{255});
}

TEST_CASE("the agent's report may arrive after its remote shell ended", "[control]") {
  Harness h(1, {true});
  h.launch_all();
  h.open(70);
  Message hello;
  hello.type = MessageType::proxy_hello;
  hello.cookie = cookie;
  hello.rank = 0;
  h.send(70, hello);
  h.job->remote_shell_exited(0, exited(0), h.now);
  h.collect();
  CHECK(h.printed.empty());
  h.simple(70, MessageType::proxy_exit, 0);
  CHECK(h.printed.empty());
  CHECK(h.finished == std::vector<int>{0});
}

TEST_CASE("an agent whose hello is read only after its remote shell was reaped is not a failure", "[control]") {
  // A remote rank running 'true' ends at once: the shell can be reaped before
  // mpirun reads the agent's connection.
  Harness h(1, {true});
  h.launch_all();
  h.job->remote_shell_exited(0, exited(0), h.now);
  h.collect();
  CHECK(h.printed.empty());
  h.open(70);
  Message hello;
  hello.type = MessageType::proxy_hello;
  hello.cookie = cookie;
  hello.rank = 0;
  h.send(70, hello);
  h.simple(70, MessageType::proxy_exit, 0);
  h.advance(2s);
  CHECK(h.printed.empty());
  CHECK(h.finished == std::vector<int>{0});
}

TEST_CASE("an agent that vanishes without a report is lost contact", "[control]") {
  Harness h(1, {true});
  h.launch_all();
  h.open(70);
  Message hello;
  hello.type = MessageType::proxy_hello;
  hello.cookie = cookie;
  hello.rank = 0;
  h.send(70, hello);
  h.job->remote_shell_exited(0, exited(255), h.now);
  h.advance(2s);
  REQUIRE(h.printed.size() == 1);
  CHECK_THAT(h.printed[0], Catch::StartsWith("mpirun: lost contact with rank 0"));
  CHECK(h.finished == std::vector<int>{255});
}

TEST_CASE("a rank that cannot be started stops the job; unstarted ranks do not hold it", "[control]") {
  Harness h(3);
  h.job->launched(0, 100, h.now);
  h.job->launch_failed(1, "cannot execute './nope': No such file or directory", h.now);
  h.collect();
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] ==
        "mpirun: cannot start rank 1 on host node1: cannot execute './nope': No such file or directory");
  h.exit_rank(0, killed(SIGTERM));
  CHECK(h.finished == std::vector<int>{255});  // rank 2 was never started
}

TEST_CASE("a malformed frame closes that connection only", "[control]") {
  Harness h(1);
  h.launch_all();
  h.open(3);
  std::vector<std::byte> junk = {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{1}, std::byte{0xee}};
  h.job->received(3, junk, h.now);
  h.collect();
  CHECK(h.closed == std::vector<ConnectionId>{3});
  CHECK_THAT(h.printed.back(), Catch::Contains("closing control connection from 10.0.0.9:40003"));
  CHECK_FALSE(h.job->failed());
}

// --- mpirun -client: the fence of the IMPI host records is answered from outside ---

TEST_CASE("the external fence goes out as one action and is answered with one value", "[control][impi]") {
  Harness h(2, {}, "impi-host");
  h.launch_all();
  h.hello(1, 0);
  h.hello(2, 1);
  // Other keys are still answered here.
  h.put(1, "endpoint", "a");
  h.put(2, "endpoint", "b");
  CHECK(h.sent_to(1, MessageType::values).size() == 1);
  h.put(2, "impi-host", "host1");
  CHECK(h.external.empty());
  h.put(1, "impi-host", "host0");
  REQUIRE(h.external.size() == 1);
  CHECK(h.external[0].key == "impi-host");
  CHECK(h.external[0].values == std::vector<std::string>{"host0", "host1"});
  CHECK(h.sent_to(1, MessageType::values).size() == 1);  // nothing sent to the ranks yet
  h.job->answer_external_fence("impi-host", {"labels"});
  h.collect();
  for (ConnectionId c : {1, 2}) {
    auto v = h.sent_to(c, MessageType::values);
    REQUIRE(v.size() == 2);
    CHECK(v[1].key == "impi-host");
    CHECK(v[1].values == std::vector<std::string>{"labels"});
  }
  // A second answer without a new fence is ignored.
  h.job->answer_external_fence("impi-host", {"again"});
  h.collect();
  CHECK(h.sent_to(1, MessageType::values).size() == 2);
  h.simple(1, MessageType::finalize);
  h.simple(2, MessageType::finalize);
  CHECK_FALSE(h.job->completed_mpi_job());
  h.exit_rank(0, exited(0));
  h.exit_rank(1, exited(0));
  CHECK(h.finished == std::vector<int>{0});
  CHECK(h.job->completed_mpi_job());
}

TEST_CASE("without the setting, the impi-host key is an ordinary fence", "[control][impi]") {
  Harness h(1);
  h.launch_all();
  h.hello(1, 0);
  h.put(1, "impi-host", "x");
  CHECK(h.external.empty());
  CHECK(h.sent_to(1, MessageType::values).size() == 1);
}

TEST_CASE("an external failure ends the job with one line", "[control][impi]") {
  Harness h(2, {}, "impi-host");
  h.launch_all();
  h.hello(1, 0);
  h.hello(2, 1);
  h.put(1, "impi-host", "a");
  h.put(2, "impi-host", "b");
  REQUIRE(h.external.size() == 1);
  h.job->external_failure("impi-server closed the connection: another cluster's job failed", h.now);
  h.collect();
  REQUIRE(h.printed.size() == 1);
  CHECK(h.printed[0] == "mpirun: impi-server closed the connection: another cluster's job failed");
  CHECK(h.signals == std::vector<int>{SIGTERM});
  // The answer arriving after the failure is not sent.
  h.job->answer_external_fence("impi-host", {"late"});
  h.collect();
  CHECK(h.sent_to(1, MessageType::values).empty());
  // A second failure is not reported again.
  h.job->external_failure("mpirun: something else", h.now);
  h.collect();
  CHECK(h.printed.size() == 1);
  h.exit_rank(0, killed(SIGTERM));
  h.exit_rank(1, killed(SIGTERM));
  CHECK(h.finished == std::vector<int>{255});
  CHECK_FALSE(h.job->completed_mpi_job());
}

TEST_CASE("a fence completing while the job stops is not handed out", "[control][impi]") {
  Harness h(2, {}, "impi-host");
  h.launch_all();
  h.hello(1, 0);
  h.hello(2, 1);
  h.put(1, "impi-host", "a");
  h.job->external_failure("impi-server unreachable", h.now);
  h.collect();
  h.put(2, "impi-host", "b");
  CHECK(h.external.empty());
}

TEST_CASE("plain programs under mpirun -client are not a completed MPI job", "[control][impi]") {
  Harness h(2, {}, "impi-host");
  h.launch_all();
  h.exit_rank(0, exited(0));
  h.exit_rank(1, exited(0));
  CHECK(h.finished == std::vector<int>{0});
  CHECK_FALSE(h.job->failed());
  CHECK_FALSE(h.job->completed_mpi_job());
}
