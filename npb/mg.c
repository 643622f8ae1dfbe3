/* MG: V-cycle multigrid for the discrete Poisson problem del^2 u = v on a
 * periodic n^3 grid (NPB specification §2.2.2).
 *
 * v is zero except +1 at the ten largest and -1 at the ten smallest of n^3
 * numbers from the NPB generator (seed 314159265, a = 5^13, point (i,j,k)
 * taking draw i + n j + n^2 k + 1).  Each of the `nit` iterations computes
 * r = v - A u and u += M r, where M is one V-cycle: restrict (P^T, 27-point)
 * down to the 2^3 grid, smooth there (S), then interpolate (Q, trilinear),
 * correct the residual and smooth on the way up.  A, S are the 27-point
 * stencils of the specification (coefficients a and c below); the result is
 * ||r||_2 / sqrt(n^3) after the last iteration.
 *
 * Decomposition: slabs of whole x-y planes.  A level whose n is at least
 * 2 * np is split (n / np planes per rank, one ghost plane on each side,
 * exchanged with MPI_Sendrecv); coarser levels are held whole by every rank
 * and computed redundantly (the restriction onto the first such level ends
 * with an MPI_Allgather).  Every grid value is computed with the same
 * operations in the same order as the serial algorithm, so only the norm
 * (MPI_Allreduce) depends on np.  Verification: rnm2 against the official
 * value (relative 1e-8). */
#include "npb_common.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { max_levels = 12, extremes = 10 };

typedef struct {
    int n;      /* interior points per dimension */
    int m;      /* n + 2: points per x row and y column, ghosts included */
    int planes; /* interior planes held here */
    int z0;     /* global index (0-based) of the first plane held */
    int split;  /* planes spread over the ranks (else every rank has all) */
    size_t plane, size;
    double *u, *r;
} level;

static int rank, np;
static level lv[max_levels + 1];
static double *scratch1, *scratch2;

#define AT(g, L, i3, i2, i1) ((g)[((size_t)(i3) * (L)->m + (i2)) * (L)->m + (i1)])

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        npb_die("mg", "out of memory");
    return p;
}

