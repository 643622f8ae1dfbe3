/* Shared helpers of the NPB-style kernels: the NPB pseudo-random generator,
 * class parsing, and the one result line every kernel prints.
 *
 * The generator is the one of the NPB specification (RNR-94-007):
 *   x_{k+1} = a * x_k mod 2^46,  r_k = x_k * 2^-46,  a = 5^13 by default.
 * NPB keeps x in a double (every value below 2^46 is exact) and multiplies
 * with a 23-bit split; we multiply in 64-bit unsigned integers instead, which
 * gives the identical (exact) sequence because 2^46 divides 2^64. */
#ifndef NPB_COMMON_H
#define NPB_COMMON_H

#include <stdint.h>

#define NPB_A 1220703125.0 /* 5^13 */

/* One step: *x = a * *x mod 2^46; returns the new *x scaled to (0, 1). */
double randlc(double *x, double a);
/* n steps, writing the n scaled values to y[0..n-1]. */
void vranlc(int n, double *x, double a, double y[]);
/* a^n mod 2^46 (a as a double holding an integer below 2^46). */
double npb_power(double a, int64_t n);

/* The class letter from argv[1] ("S", "W", "A", "B"); exits with a usage
 * message (rank 0) when it is missing or not in `allowed`. */
char npb_class(int argc, char **argv, const char *kernel, const char *allowed);

/* True when |computed - reference| <= epsilon * |reference|; prints a
 * "# <what> computed=... reference=... relerr=..." line on rank 0. */
int npb_check(int rank, const char *what, double computed, double reference, double epsilon);

/* The result line, printed by rank 0:
 *   NPB <KERNEL> class=<C> np=<N> time=<s> mops=<m> verification=SUCCESSFUL|UNSUCCESSFUL
 * Returns the exit status for main (0 when verified). */
int npb_report(int rank, const char *kernel, char cls, int np, double seconds, double mops, int verified);

/* Rank-0 fatal error: prints "npb <kernel>: <message>" and aborts the job. */
void npb_die(const char *kernel, const char *message);

/* True when n is a power of two (n >= 1). */
int npb_is_pow2(long n);

#endif
