/* inter_common.h — the body of the intercommunicator collective tests
 * (inter_blocking.c, inter_nonblocking.c): every collective of MPI-3.1
 * 5.2.2 on intercommunicators built from MPI_COMM_WORLD split in two
 * (first k ranks vs the rest, both ways round, and interleaved), with exact
 * checks, MPI_ROOT / MPI_PROC_NULL roots in either group, a non-commutative
 * user op, zero counts and derived datatypes.  INTER_NB selects the blocking
 * calls (0) or the non-blocking ones followed by MPI_Wait (1).
 */
#ifndef GRIDMPI_TESTS_INTER_COMMON_H
#define GRIDMPI_TESTS_INTER_COMMON_H

#include "mpitest.h"

#if INTER_NB
#define RUN(blocking, nonblocking, ...)                                        \
    do {                                                                       \
        MPI_Request rq_ = MPI_REQUEST_NULL;                                    \
        E(nonblocking(__VA_ARGS__, &rq_));                                     \
        E(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                  \
        CHECK(rq_ == MPI_REQUEST_NULL, "%s: request not freed by MPI_Wait", #nonblocking); \
    } while (0)
#else
#define RUN(blocking, nonblocking, ...) E(blocking(__VA_ARGS__))
#endif

#define SENTINEL (-7)

/* The intercommunicator under test and where this process sits in it. */
typedef struct {
    MPI_Comm comm;
    int group;  /* 0 or 1 */
    int rank, size, rsize;
    const char *name;
} Inter;

/* ---- a non-commutative op: composition of affine maps mod 1009 -------- */
/* An element (a, b) is x -> a x + b; x op y = "x then y". */
#define AFF_P 1009
static void aff_combine(const int *x, const int *y, int *out)
{
    int a = (int)(((long long)x[0] * y[0]) % AFF_P);
    int b = (int)(((long long)y[0] * x[1] + y[1]) % AFF_P);
    out[0] = a;
    out[1] = b;
}
static void aff_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int *x = (int *)in, *y = (int *)inout, i;
    (void)type;
    for (i = 0; i < *len; ++i)
        aff_combine(x + 2 * i, y + 2 * i, y + 2 * i);
}
static void aff_value(int group, int rank, int k, int *out)
{
    out[0] = (group * 7 + rank * 3 + k) % 5 + 2;
    out[1] = (group * 11 + rank * 5 + 2 * k + 1) % AFF_P;
}
/* Expected reduction over ranks 0..n-1 of `group` of element k. */
static void aff_expected(int group, int n, int k, int *out)
{
    int v[2], i;
    aff_value(group, 0, k, out);
    for (i = 1; i < n; ++i) {
        aff_value(group, i, k, v);
        aff_combine(out, v, out);
    }
}

static MPI_Op aff;
static MPI_Op strided_sum;
static void strided_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type);
static MPI_Datatype aff_type;  /* 2 contiguous ints */
static MPI_Datatype stride2;   /* 3 ints, every other one (extent 5 ints) */

static int val(int group, int rank, int i) { return 100000 * group + 1000 * rank + i + 1; }

/* ---- Barrier ------------------------------------------------------------ */
static void t_barrier(const Inter *t)
{
    int i;
    for (i = 0; i < 3; ++i)
        RUN(MPI_Barrier, MPI_Ibarrier, t->comm);
}

/* ---- Bcast ----------------------------------------------------------------
 * For each root (rank 0 and the last rank of either group): 5 ints, 0 ints,
 * and 2 elements of the strided type at the root received as 6 plain ints. */
