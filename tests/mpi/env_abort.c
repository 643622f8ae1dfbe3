/* MPI_Abort(MPI_COMM_WORLD, 7) from the last rank ends the whole job (the
 * other ranks are blocked in a receive that is never matched) and the
 * launcher returns the error code (list: expect=7). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_rank == mt_size - 1) {
        mt_sleep_ms(100); /* let the others block first */
        MPI_Abort(MPI_COMM_WORLD, 7);
        MT_FAIL("MPI_Abort returned, expected no return");
        return 1;
    }
    {
        int v;
        E(MPI_Recv(&v, 1, MPI_INT, mt_size - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_FAIL("receive completed, expected to be killed by MPI_Abort");
    }
    return 1;
}
