// gridmpi-model: what the collectives' cost model (core/coll/model.hpp)
// estimates and chooses, without running a job.
//
//   gridmpi-model [--coll bcast|allgather|allreduce|reduce] [--level shm|net|wan] [--np P] [--sizes LIST]
//                 [--model 1,2,3,4,auto] [--cores C]
//
// Reads the same site and user files and environment as a job
// ([coll.calibration.<level>], coll.model).  One line per size:
//   MODEL level=shm np=8 bytes=65536 model=3 choice=hybrid:4 ring=.. h1=.. h2=.. h4=.. h8=..
// with the estimates in microseconds; "model 1 2 3" in --model prints the
// three models' lines (the benchmark npb/bcast-bench compares them with
// the measured best).  --coll allgather: sizes are each process's block,
// the estimates are named rd (recursive doubling), bruck and ring:
//   MODEL level=shm np=8 bytes=1024 model=4 choice=recursive_doubling rd=.. bruck=.. ring=..
// --coll allreduce (a commutative operation, MPI_SUM of doubles):
//   MODEL level=shm np=8 bytes=1024 model=4 choice=rabenseifner rd=.. rabenseifner=.. ring=.. reduce_bcast=..
// --coll reduce (the same operation):
//   MODEL level=shm np=8 bytes=1024 model=4 choice=binomial binomial=.. rabenseifner=..
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "core/coll/model.hpp"
#include "p2p/transport.hpp"

namespace model = gridmpi::coll::model;

namespace {

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "gridmpi-model: %s\n", message.c_str());
  std::exit(2);
}

