// gridmpi-proxy: the agent a remote shell starts on a remote host for one
// rank.  It reads the job cookie from its first input line, connects to
// mpirun's control service, starts the rank (working directory,
// environment, own process group), reports the rank's pid and its end (exit
// status or signal), forwards signals from mpirun, and kills the rank when
// the connection to mpirun goes away (mpirun died or the job is over).
//
//   gridmpi-proxy --control ADDR:PORT --rank R [--cwd DIR] [--env NAME=VALUE]... -- program [args...]
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

#include "launcher/control_protocol.hpp"
#include "launcher/net.hpp"
#include "rpim/spawn.hpp"

namespace gridmpi::launcher {
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
  write_all(2, "gridmpi-proxy on " + host_name() + ": " + line + "\n");
  std::exit(status);
}

struct ProxyOptions {
  std::string control_host;
  int control_port = 0;
  int rank = -1;
  std::string cwd;
  std::vector<std::string> env;
  std::vector<std::string> program;
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
    } else {
      die("unknown option '" + a + "' (this program is started by mpirun, not by hand)", 2);
    }
  }
  for (; i < argc; ++i) o.program.push_back(argv[i]);
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

void send_message(int fd, const Message& m) { write_all(fd, encode(m)); }

int run(int argc, char** argv) {
  ProxyOptions o = parse(argc, argv);
  std::string cookie_text = read_cookie_line();
  char* end = nullptr;
  std::uint64_t cookie = std::strtoull(cookie_text.c_str(), &end, 10);
  if (cookie_text.empty() || *end != '\0') die("no job cookie on the first input line (started by hand?)", 2);

  UniqueFd control;
  try {
    control = connect_tcp(o.control_host, o.control_port, std::chrono::seconds(30));
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
  overrides.push_back("_YAMPI_PHASH=" + std::to_string(cookie));
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
    return 127;
  }
  ::close(0);  // the rank has the input now
  Message started;
  started.type = MessageType::proxy_started;
  started.pid = child.pid;
  send_message(control.get(), started);

  FrameDecoder decoder;
  bool mpirun_gone = false;
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  for (;;) {
    pollfd fds[2] = {{signal_read.get(), POLLIN, 0}, {control.get(), static_cast<short>(mpirun_gone ? 0 : POLLIN), 0}};
    int timeout = -1;
    if (kill_at) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*kill_at - std::chrono::steady_clock::now());
      timeout = static_cast<int>(std::max<long long>(0, left.count()));
    }
    int ready = ::poll(fds, mpirun_gone ? 1 : 2, timeout);
    if (kill_at && std::chrono::steady_clock::now() >= *kill_at) {
      ::kill(-child.pid, SIGKILL);
      kill_at.reset();
    }
    if (ready <= 0) continue;
    if (fds[0].revents) {
      unsigned char signals[64];
      ssize_t n = ::read(signal_read.get(), signals, sizeof signals);
      for (ssize_t i = 0; i < n; ++i) {
        if (signals[i] != SIGCHLD) {
          // The session is being torn down: stop the rank too.
          ::kill(-child.pid, SIGTERM);
          if (!kill_at) kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
          continue;
        }
        int status = 0;
        pid_t pid = ::waitpid(child.pid, &status, WNOHANG);
        if (pid != child.pid) continue;
        Message exited;
        exited.type = MessageType::proxy_exit;
        exited.code = WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
        if (!mpirun_gone) {
          send_message(control.get(), exited);
          ::shutdown(control.get(), SHUT_WR);
        }
        // Whatever the rank left in its process group goes with it.
        ::kill(-child.pid, SIGKILL);
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
        if (!kill_at) kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
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
