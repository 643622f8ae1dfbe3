/* progress_async.c — thread mode: a rendezvous completes while its receiver
 * computes outside MPI.
 *
 * Rank 0 posts an MPI_Irecv of 4 MiB (above every transport's eager limit),
 * tells rank 1 so with a short message, then computes for 1 s without
 * calling MPI before it waits.  Rank 1 sends the 4 MiB with MPI_Send, which
 * cannot return before rank 0 has answered the request to send.  In thread
 * mode (GRIDMPI_PROGRESS=thread) rank 0's progress thread answers it, so the
 * send returns long before the second is over (the limit is half of it; the
 * wake-ups of a process that just left a polling wait are armed by a 5 ms
 * timer, request/README.md).  In poll mode nobody answers until rank 0 waits:
 * only the data is checked then.  Ranks above 1 only take part in the
 * barriers.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpitest.h"

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
  const int n = 1 << 20; /* ints: 4 MiB */
  const double compute = 1.0;
  const char *mode = getenv("GRIDMPI_PROGRESS");
  const int threaded = mode != NULL && strcmp(mode, "thread") == 0;
  int *buf, i, token = 0;

  mt_init(&argc, &argv);
  buf = mt_malloc((size_t)n * sizeof(int));
  /* Connections are made lazily: open them before the measured part. */
  if (mt_rank < 2) {
    int peer = 1 - mt_rank, x = 0;
    E(MPI_Sendrecv(&mt_rank, 1, MPI_INT, peer, 1, &x, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  mt_barrier();
  if (mt_rank == 0) {
    MPI_Request req;
    volatile double sink = 0;
    double start;
    for (i = 0; i < n; ++i)
      buf[i] = -1;
    E(MPI_Irecv(buf, n, MPI_INT, 1, 9, MPI_COMM_WORLD, &req));
    E(MPI_Send(&token, 1, MPI_INT, 1, 8, MPI_COMM_WORLD));
    start = now();
    while (now() - start < compute)
      sink += 1.0;
    E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (i = 0; i < n; ++i)
      if (buf[i] != 3 * i + 1) {
        MT_FAIL("int %d of the 4 MiB message: expected %d got %d", i, 3 * i + 1, buf[i]);
        break;
      }
  } else if (mt_rank == 1) {
    double start, took;
    for (i = 0; i < n; ++i)
      buf[i] = 3 * i + 1;
    E(MPI_Recv(&token, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    start = now();
    E(MPI_Send(buf, n, MPI_INT, 0, 9, MPI_COMM_WORLD));
    took = now() - start;
    if (threaded)
      CHECK(took < compute / 2,
            "MPI_Send of 4 MiB took %.3f s while the receiver computed for %.1f s: nobody answered its "
            "request to send (no progress thread?)",
            took, compute);
    if (getenv("PROGRESS_ASYNC_VERBOSE"))
      printf("rank 1: MPI_Send took %.4f s (%s mode)\n", took, threaded ? "thread" : "poll");
  }
  mt_barrier();
  free(buf);
  return mt_finish();
}