static void t_bcast(const Inter *t)
{
    int rg, which, i;
    /* MPICH 4.0.2: MPI_Ibcast on an intercommunicator with a root other
     * than 0 leaves the receivers' buffers untouched or fails an assertion
     * (r < comm_ptr->remote_size); only root 0 there. */
    const int roots = INTER_NB && MT_IS_MPICH ? 1 : 2;
    for (rg = 0; rg < 2; ++rg) {
        for (which = 0; which < roots; ++which) {
            int gsize = rg == t->group ? t->size : t->rsize;
            int root = which ? gsize - 1 : 0;
            int buf[10];
            if (rg == t->group) {
                int am_root = t->rank == root;
                int r = am_root ? MPI_ROOT : MPI_PROC_NULL;
                for (i = 0; i < 10; ++i)
                    buf[i] = am_root ? val(rg, root, i) : SENTINEL;
                RUN(MPI_Bcast, MPI_Ibcast, buf, 5, MPI_INT, r, t->comm);
                RUN(MPI_Bcast, MPI_Ibcast, buf, 0, MPI_INT, r, t->comm);
                RUN(MPI_Bcast, MPI_Ibcast, buf, 2, stride2, r, t->comm);
                for (i = 0; i < 10; ++i)
                    CHECK_INT("bcast: buffer at root's group", am_root ? val(rg, root, i) : SENTINEL, buf[i]);
            } else {
                int got[6];
                for (i = 0; i < 10; ++i) buf[i] = SENTINEL;
                RUN(MPI_Bcast, MPI_Ibcast, buf, 5, MPI_INT, root, t->comm);
                for (i = 0; i < 10; ++i)
                    CHECK_INT("bcast: 5 ints", i < 5 ? val(rg, root, i) : SENTINEL, buf[i]);
                RUN(MPI_Bcast, MPI_Ibcast, buf, 0, MPI_INT, root, t->comm);
                CHECK_INT("bcast: 0 ints leaves the buffer", val(rg, root, 0), buf[0]);
                for (i = 0; i < 6; ++i) got[i] = SENTINEL;
                RUN(MPI_Bcast, MPI_Ibcast, got, 6, MPI_INT, root, t->comm);
                /* root sent elements 0,2,4 and 5,7,9 of its buffer */
                for (i = 0; i < 6; ++i)
                    CHECK_INT("bcast: strided type -> ints", val(rg, root, (i < 3 ? 2 * i : 5 + 2 * (i - 3))), got[i]);
            }
        }
    }
}

/* ---- Gather, Gatherv, Scatter, Scatterv ---------------------------------- */
static void t_rooted(const Inter *t)
{
    int rg, which, i, k;
    for (rg = 0; rg < 2; ++rg) {
        for (which = 0; which < 2; ++which) {
            int gsize = rg == t->group ? t->size : t->rsize;
            int root = which ? gsize - 1 : 0;
            if (rg == t->group) {
                int am_root = t->rank == root;
                int r = am_root ? MPI_ROOT : MPI_PROC_NULL;
                int m = t->rsize;
                int *rb = (int *)mt_malloc(sizeof(int) * (size_t)(m * 8 + 8));
                int *counts = (int *)mt_malloc(sizeof(int) * (size_t)m);
                int *displs = (int *)mt_malloc(sizeof(int) * (size_t)m);
                int pos;
                /* Gather: 3 ints from each remote process. */
                for (i = 0; i < m * 3; ++i) rb[i] = SENTINEL;
                RUN(MPI_Gather, MPI_Igather, NULL, 0, MPI_INT, rb, 3, MPI_INT, r, t->comm);
                if (am_root)
                    for (i = 0; i < m; ++i)
                        for (k = 0; k < 3; ++k)
                            CHECK_INT("gather at root", val(1 - rg, i, k), rb[3 * i + k]);
                else
                    CHECK_INT("gather off root leaves recvbuf", SENTINEL, rb[0]);
                /* Gatherv: remote rank i sends i % 3 ints, placed in reverse
                 * order with a gap of one. */
                pos = 0;
                for (i = m - 1; i >= 0; --i) {
                    counts[i] = i % 3;
                    displs[i] = pos;
                    pos += counts[i] + 1;
                }
                for (i = 0; i < pos; ++i) rb[i] = SENTINEL;
                RUN(MPI_Gatherv, MPI_Igatherv, NULL, 0, MPI_INT, rb, counts, displs, MPI_INT, r, t->comm);
                if (am_root) {
                    for (i = 0; i < m; ++i) {
                        for (k = 0; k < counts[i]; ++k)
                            CHECK_INT("gatherv at root", val(1 - rg, i, 10 + k), rb[displs[i] + k]);
                        CHECK_INT("gatherv gap", SENTINEL, rb[displs[i] + counts[i]]);
                    }
                }
                /* Scatter: 2 ints to each remote process. */
                for (i = 0; i < m * 2; ++i) rb[i] = am_root ? val(rg, i / 2, i % 2 + 20) : SENTINEL;
                RUN(MPI_Scatter, MPI_Iscatter, rb, 2, MPI_INT, NULL, 0, MPI_INT, r, t->comm);
                /* Scatterv: remote rank i gets (i + 1) % 3 ints from a
                 * reversed layout. */
                pos = 0;
                for (i = m - 1; i >= 0; --i) {
                    counts[i] = (i + 1) % 3;
                    displs[i] = pos;
                    for (k = 0; k < counts[i]; ++k) rb[pos + k] = val(rg, i, 30 + k);
                    pos += counts[i];
                }
                RUN(MPI_Scatterv, MPI_Iscatterv, rb, counts, displs, MPI_INT, NULL, 0, MPI_INT, r, t->comm);
                free(rb);
                free(counts);
                free(displs);
            } else {
                int sb[4], rb[4];
                for (k = 0; k < 4; ++k) sb[k] = val(t->group, t->rank, k);
                RUN(MPI_Gather, MPI_Igather, sb, 3, MPI_INT, NULL, 0, MPI_INT, root, t->comm);
                for (k = 0; k < 4; ++k) sb[k] = val(t->group, t->rank, 10 + k);
                RUN(MPI_Gatherv, MPI_Igatherv, sb, t->rank % 3, MPI_INT, NULL, NULL, NULL, MPI_INT, root, t->comm);
                for (k = 0; k < 4; ++k) rb[k] = SENTINEL;
                RUN(MPI_Scatter, MPI_Iscatter, NULL, 0, MPI_INT, rb, 2, MPI_INT, root, t->comm);
                for (k = 0; k < 4; ++k)
                    CHECK_INT("scatter", k < 2 ? val(1 - t->group, t->rank, 20 + k) : SENTINEL, rb[k]);
                for (k = 0; k < 4; ++k) rb[k] = SENTINEL;
                RUN(MPI_Scatterv, MPI_Iscatterv, NULL, NULL, NULL, MPI_INT, rb, (t->rank + 1) % 3, MPI_INT, root, t->comm);
                for (k = 0; k < 4; ++k)
                    CHECK_INT("scatterv", k < (t->rank + 1) % 3 ? val(1 - t->group, t->rank, 30 + k) : SENTINEL, rb[k]);
            }
        }
    }
}

