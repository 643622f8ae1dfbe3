// mpirun's ranks started one by one (launcher/mpirun.hpp): the plan of
// which rank runs where and how (rpim/), each rank's environment and
// command line (a gridmpi-proxy agent for a remote shell), and the start-up
// pace (rpim.max_starting_sessions).
#include "launcher/mpirun.hpp"

namespace gridmpi::launcher {

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
  // Built by appending: GCC 12 warns falsely (-Wrestrict) about "[" + ... at -O3.
  std::string prefix;
  if (showrank_) prefix.append("[").append(std::to_string(p.rank)).append("] ");
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

}  // namespace gridmpi::launcher
