/* Matched probe (MPI-3): Mprobe / Improbe then Mrecv / Imrecv.  Every rank
 * sends two messages to its right neighbour; the receiver matches them with
 * wildcards, and the matched message is received even though a later
 * receive (or probe) with the same envelope was issued in between.
 * MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int right, left, flag, i, count;
    int a[100], b[3], ra[100], rb[3];
    MPI_Message msg, msg2;
    MPI_Status st;
    MPI_Request reqs[2], rreq;

    mt_init(&argc, &argv);
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;

    /* Nothing there yet (tag 50 only used below after the sync). */
    flag = -1;
    E(MPI_Improbe(left, 50, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK_INT("MPI_Improbe with nothing sent: flag", 0, flag);
    mt_barrier();

    for (i = 0; i < 100; ++i)
        a[i] = mt_rank * 1000 + i;
    for (i = 0; i < 3; ++i)
        b[i] = -mt_rank - i;
    E(MPI_Isend(a, 100, MPI_INT, right, 50, MPI_COMM_WORLD, &reqs[0]));
    E(MPI_Isend(b, 3, MPI_INT, right, 50, MPI_COMM_WORLD, &reqs[1]));

    /* Match the first message; it is ours even if the second is probed
     * (and matched) before the first is received. */
    E(MPI_Mprobe(MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg != MPI_MESSAGE_NULL, "MPI_Mprobe message, expected a message got MPI_MESSAGE_NULL");
    CHECK_INT("MPI_Mprobe: status.MPI_SOURCE", left, st.MPI_SOURCE);
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("MPI_Mprobe: Get_count of the first message", 100, count);
    flag = 0;
    while (!flag)
        E(MPI_Improbe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg2, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("MPI_Improbe: Get_count of the second message", 3, count);
    /* Receive the second first (Imrecv), then the first (Mrecv). */
    E(MPI_Imrecv(rb, 3, MPI_INT, &msg2, &rreq));
    CHECK(msg2 == MPI_MESSAGE_NULL, "MPI_Imrecv sets the message to MPI_MESSAGE_NULL, got %d", MT_H(msg2));
    E(MPI_Wait(&rreq, &st));
    CHECK_INT("MPI_Imrecv: status.MPI_TAG", 50, st.MPI_TAG);
    E(MPI_Mrecv(ra, 100, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv sets the message to MPI_MESSAGE_NULL, got %d", MT_H(msg));
    CHECK_INT("MPI_Mrecv: status.MPI_SOURCE", left, st.MPI_SOURCE);
    for (i = 0; i < 100; ++i)
        if (ra[i] != left * 1000 + i) {
            MT_FAIL("MPI_Mrecv data: int %d, expected %d got %d", i, left * 1000 + i, ra[i]);
            break;
        }
    for (i = 0; i < 3; ++i)
        CHECK_INT("MPI_Imrecv data", -left - i, rb[i]);
    E(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));

    /* MPI_PROC_NULL. */
    E(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL), expected MPI_MESSAGE_NO_PROC got %d", MT_H(msg));
    CHECK_INT("MPI_Mprobe(MPI_PROC_NULL): status.MPI_SOURCE", MPI_PROC_NULL, st.MPI_SOURCE);
    E(MPI_Mrecv(ra, 1, MPI_INT, &msg, &st));
    CHECK_INT("MPI_Mrecv(MPI_MESSAGE_NO_PROC): status.MPI_SOURCE", MPI_PROC_NULL, st.MPI_SOURCE);
    CHECK_INT("MPI_Mrecv(MPI_MESSAGE_NO_PROC): status.MPI_TAG", MPI_ANY_TAG, st.MPI_TAG);
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv(MPI_MESSAGE_NO_PROC) sets MPI_MESSAGE_NULL, got %d", MT_H(msg));
    flag = 0;
    E(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK_INT("MPI_Improbe(MPI_PROC_NULL): flag", 1, flag);
    CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe(MPI_PROC_NULL), expected MPI_MESSAGE_NO_PROC got %d", MT_H(msg));
    E(MPI_Imrecv(ra, 1, MPI_INT, &msg, &rreq));
    E(MPI_Wait(&rreq, &st));
    CHECK_INT("MPI_Imrecv(MPI_MESSAGE_NO_PROC): status.MPI_SOURCE", MPI_PROC_NULL, st.MPI_SOURCE);
    mt_barrier();
    return mt_finish();
}
