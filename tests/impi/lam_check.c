/* The gridmpi + LAM/MPI 7.1.4 job of test_lam.py: built by both
 * implementations' mpicc from this one source (MPI-1 only: LAM has no
 * MPI_IN_PLACE).  Every rank checks every value it receives, exactly:
 *   - point-to-point between every pair of ranks, both ways, with values
 *     whose bytes all differ (a byte-order or size mix-up shows): int,
 *     short, double, long (beyond 32 bits when long has 64), char;
 *   - MPI_Barrier;
 *   - MPI_Bcast of ints and doubles from every root in turn (LAM's ranks
 *     other than the root come late to the first; a Barrier between the
 *     two unless LAM_CHECK_BACK_TO_BACK: LAM's own defect, see below);
 *   - MPI_Reduce (sum) to every root in turn, MPI_Allreduce (sum of ints,
 *     max of doubles) on MPI_COMM_WORLD.
 * Prints "lam_check: rank R of N ok" when all is right, else one
 * "FAIL: rank R: ..." line per wrong value, then exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 5
static int rank, size, failures;

static void fail(const char *what, int peer, int i, double expected, double got) {
  if (failures++ < 20)
    printf("FAIL: rank %d: %s (peer %d, element %d): expected %.17g got %.17g\n", rank, what, peer, i,
           expected, got);
}

/* The value of element i of a message from rank `from` to rank `to`. */
static int ival(int from, int to, int i) { return 0x01020304 * (from + 1) + 0x10000 * to + i; }
static short sval(int from, int to, int i) { return (short)(0x0102 * (from + 1) + 0x10 * to + i); }
static double dval(int from, int to, int i) { return 1.0 / 3.0 + from * 1e6 + to * 1e3 + i; }
static long lval(int from, int to, int i) {
  long big = sizeof(long) >= 8 ? (long)0x0102030405060708LL : 0x01020304L;
  return big + (long)(from * 65536 + to * 256 + i);
}

