/* CG: smallest eigenvalue of a sparse symmetric positive definite matrix by
 * inverse power iteration, each step solving A z = x with 25 unpreconditioned
 * conjugate-gradient iterations (NPB specification §2.2.3).
 *
 * The matrix is the NPB one: A = sum_i size_i v_i v_i^T + (rcond - shift) I,
 * with v_i the sparse vector of `nonzer` random entries (positions and values
 * from the NPB generator, seed 314159265, a = 5^13, after one discarded draw)
 * plus 0.5 at position i, and size_i = rcond^(i/n).  Entries are summed in
 * the order of the specification's generator (makea/sparse), so they are the
 * same doubles, and each row keeps its columns sorted.
 *
 * Decomposition: each rank owns a contiguous block of rows (and the matching
 * block of every vector); q = A p needs the whole of p, gathered with
 * MPI_Allgatherv once per CG iteration; dot products are MPI_Allreduce.
 * (NPB's own MPI code uses a 2-D process grid instead; the numbers agree to
 * rounding.)  Verification: zeta of the last outer iteration against the
 * official value (relative 1e-10). */
#include "npb_common.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int n, nonzer, niter;
    double shift, zeta_ref;
} cg_class;

static const double rcond = 0.1;
enum { cg_iterations = 25 };

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        npb_die("cg", "out of memory");
    return p;
}

/* The generator state shared by sprnvc across all rows. */
static double tran = 314159265.0;

/* `nz` distinct random positions in 1..n with random values (NPB sprnvc):
 * a position is drawn as (int)(nn1 * r) + 1 with nn1 the smallest power of
 * two >= n, and redrawn when beyond n or already taken. */
static void sprnvc(int n, int nz, int nn1, double *v, int *iv)
{
    int count = 0;
    while (count < nz) {
        double value = randlc(&tran, NPB_A);
        double where = randlc(&tran, NPB_A);
        int i = (int)(nn1 * where) + 1;
        if (i > n)
            continue;
        int taken = 0;
        for (int k = 0; k < count; k++)
            if (iv[k] == i) {
                taken = 1;
                break;
            }
        if (taken)
            continue;
        v[count] = value;
        iv[count] = i;
        count++;
    }
}

/* Sets element i of the sparse vector to val, appending it when absent (NPB vecset). */
static void vecset(double *v, int *iv, int *nzv, int i, double val)
{
    for (int k = 0; k < *nzv; k++)
        if (iv[k] == i) {
            v[k] = val;
            return;
        }
    v[*nzv] = val;
    iv[*nzv] = i;
    (*nzv)++;
}

/* Row block [row0, row1) of the matrix in CSR with sorted columns. */
typedef struct {
    int *rowstr, *colidx;
    double *a;
} csr;

typedef struct {
    int col;
    double val;
} entry;

static int entry_cmp(const void *x, const void *y)
{
    int a = ((const entry *)x)->col, b = ((const entry *)y)->col;
    return (a > b) - (a < b);
}

