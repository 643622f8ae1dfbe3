/* The vendor alone, for comparison with vendor_bench.cpp:
 *   mpicc.openmpi -O2 -o plain_pingpong tests/unit/vendor/plain_pingpong.c
 *   mpiexec.openmpi -n 2 ./plain_pingpong 8 4096 ...
 * Rank 0 prints bytes and round-trip microseconds (best of 20 runs of 1000). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("# plain vendor MPI\n");
  for (int a = 1; a < argc; ++a) {
    int n = atoi(argv[a]);
    char* buf = calloc((size_t)n + 1, 1);
    int iterations = n > 100000 ? 100 : 1000;
    double best = 1e30;
    for (int run = -1; run < 20; ++run) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < iterations; ++i) {
        if (rank == 0) {
          MPI_Send(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
          MPI_Recv(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
      }
      double us = (MPI_Wtime() - t0) * 1e6 / iterations;
      if (run >= 0 && us < best) best = us;  /* run -1 warms up */
    }
    if (rank == 0) printf("%d %.2f\n", n, best);
    free(buf);
  }
  MPI_Finalize();
  return 0;
}
