/* The four send modes.
 *  - buffered: Buffer_attach, Bsend completes before any receive is posted,
 *    Ibsend, Buffer_detach returns the attached buffer and size;
 *  - synchronous: Issend is not complete while the receive is not posted
 *    (Test keeps returning false), blocking Ssend returns only after the
 *    receiver posted its receive (measured with Wtime);
 *  - ready: Rsend/Irsend after the receiver said its receive is posted;
 *  - standard Isend for comparison.
 * Ranks work in pairs, each side plays both roles; with an odd size the last
 * rank plays both roles with itself using the non-blocking forms. */
#include "mpitest.h"

#define NB 4
static const int bcounts[NB] = {0, 10, 1000, 100000}; /* ints */

static int partner;

static void check_ints(const char *what, const int *buf, int n, int seed)
{
    int i;
    for (i = 0; i < n; ++i)
        if (buf[i] != seed + i) {
            MT_FAIL("%s: int %d of %d, expected %d got %d", what, i, n, seed + i, buf[i]);
            return;
        }
}

static void fill_ints(int *buf, int n, int seed)
{
    int i;
    for (i = 0; i < n; ++i)
        buf[i] = seed + i;
}

static void test_buffered(void)
{
    int total = 0, i, size, *sb[NB], *rb[NB], dsize = -1;
    char *attach, *detached = NULL;
    MPI_Request done_req;
    MPI_Status st;

    for (i = 0; i < NB; ++i) {
        E(MPI_Pack_size(bcounts[i], MPI_INT, MPI_COMM_WORLD, &size));
        CHECK(size >= bcounts[i] * (int)sizeof(int), "MPI_Pack_size(%d ints), expected >= %d got %d",
              bcounts[i], bcounts[i] * (int)sizeof(int), size);
        total += size + MPI_BSEND_OVERHEAD;
        sb[i] = mt_malloc(bcounts[i] * sizeof(int));
        rb[i] = mt_malloc(bcounts[i] * sizeof(int));
        fill_ints(sb[i], bcounts[i], mt_rank * 1000000 + i * 100000);
    }
    attach = mt_malloc(total);
    E(MPI_Buffer_attach(attach, total));

    /* Every Bsend must complete locally: nobody has posted a receive yet. */
    for (i = 0; i < NB; ++i)
        E(MPI_Bsend(sb[i], bcounts[i], MPI_INT, partner, 10 + i, MPI_COMM_WORLD));
    /* The buffer now holds the data: overwrite the user buffers. */
    for (i = 0; i < NB; ++i)
        memset(sb[i], 0, bcounts[i] * sizeof(int));
    E(MPI_Isend(NULL, 0, MPI_BYTE, partner, 19, MPI_COMM_WORLD, &done_req));
    E(MPI_Recv(NULL, 0, MPI_BYTE, partner, 19, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    E(MPI_Wait(&done_req, MPI_STATUS_IGNORE));
    for (i = 0; i < NB; ++i) {
        int count = -1;
        char what[64];
        E(MPI_Recv(rb[i], bcounts[i], MPI_INT, partner, 10 + i, MPI_COMM_WORLD, &st));
        snprintf(what, sizeof what, "Bsend of %d ints", bcounts[i]);
        check_ints(what, rb[i], bcounts[i], partner * 1000000 + i * 100000);
        E(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_INT("Get_count after Bsend", bcounts[i], count);
        CHECK_INT("status.MPI_TAG after Bsend", 10 + i, st.MPI_TAG);
    }
    E(MPI_Buffer_detach(&detached, &dsize));
    CHECK(detached == attach, "MPI_Buffer_detach address, expected %p got %p", (void *)attach,
          (void *)detached);
    CHECK_INT("MPI_Buffer_detach size", total, dsize);

    /* Attach again; Ibsend + Wait, then detach (waits for delivery). */
    E(MPI_Buffer_attach(attach, total));
    {
        MPI_Request r;
        fill_ints(sb[3], bcounts[3], 7 * mt_rank);
        E(MPI_Ibsend(sb[3], bcounts[3], MPI_INT, partner, 18, MPI_COMM_WORLD, &r));
        E(MPI_Wait(&r, MPI_STATUS_IGNORE));
        memset(sb[3], 0, bcounts[3] * sizeof(int));
        E(MPI_Recv(rb[3], bcounts[3], MPI_INT, partner, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check_ints("Ibsend of 100000 ints", rb[3], bcounts[3], 7 * partner);
    }
    E(MPI_Buffer_detach(&detached, &dsize));
    CHECK(detached == attach, "second MPI_Buffer_detach address, expected %p got %p", (void *)attach,
          (void *)detached);
    CHECK_INT("second MPI_Buffer_detach size", total, dsize);
    free(attach);
    for (i = 0; i < NB; ++i) {
        free(sb[i]);
        free(rb[i]);
    }
}

/* Test an Issend for `ms` milliseconds; it must not complete. */
static int issend_stays_pending(MPI_Request *req, int ms)
{
    double end = MPI_Wtime() + ms / 1000.0;
    int flag = 0;
    while (MPI_Wtime() < end) {
        E(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        if (flag)
            return 0;
        mt_sleep_ms(2);
    }
    return 1;
}

static void test_synchronous(int n)
{
    int *sbuf = mt_malloc(n * sizeof(int)), *rbuf = mt_malloc(n * sizeof(int));
    int phase;
    char what[80];

    for (phase = 0; phase < 2; ++phase) {
        int sender = (partner == mt_rank) || (mt_rank % 2 == phase);
        int receiver = (partner == mt_rank) || !sender;
        MPI_Request req = MPI_REQUEST_NULL;
        fill_ints(sbuf, n, mt_rank * 3 + n);
        memset(rbuf, 0, n * sizeof(int));
        /* Non-blocking: Issend pending until the receive is posted. */
        if (sender) {
            E(MPI_Issend(sbuf, n, MPI_INT, partner, 20, MPI_COMM_WORLD, &req));
            snprintf(what, sizeof what, "Issend of %d ints still pending before the receive is posted", n);
            CHECK(issend_stays_pending(&req, 200), "%s, expected not complete got complete", what);
            if (partner != mt_rank)
                E(MPI_Send(NULL, 0, MPI_BYTE, partner, 21, MPI_COMM_WORLD));
        }
        if (receiver) {
            if (partner != mt_rank)
                E(MPI_Recv(NULL, 0, MPI_BYTE, partner, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            E(MPI_Recv(rbuf, n, MPI_INT, partner, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            snprintf(what, sizeof what, "Issend of %d ints", n);
            check_ints(what, rbuf, n, partner * 3 + n);
        }
        if (sender)
            E(MPI_Wait(&req, MPI_STATUS_IGNORE));

        /* Blocking Ssend: returns only after the receiver, which sleeps
         * 200 ms after hearing from us, posted its receive. */
        if (partner == mt_rank)
            continue; /* a blocking Ssend to self would deadlock */
        if (sender) {
            double t0 = MPI_Wtime(), t1;
            E(MPI_Send(NULL, 0, MPI_BYTE, partner, 22, MPI_COMM_WORLD));
            E(MPI_Ssend(sbuf, n, MPI_INT, partner, 23, MPI_COMM_WORLD));
            t1 = MPI_Wtime();
            CHECK(t1 - t0 >= 0.19, "blocking Ssend of %d ints returned before the receive was posted: "
                  "expected >= 0.2 s got %.3f s", n, t1 - t0);
        } else {
            E(MPI_Recv(NULL, 0, MPI_BYTE, partner, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            mt_sleep_ms(200);
            E(MPI_Recv(rbuf, n, MPI_INT, partner, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            snprintf(what, sizeof what, "Ssend of %d ints", n);
            check_ints(what, rbuf, n, partner * 3 + n);
        }
    }
    free(sbuf);
    free(rbuf);
}

static void test_ready(int n)
{
    int *sbuf = mt_malloc(n * sizeof(int)), *rbuf = mt_malloc(n * sizeof(int));
    int phase, blocking;
    char what[80];

    for (blocking = 0; blocking < 2; ++blocking) {
        for (phase = 0; phase < 2; ++phase) {
            int sender = (partner == mt_rank) || (mt_rank % 2 == phase);
            int receiver = (partner == mt_rank) || !sender;
            MPI_Request rreq = MPI_REQUEST_NULL, sreq = MPI_REQUEST_NULL;
            fill_ints(sbuf, n, mt_rank * 5 + n + blocking);
            memset(rbuf, 0, n * sizeof(int));
            if (receiver) {
                E(MPI_Irecv(rbuf, n, MPI_INT, partner, 30, MPI_COMM_WORLD, &rreq));
                if (partner != mt_rank)
                    E(MPI_Send(NULL, 0, MPI_BYTE, partner, 31, MPI_COMM_WORLD));
            }
            if (sender) {
                if (partner != mt_rank)
                    E(MPI_Recv(NULL, 0, MPI_BYTE, partner, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                if (blocking)
                    E(MPI_Rsend(sbuf, n, MPI_INT, partner, 30, MPI_COMM_WORLD));
                else
                    E(MPI_Irsend(sbuf, n, MPI_INT, partner, 30, MPI_COMM_WORLD, &sreq));
            }
            if (receiver) {
                E(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
                snprintf(what, sizeof what, "%s of %d ints", blocking ? "Rsend" : "Irsend", n);
                check_ints(what, rbuf, n, partner * 5 + n + blocking);
            }
            if (sender && !blocking)
                E(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        }
    }
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;

    test_buffered();
    test_synchronous(2);
    test_synchronous(300000);
    test_ready(1);
    test_ready(300000);
    return mt_finish();
}
