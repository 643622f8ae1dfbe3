/* MPI_Reduce_scatter and MPI_Reduce_scatter_block: every predefined op,
 * user ops commutative and not, a non-contiguous derived type, uneven and
 * zero counts, sizes up to > 64 KiB, with and without MPI_IN_PLACE, on
 * MPI_COMM_WORLD, a dup and a split. */
#include "coll_ops.h"

static void test_reduce_scatter(const cc_comm *c, int cs, int count, int in_place)
{
    int p = c->size, r = c->rank, j, total = 0, mine_at = 0;
    int *counts = cc_ints((size_t)p);
    size_t ext = cc_op_extent(cs);
    void *send, *recv, *expected;
    for (j = 0; j < p; ++j) {
        counts[j] = count == 0 ? 0 : (j % 3 == 1 ? 0 : count + j); /* some ranks get nothing */
        if (j < r)
            mine_at += counts[j];
        total += counts[j];
    }
    send = cc_op_alloc(cs, total);
    cc_op_fill(cs, r, total, send, 3);
    expected = cc_op_expected(cs, 0, p - 1, total, 3);
    if (in_place) {
        E(MPI_Reduce_scatter(MPI_IN_PLACE, send, counts, cc_op_type(cs), cc_op_op(cs), c->comm));
        recv = send;
    } else {
        recv = cc_op_alloc(cs, counts[r]);
        E(MPI_Reduce_scatter(send, recv, counts, cc_op_type(cs), cc_op_op(cs), c->comm));
    }
    CC_OP_CHECK(in_place ? "reduce_scatter in place" : "reduce_scatter", c, cs, recv,
                (char *)expected + ext * (size_t)mine_at, counts[r]);
    if (recv != send)
        free(recv);
    free(send);
    free(expected);
    free(counts);
}

static void test_reduce_scatter_block(const cc_comm *c, int cs, int count, int in_place)
{
    int p = c->size, r = c->rank, total = count * p;
    size_t ext = cc_op_extent(cs);
    void *send = cc_op_alloc(cs, total), *recv, *expected;
    cc_op_fill(cs, r, total, send, 4);
    expected = cc_op_expected(cs, 0, p - 1, total, 4);
    if (in_place) {
        E(MPI_Reduce_scatter_block(MPI_IN_PLACE, send, count, cc_op_type(cs), cc_op_op(cs),
                                   c->comm));
        recv = send;
    } else {
        recv = cc_op_alloc(cs, count);
        E(MPI_Reduce_scatter_block(send, recv, count, cc_op_type(cs), cc_op_op(cs), c->comm));
    }
    CC_OP_CHECK(in_place ? "reduce_scatter_block in place" : "reduce_scatter_block", c, cs, recv,
                (char *)expected + ext * (size_t)count * r, count);
    if (recv != send)
        free(recv);
    free(send);
    free(expected);
}

int main(int argc, char **argv)
{
    int ci, cs, k;
    cc_setup(&argc, &argv);
    for (ci = 0; ci < cc_ncomms; ++ci) {
        const cc_comm *c = &cc_comms[ci];
        for (cs = 0; cs < OP_NCASES; ++cs) {
            for (k = 0; k < CC_NCOUNTS; ++k) {
                int n = cc_counts[k];
                if (!cc_op_selected(ci, cs, n))
                    continue;
                if (n > 1000)
                    n /= c->size; /* the whole vector is > 64 KiB */
                test_reduce_scatter(c, cs, n, 0);
                test_reduce_scatter(c, cs, n, 1);
                test_reduce_scatter_block(c, cs, n, 0);
                test_reduce_scatter_block(c, cs, n, 1);
            }
        }
    }
    return cc_teardown();
}
