/* MPI_THREAD_MULTIPLE with MPI_Comm_idup: each thread works on its own
 * parent communicator, even threads with MPI_Comm_idup (several
 * outstanding, completed with Waitall or a Test loop), odd threads with
 * blocking MPI_Comm_dup, all at once, so that non-blocking and blocking
 * context agreements of one process overlap.  Every new communicator is
 * used at once: an allreduce and a message that must stay on it (two
 * communicators of one process getting the same context id would cross
 * their messages).  Threads per process: THR_THREADS. */
#include "thr.h"

#define ROUNDS 8
#define OUTSTANDING 3

static MPI_Comm parents[8];

static void use(MPI_Comm c, int t, int mark)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int sum = -1, got = -1, result = -1;
    TE(MPI_Comm_compare(c, parents[t], &result));
    TCHECK(result == MPI_CONGRUENT, "thread %d: compare with parent, expected %d got %d", t, MPI_CONGRUENT,
           result);
    TE(MPI_Allreduce(&mark, &sum, 1, MPI_INT, MPI_SUM, c));
    TCHECK(sum == mark * mt_size, "thread %d: allreduce on the new communicator, expected %d got %d", t,
           mark * mt_size, sum);
    TE(MPI_Sendrecv(&mark, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, c, MPI_STATUS_IGNORE));
    TCHECK(got == mark, "thread %d: message on the new communicator, expected %d got %d (another thread's?)", t,
           mark, got);
}

static void *work(int t)
{
    int round, k, flag;
    for (round = 0; round < ROUNDS; ++round) {
        MPI_Comm c[OUTSTANDING];
        MPI_Request req[OUTSTANDING];
        if (t % 2 == 0) {
            for (k = 0; k < OUTSTANDING; ++k)
                TE(MPI_Comm_idup(parents[t], &c[k], &req[k]));
            if (round % 2 == 0) {
                TE(MPI_Waitall(OUTSTANDING, req, MPI_STATUSES_IGNORE));
            } else {
                flag = 0;
                while (!flag)
                    TE(MPI_Testall(OUTSTANDING, req, &flag, MPI_STATUSES_IGNORE));
            }
        } else {
            for (k = 0; k < OUTSTANDING; ++k)
                TE(MPI_Comm_dup(parents[t], &c[k]));
        }
        for (k = 0; k < OUTSTANDING; ++k)
            use(c[k], t, t * 1000 + round * 10 + k);
        for (k = 0; k < OUTSTANDING; ++k)
            TE(MPI_Comm_free(&c[k]));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n, t;
    thr_init(&argc, &argv);
    n = thr_threads();
    for (t = 0; t < n; ++t)
        E(MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]));
    thr_run(n, work);
    for (t = 0; t < n; ++t)
        E(MPI_Comm_free(&parents[t]));
    return mt_finish();
}
