// gridmpi-proxy: the agent a remote shell starts on a remote host for one
// rank.  It reads the job cookie from its first input line, connects to
// mpirun's control service, starts the rank (working directory,
// environment, own process group), reports the rank's pid and its end (exit
// status or signal), forwards signals from mpirun, and kills the rank when
// the connection to mpirun goes away (mpirun died or the job is over).
//
//   gridmpi-proxy --control ADDR:PORT --rank R [--cwd DIR] [--env NAME=VALUE]... -- program [args...]
//
// With --vendor it is the process a vendor MPI's mpiexec starts for each
// rank (mpirun -vendor, rpim/vendor.hpp): mpirun's address, port and cookie
// come from the environment every rank shares (_YAMPI_PHOST, _YAMPI_PPORT,
// _YAMPI_PHASH), the rank from the vendor's variable (--rank-env), and input
// is not read (the vendor gives rank 0 mpirun's input).  Its own exit status
// is 0 once mpirun has the rank's end, so that the vendor's mpiexec does not
// start a second, competing teardown of the job: mpirun decides.  When the
// vendor signals the agent (the vendor is stopping the job) the rank is
// stopped and its end is not reported: it is a consequence, and the cause
// is reported by whoever had it (mpirun, another rank's agent).
//
//   gridmpi-proxy --vendor [--rank-env VAR] [--cwd DIR] -- program [args...]
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "boot/control_protocol.hpp"
#include "base/net.hpp"
#include "rpim/spawn.hpp"

namespace gridmpi::launcher {

using boot::encode;
using boot::FrameDecoder;
using boot::Message;
using boot::MessageType;
using boot::ProtocolError;

namespace {

int signal_pipe_write = -1;

extern "C" void on_signal(int signo) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(signo);
  ssize_t ignored = ::write(signal_pipe_write, &byte, 1);
  (void)ignored;
  errno = saved;
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

[[noreturn]] void die(const std::string& line, int status) {
  net::write_all(2, "gridmpi-proxy on " + host_name() + ": " + line + "\n");
  std::exit(status);
}

struct ProxyOptions {
  std::string control_host;
  int control_port = 0;
  int rank = -1;
  std::string cwd;
  std::vector<std::string> env;
  std::vector<std::string> program;
  bool vendor = false;
  std::string rank_env = "PMI_RANK";
};

ProxyOptions parse(int argc, char** argv) {
  ProxyOptions o;
  int i = 1;
  auto value = [&](const char* flag) -> std::string {
    if (i + 1 >= argc) die(std::string("option ") + flag + " needs a value (this program is started by mpirun)", 2);
    return argv[++i];
  };
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--control") {
      std::string v = value("--control");
      auto colon = v.rfind(':');
      if (colon == std::string::npos) die("--control needs ADDR:PORT, got '" + v + "'", 2);
      o.control_host = v.substr(0, colon);
      o.control_port = std::atoi(v.c_str() + colon + 1);
    } else if (a == "--rank") {
      o.rank = std::atoi(value("--rank").c_str());
    } else if (a == "--cwd") {
      o.cwd = value("--cwd");
    } else if (a == "--env") {
      o.env.push_back(value("--env"));
    } else if (a == "--vendor") {
      o.vendor = true;
    } else if (a == "--rank-env") {
      o.rank_env = value("--rank-env");
    } else {
      die("unknown option '" + a + "' (this program is started by mpirun, not by hand)", 2);
    }
  }
  for (; i < argc; ++i) o.program.push_back(argv[i]);
  if (o.vendor) {
    const char* host = std::getenv("_YAMPI_PHOST");
    const char* port = std::getenv("_YAMPI_PPORT");
    const char* rank = std::getenv(o.rank_env.c_str());
    if (!host || !port)
      die("_YAMPI_PHOST/_YAMPI_PPORT are not set: the vendor's mpiexec did not pass mpirun's environment "
          "(start the job with mpirun -vendor NAME)",
          2);
    if (!rank)
      die(o.rank_env + " is not set: the vendor's mpiexec does not give its rank in that variable; set "
                       "vendor.rank_env to the one it uses",
          2);
    o.control_host = host;
    o.control_port = std::atoi(port);
    char* end = nullptr;
    long r = std::strtol(rank, &end, 10);
    if (*rank == '\0' || *end != '\0' || r < 0 || r > (1 << 30)) die("malformed " + o.rank_env + "='" + rank + "'", 2);
    o.rank = static_cast<int>(r);
  }
  if (o.control_host.empty() || o.control_port <= 0 || o.rank < 0 || o.program.empty())
    die("usage: gridmpi-proxy --control ADDR:PORT --rank R [--cwd DIR] [--env NAME=VALUE]... -- program [args...]",
        2);
  return o;
}

