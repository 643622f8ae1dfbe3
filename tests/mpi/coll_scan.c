/* MPI_Scan and MPI_Exscan: every predefined op, user ops commutative and
 * not (prefixes must be in rank order), a non-contiguous derived type,
 * sizes 0, 1, small, > 64 KiB, with and without MPI_IN_PLACE, on
 * MPI_COMM_WORLD, a dup and a split.  Exscan's result on rank 0 is
 * undefined and not checked. */
#include "coll_ops.h"

static void test_scan(const cc_comm *c, int cs, int count, int in_place, int exclusive)
{
    int r = c->rank;
    void *send = cc_op_alloc(cs, count), *recv = cc_op_alloc(cs, count), *expected = NULL;
    const char *what;
    cc_op_fill(cs, r, count, send, 5);
    if (in_place)
        memcpy(recv, send, cc_op_extent(cs) * (size_t)count);
    if (exclusive) {
        E(MPI_Exscan(in_place ? MPI_IN_PLACE : send, recv, count, cc_op_type(cs), cc_op_op(cs),
                     c->comm));
        if (r > 0)
            expected = cc_op_expected(cs, 0, r - 1, count, 5);
        what = in_place ? "exscan in place" : "exscan";
    } else {
        E(MPI_Scan(in_place ? MPI_IN_PLACE : send, recv, count, cc_op_type(cs), cc_op_op(cs),
                   c->comm));
        expected = cc_op_expected(cs, 0, r, count, 5);
        what = in_place ? "scan in place" : "scan";
    }
    if (expected) {
        CC_OP_CHECK(what, c, cs, recv, expected, count);
        free(expected);
    }
    free(send);
    free(recv);
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
                test_scan(c, cs, n, 0, 0);
                test_scan(c, cs, n, 1, 0);
                test_scan(c, cs, n, 0, 1);
                test_scan(c, cs, n, 1, 1);
            }
        }
    }
    return cc_teardown();
}