static csr makea(const cg_class *c, int row0, int row1)
{
    int n = c->n, nz1 = c->nonzer + 1;
    int nn1 = 1;
    do
        nn1 *= 2;
    while (nn1 < n);
    int *arow = xmalloc(sizeof(int) * n);
    int *acol = xmalloc(sizeof(int) * (size_t)n * nz1);
    double *aelt = xmalloc(sizeof(double) * (size_t)n * nz1);
    for (int i = 0; i < n; i++) {
        int nzv = c->nonzer;
        sprnvc(n, nzv, nn1, &aelt[(size_t)i * nz1], &acol[(size_t)i * nz1]);
        vecset(&aelt[(size_t)i * nz1], &acol[(size_t)i * nz1], &nzv, i + 1, 0.5);
        arow[i] = nzv;
        for (int k = 0; k < nzv; k++)
            acol[(size_t)i * nz1 + k] -= 1;
    }
    /* Upper bound of the entries of each local row, then the rows' slots. */
    int nrows = row1 - row0;
    int *cap = xmalloc(sizeof(int) * (nrows + 1));
    memset(cap, 0, sizeof(int) * (nrows + 1));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < arow[i]; k++) {
            int j = acol[(size_t)i * nz1 + k];
            if (j >= row0 && j < row1)
                cap[j - row0 + 1] += arow[i];
        }
    for (int j = 0; j < nrows; j++)
        cap[j + 1] += cap[j];
    entry *slots = xmalloc(sizeof(entry) * (size_t)(cap[nrows] ? cap[nrows] : 1));
    int *used = xmalloc(sizeof(int) * (nrows ? nrows : 1));
    memset(used, 0, sizeof(int) * (nrows ? nrows : 1));
    /* Sum the outer products in the generator's order (i ascending), so every
     * entry is the same double as in the specification's code. */
    double size = 1.0, ratio = pow(rcond, 1.0 / (double)n);
    for (int i = 0; i < n; i++) {
        const int *cols = &acol[(size_t)i * nz1];
        const double *vals = &aelt[(size_t)i * nz1];
        for (int k = 0; k < arow[i]; k++) {
            int j = cols[k];
            if (j < row0 || j >= row1)
                continue;
            double scale = size * vals[k];
            entry *row = &slots[cap[j - row0]];
            int *count = &used[j - row0];
            for (int kk = 0; kk < arow[i]; kk++) {
                int jcol = cols[kk];
                double va = vals[kk] * scale;
                if (jcol == j && j == i)
                    va = va + rcond - c->shift;
                int e = 0;
                while (e < *count && row[e].col != jcol)
                    e++;
                if (e == *count) {
                    row[e].col = jcol;
                    row[e].val = 0.0;
                    (*count)++;
                }
                row[e].val = row[e].val + va;
            }
        }
        size *= ratio;
    }
    csr m;
    m.rowstr = xmalloc(sizeof(int) * (nrows + 1));
    int total = 0;
    for (int j = 0; j < nrows; j++)
        total += used[j];
    m.colidx = xmalloc(sizeof(int) * (size_t)(total ? total : 1));
    m.a = xmalloc(sizeof(double) * (size_t)(total ? total : 1));
    m.rowstr[0] = 0;
    for (int j = 0; j < nrows; j++) {
        entry *row = &slots[cap[j]];
        qsort(row, used[j], sizeof(entry), entry_cmp);
        for (int e = 0; e < used[j]; e++) {
            m.colidx[m.rowstr[j] + e] = row[e].col;
            m.a[m.rowstr[j] + e] = row[e].val;
        }
        m.rowstr[j + 1] = m.rowstr[j] + used[j];
    }
    free(arow);
    free(acol);
    free(aelt);
    free(cap);
    free(slots);
    free(used);
    return m;
}

typedef struct {
    int nrows, row0;
    int *counts, *displs; /* rows of each rank, for Allgatherv */
    csr m;
    double *x, *z, *p, *q, *r, *pfull;
} cg_state;

