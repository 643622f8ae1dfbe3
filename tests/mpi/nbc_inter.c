/* Collectives on an intercommunicator through the C API: the non-blocking
 * calls (started on both groups, completed with Waitall) and the blocking
 * ones, with MPI_ROOT / MPI_PROC_NULL / remote-rank roots; the argument
 * rules of MPI-3.1 (MPI_IN_PLACE refused, Scan and Exscan erroneous).
 * The two groups are the even and the odd ranks of MPI_COMM_WORLD; needs 2
 * or more ranks. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Comm half, inter;
    MPI_Request rq[4];
    int color, lrank, lsize, rsize, i, rc;
    int bval[3], sum_in, sum_out, gath[64], sval, red, x = 1, y = 0;
    mt_init(&argc, &argv);
    if (mt_size < 2) {
        printf("nbc_inter: needs 2 or more ranks, nothing to test\n");
        return mt_finish();
    }
    color = mt_rank % 2;
    E(MPI_Comm_split(MPI_COMM_WORLD, color, mt_rank, &half));
    E(MPI_Comm_rank(half, &lrank));
    E(MPI_Comm_size(half, &lsize));
    /* local leader 0 of each half; remote leaders are world ranks 1 and 0 */
    E(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 5, &inter));
    E(MPI_Comm_remote_size(inter, &rsize));

    /* Ibcast from rank 0 of the even group, Iallreduce, Iallgather, Ibarrier. */
    for (i = 0; i < 3; ++i)
        bval[i] = -1;
    if (color == 0) {
        for (i = 0; i < 3; ++i)
            bval[i] = lrank == 0 ? 70 + i : -1;
        E(MPI_Ibcast(bval, 3, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter, &rq[0]));
    } else {
        E(MPI_Ibcast(bval, 3, MPI_INT, 0, inter, &rq[0]));
    }
    sum_in = mt_rank;
    E(MPI_Iallreduce(&sum_in, &sum_out, 1, MPI_INT, MPI_SUM, inter, &rq[1]));
    E(MPI_Iallgather(&sum_in, 1, MPI_INT, gath, 1, MPI_INT, inter, &rq[2]));
    E(MPI_Ibarrier(inter, &rq[3]));
    E(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    if (color == 1) {
        for (i = 0; i < 3; ++i)
            CHECK_INT("inter ibcast", 70 + i, bval[i]);
    } else if (lrank != 0) {
        for (i = 0; i < 3; ++i)
            CHECK_INT("inter ibcast leaves MPI_PROC_NULL ranks alone", -1, bval[i]);
    }
    {
        /* the other group's world ranks are 1-color, 3-color, ... */
        int expected = 0;
        for (i = 0; i < rsize; ++i) {
            expected += 2 * i + (1 - color);
            CHECK_INT("inter iallgather", 2 * i + (1 - color), gath[i]);
        }
        CHECK_INT("inter iallreduce (sum of the remote group)", expected, sum_out);
    }

    /* Blocking: Reduce to rank 0 of the odd group, Scatter from it. */
    sval = mt_rank;
    red = -1;
    if (color == 1) {
        E(MPI_Reduce(&sval, &red, 1, MPI_INT, MPI_SUM, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
        if (lrank == 0) {
            int expected = 0;
            for (i = 0; i < rsize; ++i)
                expected += 2 * i;
            CHECK_INT("inter reduce at MPI_ROOT", expected, red);
        }
    } else {
        E(MPI_Reduce(&sval, &red, 1, MPI_INT, MPI_SUM, 0, inter));
    }

    /* Argument rules. */
    E(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    /* Open MPI 4.1.4 crashes (calls a null function) on Scan/Exscan over an
     * intercommunicator instead of reporting MPI_ERR_COMM. */
    if (!MT_IS_OPENMPI) {
        rc = MPI_Iscan(&x, &y, 1, MPI_INT, MPI_SUM, inter, &rq[0]);
        CHECK_INT("MPI_Iscan on an intercommunicator: error class", MPI_ERR_COMM, mt_class(rc));
        rc = MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, inter);
        CHECK_INT("MPI_Exscan on an intercommunicator: error class", MPI_ERR_COMM, mt_class(rc));
    }
    rc = MPI_Ibcast(&x, 1, MPI_INT, rsize, inter, &rq[0]);
    CHECK_INT("MPI_Ibcast with root = remote size: error class", MPI_ERR_ROOT, mt_class(rc));

    E(MPI_Comm_free(&inter));
    E(MPI_Comm_free(&half));
    return mt_finish();
}
