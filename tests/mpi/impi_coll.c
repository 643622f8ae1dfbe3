/* impi_coll.c — every collective on communicators that span IMPI clients.
 *
 * Run with GRIDMPI_IMPI_FAKE_CLIENTS (impi.list) so that gridmpi runs its
 * IMPI algorithms (core/coll/impi*.cpp); without it (or on another MPI) the
 * same checks run on the native algorithms.  Communicators: MPI_COMM_WORLD,
 * a dup, a split into even/odd world ranks in reversed order (clients
 * interleaved in rank order), WORLD reversed (rank 0 in the last client),
 * and a Comm_create without world rank 1.  Every rooted collective runs with
 * every root (so roots in every client); sizes 1, 255/256/257 ints (around
 * IMPI_COLL_XSIZE = 1024 bytes) and 3000; odd world ranks describe their
 * buffers with a non-contiguous type (one int every two, holes never
 * written), even ranks with MPI_INT, so blocks forwarded between clients
 * change datatype on the way; MPI_IN_PLACE; a predefined commutative op and
 * a user non-commutative one (composition of affine maps).
 */
#include "mpitest.h"

#define HOLE (-777777)
#define UNSET (-555555)

static MPI_Datatype t_gap;  /* one int, extent two ints */
static MPI_Datatype t_pair; /* two unsigned: the affine map x -> a x + b */
static MPI_Op op_affine;    /* non-commutative: (l op r)(x) = r(l(x)) */
static int world_rank;

static const int counts[] = {1, 255, 256, 257, 3000};
#define NCOUNTS 5

/* ---- buffers of n ints in this process's layout ------------------------ */
typedef struct {
    int *p;
    int n;
    int stride;
    MPI_Datatype type;
} buf_t;

static buf_t buf_new(int n)
{
    buf_t b;
    int i;
    b.n = n;
    b.stride = world_rank % 2 ? 2 : 1;
    b.type = world_rank % 2 ? t_gap : MPI_INT;
    b.p = (int *)mt_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1) * (size_t)b.stride);
    for (i = 0; i < n * b.stride; ++i)
        b.p[i] = (i % b.stride) ? HOLE : UNSET;
    return b;
}
static int *at(buf_t *b, int i) { return &b->p[(size_t)i * (size_t)b->stride]; }
static void buf_free(buf_t *b) { free(b->p); }

static void check_holes(buf_t *b, const char *what, const char *comm)
{
    int i;
    for (i = 0; i < b->n * b->stride; ++i)
        if (i % b->stride && b->p[i] != HOLE) {
            MT_FAIL("%s on %s: hole at int %d written, got %d", what, comm, i, b->p[i]);
            return;
        }
}

static int val(int rank, int i, int salt) { return (rank + 1) * 1000 + i * 7 + salt; }

/* Compares n elements starting at element `first` with val(owner, i, salt). */
static int check_block(buf_t *b, int first, int n, int owner, int salt, const char *what, const char *comm)
{
    int i;
    for (i = 0; i < n; ++i) {
        int got = *at(b, first + i), want = val(owner, i, salt);
        if (got != want) {
            MT_FAIL("%s on %s: element %d (block of rank %d, index %d), expected %d got %d", what, comm,
                    first + i, owner, i, want, got);
            return 0;
        }
    }
    return 1;
}

/* ---- the non-commutative op -------------------------------------------- */
static void affine(void *in, void *inout, int *len, MPI_Datatype *type)
{
    unsigned *l = (unsigned *)in, *r = (unsigned *)inout;
    int i;
    (void)type;
    for (i = 0; i < *len; ++i) {
        unsigned a = l[2 * i] * r[2 * i], b = r[2 * i] * l[2 * i + 1] + r[2 * i + 1];
        r[2 * i] = a;
        r[2 * i + 1] = b;
    }
}
static void affine_of(int rank, int i, int salt, unsigned out[2])
{
    out[0] = 2u * (unsigned)rank + 3u + (unsigned)salt;
    out[1] = (unsigned)(rank * 31 + i + salt);
}
/* The composition for ranks first..last in rank order. */
static void affine_fold(int first, int last, int i, int salt, unsigned out[2])
{
    int r, one = 1;
    affine_of(first, i, salt, out);
    for (r = first + 1; r <= last; ++r) {
        unsigned next[2], acc[2] = {out[0], out[1]};
        affine_of(r, i, salt, next);
        affine(acc, next, &one, &t_pair);
        out[0] = next[0];
        out[1] = next[1];
    }
}

