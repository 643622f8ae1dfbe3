/* coll_bench: time one collective over MPI_COMM_WORLD (MPI C API only, so
 * that the same source builds with gridmpi, Open MPI and MPICH).
 *
 *     coll_bench alltoall|allgather|allreduce|reduce|bcast|barrier [--sizes LIST] [--iters N] [--budget BYTES]
 *                [--seconds S] [--separated]
 *
 * First 50 ms of barriers (a stall of some milliseconds early in a job's
 * life took the first size's mean to ten or twenty times the next ones'),
 * then for each size: a barrier, iters / 10 warm-up calls (at least one, at
 * most 100), then `iters` timed calls, each
 * timed on its own and separated by nothing (the usual back-to-back loop);
 * the time of a call is the maximum over the ranks of the per-rank average,
 * and the minimum over the ranks of the per-rank best.  Sizes (comma list,
 * k/m suffixes; default 8,1k,64k,1m) are bytes:
 *   alltoall   bytes each rank sends to each other rank (MPI_BYTE blocks);
 *              bandwidth = (np - 1) * bytes / time, what one rank sends
 *   allgather  bytes each rank contributes (MPI_BYTE blocks); bandwidth as
 *              alltoall's, what one rank receives
 *   allreduce  bytes of MPI_DOUBLE summed (bytes / 8 elements)
 *   reduce     the same, to rank 0 (checked there)
 *   bcast      bytes broadcast from rank 0
 *   barrier    the size is ignored (one line, bytes=0)
 * Iterations: --iters N, else budget / (bytes * np) clamped to [5, 2000]
 * (budget default 64m).  --seconds S ends a size's timed loop early once S
 * seconds have passed on rank 0 (it tells the others with an MPI_Bcast
 * between two timed calls after call 1, 2, 4, .. 64 and then every 64th;
 * iters= reports the calls made): with more processes than cores a
 * busy-polling MPI can need milliseconds per call.  --separated: a barrier
 * before each timed call, and a call's time runs from rank 0's start to the
 * last rank's return (one latency of the collective, what a cost model
 * predicts, instead of the back-to-back loop's throughput, in which a
 * pipelined tree hides its latency and an exchange waits on the call
 * before; on a wide-area link they differ a thousandfold); it reads
 * MPI_Wtime across ranks, so all must share one clock (one machine, as the
 * emulated networks of npb/benchlib.py).  The result is checked
 * after the timed loop (outside the timing); the exit status is 1 when any
 * check failed.
 *
 * Output (rank 0), one line per size:
 *     CB op=alltoall np=4 bytes=65536 iters=.. time_avg_us=.. time_min_us=.. mbps=..
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"

enum op { ALLTOALL, ALLGATHER, ALLREDUCE, REDUCE, BCAST, BARRIER };

/* One call of the collective on buffers prepared for `bytes`. */
static void run_once(enum op op, long bytes, int np, unsigned char *send, unsigned char *recv) {
  switch (op) {
    case ALLTOALL:
      MPI_Alltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
      break;
    case ALLGATHER:
      MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
      break;
    case ALLREDUCE:
      MPI_Allreduce(send, recv, (int)(bytes / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      break;
    case REDUCE:
      MPI_Reduce(send, recv, (int)(bytes / 8), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      break;
    case BCAST:
      MPI_Bcast(send, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
      break;
    case BARRIER:
      MPI_Barrier(MPI_COMM_WORLD);
      break;
  }
  (void)np;
}

static void prepare(enum op op, long bytes, int rank, int np, unsigned char *send, unsigned char *recv) {
  if (op == ALLTOALL) {
    for (int r = 0; r < np; ++r)
      for (long i = 0; i < bytes; ++i) send[r * bytes + i] = (unsigned char)(rank * 7 + r * 3 + i);
    memset(recv, 0, (size_t)(bytes * np));
  } else if (op == ALLGATHER) {
    for (long i = 0; i < bytes; ++i) send[i] = (unsigned char)(rank * 13 + i);
    memset(recv, 0, (size_t)(bytes * np));
  } else if (op == ALLREDUCE || op == REDUCE) {
    double *d = (double *)send;
    for (long i = 0; i < bytes / 8; ++i) d[i] = rank + i % 5;
  } else if (op == BCAST) {
    for (long i = 0; i < bytes; ++i) send[i] = rank == 0 ? (unsigned char)(i * 11 + 1) : 0;
  }
}

static int verify(enum op op, long bytes, int rank, int np, const unsigned char *send, const unsigned char *recv) {
  if (op == ALLTOALL) {
    for (int r = 0; r < np; ++r)
      for (long i = 0; i < bytes; ++i)
        if (recv[r * bytes + i] != (unsigned char)(r * 7 + rank * 3 + i)) return 0;
  } else if (op == ALLGATHER) {
    for (int r = 0; r < np; ++r)
      for (long i = 0; i < bytes; ++i)
        if (recv[r * bytes + i] != (unsigned char)(r * 13 + i)) return 0;
  } else if (op == ALLREDUCE || (op == REDUCE && rank == 0)) {
    const double *d = (const double *)recv;
    for (long i = 0; i < bytes / 8; ++i)
      if (d[i] != (double)np * (np - 1) / 2 + (double)np * (i % 5)) return 0;
  } else if (op == BCAST) {
    for (long i = 0; i < bytes; ++i)
      if (send[i] != (unsigned char)(i * 11 + 1)) return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  long sizes[MAX_SIZES];
  int nsizes = parse_sizes("8,1k,64k,1m", sizes);
  long iters_fixed = 0, budget = 64L << 20;
  double seconds = 0;
  int separated = 0;
  enum op op = ALLTOALL;
  const char *op_name = argc > 1 ? argv[1] : "";
  if (strcmp(op_name, "alltoall") == 0) op = ALLTOALL;
  else if (strcmp(op_name, "allgather") == 0) op = ALLGATHER;
  else if (strcmp(op_name, "allreduce") == 0) op = ALLREDUCE;
  else if (strcmp(op_name, "reduce") == 0) op = REDUCE;
  else if (strcmp(op_name, "bcast") == 0) op = BCAST;
  else if (strcmp(op_name, "barrier") == 0) op = BARRIER;
  else {
    if (rank == 0) fprintf(stderr, "coll_bench: first argument: alltoall, allgather, allreduce, reduce, bcast or barrier\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int i = 2; i < argc; ++i) {
    int ok = 1;
    if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      nsizes = parse_sizes(argv[++i], sizes);
      ok = nsizes > 0;
    } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters_fixed = parse_bytes(argv[++i], &ok);
    } else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) {
      budget = parse_bytes(argv[++i], &ok);
    } else if (strcmp(argv[i], "--separated") == 0) {
      separated = 1;
    } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      char *end;
      seconds = strtod(argv[++i], &end);
      ok = end != argv[i] && *end == '\0' && seconds >= 0;
    } else {
      ok = 0;
    }
    if (!ok) {
      if (rank == 0) fprintf(stderr, "coll_bench: bad argument %s (see the top of coll_bench.c)\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (op == BARRIER) {
    nsizes = 1;
    sizes[0] = 0;
  }
  int failures = 0;
  double settle_start = MPI_Wtime();
  for (int more = 1; more;) {
    MPI_Barrier(MPI_COMM_WORLD);
    more = MPI_Wtime() - settle_start < 0.05;
    MPI_Allreduce(MPI_IN_PLACE, &more, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  }
  for (int s = 0; s < nsizes; ++s) {
    long bytes = sizes[s];
    if (op == ALLREDUCE || op == REDUCE) bytes = bytes / 8 * 8;
    size_t room = (size_t)(bytes > 0 ? bytes : 1) * (size_t)(op == ALLTOALL || op == ALLGATHER ? np : 1);
    unsigned char *send = malloc(room), *recv = malloc(room);
    long iters = iters_fixed;
    if (iters <= 0) {
      long per = bytes * np > 0 ? bytes * np : 1;
      iters = budget / per;
      if (iters < 5) iters = 5;
      if (iters > 2000) iters = 2000;
    }
    prepare(op, bytes, rank, np, send, recv);
    MPI_Barrier(MPI_COMM_WORLD);
    for (long w = 0; w < (iters / 10 > 100 ? 100 : iters / 10 > 1 ? iters / 10 : 1); ++w)
      run_once(op, bytes, np, send, recv);  // warm-up
    MPI_Barrier(MPI_COMM_WORLD);
    double total = 0, best = 1e30, start = MPI_Wtime();
    for (long k = 0; k < iters; ++k) {
      if (separated) MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      run_once(op, bytes, np, send, recv);
      double t1 = MPI_Wtime(), t = t1 - t0;
      if (separated) {
        // Untimed, after every return: the last return and rank 0's start.
        double mine[2] = {t1, rank == 0 ? -t0 : -1e300}, all[2];
        MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t = all[0] + all[1];
      }
      total += t;
      if (t < best) best = t;
      if (seconds > 0 && k + 1 < iters && (((k + 1) & k) == 0 || (k + 1) % 64 == 0)) {
        int more = rank != 0 || MPI_Wtime() - start < seconds;
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!more) iters = k + 1;
      }
    }
    prepare(op, bytes, rank, np, send, recv);
    run_once(op, bytes, np, send, recv);
    int good = verify(op, bytes, rank, np, send, recv), all_good = 0;
    MPI_Allreduce(&good, &all_good, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    double avg = total / (double)iters, worst_avg = 0, best_min = 0;
    MPI_Reduce(&avg, &worst_avg, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&best, &best_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      double moved = op == ALLTOALL || op == ALLGATHER ? (double)(np - 1) * (double)bytes : (double)bytes;
      printf("CB op=%s np=%d bytes=%ld iters=%ld time_avg_us=%.3f time_min_us=%.3f mbps=%.2f%s\n", op_name, np,
             bytes, iters, worst_avg * 1e6, best_min * 1e6, worst_avg > 0 ? moved / worst_avg / 1e6 : 0.0,
             all_good ? "" : " WRONG");
      fflush(stdout);
    }
    if (!all_good) failures = 1;
    free(send);
    free(recv);
  }
  MPI_Finalize();
  return failures;
}
