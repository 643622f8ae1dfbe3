/* MPI_Cancel of receives: a receive that can never match is cancelled
 * (Test_cancelled true, request freed by Wait/Test), a cancelled receive
 * does not consume a message sent afterwards, cancelling a receive that
 * already completed has no effect (Test_cancelled false, data delivered),
 * and a persistent receive can be cancelled and then started again.
 * Pairs; odd size: self. */
#include "mpitest.h"

static int partner;

static void sync_with_partner(int tag)
{
    E(MPI_Sendrecv(NULL, 0, MPI_BYTE, partner, tag, NULL, 0, MPI_BYTE, partner, tag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    MPI_Request req;
    MPI_Status st;
    int flag, buf[16], i, count;

    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;

    /* 1. Never-matched receives, completed with Wait and with Test. */
    E(MPI_Irecv(buf, 16, MPI_INT, partner, 60, MPI_COMM_WORLD, &req));
    E(MPI_Cancel(&req));
    E(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Wait of a cancelled receive, expected MPI_REQUEST_NULL got %d", MT_H(req));
    flag = 0;
    E(MPI_Test_cancelled(&st, &flag));
    CHECK_INT("Test_cancelled of a cancelled receive (Wait)", 1, flag);

    E(MPI_Irecv(buf, 16, MPI_INT, MPI_ANY_SOURCE, 60, MPI_COMM_WORLD, &req));
    E(MPI_Cancel(&req));
    flag = 0;
    for (i = 0; i < 1000000 && !flag; ++i)
        E(MPI_Test(&req, &flag, &st));
    CHECK_INT("MPI_Test of a cancelled MPI_ANY_SOURCE receive completes: flag", 1, flag);
    if (flag) {
        int c = 0;
        E(MPI_Test_cancelled(&st, &c));
        CHECK_INT("Test_cancelled of a cancelled receive (Test)", 1, c);
        CHECK(req == MPI_REQUEST_NULL, "MPI_Test of a cancelled receive, expected MPI_REQUEST_NULL got %d", MT_H(req));
    }

    /* 2. A cancelled receive does not take a message sent later. */
    E(MPI_Irecv(buf, 16, MPI_INT, partner, 62, MPI_COMM_WORLD, &req));
    E(MPI_Cancel(&req));
    E(MPI_Wait(&req, &st));
    E(MPI_Test_cancelled(&st, &flag));
    CHECK_INT("Test_cancelled (receive cancelled before the send)", 1, flag);
    sync_with_partner(69);
    {
        int v = 4242 + mt_rank, got = -1;
        MPI_Request s;
        E(MPI_Isend(&v, 1, MPI_INT, partner, 62, MPI_COMM_WORLD, &s));
        E(MPI_Recv(&got, 1, MPI_INT, partner, 62, MPI_COMM_WORLD, &st));
        E(MPI_Wait(&s, MPI_STATUS_IGNORE));
        CHECK_INT("message sent after a cancelled receive reaches the next receive", 4242 + partner, got);
    }

    /* 3. Cancel after completion: no effect. */
    {
        int v[16], got[16];
        MPI_Request s;
        for (i = 0; i < 16; ++i)
            v[i] = mt_rank * 100 + i;
        E(MPI_Irecv(got, 16, MPI_INT, partner, 61, MPI_COMM_WORLD, &req));
        E(MPI_Isend(v, 16, MPI_INT, partner, 61, MPI_COMM_WORLD, &s));
        flag = 0;
        while (!flag)
            E(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
        E(MPI_Cancel(&req));
        E(MPI_Wait(&req, &st));
        E(MPI_Test_cancelled(&st, &flag));
        CHECK_INT("Test_cancelled after cancelling a completed receive", 0, flag);
        CHECK_INT("completed-then-cancelled receive: MPI_SOURCE", partner, st.MPI_SOURCE);
        CHECK_INT("completed-then-cancelled receive: MPI_TAG", 61, st.MPI_TAG);
        E(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_INT("completed-then-cancelled receive: Get_count", 16, count);
        for (i = 0; i < 16; ++i)
            CHECK_INT("completed-then-cancelled receive: data", partner * 100 + i, got[i]);
        E(MPI_Wait(&s, MPI_STATUS_IGNORE));
    }

    /* 4. Persistent receive: cancel, then start again and receive. */
    {
        int got = -1, v = 777 + mt_rank;
        E(MPI_Recv_init(&got, 1, MPI_INT, partner, 63, MPI_COMM_WORLD, &req));
        E(MPI_Start(&req));
        E(MPI_Cancel(&req));
        E(MPI_Wait(&req, &st));
        CHECK(req != MPI_REQUEST_NULL, "MPI_Wait of a cancelled persistent receive freed it, expected a handle got MPI_REQUEST_NULL");
        E(MPI_Test_cancelled(&st, &flag));
        CHECK_INT("Test_cancelled of a cancelled persistent receive", 1, flag);
        sync_with_partner(68);
        E(MPI_Start(&req));
        E(MPI_Send(&v, 1, MPI_INT, partner, 63, MPI_COMM_WORLD) );
        E(MPI_Wait(&req, &st));
        E(MPI_Test_cancelled(&st, &flag));
        CHECK_INT("Test_cancelled of the restarted persistent receive", 0, flag);
        CHECK_INT("restarted persistent receive: data", 777 + partner, got);
        E(MPI_Request_free(&req));
    }
    sync_with_partner(67);
    return mt_finish();
}
