/* MPI_Cancel of sends (MPI-3.1 3.8.4): a send whose message nothing has
 * matched yet is cancelled -- Isend, Ibsend, Issend and a started persistent
 * send, small (eager) and large (rendezvous; the list also runs it with
 * _YAMPI_RSIZE=1024), completed by Wait and by Test -- MPI_Test_cancelled is
 * true and the receiver never gets it: its receive takes the NEXT message of
 * the same envelope.  A send already matched (receive posted first, also
 * Irsend, or taken by MPI_Mprobe) is not cancelled and is delivered.  The
 * attached buffer space of a cancelled rendezvous Ibsend is given back.
 *
 * Open MPI 4.1 (ob1) and MPICH 4.0.2 (ch4:ucx) never cancel sends, and then
 * MPI_Wait of an unmatched rendezvous send never returns (the standard
 * requires it to): only the matched cases run there.  (MPICH's ch3 device
 * cancels them, as its test "scancel" requires.)  Pairs; odd size: self. */
#include "mpitest.h"

#define MT_CANCELS_SENDS (!MT_IS_OPENMPI && !MT_IS_MPICH)

enum mode { M_STANDARD, M_BUFFERED, M_SYNCHRONOUS, M_READY, M_PERSISTENT };
static const char *mode_name[] = {"Isend", "Ibsend", "Issend", "Irsend", "Send_init+Start"};

#define BIG 200000 /* bytes: rendezvous on every transport */
static int partner, next_tag = 100;
static char *sbuf, *rbuf;

static void fill(char *b, int n, int who, int which)
{
    int i;
    for (i = 0; i < n; ++i)
        b[i] = (char)(who * 31 + which * 7 + i);
}

static int matches(const char *b, int n, int who, int which)
{
    int i;
    for (i = 0; i < n; ++i)
        if (b[i] != (char)(who * 31 + which * 7 + i))
            return 0;
    return 1;
}

static void start_send(enum mode m, int n, int tag, MPI_Request *req)
{
    switch (m) {
    case M_STANDARD: E(MPI_Isend(sbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, req)); break;
    case M_BUFFERED: E(MPI_Ibsend(sbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, req)); break;
    case M_SYNCHRONOUS: E(MPI_Issend(sbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, req)); break;
    case M_READY: E(MPI_Irsend(sbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, req)); break;
    case M_PERSISTENT:
        E(MPI_Send_init(sbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, req));
        E(MPI_Start(req));
        break;
    }
}

/* Both partners exchange an int on a private tag. */
static int swap_with_partner(int mine)
{
    int theirs = -1;
    E(MPI_Sendrecv(&mine, 1, MPI_INT, partner, 99, &theirs, 1, MPI_INT, partner, 99, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE));
    return theirs;
}

static void completion(MPI_Request *req, MPI_Status *st, int use_test)
{
    int flag = 0;
    long i;
    if (!use_test) {
        E(MPI_Wait(req, st));
        return;
    }
    for (i = 0; i < 100000000L && !flag; ++i)
        E(MPI_Test(req, &flag, st));
    CHECK_INT("MPI_Test of a cancelled send completes", 1, flag);
}

/* Sends message 1, cancels it, sends message 2 with the same envelope; the
 * partner must receive message 2 only when message 1 was cancelled. */
