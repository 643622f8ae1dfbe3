// gridmpi-calibrate: measures the costs of each level of the machine for the
// collectives' cost model (core/coll/model.hpp) and writes them into the
// site file as [coll.calibration.<level>] sections, which gridmpi-info then
// shows with their source.
//
//   gridmpi-calibrate [--levels shm,net] [--max-size 64m] [--seconds S]
//                     [--site-file FILE | --print] [-- MPIRUN_ARGS...]
//
// For each level it runs itself under this installation's mpirun with two
// processes (shm: on this host; net: `mpirun -nounix`, TCP between them; on
// a real cluster give MPIRUN_ARGS that put the two on different hosts, e.g.
// `-- -machinefile two_hosts`).  Each run is a probe (--probe): zero-byte
// and 1 KiB .. max-size messages, per size a ping-pong (half the round
// trip: one-way time T1) and an exchange (MPI_Sendrecv right after a
// barrier: T2), each timed per repetition, 10% trimmed at both ends and
// averaged (the paper's method; up to 500 repetitions, fewer where a size
// would exceed its time budget); a size measured slower than a longer one
// takes the longer one's time (time never falls with the size).  S1 and S2
// are the least T1 and T2 up to 4 KiB (normally T(0)); M1(x) =
// (T1(x) - S1) / x, M2(x) = (T2(x) - S2) / x.  Rank 0 also times
// MPI_Reduce_local (MPI_SUM of doubles) per size, the reduction's seconds
// per byte (`reduce`) that Allreduce's model adds to the bytes each
// algorithm combines.
//
// The wide-area level is measured by every multi-cluster job at MPI_Init
// (core/coll/wan_model.cpp); a [coll.calibration.wan] section can be
// written by running the probe itself as a two-cluster job:
//   mpirun -client 0 ADDR -np 1 gridmpi-calibrate --probe --level wan  (and
//   the same with -client 1), then pasting its output into the site file.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "gridmpi-calibrate: %s\n", message.c_str());
  std::exit(1);
}

bool parse_size(const std::string& text, std::size_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str()) return false;
  std::string suffix(end);
  std::size_t scale = 1;
  if (suffix == "k" || suffix == "K") scale = 1024;
  else if (suffix == "m" || suffix == "M") scale = 1024 * 1024;
  else if (suffix == "g" || suffix == "G") scale = 1024ull * 1024 * 1024;
  else if (!suffix.empty()) return false;
  *out = static_cast<std::size_t>(v) * scale;
  return true;
}

// ---- the probe (an MPI program of two processes) -----------------------------

double trimmed_mean(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t cut = v.size() / 10;
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t i = cut; i + cut < v.size(); ++i, ++n) sum += v[i];
  return n ? sum / static_cast<double>(n) : 0;
}

