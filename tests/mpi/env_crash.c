/* A rank that dies (SIGKILL to itself) while the others are blocked in a
 * receive from it: the launcher must end the whole job with a non-zero
 * status instead of hanging (list: expect=nonzero, short timeout). */
#include "mpitest.h"
#include <signal.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_rank == mt_size - 1) {
        mt_sleep_ms(100);
        kill(getpid(), SIGKILL);
    }
    {
        int v;
        E(MPI_Recv(&v, 1, MPI_INT, mt_size - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MT_FAIL("receive from a dead rank completed, expected the job to be killed");
    return 1;
}
