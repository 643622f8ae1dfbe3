/* FT: time evolution of the 3-D heat equation by FFT (NPB specification
 * §2.2.5).
 *
 * u0 (nx x ny x nz complex, x fastest) is filled from the NPB generator
 * (seed 314159265, a = 5^13, real then imaginary part of each point in
 * order), transformed forward once, and then, for t = 1..niter, multiplied
 * by exp(-4 alpha pi^2 (i^2 + j^2 + k^2)) (cumulatively, alpha = 1e-6, with
 * i, j, k the signed frequencies) and transformed back (unnormalised).  The
 * checksum of step t is sum_{j=1..1024} u(j mod nx, 3j mod ny, 5j mod nz) /
 * (nx ny nz).
 *
 * Decomposition: slabs of z planes for the x and y transforms, then a
 * transpose (MPI_Alltoall) to slabs of y rows, stored [y][x][z] with z
 * contiguous, for the z transform and the evolution; the inverse goes back
 * the same way.  The 1-D transforms are our own radix-2 FFT (the NPB code
 * uses a different FFT; the checksums agree far inside the tolerance).
 * Verification: each of the checksums against the official values
 * (relative 1e-12, real and imaginary parts each). */
#include "npb_common.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double re, im;
} cplx;

typedef struct {
    int n;
    int *rev;
    cplx *roots[2]; /* [0]: exp(-2 pi i k / n), [1]: exp(+2 pi i k / n), k < n/2 */
} fft_plan;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        npb_die("ft", "out of memory");
    return p;
}

static void plan_init(fft_plan *p, int n)
{
    int bits = 0;
    while ((1 << bits) < n)
        bits++;
    p->n = n;
    p->rev = xmalloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) {
        int r = 0;
        for (int b = 0; b < bits; b++)
            if (i & (1 << b))
                r |= 1 << (bits - 1 - b);
        p->rev[i] = r;
    }
    for (int s = 0; s < 2; s++) {
        p->roots[s] = xmalloc(sizeof(cplx) * (n / 2 + 1));
        for (int k = 0; k < n / 2; k++) {
            double angle = 2.0 * M_PI * k / n;
            p->roots[s][k] = (cplx){cos(angle), s == 0 ? -sin(angle) : sin(angle)};
        }
    }
}

static void plan_free(fft_plan *p)
{
    free(p->rev);
    free(p->roots[0]);
    free(p->roots[1]);
}

/* `count` interleaved transforms of length n: element i of transform b is
 * a[i * count + b].  dir 0 = forward (e^-), 1 = backward (e^+), unnormalised. */
static void fft_multi(const fft_plan *p, int dir, cplx *a, int count)
{
    int n = p->n;
    for (int i = 0; i < n; i++) {
        int j = p->rev[i];
        if (i < j)
            for (int b = 0; b < count; b++) {
                cplx t = a[(size_t)i * count + b];
                a[(size_t)i * count + b] = a[(size_t)j * count + b];
                a[(size_t)j * count + b] = t;
            }
    }
    const cplx *w = p->roots[dir];
    for (int len = 2; len <= n; len <<= 1) {
        int half = len / 2, step = n / len;
        for (int i = 0; i < n; i += len)
            for (int k = 0; k < half; k++) {
                cplx wk = w[k * step];
                cplx *lo = &a[(size_t)(i + k) * count], *hi = &a[(size_t)(i + k + half) * count];
                for (int b = 0; b < count; b++) {
                    double tr = wk.re * hi[b].re - wk.im * hi[b].im;
                    double ti = wk.re * hi[b].im + wk.im * hi[b].re;
                    hi[b].re = lo[b].re - tr;
                    hi[b].im = lo[b].im - ti;
                    lo[b].re += tr;
                    lo[b].im += ti;
                }
            }
    }
}

enum { block = 16 };

static int rank, np, nx, ny, nz, lz, ly;
static fft_plan px, py, pz;
static cplx *sendbuf, *recvbuf, *column;

