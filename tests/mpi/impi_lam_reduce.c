/* The IMPI Reduce with a LAM/MPI 7.1.4 client, emulated (core/coll/impi_reduce.cpp,
 * impi/README.md "LAM/MPI 7.1.4 as another client").  Run with
 * GRIDMPI_IMPI_FAKE_CLIENTS=1,2 and IMPI_LAM_CLIENTS=1: ranks 1 and 2 play
 * LAM's client and do by hand what LAM's IMPI Reduce does (its
 * ssi_coll_impi_reduce.c): a local reduce to their master (rank 1), then
 * the global message on the communicator's POINT-TO-POINT context, tag
 * 190 (a plain MPI_Send/MPI_Recv on MPI_COMM_WORLD); for a non-commutative
 * op every rank sends its own buffer straight to the root.  Rank 0 (the
 * gridmpi client) calls MPI_Reduce and MPI_Allreduce and must meet them:
 *   1. Reduce (sum) to rank 0, LAM's master sends its partial result;
 *   2. Reduce (sum) to rank 1, rank 0 sends its value to LAM's root;
 *   3. Reduce with a non-commutative op to rank 0;
 *   4. Allreduce = Reduce to 0 (as 1) + Bcast from 0 (MPI_Bcast on both sides).
 * Elsewhere (no LAM client, other MPIs) every rank calls the collectives. */
#include "mpitest.h"

#define N 4
#define LAM_REDUCE_TAG 190

/* Affine maps x -> m x + c as pairs (m, c); a op b = a after b =
 * (a.m b.m, a.m b.c + a.c): associative, not commutative. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  int *a = in, *b = inout;
  for (int i = 0; i + 1 < *len; i += 2) {
    b[i + 1] = a[i] * b[i + 1] + a[i + 1];
    b[i] = a[i] * b[i];
  }
}

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  int rank, size, flag = 0, *nclients = NULL;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *lam = getenv("IMPI_LAM_CLIENTS");
#ifdef IMPI_CLIENT_SIZE
  MPI_Comm_get_attr(MPI_COMM_WORLD, IMPI_CLIENT_SIZE, &nclients, &flag);
#endif
  /* Ranks 1.. play LAM only in the layout this program is listed with. */
  const int emulate = flag && *nclients == 2 && size == 3 && lam && strcmp(lam, "1") == 0;
  const int plays_lam = emulate && rank > 0;
  MPI_Comm local;
  E(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : 1, rank, &local));
  MPI_Op op;
  E(MPI_Op_create(compose, 0, &op));

  int mine[N], sum[N], partial[N], tmp[N], expected[N];
  for (int i = 0; i < N; ++i) {
    mine[i] = (rank + 1) * 1000 + i;
    expected[i] = 0;
    for (int r = 0; r < size; ++r) expected[i] += (r + 1) * 1000 + i;
  }

  /* 1. Reduce (sum) to rank 0. */
  for (int i = 0; i < N; ++i) sum[i] = -1;
  if (plays_lam) {
    E(MPI_Reduce(mine, partial, N, MPI_INT, MPI_SUM, 0, local));
    if (rank == 1) E(MPI_Send(partial, N, MPI_INT, 0, LAM_REDUCE_TAG, MPI_COMM_WORLD));
  } else {
    E(MPI_Reduce(mine, sum, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0)
      for (int i = 0; i < N; ++i) CHECK_INT("Reduce sum at rank 0", expected[i], sum[i]);
  }

  /* 2. Reduce (sum) to rank 1, LAM's root (rank 0 when alone). */
  const int root2 = size > 1 ? 1 : 0;
  for (int i = 0; i < N; ++i) sum[i] = -1;
  if (plays_lam) {
    E(MPI_Reduce(mine, sum, N, MPI_INT, MPI_SUM, 0, local));
    if (rank == 1) {
      E(MPI_Recv(tmp, N, MPI_INT, 0, LAM_REDUCE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      for (int i = 0; i < N; ++i) sum[i] += tmp[i];
    }
  } else {
    E(MPI_Reduce(mine, sum, N, MPI_INT, MPI_SUM, root2, MPI_COMM_WORLD));
  }
  if (rank == root2)
    for (int i = 0; i < N; ++i) CHECK_INT("Reduce sum at rank 1", expected[i], sum[i]);

  /* 3. Non-commutative: x0 op (x1 op (... op x[size-1])) at rank 0. */
  int map[N], ord[N];
  for (int i = 0; i < N; i += 2) {
    map[i] = rank + 2;
    map[i + 1] = rank + 1 + i;
    ord[i] = ord[i + 1] = -1;
  }
  if (plays_lam) {
    E(MPI_Send(map, N, MPI_INT, 0, LAM_REDUCE_TAG, MPI_COMM_WORLD));
  } else {
    E(MPI_Reduce(map, ord, N, MPI_INT, op, 0, MPI_COMM_WORLD));
  }
  if (rank == 0)
    for (int i = 0; i < N; i += 2) {
      int m = size + 1, c = size + i; /* x[size-1] */
      for (int r = size - 2; r >= 0; --r) {
        c = (r + 2) * c + (r + 1 + i);
        m = (r + 2) * m;
      }
      CHECK_INT("ordered Reduce at rank 0 (m)", m, ord[i]);
      CHECK_INT("ordered Reduce at rank 0 (c)", c, ord[i + 1]);
    }

  /* 4. Allreduce = Reduce to 0 + Bcast from 0. */
  for (int i = 0; i < N; ++i) sum[i] = -1;
  if (plays_lam) {
    E(MPI_Reduce(mine, partial, N, MPI_INT, MPI_SUM, 0, local));
    if (rank == 1) E(MPI_Send(partial, N, MPI_INT, 0, LAM_REDUCE_TAG, MPI_COMM_WORLD));
    E(MPI_Bcast(sum, N, MPI_INT, 0, MPI_COMM_WORLD));
  } else {
    E(MPI_Allreduce(mine, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  }
  for (int i = 0; i < N; ++i) CHECK_INT("Allreduce sum", expected[i], sum[i]);

  E(MPI_Op_free(&op));
  E(MPI_Comm_free(&local));
  return mt_finish();
}