// The cookie line, read one byte at a time so that the rest of the input
// stays for the rank.
std::string read_cookie_line() {
  std::string line;
  char c;
  while (line.size() < 64) {
    ssize_t n = ::read(0, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    line += c;
  }
  return line;
}

void send_message(int fd, const Message& m) { net::write_all(fd, encode(m)); }

int run(int argc, char** argv) {
  ProxyOptions o = parse(argc, argv);
  const char* shared_cookie = o.vendor ? std::getenv("_YAMPI_PHASH") : nullptr;
  std::string cookie_text = o.vendor ? (shared_cookie ? shared_cookie : "") : read_cookie_line();
  char* end = nullptr;
  std::uint64_t cookie = std::strtoull(cookie_text.c_str(), &end, 10);
  if (cookie_text.empty() || *end != '\0')
    die(o.vendor ? "no job cookie in _YAMPI_PHASH (start the job with mpirun -vendor NAME)"
                 : "no job cookie on the first input line (started by hand?)",
        2);

  UniqueFd control;
  try {
    control = net::connect_tcp(o.control_host, o.control_port, std::chrono::seconds(30));
  } catch (const std::exception& e) {
    die(std::string("cannot reach mpirun's control service: ") + e.what() +
            "; check that this host can connect to mpirun's host (firewall, routing) or set GRIDMPI_MPIRUN_ADDRESS",
        255);
  }
  Message hello;
  hello.type = MessageType::proxy_hello;
  hello.cookie = cookie;
  hello.rank = o.rank;
  hello.pid = static_cast<std::int32_t>(getpid());
  hello.host = host_name();
  send_message(control.get(), hello);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) die(std::string("pipe: ") + std::strerror(errno), 255);
  UniqueFd signal_read(pipe_fds[0]);
  signal_pipe_write = pipe_fds[1];
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  std::vector<std::string> overrides = o.env;
  if (!o.vendor) overrides.push_back("_YAMPI_PHASH=" + std::to_string(cookie));
  rpim::SpawnRequest request;
  request.argv = o.program;
  request.env = rpim::environment_with(overrides);
  request.cwd = o.cwd;
  request.stdin_mode = rpim::StdinMode::inherit;
  request.capture_output = false;
  rpim::SpawnedProcess child;
  try {
    child = rpim::spawn(request);
  } catch (const rpim::SpawnError& e) {
    Message failed;
    failed.type = MessageType::proxy_failed;
    failed.text = std::string(e.what()) + "; check that the program exists at the same path on " + host_name();
    send_message(control.get(), failed);
    ::shutdown(control.get(), SHUT_WR);
    return o.vendor ? 0 : 127;
  }
  ::close(0);  // the rank has the input now
  Message started;
  started.type = MessageType::proxy_started;
  started.pid = child.pid;
  send_message(control.get(), started);

  FrameDecoder decoder;
  bool mpirun_gone = false;
  bool vendor_stopping = false;  // --vendor: the vendor's mpiexec signalled us
  // SIGKILL to the rank's group at this time; max() = not planned.  (A
  // plain value: GCC's maybe-uninitialized check misfires on an optional here.)
  constexpr auto never = std::chrono::steady_clock::time_point::max();
  auto kill_at = never;
  for (;;) {
    pollfd fds[2] = {{signal_read.get(), POLLIN, 0}, {control.get(), static_cast<short>(mpirun_gone ? 0 : POLLIN), 0}};
    int timeout = -1;
    if (kill_at != never) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - std::chrono::steady_clock::now());
      timeout = static_cast<int>(std::max<long long>(0, left.count()));
    }
    int ready = ::poll(fds, mpirun_gone ? 1 : 2, timeout);
    if (kill_at != never && std::chrono::steady_clock::now() >= kill_at) {
      ::kill(-child.pid, SIGKILL);
      kill_at = never;
    }
    if (ready <= 0) continue;
    if (fds[0].revents) {
      unsigned char signals[64];
      ssize_t n = ::read(signal_read.get(), signals, sizeof signals);
      for (ssize_t i = 0; i < n; ++i) {
        if (signals[i] != SIGCHLD) {
          // The session is being torn down: stop the rank too.
          if (o.vendor) vendor_stopping = true;
          ::kill(-child.pid, SIGTERM);
          if (kill_at == never) kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
          continue;
        }
        int status = 0;
        pid_t pid = ::waitpid(child.pid, &status, WNOHANG);
        if (pid != child.pid) continue;
        Message exited;
        exited.type = MessageType::proxy_exit;
        exited.code = WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
        bool report = !mpirun_gone && !vendor_stopping;
        if (report) send_message(control.get(), exited);
        if (!mpirun_gone) ::shutdown(control.get(), SHUT_WR);
        // Whatever the rank left in its process group goes with it.
        ::kill(-child.pid, SIGKILL);
        if (o.vendor && report) return 0;
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
      }
    }
    if (!mpirun_gone && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      std::byte buffer[4096];
      ssize_t n = ::recv(control.get(), buffer, sizeof buffer, 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        // mpirun is gone (or finished with us): the rank must not outlive it.
        mpirun_gone = true;
        ::kill(-child.pid, SIGTERM);
        if (kill_at == never) kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        continue;
      }
      try {
        decoder.feed(std::span(buffer, static_cast<std::size_t>(n)));
        while (auto m = decoder.next()) {
          if (m->type == MessageType::proxy_signal) ::kill(-child.pid, m->code);
        }
      } catch (const ProtocolError& e) {
        die(std::string("bad frame from mpirun: ") + e.what(), 255);
      }
    }
  }
}

}  // namespace
}  // namespace gridmpi::launcher

int main(int argc, char** argv) { return gridmpi::launcher::run(argc, argv); }
