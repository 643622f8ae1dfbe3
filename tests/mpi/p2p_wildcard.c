/* Wildcards and message order.  Every rank (rank 0 included, to itself)
 * sends to rank 0, which receives:
 *  1. with MPI_ANY_SOURCE and a fixed tag: from each source the messages
 *     arrive in the order sent (non-overtaking), even when a large
 *     (rendezvous-size) message is followed by small ones;
 *  2. with MPI_ANY_TAG from each source in turn: order and tags as sent;
 *  3. with MPI_ANY_SOURCE and MPI_ANY_TAG;
 *  4. pre-posted receives (specific, ANY_SOURCE, ANY_TAG) for the same
 *     source are matched in posting order.
 * The status always names the true source and tag. */
#include "mpitest.h"

#define M 16
#define BIGN 40000 /* ints: 160 KB */

static int is_big(int seq) { return seq % 5 == 3; }

int main(int argc, char **argv)
{
    int *sbuf[3 * M + 3], nsend = 0, i, s, seq;
    MPI_Request sreq[3 * M + 3];
    MPI_Status st;
    int *rbuf;

    mt_init(&argc, &argv);
    rbuf = mt_malloc(BIGN * sizeof(int));

    /* Phase 1, 2, 3 sends, all non-blocking (rank 0 sends to itself). */
    for (seq = 0; seq < M; ++seq) {
        int n = is_big(seq) ? BIGN : 2;
        sbuf[nsend] = mt_malloc(n * sizeof(int));
        for (i = 0; i < n; ++i)
            sbuf[nsend][i] = seq;
        sbuf[nsend][n - 1] = mt_rank;
        E(MPI_Isend(sbuf[nsend], n, MPI_INT, 0, 5, MPI_COMM_WORLD, &sreq[nsend]));
        ++nsend;
    }
    for (seq = 0; seq < M; ++seq) {
        sbuf[nsend] = mt_malloc(2 * sizeof(int));
        sbuf[nsend][0] = seq;
        sbuf[nsend][1] = mt_rank;
        E(MPI_Isend(sbuf[nsend], 2, MPI_INT, 0, 100 + (seq * 7) % 13, MPI_COMM_WORLD, &sreq[nsend]));
        ++nsend;
    }
    for (seq = 0; seq < M; ++seq) {
        sbuf[nsend] = mt_malloc(2 * sizeof(int));
        sbuf[nsend][0] = seq;
        sbuf[nsend][1] = mt_rank;
        E(MPI_Isend(sbuf[nsend], 2, MPI_INT, 0, 200 + seq, MPI_COMM_WORLD, &sreq[nsend]));
        ++nsend;
    }

    if (mt_rank == 0) {
        int *next = mt_malloc(mt_size * sizeof(int)), count;
        /* 1. ANY_SOURCE, fixed tag. */
        memset(next, 0, mt_size * sizeof(int));
        for (i = 0; i < M * mt_size; ++i) {
            st.MPI_SOURCE = st.MPI_TAG = -77;
            E(MPI_Recv(rbuf, BIGN, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
            s = st.MPI_SOURCE;
            if (s < 0 || s >= mt_size) {
                MT_FAIL("phase 1 status.MPI_SOURCE, expected 0..%d got %d", mt_size - 1, s);
                break;
            }
            CHECK_INT("phase 1 status.MPI_TAG", 5, st.MPI_TAG);
            E(MPI_Get_count(&st, MPI_INT, &count));
            CHECK_INT("phase 1: sequence number from source (non-overtaking)", next[s], rbuf[0]);
            CHECK_INT("phase 1: Get_count", is_big(next[s]) ? BIGN : 2, count);
            if (count >= 1)
                CHECK_INT("phase 1: sender recorded in data vs status.MPI_SOURCE", s, rbuf[count - 1]);
            next[s] = rbuf[0] + 1;
        }
        /* 2. ANY_TAG from each source. */
        for (s = 0; s < mt_size; ++s) {
            for (seq = 0; seq < M; ++seq) {
                E(MPI_Recv(rbuf, 2, MPI_INT, s, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                CHECK_INT("phase 2: sequence number (ANY_TAG, non-overtaking)", seq, rbuf[0]);
                CHECK_INT("phase 2: status.MPI_TAG", 100 + (seq * 7) % 13, st.MPI_TAG);
                CHECK_INT("phase 2: status.MPI_SOURCE", s, st.MPI_SOURCE);
                CHECK_INT("phase 2: sender in data", s, rbuf[1]);
            }
        }
        /* 3. ANY_SOURCE and ANY_TAG. */
        memset(next, 0, mt_size * sizeof(int));
        for (i = 0; i < M * mt_size; ++i) {
            E(MPI_Recv(rbuf, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            s = st.MPI_SOURCE;
            if (s < 0 || s >= mt_size) {
                MT_FAIL("phase 3 status.MPI_SOURCE, expected 0..%d got %d", mt_size - 1, s);
                break;
            }
            CHECK_INT("phase 3: sender in data vs status.MPI_SOURCE", s, rbuf[1]);
            CHECK_INT("phase 3: sequence number (non-overtaking)", next[s], rbuf[0]);
            CHECK_INT("phase 3: status.MPI_TAG", 200 + next[s], st.MPI_TAG);
            next[s] = rbuf[0] + 1;
        }
        free(next);
    }
    E(MPI_Waitall(nsend, sreq, MPI_STATUSES_IGNORE));
    for (i = 0; i < nsend; ++i)
        free(sbuf[i]);

    /* 4. Posting order: rank 0 posts three receives that all match the
     * next message of the last rank, then lets it send three messages. */
    {
        int last = mt_size - 1;
        if (mt_rank == 0) {
            int got[3] = {-1, -1, -1};
            MPI_Request r[3];
            MPI_Status sts[3];
            E(MPI_Irecv(&got[0], 1, MPI_INT, last, 7, MPI_COMM_WORLD, &r[0]));
            E(MPI_Irecv(&got[1], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &r[1]));
            E(MPI_Irecv(&got[2], 1, MPI_INT, last, MPI_ANY_TAG, MPI_COMM_WORLD, &r[2]));
            if (last != 0) {
                E(MPI_Send(NULL, 0, MPI_BYTE, last, 8, MPI_COMM_WORLD));
            } else {
                int v[3] = {0, 1, 2};
                for (i = 0; i < 3; ++i)
                    E(MPI_Send(&v[i], 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
            }
            E(MPI_Waitall(3, r, sts));
            for (i = 0; i < 3; ++i) {
                CHECK_INT("phase 4: receives match in posting order", i, got[i]);
                CHECK_INT("phase 4: status.MPI_SOURCE", last, sts[i].MPI_SOURCE);
                CHECK_INT("phase 4: status.MPI_TAG", 7, sts[i].MPI_TAG);
            }
        }
        if (mt_rank == last && last != 0) {
            int v[3] = {0, 1, 2};
            E(MPI_Recv(NULL, 0, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (i = 0; i < 3; ++i)
                E(MPI_Send(&v[i], 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
        }
    }
    free(rbuf);
    mt_release_from_root();
    return mt_finish();
}