int probe(std::size_t max_size, double seconds_per_size, const std::string& level) {
  MPI_Init(nullptr, nullptr);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "gridmpi-calibrate --probe: run with exactly 2 processes (got %d)\n", size);
    MPI_Finalize();
    return 1;
  }
  const int peer = 1 - rank;
  std::vector<std::size_t> sizes{0};
  for (std::size_t s = 1024; s <= max_size; s *= 2) sizes.push_back(s);
  std::vector<char> out(max_size ? max_size : 1, 'x'), in(max_size ? max_size : 1);
  char host[256] = "";
  int length = 0;
  MPI_Get_processor_name(host, &length);
  char peer_host[MPI_MAX_PROCESSOR_NAME] = "";
  MPI_Sendrecv(host, MPI_MAX_PROCESSOR_NAME < 256 ? MPI_MAX_PROCESSOR_NAME : 256, MPI_CHAR, peer, 9, peer_host,
               MPI_MAX_PROCESSOR_NAME < 256 ? MPI_MAX_PROCESSOR_NAME : 256, MPI_CHAR, peer, 9, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  if (rank == 0) std::printf("hosts %s %s\n", host, peer_host);
  for (std::size_t bytes : sizes) {
    const int n = static_cast<int>(bytes);
    // Repetitions: rank 0 times two warm-up round trips and decides.
    int reps = 0;
    for (int w = 0; w < 2; ++w) {
      double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(out.data(), n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(in.data(), n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(in.data(), n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(out.data(), n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      }
      double round = MPI_Wtime() - t0;
      reps = static_cast<int>(std::clamp(seconds_per_size / 2 / std::max(round, 1e-7), 10.0, 500.0));
    }
    MPI_Bcast(&reps, 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<double> one_way, exchange;
    for (int r = 0; r < reps; ++r) {
      double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(out.data(), n, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        MPI_Recv(in.data(), n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        one_way.push_back((MPI_Wtime() - t0) / 2);
      } else {
        MPI_Recv(in.data(), n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(out.data(), n, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
      }
    }
    for (int r = 0; r < reps; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      MPI_Sendrecv(out.data(), n, MPI_BYTE, peer, 3, in.data(), n, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      double mine = MPI_Wtime() - t0, both = 0;
      MPI_Reduce(&mine, &both, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (rank == 0) exchange.push_back(both);
    }
    if (rank == 0) {
      std::printf("size %zu reps %d t1 %.6e t2 %.6e\n", bytes, reps, trimmed_mean(one_way), trimmed_mean(exchange));
      // The reduction of this many bytes of doubles into a buffer of as many.
      const int doubles = static_cast<int>(bytes / sizeof(double));
      if (doubles > 0) {
        std::vector<double> a(static_cast<std::size_t>(doubles), 1.0), b(static_cast<std::size_t>(doubles), 2.0);
        std::vector<double> times;
        MPI_Reduce_local(a.data(), b.data(), doubles, MPI_DOUBLE, MPI_SUM);  // touch both
        const double start = MPI_Wtime();
        for (int r = 0; r < reps && (r < 10 || MPI_Wtime() - start < seconds_per_size / 2); ++r) {
          const double t0 = MPI_Wtime();
          MPI_Reduce_local(a.data(), b.data(), doubles, MPI_DOUBLE, MPI_SUM);
          times.push_back(MPI_Wtime() - t0);
        }
        std::printf("reduce %zu %.6e\n", bytes, trimmed_mean(times) / static_cast<double>(bytes));
      }
      std::fflush(stdout);
    }
  }
  if (rank == 0) std::printf("level %s\n", level.c_str());
  MPI_Finalize();
  return 0;
}

// ---- the driver --------------------------------------------------------------

std::string self_path() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) die("cannot find my own path (/proc/self/exe)");
  buf[n] = '\0';
  return buf;
}

std::string parent(const std::string& path) {
  std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string default_site_file(const std::string& self) {
  if (const char* f = std::getenv("GRIDMPI_SITE_FILE"); f && *f) return f;
  if (const char* root = std::getenv("MPIROOT"); root && *root) return std::string(root) + "/etc/gridmpi.toml";
  return parent(parent(self)) + "/etc/gridmpi.toml";
}

std::string quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Point {
  std::size_t bytes;
  double t1, t2;
};

std::string format_cost(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Runs the probe for one level; returns the section's text.
std::string calibrate(const std::string& self, const std::string& level, std::size_t max_size, double seconds,
                      const std::vector<std::string>& mpirun_args) {
  std::string command = quote(parent(self) + "/mpirun") + " -np 2";
  if (level == "net") command += " -nounix";
  for (const auto& a : mpirun_args) command.append(" ").append(quote(a));
  command.append(" ").append(quote(self)).append(" --probe --level ").append(level);
  command.append(" --max-size ").append(std::to_string(max_size)).append(" --seconds ").append(format_cost(seconds));
  std::fprintf(stderr, "gridmpi-calibrate: %s: %s\n", level.c_str(), command.c_str());
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) die("cannot run mpirun: " + std::string(std::strerror(errno)));
  std::vector<Point> points;
  std::string hosts, reduce;
  char line[512];
  while (std::fgets(line, sizeof line, pipe)) {
    std::size_t bytes = 0;
    int reps = 0;
    double t1 = 0, t2 = 0;
    char a[200] = "", b[200] = "";
    if (std::sscanf(line, "size %zu reps %d t1 %lf t2 %lf", &bytes, &reps, &t1, &t2) == 4) {
      points.push_back({bytes, t1, t2});
      std::fprintf(stderr, "  %10zu bytes: one-way %.3f us, exchange %.3f us (%d repetitions)\n", bytes, t1 * 1e6,
                   t2 * 1e6, reps);
    } else if (std::sscanf(line, "reduce %zu %lf", &bytes, &t1) == 2) {
      if (!reduce.empty()) reduce += ' ';
      reduce += std::to_string(bytes) + ":" + format_cost(t1);
    } else if (std::sscanf(line, "hosts %199s %199s", a, b) == 2) {
      hosts = std::string(a) + " and " + b;
    }
  }
  int status = pclose(pipe);
  if (status != 0 || points.empty() || points.front().bytes != 0)
    die("the " + level + " probe failed (mpirun exit status " +
        std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "); see mpirun's message above");
  // A longer message never takes less time: a size measured slower than a
  // longer one caught the noise of this host (a process asleep, the VM's
  // other state) and takes the longer one's time.
  for (std::size_t i = points.size() - 1; i-- > 0;) {
    points[i].t1 = std::min(points[i].t1, points[i + 1].t1);
    points[i].t2 = std::min(points[i].t2, points[i + 1].t2);
  }
  // The latencies: the least time up to 4 KiB (a zero-byte exchange right
  // after a barrier can catch a process asleep; a latency is never above a
  // slightly longer message's time).
  double s1 = points.front().t1, s2 = points.front().t2;
  for (const Point& pt : points) {
    if (pt.bytes > 4096) break;
    s1 = std::min(s1, pt.t1);
    s2 = std::min(s2, pt.t2);
  }
  std::string m1, m2;
  for (std::size_t i = 1; i < points.size(); ++i) {
    const double x = static_cast<double>(points[i].bytes);
    // A per-byte cost is never below 1/100 of the size's whole time per byte
    // (noise can put T(x) under S at small x).
    double c1 = std::max(points[i].t1 - s1, points[i].t1 / 100) / x;
    double c2 = std::max(points[i].t2 - s2, points[i].t2 / 100) / x;
    if (!m1.empty()) m1 += ' ', m2 += ' ';
    m1 += std::to_string(points[i].bytes) + ":" + format_cost(c1);
    m2 += std::to_string(points[i].bytes) + ":" + format_cost(c2);
  }
  char when[64];
  std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::string source = "gridmpi-calibrate " + std::string(when) + ", 2 processes on " + hosts +
                       (level == "net" ? ", mpirun -nounix" : "");
  for (const auto& a : mpirun_args) source += " " + a;
  std::string out = "[coll.calibration." + level + "]\n";
  out += "# Written by gridmpi-calibrate for the collectives' cost model (coll.model); run it again after a\n"
         "# change of hardware or configuration.\n";
  out += "source = \"" + source + "\"\n";
  out += "s1 = " + format_cost(s1) + "\n";
  out += "s2 = " + format_cost(s2) + "\n";
  out += "m1 = \"" + m1 + "\"\n";
  out += "m2 = \"" + m2 + "\"\n";
  if (!reduce.empty()) out += "reduce = \"" + reduce + "\"\n";
  return out;
}

// The file without its [coll.calibration.<level>] section (from its header
// to the next table header).
std::string without_section(const std::string& text, const std::string& level) {
  std::istringstream in(text);
  std::string line, out;
  bool skipping = false;
  const std::string header = "[coll.calibration." + level + "]";
  while (std::getline(in, line)) {
    std::string trimmed = line.substr(0, line.find_last_not_of(" \t\r") + 1);
    trimmed.erase(0, trimmed.find_first_not_of(" \t"));
    if (!trimmed.empty() && trimmed[0] == '[') skipping = trimmed == header;
    if (!skipping) out += line + "\n";
  }
  return out;
}

void usage() {
  std::fputs(
      "usage: gridmpi-calibrate [--levels shm,net] [--max-size 64m] [--seconds S] [--site-file FILE | --print]\n"
      "                         [-- MPIRUN_ARGS...]\n"
      "Measures latency and per-byte costs (one-way and exchange) between two processes of each level and\n"
      "writes them as [coll.calibration.<level>] into the site file ($MPIROOT/etc/gridmpi.toml or\n"
      "GRIDMPI_SITE_FILE), where the collectives' cost model (coll.model) reads them.\n",
      stderr);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> levels{"shm", "net"}, mpirun_args;
  std::size_t max_size = 64u << 20;
  double seconds = 0.5;
  std::string site_file, level = "shm";
  bool print = false, probe_mode = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) die(a + " needs a value; see gridmpi-calibrate --help");
      return args[++i];
    };
    if (a == "--") {
      mpirun_args.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    } else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else if (a == "--probe") {
      probe_mode = true;
    } else if (a == "--level") {
      level = value();
    } else if (a == "--levels") {
      levels.clear();
      std::string list = value();
      std::size_t pos = 0;
      while (pos <= list.size()) {
        std::size_t comma = list.find(',', pos);
        std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (item != "shm" && item != "net") die("--levels: \"" + item + "\" is not a level (shm, net)");
        levels.push_back(item);
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
    } else if (a == "--max-size") {
      std::string v = value();
      if (!parse_size(v, &max_size) || max_size < 1024 || max_size > (1u << 30))
        die("--max-size " + v + ": give a size from 1k to 1g (k/m/g suffixes)");
    } else if (a == "--seconds") {
      std::string v = value();
      char* end = nullptr;
      seconds = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(seconds > 0) || seconds > 60)
        die("--seconds " + v + ": give the time per size in seconds, above 0 and up to 60");
    } else if (a == "--site-file") {
      site_file = value();
    } else if (a == "--print") {
      print = true;
    } else {
      die("unknown argument \"" + a + "\"; see gridmpi-calibrate --help");
    }
  }
  if (probe_mode) return probe(max_size, seconds, level);

  const std::string self = self_path();
  std::string sections;
  for (const auto& l : levels) sections += calibrate(self, l, max_size, seconds, mpirun_args) + "\n";
  if (print) {
    std::fputs(sections.c_str(), stdout);
    return 0;
  }
  if (site_file.empty()) site_file = default_site_file(self);
  std::string text;
  {
    std::ifstream in(site_file);
    if (in) {
      std::stringstream buf;
      buf << in.rdbuf();
      text = buf.str();
    }
  }
  for (const auto& l : levels) text = without_section(text, l);
  while (text.size() >= 2 && text.substr(text.size() - 2) == "\n\n") text.pop_back();
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += "\n" + sections;
  std::string temporary = site_file + ".tmp";
  {
    std::ofstream out(temporary);
    if (!out || !(out << text)) die("cannot write " + temporary + ": " + std::strerror(errno));
  }
  if (std::rename(temporary.c_str(), site_file.c_str()) != 0)
    die("cannot replace " + site_file + ": " + std::strerror(errno));
  std::fprintf(stderr, "gridmpi-calibrate: wrote [coll.calibration.*] of %zu level(s) into %s (gridmpi-info "
                       "coll.calibration.shm.s1 shows it)\n",
               levels.size(), site_file.c_str());
  return 0;
}
