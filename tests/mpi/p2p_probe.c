/* Probe and Iprobe: every rank sends messages of different sizes and tags
 * to rank 0, which probes with MPI_ANY_SOURCE / MPI_ANY_TAG, allocates the
 * probed size (Get_count) and receives exactly that message from
 * status.MPI_SOURCE / MPI_TAG.  Also: Iprobe says no when nothing is there,
 * Probe does not consume the message (two probes, one receive), Probe on a
 * large (rendezvous) message, and Probe with MPI_PROC_NULL. */
#include "mpitest.h"

#define NMSG 3

static int msg_count(int rank, int k) { return k == 2 ? 300000 + rank : rank * 7 + k; }

int main(int argc, char **argv)
{
    int flag = -1, i, k;
    MPI_Status st;

    mt_init(&argc, &argv);

    /* Nothing sent with tag 77 anywhere: Iprobe must say no. */
    st.MPI_SOURCE = 12345;
    E(MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, &st));
    CHECK_INT("MPI_Iprobe with nothing sent: flag", 0, flag);

    /* MPI_PROC_NULL: returns at once, source PROC_NULL, tag ANY_TAG, count 0. */
    E(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    CHECK_INT("MPI_Probe(MPI_PROC_NULL): MPI_SOURCE", MPI_PROC_NULL, st.MPI_SOURCE);
    CHECK_INT("MPI_Probe(MPI_PROC_NULL): MPI_TAG", MPI_ANY_TAG, st.MPI_TAG);
    E(MPI_Get_count(&st, MPI_INT, &k));
    CHECK_INT("MPI_Probe(MPI_PROC_NULL): Get_count", 0, k);
    flag = 0;
    E(MPI_Iprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &st));
    CHECK_INT("MPI_Iprobe(MPI_PROC_NULL): flag", 1, flag);
    CHECK_INT("MPI_Iprobe(MPI_PROC_NULL): MPI_SOURCE", MPI_PROC_NULL, st.MPI_SOURCE);

    mt_barrier();

    if (mt_rank == 0) {
        int got[NMSG * 64] = {0};
        int total = NMSG * mt_size, n, count;
        MPI_Request selfreq[NMSG];
        int *selfbuf[NMSG];
        /* Rank 0 sends to itself too (non-blocking). */
        for (k = 0; k < NMSG; ++k) {
            n = msg_count(0, k);
            selfbuf[k] = mt_malloc(n * sizeof(int));
            for (i = 0; i < n; ++i)
                selfbuf[k][i] = k * 1000 + i;
            E(MPI_Isend(selfbuf[k], n, MPI_INT, 0, 10 + k, MPI_COMM_WORLD, &selfreq[k]));
        }
        for (i = 0; i < total; ++i) {
            int *buf, src, tag, j;
            MPI_Status st2;
            if (i % 2) {
                E(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            } else {
                flag = 0;
                while (!flag)
                    E(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
            }
            src = st.MPI_SOURCE;
            tag = st.MPI_TAG;
            if (src < 0 || src >= mt_size || tag < 10 || tag >= 10 + NMSG) {
                MT_FAIL("probed envelope, expected source 0..%d tag 10..%d got source %d tag %d", mt_size - 1,
                        9 + NMSG, src, tag);
                break;
            }
            k = tag - 10;
            E(MPI_Get_count(&st, MPI_INT, &count));
            CHECK_INT("probed Get_count", msg_count(src, k), count);
            if (count < 0 || count != msg_count(src, k))
                break;
            /* A second probe for the same (source, tag) sees the same message. */
            E(MPI_Probe(src, tag, MPI_COMM_WORLD, &st2));
            E(MPI_Get_count(&st2, MPI_INT, &n));
            CHECK_INT("second probe Get_count", count, n);
            buf = mt_malloc(count * sizeof(int));
            E(MPI_Recv(buf, count, MPI_INT, src, tag, MPI_COMM_WORLD, &st2));
            E(MPI_Get_count(&st2, MPI_INT, &n));
            CHECK_INT("received count after probe", count, n);
            for (j = 0; j < count; ++j)
                if (buf[j] != k * 1000 + j) {
                    MT_FAIL("message from %d tag %d: int %d, expected %d got %d", src, tag, j, k * 1000 + j, buf[j]);
                    break;
                }
            free(buf);
            if (src < 64)
                got[src * NMSG + k]++;
        }
        for (i = 0; i < mt_size && i < 64; ++i)
            for (k = 0; k < NMSG; ++k)
                CHECK_INT("messages received per (source, tag)", 1, got[i * NMSG + k]);
        E(MPI_Waitall(NMSG, selfreq, MPI_STATUSES_IGNORE));
        for (k = 0; k < NMSG; ++k)
            free(selfbuf[k]);
        /* Nothing left. */
        flag = -1;
        E(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK_INT("MPI_Iprobe after everything was received: flag", 0, flag);
    } else {
        for (k = 0; k < NMSG; ++k) {
            int n = msg_count(mt_rank, k), *buf = mt_malloc(n * sizeof(int));
            for (i = 0; i < n; ++i)
                buf[i] = k * 1000 + i;
            E(MPI_Send(buf, n, MPI_INT, 0, 10 + k, MPI_COMM_WORLD));
            free(buf);
        }
    }
    /* Not mt_barrier: its messages to rank 0 would match the wildcard
     * probes above.  Rank 0 releases the others when it has everything. */
    mt_release_from_root();
    return mt_finish();
}
