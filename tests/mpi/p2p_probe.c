/* Probe and Iprobe: every rank sends messages of different sizes and tags
 * to rank 0, which probes with MPI_ANY_SOURCE / MPI_ANY_TAG, allocates the
 * probed size (Get_count) and receives exactly that message from
 * status.MPI_SOURCE / MPI_TAG.  Also: Iprobe says no when nothing is there,
 * Probe does not consume the message (two probes, one receive), Probe on a
 * large (rendezvous) message, and Probe with MPI_PROC_NULL.  Last, on a
 * duplicate: probed counts of MPI_LONG and of a struct {int, long, double}
 * (across clusters these travel in external32, where long has 4 bytes:
 * Get_count and Get_elements must still count the sender's elements). */
#include <stddef.h>

#include "mpitest.h"

#define NMSG 3

static int msg_count(int rank, int k) { return k == 2 ? 300000 + rank : rank * 7 + k; }

int main(int argc, char **argv)
{
    int flag = -1, i, k;
    MPI_Status st;

    mt_init(&argc, &argv);
    MPI_Comm dup;
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));

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
    {
        struct rec { int i; long l; double d; };
        struct rec recs[40];
        long longs[300];
        MPI_Datatype rt;
        int bl[3] = {1, 1, 1}, nl, nr, c;
        MPI_Aint disp[3] = {offsetof(struct rec, i), offsetof(struct rec, l), offsetof(struct rec, d)};
        MPI_Datatype types[3] = {MPI_INT, MPI_LONG, MPI_DOUBLE};
        E(MPI_Type_create_struct(3, bl, disp, types, &rt));
        E(MPI_Type_commit(&rt));
        if (mt_rank == 0) {
            for (i = 1; i < mt_size; ++i) {
                nl = 100 + i, nr = 10 + i;
                E(MPI_Probe(i, 50, dup, &st));
                E(MPI_Get_count(&st, MPI_LONG, &c));
                CHECK_INT("probed Get_count of MPI_LONG", nl, c);
                E(MPI_Get_elements(&st, MPI_LONG, &c));
                CHECK_INT("probed Get_elements of MPI_LONG", nl, c);
                E(MPI_Recv(longs, nl, MPI_LONG, i, 50, dup, &st));
                E(MPI_Get_count(&st, MPI_LONG, &c));
                CHECK_INT("received Get_count of MPI_LONG", nl, c);
                for (k = 0; k < nl; ++k)
                    if (longs[k] != -7L * k - i) {
                        MT_FAIL("long %d from %d: expected %ld got %ld", k, i, -7L * k - i, longs[k]);
                        break;
                    }
                E(MPI_Probe(i, 51, dup, &st));
                E(MPI_Get_count(&st, rt, &c));
                CHECK_INT("probed Get_count of struct {int, long, double}", nr, c);
                E(MPI_Get_elements(&st, rt, &c));
                CHECK_INT("probed Get_elements of struct {int, long, double}", 3 * nr, c);
                E(MPI_Recv(recs, nr, rt, i, 51, dup, &st));
                E(MPI_Get_count(&st, rt, &c));
                CHECK_INT("received Get_count of the struct", nr, c);
                for (k = 0; k < nr; ++k)
                    if (recs[k].i != k + i || recs[k].l != 1000L * k - i || recs[k].d != k + 0.5) {
                        MT_FAIL("struct %d from %d differs", k, i);
                        break;
                    }
            }
        } else {
            nl = 100 + mt_rank, nr = 10 + mt_rank;
            for (k = 0; k < nl; ++k)
                longs[k] = -7L * k - mt_rank;
            for (k = 0; k < nr; ++k)
                recs[k].i = k + mt_rank, recs[k].l = 1000L * k - mt_rank, recs[k].d = k + 0.5;
            E(MPI_Send(longs, nl, MPI_LONG, 0, 50, dup));
            E(MPI_Send(recs, nr, rt, 0, 51, dup));
        }
        E(MPI_Type_free(&rt));
    }
    E(MPI_Comm_free(&dup));
    /* Not mt_barrier: its messages to rank 0 would match the wildcard
     * probes above.  Rank 0 releases the others when it has everything. */
    mt_release_from_root();
    return mt_finish();
}
