/* MPI_THREAD_MULTIPLE: a thread blocked in MPI_Recv must not stop another
 * thread of the same process from sending.  Ranks pair up (r, r^1; an odd
 * last rank pairs with itself).  In each process thread 0 receives from
 * the partner while thread 1 sends to it; the partner does the mirror, so
 * each receive can only complete after the other thread's send went out.
 * Small (eager) and large (rendezvous in gridmpi) messages; then the same
 * with MPI_Ssend, whose completion needs the partner's receive. */
#include "thr.h"

#define ROUNDS 12
#define LARGE (64 * 1024)

static int partner;

static void *receiver(void)
{
    int *in = malloc(LARGE * sizeof(int));
    int round, j;
    for (round = 0; round < ROUNDS; ++round) {
        int n = round % 3 == 2 ? LARGE : 4;
        MPI_Status st;
        TE(MPI_Recv(in, n, MPI_INT, partner, round, MPI_COMM_WORLD, &st));
        for (j = 0; j < n; ++j)
            if (in[j] != partner * 1000000 + round * 1000 + j % 1000) {
                TCHECK(0, "round %d element %d, expected %d got %d", round, j, partner * 1000000 + round * 1000 + j % 1000,
                       in[j]);
                break;
            }
        TCHECK(st.MPI_SOURCE == partner && st.MPI_TAG == round, "round %d status, expected %d/%d got %d/%d", round,
               partner, round, st.MPI_SOURCE, st.MPI_TAG);
    }
    free(in);
    return NULL;
}

static void *sender(void)
{
    int *out = malloc(LARGE * sizeof(int));
    int round, j;
    for (round = 0; round < ROUNDS; ++round) {
        int n = round % 3 == 2 ? LARGE : 4;
        for (j = 0; j < n; ++j)
            out[j] = mt_rank * 1000000 + round * 1000 + j % 1000;
        /* Give the receiving thread time to block first on some rounds. */
        if (round % 4 == 0)
            mt_sleep_ms(5);
        if (round >= ROUNDS / 2)
            TE(MPI_Ssend(out, n, MPI_INT, partner, round, MPI_COMM_WORLD));
        else
            TE(MPI_Send(out, n, MPI_INT, partner, round, MPI_COMM_WORLD));
    }
    free(out);
    return NULL;
}

static void *role(int t) { return t == 0 ? receiver() : sender(); }

int main(int argc, char **argv)
{
    thr_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;
    /* MPICH 4.0.2 (Debian 12) with a single process: a thread blocked in
     * MPI_Recv from itself is never woken by another thread's matching
     * send (with 2 or more processes this passes). */
    if (MT_IS_MPICH && mt_size == 1)
        return mt_finish();
    thr_run(2, role);
    return mt_finish();
}
