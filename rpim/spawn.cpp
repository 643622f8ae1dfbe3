#include "rpim/spawn.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>

extern char** environ;

namespace gridmpi::rpim {

namespace {

struct Pipe {
  UniqueFd read, write;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw SpawnError(std::string("pipe: ") + std::strerror(errno));
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// Child side after fork: only async-signal-safe calls from here on.
[[noreturn]] void child_fail(int report_fd, int stage) {
  int msg[2] = {stage, errno};
  ssize_t ignored = ::write(report_fd, msg, sizeof msg);
  (void)ignored;
  _exit(127);
}

}  // namespace

std::vector<std::string> environment_with(const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> merged;
  std::vector<std::string> order;
  for (char** e = environ; e && *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    if (!merged.contains(name)) order.push_back(name);
    merged[name] = entry;
  }
  for (const auto& entry : overrides) {
    std::string name = entry.substr(0, entry.find('='));
    if (!merged.contains(name)) order.push_back(name);
    merged[name] = entry;
  }
  std::vector<std::string> out;
  out.reserve(order.size());
  for (const auto& name : order) out.push_back(merged[name]);
  return out;
}

SpawnedProcess spawn(const SpawnRequest& request) {
  if (request.argv.empty()) throw SpawnError("empty command");
  // Everything the child needs is prepared before fork().
  std::vector<char*> argv;
  for (const auto& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : request.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  Pipe in, out, err;
  if (request.stdin_mode == StdinMode::pipe) in = make_pipe();
  if (request.capture_output) {
    out = make_pipe();
    err = make_pipe();
  }
  Pipe report = make_pipe();
  pid_t parent = getpid();

  pid_t pid = ::fork();
  if (pid < 0) throw SpawnError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    int rfd = report.write.get();
    if (request.new_process_group) setpgid(0, 0);
    if (request.die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      // The parent may have died between fork() and prctl().
      if (getppid() != parent) _exit(127);
    }
    // Dispositions set to "ignore" survive exec: give the program defaults.
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTTIN, SIGTTOU, SIGCHLD, SIGUSR1, SIGUSR2})
      ::signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (request.stdin_mode == StdinMode::pipe) {
      if (dup2(in.read.get(), 0) < 0) child_fail(rfd, 3);
    } else if (request.stdin_mode == StdinMode::null) {
      int null = ::open("/dev/null", O_RDONLY);
      if (null < 0 || dup2(null, 0) < 0) child_fail(rfd, 3);
      if (null > 2) ::close(null);
    }
    if (request.capture_output) {
      if (dup2(out.write.get(), 1) < 0 || dup2(err.write.get(), 2) < 0) child_fail(rfd, 3);
    }
    if (!request.cwd.empty() && chdir(request.cwd.c_str()) != 0) child_fail(rfd, 1);
    execvpe(argv[0], argv.data(), envp.data());
    child_fail(rfd, 2);
  }
  report.write.reset();
  int msg[2] = {0, 0};
  ssize_t n;
  do {
    n = ::read(report.read.get(), msg, sizeof msg);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof msg)) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::string cause = std::strerror(msg[1]);
    if (msg[0] == 1) throw SpawnError("cannot change to directory '" + request.cwd + "': " + cause);
    if (msg[0] == 2) throw SpawnError("cannot execute '" + request.argv[0] + "': " + cause);
    throw SpawnError("cannot set up standard streams: " + cause);
  }
  SpawnedProcess p;
  p.pid = pid;
  if (request.new_process_group) setpgid(pid, pid);  // both sides, so signals can be sent at once
  if (request.stdin_mode == StdinMode::pipe) p.stdin_fd = std::move(in.write);
  if (request.capture_output) {
    p.stdout_fd = std::move(out.read);
    p.stderr_fd = std::move(err.read);
  }
  return p;
}

}  // namespace gridmpi::rpim
