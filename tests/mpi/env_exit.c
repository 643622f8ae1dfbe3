/* Exit status: every rank finalizes and returns 3 from main; the launcher
 * must report 3 (list: expect=3). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_barrier();
    E(MPI_Finalize());
    return mt_errors ? 1 : 3;
}