/* ---- communicators ----------------------------------------------------- */
typedef struct {
    MPI_Comm comm;
    const char *name;
    int rank, size;
} comm_t;

static int nroots(const comm_t *c, int count_index, int roots[])
{
    int k, n = 0;
    if ((count_index == 0 || count_index == 2) && c->size <= 64) {
        for (k = 0; k < c->size; ++k)
            roots[n++] = k;
    } else {
        roots[n++] = c->size - 1;
        if (c->size > 1)
            roots[n++] = 0;
    }
    return n;
}

/* ---- the collectives ---------------------------------------------------- */
static void test_barrier(const comm_t *c)
{
    int k;
    for (k = 0; k < 3; ++k)
        E(MPI_Barrier(c->comm));
}

static void test_bcast(const comm_t *c)
{
    int ci, roots[64], nr, k, i;
    for (ci = 0; ci < NCOUNTS; ++ci) {
        nr = nroots(c, ci, roots);
        for (k = 0; k < nr; ++k) {
            int n = counts[ci], root = roots[k];
            buf_t b = buf_new(n);
            if (c->rank == root)
                for (i = 0; i < n; ++i)
                    *at(&b, i) = val(root, i, 1);
            E(MPI_Bcast(b.p, n, b.type, root, c->comm));
            check_block(&b, 0, n, root, 1, "MPI_Bcast", c->name);
            check_holes(&b, "MPI_Bcast", c->name);
            buf_free(&b);
        }
    }
}

static void test_reduce(const comm_t *c)
{
    int ci, roots[64], nr, k, i, r;
    for (ci = 0; ci < NCOUNTS; ++ci) {
        int n = counts[ci];
        int *in = (int *)mt_malloc(sizeof(int) * (size_t)n), *out = (int *)mt_malloc(sizeof(int) * (size_t)n);
        unsigned *ain = (unsigned *)mt_malloc(2 * sizeof(unsigned) * (size_t)n);
        unsigned *aout = (unsigned *)mt_malloc(2 * sizeof(unsigned) * (size_t)n);
        nr = nroots(c, ci, roots);
        for (k = 0; k < nr; ++k) {
            int root = roots[k], in_place = c->rank == root && root % 2 == 0;
            /* MPICH 4.0.2: MPI_Reduce with MPI_IN_PLACE at a root other than
             * 0 crashes on communicators whose size is not a power of two
             * (from ~1000 ints). */
            if (MT_IS_MPICH && root != 0 && (c->size & (c->size - 1)) != 0)
                in_place = 0;
            for (i = 0; i < n; ++i) {
                in[i] = val(c->rank, i, 2);
                out[i] = in_place ? in[i] : UNSET;
                affine_of(c->rank, i, k, &ain[2 * i]);
                aout[2 * i] = in_place ? ain[2 * i] : 0;
                aout[2 * i + 1] = in_place ? ain[2 * i + 1] : 0;
            }
            E(MPI_Reduce(in_place ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_SUM, root, c->comm));
            E(MPI_Reduce(in_place ? MPI_IN_PLACE : ain, aout, n, t_pair, op_affine, root, c->comm));
            for (i = 0; i < n; ++i) {
                int want = 0;
                unsigned f[2];
                if (c->rank != root) {
                    if (out[i] != UNSET) {
                        MT_FAIL("MPI_Reduce on %s: recvbuf written off the root", c->name);
                        break;
                    }
                    continue;
                }
                for (r = 0; r < c->size; ++r)
                    want += val(r, i, 2);
                if (out[i] != want) {
                    MT_FAIL("MPI_Reduce(SUM) on %s root %d n %d: element %d, expected %d got %d", c->name, root, n,
                            i, want, out[i]);
                    break;
                }
                affine_fold(0, c->size - 1, i, k, f);
                if (aout[2 * i] != f[0] || aout[2 * i + 1] != f[1]) {
                    MT_FAIL("MPI_Reduce(non-commutative) on %s root %d n %d: element %d, expected (%u,%u) got "
                            "(%u,%u)", c->name, root, n, i, f[0], f[1], aout[2 * i], aout[2 * i + 1]);
                    break;
                }
            }
        }
        free(in);
        free(out);
        free(ain);
        free(aout);
    }
}

