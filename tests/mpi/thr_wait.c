/* MPI_THREAD_MULTIPLE: one thread waits, another thread of the same process
 * makes the wait complete (nothing from the network announces it):
 *   1. thread 0 in MPI_Wait on an Irecv from itself; thread 1 sends later;
 *   2. thread 0 in MPI_Wait on an Issend to itself (small and large);
 *      thread 1 posts the matching MPI_Recv later;
 *   3. thread 0 in MPI_Wait on a generalized request; thread 1 calls
 *      MPI_Grequest_complete later (query_fn sets the status, free_fn runs
 *      once).
 * Then thread 0 checks that MPI_Is_thread_main is false outside the main
 * thread. */
#include "thr.h"

#define ROUNDS 4
#define LARGE (64 * 1024)

static MPI_Request greq;
static int query_calls, free_calls;
static pthread_barrier_t phase;

static int query_fn(void *extra, MPI_Status *status)
{
    (void)extra;
    ++query_calls;
    MPI_Status_set_elements(status, MPI_INT, 3);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = 77;
    status->MPI_TAG = 88;
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    (void)extra;
    ++free_calls;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* MPICH 4.0.2 (Debian 12) with a single process: a thread blocked in
 * MPI_Wait on a message to itself is never woken by another thread's
 * matching send (parts 1 and 2 hang; with 2 processes they pass). */
static int mpich_self_bug(void) { return MT_IS_MPICH && mt_size == 1; }

static void check_ints(const int *buf, int n, int base, const char *what)
{
    int j;
    for (j = 0; j < n; ++j)
        if (buf[j] != base + j) {
            TCHECK(0, "%s element %d, expected %d got %d", what, j, base + j, buf[j]);
            return;
        }
}

static void *waiter(void)
{
    int *buf = malloc(LARGE * sizeof(int));
    int round, j, flag = -1, count = -1;
    MPI_Request r;
    MPI_Status st;
    for (round = 0; round < ROUNDS; ++round) {
        int n = round % 2 ? LARGE : 5;
        if (mpich_self_bug())
            goto generalized;
        /* 1: receive, the other thread sends */
        pthread_barrier_wait(&phase);
        TE(MPI_Irecv(buf, n, MPI_INT, mt_rank, 10 + round, MPI_COMM_WORLD, &r));
        pthread_barrier_wait(&phase);
        TE(MPI_Wait(&r, &st));
        check_ints(buf, n, 1000 * round, "receive completed by the other thread's send");
        TCHECK(st.MPI_SOURCE == mt_rank && st.MPI_TAG == 10 + round, "receive status, expected %d/%d got %d/%d",
               mt_rank, 10 + round, st.MPI_SOURCE, st.MPI_TAG);
        /* 2: synchronous send, the other thread receives */
        for (j = 0; j < n; ++j)
            buf[j] = 2000 * round + j;
        pthread_barrier_wait(&phase);
        TE(MPI_Issend(buf, n, MPI_INT, mt_rank, 20 + round, MPI_COMM_WORLD, &r));
        pthread_barrier_wait(&phase);
        TE(MPI_Wait(&r, MPI_STATUS_IGNORE));
    generalized:
        /* 3: generalized request, the other thread completes it */
        pthread_barrier_wait(&phase);
        TE(MPI_Wait(&greq, &st));
        TCHECK(greq == MPI_REQUEST_NULL, "generalized request after MPI_Wait, expected MPI_REQUEST_NULL got %d",
               MT_H(greq));
        TE(MPI_Get_count(&st, MPI_INT, &count));
        TCHECK(count == 3 && st.MPI_SOURCE == 77 && st.MPI_TAG == 88,
               "generalized request status, expected count 3 source 77 tag 88 got %d %d %d", count, st.MPI_SOURCE,
               st.MPI_TAG);
        pthread_barrier_wait(&phase); /* greq is written again in the next round */
    }
    TE(MPI_Is_thread_main(&flag));
    TCHECK(flag == 0, "MPI_Is_thread_main in a created thread, expected 0 got %d", flag);
    free(buf);
    return NULL;
}

static void *completer(void)
{
    int *buf = malloc(LARGE * sizeof(int));
    int round, j;
    MPI_Status st;
    MPI_Request mine;
    for (round = 0; round < ROUNDS; ++round) {
        int n = round % 2 ? LARGE : 5;
        for (j = 0; j < n; ++j)
            buf[j] = 1000 * round + j;
        if (mpich_self_bug())
            goto generalized;
        pthread_barrier_wait(&phase);
        pthread_barrier_wait(&phase);
        mt_sleep_ms(10); /* the waiter is (most likely) asleep in MPI_Wait now */
        TE(MPI_Send(buf, n, MPI_INT, mt_rank, 10 + round, MPI_COMM_WORLD));
        pthread_barrier_wait(&phase);
        pthread_barrier_wait(&phase);
        mt_sleep_ms(10);
        TE(MPI_Recv(buf, n, MPI_INT, mt_rank, 20 + round, MPI_COMM_WORLD, &st));
        check_ints(buf, n, 2000 * round, "synchronous message");
    generalized:
        /* The request must exist before the waiter waits on it; the
         * waiter's MPI_Wait sets greq to MPI_REQUEST_NULL, so keep a copy. */
        TE(MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &mine));
        greq = mine;
        pthread_barrier_wait(&phase);
        mt_sleep_ms(10);
        TE(MPI_Grequest_complete(mine));
        pthread_barrier_wait(&phase);
    }
    free(buf);
    return NULL;
}

static void *role(int t) { return t == 0 ? waiter() : completer(); }

int main(int argc, char **argv)
{
    int flag = -1;
    thr_init(&argc, &argv);
    pthread_barrier_init(&phase, NULL, 2);
    thr_run(2, role);
    pthread_barrier_destroy(&phase);
    CHECK_INT("generalized request query_fn calls", ROUNDS, query_calls);
    CHECK_INT("generalized request free_fn calls", ROUNDS, free_calls);
    E(MPI_Is_thread_main(&flag));
    CHECK_INT("MPI_Is_thread_main in the main thread", 1, flag);
    return mt_finish();
}