/* ---- Allgather, Allgatherv ------------------------------------------------ */
static void t_allgather(const Inter *t)
{
    int m = t->rsize, i, k, pos;
    int sb[4];
    int *rb = (int *)mt_malloc(sizeof(int) * (size_t)(m * 6 + 4));
    int *counts = (int *)mt_malloc(sizeof(int) * (size_t)m);
    int *displs = (int *)mt_malloc(sizeof(int) * (size_t)m);
    for (k = 0; k < 4; ++k) sb[k] = val(t->group, t->rank, k);
    for (i = 0; i < m * 2; ++i) rb[i] = SENTINEL;
    RUN(MPI_Allgather, MPI_Iallgather, sb, 2, MPI_INT, rb, 2, MPI_INT, t->comm);
    for (i = 0; i < m; ++i)
        for (k = 0; k < 2; ++k)
            CHECK_INT("allgather", val(1 - t->group, i, k), rb[2 * i + k]);
    /* Zero counts everywhere. */
    RUN(MPI_Allgather, MPI_Iallgather, sb, 0, MPI_INT, rb, 0, MPI_INT, t->comm);
    CHECK_INT("allgather of 0 leaves the buffer", val(1 - t->group, 0, 0), rb[0]);
    /* Allgatherv: remote rank i sends (i + group) % 3 ints; reversed layout
     * with a gap of one after each block. */
    for (k = 0; k < 4; ++k) sb[k] = val(t->group, t->rank, 40 + k);
    pos = 0;
    for (i = m - 1; i >= 0; --i) {
        counts[i] = (i + 1 - t->group) % 3;
        displs[i] = pos;
        pos += counts[i] + 1;
    }
    for (i = 0; i < pos; ++i) rb[i] = SENTINEL;
    RUN(MPI_Allgatherv, MPI_Iallgatherv, sb, (t->rank + t->group) % 3, MPI_INT, rb, counts, displs,
        MPI_INT, t->comm);
    for (i = 0; i < m; ++i) {
        for (k = 0; k < counts[i]; ++k)
            CHECK_INT("allgatherv", val(1 - t->group, i, 40 + k), rb[displs[i] + k]);
        CHECK_INT("allgatherv gap", SENTINEL, rb[displs[i] + counts[i]]);
    }
    free(rb);
    free(counts);
    free(displs);
}

