/* impi_pingpong: MPI ping-pong between ranks 0 and 1 (MPI C API only).
 *
 *     impi_pingpong [--sizes LIST] [--max BYTES] [--iters N] [--budget BYTES]
 *                   [--stream [--window W]] [--type byte|int|long|double]
 *
 * For each size, rank 0 sends `size` bytes (MPI_BYTE; with --type, size / 4
 * or 8 elements of that type, so that a conversion between clusters shows
 * in the numbers; sizes are rounded down to whole elements) to rank 1, which sends
 * the same buffer back; warm-up rounds (a tenth of `iters`, 1 to 1000), then
 * `iters` timed rounds, each timed on its own.  Latency is half a round trip; bandwidth is size over
 * half a round trip (10^6 bytes per second).  Run as a 1+1 two-cluster job
 * (npb/impi-bench) it measures the IMPI transport; any other ranks idle.
 *
 * Sizes: LIST is comma-separated, with k/m suffixes (powers of two): default
 * 0,1,8,64,512,4k,16k,64k,256k,1m,4m,16m; --max drops larger ones.  Iterations:
 * --iters N for every size, else budget/size clamped to [3, 10000] (budget
 * default 256m: bytes sent one way per size).  10000 rounds of a small size
 * take milliseconds: with 1000 (0.2 ms on shared memory) one preemption,
 * e.g. by the launcher forwarding the previous size's line, was a third of
 * the result.  The echoed data is compared
 * with what was sent after each size (outside the timing).
 *
 * Output (rank 0), one line per size, the same as tcp_pingpong's:
 *     PP bytes=65536 iters=1000 lat_avg_us=.. lat_min_us=.. mbps_avg=.. mbps_best=..
 *
 * --stream measures streaming bandwidth instead of the ping-pong: per round,
 * rank 0 posts W (--window, default 16) MPI_Isend of `size` bytes from one
 * buffer, rank 1 receives them with W MPI_Irecv into W separate buffers, and
 * after its MPI_Waitall answers with one 0-byte message; a round is timed
 * from the first send to the arrival of that answer.  Iterations are rounds
 * (budget / (W size), clamped to [3, 10000], unless --iters).  Rank 1
 * compares every buffer of the last round with what was sent.  One line per
 * size (mbps = W size over a round; us_per_msg = a round's time over W):
 *     ST bytes=65536 window=16 iters=.. mbps_avg=.. mbps_best=.. us_per_msg=..
 * Exit status 0 when every echo (or streamed buffer) matched.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"

#define MAX_WINDOW 1024

/* --type: the datatype of the messages and its size. */
static MPI_Datatype dtype = MPI_BYTE;
static int dsize = 1;

/* One --stream size: rounds of `window` messages from rank 0 to rank 1 and
 * a 0-byte answer; prints the ST line on rank 0.  Returns 0 when rank 1
 * found a buffer of the last round differing from what was sent (its
 * verdict reaches every rank), 1 otherwise. */
