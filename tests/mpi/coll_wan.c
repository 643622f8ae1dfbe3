/* coll_wan.c — what the wide-area collectives (core/coll/wan.hpp) must keep
 * when a communicator spans clusters, checked on MPI_COMM_WORLD, on a split
 * whose clusters are interleaved in rank order, and on a reversed one:
 *   - Allreduce of doubles whose sum depends on the order of the additions
 *     gives every rank the same bits (and the right value within rounding);
 *     Reduce gives the root the right value;
 *   - Bcast, Allgather and Alltoall with different datatypes of the same
 *     signature at sender and receiver (the root sends contiguous blocks of
 *     ints, the others receive ints; in Allgather even ranks receive blocks
 *     of one contiguous element, odd ones ints, past IMPI_C_DATALEN; sizes
 *     not divisible by the number of processes), MPI_IN_PLACE;
 * Results are compared with point-to-point messages, not collectives.
 * Runs with any MPI and on one cluster as an ordinary collective test. */
#include <math.h>

#include "mpitest.h"

static double value(int rank, int i)
{
    static const double scale[3] = {1e16, 1.0, -1e16};
    return scale[rank % 3] * (1 + i % 5) + rank * 0.125 + i * 1e-3;
}

/* Every rank of comm holds the same n doubles, bit for bit. */
static void check_same_bits(MPI_Comm comm, const double *v, int n, const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank != 0) {
        MPI_Send(v, n, MPI_DOUBLE, 0, 7, comm);
        return;
    }
    double *other = mt_malloc((size_t)n * sizeof *other + 1);
    for (int r = 1; r < size; ++r) {
        MPI_Recv(other, n, MPI_DOUBLE, r, 7, comm, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; ++i)
            if (memcmp(&other[i], &v[i], sizeof(double)) != 0) {
                MT_FAIL("%s (n=%d): element %d differs between rank 0 (%.17g) and rank %d (%.17g)", what, n, i,
                        v[i], r, other[i]);
                break;
            }
    }
    free(other);
}

static void check_sum(const double *v, int n, int size, const char *what)
{
    for (int i = 0; i < n; ++i) {
        double exact = 0, magnitude = 0;
        for (int r = 0; r < size; ++r) {
            exact += value(r, i);
            magnitude += fabs(value(r, i));
        }
        if (fabs(v[i] - exact) > 4e-16 * magnitude * size + 1e-9) {
            MT_FAIL("%s: element %d is %.17g, expected %.17g", what, i, v[i], exact);
            return;
        }
    }
}

static void test_reductions(MPI_Comm comm, const char *name)
{
    static const int counts[] = {1, 7, 1001, 150001};
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
        const int n = counts[c];
        double *in = mt_malloc((size_t)n * sizeof *in), *out = mt_malloc((size_t)n * sizeof *out);
        for (int i = 0; i < n; ++i) in[i] = value(rank, i);
        char what[128];
        snprintf(what, sizeof what, "%s: Allreduce", name);
        MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
        check_same_bits(comm, out, n, what);
        check_sum(out, n, size, what);
        memcpy(out, in, (size_t)n * sizeof *out);
        snprintf(what, sizeof what, "%s: Allreduce in place", name);
        MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_SUM, comm);
        check_same_bits(comm, out, n, what);
        check_sum(out, n, size, what);
        const int roots[2] = {0, size - 1};
        for (int k = 0; k < 2; ++k) {
            memset(out, 0, (size_t)n * sizeof *out);
            snprintf(what, sizeof what, "%s: Reduce to %d", name, roots[k]);
            if (rank == roots[k] && k == 1) {
                memcpy(out, in, (size_t)n * sizeof *out);
                MPI_Reduce(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_SUM, roots[k], comm);
            } else {
                MPI_Reduce(in, rank == roots[k] ? out : NULL, n, MPI_DOUBLE, MPI_SUM, roots[k], comm);
            }
            if (rank == roots[k]) check_sum(out, n, size, what);
        }
        free(in);
        free(out);
    }
}

static int pattern(int seed, int i) { return seed * 1000003 + i * 7 + 1; }