/* ---- Alltoall, Alltoallv, Alltoallw --------------------------------------- */
static int a2a(int group, int from, int to, int k) { return 1000000 * group + 10000 * from + 100 * to + k; }

static void t_alltoall(const Inter *t)
{
    int m = t->rsize, i, k, pos;
    int *sb = (int *)mt_malloc(sizeof(int) * (size_t)(m * 6 + 4));
    int *rb = (int *)mt_malloc(sizeof(int) * (size_t)(m * 6 + 4));
    int *sc = (int *)mt_malloc(sizeof(int) * (size_t)m), *sd = (int *)mt_malloc(sizeof(int) * (size_t)m);
    int *rc = (int *)mt_malloc(sizeof(int) * (size_t)m), *rd = (int *)mt_malloc(sizeof(int) * (size_t)m);
    MPI_Datatype *st = (MPI_Datatype *)mt_malloc(sizeof(MPI_Datatype) * (size_t)m);
    MPI_Datatype *rt = (MPI_Datatype *)mt_malloc(sizeof(MPI_Datatype) * (size_t)m);

    for (i = 0; i < m; ++i)
        for (k = 0; k < 2; ++k) sb[2 * i + k] = a2a(t->group, t->rank, i, k);
    for (i = 0; i < m * 2; ++i) rb[i] = SENTINEL;
    RUN(MPI_Alltoall, MPI_Ialltoall, sb, 2, MPI_INT, rb, 2, MPI_INT, t->comm);
    for (i = 0; i < m; ++i)
        for (k = 0; k < 2; ++k)
            CHECK_INT("alltoall", a2a(1 - t->group, i, t->rank, k), rb[2 * i + k]);

    /* Alltoallv: (g, r) sends (r + j) % 3 ints to remote j, reversed layouts. */
    pos = 0;
    for (i = m - 1; i >= 0; --i) {
        sc[i] = (t->rank + i) % 3;
        sd[i] = pos;
        for (k = 0; k < sc[i]; ++k) sb[pos + k] = a2a(t->group, t->rank, i, 50 + k);
        pos += sc[i];
    }
    pos = 0;
    for (i = m - 1; i >= 0; --i) {
        rc[i] = (i + t->rank) % 3;
        rd[i] = pos;
        pos += rc[i] + 1;
    }
    for (i = 0; i < pos; ++i) rb[i] = SENTINEL;
    RUN(MPI_Alltoallv, MPI_Ialltoallv, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, t->comm);
    for (i = 0; i < m; ++i) {
        for (k = 0; k < rc[i]; ++k)
            CHECK_INT("alltoallv", a2a(1 - t->group, i, t->rank, 50 + k), rb[rd[i] + k]);
        CHECK_INT("alltoallv gap", SENTINEL, rb[rd[i] + rc[i]]);
    }

    /* Alltoallw: to remote j one element of aff_type (2 ints) when j is
     * even, else 2 MPI_INT; received as 2 MPI_INT or one aff_type the other
     * way round; byte displacements, reversed. */
    for (i = 0; i < m; ++i) {
        int at = (m - 1 - i) * 2;
        sc[i] = i % 2 ? 2 : 1;
        st[i] = i % 2 ? MPI_INT : aff_type;
        sd[i] = at * (int)sizeof(int);
        for (k = 0; k < 2; ++k) sb[at + k] = a2a(t->group, t->rank, i, 60 + k);
        rc[i] = t->rank % 2 ? 1 : 2;
        rt[i] = t->rank % 2 ? aff_type : MPI_INT;
        rd[i] = (m - 1 - i) * 3 * (int)sizeof(int);
    }
    for (i = 0; i < m * 3; ++i) rb[i] = SENTINEL;
    RUN(MPI_Alltoallw, MPI_Ialltoallw, sb, sc, sd, st, rb, rc, rd, rt, t->comm);
    for (i = 0; i < m; ++i) {
        int at = (m - 1 - i) * 3;
        for (k = 0; k < 2; ++k)
            CHECK_INT("alltoallw", a2a(1 - t->group, i, t->rank, 60 + k), rb[at + k]);
        CHECK_INT("alltoallw gap", SENTINEL, rb[at + 2]);
    }
    free(sb); free(rb); free(sc); free(sd); free(rc); free(rd); free(st); free(rt);
}

