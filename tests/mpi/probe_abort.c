#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include "probe.h"

/* probe_abort: MPI_Abort from one rank while the others are blocked
 * (in Recv, in a collective, or in Finalize-free compute); mpirun must exit
 * with the given code.  PROBE_ABORT_MODE selects who aborts and on what. */

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p_rank = rank;
    const char *mode = getenv("PROBE_ABORT_MODE");
    if (!mode) mode = "last";
    if (strcmp(mode, "last") == 0) {
        /* last rank aborts with 3, the others wait in Recv */
        if (rank == size - 1) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
            MPI_Abort(MPI_COMM_WORLD, 3);
        } else {
            int x;
            MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (strcmp(mode, "self") == 0) {
        /* rank 0 aborts on COMM_SELF with 5, the others wait in a Barrier */
        if (rank == 0) MPI_Abort(MPI_COMM_SELF, 5);
        else MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "all") == 0) {
        /* every rank aborts at once with 6 */
        MPI_Abort(MPI_COMM_WORLD, 6);
    } else if (strcmp(mode, "exit") == 0) {
        /* rank size-1 returns 4 from main without Finalize after the others finalize */
        if (rank == size - 1) return 4;
        MPI_Finalize();
        return 0;
    }
    printf("FAIL: [rank %d] probe_abort: still running after MPI_Abort\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