/* Periodic ghosts: x and y locally, z by the neighbouring ranks (split levels). */
static void comm3(const level *L, double *g)
{
    int m = L->m, n = L->n;
    for (int i3 = 1; i3 <= L->planes; i3++) {
        for (int i2 = 1; i2 <= n; i2++) {
            AT(g, L, i3, i2, 0) = AT(g, L, i3, i2, n);
            AT(g, L, i3, i2, n + 1) = AT(g, L, i3, i2, 1);
        }
        for (int i1 = 0; i1 < m; i1++) {
            AT(g, L, i3, 0, i1) = AT(g, L, i3, n, i1);
            AT(g, L, i3, n + 1, i1) = AT(g, L, i3, 1, i1);
        }
    }
    double *first = g + L->plane, *last = g + L->planes * L->plane;
    double *below = g, *above = g + (L->planes + 1) * L->plane;
    if (L->split) {
        int up = (rank + 1) % np, down = (rank + np - 1) % np;
        MPI_Sendrecv(last, (int)L->plane, MPI_DOUBLE, up, 1, below, (int)L->plane, MPI_DOUBLE, down, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(first, (int)L->plane, MPI_DOUBLE, down, 2, above, (int)L->plane, MPI_DOUBLE, up, 2,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        memcpy(below, last, sizeof(double) * L->plane);
        memcpy(above, first, sizeof(double) * L->plane);
    }
}

static const double a[4] = {-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0};
static double c[4];

/* r = v - A u (r may be v); a[1] is zero and its term is left out. */
static void resid(const level *L, const double *u, const double *v, double *r)
{
    int m = L->m, n = L->n;
    double *u1 = scratch1, *u2 = scratch2;
    for (int i3 = 1; i3 <= L->planes; i3++)
        for (int i2 = 1; i2 <= n; i2++) {
            for (int i1 = 0; i1 < m; i1++) {
                u1[i1] = AT(u, L, i3, i2 - 1, i1) + AT(u, L, i3, i2 + 1, i1) + AT(u, L, i3 - 1, i2, i1) +
                         AT(u, L, i3 + 1, i2, i1);
                u2[i1] = AT(u, L, i3 - 1, i2 - 1, i1) + AT(u, L, i3 - 1, i2 + 1, i1) +
                         AT(u, L, i3 + 1, i2 - 1, i1) + AT(u, L, i3 + 1, i2 + 1, i1);
            }
            for (int i1 = 1; i1 <= n; i1++)
                AT(r, L, i3, i2, i1) = AT(v, L, i3, i2, i1) - a[0] * AT(u, L, i3, i2, i1) -
                                       a[2] * (u2[i1] + u1[i1 - 1] + u1[i1 + 1]) - a[3] * (u2[i1 - 1] + u2[i1 + 1]);
        }
    comm3(L, r);
}

/* u += S r (the smoother); c[3] is zero and its term is left out. */
static void psinv(const level *L, const double *r, double *u)
{
    int m = L->m, n = L->n;
    double *r1 = scratch1, *r2 = scratch2;
    for (int i3 = 1; i3 <= L->planes; i3++)
        for (int i2 = 1; i2 <= n; i2++) {
            for (int i1 = 0; i1 < m; i1++) {
                r1[i1] = AT(r, L, i3, i2 - 1, i1) + AT(r, L, i3, i2 + 1, i1) + AT(r, L, i3 - 1, i2, i1) +
                         AT(r, L, i3 + 1, i2, i1);
                r2[i1] = AT(r, L, i3 - 1, i2 - 1, i1) + AT(r, L, i3 - 1, i2 + 1, i1) +
                         AT(r, L, i3 + 1, i2 - 1, i1) + AT(r, L, i3 + 1, i2 + 1, i1);
            }
            for (int i1 = 1; i1 <= n; i1++)
                AT(u, L, i3, i2, i1) = AT(u, L, i3, i2, i1) + c[0] * AT(r, L, i3, i2, i1) +
                                       c[1] * (AT(r, L, i3, i2, i1 - 1) + AT(r, L, i3, i2, i1 + 1) + r1[i1]) +
                                       c[2] * (r2[i1] + r1[i1 - 1] + r1[i1 + 1]);
        }
    comm3(L, u);
}

/* Coarse s = P^T r (full weighting): coarse point j sits on fine point 2j.
 * `count` coarse planes are computed, written from coarse plane `first`. */
static void rprj3_planes(const level *F, const double *r, const level *C, double *s, int first, int count)
{
    double *x1 = scratch1, *y1 = scratch2;
    int mc = C->m;
    for (int j3 = 1; j3 <= count; j3++) {
        int i3 = 2 * j3 - 1;
        for (int j2 = 1; j2 < mc - 1; j2++) {
            int i2 = 2 * j2 - 1;
            for (int j1 = 1; j1 < mc; j1++) {
                int i1 = 2 * j1 - 1;
                x1[i1] = AT(r, F, i3 + 1, i2, i1) + AT(r, F, i3 + 1, i2 + 2, i1) + AT(r, F, i3, i2 + 1, i1) +
                         AT(r, F, i3 + 2, i2 + 1, i1);
                y1[i1] = AT(r, F, i3, i2, i1) + AT(r, F, i3 + 2, i2, i1) + AT(r, F, i3, i2 + 2, i1) +
                         AT(r, F, i3 + 2, i2 + 2, i1);
            }
            for (int j1 = 1; j1 < mc - 1; j1++) {
                int i1 = 2 * j1 - 1;
                double y2 = AT(r, F, i3, i2, i1 + 1) + AT(r, F, i3 + 2, i2, i1 + 1) + AT(r, F, i3, i2 + 2, i1 + 1) +
                            AT(r, F, i3 + 2, i2 + 2, i1 + 1);
                double x2 = AT(r, F, i3 + 1, i2, i1 + 1) + AT(r, F, i3 + 1, i2 + 2, i1 + 1) +
                            AT(r, F, i3, i2 + 1, i1 + 1) + AT(r, F, i3 + 2, i2 + 1, i1 + 1);
                AT(s, C, first + j3 - 1, j2, j1) =
                    0.5 * AT(r, F, i3 + 1, i2 + 1, i1 + 1) +
                    0.25 * (AT(r, F, i3 + 1, i2 + 1, i1) + AT(r, F, i3 + 1, i2 + 1, i1 + 2) + x2) +
                    0.125 * (x1[i1] + x1[i1 + 2] + y2) + 0.0625 * (y1[i1] + y1[i1 + 2]);
            }
        }
    }
}

static void rprj3(const level *F, const double *r, const level *C, double *s)
{
    if (C->split || !F->split) {
        rprj3_planes(F, r, C, s, 1, C->planes);
    } else {
        /* Onto the first whole level: each rank computes its share of the
         * coarse planes, then everybody gathers all of them. */
        int mine = F->planes / 2, first = 1 + rank * mine;
        rprj3_planes(F, r, C, s, first, mine);
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s + C->plane, (int)(mine * C->plane), MPI_DOUBLE,
                      MPI_COMM_WORLD);
    }
    comm3(C, s);
}

/* u += Q z (trilinear interpolation), ghosts included: no exchange needed. */
static void interp(const level *C, const double *zfull, const level *F, double *u)
{
    const double *z = zfull;
    int mm3 = C->planes + 2;
    if (F->split && !C->split) { /* take the coarse planes under this rank's slab */
        z = zfull + (size_t)(rank * F->planes / 2) * C->plane;
        mm3 = F->planes / 2 + 2;
    }
    int mm = C->m;
    double *z1 = scratch1, *z2 = scratch2, *z3 = scratch2 + mm;
    for (int i3 = 0; i3 < mm3 - 1; i3++)
        for (int i2 = 0; i2 < mm - 1; i2++) {
            for (int i1 = 0; i1 < mm; i1++) {
                z1[i1] = AT(z, C, i3, i2 + 1, i1) + AT(z, C, i3, i2, i1);
                z2[i1] = AT(z, C, i3 + 1, i2, i1) + AT(z, C, i3, i2, i1);
                z3[i1] = AT(z, C, i3 + 1, i2 + 1, i1) + AT(z, C, i3 + 1, i2, i1) + z1[i1];
            }
            for (int i1 = 0; i1 < mm - 1; i1++) {
                AT(u, F, 2 * i3, 2 * i2, 2 * i1) += AT(z, C, i3, i2, i1);
                AT(u, F, 2 * i3, 2 * i2, 2 * i1 + 1) += 0.5 * (AT(z, C, i3, i2, i1 + 1) + AT(z, C, i3, i2, i1));
            }
            for (int i1 = 0; i1 < mm - 1; i1++) {
                AT(u, F, 2 * i3, 2 * i2 + 1, 2 * i1) += 0.5 * z1[i1];
                AT(u, F, 2 * i3, 2 * i2 + 1, 2 * i1 + 1) += 0.25 * (z1[i1] + z1[i1 + 1]);
            }
            for (int i1 = 0; i1 < mm - 1; i1++) {
                AT(u, F, 2 * i3 + 1, 2 * i2, 2 * i1) += 0.5 * z2[i1];
                AT(u, F, 2 * i3 + 1, 2 * i2, 2 * i1 + 1) += 0.25 * (z2[i1] + z2[i1 + 1]);
            }
            for (int i1 = 0; i1 < mm - 1; i1++) {
                AT(u, F, 2 * i3 + 1, 2 * i2 + 1, 2 * i1) += 0.25 * z3[i1];
                AT(u, F, 2 * i3 + 1, 2 * i2 + 1, 2 * i1 + 1) += 0.125 * (z3[i1] + z3[i1 + 1]);
            }
        }
}

static void zero3(const level *L, double *g)
{
    memset(g, 0, sizeof(double) * L->size);
}

/* One V-cycle: u += M r on the finest level lt. */
static void mg3p(int lt, double *v)
{
    for (int k = lt; k >= 2; k--)
        rprj3(&lv[k], lv[k].r, &lv[k - 1], lv[k - 1].r);
    zero3(&lv[1], lv[1].u);
    psinv(&lv[1], lv[1].r, lv[1].u);
    for (int k = 2; k < lt; k++) {
        zero3(&lv[k], lv[k].u);
        interp(&lv[k - 1], lv[k - 1].u, &lv[k], lv[k].u);
        resid(&lv[k], lv[k].u, lv[k].r, lv[k].r);
        psinv(&lv[k], lv[k].r, lv[k].u);
    }
    interp(&lv[lt - 1], lv[lt - 1].u, &lv[lt], lv[lt].u);
    resid(&lv[lt], lv[lt].u, v, lv[lt].r);
    psinv(&lv[lt], lv[lt].r, lv[lt].u);
}

/* sqrt(sum r^2 / n^3) over the whole grid. */
static double norm2u3(const level *L, const double *g)
{
    double s = 0.0;
    for (int i3 = 1; i3 <= L->planes; i3++)
        for (int i2 = 1; i2 <= L->n; i2++)
            for (int i1 = 1; i1 <= L->n; i1++)
                s += AT(g, L, i3, i2, i1) * AT(g, L, i3, i2, i1);
    double total;
    MPI_Allreduce(&s, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sqrt(total / ((double)L->n * L->n * L->n));
}

typedef struct {
    double value, index;
} extreme;

static int by_value(const void *x, const void *y)
{
    double a = ((const extreme *)x)->value, b = ((const extreme *)y)->value;
    return (a > b) - (a < b);
}

/* The right-hand side: random numbers, then +1 at the ten largest and -1 at
 * the ten smallest, zero elsewhere. */
static void zran3(const level *L, double *v)
{
    int n = L->n;
    double a1 = npb_power(NPB_A, n), a2 = npb_power(NPB_A, (int64_t)n * n);
    double x0 = 314159265.0;
    randlc(&x0, npb_power(NPB_A, (int64_t)n * n * L->z0));
    zero3(L, v);
    for (int i3 = 1; i3 <= L->planes; i3++) {
        double x1 = x0;
        for (int i2 = 1; i2 <= n; i2++) {
            double xx = x1;
            vranlc(n, &xx, NPB_A, &AT(v, L, i3, i2, 1));
            randlc(&x1, a1);
        }
        randlc(&x0, a2);
    }
    /* Local candidates: the ten smallest in low[], the ten largest in high[]. */
    extreme low[extremes], high[extremes];
    for (int i = 0; i < extremes; i++) {
        low[i] = (extreme){2.0, -1};
        high[i] = (extreme){-1.0, -1};
    }
    for (int i3 = 1; i3 <= L->planes; i3++)
        for (int i2 = 1; i2 <= n; i2++)
            for (int i1 = 1; i1 <= n; i1++) {
                double x = AT(v, L, i3, i2, i1);
                double index = (double)(i1 - 1) + n * ((double)(i2 - 1) + (double)n * (L->z0 + i3 - 1));
                if (x > high[0].value) { /* high[] ascending: [0] is the smallest kept */
                    high[0] = (extreme){x, index};
                    qsort(high, extremes, sizeof(extreme), by_value);
                }
                if (x < low[extremes - 1].value) { /* low[] ascending: [9] the largest kept */
                    low[extremes - 1] = (extreme){x, index};
                    qsort(low, extremes, sizeof(extreme), by_value);
                }
            }
    extreme *all_low = xmalloc(sizeof(extreme) * extremes * np), *all_high = xmalloc(sizeof(extreme) * extremes * np);
    MPI_Allgather(low, 2 * extremes, MPI_DOUBLE, all_low, 2 * extremes, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allgather(high, 2 * extremes, MPI_DOUBLE, all_high, 2 * extremes, MPI_DOUBLE, MPI_COMM_WORLD);
    qsort(all_low, (size_t)extremes * np, sizeof(extreme), by_value);
    qsort(all_high, (size_t)extremes * np, sizeof(extreme), by_value);
    zero3(L, v);
    long plane = (long)n * n;
    for (int i = 0; i < extremes; i++) {
        const extreme *marks[2] = {&all_low[i], &all_high[(size_t)extremes * np - 1 - i]};
        for (int s = 0; s < 2; s++) {
            long index = (long)marks[s]->index;
            int g3 = (int)(index / plane), g2 = (int)(index % plane / n), g1 = (int)(index % n);
            if (g3 >= L->z0 && g3 < L->z0 + L->planes)
                AT(v, L, g3 - L->z0 + 1, g2 + 1, g1 + 1) = s == 0 ? -1.0 : 1.0;
        }
    }
    free(all_low);
    free(all_high);
    comm3(L, v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char cls = npb_class(argc, argv, "mg", "SWAB");
    int n, nit;
    double rnm2_ref;
    switch (cls) {
    case 'S': n = 32; nit = 4; rnm2_ref = 0.5307707005734e-04; break;
    case 'W': n = 128; nit = 4; rnm2_ref = 0.6467329375339e-05; break;
    case 'A': n = 256; nit = 4; rnm2_ref = 0.2433365309069e-05; break;
    default: n = 256; nit = 20; rnm2_ref = 0.1800564401355e-05; break;
    }
    if (cls == 'S' || cls == 'W' || cls == 'A') {
        c[0] = -3.0 / 8.0; c[1] = 1.0 / 32.0; c[2] = -1.0 / 64.0; c[3] = 0.0;
    } else {
        c[0] = -3.0 / 17.0; c[1] = 1.0 / 33.0; c[2] = -1.0 / 61.0; c[3] = 0.0;
    }
    int lt = 0;
    while ((1 << lt) < n)
        lt++;
    if (!npb_is_pow2(np) || 2 * np > n)
        npb_die("mg", "the number of processes must be a power of two, at most n/2");
    for (int k = 1; k <= lt; k++) {
        level *L = &lv[k];
        L->n = 1 << k;
        L->m = L->n + 2;
        L->split = np > 1 && L->n >= 2 * np;
        L->planes = L->split ? L->n / np : L->n;
        L->z0 = L->split ? rank * L->planes : 0;
        L->plane = (size_t)L->m * L->m;
        L->size = L->plane * (L->planes + 2);
        L->u = xmalloc(sizeof(double) * L->size);
        L->r = xmalloc(sizeof(double) * L->size);
        zero3(L, L->u);
        zero3(L, L->r);
    }
    scratch1 = xmalloc(sizeof(double) * (n + 2));
    scratch2 = xmalloc(sizeof(double) * 2 * (n + 2));
    level *top = &lv[lt];
    double *v = xmalloc(sizeof(double) * top->size);

    /* One untimed iteration, then start again from scratch (as the specification). */
    zran3(top, v);
    resid(top, top->u, v, top->r);
    mg3p(lt, v);
    resid(top, top->u, v, top->r);
    zero3(top, top->u);
    zran3(top, v);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    resid(top, top->u, v, top->r);
    for (int it = 1; it <= nit; it++) {
        mg3p(lt, v);
        resid(top, top->u, v, top->r);
    }
    double rnm2 = norm2u3(top, top->r);
    double seconds = MPI_Wtime() - t0, max_seconds;
    MPI_Allreduce(&seconds, &max_seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    int ok = npb_check(rank, "rnm2", rnm2, rnm2_ref, 1e-8);
    double mops = 58.0 * nit * (double)n * n * n / max_seconds / 1e6;
    int status = npb_report(rank, "MG", cls, np, max_seconds, mops, ok);
    for (int k = 1; k <= lt; k++) {
        free(lv[k].u);
        free(lv[k].r);
    }
    free(v);
    free(scratch1);
    free(scratch2);
    MPI_Finalize();
    return status;
}
