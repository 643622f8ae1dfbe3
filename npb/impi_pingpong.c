/* impi_pingpong: MPI ping-pong between ranks 0 and 1 (MPI C API only).
 *
 *     impi_pingpong [--sizes LIST] [--max BYTES] [--iters N] [--budget BYTES]
 *
 * For each size, rank 0 sends `size` bytes (MPI_BYTE) to rank 1, which sends
 * the same buffer back; one warm-up round, then `iters` timed rounds, each
 * timed on its own.  Latency is half a round trip; bandwidth is size over
 * half a round trip (10^6 bytes per second).  Run as a 1+1 two-cluster job
 * (npb/impi-bench) it measures the IMPI transport; any other ranks idle.
 *
 * Sizes: LIST is comma-separated, with k/m suffixes (powers of two): default
 * 0,1,8,64,512,4k,16k,64k,256k,1m,4m,16m; --max drops larger ones.  Iterations:
 * --iters N for every size, else budget/size clamped to [3, 1000] (budget
 * default 256m: bytes sent one way per size).  The echoed data is compared
 * with what was sent after each size (outside the timing).
 *
 * Output (rank 0), one line per size, the same as tcp_pingpong's:
 *     PP bytes=65536 iters=1000 lat_avg_us=.. lat_min_us=.. mbps_avg=.. mbps_best=..
 * Exit status 0 when every echo matched.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  long sizes[MAX_SIZES];
  int nsizes = parse_sizes("0,1,8,64,512,4k,16k,64k,256k,1m,4m,16m", sizes);
  long max = -1, budget = 256L * 1024 * 1024;
  int iters_fixed = 0, ok = 1;
  for (int i = 1; i < argc; ++i) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int good = v != NULL;
    if (!strcmp(argv[i], "--sizes") && v) nsizes = parse_sizes(v, sizes), good = nsizes > 0;
    else if (!strcmp(argv[i], "--max") && v) max = parse_bytes(v, &good);
    else if (!strcmp(argv[i], "--budget") && v) budget = parse_bytes(v, &good);
    else if (!strcmp(argv[i], "--iters") && v) iters_fixed = atoi(v), good = iters_fixed > 0;
    else good = 0;
    if (!good) {
      if (rank == 0)
        fprintf(stderr, "impi_pingpong: bad argument %s%s%s (usage: [--sizes LIST] [--max BYTES] [--iters N] "
                        "[--budget BYTES])\n", argv[i], v ? " " : "", v ? v : "");
      MPI_Finalize();
      return 2;
    }
    ++i;
  }
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "impi_pingpong: needs 2 processes (ranks 0 and 1), got %d\n", size);
    MPI_Finalize();
    return 2;
  }
  long largest = 0;
  for (int s = 0; s < nsizes; ++s)
    if ((max < 0 || sizes[s] <= max) && sizes[s] > largest) largest = sizes[s];
  unsigned char *sbuf = malloc((size_t)largest + 1), *rbuf = malloc((size_t)largest + 1);
  if (!sbuf || !rbuf) {
    fprintf(stderr, "impi_pingpong: rank %d: cannot allocate 2 x %ld bytes\n", rank, largest);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (long j = 0; j <= largest; ++j) sbuf[j] = (unsigned char)(j * 131 + 7), rbuf[j] = 0;

  if (rank == 0) {
    char name[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(name, &len);
    printf("# impi_pingpong: ranks 0 <-> 1 of %d, %s; MB/s = 10^6 bytes/s, latency = half round trip\n", size,
           name);
    fflush(stdout);
  }
  for (int s = 0; s < nsizes; ++s) {
    long n = sizes[s];
    if (max >= 0 && n > max) continue;
    int iters = iters_fixed;
    if (!iters) {
      long q = n > 0 ? budget / n : 1000;
      iters = q < 3 ? 3 : q > 1000 ? 1000 : (int)q;
    }
    double total = 0, best = 1e30;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = -1; it < iters; ++it) { /* it == -1: warm-up */
      double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(sbuf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(rbuf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(rbuf, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
      }
      double dt = MPI_Wtime() - t0;
      if (it >= 0) {
        total += dt;
        if (dt < best) best = dt;
      }
    }
    if (rank == 0) {
      if (memcmp(sbuf, rbuf, (size_t)n) != 0) {
        fprintf(stderr, "impi_pingpong: %ld bytes: the echo differs from what was sent\n", n);
        ok = 0;
      }
      double half_avg = total / iters / 2, half_min = best / 2;
      printf("PP bytes=%ld iters=%d lat_avg_us=%.2f lat_min_us=%.2f mbps_avg=%.2f mbps_best=%.2f\n", n, iters,
             half_avg * 1e6, half_min * 1e6, (double)n / half_avg / 1e6, (double)n / half_min / 1e6);
      fflush(stdout);
      memset(rbuf, 0, (size_t)n);
    }
  }
  free(sbuf);
  free(rbuf);
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return ok ? 0 : 1;
}