static int stream_size(int rank, long n, int window, int iters, const unsigned char *sbuf, unsigned char *rbuf) {
  MPI_Request reqs[MAX_WINDOW];
  MPI_Status statuses[MAX_WINDOW]; /* not MPI_STATUSES_IGNORE: gcc 12 warns about MPICH's definition of it */
  double total = 0, best = 1e30;
  const int warmup = bench_warmup(iters);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int it = -warmup; it < iters; ++it) { /* it < 0: warm-up */
    double t0 = MPI_Wtime();
    if (rank == 0) {
      for (int w = 0; w < window; ++w) MPI_Isend(sbuf, (int)(n / dsize), dtype, 1, 3, MPI_COMM_WORLD, &reqs[w]);
      MPI_Waitall(window, reqs, statuses);
      MPI_Recv(NULL, 0, MPI_BYTE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      for (int w = 0; w < window; ++w)
        MPI_Irecv(rbuf + (size_t)w * (size_t)n, (int)(n / dsize), dtype, 0, 3, MPI_COMM_WORLD, &reqs[w]);
      MPI_Waitall(window, reqs, statuses);
      MPI_Send(NULL, 0, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
    }
    double dt = MPI_Wtime() - t0;
    if (it >= 0) {
      total += dt;
      if (dt < best) best = dt;
    }
  }
  int good = 1;
  if (rank == 1) {
    for (int w = 0; w < window; ++w)
      if (memcmp(rbuf + (size_t)w * (size_t)n, sbuf, (size_t)n) != 0) good = 0;
    if (!good) fprintf(stderr, "impi_pingpong: %ld bytes: a streamed buffer differs from what was sent\n", n);
    memset(rbuf, 0, (size_t)window * (size_t)n);
  }
  MPI_Bcast(&good, 1, MPI_INT, 1, MPI_COMM_WORLD);
  if (rank == 0) {
    double round_avg = total / iters, bytes = (double)n * window;
    printf("ST bytes=%ld window=%d iters=%d mbps_avg=%.2f mbps_best=%.2f us_per_msg=%.3f\n", n, window, iters,
           bytes / round_avg / 1e6, bytes / best / 1e6, round_avg / window * 1e6);
    fflush(stdout);
  }
  return good;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  long sizes[MAX_SIZES];
  int nsizes = parse_sizes("0,1,8,64,512,4k,16k,64k,256k,1m,4m,16m", sizes);
  long max = -1, budget = 256L * 1024 * 1024;
  int iters_fixed = 0, ok = 1, stream = 0, window = 16;
  for (int i = 1; i < argc; ++i) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int good = v != NULL;
    if (!strcmp(argv[i], "--sizes") && v) nsizes = parse_sizes(v, sizes), good = nsizes > 0;
    else if (!strcmp(argv[i], "--max") && v) max = parse_bytes(v, &good);
    else if (!strcmp(argv[i], "--budget") && v) budget = parse_bytes(v, &good);
    else if (!strcmp(argv[i], "--iters") && v) iters_fixed = atoi(v), good = iters_fixed > 0;
    else if (!strcmp(argv[i], "--window") && v) window = atoi(v), good = window > 0 && window <= MAX_WINDOW;
    else if (!strcmp(argv[i], "--type") && v) {
      if (!strcmp(v, "byte")) dtype = MPI_BYTE, dsize = 1;
      else if (!strcmp(v, "int")) dtype = MPI_INT, dsize = (int)sizeof(int);
      else if (!strcmp(v, "long")) dtype = MPI_LONG, dsize = (int)sizeof(long);
      else if (!strcmp(v, "double")) dtype = MPI_DOUBLE, dsize = (int)sizeof(double);
      else good = 0;
    } else if (!strcmp(argv[i], "--stream")) {
      stream = 1;
      continue;
    } else good = 0;
    if (!good) {
      if (rank == 0)
        fprintf(stderr, "impi_pingpong: bad argument %s%s%s (usage: [--sizes LIST] [--max BYTES] [--iters N] "
                        "[--budget BYTES] [--stream [--window 1..%d]] [--type byte|int|long|double])\n", argv[i], v ? " " : "", v ? v : "",
                MAX_WINDOW);
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
  size_t rroom = (size_t)largest * (size_t)(stream ? window : 1) + 1;
  unsigned char *sbuf = malloc((size_t)largest + 1), *rbuf = calloc(rroom, 1);
  if (!sbuf || !rbuf) {
    fprintf(stderr, "impi_pingpong: rank %d: cannot allocate %ld + %zu bytes\n", rank, largest, rroom);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (long j = 0; j <= largest; ++j) sbuf[j] = (unsigned char)(j * 131 + 7);

  if (rank == 0) {
    char name[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(name, &len);
    if (stream)
      printf("# impi_pingpong --stream: rank 0 -> 1 of %d, %s, window %d; MB/s = 10^6 bytes/s\n", size, name,
             window);
    else
      printf("# impi_pingpong: ranks 0 <-> 1 of %d, %s; MB/s = 10^6 bytes/s, latency = half round trip\n", size,
             name);
    fflush(stdout);
  }
  for (int s = 0; s < nsizes; ++s) {
    long n = sizes[s] / dsize * dsize;
    if (max >= 0 && n > max) continue;
    int iters = iters_fixed;
    if (!iters) {
      iters = bench_rounds(budget, n * (stream ? window : 1));
    }
    if (stream) {
      if (!stream_size(rank, n, window, iters, sbuf, rbuf)) ok = 0;
      continue;
    }
    double total = 0, best = 1e30;
    const int warmup = bench_warmup(iters);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = -warmup; it < iters; ++it) { /* it < 0: warm-up */
      double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(sbuf, (int)(n / dsize), dtype, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, (int)(n / dsize), dtype, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(rbuf, (int)(n / dsize), dtype, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(rbuf, (int)(n / dsize), dtype, 0, 2, MPI_COMM_WORLD);
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
      printf("PP bytes=%ld iters=%d lat_avg_us=%.3f lat_min_us=%.3f mbps_avg=%.2f mbps_best=%.2f\n", n, iters,
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
