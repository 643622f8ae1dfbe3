/* A real MPI program for the launcher's failure tests.
 *   mpi_fail ok           allreduce, print "rank R of N sum N", finalize
 *   mpi_fail segv R       rank R segfaults, the others wait in MPI_Recv
 *   mpi_fail abort R C    rank R calls MPI_Abort(C)
 *   mpi_fail nofinal R    rank R returns from main without MPI_Finalize
 *   mpi_fail hang         everyone waits in MPI_Recv (killed from outside)
 * With GRIDMPI_TEST_PIDDIR set, each rank writes DIR/rank.R and starts a
 * `sleep 1000` child (DIR/child.R) to check that the whole job is stopped. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Written to a temporary name and renamed, so a reader never sees half a file. */
static void write_pid(const char* dir, const char* what, int rank, pid_t pid) {
  char path[4096], tmp[4200];
  FILE* f;
  snprintf(path, sizeof path, "%s/%s.%d", dir, what, rank);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if ((f = fopen(tmp, "w"))) {
    fprintf(f, "%d\n", (int)pid);
    fclose(f);
    rename(tmp, path);
  }
}

static void record(int rank) {
  const char* dir = getenv("GRIDMPI_TEST_PIDDIR");
  pid_t child;
  if (!dir) return;
  write_pid(dir, "rank", rank, getpid());
  child = fork();
  if (child == 0) {
    execlp("sleep", "sleep", "1000", (char*)NULL);
    _exit(127);
  }
  write_pid(dir, "child", rank, child);
}

int main(int argc, char** argv) {
  int rank, size, sum = 0, one = 1, x;
  const char* mode = argc > 1 ? argv[1] : "ok";
  int target = argc > 2 ? atoi(argv[2]) : -1;
  int code = argc > 3 ? atoi(argv[3]) : 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  record(rank);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (strcmp(mode, "ok") == 0) {
    printf("rank %d of %d sum %d\n", rank, size, sum);
    MPI_Finalize();
    return 0;
  }
  if (rank == target) {
    if (strcmp(mode, "segv") == 0) {
      volatile int* p = NULL;
      *p = 1;
    }
    if (strcmp(mode, "abort") == 0) MPI_Abort(MPI_COMM_WORLD, code);
    if (strcmp(mode, "nofinal") == 0) return 0;
  }
  MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