static void exchange(int peer) {
  int iout[N], iin[N], i;
  short sout[N], sin_[N];
  double dout[N], din[N];
  long lout[N], lin[N];
  char cout_[N + 1], cin_[N + 1];
  MPI_Status st;
  for (i = 0; i < N; ++i) {
    iout[i] = ival(rank, peer, i);
    sout[i] = sval(rank, peer, i);
    dout[i] = dval(rank, peer, i);
    lout[i] = lval(rank, peer, i);
  }
  sprintf(cout_, "%c%c%c%c%c", 'a' + rank, 'b' + peer, 'x', 'y', 'z');
  memset(iin, 0, sizeof iin);
  memset(sin_, 0, sizeof sin_);
  memset(din, 0, sizeof din);
  memset(lin, 0, sizeof lin);
  memset(cin_, 0, sizeof cin_);
  /* The lower rank sends first, so that nothing depends on buffering. */
  if (rank < peer) {
    MPI_Send(iout, N, MPI_INT, peer, 1, MPI_COMM_WORLD);
    MPI_Send(sout, N, MPI_SHORT, peer, 2, MPI_COMM_WORLD);
    MPI_Send(dout, N, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD);
    MPI_Send(lout, N, MPI_LONG, peer, 4, MPI_COMM_WORLD);
    MPI_Send(cout_, N, MPI_CHAR, peer, 5, MPI_COMM_WORLD);
  }
  MPI_Recv(iin, N, MPI_INT, peer, 1, MPI_COMM_WORLD, &st);
  if (st.MPI_SOURCE != peer || st.MPI_TAG != 1) fail("status of the int message", peer, -1, peer, st.MPI_SOURCE);
  MPI_Recv(sin_, N, MPI_SHORT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(din, N, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(lin, N, MPI_LONG, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(cin_, N, MPI_CHAR, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rank > peer) {
    MPI_Send(iout, N, MPI_INT, peer, 1, MPI_COMM_WORLD);
    MPI_Send(sout, N, MPI_SHORT, peer, 2, MPI_COMM_WORLD);
    MPI_Send(dout, N, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD);
    MPI_Send(lout, N, MPI_LONG, peer, 4, MPI_COMM_WORLD);
    MPI_Send(cout_, N, MPI_CHAR, peer, 5, MPI_COMM_WORLD);
  }
  for (i = 0; i < N; ++i) {
    if (iin[i] != ival(peer, rank, i)) fail("MPI_INT from", peer, i, ival(peer, rank, i), iin[i]);
    if (sin_[i] != sval(peer, rank, i)) fail("MPI_SHORT from", peer, i, sval(peer, rank, i), sin_[i]);
    if (din[i] != dval(peer, rank, i)) fail("MPI_DOUBLE from", peer, i, dval(peer, rank, i), din[i]);
    if (lin[i] != lval(peer, rank, i)) fail("MPI_LONG from", peer, i, (double)lval(peer, rank, i), (double)lin[i]);
    if (cin_[i] != "abxyz"[i] + (i == 0 ? peer : i == 1 ? rank : 0))
      fail("MPI_CHAR from", peer, i, "abxyz"[i], cin_[i]);
  }
}

int main(int argc, char **argv) {
  int peer, root, i, ibuf[N], isum[N];
  double dbuf[N], dmax[N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* Every pair, in the same order everywhere (lower rank first). */
  for (peer = 0; peer < size; ++peer)
    if (peer != rank) exchange(peer);

  MPI_Barrier(MPI_COMM_WORLD);

  for (root = 0; root < size; ++root) {
    for (i = 0; i < N; ++i) {
      ibuf[i] = rank == root ? ival(root, 99, i) : 0;
      dbuf[i] = rank == root ? dval(root, 99, i) : 0;
    }
#ifdef LAM_MPI
    /* LAM's ranks come late, so that a root's two messages both wait at
     * them (the case LAM's collective context gets wrong: impi/README.md,
     * "LAM/MPI 7.1.4 as another client"). */
    if (rank != root) usleep(300000);
#endif
    MPI_Bcast(ibuf, N, MPI_INT, root, MPI_COMM_WORLD);
#ifndef LAM_CHECK_BACK_TO_BACK
    /* LAM/MPI 7.1.4 loses the second of two messages of one tag from one
     * rank on the IMPI collective context when both wait at its rank before
     * it posts the receive: LAM against LAM hangs here as gridmpi against
     * LAM does (test_lam.py lam_lam_back_to_back; impi/README.md).  A root
     * must not run two Bcasts ahead: the Barrier (whose message LAM sends
     * only once its Bcast receive ended) keeps it one. */
    MPI_Barrier(MPI_COMM_WORLD);
#endif
    MPI_Bcast(dbuf, N, MPI_DOUBLE, root, MPI_COMM_WORLD);
    for (i = 0; i < N; ++i) {
      if (ibuf[i] != ival(root, 99, i)) fail("MPI_Bcast of MPI_INT from root", root, i, ival(root, 99, i), ibuf[i]);
      if (dbuf[i] != dval(root, 99, i)) fail("MPI_Bcast of MPI_DOUBLE from root", root, i, dval(root, 99, i), dbuf[i]);
    }
  }

  for (root = 0; root < size; ++root) {
    for (i = 0; i < N; ++i) {
      ibuf[i] = 0x01000000 * (i + 1) + rank;
      isum[i] = -1;
    }
    MPI_Reduce(ibuf, isum, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    if (rank == root)
      for (i = 0; i < N; ++i) {
        int expected = 0x01000000 * (i + 1) * size + size * (size - 1) / 2;
        if (isum[i] != expected) fail("MPI_Reduce sum to root", root, i, expected, isum[i]);
      }
  }

  for (i = 0; i < N; ++i) {
    ibuf[i] = 0x00010203 * (i + 1) + rank;
    dbuf[i] = dval(rank, 0, i);
  }
  MPI_Allreduce(ibuf, isum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(dbuf, dmax, N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (i = 0; i < N; ++i) {
    int expected = 0x00010203 * (i + 1) * size + size * (size - 1) / 2;
    if (isum[i] != expected) fail("MPI_Allreduce sum of MPI_INT", -1, i, expected, isum[i]);
    if (dmax[i] != dval(size - 1, 0, i)) fail("MPI_Allreduce max of MPI_DOUBLE", -1, i, dval(size - 1, 0, i), dmax[i]);
  }

  MPI_Barrier(MPI_COMM_WORLD);
  if (failures == 0) printf("lam_check: rank %d of %d ok\n", rank, size);
  fflush(stdout);
  MPI_Finalize();
  return failures ? 1 : 0;
}