static void test_allreduce_scan(const comm_t *c)
{
    int ci, i, r, round;
    for (ci = 0; ci < NCOUNTS; ++ci) {
        int n = counts[ci];
        int *in = (int *)mt_malloc(sizeof(int) * (size_t)n), *out = (int *)mt_malloc(sizeof(int) * (size_t)n);
        unsigned *ain = (unsigned *)mt_malloc(2 * sizeof(unsigned) * (size_t)n);
        unsigned *aout = (unsigned *)mt_malloc(2 * sizeof(unsigned) * (size_t)n);
        for (round = 0; round < 2; ++round) {
            int in_place = round == 1; /* every rank or none */
            const char *what[3] = {"MPI_Allreduce", "MPI_Scan", "MPI_Exscan"};
            int w;
            for (w = 0; w < 3; ++w) {
                for (i = 0; i < n; ++i) {
                    in[i] = val(c->rank, i, 4 + w);
                    out[i] = in_place ? in[i] : UNSET;
                    affine_of(c->rank, i, w, &ain[2 * i]);
                    aout[2 * i] = in_place ? ain[2 * i] : 1;
                    aout[2 * i + 1] = in_place ? ain[2 * i + 1] : 1;
                }
                const void *s = in_place ? MPI_IN_PLACE : (const void *)in;
                const void *as = in_place ? MPI_IN_PLACE : (const void *)ain;
                if (w == 0) {
                    E(MPI_Allreduce(s, out, n, MPI_INT, MPI_SUM, c->comm));
                    E(MPI_Allreduce(as, aout, n, t_pair, op_affine, c->comm));
                } else if (w == 1) {
                    E(MPI_Scan(s, out, n, MPI_INT, MPI_SUM, c->comm));
                    E(MPI_Scan(as, aout, n, t_pair, op_affine, c->comm));
                } else {
                    E(MPI_Exscan(s, out, n, MPI_INT, MPI_SUM, c->comm));
                    E(MPI_Exscan(as, aout, n, t_pair, op_affine, c->comm));
                }
                if (w == 2 && c->rank == 0)
                    continue; /* undefined */
                for (i = 0; i < n; ++i) {
                    int last = w == 0 ? c->size - 1 : w == 1 ? c->rank : c->rank - 1, want = 0;
                    unsigned f[2];
                    for (r = 0; r <= last; ++r)
                        want += val(r, i, 4 + w);
                    affine_fold(0, last, i, w, f);
                    if (out[i] != want || aout[2 * i] != f[0] || aout[2 * i + 1] != f[1]) {
                        MT_FAIL("%s on %s n %d%s: element %d, expected %d (%u,%u) got %d (%u,%u)", what[w], c->name,
                                n, in_place ? " in place" : "", i, want, f[0], f[1], out[i], aout[2 * i],
                                aout[2 * i + 1]);
                        break;
                    }
                }
            }
        }
        free(in);
        free(out);
        free(ain);
        free(aout);
    }
}

