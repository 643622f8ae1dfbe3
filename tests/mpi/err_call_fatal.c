/* MPI_Comm_call_errhandler with MPI_ERRORS_ARE_FATAL (the default on
 * MPI_COMM_WORLD) ends the job: listed with expect=nonzero.  Rank 0 calls
 * it with a user error code; the others wait in a receive that never
 * completes (the job's end must stop them too). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int cls, code, dummy;

    mt_init(&argc, &argv);
    E(MPI_Add_error_class(&cls));
    E(MPI_Add_error_code(cls, &code));
    E(MPI_Add_error_string(code, "err_call_fatal: the expected fatal error"));
    if (mt_rank == 0) {
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
        printf("FAIL: [rank 0] MPI_Comm_call_errhandler returned under MPI_ERRORS_ARE_FATAL\n");
        fflush(stdout);
        return 1;
    }
    MPI_Recv(&dummy, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("FAIL: [rank %d] the receive completed\n", mt_rank);
    return 1;
}
