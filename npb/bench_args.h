/* bench_args.h — command-line sizes of the npb/ micro-benchmarks
 * (impi_pingpong, tcp_pingpong, coll_bench): byte counts with k/m/g
 * suffixes (powers of 1024) and comma-separated lists of them. */
#ifndef GRIDMPI_NPB_BENCH_ARGS_H
#define GRIDMPI_NPB_BENCH_ARGS_H

#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64

/* The ping-pongs' rounds (impi_pingpong, tcp_pingpong): `budget` bytes over
 * `per` bytes a round, 3 to 10000 (10000 when `per` is 0), and a tenth of
 * them, 1 to 1000, as warm-up. */
static inline int bench_rounds(long budget, long per) {
  long q = per > 0 ? budget / per : 10000;
  return q < 3 ? 3 : q > 10000 ? 10000 : (int)q;
}
static inline int bench_warmup(int rounds) { return rounds / 10 < 1 ? 1 : rounds / 10 > 1000 ? 1000 : rounds / 10; }

/* "64k" -> 65536; *ok is 0 for anything that is not a non-negative number
 * with an optional suffix. */
static long parse_bytes(const char *text, int *ok) {
  char *end;
  double v = strtod(text, &end);
  long mult = 1;
  if (*end == 'k' || *end == 'K') mult = 1024, ++end;
  else if (*end == 'm' || *end == 'M') mult = 1024L * 1024, ++end;
  else if (*end == 'g' || *end == 'G') mult = 1024L * 1024 * 1024, ++end;
  *ok = end != text && *end == '\0' && v >= 0;
  return (long)(v * (double)mult);
}

/* "8,4k,1m" into sizes (room for MAX_SIZES); the count, or -1 when an item
 * is malformed or there are too many. */
static int parse_sizes(const char *list, long *sizes) {
  int n = 0;
  char *copy = strdup(list), *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int ok;
    long v = parse_bytes(t, &ok);
    if (!ok || n == MAX_SIZES) {
      free(copy);
      return -1;
    }
    sizes[n++] = v;
  }
  free(copy);
  return n;
}

#endif
