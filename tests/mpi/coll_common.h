/* coll_common.h — what the collective tests (tests/mpi/coll_*.c) share:
 * the communicators every test runs on, the message sizes, value generators,
 * a non-contiguous derived type, and user reduction ops (commutative and
 * not).  Only standard MPI is used, so the tests also run on Open MPI and
 * MPICH.
 */
#ifndef GRIDMPI_TESTS_COLL_COMMON_H
#define GRIDMPI_TESTS_COLL_COMMON_H

#include "mpitest.h"

/* ---- communicators ------------------------------------------------------ */
/* MPI_COMM_WORLD, a dup of it, and a split into even and odd world ranks
 * with the order reversed (so communicator ranks differ from world ranks). */
typedef struct {
    MPI_Comm comm;
    const char *name;
    int rank, size;
} cc_comm;

static cc_comm cc_comms[3];
static int cc_ncomms = 0;

static inline void cc_add_comm(MPI_Comm comm, const char *name)
{
    cc_comm *c = &cc_comms[cc_ncomms++];
    c->comm = comm;
    c->name = name;
    E(MPI_Comm_rank(comm, &c->rank));
    E(MPI_Comm_size(comm, &c->size));
}

/* ---- a non-contiguous type: 2 ints per element at int offsets 0 and 2 of
 * a 4-int extent (holes at 1 and 3 must never be written) ---------------- */
#define CC_STRIDE 4
#define CC_HOLE (-777777)
#define CC_UNSET (-555555)
static MPI_Datatype cc_strided;
/* 2 unsigned ints, contiguous: the element of the non-commutative op */
static MPI_Datatype cc_pair;
static MPI_Op cc_op_sum;    /* user, commutative: integer sum (MPI_INT and cc_strided) */
static MPI_Op cc_op_affine; /* user, non-commutative: composition of x -> a x + b (cc_pair) */

static inline void cc_user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int *a = (int *)in, *b = (int *)inout, i;
    if (*type == MPI_INT) {
        for (i = 0; i < *len; ++i)
            b[i] += a[i];
    } else if (*type == cc_strided) {
        for (i = 0; i < *len; ++i) {
            b[CC_STRIDE * i] += a[CC_STRIDE * i];
            b[CC_STRIDE * i + 2] += a[CC_STRIDE * i + 2];
        }
    } else {
        printf("FAIL: [rank %d] cc_user_sum called with an unexpected datatype\n", mt_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* (a1,b1) op (a2,b2): first x -> a1 x + b1, then x -> a2 x + b2. */
static inline void cc_affine_combine(const unsigned *l, const unsigned *r, unsigned *out)
{
    unsigned a = l[0] * r[0], b = r[0] * l[1] + r[1];
    out[0] = a;
    out[1] = b;
}

static inline void cc_user_affine(void *in, void *inout, int *len, MPI_Datatype *type)
{
    unsigned *a = (unsigned *)in, *b = (unsigned *)inout;
    int i;
    if (*type != cc_pair) {
        printf("FAIL: [rank %d] cc_user_affine called with an unexpected datatype\n", mt_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (i = 0; i < *len; ++i)
        cc_affine_combine(a + 2 * i, b + 2 * i, b + 2 * i);
}

/* The contribution of `rank` at element i to the affine op. */
static inline void cc_affine_value(int rank, int i, int salt, unsigned *out)
{
    out[0] = 2u * (unsigned)(rank * 3 + i + salt) + 1u;
    out[1] = (unsigned)(rank * 7 + i * 3 + salt + 1);
}

/* Values for the data of `rank` at element i: small, so that sums over 8
 * ranks fit and doubles stay exact. */
static inline int cc_val(int rank, int i, int salt)
{
    return ((rank + 1) * 131 + i * 17 + salt * 7) % 1009 - 300;
}

/* Sizes: empty, one element, a few, and > 64 KiB of data (rendezvous). */
static const int cc_counts[] = {0, 1, 7, 20000};
#define CC_NCOUNTS 4

static inline void cc_setup(int *argc, char ***argv)
{
    MPI_Comm dup, split;
    MPI_Datatype vec;
    mt_init(argc, argv);
    cc_add_comm(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    cc_add_comm(dup, "dup of MPI_COMM_WORLD");
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &split));
    cc_add_comm(split, "split (parity, reversed)");
    E(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    E(MPI_Type_create_resized(vec, 0, (MPI_Aint)(CC_STRIDE * sizeof(int)), &cc_strided));
    E(MPI_Type_free(&vec));
    E(MPI_Type_commit(&cc_strided));
    E(MPI_Type_contiguous(2, MPI_UNSIGNED, &cc_pair));
    E(MPI_Type_commit(&cc_pair));
    E(MPI_Op_create(cc_user_sum, 1, &cc_op_sum));
    E(MPI_Op_create(cc_user_affine, 0, &cc_op_affine));
}

static inline int cc_teardown(void)
{
    int i;
    E(MPI_Op_free(&cc_op_sum));
    E(MPI_Op_free(&cc_op_affine));
    E(MPI_Type_free(&cc_strided));
    E(MPI_Type_free(&cc_pair));
    for (i = 1; i < cc_ncomms; ++i)
        E(MPI_Comm_free(&cc_comms[i].comm));
    return mt_finish();
}

/* Large messages run on MPI_COMM_WORLD only, to keep the tests short. */
static inline int cc_skip(int comm_index, int count)
{
    return count > 1000 && comm_index != 0;
}

/* Distinct roots to try on a communicator of the given size (only the
 * last rank for large messages, to keep the tests short). */
static inline int cc_roots(int size, int count, int roots[3])
{
    int n = 0;
    if (count > 1000) {
        roots[0] = size - 1;
        return 1;
    }
    roots[n++] = 0;
    if (size / 2 != 0)
        roots[n++] = size / 2;
    if (size - 1 != 0 && size - 1 != size / 2)
        roots[n++] = size - 1;
    return n;
}

/* Compares n ints; reports the first difference only.  Returns 1 if equal. */
static inline int cc_check_ints_at(const char *file, int line, const char *what, const cc_comm *c,
                            const int *got, const int *expected, int n)
{
    int i;
    for (i = 0; i < n; ++i) {
        if (got[i] != expected[i]) {
            mt_fail_at(file, line, "%s on %s (size %d): int %d of %d, expected %d got %d", what,
                       c->name, c->size, i, n, expected[i], got[i]);
            return 0;
        }
    }
    return 1;
}
#define CC_CHECK_INTS(what, c, got, expected, n)                                       \
    cc_check_ints_at(__FILE__, __LINE__, (what), (c), (got), (expected), (n))

static inline int *cc_ints(size_t n)
{
    return (int *)mt_malloc(n * sizeof(int));
}

static inline void cc_set(int *buf, int n, int value)
{
    int i;
    for (i = 0; i < n; ++i)
        buf[i] = value;
}

/* Strided layout: element e's two ints at [CC_STRIDE*e] and [CC_STRIDE*e+2]. */
static inline void cc_strided_fill(int *buf, int elements, int rank, int salt)
{
    int e;
    for (e = 0; e < elements; ++e) {
        buf[CC_STRIDE * e] = cc_val(rank, 2 * e, salt);
        buf[CC_STRIDE * e + 1] = CC_HOLE;
        buf[CC_STRIDE * e + 2] = cc_val(rank, 2 * e + 1, salt);
        buf[CC_STRIDE * e + 3] = CC_HOLE;
    }
}

#endif