static void test_gather_scatter(const comm_t *c)
{
    int ci, roots[64], nr, k, i, r, p = c->size;
    int *rcounts = (int *)mt_malloc(sizeof(int) * (size_t)p), *displs = (int *)mt_malloc(sizeof(int) * (size_t)p);
    for (ci = 0; ci < NCOUNTS; ++ci) {
        int n = counts[ci], total = 0;
        /* Gatherv/Scatterv: rank k has n + k % 3 elements, blocks placed in
         * reversed rank order. */
        for (r = p - 1; r >= 0; --r) {
            rcounts[r] = n + r % 3;
            displs[r] = total;
            total += rcounts[r];
        }
        nr = nroots(c, ci, roots);
        for (k = 0; k < nr; ++k) {
            int root = roots[k], in_place = c->rank == root && root % 2 == 1;
            buf_t mine = buf_new(n + 2), all = buf_new(c->rank == root ? total + p * n : 0);
            /* Gather */
            for (i = 0; i < n; ++i)
                *at(&mine, i) = val(c->rank, i, 5);
            if (in_place)
                for (i = 0; i < n; ++i)
                    *at(&all, c->rank * n + i) = val(c->rank, i, 5);
            E(MPI_Gather(in_place ? MPI_IN_PLACE : mine.p, n, mine.type, all.p, n, all.type, root, c->comm));
            if (c->rank == root)
                for (r = 0; r < p; ++r)
                    if (!check_block(&all, r * n, n, r, 5, "MPI_Gather", c->name))
                        break;
            /* Gatherv */
            for (i = 0; i < rcounts[c->rank]; ++i)
                *at(&mine, i) = val(c->rank, i, 6);
            if (in_place)
                for (i = 0; i < rcounts[c->rank]; ++i)
                    *at(&all, displs[c->rank] + i) = val(c->rank, i, 6);
            E(MPI_Gatherv(in_place ? MPI_IN_PLACE : mine.p, rcounts[c->rank], mine.type, all.p, rcounts, displs,
                          all.type, root, c->comm));
            if (c->rank == root)
                for (r = 0; r < p; ++r)
                    if (!check_block(&all, displs[r], rcounts[r], r, 6, "MPI_Gatherv", c->name))
                        break;
            /* Scatter */
            if (c->rank == root)
                for (r = 0; r < p; ++r)
                    for (i = 0; i < n; ++i)
                        *at(&all, r * n + i) = val(r, i, 7);
            for (i = 0; i < n + 2; ++i)
                *at(&mine, i) = UNSET;
            E(MPI_Scatter(all.p, n, all.type, in_place ? MPI_IN_PLACE : mine.p, n, mine.type, root, c->comm));
            if (!in_place)
                check_block(&mine, 0, n, c->rank, 7, "MPI_Scatter", c->name);
            if (*at(&mine, n) != UNSET)
                MT_FAIL("MPI_Scatter on %s: element past the block written", c->name);
            /* Scatterv */
            if (c->rank == root)
                for (r = 0; r < p; ++r)
                    for (i = 0; i < rcounts[r]; ++i)
                        *at(&all, displs[r] + i) = val(r, i, 8);
            for (i = 0; i < n + 2; ++i)
                *at(&mine, i) = UNSET;
            E(MPI_Scatterv(all.p, rcounts, displs, all.type, in_place ? MPI_IN_PLACE : mine.p, rcounts[c->rank],
                           mine.type, root, c->comm));
            if (!in_place)
                check_block(&mine, 0, rcounts[c->rank], c->rank, 8, "MPI_Scatterv", c->name);
            else
                check_block(&all, displs[c->rank], rcounts[c->rank], c->rank, 8, "MPI_Scatterv in place",
                            c->name);
            check_holes(&mine, "MPI_Gather/Scatter(v)", c->name);
            check_holes(&all, "MPI_Gather/Scatter(v)", c->name);
            buf_free(&mine);
            buf_free(&all);
        }
    }
    free(rcounts);
    free(displs);
}

static void test_allgather(const comm_t *c)
{
    int ci, i, r, p = c->size, round;
    int *rcounts = (int *)mt_malloc(sizeof(int) * (size_t)p), *displs = (int *)mt_malloc(sizeof(int) * (size_t)p);
    for (ci = 0; ci < NCOUNTS; ++ci) {
        int n = counts[ci], total = 0;
        for (r = p - 1; r >= 0; --r) {
            rcounts[r] = n + (r * 5) % 4;
            displs[r] = total + 1; /* a gap before each block */
            total += rcounts[r] + 1;
        }
        for (round = 0; round < 2; ++round) {
            int in_place = round == 1;
            buf_t mine = buf_new(rcounts[c->rank]), all = buf_new(total > p * n ? total : p * n);
            for (i = 0; i < rcounts[c->rank]; ++i)
                *at(&mine, i) = val(c->rank, i, 9);
            if (in_place)
                for (i = 0; i < n; ++i)
                    *at(&all, c->rank * n + i) = val(c->rank, i, 9);
            E(MPI_Allgather(in_place ? MPI_IN_PLACE : mine.p, n, mine.type, all.p, n, all.type, c->comm));
            for (r = 0; r < p; ++r)
                if (!check_block(&all, r * n, n, r, 9, "MPI_Allgather", c->name))
                    break;
            for (i = 0; i < all.n; ++i)
                *at(&all, i) = UNSET;
            if (in_place)
                for (i = 0; i < rcounts[c->rank]; ++i)
                    *at(&all, displs[c->rank] + i) = val(c->rank, i, 9);
            E(MPI_Allgatherv(in_place ? MPI_IN_PLACE : mine.p, rcounts[c->rank], mine.type, all.p, rcounts, displs,
                             all.type, c->comm));
            for (r = 0; r < p; ++r) {
                /* MPICH 4.0.2: on a one-process communicator, MPI_Allgatherv
                 * (not in place) ignores displs[0]. */
                if (MT_IS_MPICH && p == 1 && !in_place)
                    break;
                if (!check_block(&all, displs[r], rcounts[r], r, 9, "MPI_Allgatherv", c->name))
                    break;
                if (*at(&all, displs[r] - 1) != UNSET) {
                    MT_FAIL("MPI_Allgatherv on %s: gap before block %d written", c->name, r);
                    break;
                }
            }
            check_holes(&all, "MPI_Allgather(v)", c->name);
            buf_free(&mine);
            buf_free(&all);
        }
    }
    free(rcounts);
    free(displs);
}