/* ---- Reduce, Allreduce, Reduce_scatter(_block) ---------------------------- */
#define NRED 3
static void t_reduce(const Inter *t)
{
    int rg, which, i, k;
    int sb[2 * NRED], rb[2 * NRED + 2], e[2];
    for (k = 0; k < NRED; ++k) aff_value(t->group, t->rank, k, sb + 2 * k);
    for (rg = 0; rg < 2; ++rg) {
        for (which = 0; which < 2; ++which) {
            int gsize = rg == t->group ? t->size : t->rsize;
            int root = which ? gsize - 1 : 0;
            for (i = 0; i < 2 * NRED + 2; ++i) rb[i] = SENTINEL;
            if (rg == t->group) {
                int am_root = t->rank == root;
                int r = am_root ? MPI_ROOT : MPI_PROC_NULL;
                /* sendbuf is not significant here (MPICH insists on a non-NULL one) */
                RUN(MPI_Reduce, MPI_Ireduce, sb, rb, NRED, aff_type, aff, r, t->comm);
                for (k = 0; k < NRED; ++k) {
                    if (!am_root) {
                        CHECK_INT("reduce off root leaves recvbuf", SENTINEL, rb[2 * k]);
                        continue;
                    }
                    aff_expected(1 - t->group, t->rsize, k, e);
                    CHECK_INT("reduce (non-commutative) a", e[0], rb[2 * k]);
                    CHECK_INT("reduce (non-commutative) b", e[1], rb[2 * k + 1]);
                }
                CHECK_INT("reduce: past the end", SENTINEL, rb[2 * NRED]);
                RUN(MPI_Reduce, MPI_Ireduce, sb, rb, 1, MPI_INT, MPI_SUM, r, t->comm);
                if (am_root)
                    CHECK_INT("reduce MPI_SUM", t->rsize * (t->rsize - 1) / 2 + 5 * t->rsize, rb[0]);
                RUN(MPI_Reduce, MPI_Ireduce, sb, rb, 0, MPI_INT, MPI_SUM, r, t->comm);
            } else {
                int one = t->rank + 5;
                RUN(MPI_Reduce, MPI_Ireduce, sb, NULL, NRED, aff_type, aff, root, t->comm);
                RUN(MPI_Reduce, MPI_Ireduce, &one, NULL, 1, MPI_INT, MPI_SUM, root, t->comm);
                RUN(MPI_Reduce, MPI_Ireduce, &one, NULL, 0, MPI_INT, MPI_SUM, root, t->comm);
            }
        }
    }

    /* Allreduce: each group gets the other's reduction. */
    for (i = 0; i < 2 * NRED + 2; ++i) rb[i] = SENTINEL;
    RUN(MPI_Allreduce, MPI_Iallreduce, sb, rb, NRED, aff_type, aff, t->comm);
    for (k = 0; k < NRED; ++k) {
        aff_expected(1 - t->group, t->rsize, k, e);
        CHECK_INT("allreduce (non-commutative) a", e[0], rb[2 * k]);
        CHECK_INT("allreduce (non-commutative) b", e[1], rb[2 * k + 1]);
    }
    CHECK_INT("allreduce: past the end", SENTINEL, rb[2 * NRED]);
    {
        int one = t->rank + 1, got = SENTINEL;
        RUN(MPI_Allreduce, MPI_Iallreduce, &one, &got, 1, MPI_INT, MPI_MAX, t->comm);
        CHECK_INT("allreduce MPI_MAX", t->rsize, got);
        RUN(MPI_Allreduce, MPI_Iallreduce, &one, &got, 0, MPI_INT, MPI_MAX, t->comm);
        CHECK_INT("allreduce of 0 leaves recvbuf", t->rsize, got);
    }
}

/* Reduce_scatter: both groups reduce T = size_0 * size_1 elements of
 * aff_type; group g's counts are T/n spread unevenly (first +1, last -1). */
static void counts_for(int n, int total, int *counts)
{
    int i;
    for (i = 0; i < n; ++i) counts[i] = total / n;
    if (n > 1) {
        counts[0] += 1;
        counts[n - 1] -= 1;
    }
}

