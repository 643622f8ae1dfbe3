/* MPI_Sendrecv and MPI_Sendrecv_replace: ring shifts in both directions
 * with sizes from 0 to several MiB (send and receive sizes differ), a
 * non-periodic shift with MPI_PROC_NULL at the ends, and Sendrecv_replace
 * with a strided (vector) datatype. */
#include "mpitest.h"

static const int counts[] = {0, 1, 100, 16384, 1 << 20};
#define NC (int)(sizeof counts / sizeof counts[0])

int main(int argc, char **argv)
{
    int right, left, k, i, count;
    int *sbuf, *rbuf;
    MPI_Status st;

    mt_init(&argc, &argv);
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;
    sbuf = mt_malloc((1 << 20) * sizeof(int) * 2);
    rbuf = mt_malloc((1 << 20) * sizeof(int) * 2);

    for (k = 0; k < NC; ++k) {
        /* Each rank sends counts[k] + rank ints to the right; the receive
         * buffer is larger than any message. */
        int n = counts[k] + mt_rank, expect_n = counts[k] + left;
        for (i = 0; i < n; ++i)
            sbuf[i] = mt_rank * 7 + i;
        memset(rbuf, 0, (expect_n + 1) * sizeof(int));
        E(MPI_Sendrecv(sbuf, n, MPI_INT, right, k, rbuf, counts[k] + mt_size, MPI_INT, left, k,
                       MPI_COMM_WORLD, &st));
        CHECK_INT("Sendrecv ring: status.MPI_SOURCE", left, st.MPI_SOURCE);
        CHECK_INT("Sendrecv ring: status.MPI_TAG", k, st.MPI_TAG);
        E(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_INT("Sendrecv ring: Get_count", expect_n, count);
        for (i = 0; i < expect_n; ++i)
            if (rbuf[i] != left * 7 + i) {
                MT_FAIL("Sendrecv ring (%d ints): int %d, expected %d got %d", expect_n, i, left * 7 + i, rbuf[i]);
                break;
            }
        /* Other direction, different tags for send and receive. */
        E(MPI_Sendrecv(sbuf, n, MPI_INT, left, 100 + k, rbuf, counts[k] + mt_size, MPI_INT, right, 100 + k,
                       MPI_COMM_WORLD, &st));
        E(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_INT("Sendrecv reverse ring: Get_count", counts[k] + right, count);
        CHECK_INT("Sendrecv reverse ring: status.MPI_SOURCE", right, st.MPI_SOURCE);
        if (counts[k] + right > 0)
            CHECK_INT("Sendrecv reverse ring: last int", right * 7 + counts[k] + right - 1, rbuf[counts[k] + right - 1]);

        /* Sendrecv_replace, same size everywhere. */
        n = counts[k];
        for (i = 0; i < n; ++i)
            rbuf[i] = mt_rank * 11 + i;
        E(MPI_Sendrecv_replace(rbuf, n, MPI_INT, right, 200 + k, left, 200 + k, MPI_COMM_WORLD, &st));
        CHECK_INT("Sendrecv_replace: status.MPI_SOURCE", left, st.MPI_SOURCE);
        CHECK_INT("Sendrecv_replace: status.MPI_TAG", 200 + k, st.MPI_TAG);
        E(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_INT("Sendrecv_replace: Get_count", n, count);
        for (i = 0; i < n; ++i)
            if (rbuf[i] != left * 11 + i) {
                MT_FAIL("Sendrecv_replace (%d ints): int %d, expected %d got %d", n, i, left * 11 + i, rbuf[i]);
                break;
            }
    }

    /* Non-periodic shift to the right: rank 0 receives from MPI_PROC_NULL,
     * the last rank sends to MPI_PROC_NULL. */
    {
        int v = 500 + mt_rank, w = -1;
        int dest = mt_rank == mt_size - 1 ? MPI_PROC_NULL : mt_rank + 1;
        int src = mt_rank == 0 ? MPI_PROC_NULL : mt_rank - 1;
        E(MPI_Sendrecv(&v, 1, MPI_INT, dest, 300, &w, 1, MPI_INT, src, 300, MPI_COMM_WORLD, &st));
        if (src == MPI_PROC_NULL) {
            CHECK_INT("shift: value from MPI_PROC_NULL leaves buffer", -1, w);
            CHECK_INT("shift: status.MPI_SOURCE from MPI_PROC_NULL", MPI_PROC_NULL, st.MPI_SOURCE);
            CHECK_INT("shift: status.MPI_TAG from MPI_PROC_NULL", MPI_ANY_TAG, st.MPI_TAG);
        } else {
            CHECK_INT("shift: value", 500 + src, w);
            CHECK_INT("shift: status.MPI_SOURCE", src, st.MPI_SOURCE);
        }
    }

    /* Sendrecv_replace with a vector type: every other int of 2n. */
    {
        MPI_Datatype vec;
        int n = 1000;
        E(MPI_Type_vector(n, 1, 2, MPI_INT, &vec));
        E(MPI_Type_commit(&vec));
        for (i = 0; i < 2 * n; ++i)
            rbuf[i] = (i % 2) ? -i : mt_rank * 100000 + i;
        E(MPI_Sendrecv_replace(rbuf, 1, vec, right, 400, left, 400, MPI_COMM_WORLD, &st));
        for (i = 0; i < 2 * n - 1; ++i) {
            int want = (i % 2) ? -i : left * 100000 + i;
            if (rbuf[i] != want) {
                MT_FAIL("Sendrecv_replace(vector): int %d, expected %d got %d", i, want, rbuf[i]);
                break;
            }
        }
        E(MPI_Get_count(&st, vec, &count));
        CHECK_INT("Sendrecv_replace(vector): Get_count", 1, count);
        E(MPI_Get_elements(&st, vec, &count));
        CHECK_INT("Sendrecv_replace(vector): Get_elements", n, count);
        E(MPI_Type_free(&vec));
    }
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
