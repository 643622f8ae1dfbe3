/* MPI_Bcast: every size (0, 1, small, > 64 KiB), several roots, on
 * MPI_COMM_WORLD, a dup and a split; with MPI_INT, MPI_DOUBLE, a
 * non-contiguous derived type (its holes must stay untouched), and with the
 * root and the others describing the same data with different datatypes of
 * the same type signature. */
#include "coll_common.h"

static void test_int(const cc_comm *c, int count, int root)
{
    int *buf = cc_ints((size_t)count), *expected = cc_ints((size_t)count), i;
    for (i = 0; i < count; ++i)
        expected[i] = cc_val(root, i, count);
    if (c->rank == root)
        memcpy(buf, expected, (size_t)count * sizeof(int));
    else
        cc_set(buf, count, CC_UNSET);
    E(MPI_Bcast(buf, count, MPI_INT, root, c->comm));
    CC_CHECK_INTS("bcast MPI_INT", c, buf, expected, count);
    free(buf);
    free(expected);
}

static void test_double(const cc_comm *c, int count, int root)
{
    double *buf = (double *)mt_malloc((size_t)count * sizeof(double));
    int i;
    for (i = 0; i < count; ++i)
        buf[i] = c->rank == root ? cc_val(root, i, 3) + 0.5 : -1.0;
    E(MPI_Bcast(buf, count, MPI_DOUBLE, root, c->comm));
    for (i = 0; i < count; ++i) {
        if (buf[i] != cc_val(root, i, 3) + 0.5) {
            MT_FAIL("bcast MPI_DOUBLE on %s: element %d of %d, expected %g got %g", c->name, i,
                    count, cc_val(root, i, 3) + 0.5, buf[i]);
            break;
        }
    }
    free(buf);
}

static void test_strided(const cc_comm *c, int count, int root)
{
    int *buf = cc_ints((size_t)count * CC_STRIDE), *expected = cc_ints((size_t)count * CC_STRIDE);
    cc_strided_fill(expected, count, root, 5);
    if (c->rank == root)
        memcpy(buf, expected, (size_t)count * CC_STRIDE * sizeof(int));
    else
        cc_set(buf, count * CC_STRIDE, CC_HOLE);
    E(MPI_Bcast(buf, count, cc_strided, root, c->comm));
    CC_CHECK_INTS("bcast strided type", c, buf, expected, count * CC_STRIDE);
    free(buf);
    free(expected);
}

/* Root: count elements of 5 contiguous ints; others: 5*count MPI_INT.  Then
 * root: 2*count MPI_INT; others: count strided elements. */
static void test_mixed(const cc_comm *c, int count, int root)
{
    MPI_Datatype five;
    int n = 5 * count, *buf = cc_ints((size_t)n), *expected = cc_ints((size_t)n), i;
    E(MPI_Type_contiguous(5, MPI_INT, &five));
    E(MPI_Type_commit(&five));
    for (i = 0; i < n; ++i)
        expected[i] = cc_val(root, i, 9);
    if (c->rank == root) {
        memcpy(buf, expected, (size_t)n * sizeof(int));
        E(MPI_Bcast(buf, count, five, root, c->comm));
    } else {
        cc_set(buf, n, CC_UNSET);
        E(MPI_Bcast(buf, n, MPI_INT, root, c->comm));
    }
    CC_CHECK_INTS("bcast 5-int type at root, MPI_INT elsewhere", c, buf, expected, n);
    E(MPI_Type_free(&five));
    free(buf);
    free(expected);

    buf = cc_ints((size_t)count * CC_STRIDE);
    expected = cc_ints((size_t)count * CC_STRIDE);
    cc_strided_fill(expected, count, root, 11);
    if (c->rank == root) {
        for (i = 0; i < count; ++i) {
            buf[2 * i] = expected[CC_STRIDE * i];
            buf[2 * i + 1] = expected[CC_STRIDE * i + 2];
        }
        E(MPI_Bcast(buf, 2 * count, MPI_INT, root, c->comm));
    } else {
        cc_set(buf, count * CC_STRIDE, CC_HOLE);
        E(MPI_Bcast(buf, count, cc_strided, root, c->comm));
        CC_CHECK_INTS("bcast MPI_INT at root, strided elsewhere", c, buf, expected,
                      count * CC_STRIDE);
    }
    free(buf);
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
                test_int(c, cc_counts[k], roots[ri]);
                test_double(c, cc_counts[k], roots[ri]);
                test_strided(c, cc_counts[k], roots[ri]);
                test_mixed(c, cc_counts[k] / 2, roots[ri]);
            }
        }
    }
    return cc_teardown();
}
