// A stand-in MPI program that talks to mpirun through ControlClient
// directly (no MPI_Init needed), for the launcher's end-to-end tests.
//
//   control_prog MODE [RANK [CODE]]
//     ok          exchange, print "rank R of N ok PEERS", finalize, exit 0
//     segv R      rank R segfaults after the exchange, the others wait
//     abort R C   rank R calls abort(C), the others wait
//     nofinal R   rank R exits 0 without finalize, the others wait
//     exit1 R     rank R exits 1 before connecting, the others connect and wait
//     late R      rank R sleeps 600 s before connecting
//     hang        everyone waits after the exchange (killed from outside)
//
// With GRIDMPI_TEST_PIDDIR set, every rank writes its pid to DIR/rank.R and
// starts a child `sleep 1000` in its process group (pid in DIR/child.R) so
// that the tests can check that nothing of the job survives.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "launcher/control_client.hpp"

namespace {

// Written to a temporary name and renamed, so a reader never sees half a file.
void write_pid(const std::string& path, pid_t pid) {
  std::ofstream(path + ".tmp") << pid << "\n";
  std::rename((path + ".tmp").c_str(), path.c_str());
}

void record_pids(int rank) {
  const char* dir = std::getenv("GRIDMPI_TEST_PIDDIR");
  if (!dir) return;
  write_pid(std::string(dir) + "/rank." + std::to_string(rank), getpid());
  pid_t child = fork();
  if (child == 0) {
    execlp("sleep", "sleep", "1000", static_cast<char*>(nullptr));
    _exit(127);
  }
  write_pid(std::string(dir) + "/child." + std::to_string(rank), child);
}

[[noreturn]] void wait_forever(gridmpi::launcher::ControlClient& client) {
  // A fence the failing rank never joins: blocks until mpirun stops us.
  try {
    client.exchange("never", "x");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", client.rank(), e.what());
  }
  for (;;) pause();
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "ok";
  int target = argc > 2 ? std::atoi(argv[2]) : -1;
  int code = argc > 3 ? std::atoi(argv[3]) : 0;
  int my_rank = std::atoi(std::getenv("_YAMPI_MYRANK") ? std::getenv("_YAMPI_MYRANK") : "0");
  record_pids(my_rank);
  if (mode == "exit1" && my_rank == target) return 1;
  if (mode == "late" && my_rank == target) sleep(600);

  auto client = gridmpi::launcher::ControlClient::from_environment();
  if (!client) {
    std::printf("singleton\n");
    return 0;
  }
  int rank = client->rank();
  auto values = client->exchange("endpoint", "ep" + std::to_string(rank));
  std::string peers;
  for (const auto& v : values) peers += v + ",";
  const char* local = std::getenv("GRIDMPI_LOCAL_ADDRESS");

  if (mode == "ok") {
    std::printf("rank %d of %d ok %s local=%s\n", rank, client->size(), peers.c_str(), local ? local : "");
    std::fflush(stdout);
    client->finalize();
    return 0;
  }
  if (rank != target) wait_forever(*client);
  if (mode == "segv") {
    volatile int* p = nullptr;
    *p = 1;
  } else if (mode == "abort") {
    client->abort(code, "test abort");
    _exit(code);
  } else if (mode == "nofinal") {
    return 0;
  }
  wait_forever(*client);
}
