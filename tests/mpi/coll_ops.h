/* coll_ops.h — the reduction cases of the collective tests: every
 * predefined op on a type it is defined for, a user commutative op (on
 * MPI_INT and on a non-contiguous derived type) and a user non-commutative
 * op.  Each case can fill a rank's contribution and compute the expected
 * result independently of MPI (a left fold in rank order). */
#ifndef GRIDMPI_TESTS_COLL_OPS_H
#define GRIDMPI_TESTS_COLL_OPS_H

#include "coll_common.h"

enum {
    OP_SUM_INT, OP_SUM_DOUBLE, OP_MAX_INT, OP_MIN_INT, OP_PROD_INT, OP_LAND, OP_LOR, OP_LXOR,
    OP_BAND, OP_BOR, OP_BXOR, OP_MAXLOC_2INT, OP_MINLOC_DOUBLE_INT, OP_USER_SUM,
    OP_USER_SUM_STRIDED, OP_USER_AFFINE, OP_NCASES
};

typedef struct {
    double v;
    int i;
} cc_double_int;

static const char *const cc_op_names[OP_NCASES] = {
    "MPI_SUM/MPI_INT",       "MPI_SUM/MPI_DOUBLE",    "MPI_MAX/MPI_INT",
    "MPI_MIN/MPI_INT",       "MPI_PROD/MPI_INT",      "MPI_LAND/MPI_INT",
    "MPI_LOR/MPI_INT",       "MPI_LXOR/MPI_INT",      "MPI_BAND/MPI_UNSIGNED",
    "MPI_BOR/MPI_UNSIGNED",  "MPI_BXOR/MPI_UNSIGNED", "MPI_MAXLOC/MPI_2INT",
    "MPI_MINLOC/MPI_DOUBLE_INT", "user sum/MPI_INT", "user sum/strided type",
    "user non-commutative affine/pair type"};

/* Which (communicator, case, count) combinations run, to keep the tests
 * short while every case meets every code path at least once: on
 * MPI_COMM_WORLD every case with a small count, empty and one-element
 * vectors with two cases, > 64 KiB with the cases whose layout differs
 * (double, padded pair type, holes, non-commutative); on the dup and the
 * split a few representative cases with a small count. */
static inline int cc_op_selected(int comm_index, int cs, int count)
{
    if (count > 1000)
        return comm_index == 0 && (cs == OP_SUM_DOUBLE || cs == OP_MINLOC_DOUBLE_INT ||
                                   cs == OP_USER_SUM_STRIDED || cs == OP_USER_AFFINE);
    if (count <= 1)
        return comm_index == 0 && (cs == OP_SUM_INT || cs == OP_USER_AFFINE);
    if (comm_index == 0)
        return 1;
    if (comm_index == 1)
        return cs == OP_SUM_INT || cs == OP_USER_AFFINE;
    return cs == OP_MINLOC_DOUBLE_INT || cs == OP_USER_SUM_STRIDED || cs == OP_USER_AFFINE;
}

static inline MPI_Datatype cc_op_type(int cs)
{
    switch (cs) {
    case OP_SUM_DOUBLE: return MPI_DOUBLE;
    case OP_BAND: case OP_BOR: case OP_BXOR: return MPI_UNSIGNED;
    case OP_MAXLOC_2INT: return MPI_2INT;
    case OP_MINLOC_DOUBLE_INT: return MPI_DOUBLE_INT;
    case OP_USER_SUM_STRIDED: return cc_strided;
    case OP_USER_AFFINE: return cc_pair;
    default: return MPI_INT;
    }
}

static inline MPI_Op cc_op_op(int cs)
{
    switch (cs) {
    case OP_SUM_INT: case OP_SUM_DOUBLE: return MPI_SUM;
    case OP_MAX_INT: return MPI_MAX;
    case OP_MIN_INT: return MPI_MIN;
    case OP_PROD_INT: return MPI_PROD;
    case OP_LAND: return MPI_LAND;
    case OP_LOR: return MPI_LOR;
    case OP_LXOR: return MPI_LXOR;
    case OP_BAND: return MPI_BAND;
    case OP_BOR: return MPI_BOR;
    case OP_BXOR: return MPI_BXOR;
    case OP_MAXLOC_2INT: return MPI_MAXLOC;
    case OP_MINLOC_DOUBLE_INT: return MPI_MINLOC;
    case OP_USER_SUM: case OP_USER_SUM_STRIDED: return cc_op_sum;
    default: return cc_op_affine;
    }
}

/* Bytes of memory per element (the extent). */
static inline size_t cc_op_extent(int cs)
{
    switch (cs) {
    case OP_SUM_DOUBLE: return sizeof(double);
    case OP_MAXLOC_2INT: return 2 * sizeof(int);
    case OP_MINLOC_DOUBLE_INT: return sizeof(cc_double_int);
    case OP_USER_SUM_STRIDED: return CC_STRIDE * sizeof(int);
    case OP_USER_AFFINE: return 2 * sizeof(unsigned);
    default: return sizeof(int);
    }
}

/* Allocates count elements, set to a recognisable "unset" state (holes of
 * the strided type to CC_HOLE). */
static inline void *cc_op_alloc(int cs, int count)
{
    size_t n = cc_op_extent(cs) * (size_t)count;
    void *buf = mt_malloc(n);
    memset(buf, 0, n);
    if (cs != OP_MINLOC_DOUBLE_INT)
        cc_set((int *)buf, (int)(n / sizeof(int)), cs == OP_USER_SUM_STRIDED ? CC_HOLE : CC_UNSET);
    return buf;
}