static void t_reduce_scatter(const Inter *t)
{
    int T = t->size * t->rsize, i, k, mine_at = 0, c;
    int *sb = (int *)mt_malloc(sizeof(int) * (size_t)(2 * T));
    int *rb = (int *)mt_malloc(sizeof(int) * (size_t)(2 * T + 2));
    int *counts = (int *)mt_malloc(sizeof(int) * (size_t)t->size);
    int e[2];
    for (k = 0; k < T; ++k) aff_value(t->group, t->rank, k, sb + 2 * k);
    counts_for(t->size, T, counts);
    for (i = 0; i < t->rank; ++i) mine_at += counts[i];
    for (i = 0; i < 2 * T + 2; ++i) rb[i] = SENTINEL;
    RUN(MPI_Reduce_scatter, MPI_Ireduce_scatter, sb, rb, counts, aff_type, aff, t->comm);
    for (k = 0; k < counts[t->rank]; ++k) {
        aff_expected(1 - t->group, t->rsize, mine_at + k, e);
        CHECK_INT("reduce_scatter a", e[0], rb[2 * k]);
        CHECK_INT("reduce_scatter b", e[1], rb[2 * k + 1]);
    }
    CHECK_INT("reduce_scatter: past my block", SENTINEL, rb[2 * counts[t->rank]]);

    /* Reduce_scatter_block: 2 * rsize elements each (2 * T per group). */
    c = 2 * t->rsize;
    {
        int *sb2 = (int *)mt_malloc(sizeof(int) * (size_t)(2 * T));
        for (k = 0; k < 2 * T; ++k) sb2[k] = val(t->group, t->rank, k);
        for (i = 0; i < 2 * T + 2; ++i) rb[i] = SENTINEL;
        RUN(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, sb2, rb, c, MPI_INT, MPI_SUM, t->comm);
        for (k = 0; k < c; ++k) {
            long long sum = 0;
            for (i = 0; i < t->rsize; ++i) sum += val(1 - t->group, i, t->rank * c + k);
            CHECK_INT("reduce_scatter_block MPI_SUM", sum, rb[k]);
        }
        CHECK_INT("reduce_scatter_block: past my block", SENTINEL, rb[c]);
        free(sb2);
    }
    free(sb);
    free(rb);
    free(counts);
}

/* ---- long messages and non-contiguous reductions -------------------------
 * BIG ints (past any eager limit): bcast from group 0 rank 0, allgather,
 * allreduce MPI_SUM; then an allreduce of 2 elements of the strided type
 * (whose gaps must stay untouched). */
#define BIG 40000
/* MPI_SUM is for predefined types only: a user sum on stride2 elements. */
static void strided_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const int *x = (const int *)in;
    int *y = (int *)inout, i, j;
    (void)type;
    for (i = 0; i < *len; ++i)
        for (j = 0; j < 3; ++j)
            y[5 * i + 2 * j] += x[5 * i + 2 * j];
}