static void test_moves(MPI_Comm comm, const char *name)
{
    static const int blocks[] = {1, 13, 4099, 262147}; /* ints; 4 per contiguous element when divisible */
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; ++b) {
        const int n = blocks[b];
        MPI_Datatype whole; /* n ints as one element */
        MPI_Type_contiguous(n, MPI_INT, &whole);
        MPI_Type_commit(&whole);
        /* Bcast from the first and the last rank: the root sends 1 x whole, the others receive n ints. */
        int *buf = mt_malloc((size_t)n * sizeof *buf);
        for (int root = 0; root < size; root += size - 1 > 0 ? size - 1 : 1) {
            for (int i = 0; i < n; ++i) buf[i] = rank == root ? pattern(root, i) : -1;
            if (rank == root)
                MPI_Bcast(buf, 1, whole, root, comm);
            else
                MPI_Bcast(buf, n, MPI_INT, root, comm);
            for (int i = 0; i < n; ++i)
                if (buf[i] != pattern(root, i)) {
                    MT_FAIL("%s: Bcast of %d ints from %d: element %d is %d, expected %d", name, n, root, i, buf[i],
                            pattern(root, i));
                    break;
                }
            if (size == 1) break;
        }
        free(buf);
        /* Allgather: send n ints; even ranks receive `whole` blocks, odd
         * ones n ints each (one signature, two datatypes); then in place. */
        int *mine = mt_malloc((size_t)n * sizeof *mine), *all = mt_malloc((size_t)n * size * sizeof *all);
        for (int i = 0; i < n; ++i) mine[i] = pattern(rank, i);
        for (int pass = 0; pass < 2; ++pass) {
            for (size_t i = 0; i < (size_t)n * size; ++i) all[i] = -1;
            if (pass == 0) {
                if (rank % 2 == 0)
                    MPI_Allgather(mine, n, MPI_INT, all, 1, whole, comm);
                else
                    MPI_Allgather(mine, n, MPI_INT, all, n, MPI_INT, comm);
            } else {
                memcpy(all + (size_t)rank * n, mine, (size_t)n * sizeof *mine);
                MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_INT, comm);
            }
            for (int r = 0; r < size; ++r)
                for (int i = 0; i < n; ++i)
                    if (all[(size_t)r * n + i] != pattern(r, i)) {
                        MT_FAIL("%s: Allgather%s of %d ints: block %d element %d is %d, expected %d", name,
                                pass ? " in place" : "", n, r, i, all[(size_t)r * n + i], pattern(r, i));
                        r = size;
                        break;
                    }
        }
        if (n > 5000 && size > 4) { /* keeps the all-to-all volume moderate */
            free(all);
            free(mine);
            MPI_Type_free(&whole);
            continue;
        }
        /* Alltoall: block for rank d from rank s holds pattern(s * size + d). */
        int *out = mt_malloc((size_t)n * size * sizeof *out);
        for (int d = 0; d < size; ++d)
            for (int i = 0; i < n; ++i) out[(size_t)d * n + i] = pattern(rank * size + d, i);
        MPI_Alltoall(out, 1, whole, all, n, MPI_INT, comm);
        for (int s = 0; s < size; ++s)
            for (int i = 0; i < n; ++i)
                if (all[(size_t)s * n + i] != pattern(s * size + rank, i)) {
                    MT_FAIL("%s: Alltoall of %d ints: block from %d element %d is %d, expected %d", name, n, s, i,
                            all[(size_t)s * n + i], pattern(s * size + rank, i));
                    s = size;
                    break;
                }
        free(out);
        free(all);
        free(mine);
        MPI_Type_free(&whole);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    test_reductions(MPI_COMM_WORLD, "world");
    test_moves(MPI_COMM_WORLD, "world");
    MPI_Barrier(MPI_COMM_WORLD);
    /* Every other rank: with clusters of consecutive ranks, each cluster is
     * split over both halves; reversed: the clusters' order is too. */
    MPI_Comm half, reversed;
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half);
    MPI_Comm_split(MPI_COMM_WORLD, 0, mt_size - mt_rank, &reversed);
    test_reductions(half, "every other rank");
    test_moves(half, "every other rank");
    test_reductions(reversed, "reversed");
    test_moves(reversed, "reversed");
    MPI_Barrier(reversed);
    MPI_Comm_free(&half);
    MPI_Comm_free(&reversed);
    return mt_finish();
}
