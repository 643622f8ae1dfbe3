/* EP: embarrassingly parallel Gaussian deviates (NPB specification §2.2.1).
 *
 * 2^(M+1) uniform numbers from the NPB generator (seed 271828183, a = 5^13)
 * are taken in pairs (x, y) mapped to (-1, 1)^2; each pair inside the unit
 * circle (t = x^2 + y^2 <= 1) gives the Gaussian pair X = x sqrt(-2 ln t / t),
 * Y = y sqrt(-2 ln t / t) (Marsaglia polar method).  The sums of X and of Y
 * and the counts per square annulus l <= max(|X|, |Y|) < l+1 are the result.
 * The numbers are processed in 2^(M-16) batches of 2^16 pairs; each rank takes
 * a contiguous range of batches and jumps the generator to the first one.
 * Verification: sx and sy against the official values (relative 1e-8). */
#include "npb_common.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { batch_log2 = 16, batch_pairs = 1 << batch_log2, annuli = 10 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char cls = npb_class(argc, argv, "ep", "SWAB");
    int m;
    double sx_ref, sy_ref;
    switch (cls) {
    case 'S': m = 24; sx_ref = -3.247834652034740e+3; sy_ref = -6.958407078382297e+3; break;
    case 'W': m = 25; sx_ref = -2.863319731645753e+3; sy_ref = -6.320053679109499e+3; break;
    case 'A': m = 28; sx_ref = -4.295875165629892e+3; sy_ref = -1.580732573678431e+4; break;
    default: m = 30; sx_ref = 4.033815542441498e+4; sy_ref = -2.660669192809235e+4; break;
    }
    long batches = 1L << (m - batch_log2);
    if (!npb_is_pow2(np) || np > batches)
        npb_die("ep", "the number of processes must be a power of two, at most the number of batches");

    double *x = malloc(sizeof(double) * 2 * batch_pairs);
    if (x == NULL)
        npb_die("ep", "out of memory");
    /* an = a^(2 * batch_pairs): the generator's stride from one batch to the next. */
    double an = NPB_A;
    for (int i = 0; i <= batch_log2; i++)
        randlc(&an, an);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    double sx = 0.0, sy = 0.0, q[annuli] = {0};
    long first = rank * (batches / np), last = first + batches / np;
    for (long k = first; k < last; k++) {
        /* seed = 271828183 * an^k, by binary exponentiation as in the spec. */
        double seed = 271828183.0, power = an;
        for (long kk = k; kk != 0; kk /= 2) {
            if (kk & 1)
                randlc(&seed, power);
            randlc(&power, power);
        }
        vranlc(2 * batch_pairs, &seed, NPB_A, x);
        for (int i = 0; i < batch_pairs; i++) {
            double x1 = 2.0 * x[2 * i] - 1.0, x2 = 2.0 * x[2 * i + 1] - 1.0;
            double t = x1 * x1 + x2 * x2;
            if (t <= 1.0) {
                double f = sqrt(-2.0 * log(t) / t);
                double gx = x1 * f, gy = x2 * f;
                int l = (int)fmax(fabs(gx), fabs(gy));
                q[l] += 1.0;
                sx += gx;
                sy += gy;
            }
        }
    }
    double local[2 + annuli] = {sx, sy}, total[2 + annuli];
    for (int i = 0; i < annuli; i++)
        local[2 + i] = q[i];
    MPI_Allreduce(local, total, 2 + annuli, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double seconds = MPI_Wtime() - t0;
    double max_seconds;
    MPI_Allreduce(&seconds, &max_seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    double gaussian_pairs = 0.0;
    for (int i = 0; i < annuli; i++)
        gaussian_pairs += total[2 + i];
    if (rank == 0)
        printf("# pairs=%.0f gaussian=%.0f\n", ldexp(1.0, m), gaussian_pairs);
    int ok = npb_check(rank, "sx", total[0], sx_ref, 1e-8);
    ok &= npb_check(rank, "sy", total[1], sy_ref, 1e-8);
    double mops = ldexp(1.0, m + 1) / max_seconds / 1e6;
    int status = npb_report(rank, "EP", cls, np, max_seconds, mops, ok);
    free(x);
    MPI_Finalize();
    return status;
}