/* x and y transforms of every local z plane of u[z][y][x]. */
static void fft_xy(int dir, cplx *u)
{
    for (int z = 0; z < lz; z++) {
        cplx *plane = u + (size_t)z * ny * nx;
        for (int y = 0; y < ny; y++)
            fft_multi(&px, dir, plane + (size_t)y * nx, 1);
        for (int x0 = 0; x0 < nx; x0 += block) {
            int count = nx - x0 < block ? nx - x0 : block;
            for (int y = 0; y < ny; y++)
                memcpy(&column[(size_t)y * count], &plane[(size_t)y * nx + x0], sizeof(cplx) * count);
            fft_multi(&py, dir, column, count);
            for (int y = 0; y < ny; y++)
                memcpy(&plane[(size_t)y * nx + x0], &column[(size_t)y * count], sizeof(cplx) * count);
        }
    }
}

/* u[zl][y][x] (z slab) -> t[yl][x][z] (y slab). */
static void transpose_to_y(const cplx *u, cplx *t)
{
    size_t chunk = (size_t)lz * ly * nx;
    for (int d = 0; d < np; d++)
        for (int z = 0; z < lz; z++)
            memcpy(&sendbuf[d * chunk + (size_t)z * ly * nx], &u[((size_t)z * ny + (size_t)d * ly) * nx],
                   sizeof(cplx) * ly * nx);
    MPI_Alltoall(sendbuf, (int)(2 * chunk), MPI_DOUBLE, recvbuf, (int)(2 * chunk), MPI_DOUBLE, MPI_COMM_WORLD);
    for (int s = 0; s < np; s++)
        for (int z = 0; z < lz; z++)
            for (int y = 0; y < ly; y++) {
                const cplx *from = &recvbuf[s * chunk + ((size_t)z * ly + y) * nx];
                cplx *to = &t[(size_t)y * nx * nz + (size_t)s * lz + z];
                for (int x = 0; x < nx; x++)
                    to[(size_t)x * nz] = from[x];
            }
}

/* t[yl][x][z] (y slab) -> u[zl][y][x] (z slab). */
static void transpose_to_z(const cplx *t, cplx *u)
{
    size_t chunk = (size_t)lz * ly * nx;
    for (int d = 0; d < np; d++)
        for (int z = 0; z < lz; z++)
            for (int y = 0; y < ly; y++) {
                cplx *to = &sendbuf[d * chunk + ((size_t)z * ly + y) * nx];
                const cplx *from = &t[(size_t)y * nx * nz + (size_t)d * lz + z];
                for (int x = 0; x < nx; x++)
                    to[x] = from[(size_t)x * nz];
            }
    MPI_Alltoall(sendbuf, (int)(2 * chunk), MPI_DOUBLE, recvbuf, (int)(2 * chunk), MPI_DOUBLE, MPI_COMM_WORLD);
    for (int s = 0; s < np; s++)
        for (int z = 0; z < lz; z++)
            memcpy(&u[((size_t)z * ny + (size_t)s * ly) * nx], &recvbuf[s * chunk + (size_t)z * ly * nx],
                   sizeof(cplx) * ly * nx);
}

static void fft_z(int dir, cplx *t)
{
    for (size_t line = 0; line < (size_t)ly * nx; line++)
        fft_multi(&pz, dir, t + line * nz, 1);
}

