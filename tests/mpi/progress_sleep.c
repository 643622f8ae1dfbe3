/* progress_sleep.c — a rank blocked in MPI_Recv sleeps instead of spinning.
 *
 * Rank 0 sleeps PS_SECONDS (2 s) before sending one message to every other
 * rank; meanwhile each of them is blocked in MPI_Recv and measures the CPU
 * time its whole process (every thread: a progress thread too) uses for it.
 * Sleeping costs next to nothing (poll mode: about 1-2% for the back-off's
 * 1 ms sleeps; thread mode: about 0.1%); a busy wait costs a core, or with
 * 8 ranks on 2 cores about a quarter of one (2/7 per waiting rank), and
 * still 7% when the machine is loaded with 9 runnable tasks besides, so
 * the limit is 5% of the wall time.  Runs in
 * the poll mode (back-off after progress.spin) and the thread mode (the
 * application thread sleeps on a condition variable).  Not a timing test:
 * only spinning versus sleeping is checked.
 */
#include <sys/resource.h>

#include "mpitest.h"

static double cpu_seconds(void)
{
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
         ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
  const double seconds = 2.0;
  mt_init(&argc, &argv);
  /* Connections are made lazily: open them before the measured wait. */
  mt_barrier();
  mt_barrier();
  if (mt_rank == 0) {
    struct timespec pause = {2, 0};
    nanosleep(&pause, NULL);
    for (int r = 1; r < mt_size; ++r) {
      int token = 1000 + r;
      E(MPI_Send(&token, 1, MPI_INT, r, 7, MPI_COMM_WORLD));
    }
  } else {
    int token = -1;
    double wall = MPI_Wtime();
    double cpu = cpu_seconds();
    E(MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    cpu = cpu_seconds() - cpu;
    wall = MPI_Wtime() - wall;
    CHECK_INT("token", 1000 + mt_rank, token);
    CHECK(wall > seconds * 0.9, "the receive returned after %.2f s, before the send", wall);
    CHECK(cpu < 0.05 * wall, "blocked in MPI_Recv for %.2f s, the process used %.2f s of CPU (%.0f%%): it spins",
          wall, cpu, 100.0 * cpu / wall);
    if (getenv("PROGRESS_SLEEP_VERBOSE"))
      printf("rank %d: %.2f s blocked, %.3f s CPU (%.1f%%)\n", mt_rank, wall, cpu, 100.0 * cpu / wall);
  }
  return mt_finish();
}
