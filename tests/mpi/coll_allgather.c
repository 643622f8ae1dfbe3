/* MPI_Allgather and MPI_Allgatherv: sizes 0, 1, small, > 64 KiB, with and
 * without MPI_IN_PLACE, MPI_INT, a non-contiguous derived type (also mixed
 * with MPI_INT), on MPI_COMM_WORLD, a dup and a split.  Allgatherv places
 * the blocks in reverse rank order with gaps that must stay untouched. */
#include "coll_common.h"

static void test_allgather(const cc_comm *c, int count, int in_place)
{
    int p = c->size, r = c->rank, i, j;
    int *send = cc_ints((size_t)count), *recv = cc_ints((size_t)count * p);
    int *expected = cc_ints((size_t)count * p);
    for (j = 0; j < p; ++j)
        for (i = 0; i < count; ++i)
            expected[j * count + i] = cc_val(j, i, count);
    for (i = 0; i < count; ++i)
        send[i] = cc_val(r, i, count);
    cc_set(recv, count * p, CC_UNSET);
    if (in_place) {
        memcpy(recv + r * count, send, (size_t)count * sizeof(int));
        E(MPI_Allgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, recv, count, MPI_INT, c->comm));
    } else {
        E(MPI_Allgather(send, count, MPI_INT, recv, count, MPI_INT, c->comm));
    }
    CC_CHECK_INTS(in_place ? "allgather in place" : "allgather MPI_INT", c, recv, expected,
                  count * p);
    free(send);
    free(recv);
    free(expected);
}

/* Send 2*count MPI_INT, receive count strided elements per rank; or send
 * strided and receive MPI_INT (`reverse`); or strided in place. */
static void test_allgather_strided(const cc_comm *c, int count, int mode)
{
    int p = c->size, r = c->rank, i, j;
    int *send = cc_ints((size_t)count * CC_STRIDE), *recv = cc_ints((size_t)count * CC_STRIDE * p);
    int *expected = cc_ints((size_t)count * CC_STRIDE * p);
    if (mode == 0 || mode == 2) {
        for (j = 0; j < p; ++j)
            cc_strided_fill(expected + j * count * CC_STRIDE, count, j, 8);
        cc_set(recv, count * CC_STRIDE * p, CC_HOLE);
        if (mode == 0) {
            for (i = 0; i < 2 * count; ++i)
                send[i] = cc_val(r, i, 8);
            E(MPI_Allgather(send, 2 * count, MPI_INT, recv, count, cc_strided, c->comm));
        } else {
            cc_strided_fill(recv + r * count * CC_STRIDE, count, r, 8);
            E(MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, recv, count, cc_strided, c->comm));
        }
        CC_CHECK_INTS(mode == 0 ? "allgather MPI_INT -> strided" : "allgather strided in place",
                      c, recv, expected, count * CC_STRIDE * p);
    } else {
        cc_strided_fill(send, count, r, 8);
        for (j = 0; j < p; ++j)
            for (i = 0; i < 2 * count; ++i)
                expected[j * 2 * count + i] = cc_val(j, i, 8);
        cc_set(recv, 2 * count * p, CC_UNSET);
        E(MPI_Allgather(send, count, cc_strided, recv, 2 * count, MPI_INT, c->comm));
        CC_CHECK_INTS("allgather strided -> MPI_INT", c, recv, expected, 2 * count * p);
    }
    free(send);
    free(recv);
    free(expected);
}

static void test_allgatherv(const cc_comm *c, int count, int in_place, int strided)
{
    int p = c->size, r = c->rank, i, j, total = 0;
    int unit = strided ? CC_STRIDE : 1;
    MPI_Datatype type = strided ? cc_strided : MPI_INT;
    int *counts = cc_ints((size_t)p), *displs = cc_ints((size_t)p);
    int *send, *recv, *expected;
    for (j = 0; j < p; ++j) {
        counts[j] = count == 0 ? 0 : (j % 2 == 0 ? count + j : j); /* uneven */
        total += counts[j] + 1;
    }
    for (j = 0, i = total; j < p; ++j) {
        i -= counts[j] + 1;
        displs[j] = i;
    }
    send = cc_ints((size_t)(counts[r] + 1) * unit);
    recv = cc_ints((size_t)total * unit);
    expected = cc_ints((size_t)total * unit);
    cc_set(expected, total * unit, strided ? CC_HOLE : CC_UNSET);
    for (j = 0; j < p; ++j) {
        if (strided)
            cc_strided_fill(expected + displs[j] * unit, counts[j], j, 10);
        else
            for (i = 0; i < counts[j]; ++i)
                expected[displs[j] + i] = cc_val(j, i, 10);
    }
    memcpy(send, expected + displs[r] * unit, (size_t)counts[r] * unit * sizeof(int));
    cc_set(recv, total * unit, strided ? CC_HOLE : CC_UNSET);
    if (in_place) {
        memcpy(recv + displs[r] * unit, send, (size_t)counts[r] * unit * sizeof(int));
        E(MPI_Allgatherv(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, recv, counts, displs, type,
                         c->comm));
    } else {
        E(MPI_Allgatherv(send, counts[r], type, recv, counts, displs, type, c->comm));
    }
    CC_CHECK_INTS(strided ? "allgatherv strided" : "allgatherv MPI_INT", c, recv, expected,
                  total * unit);
    free(counts);
    free(displs);
    free(send);
    free(recv);
    free(expected);
}

int main(int argc, char **argv)
{
    int ci, k;
    cc_setup(&argc, &argv);
    for (ci = 0; ci < cc_ncomms; ++ci) {
        const cc_comm *c = &cc_comms[ci];
        for (k = 0; k < CC_NCOUNTS; ++k) {
            if (cc_skip(ci, cc_counts[k]))
                continue;
            int n = cc_counts[k];
            test_allgather(c, n, 0);
            test_allgather(c, n, 1);
            test_allgather_strided(c, n / 2, 0);
            test_allgather_strided(c, n / 2, 1);
            test_allgather_strided(c, n / 2, 2);
            test_allgatherv(c, n / 4, 0, 0);
            test_allgatherv(c, n / 4, 1, 0);
            test_allgatherv(c, n / 4, 0, 1);
            test_allgatherv(c, n / 4, 1, 1);
        }
    }
    return cc_teardown();
}
