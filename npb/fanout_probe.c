/* fanout_probe: does one process's concurrent sends share its link?
 *
 *     mpicc -O2 -o fanout_probe npb/fanout_probe.c
 *     mpirun -np 3 ./fanout_probe            (npb/fanout-probe runs it on
 *                                             shm, tcp and the emulated
 *                                             cluster and wide-area link)
 *
 * Exactly 3 processes.  For each size n (0, 1 KiB .. 16 MiB): after a
 * barrier rank 0 posts a send of n bytes to rank 1 alone ("single"), or to
 * ranks 1 and 2 at once ("fan"), and times until rank 1's zero-byte reply;
 * trimmed means (10% each end) of 60 repetitions (20 from 4 MiB).  The
 * sharing of the first transfer by the second is
 *     (fan - single) / (single - single at n = 0)
 * 0 when the two messages leave one after the other (the paper's model of
 * a tree's stage), 1 when they share the link evenly.  Output, rank 0:
 *     FAN n single_seconds fan_seconds sharing
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double trimmed_mean(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare);
  int cut = n / 10;
  double sum = 0;
  for (int i = cut; i < n - cut; i++) sum += v[i];
  return sum / (n - 2 * cut);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    if (rank == 0) fprintf(stderr, "fanout_probe: run with exactly 3 processes (got %d)\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const size_t max = (size_t)16 << 20;
  char *buf = malloc(max);
  memset(buf, 1, max);
  double t[64], zero = 0;
  for (size_t n = 0; n <= max; n = n ? n * 2 : 1024) {
    const int reps = n >= ((size_t)4 << 20) ? 20 : 60;
    double result[2];
    for (int fan = 0; fan < 2; fan++) {
      for (int r = 0; r < reps + 3; r++) { /* 3 warm-ups */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
          MPI_Request q[2];
          double t0 = MPI_Wtime();
          MPI_Isend(buf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &q[0]);
          if (fan) MPI_Isend(buf, (int)n, MPI_BYTE, 2, 1, MPI_COMM_WORLD, &q[1]);
          MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          double dt = MPI_Wtime() - t0;
          MPI_Waitall(fan ? 2 : 1, q, MPI_STATUSES_IGNORE);
          if (r >= 3) t[r - 3] = dt;
        } else if (rank == 1 || fan) {
          MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          if (rank == 1) MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
      }
      result[fan] = rank == 0 ? trimmed_mean(t, reps) : 0;
    }
    if (rank == 0) {
      if (n == 0) zero = result[0];
      double sharing = n && result[0] > zero ? (result[1] - result[0]) / (result[0] - zero) : 0;
      printf("FAN %zu %.6e %.6e %.2f\n", n, result[0], result[1], sharing);
      fflush(stdout);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