/* Block from rank s to rank d: element i. */
static int a2a(int s, int d, int i) { return val(s, i, 11) + d * 100000; }

static void test_alltoall(const comm_t *c)
{
    int ci, i, r, p = c->size, round;
    int *sc = (int *)mt_malloc(sizeof(int) * (size_t)p), *sd = (int *)mt_malloc(sizeof(int) * (size_t)p);
    int *rc = (int *)mt_malloc(sizeof(int) * (size_t)p), *rd = (int *)mt_malloc(sizeof(int) * (size_t)p);
    int *swd = (int *)mt_malloc(sizeof(int) * (size_t)p), *rwd = (int *)mt_malloc(sizeof(int) * (size_t)p);
    MPI_Datatype *st = (MPI_Datatype *)mt_malloc(sizeof(MPI_Datatype) * (size_t)p);
    MPI_Datatype *rt = (MPI_Datatype *)mt_malloc(sizeof(MPI_Datatype) * (size_t)p);
    for (ci = 0; ci < NCOUNTS; ++ci) {
        int n = counts[ci] > 300 ? 300 : counts[ci], stotal = 0, rtotal = 0;
        /* v: rank s sends n + (s + d) % 3 elements to d, blocks reversed. */
        for (r = p - 1; r >= 0; --r) {
            sc[r] = n + (c->rank + r) % 3;
            sd[r] = stotal;
            stotal += sc[r];
            rc[r] = n + (r + c->rank) % 3;
            rd[r] = rtotal;
            rtotal += rc[r];
        }
        for (round = 0; round < 2; ++round) {
            int in_place = round == 1;
            buf_t s = buf_new(stotal > p * n ? stotal : p * n), d = buf_new(rtotal > p * n ? rtotal : p * n);
            /* Alltoall */
            for (r = 0; r < p; ++r)
                for (i = 0; i < n; ++i)
                    *at(in_place ? &d : &s, r * n + i) = a2a(c->rank, r, i);
            E(MPI_Alltoall(in_place ? MPI_IN_PLACE : s.p, n, s.type, d.p, n, d.type, c->comm));
            for (r = 0; r < p; ++r)
                for (i = 0; i < n; ++i)
                    if (*at(&d, r * n + i) != a2a(r, c->rank, i)) {
                        MT_FAIL("MPI_Alltoall on %s n %d%s: block from %d element %d, expected %d got %d", c->name,
                                n, in_place ? " in place" : "", r, i, a2a(r, c->rank, i), *at(&d, r * n + i));
                        r = p;
                        break;
                    }
            /* Alltoallv (in place: the receive layout both ways, rc == sc) */
            for (r = 0; r < p; ++r)
                for (i = 0; i < sc[r]; ++i)
                    *at(in_place ? &d : &s, (in_place ? rd[r] : sd[r]) + i) = a2a(c->rank, r, i);
            E(MPI_Alltoallv(in_place ? MPI_IN_PLACE : s.p, sc, sd, s.type, d.p, rc, rd, d.type, c->comm));
            for (r = 0; r < p; ++r)
                for (i = 0; i < rc[r]; ++i)
                    if (*at(&d, rd[r] + i) != a2a(r, c->rank, i)) {
                        MT_FAIL("MPI_Alltoallv on %s n %d%s: block from %d element %d, expected %d got %d", c->name,
                                n, in_place ? " in place" : "", r, i, a2a(r, c->rank, i), *at(&d, rd[r] + i));
                        r = p;
                        break;
                    }
            /* Alltoallw: both buffers one int every two; blocks of even
             * peers described as one vector of n ints, of odd peers as n
             * t_gap elements (one signature, two types). */
            {
                int *ws = (int *)mt_malloc(2 * sizeof(int) * (size_t)(stotal + 1));
                int *wr = (int *)mt_malloc(2 * sizeof(int) * (size_t)(rtotal + 1));
                MPI_Datatype *made = (MPI_Datatype *)mt_malloc(2 * sizeof(MPI_Datatype) * (size_t)p);
                int *one = (int *)mt_malloc(sizeof(int) * (size_t)p), *rone = (int *)mt_malloc(sizeof(int) * (size_t)p);
                for (i = 0; i < 2 * rtotal + 2; ++i)
                    wr[i] = i % 2 ? HOLE : UNSET;
                for (i = 0; i < 2 * stotal + 2; ++i)
                    ws[i] = i % 2 ? HOLE : UNSET;
                for (r = 0; r < p; ++r) {
                    int *base = in_place ? wr : ws, first = in_place ? rd[r] : sd[r];
                    for (i = 0; i < (in_place ? rc[r] : sc[r]); ++i)
                        base[2 * (first + i)] = a2a(c->rank, r, i) + 7;
                    E(MPI_Type_vector(sc[r], 1, 2, MPI_INT, &made[2 * r]));
                    E(MPI_Type_commit(&made[2 * r]));
                    E(MPI_Type_vector(rc[r], 1, 2, MPI_INT, &made[2 * r + 1]));
                    E(MPI_Type_commit(&made[2 * r + 1]));
                    st[r] = r % 2 ? t_gap : made[2 * r];
                    rt[r] = r % 2 ? t_gap : made[2 * r + 1];
                    one[r] = r % 2 ? sc[r] : 1;
                    rone[r] = r % 2 ? rc[r] : 1;
                    swd[r] = (int)(2 * sizeof(int) * (size_t)sd[r]);
                    rwd[r] = (int)(2 * sizeof(int) * (size_t)rd[r]);
                }
                E(MPI_Alltoallw(in_place ? MPI_IN_PLACE : ws, one, swd, st, wr, rone, rwd, rt, c->comm));
                for (r = 0; r < p; ++r)
                    for (i = 0; i < rc[r]; ++i)
                        if (wr[2 * (rd[r] + i)] != a2a(r, c->rank, i) + 7) {
                            MT_FAIL("MPI_Alltoallw on %s n %d%s: block from %d element %d, expected %d got %d",
                                    c->name, n, in_place ? " in place" : "", r, i, a2a(r, c->rank, i) + 7,
                                    wr[2 * (rd[r] + i)]);
                            r = p;
                            break;
                        }
                for (i = 1; i < 2 * rtotal; i += 2)
                    if (wr[i] != HOLE) {
                        MT_FAIL("MPI_Alltoallw on %s: hole at int %d written", c->name, i);
                        break;
                    }
                for (r = 0; r < 2 * p; ++r)
                    E(MPI_Type_free(&made[r]));
                free(made);
                free(one);
                free(rone);
                free(ws);
                free(wr);
            }
            check_holes(&s, "MPI_Alltoall(v/w)", c->name);
            check_holes(&d, "MPI_Alltoall(v/w)", c->name);
            buf_free(&s);
            buf_free(&d);
        }
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(swd);
    free(rwd);
    free(st);
    free(rt);
}

static void test_reduce_scatter(const comm_t *c)
{
    int ci, i, r, p = c->size, round;
    int *rcounts = (int *)mt_malloc(sizeof(int) * (size_t)p);
    for (ci = 0; ci < NCOUNTS; ++ci) {
        int n = counts[ci] > 300 ? 300 : counts[ci], total = 0, before = 0;
        for (r = 0; r < p; ++r) {
            rcounts[r] = n + r % 3;
            if (r < c->rank)
                before += rcounts[r];
            total += rcounts[r];
        }
        for (round = 0; round < 2; ++round) {
            int in_place = round == 1;
            int *in = (int *)mt_malloc(sizeof(int) * (size_t)(total > p * n ? total : p * n));
            int *out = (int *)mt_malloc(sizeof(int) * (size_t)(total > p * n ? total : p * n));
            unsigned *ain = (unsigned *)mt_malloc(2 * sizeof(unsigned) * (size_t)(p * n));
            unsigned *aout = (unsigned *)mt_malloc(2 * sizeof(unsigned) * (size_t)(p * n));
            /* Reduce_scatter_block: SUM and non-commutative */
            for (i = 0; i < p * n; ++i) {
                in[i] = val(c->rank, i, 12);
                affine_of(c->rank, i, 3, &ain[2 * i]);
                if (in_place) {
                    out[i] = in[i];
                    aout[2 * i] = ain[2 * i];
                    aout[2 * i + 1] = ain[2 * i + 1];
                }
            }
            E(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_SUM, c->comm));
            E(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : ain, aout, n, t_pair, op_affine, c->comm));
            for (i = 0; i < n; ++i) {
                int gi = c->rank * n + i, want = 0;
                unsigned f[2];
                for (r = 0; r < p; ++r)
                    want += val(r, gi, 12);
                affine_fold(0, p - 1, gi, 3, f);
                if (out[i] != want || aout[2 * i] != f[0] || aout[2 * i + 1] != f[1]) {
                    MT_FAIL("MPI_Reduce_scatter_block on %s n %d%s: element %d, expected %d (%u,%u) got %d (%u,%u)",
                            c->name, n, in_place ? " in place" : "", i, want, f[0], f[1], out[i], aout[2 * i],
                            aout[2 * i + 1]);
                    break;
                }
            }
            /* Reduce_scatter with varying counts */
            for (i = 0; i < total; ++i) {
                in[i] = val(c->rank, i, 13);
                if (in_place)
                    out[i] = in[i];
            }
            E(MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : in, out, rcounts, MPI_INT, MPI_SUM, c->comm));
            for (i = 0; i < rcounts[c->rank]; ++i) {
                int want = 0;
                for (r = 0; r < p; ++r)
                    want += val(r, before + i, 13);
                if (out[i] != want) {
                    MT_FAIL("MPI_Reduce_scatter on %s n %d%s: element %d, expected %d got %d", c->name, n,
                            in_place ? " in place" : "", i, want, out[i]);
                    break;
                }
            }
            free(in);
            free(out);
            free(ain);
            free(aout);
        }
    }
    free(rcounts);
}

