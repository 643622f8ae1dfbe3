/* Started without mpirun ("singleton" MPI_Init): the job is one process,
 * and point-to-point to self, MPI_COMM_SELF and Wtime work. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int out[4] = {1, 2, 3, 4}, in[4] = {0, 0, 0, 0}, i;
    MPI_Request req;
    MPI_Status st;

    mt_init(&argc, &argv);
    CHECK_INT("MPI_Comm_size(MPI_COMM_WORLD) of a singleton", 1, mt_size);
    CHECK_INT("MPI_Comm_rank(MPI_COMM_WORLD) of a singleton", 0, mt_rank);

    E(MPI_Irecv(in, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, &req));
    E(MPI_Send(out, 4, MPI_INT, 0, 3, MPI_COMM_WORLD));
    E(MPI_Wait(&req, &st));
    for (i = 0; i < 4; ++i)
        CHECK_INT("value sent to self", out[i], in[i]);
    CHECK_INT("status.MPI_SOURCE", 0, st.MPI_SOURCE);
    CHECK_INT("status.MPI_TAG", 3, st.MPI_TAG);

    memset(in, 0, sizeof in);
    E(MPI_Sendrecv(out, 4, MPI_INT, 0, 4, in, 4, MPI_INT, 0, 4, MPI_COMM_SELF, &st));
    for (i = 0; i < 4; ++i)
        CHECK_INT("value sent to self on MPI_COMM_SELF", out[i], in[i]);
    {
        double t0 = MPI_Wtime(), t1 = MPI_Wtime();
        CHECK(t1 >= t0, "MPI_Wtime monotonic, expected >= %.9f got %.9f", t0, t1);
    }
    return mt_finish();
}
