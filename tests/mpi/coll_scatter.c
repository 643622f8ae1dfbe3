/* MPI_Scatter and MPI_Scatterv: sizes 0, 1, small, > 64 KiB, several roots,
 * MPI_IN_PLACE at the root, MPI_INT and a non-contiguous derived type (also
 * mixed with MPI_INT), on MPI_COMM_WORLD, a dup and a split.  Scatterv takes
 * the blocks in reverse rank order with gaps. */
#include "coll_common.h"

static void test_scatter(const cc_comm *c, int count, int root, int in_place)
{
    int p = c->size, r = c->rank, i, j;
    int *send = cc_ints((size_t)count * p), *recv = cc_ints((size_t)count * p);
    int *expected = cc_ints((size_t)count);
    for (j = 0; j < p; ++j)
        for (i = 0; i < count; ++i)
            send[j * count + i] = r == root ? cc_val(j, i, count + root) : CC_UNSET;
    for (i = 0; i < count; ++i)
        expected[i] = cc_val(r, i, count + root);
    cc_set(recv, count * p, CC_UNSET);
    if (r == root && in_place) {
        E(MPI_Scatter(send, count, MPI_INT, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root, c->comm));
        CC_CHECK_INTS("scatter in place (root keeps its block)", c, send + r * count, expected,
                      count);
    } else {
        E(MPI_Scatter(send, count, MPI_INT, recv, count, MPI_INT, root, c->comm));
        CC_CHECK_INTS("scatter MPI_INT", c, recv, expected, count);
    }
    free(send);
    free(recv);
    free(expected);
}

/* The root sends count strided elements per rank, the others receive
 * 2*count MPI_INT (or the other way round with `reverse`). */
static void test_scatter_strided(const cc_comm *c, int count, int root, int reverse)
{
    int p = c->size, r = c->rank, i, j;
    int *send = cc_ints((size_t)count * CC_STRIDE * p), *recv = cc_ints((size_t)count * CC_STRIDE);
    int *expected = cc_ints((size_t)count * CC_STRIDE);
    if (!reverse) {
        for (j = 0; j < p; ++j)
            cc_strided_fill(send + j * count * CC_STRIDE, count, j, 4);
        for (i = 0; i < 2 * count; ++i)
            expected[i] = cc_val(r, i, 4);
        cc_set(recv, 2 * count, CC_UNSET);
        E(MPI_Scatter(send, count, cc_strided, recv, 2 * count, MPI_INT, root, c->comm));
        CC_CHECK_INTS("scatter strided -> MPI_INT", c, recv, expected, 2 * count);
    } else {
        for (j = 0; j < p; ++j)
            for (i = 0; i < 2 * count; ++i)
                send[j * 2 * count + i] = cc_val(j, i, 4);
        cc_strided_fill(expected, count, r, 4);
        cc_set(recv, count * CC_STRIDE, CC_HOLE);
        E(MPI_Scatter(send, 2 * count, MPI_INT, recv, count, cc_strided, root, c->comm));
        CC_CHECK_INTS("scatter MPI_INT -> strided", c, recv, expected, count * CC_STRIDE);
    }
    free(send);
    free(recv);
    free(expected);
}

static void test_scatterv(const cc_comm *c, int count, int root, int in_place, int strided)
{
    int p = c->size, r = c->rank, i, j, total = 0;
    int unit = strided ? CC_STRIDE : 1;
    MPI_Datatype type = strided ? cc_strided : MPI_INT;
    int *counts = cc_ints((size_t)p), *displs = cc_ints((size_t)p);
    int *send, *recv, *expected;
    for (j = 0; j < p; ++j) {
        counts[j] = count == 0 ? 0 : count + 2 * j;
        total += counts[j] + 1;
    }
    for (j = 0, i = total; j < p; ++j) {
        i -= counts[j] + 1;
        displs[j] = i;
    }
    send = cc_ints((size_t)total * unit);
    cc_set(send, total * unit, CC_HOLE);
    for (j = 0; j < p; ++j) {
        if (strided)
            cc_strided_fill(send + displs[j] * unit, counts[j], j, 6);
        else
            for (i = 0; i < counts[j]; ++i)
                send[displs[j] + i] = cc_val(j, i, 6);
    }
    recv = cc_ints((size_t)(counts[r] + 1) * unit);
    expected = cc_ints((size_t)(counts[r] + 1) * unit);
    if (strided)
        cc_strided_fill(expected, counts[r], r, 6);
    else
        for (i = 0; i < counts[r]; ++i)
            expected[i] = cc_val(r, i, 6);
    cc_set(recv, counts[r] * unit, strided ? CC_HOLE : CC_UNSET);
    if (r == root && in_place) {
        E(MPI_Scatterv(send, counts, displs, type, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root,
                       c->comm));
        CC_CHECK_INTS("scatterv in place (root keeps its block)", c, send + displs[r] * unit,
                      expected, counts[r] * unit);
    } else {
        E(MPI_Scatterv(send, counts, displs, type, recv, counts[r], type, root, c->comm));
        CC_CHECK_INTS(strided ? "scatterv strided" : "scatterv MPI_INT", c, recv, expected,
                      counts[r] * unit);
    }
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
            int n = cc_counts[k];
            nroots = cc_roots(c->size, n, roots);
            for (ri = 0; ri < nroots; ++ri) {
                test_scatter(c, n, roots[ri], 0);
                test_scatter(c, n, roots[ri], 1);
                test_scatter_strided(c, n / 2, roots[ri], 0);
                test_scatter_strided(c, n / 2, roots[ri], 1);
                test_scatterv(c, n / 4, roots[ri], 0, 0);
                test_scatterv(c, n / 4, roots[ri], 1, 0);
                test_scatterv(c, n / 4, roots[ri], 0, 1);
            }
        }
    }
    return cc_teardown();
}