/* Sum of the 1024 sample points / (nx ny nz), over all ranks. */
static cplx checksum(const cplx *u)
{
    double s[2] = {0.0, 0.0}, total[2];
    for (int j = 1; j <= 1024; j++) {
        int q = j % nx, r = 3 * j % ny, z = 5 * j % nz;
        if (z >= rank * lz && z < (rank + 1) * lz) {
            const cplx *e = &u[((size_t)(z - rank * lz) * ny + r) * nx + q];
            s[0] += e->re;
            s[1] += e->im;
        }
    }
    MPI_Allreduce(s, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double ntotal = (double)nx * ny * nz;
    return (cplx){total[0] / ntotal, total[1] / ntotal};
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char cls = npb_class(argc, argv, "ft", "SWA");
    enum { niter = 6 };
    static const double reference[3][niter][2] = {
        {{554.6087004964, 484.5363331978}, {554.6385409189, 486.5304269511}, {554.6148406171, 488.3910722336},
         {554.5423607415, 490.1273169046}, {554.4255039624, 491.7475857993}, {554.2683411902, 493.2597244941}},
        {{567.3612178944, 529.3246849175}, {563.1436885271, 528.2149986629}, {559.4024089970, 527.0996558037},
         {556.0698047020, 526.0027904925}, {553.0898991250, 524.9400845633}, {550.4159734538, 523.9212247086}},
        {{504.6735008193, 511.4047905510}, {505.9412319734, 509.8809666433}, {506.9376896287, 509.8144042213},
         {507.7892868474, 510.1336130759}, {508.5233095391, 510.4914655194}, {509.1487099959, 510.7917842803}},
    };
    int which;
    switch (cls) {
    case 'S': nx = 64; ny = 64; nz = 64; which = 0; break;
    case 'W': nx = 128; ny = 128; nz = 32; which = 1; break;
    default: nx = 256; ny = 256; nz = 128; which = 2; break;
    }
    if (!npb_is_pow2(np) || np > nz || np > ny)
        npb_die("ft", "the number of processes must be a power of two, at most ny and nz");
    lz = nz / np;
    ly = ny / np;
    size_t local = (size_t)nx * ny * lz; /* same count in both layouts */
    cplx *u = xmalloc(sizeof(cplx) * local), *u0 = xmalloc(sizeof(cplx) * local), *u1 = xmalloc(sizeof(cplx) * local);
    double *twiddle = xmalloc(sizeof(double) * local);
    sendbuf = xmalloc(sizeof(cplx) * local);
    recvbuf = xmalloc(sizeof(cplx) * local);
    column = xmalloc(sizeof(cplx) * (size_t)ny * block);
    plan_init(&px, nx);
    plan_init(&py, ny);
    plan_init(&pz, nz);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    /* Exponential factors, in the transposed layout t[yl][x][z]. */
    double ap = -4.0 * 1e-6 * M_PI * M_PI;
    for (int yl = 0; yl < ly; yl++) {
        int jj = (rank * ly + yl + ny / 2) % ny - ny / 2;
        for (int x = 0; x < nx; x++) {
            int ii = (x + nx / 2) % nx - nx / 2;
            for (int z = 0; z < nz; z++) {
                int kk = (z + nz / 2) % nz - nz / 2;
                twiddle[((size_t)yl * nx + x) * nz + z] = exp(ap * (double)(kk * kk + jj * jj + ii * ii));
            }
        }
    }
    /* Initial conditions: this rank's z planes, each from its jump-ahead seed. */
    double an = npb_power(NPB_A, 2 * (int64_t)nx * ny);
    double start = 314159265.0;
    randlc(&start, npb_power(NPB_A, 2 * (int64_t)nx * ny * rank * lz));
    for (int z = 0; z < lz; z++) {
        double x0 = start;
        vranlc(2 * nx * ny, &x0, NPB_A, (double *)&u[(size_t)z * nx * ny]);
        randlc(&start, an);
    }
    fft_xy(0, u);
    transpose_to_y(u, u0);
    fft_z(0, u0);

    int ok = 1;
    for (int it = 1; it <= niter; it++) {
        for (size_t i = 0; i < local; i++) {
            u0[i].re *= twiddle[i];
            u0[i].im *= twiddle[i];
        }
        memcpy(u1, u0, sizeof(cplx) * local);
        fft_z(1, u1);
        transpose_to_z(u1, u);
        fft_xy(1, u);
        cplx sum = checksum(u);
        char what[64];
        snprintf(what, sizeof what, "checksum %d real", it);
        ok &= npb_check(rank, what, sum.re, reference[which][it - 1][0], 1e-12);
        snprintf(what, sizeof what, "checksum %d imag", it);
        ok &= npb_check(rank, what, sum.im, reference[which][it - 1][1], 1e-12);
    }
    double seconds = MPI_Wtime() - t0, max_seconds;
    MPI_Allreduce(&seconds, &max_seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double ntotal = (double)nx * ny * nz;
    double mops = ntotal * (14.8157 + 7.19641 * log(ntotal) + (5.23518 + 7.21113 * log(ntotal)) * niter) /
                  max_seconds / 1e6;
    int status = npb_report(rank, "FT", cls, np, max_seconds, mops, ok);
    free(u); free(u0); free(u1); free(twiddle); free(sendbuf); free(recvbuf); free(column);
    plan_free(&px); plan_free(&py); plan_free(&pz);
    MPI_Finalize();
    return status;
}