static void cancel_unmatched(enum mode m, int n, int use_test)
{
    MPI_Request req;
    MPI_Status st;
    int tag = next_tag++, cancelled = 0, partner_cancelled, count = -1;
    char what[160];

    fill(sbuf, n, mt_rank, 1);
    start_send(m, n, tag, &req);
    E(MPI_Cancel(&req));
    completion(&req, &st, use_test);
    E(MPI_Test_cancelled(&st, &cancelled));
    snprintf(what, sizeof what, "Test_cancelled of an unmatched %s of %d bytes%s", mode_name[m], n,
             use_test ? " (Test)" : "");
    CHECK_INT(what, 1, cancelled);
    /* Message 2: the persistent request restarted, else a plain Isend. */
    fill(sbuf, n, mt_rank, 2);
    if (m == M_PERSISTENT) {
        CHECK(req != MPI_REQUEST_NULL, "persistent send freed by its completion after cancel");
        E(MPI_Start(&req));
    } else {
        CHECK(req == MPI_REQUEST_NULL, "%s handle after its cancelled completion, expected MPI_REQUEST_NULL got %d",
              mode_name[m], MT_H(req));
        E(MPI_Isend(sbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &req));
    }
    partner_cancelled = swap_with_partner(cancelled);
    memset(rbuf, 0, n);
    if (!partner_cancelled) {
        E(MPI_Recv(rbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        snprintf(what, sizeof what, "%s of %d bytes not cancelled: delivered", mode_name[m], n);
        CHECK(matches(rbuf, n, partner, 1), "%s", what);
    }
    E(MPI_Recv(rbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &st));
    E(MPI_Get_count(&st, MPI_CHAR, &count));
    snprintf(what, sizeof what, "message after a cancelled %s of %d bytes: count", mode_name[m], n);
    CHECK_INT(what, n, count);
    CHECK(matches(rbuf, n, partner, 2), "the receive after a cancelled %s of %d bytes got the wrong message",
          mode_name[m], n);
    E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (m == M_PERSISTENT)
        E(MPI_Request_free(&req));
    {
        int flag = 1;
        E(MPI_Iprobe(partner, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK_INT("a cancelled message is never received: Iprobe flag", 0, flag);
    }
}

/* The receive is posted (and completed) before the cancel: the send was
 * matched, so it is not cancelled. */
static void cancel_matched(enum mode m, int n)
{
    MPI_Request sreq, rreq;
    MPI_Status st;
    int tag = next_tag++, cancelled = -1;
    char what[160];

    memset(rbuf, 0, n);
    E(MPI_Irecv(rbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &rreq));
    swap_with_partner(0); /* both receives are posted */
    fill(sbuf, n, mt_rank, 3);
    start_send(m, n, tag, &sreq);
    E(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
    swap_with_partner(0); /* both messages were received */
    E(MPI_Cancel(&sreq));
    E(MPI_Wait(&sreq, &st));
    E(MPI_Test_cancelled(&st, &cancelled));
    snprintf(what, sizeof what, "Test_cancelled of a %s of %d bytes already received", mode_name[m], n);
    CHECK_INT(what, 0, cancelled);
    CHECK(matches(rbuf, n, partner, 3), "matched %s of %d bytes: wrong data", mode_name[m], n);
    if (m == M_PERSISTENT)
        E(MPI_Request_free(&sreq));
}

/* MPI_Mprobe takes the message out of matching: a later cancel fails. */
static void cancel_mprobed(int n)
{
    MPI_Request sreq;
    MPI_Message msg;
    MPI_Status st;
    int tag = next_tag++, cancelled = -1;

    fill(sbuf, n, mt_rank, 4);
    E(MPI_Isend(sbuf, n, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &sreq));
    E(MPI_Mprobe(partner, tag, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE));
    swap_with_partner(0);
    E(MPI_Cancel(&sreq));
    memset(rbuf, 0, n);
    E(MPI_Mrecv(rbuf, n, MPI_CHAR, &msg, MPI_STATUS_IGNORE));
    E(MPI_Wait(&sreq, &st));
    E(MPI_Test_cancelled(&st, &cancelled));
    CHECK_INT("Test_cancelled of a send taken by MPI_Mprobe", 0, cancelled);
    CHECK(matches(rbuf, n, partner, 4), "send taken by MPI_Mprobe of %d bytes: wrong data", n);
}

/* A cancelled rendezvous Ibsend gives its buffer space back: the buffer
 * holds one message, and a second Bsend of the same size fits. */
static void cancel_bsend_space(void)
{
    int size = BIG + MPI_BSEND_OVERHEAD, sz, cancelled = 0;
    char *space = malloc(size);
    void *p;
    MPI_Request req;
    MPI_Status st;
    int tag = next_tag++;

    E(MPI_Buffer_attach(space, size));
    fill(sbuf, BIG, mt_rank, 5);
    E(MPI_Ibsend(sbuf, BIG, MPI_CHAR, partner, tag, MPI_COMM_WORLD, &req));
    E(MPI_Cancel(&req));
    E(MPI_Wait(&req, &st));
    E(MPI_Test_cancelled(&st, &cancelled));
    CHECK_INT("Test_cancelled of a rendezvous Ibsend", 1, cancelled);
    /* Both cancels are decided before either side posts the receive below,
     * which could otherwise match the partner's message while its cancel is
     * still on the way. */
    swap_with_partner(0);
    fill(sbuf, BIG, mt_rank, 6);
    E(MPI_Bsend(sbuf, BIG, MPI_CHAR, partner, tag, MPI_COMM_WORLD)); /* needs the space back */
    E(MPI_Recv(rbuf, BIG, MPI_CHAR, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(matches(rbuf, BIG, partner, 6), "the Bsend after a cancelled Ibsend: wrong data");
    E(MPI_Buffer_detach(&p, &sz));
    free(space);
}

int main(int argc, char **argv)
{
    static const int sizes[] = {64, 4096, BIG};
    int s, use_test, bsize = 3 * (BIG + MPI_BSEND_OVERHEAD);
    char *bspace;
    void *p;
    enum mode m;

    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;
    sbuf = malloc(BIG);
    rbuf = malloc(BIG);
    bspace = malloc(bsize);

    E(MPI_Buffer_attach(bspace, bsize));
    for (s = 0; s < 3; ++s) {
        for (m = M_STANDARD; m <= M_PERSISTENT; ++m) {
            if (m == M_READY || !MT_CANCELS_SENDS)
                continue; /* a ready send needs a posted receive: matched below */
            for (use_test = 0; use_test <= 1; ++use_test)
                cancel_unmatched(m, sizes[s], use_test);
        }
        for (m = M_STANDARD; m <= M_PERSISTENT; ++m)
            cancel_matched(m, sizes[s]);
        cancel_mprobed(sizes[s]);
    }
    E(MPI_Buffer_detach(&p, &bsize));
    if (MT_CANCELS_SENDS)
        cancel_bsend_space();

    swap_with_partner(0);
    free(bspace);
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
