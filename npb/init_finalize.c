/* init_finalize: MPI_Init and MPI_Finalize, nothing else (MPI C API only).
 *
 *     mpirun -np 8 init_finalize
 *
 * npb/peer-bench times the whole launcher command around it: the start-up
 * and shutdown cost of a job, without any communication of the program's
 * own.  Prints nothing; exit status 0. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  return 0;
}