std::size_t parse_size(const std::string& text) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  std::string suffix(end ? end : "");
  std::size_t scale = suffix == "k" || suffix == "K" ? 1024 : suffix == "m" || suffix == "M" ? 1024 * 1024 : 1;
  if (end == text.c_str() || (scale == 1 && !suffix.empty())) die("\"" + text + "\" is not a size (k/m suffixes)");
  return static_cast<std::size_t>(v) * scale;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t comma = list.find(',', pos);
    out.push_back(list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string level_text = "shm", sizes_text = "1k,64k,1m,16m", models_text = "auto", coll = "bcast";
  int p = 8, cores = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--level") level_text = value();
    else if (a == "--coll") coll = value();
    else if (a == "--np") p = std::atoi(value().c_str());
    else if (a == "--sizes") sizes_text = value();
    else if (a == "--model") models_text = value();
    else if (a == "--cores") cores = std::atoi(value().c_str());
    else if (a == "--help" || a == "-h") {
      std::fputs("usage: gridmpi-model [--coll bcast|allgather|allreduce|reduce] [--level shm|net|wan] [--np P] [--sizes LIST]\n"
                 "                     [--model 1,2,3,4,auto] [--cores C]   (model 4: the host's cores when all P "
                 "share it)\n",
                 stdout);
      return 0;
    } else {
      die("unknown argument \"" + a + "\" (see --help)");
    }
  }
  if (p < 1) die("--np: give a positive number of processes");
  if (coll != "bcast" && coll != "allgather" && coll != "allreduce" && coll != "reduce")
    die("--coll " + coll + ": give bcast, allgather, allreduce or reduce");
  // Each level's usual transport declares model 1's figures.
  model::Level level = model::Level::shm;
  std::string transport = "shm";
  if (level_text == "net") {
    level = model::Level::net;
    transport = "tcp";
  } else if (level_text == "wan") {
    level = model::Level::wan;
    transport = "impi";
  } else if (level_text != "shm") {
    die("--level " + level_text + ": give shm, net or wan");
  }
  const gridmpi::p2p::DeclaredLink link = gridmpi::p2p::declared_link(transport);
  const double latency = link.latency_us, bandwidth = link.bandwidth_bytes_per_s;
  try {
    model::Costs measured = model::costs(level, latency, bandwidth);
    measured.cores = cores;
    measured.copies = level == model::Level::shm ? 1 : 2;
    measured.copy = model::local_copy_costs();
    model::Costs declared = model::declared_costs(latency, bandwidth);
    declared.copy = measured.copy;
    std::fprintf(stdout, "# level %s: %s\n", level_text.c_str(), measured.source.c_str());
    for (const std::string& m : split(models_text)) {
      int which = m == "auto" ? 4 : std::atoi(m.c_str());
      if (which < 1 || which > 4) die("--model " + m + ": give 1, 2, 3, 4 or auto");
      const model::Costs& c = which == 1 ? declared : measured;
      for (const std::string& s : split(sizes_text)) {
        std::size_t n = parse_size(s);
        // "MODEL level=.. np=.. bytes=.. model=.. choice=NAME" and each
        // algorithm's estimate in microseconds.
        auto print_line = [&](std::string_view chosen, const auto& algorithms, auto name, auto estimate) {
          std::string line = "MODEL level=" + level_text + " np=" + std::to_string(p) + " bytes=" +
                             std::to_string(n) + " model=" + std::to_string(which) + " choice=" + std::string(chosen);
          for (auto a : algorithms) {
            char buf[64];
            std::snprintf(buf, sizeof buf, " %s=%.3f", std::string(name(a)).c_str(), estimate(a) * 1e6);
            line += buf;
          }
          std::puts(line.c_str());
        };
        if (coll == "allreduce") {
          using model::AllreduceAlgorithm;
          const AllreduceAlgorithm all[] = {AllreduceAlgorithm::recursive_doubling, AllreduceAlgorithm::rabenseifner,
                                            AllreduceAlgorithm::ring, AllreduceAlgorithm::reduce_bcast};
          print_line(model::allreduce_name(model::choose_allreduce(n, p, true, c, which)), all, model::allreduce_name,
                     [&](AllreduceAlgorithm a) { return model::estimate_allreduce(a, n, p, c, which); });
          continue;
        }
        if (coll == "reduce") {
          using model::ReduceAlgorithm;
          const ReduceAlgorithm all[] = {ReduceAlgorithm::binomial, ReduceAlgorithm::rabenseifner};
          print_line(model::reduce_name(model::choose_reduce(n, p, true, c, which)), all, model::reduce_name,
                     [&](ReduceAlgorithm a) { return model::estimate_reduce(a, n, p, c, which); });
          continue;
        }
        if (coll == "allgather") {
          using model::AllgatherAlgorithm;
          std::string line = "MODEL level=" + level_text + " np=" + std::to_string(p) + " bytes=" +
                             std::to_string(n) + " model=" + std::to_string(which) + " choice=" +
                             std::string(model::allgather_name(model::choose_allgather(n, p, c, which)));
          char buf[96];
          std::snprintf(buf, sizeof buf, " rd=%.3f bruck=%.3f ring=%.3f",
                        model::estimate_allgather(AllgatherAlgorithm::recursive_doubling, n, p, c, which) * 1e6,
                        model::estimate_allgather(AllgatherAlgorithm::bruck, n, p, c, which) * 1e6,
                        model::estimate_allgather(AllgatherAlgorithm::ring, n, p, c, which) * 1e6);
          line += buf;
          std::puts(line.c_str());
          continue;
        }
        model::Choice choice = model::choose(n, p, c, which);
        std::string line = "MODEL level=" + level_text + " np=" + std::to_string(p) + " bytes=" + std::to_string(n) +
                           " model=" + std::to_string(which) + " choice=" +
                           (choice.ring ? std::string("ring") : "hybrid:" + std::to_string(choice.d));
        char buf[64];
        std::snprintf(buf, sizeof buf, " ring=%.3f", model::estimate_ring(n, p, c, which) * 1e6);
        line += buf;
        for (int d : model::hybrid_candidates(p)) {
          std::snprintf(buf, sizeof buf, " h%d=%.3f", d, model::estimate_hybrid(n, p, d, c, which) * 1e6);
          line += buf;
        }
        std::puts(line.c_str());
      }
    }
  } catch (const gridmpi::MpiError& e) {
    die(e.what());
  }
  return 0;
}
