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
//     busy R S    rank R uses the CPU for S seconds before connecting, then as ok
//     hang        everyone waits after the exchange (killed from outside)
//
//   mpirun -client (tests/impi/test_client_*.py), the process side of the
//   IMPI start-up (impi/job_map.hpp): each rank publishes a LocalHost
//   (127.0.0.1, port 20000+rank, its pid, IMPI_H_ACKMARK/HIWATER) under
//   key impi-host, decodes the one value mpirun answers into a JobMap and
//   prints it on one line ("impi rank R world W of S ...").
//     impi        then finalize, exit 0
//     impi-hang   then wait (killed from outside)
//     impi-bad    publishes a malformed record instead
//
// With GRIDMPI_TEST_PIDDIR set, every rank writes its pid to DIR/rank.R and
// starts a child `sleep 1000` in its process group (pid in DIR/child.R) so
// that the tests can check that nothing of the job survives.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "impi/job_map.hpp"
#include "impi/params.hpp"
#include "boot/control_client.hpp"

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

[[noreturn]] void wait_forever(gridmpi::boot::ControlClient& client) {
  // A fence the failing rank never joins: blocks until mpirun stops us.
  try {
    client.exchange("never", "x");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", client.rank(), e.what());
  }
  for (;;) pause();
}

namespace impi = gridmpi::impi;
namespace boot = gridmpi::boot;

int impi_mode(const std::string& mode) {
  auto client = boot::ControlClient::from_environment();
  if (!client) {
    std::fprintf(stderr, "impi modes need mpirun\n");
    return 2;
  }
  auto& control = *client;
  impi::LocalHost me;
  me.address = impi::host_id_from_ipv4(0x7f000001);
  me.port = static_cast<std::uint16_t>(20000 + control.rank());
  me.pid = getpid();
  me.ackmark = impi::params::h_ackmark();
  me.hiwater = impi::params::h_hiwater();
  std::vector<std::string> answer;
  try {
    answer = control.exchange_with_agent(impi::key_local_host, mode == "impi-bad" ? std::string("bad") : me.encode());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", control.rank(), e.what());
    for (;;) pause();
  }
  if (answer.size() != 1) {
    std::fprintf(stderr, "rank %d: %zu values for impi-host, expected 1\n", control.rank(), answer.size());
    return 3;
  }
  auto map = impi::JobMap::from_labels(impi::CollatedLabels::decode(answer[0]));
  std::string hosts, pids;
  for (const auto& h : map.hosts)
    hosts += impi::to_string(h.address) + ":" + std::to_string(h.port) + "/" + std::to_string(h.nprocs) + "@" +
             std::to_string(h.client) + ",";
  for (const auto& p : map.procs) pids += std::to_string(p.pid) + ",";
  std::printf("impi rank %d world %d of %d client %d/%d datalen %d tagub %d xsize %d maxlinear %d ackmark %d "
              "hiwater %d first %d hosts %s pids %s\n",
              control.rank(), map.rank_of(impi::Proc{me.address, me.pid}), map.world_size(), map.my_client,
              map.nclients, map.datalen, map.tagub, map.coll_xsize, map.coll_maxlinear, map.ackmark, map.hiwater,
              map.client_first_rank[static_cast<std::size_t>(map.my_client)], hosts.c_str(), pids.c_str());
  std::fflush(stdout);
  if (mode == "impi-hang") {
    for (;;) pause();
  }
  control.finalize();
  return 0;
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
  if (mode == "busy" && my_rank == target) {
    // Like a Python rank importing its modules: running, not connected yet.
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(code);
    volatile unsigned long spin = 0;
    while (std::chrono::steady_clock::now() < end)
      for (int i = 0; i < 100000; ++i) spin = spin + 1;
  }
  if (mode.starts_with("impi")) return impi_mode(mode);

  auto client = gridmpi::boot::ControlClient::from_environment();
  if (!client) {
    std::printf("singleton\n");
    return 0;
  }
  int rank = client->rank();
  auto values = client->exchange("endpoint", "ep" + std::to_string(rank));
  std::string peers;
  for (const auto& v : values) peers += v + ",";
  const char* local = std::getenv("GRIDMPI_LOCAL_ADDRESS");

  if (mode == "ok" || mode == "busy") {
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