static void t_big(const Inter *t)
{
    int m = t->rsize, i, k, root = t->group == 0 ? (t->rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int *a = (int *)mt_malloc(sizeof(int) * BIG);
    int *b = (int *)mt_malloc(sizeof(int) * (size_t)BIG * (size_t)(m > 1 ? m : 1));
    int sv[10], rv[10];
    for (i = 0; i < BIG; ++i) a[i] = t->group == 0 && t->rank == 0 ? val(0, 0, i) : SENTINEL;
    RUN(MPI_Bcast, MPI_Ibcast, a, BIG, MPI_INT, root, t->comm);
    if (t->group == 1)
        for (i = 0; i < BIG; ++i)
            if (a[i] != val(0, 0, i)) {
                CHECK_INT("long bcast", val(0, 0, i), a[i]);
                break;
            }
    for (i = 0; i < BIG; ++i) a[i] = val(t->group, t->rank, i);
    RUN(MPI_Allgather, MPI_Iallgather, a, BIG / 4, MPI_INT, b, BIG / 4, MPI_INT, t->comm);
    for (k = 0; k < m; ++k)
        for (i = 0; i < BIG / 4; ++i)
            if (b[k * (BIG / 4) + i] != val(1 - t->group, k, i)) {
                CHECK_INT("long allgather", val(1 - t->group, k, i), b[k * (BIG / 4) + i]);
                k = m;
                break;
            }
    RUN(MPI_Allreduce, MPI_Iallreduce, a, b, BIG, MPI_INT, MPI_SUM, t->comm);
    for (i = 0; i < BIG; ++i) {
        long long sum = 0;
        for (k = 0; k < m; ++k) sum += val(1 - t->group, k, i);
        if (b[i] != sum) {
            CHECK_INT("long allreduce", sum, b[i]);
            break;
        }
    }
    for (i = 0; i < 10; ++i) {
        sv[i] = val(t->group, t->rank, i);
        rv[i] = SENTINEL;
    }
    RUN(MPI_Allreduce, MPI_Iallreduce, sv, rv, 2, stride2, strided_sum, t->comm);
    for (i = 0; i < 10; ++i) {
        long long sum = 0;
        int data = i % 5 % 2 == 0; /* elements at 0,2,4 and 5,7,9 */
        for (k = 0; k < m; ++k) sum += val(1 - t->group, k, i);
        CHECK_INT("allreduce of a strided type", data ? sum : SENTINEL, rv[i]);
    }
    free(a);
    free(b);
}

#if INTER_NB
/* Further non-blocking cases, defined by inter_nonblocking.c. */
static void inter_extra(const Inter *t);
#endif

static void run_all(const Inter *t)
{
    t_barrier(t);
    t_bcast(t);
    t_rooted(t);
    t_allgather(t);
    t_alltoall(t);
    t_reduce(t);
    t_reduce_scatter(t);
    t_big(t);
#if INTER_NB
    inter_extra(t);
#endif
    t_barrier(t);
}

/* Runs every test on the intercommunicator of the split "group of world
 * rank w = group_of(w)". */
static void run_split(int (*group_of)(int w), const char *name)
{
    Inter t;
    MPI_Comm local;
    int w, leader[2] = {-1, -1}, flag, rsize_check;
    for (w = mt_size - 1; w >= 0; --w) leader[group_of(w)] = w;
    if (leader[0] < 0 || leader[1] < 0) return; /* one group would be empty */
    t.group = group_of(mt_rank);
    t.name = name;
    E(MPI_Comm_split(MPI_COMM_WORLD, t.group, mt_rank, &local));
    E(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, leader[1 - t.group], 77, &t.comm));
    E(MPI_Comm_test_inter(t.comm, &flag));
    CHECK_INT("MPI_Comm_test_inter", 1, flag);
    E(MPI_Comm_rank(t.comm, &t.rank));
    E(MPI_Comm_size(t.comm, &t.size));
    E(MPI_Comm_remote_size(t.comm, &t.rsize));
    rsize_check = 0;
    for (w = 0; w < mt_size; ++w) rsize_check += group_of(w) != t.group;
    CHECK_INT("remote size", rsize_check, t.rsize);
    run_all(&t);
    {
        /* A duplicate is an intercommunicator with collectives of its own. */
        Inter d = t;
        E(MPI_Comm_dup(t.comm, &d.comm));
        t_reduce(&d);
        t_allgather(&d);
        E(MPI_Comm_free(&d.comm));
    }
    E(MPI_Comm_free(&t.comm));
    E(MPI_Comm_free(&local));
}

static int split_first1(int w) { return w < 1 ? 0 : 1; }
static int split_last1(int w) { return w < mt_size - 1 ? 0 : 1; }
static int split_first2(int w) { return w < 2 ? 0 : 1; }
static int split_odd(int w) { return w % 2; }

static void inter_setup(void)
{
    E(MPI_Op_create(aff_op, 0, &aff));
    E(MPI_Op_create(strided_sum_fn, 1, &strided_sum));
    E(MPI_Type_contiguous(2, MPI_INT, &aff_type));
    E(MPI_Type_commit(&aff_type));
    {
        MPI_Datatype v;
        E(MPI_Type_vector(3, 1, 2, MPI_INT, &v));
        E(MPI_Type_create_resized(v, 0, 5 * (MPI_Aint)sizeof(int), &stride2));
        E(MPI_Type_commit(&stride2));
        E(MPI_Type_free(&v));
    }
}

static void inter_teardown(void)
{
    E(MPI_Op_free(&aff));
    E(MPI_Op_free(&strided_sum));
    E(MPI_Type_free(&aff_type));
    E(MPI_Type_free(&stride2));
}

static void run_every_split(void)
{
    run_split(split_first1, "1 vs rest");
    if (mt_size > 2) run_split(split_last1, "rest vs 1");
    if (mt_size > 3) run_split(split_first2, "2 vs rest");
    if (mt_size > 2) run_split(split_odd, "interleaved");
}

#endif /* GRIDMPI_TESTS_INTER_COMMON_H */
