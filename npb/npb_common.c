#include "npb_common.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t mask46 = (UINT64_C(1) << 46) - 1;
static const double two_m46 = 1.0 / 70368744177664.0; /* 2^-46 */

double randlc(double *x, double a)
{
    uint64_t xi = (uint64_t)*x, ai = (uint64_t)a;
    xi = (xi * ai) & mask46;
    *x = (double)xi;
    return (double)xi * two_m46;
}

void vranlc(int n, double *x, double a, double y[])
{
    uint64_t xi = (uint64_t)*x, ai = (uint64_t)a;
    for (int i = 0; i < n; i++) {
        xi = (xi * ai) & mask46;
        y[i] = (double)xi * two_m46;
    }
    *x = (double)xi;
}

double npb_power(double a, int64_t n)
{
    uint64_t result = 1, base = (uint64_t)a;
    while (n > 0) {
        if (n & 1)
            result = (result * base) & mask46;
        base = (base * base) & mask46;
        n >>= 1;
    }
    return (double)result;
}

char npb_class(int argc, char **argv, const char *kernel, const char *allowed)
{
    if (argc >= 2 && strlen(argv[1]) == 1 && strchr(allowed, argv[1][0]) != NULL)
        return argv[1][0];
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "usage: %s CLASS   (npb %s: CLASS is one of %s, got %s)\n", argv[0], kernel, allowed,
                argc >= 2 ? argv[1] : "nothing");
    MPI_Finalize();
    exit(2);
}

int npb_check(int rank, const char *what, double computed, double reference, double epsilon)
{
    double err = fabs(computed - reference) / fabs(reference);
    int ok = err <= epsilon;
    if (rank == 0)
        printf("# %s computed=%.13e reference=%.13e relerr=%.2e %s\n", what, computed, reference, err,
               ok ? "ok" : "WRONG");
    return ok;
}

int npb_report(int rank, const char *kernel, char cls, int np, double seconds, double mops, int verified)
{
    if (rank == 0) {
        printf("NPB %s class=%c np=%d time=%.4f mops=%.2f verification=%s\n", kernel, cls, np, seconds, mops,
               verified ? "SUCCESSFUL" : "UNSUCCESSFUL");
        fflush(stdout);
    }
    return verified ? 0 : 1;
}

void npb_die(const char *kernel, const char *message)
{
    fprintf(stderr, "npb %s: %s\n", kernel, message);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

int npb_is_pow2(long n)
{
    return n >= 1 && (n & (n - 1)) == 0;
}
