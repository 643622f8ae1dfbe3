// The tcp transport between real processes: engines in forked children that
// exchange endpoints through pipes (as mpirun's control service would), talk,
// and shut down.  Checks that normal exit is quiet, that a peer dying without
// goodbye is a fatal error naming both ranks, and that garbage or a foreign
// job's connection is refused without harm.  Every run has a deadline.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "p2p/tcp/tcp_wire.hpp"
#include "test_request_support.hpp"

using namespace gridmpi;

namespace {

struct ChildResult {
  int exit_code = -1;
  std::string stderr_text;
};

// What a child gets: its rank, and a way to publish/read endpoints.
struct ChildContext {
  int rank;
  int size;
  int up;    // write our endpoint line
  int down;  // read every endpoint, one per line
  std::vector<std::string> exchange(const std::string& mine) const {
    std::string line = mine + "\n";
    if (write(up, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(90);
    std::vector<std::string> all;
    std::string current;
    char c;
    while (static_cast<int>(all.size()) < size && read(down, &c, 1) == 1) {
      if (c == '\n') {
        all.push_back(current);
        current.clear();
      } else {
        current += c;
      }
    }
    return all;
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Forks `size` children running body(context) -> exit code, relays the
// endpoint exchange, and collects exit codes and stderr.  `between` runs in
// the parent once every endpoint is known (it may poke at them).
std::vector<ChildResult> run_children(int size, const std::function<int(const ChildContext&)>& body,
                                      const std::function<void(const std::vector<std::string>&)>& between = {},
                                      std::chrono::seconds limit = std::chrono::seconds(30)) {
  std::vector<pid_t> pids;
  std::vector<int> ups, downs;
  std::vector<std::string> logs;
  for (int r = 0; r < size; ++r) {
    int up[2], down[2];
    REQUIRE(pipe(up) == 0);
    REQUIRE(pipe(down) == 0);
    char name[] = "/tmp/gridmpi-tcp-test-XXXXXX";
    int log_fd = mkstemp(name);
    REQUIRE(log_fd >= 0);
    logs.emplace_back(name);
    std::fflush(nullptr);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(log_fd, 2);
      close(up[0]);
      close(down[1]);
      ChildContext context{r, size, up[1], down[0]};
      int code = 99;
      try {
        code = body(context);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: uncaught: %s\n", r, e.what());
        code = 98;
      }
      std::fflush(nullptr);
      _exit(code);
    }
    close(log_fd);
    close(up[1]);
    close(down[0]);
    pids.push_back(pid);
    ups.push_back(up[0]);
    downs.push_back(down[1]);
  }
  // Relay: one line from each child, then all lines to each.
  std::vector<std::string> endpoints;
  for (int r = 0; r < size; ++r) {
    std::string line;
    char c;
    while (read(ups[r], &c, 1) == 1 && c != '\n') line += c;
    endpoints.push_back(line);
  }
  if (between) between(endpoints);
  std::string all;
  for (auto& e : endpoints) all += e + "\n";
  for (int r = 0; r < size; ++r) {
    if (write(downs[r], all.data(), all.size()) != static_cast<ssize_t>(all.size())) FAIL("pipe write");
    close(downs[r]);
    close(ups[r]);
  }
  std::vector<ChildResult> results(size);
  auto deadline = std::chrono::steady_clock::now() + limit;
  int remaining = size;
  while (remaining > 0) {
    for (int r = 0; r < size; ++r) {
      if (pids[r] < 0) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        results[r].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pids[r] = -1;
        --remaining;
      }
    }
    if (remaining == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGKILL);
      for (pid_t p : pids)
        if (p > 0) waitpid(p, nullptr, 0);
      FAIL("children did not finish within the time limit");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int r = 0; r < size; ++r) {
    results[r].stderr_text = slurp(logs[r]);
    std::remove(logs[r].c_str());
  }
  return results;
}

std::unique_ptr<request::Engine> child_engine(const ChildContext& c, std::uint64_t cookie) {
  test::ensure_basic_datatypes();
  request::EngineOptions o;
  o.rsize = -1;
  o.spin = 50;
  auto engine = request::make_engine_with(c.rank, c.size, cookie, test::maker(test::Wire::tcp), o);
  engine->set_peer_endpoints(c.exchange(engine->endpoint()));
  return engine;
}

void wait_release(request::Engine& e, request::Request* r) {
  e.wait_until([r] { return r->complete; });
  e.release(r);
}

}  // namespace

TEST_CASE("tcp: processes exchange small and large messages and exit quietly", "[transport][tcp][process]") {
  auto results = run_children(3, [](const ChildContext& c) {
    auto engine = child_engine(c, 0xabc001);
    auto comm = test::make_comm(c.rank, c.size);
    int failures = 0;
    // Everyone sends to everyone: 200 small messages and one of 6 MiB each.
    auto big = test::pattern(6 << 20, static_cast<unsigned>(c.rank));
    std::vector<request::Request*> sends;
    std::vector<int> values(200);
    for (int peer = 0; peer < c.size; ++peer) {
      if (peer == c.rank) continue;
      for (int i = 0; i < 200; ++i) {
        values[i] = c.rank * 1000 + i;
        sends.push_back(engine->isend(&values[i], 1, MPI_INT, peer, 1, *comm, 100, request::SendMode::standard));
      }
      sends.push_back(engine->isend(big.data(), static_cast<int>(big.size()), MPI_BYTE, peer, 2, *comm, 100,
                                    request::SendMode::standard));
    }
    for (int peer = 0; peer < c.size; ++peer) {
      if (peer == c.rank) continue;
      for (int i = 0; i < 200; ++i) {
        int v = -1;
        request::Request* r = engine->irecv(&v, 1, MPI_INT, peer, 1, *comm, 100);
        wait_release(*engine, r);
        if (v != peer * 1000 + i) ++failures;  // in order
      }
      std::vector<std::byte> in(6 << 20);
      request::Request* r = engine->irecv(in.data(), static_cast<int>(in.size()), MPI_BYTE, peer, 2, *comm, 100);
      wait_release(*engine, r);
      if (in != test::pattern(6 << 20, static_cast<unsigned>(peer))) ++failures;
    }
    for (auto* s : sends) wait_release(*engine, s);
    engine->shutdown();
    return failures;
  });
  for (std::size_t r = 0; r < results.size(); ++r) {
    INFO("rank " << r << " stderr: " << results[r].stderr_text);
    CHECK(results[r].exit_code == 0);
    CHECK(results[r].stderr_text.empty());  // a normal exit says nothing
  }
}

TEST_CASE("tcp: a peer that dies without goodbye is a fatal error naming both ranks", "[transport][tcp][process]") {
  auto results = run_children(2, [](const ChildContext& c) {
    auto engine = child_engine(c, 0xabc002);
    auto comm = test::make_comm(c.rank, c.size);
    int v = 5;
    if (c.rank == 1) {
      // Open the connection, then vanish.
      wait_release(*engine, engine->isend(&v, 1, MPI_INT, 0, 1, *comm, 100, request::SendMode::standard));
      std::vector<std::byte> ack(1);
      wait_release(*engine, engine->irecv(ack.data(), 1, MPI_BYTE, 0, 2, *comm, 100));
      _exit(0);
    }
    wait_release(*engine, engine->irecv(&v, 1, MPI_INT, 1, 1, *comm, 100));
    std::byte ack{1};
    wait_release(*engine, engine->isend(&ack, 1, MPI_BYTE, 1, 2, *comm, 100, request::SendMode::standard));
    request::Request* never = engine->irecv(&v, 1, MPI_INT, 1, 3, *comm, 100);
    try {
      engine->wait_until([never] { return never->complete; });
    } catch (const MpiError& e) {
      std::string text = e.what();
      // Whichever direction notices first: "rank 0 lost the connection to/from rank 1 (127.0.0.1:PORT)".
      bool names_both = text.find("rank 0 lost the connection") != std::string::npos &&
                        text.find("rank 1 (127.0.0.1:") != std::string::npos;
      return names_both ? 0 : 2;
    }
    return 1;
  });
  INFO("rank 0 stderr: " << results[0].stderr_text);
  CHECK(results[0].exit_code == 0);
  CHECK(results[1].exit_code == 0);
  // The error is reported once, by whoever handles it (the MPI error handler),
  // not also logged by the transport.
  CHECK(results[0].stderr_text.find("lost the connection") == std::string::npos);
}

TEST_CASE("tcp: garbage and foreign connections are refused and logged, the job goes on",
          "[transport][tcp][process]") {
  auto poke = [](const std::vector<std::string>& endpoints) {
    // endpoints[0] is "tcp:127.0.0.1:PORT"
    auto colon = endpoints[0].rfind(':');
    int port = std::stoi(endpoints[0].substr(colon + 1));
    auto connect_and_send = [port](const std::vector<std::byte>& bytes) {
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<std::uint16_t>(port));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
      REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      close(fd);
    };
    std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    connect_and_send(std::vector<std::byte>(reinterpret_cast<const std::byte*>(http.data()),
                                            reinterpret_cast<const std::byte*>(http.data()) + http.size()));
    // A well-formed hello from another job.
    std::vector<std::byte> hello(p2p::tcp::FramePrefix::size + p2p::tcp::Hello::size);
    p2p::tcp::FramePrefix{p2p::tcp::FrameType::hello, p2p::tcp::Hello::size, 0}.encode(
        std::span<std::byte, p2p::tcp::FramePrefix::size>(hello.data(), p2p::tcp::FramePrefix::size));
    p2p::tcp::Hello{p2p::tcp::Hello::current_version, 0xdeadbeef, 1}.encode(
        std::span<std::byte, p2p::tcp::Hello::size>(hello.data() + p2p::tcp::FramePrefix::size, p2p::tcp::Hello::size));
    connect_and_send(hello);
  };
  auto results = run_children(
      2,
      [](const ChildContext& c) {
        auto engine = child_engine(c, 0xabc003);
        auto comm = test::make_comm(c.rank, c.size);
        int v = 40 + c.rank, got = -1;
        int peer = 1 - c.rank;
        request::Request* r = engine->irecv(&got, 1, MPI_INT, peer, 1, *comm, 100);
        // Give the parent's pokes time to arrive before the real traffic.
        if (c.rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
        request::Request* s = engine->isend(&v, 1, MPI_INT, peer, 1, *comm, 100, request::SendMode::standard);
        wait_release(*engine, r);
        wait_release(*engine, s);
        engine->shutdown();
        return got == 40 + peer ? 0 : 1;
      },
      poke);
  INFO("rank 0 stderr: " << results[0].stderr_text);
  CHECK(results[0].exit_code == 0);
  CHECK(results[1].exit_code == 0);
  const std::string& log = results[0].stderr_text;
  CHECK(log.find("refused a connection") != std::string::npos);
  CHECK(log.find("job cookie does not match") != std::string::npos);
}
