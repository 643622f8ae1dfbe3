/* MPI_Gather and MPI_Gatherv: sizes 0, 1, small, > 64 KiB, several roots,
 * MPI_IN_PLACE at the root, MPI_INT and a non-contiguous derived type, on
 * MPI_COMM_WORLD, a dup and a split.  Gatherv places the blocks in reverse
 * rank order with gaps that must stay untouched. */
#include "coll_common.h"

static void test_gather(const cc_comm *c, int count, int root, int in_place)
{
    int p = c->size, r = c->rank, i, j;
    int *send = cc_ints((size_t)count), *recv = cc_ints((size_t)count * p);
    int *expected = cc_ints((size_t)count * p);
    for (j = 0; j < p; ++j)
        for (i = 0; i < count; ++i)
            expected[j * count + i] = cc_val(j, i, count + root);
    for (i = 0; i < count; ++i)
        send[i] = cc_val(r, i, count + root);
    cc_set(recv, count * p, CC_UNSET);
    if (r == root && in_place) {
        memcpy(recv + r * count, send, (size_t)count * sizeof(int));
        E(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, MPI_INT, root, c->comm));
    } else {
        E(MPI_Gather(send, count, MPI_INT, recv, count, MPI_INT, root, c->comm));
    }
    if (r == root)
        CC_CHECK_INTS(in_place ? "gather MPI_INT in place" : "gather MPI_INT", c, recv, expected,
                      count * p);
    free(send);
    free(recv);
    free(expected);
}

/* Senders send 2*count MPI_INT, the root receives count strided elements
 * per rank (or the other way round with `reverse`). */
static void test_gather_strided(const cc_comm *c, int count, int root, int reverse)
{
    int p = c->size, r = c->rank, i, j;
    int *send = cc_ints((size_t)count * CC_STRIDE), *recv = cc_ints((size_t)count * CC_STRIDE * p);
    int *expected = cc_ints((size_t)count * CC_STRIDE * p);
    cc_strided_fill(send, count, r, 1);
    if (!reverse) {
        for (j = 0; j < p; ++j)
            cc_strided_fill(expected + j * count * CC_STRIDE, count, j, 1);
        cc_set(recv, count * CC_STRIDE * p, CC_HOLE);
        for (i = 0; i < count; ++i) { /* pack own strided data as plain ints */
            send[2 * i] = cc_val(r, 2 * i, 1);
            send[2 * i + 1] = cc_val(r, 2 * i + 1, 1);
        }
        E(MPI_Gather(send, 2 * count, MPI_INT, recv, count, cc_strided, root, c->comm));
        if (r == root)
            CC_CHECK_INTS("gather MPI_INT -> strided", c, recv, expected, count * CC_STRIDE * p);
    } else {
        for (j = 0; j < p; ++j)
            for (i = 0; i < 2 * count; ++i)
                expected[j * 2 * count + i] = cc_val(j, i, 1);
        cc_set(recv, 2 * count * p, CC_UNSET);
        E(MPI_Gather(send, count, cc_strided, recv, 2 * count, MPI_INT, root, c->comm));
        if (r == root)
            CC_CHECK_INTS("gather strided -> MPI_INT", c, recv, expected, 2 * count * p);
    }
    free(send);
    free(recv);
    free(expected);
}

static void test_gatherv(const cc_comm *c, int count, int root, int in_place, int strided)
{
    int p = c->size, r = c->rank, i, j, total = 0;
    int unit = strided ? CC_STRIDE : 1; /* ints per element in memory */
    MPI_Datatype type = strided ? cc_strided : MPI_INT;
    int *counts = cc_ints((size_t)p), *displs = cc_ints((size_t)p);
    int *send, *recv, *expected;
    for (j = 0; j < p; ++j) {
        counts[j] = count == 0 ? 0 : count + j;
        total += counts[j] + 1;
    }
    /* reverse order, one element of gap after each block */
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
            cc_strided_fill(expected + displs[j] * unit, counts[j], j, 2);
        else
            for (i = 0; i < counts[j]; ++i)
                expected[displs[j] + i] = cc_val(j, i, 2);
    }
    if (strided)
        cc_strided_fill(send, counts[r], r, 2);
    else
        for (i = 0; i < counts[r]; ++i)
            send[i] = cc_val(r, i, 2);
    cc_set(recv, total * unit, strided ? CC_HOLE : CC_UNSET);
    if (r == root && in_place) {
        memcpy(recv + displs[r] * unit, expected + displs[r] * unit,
               (size_t)counts[r] * unit * sizeof(int));
        E(MPI_Gatherv(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, recv, counts, displs, type, root,
                      c->comm));
    } else {
        E(MPI_Gatherv(send, counts[r], type, recv, counts, displs, type, root, c->comm));
    }
    if (r == root)
        CC_CHECK_INTS(strided ? "gatherv strided" : "gatherv MPI_INT", c, recv, expected,
                      total * unit);
    free(counts);
    free(displs);
    free(send);
    free(recv);
    free(expected);
}

int main(int argc, char **argv)
{
    int ci, k, ri, roots[3], nroots;
    cc_setup(&argc, &argv);
    for (ci = 0; ci < cc_ncomms; ++ci) {
        const cc_comm *c = &cc_comms[ci];
        for (k = 0; k < CC_NCOUNTS; ++k) {
            if (cc_skip(ci, cc_counts[k]))
                continue;
            nroots = cc_roots(c->size, cc_counts[k], roots);
            for (ri = 0; ri < nroots; ++ri) {
                int n = cc_counts[k];
                test_gather(c, n, roots[ri], 0);
                test_gather(c, n, roots[ri], 1);
                test_gather_strided(c, n / 2, roots[ri], 0);
                test_gather_strided(c, n / 2, roots[ri], 1);
                test_gatherv(c, n / 4, roots[ri], 0, 0);
                test_gatherv(c, n / 4, roots[ri], 1, 0);
                test_gatherv(c, n / 4, roots[ri], 0, 1);
            }
        }
    }
    return cc_teardown();
}