/* The contribution of `rank` (elements [0, count)). */
static inline void cc_op_fill(int cs, int rank, int count, void *buf, int salt)
{
    int i;
    for (i = 0; i < count; ++i) {
        int v = cc_val(rank, i, salt + cs);
        switch (cs) {
        case OP_SUM_DOUBLE: ((double *)buf)[i] = v * 0.5; break;
        case OP_PROD_INT: ((int *)buf)[i] = (v % 3 == 0) ? -1 : (v % 3 == 1 ? 1 : 2); break;
        case OP_LAND: case OP_LOR: case OP_LXOR: ((int *)buf)[i] = (v % 5 == 0) ? 0 : (v % 2 ? 1 : 3); break;
        case OP_BAND: case OP_BOR: case OP_BXOR: ((unsigned *)buf)[i] = (unsigned)v * 2654435761u; break;
        case OP_MAXLOC_2INT:
            ((int *)buf)[2 * i] = v % 7; /* ties: the lowest index wins */
            ((int *)buf)[2 * i + 1] = rank * 10 + i % 3;
            break;
        case OP_MINLOC_DOUBLE_INT:
            ((cc_double_int *)buf)[i].v = (v % 5) * 0.25;
            ((cc_double_int *)buf)[i].i = rank;
            break;
        case OP_USER_SUM_STRIDED:
            ((int *)buf)[CC_STRIDE * i] = v;
            ((int *)buf)[CC_STRIDE * i + 1] = CC_HOLE;
            ((int *)buf)[CC_STRIDE * i + 2] = v + 1;
            ((int *)buf)[CC_STRIDE * i + 3] = CC_HOLE;
            break;
        case OP_USER_AFFINE: cc_affine_value(rank, i, salt, (unsigned *)buf + 2 * i); break;
        default: ((int *)buf)[i] = v; break;
        }
    }
}

/* acc = acc op next (acc holds the lower ranks). */
static inline void cc_op_fold(int cs, void *acc, const void *next, int count)
{
    int i;
    for (i = 0; i < count; ++i) {
        int *a = (int *)acc, *b = (int *)next;
        unsigned *ua = (unsigned *)acc, *ub = (unsigned *)next;
        switch (cs) {
        case OP_SUM_INT: case OP_USER_SUM: a[i] += b[i]; break;
        case OP_SUM_DOUBLE: ((double *)acc)[i] += ((const double *)next)[i]; break;
        case OP_MAX_INT: if (b[i] > a[i]) a[i] = b[i]; break;
        case OP_MIN_INT: if (b[i] < a[i]) a[i] = b[i]; break;
        case OP_PROD_INT: a[i] *= b[i]; break;
        case OP_LAND: a[i] = a[i] && b[i]; break;
        case OP_LOR: a[i] = a[i] || b[i]; break;
        case OP_LXOR: a[i] = (!a[i]) != (!b[i]); break;
        case OP_BAND: ua[i] &= ub[i]; break;
        case OP_BOR: ua[i] |= ub[i]; break;
        case OP_BXOR: ua[i] ^= ub[i]; break;
        case OP_MAXLOC_2INT:
            if (b[2 * i] > a[2 * i] || (b[2 * i] == a[2 * i] && b[2 * i + 1] < a[2 * i + 1])) {
                a[2 * i] = b[2 * i];
                a[2 * i + 1] = b[2 * i + 1];
            }
            break;
        case OP_MINLOC_DOUBLE_INT: {
            cc_double_int *x = (cc_double_int *)acc + i;
            const cc_double_int *y = (const cc_double_int *)next + i;
            if (y->v < x->v || (y->v == x->v && y->i < x->i))
                *x = *y;
            break;
        }
        case OP_USER_SUM_STRIDED:
            a[CC_STRIDE * i] += b[CC_STRIDE * i];
            a[CC_STRIDE * i + 2] += b[CC_STRIDE * i + 2];
            break;
        case OP_USER_AFFINE: cc_affine_combine(ua + 2 * i, ub + 2 * i, ua + 2 * i); break;
        }
    }
}

/* Expected result of ranks [first, last] in order (last >= first). */
static inline void *cc_op_expected(int cs, int first, int last, int count, int salt)
{
    void *acc = cc_op_alloc(cs, count), *next = cc_op_alloc(cs, count);
    int r;
    cc_op_fill(cs, first, count, acc, salt);
    for (r = first + 1; r <= last; ++r) {
        cc_op_fill(cs, r, count, next, salt);
        cc_op_fold(cs, acc, next, count);
    }
    free(next);
    return acc;
}

/* Compares count elements; reports the first difference.  Returns 1 if equal. */
static inline int cc_op_check_at(const char *file, int line, const char *what, const cc_comm *c,
                                 int cs, const void *got, const void *expected, int count)
{
    int i;
    for (i = 0; i < count; ++i) {
        int bad;
        if (cs == OP_MINLOC_DOUBLE_INT) {
            const cc_double_int *g = (const cc_double_int *)got + i,
                                *e = (const cc_double_int *)expected + i;
            bad = g->v != e->v || g->i != e->i;
        } else {
            size_t n = cc_op_extent(cs);
            bad = memcmp((const char *)got + i * n, (const char *)expected + i * n, n) != 0;
        }
        if (bad) {
            const int *g = (const int *)((const char *)got + i * cc_op_extent(cs));
            const int *e = (const int *)((const char *)expected + i * cc_op_extent(cs));
            mt_fail_at(file, line, "%s %s on %s (size %d): element %d of %d differs "
                       "(first ints: expected %d got %d)", what, cc_op_names[cs], c->name,
                       c->size, i, count, e[0], g[0]);
            return 0;
        }
    }
    return 1;
}
#define CC_OP_CHECK(what, c, cs, got, expected, count)                                  \
    cc_op_check_at(__FILE__, __LINE__, (what), (c), (cs), (got), (expected), (count))

#endif
