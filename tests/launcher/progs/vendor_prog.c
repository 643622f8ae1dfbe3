/* A real MPI program for the mpirun -vendor tests (tests/launcher/vendor_e2e.py).
 *   vendor_prog env           print "rank R of N pid P vendor V plugin P myrank M progress X" after a
 *                             ring exchange that checks the ranks are distinct and complete
 *   vendor_prog codes C0 C1.. finalize, then rank r exits with C<r> (0 when not given)
 * With GRIDMPI_TEST_PIDDIR set, each rank writes DIR/rank.R (as mpi_fail.c). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void record(int rank) {
  const char* dir = getenv("GRIDMPI_TEST_PIDDIR");
  char path[4096], tmp[4200];
  FILE* f;
  if (!dir) return;
  snprintf(path, sizeof path, "%s/rank.%d", dir, rank);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if ((f = fopen(tmp, "w"))) {
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    rename(tmp, path);
  }
}

static const char* env(const char* name) {
  const char* v = getenv(name);
  return v ? v : "-";
}

int main(int argc, char** argv) {
  int rank, size, left, right, got = -1, sum = 0;
  const char* mode = argc > 1 ? argv[1] : "env";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  record(rank);
  /* Every rank sends its rank to the right: a duplicate or missing rank
   * shows as a wrong value or a hang. */
  right = (rank + 1) % size;
  left = (rank + size - 1) % size;
  MPI_Sendrecv(&rank, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (got != left || sum != size * (size - 1) / 2) {
    fprintf(stderr, "rank %d: got %d from the left (expected %d), sum %d\n", rank, got, left, sum);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (strcmp(mode, "env") == 0)
    printf("rank %d of %d pid %d vendor %s plugin %s myrank %s progress %s\n", rank, size, (int)getpid(),
           env("GRIDMPI_VENDOR"), env("GRIDMPI_VENDOR_PLUGIN"), env("_YAMPI_MYRANK"), env("GRIDMPI_PROGRESS_MODE"));
  MPI_Finalize();
  if (strcmp(mode, "codes") == 0 && rank + 2 < argc) return atoi(argv[rank + 2]);
  return 0;
}
