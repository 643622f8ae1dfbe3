// mpirun -vendor NAME (launcher/mpirun.hpp; the poe method, rpim/vendor.hpp):
// the whole job is one command, the vendor MPI's own mpiexec, whose
// processes are gridmpi-proxy agents; to JobControl every rank is then a
// "remote" rank with an agent.
#include "launcher/mpirun.hpp"
#include "launcher/scratch.hpp"

namespace gridmpi::launcher {

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
  const char* tmp = std::getenv("TMPDIR");
  const std::string tmp_dir = tmp && *tmp ? tmp : "/tmp";
  // What an mpirun killed before its clean-up left (launcher/scratch.hpp).
  sweep_scratch(tmp_dir, "hosts");
  sweep_scratch("/dev/shm", "vendor");
  if (!hosts_.empty()) {
    // A private file (mode 0600) in TMPDIR, removed when mpirun ends.
    int fd = -1;
    std::string path = make_scratch(tmp_dir, "hosts", false, &fd);
    std::string text = rpim::vendor_hostfile_text(vendor_.style, hosts_);
    if (fd < 0 || !net::write_all(fd, text)) {
      int error = errno;
      if (fd >= 0) ::close(fd);
      if (!path.empty()) ::unlink(path.c_str());
      job_->launch_failed(0, "cannot write the vendor's host file in " + tmp_dir + ": " + std::strerror(error) +
                                 "; set TMPDIR to a writable directory", now);
      return;
    }
    ::close(fd);
    vendor_hostfile_ = path;
  }
  // Debian's Open MPI 4 on one host: its shared-memory files in a private
  // directory (a site-defined or remote job keeps the vendor's default).
  if (vendor_.name == "openmpi" && vendor_all_local_) vendor_shm_dir_ = make_scratch("/dev/shm", "vendor", true);
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

}  // namespace gridmpi::launcher
