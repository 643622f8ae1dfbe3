/* MPI_THREAD_MULTIPLE: several threads of each process take messages from
 * MPI_ANY_SOURCE with matched probes at the same time (even threads
 * MPI_Mprobe + MPI_Mrecv, odd threads an MPI_Improbe loop + MPI_Imrecv +
 * MPI_Wait) while another thread sends K messages to every process.  A
 * matched message belongs to one thread only: every message is received
 * exactly once, and the messages one thread got from one source come in
 * the order they were sent (non-overtaking).  Receiving threads:
 * THR_THREADS (thr.list runs 2 and 4), plus one sending thread. */
#include "thr.h"

#define K 12
#define TAG 5

static int nrecv;
static int got[8][64];  /* [thread][source]: messages received */

static void *sender(void)
{
    MPI_Request *rq = malloc(sizeof(MPI_Request) * K * mt_size);
    int *out = malloc(sizeof(int) * 2 * K * mt_size);
    int seq, dest, n = 0;
    for (seq = 0; seq < K; ++seq)
        for (dest = 0; dest < mt_size; ++dest) {
            out[2 * n] = mt_rank;
            out[2 * n + 1] = seq;
            TE(MPI_Isend(&out[2 * n], 2, MPI_INT, dest, TAG, MPI_COMM_WORLD, &rq[n]));
            ++n;
        }
    TE(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
    free(rq);
    free(out);
    return NULL;
}

static void *receiver(int t)
{
    int total = K * mt_size;
    int quota = total / nrecv + (t < total % nrecv);
    int last[64], i, src, count;
    for (src = 0; src < mt_size; ++src)
        last[src] = -1;
    for (i = 0; i < quota; ++i) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        int in[2] = {-1, -1};
        if (t % 2 == 0) {
            TE(MPI_Mprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &msg, &st));
            TE(MPI_Mrecv(in, 2, MPI_INT, &msg, &st));
        } else {
            int flag = 0;
            MPI_Request r;
            while (!flag)
                TE(MPI_Improbe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &msg, &st));
            TE(MPI_Imrecv(in, 2, MPI_INT, &msg, &r));
            TE(MPI_Wait(&r, &st));
        }
        TCHECK(msg == MPI_MESSAGE_NULL, "message handle after receive, expected MPI_MESSAGE_NULL got %d", MT_H(msg));
        TE(MPI_Get_count(&st, MPI_INT, &count));
        src = in[0];
        TCHECK(count == 2 && st.MPI_TAG == TAG && st.MPI_SOURCE == src && src >= 0 && src < mt_size,
               "thread %d message %d: count/tag/source, expected 2/%d/%d got %d/%d/%d", t, i, TAG, src, count,
               st.MPI_TAG, st.MPI_SOURCE);
        if (src < 0 || src >= mt_size)
            continue;
        TCHECK(in[1] > last[src] && in[1] < K, "thread %d: from %d, expected a sequence number above %d got %d", t,
               src, last[src], in[1]);
        last[src] = in[1];
        got[t][src]++;
    }
    return NULL;
}

static void *role(int t) { return t == nrecv ? sender() : receiver(t); }

int main(int argc, char **argv)
{
    int src, t;
    thr_init(&argc, &argv);
    if (mt_size > 64)
        MT_FATAL("at most 64 processes, got %d", mt_size);
    nrecv = thr_threads();
    if (nrecv > 7)
        nrecv = 7;
    thr_run(nrecv + 1, role);
    for (src = 0; src < mt_size; ++src) {
        int sum = 0;
        for (t = 0; t < nrecv; ++t)
            sum += got[t][src];
        CHECK(sum == K, "messages from rank %d, expected %d got %d", src, K, sum);
    }
    return mt_finish();
}
