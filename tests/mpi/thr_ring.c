/* MPI_THREAD_MULTIPLE: every thread of every process runs its own ring at
 * the same time — even threads on MPI_COMM_WORLD with their own tag, odd
 * threads on their own duplicate of it — in three forms per iteration:
 * blocking Send/Recv (rank 0 sends first, the others receive first),
 * Isend/Irecv/Waitall, and Sendrecv.  Every fourth iteration the message
 * is large (rendezvous in gridmpi).  Every value and status is checked.
 * Threads per process: THR_THREADS (thr.list runs 2 and 4). */
#include "thr.h"

#define ITER 24
#define SMALL 16
#define LARGE (48 * 1024)

static MPI_Comm comms[8];

static int value(int rank, int thread, int iter, int form, int j)
{
    return ((rank * 8 + thread) * 64 + iter) * 4 + form + j * 7;
}

static void check_block(const int *in, int n, int from, int thread, int iter, int form, const MPI_Status *st,
                        int tag)
{
    int j;
    for (j = 0; j < n; ++j)
        if (in[j] != value(from, thread, iter, form, j)) {
            TCHECK(0, "thread %d iter %d form %d element %d, expected %d got %d", thread, iter, form, j,
                   value(from, thread, iter, form, j), in[j]);
            break;
        }
    TCHECK(st->MPI_SOURCE == from && st->MPI_TAG == tag, "thread %d iter %d form %d status, expected %d/%d got %d/%d",
           thread, iter, form, from, tag, st->MPI_SOURCE, st->MPI_TAG);
}

static void *ring(int t)
{
    MPI_Comm comm = comms[t];
    int tag = 100 + t;
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int *out = malloc(LARGE * sizeof(int)), *in = malloc(LARGE * sizeof(int));
    int iter, j;
    for (iter = 0; iter < ITER; ++iter) {
        int n = iter % 4 == 3 ? LARGE : SMALL;
        MPI_Status st, sts[2];
        MPI_Request rq[2];

        /* blocking */
        for (j = 0; j < n; ++j)
            out[j] = value(mt_rank, t, iter, 0, j);
        if (mt_size == 1) {
            TE(MPI_Sendrecv(out, n, MPI_INT, right, tag, in, n, MPI_INT, left, tag, comm, &st));
        } else if (mt_rank == 0) {
            TE(MPI_Send(out, n, MPI_INT, right, tag, comm));
            TE(MPI_Recv(in, n, MPI_INT, left, tag, comm, &st));
        } else {
            TE(MPI_Recv(in, n, MPI_INT, left, tag, comm, &st));
            TE(MPI_Send(out, n, MPI_INT, right, tag, comm));
        }
        check_block(in, n, left, t, iter, 0, &st, tag);

        /* non-blocking */
        for (j = 0; j < n; ++j)
            out[j] = value(mt_rank, t, iter, 1, j);
        TE(MPI_Irecv(in, n, MPI_INT, left, tag, comm, &rq[0]));
        TE(MPI_Isend(out, n, MPI_INT, right, tag, comm, &rq[1]));
        TE(MPI_Waitall(2, rq, sts));
        check_block(in, n, left, t, iter, 1, &sts[0], tag);

        /* sendrecv, wildcard source on odd iterations */
        for (j = 0; j < n; ++j)
            out[j] = value(mt_rank, t, iter, 2, j);
        TE(MPI_Sendrecv(out, n, MPI_INT, right, tag, in, n, MPI_INT, iter % 2 ? MPI_ANY_SOURCE : left, tag, comm,
                        &st));
        check_block(in, n, left, t, iter, 2, &st, tag);
    }
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char **argv)
{
    int n, t;
    thr_init(&argc, &argv);
    n = thr_threads();
    for (t = 0; t < n; ++t) {
        comms[t] = MPI_COMM_WORLD;
        if (t % 2)
            E(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    }
    thr_run(n, ring);
    for (t = 0; t < n; ++t)
        if (t % 2)
            E(MPI_Comm_free(&comms[t]));
    return mt_finish();
}