static void run_all(MPI_Comm comm, const char *name)
{
    comm_t c;
    c.comm = comm;
    c.name = name;
    E(MPI_Comm_rank(comm, &c.rank));
    E(MPI_Comm_size(comm, &c.size));
    test_barrier(&c);
    test_bcast(&c);
    test_reduce(&c);
    test_allreduce_scan(&c);
    test_gather_scatter(&c);
    test_allgather(&c);
    test_alltoall(&c);
    test_reduce_scatter(&c);
}

int main(int argc, char **argv)
{
    MPI_Comm dup, split, reversed, created;
    MPI_Group world_group, without_one;
    int one = 1;
    mt_init(&argc, &argv);
    world_rank = mt_rank;
    E(MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &t_gap));
    E(MPI_Type_commit(&t_gap));
    E(MPI_Type_contiguous(2, MPI_UNSIGNED, &t_pair));
    E(MPI_Type_commit(&t_pair));
    E(MPI_Op_create(affine, 0, &op_affine));

    run_all(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    run_all(dup, "a dup of MPI_COMM_WORLD");
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &split));
    run_all(split, "the even/odd split, reversed");
    E(MPI_Comm_split(MPI_COMM_WORLD, 0, -mt_rank, &reversed));
    run_all(reversed, "MPI_COMM_WORLD reversed");
    E(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    E(MPI_Group_excl(world_group, mt_size > 2 ? 1 : 0, &one, &without_one));
    E(MPI_Comm_create(MPI_COMM_WORLD, without_one, &created));
    if (created != MPI_COMM_NULL) {
        run_all(created, "MPI_COMM_WORLD without rank 1");
        E(MPI_Comm_free(&created));
    } else if (mt_size > 2 && mt_rank != 1) {
        MT_FAIL("MPI_Comm_create: MPI_COMM_NULL at a member");
    }
    E(MPI_Group_free(&without_one));
    E(MPI_Group_free(&world_group));
    E(MPI_Comm_free(&reversed));
    E(MPI_Comm_free(&split));
    E(MPI_Comm_free(&dup));
    E(MPI_Op_free(&op_affine));
    E(MPI_Type_free(&t_pair));
    E(MPI_Type_free(&t_gap));
    return mt_finish();
}