static double dot(const double *a, const double *b, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    double total;
    MPI_Allreduce(&s, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* out(local rows) = A * in, where in is a local block, first gathered whole. */
static void matvec(cg_state *s, const double *in, double *out)
{
    MPI_Allgatherv(in, s->nrows, MPI_DOUBLE, s->pfull, s->counts, s->displs, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int j = 0; j < s->nrows; j++) {
        double sum = 0.0;
        for (int k = s->m.rowstr[j]; k < s->m.rowstr[j + 1]; k++)
            sum += s->m.a[k] * s->pfull[s->m.colidx[k]];
        out[j] = sum;
    }
}

/* 25 CG iterations on A z = x from z = 0; returns ||x - A z||. */
static double conj_grad(cg_state *s)
{
    int n = s->nrows;
    for (int j = 0; j < n; j++) {
        s->q[j] = 0.0;
        s->z[j] = 0.0;
        s->r[j] = s->x[j];
        s->p[j] = s->r[j];
    }
    double rho = dot(s->r, s->r, n);
    for (int it = 0; it < cg_iterations; it++) {
        matvec(s, s->p, s->q);
        double alpha = rho / dot(s->p, s->q, n);
        double rho0 = rho;
        for (int j = 0; j < n; j++) {
            s->z[j] += alpha * s->p[j];
            s->r[j] -= alpha * s->q[j];
        }
        rho = dot(s->r, s->r, n);
        double beta = rho / rho0;
        for (int j = 0; j < n; j++)
            s->p[j] = s->r[j] + beta * s->p[j];
    }
    matvec(s, s->z, s->r);
    double sum = 0.0;
    for (int j = 0; j < n; j++) {
        double d = s->x[j] - s->r[j];
        sum += d * d;
    }
    double total;
    MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sqrt(total);
}

/* One outer iteration: solve, then zeta = shift + 1 / (x.z), x = z / ||z||. */
static double power_step(cg_state *s, double shift, double *rnorm)
{
    *rnorm = conj_grad(s);
    double xz = dot(s->x, s->z, s->nrows), zz = dot(s->z, s->z, s->nrows);
    double scale = 1.0 / sqrt(zz);
    for (int j = 0; j < s->nrows; j++)
        s->x[j] = scale * s->z[j];
    return shift + 1.0 / xz;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char cls = npb_class(argc, argv, "cg", "SWAB");
    cg_class c;
    switch (cls) {
    case 'S': c = (cg_class){1400, 7, 15, 10.0, 8.5971775078648}; break;
    case 'W': c = (cg_class){7000, 8, 15, 12.0, 10.362595087124}; break;
    case 'A': c = (cg_class){14000, 11, 15, 20.0, 17.130235054029}; break;
    default: c = (cg_class){75000, 13, 75, 60.0, 22.712745482631}; break;
    }
    if (!npb_is_pow2(np) || np > c.n)
        npb_die("cg", "the number of processes must be a power of two");

    cg_state s;
    s.counts = xmalloc(sizeof(int) * np);
    s.displs = xmalloc(sizeof(int) * np);
    for (int r = 0; r < np; r++) {
        s.displs[r] = (int)((long)c.n * r / np);
        s.counts[r] = (int)((long)c.n * (r + 1) / np) - s.displs[r];
    }
    s.row0 = s.displs[rank];
    s.nrows = s.counts[rank];
    randlc(&tran, NPB_A); /* the specification discards one draw before makea */
    s.m = makea(&c, s.row0, s.row0 + s.nrows);
    size_t bytes = sizeof(double) * (size_t)(s.nrows ? s.nrows : 1);
    s.x = xmalloc(bytes);
    s.z = xmalloc(bytes);
    s.p = xmalloc(bytes);
    s.q = xmalloc(bytes);
    s.r = xmalloc(bytes);
    s.pfull = xmalloc(sizeof(double) * c.n);

    /* One untimed outer iteration (touches all pages), then restart from x = 1. */
    double rnorm = 0.0, zeta = 0.0;
    for (int j = 0; j < s.nrows; j++)
        s.x[j] = 1.0;
    power_step(&s, c.shift, &rnorm);
    for (int j = 0; j < s.nrows; j++)
        s.x[j] = 1.0;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 1; it <= c.niter; it++) {
        zeta = power_step(&s, c.shift, &rnorm);
        if (rank == 0 && cls != 'S' && (it == 1 || it == c.niter))
            printf("# iteration %d rnorm=%.14e zeta=%.14e\n", it, rnorm, zeta);
    }
    double seconds = MPI_Wtime() - t0, max_seconds;
    MPI_Allreduce(&seconds, &max_seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    int ok = npb_check(rank, "zeta", zeta, c.zeta_ref, 1e-10);
    double nz = c.nonzer * (c.nonzer + 1.0);
    double mops = 2.0 * c.niter * c.n * (3.0 + nz + 25.0 * (5.0 + nz) + 3.0) / max_seconds / 1e6;
    int status = npb_report(rank, "CG", cls, np, max_seconds, mops, ok);
    free(s.x); free(s.z); free(s.p); free(s.q); free(s.r); free(s.pfull);
    free(s.m.rowstr); free(s.m.colidx); free(s.m.a); free(s.counts); free(s.displs);
    MPI_Finalize();
    return status;
}
