/* MPI_Cancel of a send is all or nothing (MPI-3.1 3.8.4), also when the
 * receiver has probed the message: a probe does not match (3.8.1: the
 * probed message is received "if the send is not successfully cancelled
 * before the receive"), so the send may still be cancelled.  The sender
 * cancels and looks at its request once, with MPI_Request_get_status or
 * MPI_Test, as mpi4py's test_p2p_buf does:
 *
 *   * flag true and Test_cancelled true: the message is gone, the receiver
 *     never gets it;
 *   * otherwise (flag false, or not cancelled) the send is not cancelled:
 *     the receiver gets the message, after which the send completes as not
 *     cancelled.
 *
 * Checked for Isend, Issend, Ibsend, Send_init and Ssend_init of 0, 64,
 * 4096 and 200000 bytes (eager, synchronous and rendezvous; the list also
 * runs it with _YAMPI_RSIZE=1024), with the message probed before the cancel
 * by MPI_Probe(ANY_SOURCE, ANY_TAG) or an MPI_Iprobe loop, or not probed,
 * to oneself (MPI_COMM_SELF) and between pairs of MPI_COMM_WORLD.  After the
 * cancel the next message of the same envelope is received, not a stale one.
 * gridmpi decides the cancel within MPI_Cancel and cancels every unmatched
 * send: there flag and Test_cancelled must both be true.
 *
 * A message taken by MPI_Mprobe (or Improbe) is matched: its cancel fails
 * and the Mrecv gets it.  Every wait for the other side is bounded: a lost
 * message or a request that never completes is a FAIL line, not a hang.  Odd size: the last rank pairs with
 * itself. */
#include "mpitest.h"

#define MT_CANCELS_SENDS (!MT_IS_OPENMPI && !MT_IS_MPICH)
#define BIG 200000 /* bytes: rendezvous on every transport */

enum mode { M_STANDARD, M_SYNCHRONOUS, M_BUFFERED, M_PERSISTENT, M_PERSISTENT_SYNC, M_COUNT };
static const char *mode_name[] = {"Isend", "Issend", "Ibsend", "Send_init", "Ssend_init"};
enum probe { P_NONE, P_PROBE, P_IPROBE, P_COUNT };
static const char *probe_name[] = {"no probe", "Probe", "Iprobe"};
enum look { L_GET_STATUS, L_TEST, L_COUNT };
static const char *look_name[] = {"Request_get_status", "Test"};

static int next_tag = 100;
static char *sbuf, *rbuf;
/* Seconds to wait for a message that must come; short once one was lost. */
static double patience = 10.0;

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

static void start_send(enum mode m, int n, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    switch (m) {
    case M_STANDARD: E(MPI_Isend(sbuf, n, MPI_CHAR, dest, tag, comm, req)); break;
    case M_SYNCHRONOUS: E(MPI_Issend(sbuf, n, MPI_CHAR, dest, tag, comm, req)); break;
    case M_BUFFERED: E(MPI_Ibsend(sbuf, n, MPI_CHAR, dest, tag, comm, req)); break;
    case M_PERSISTENT:
        E(MPI_Send_init(sbuf, n, MPI_CHAR, dest, tag, comm, req));
        E(MPI_Start(req));
        break;
    case M_PERSISTENT_SYNC:
        E(MPI_Ssend_init(sbuf, n, MPI_CHAR, dest, tag, comm, req));
        E(MPI_Start(req));
        break;
    default: break;
    }
}

/* Both partners exchange an int (a no-op with oneself). */
static int swap_with(int partner, MPI_Comm comm, int mine)
{
    int theirs = mine, me;
    MPI_Comm_rank(comm, &me);
    if (partner != me)
        E(MPI_Sendrecv(&mine, 1, MPI_INT, partner, 99, &theirs, 1, MPI_INT, partner, 99, comm,
                       MPI_STATUS_IGNORE));
    return theirs;
}

/* Iprobe until a message from `source` with `tag` is there, at most
 * `patience` seconds. */
static int await_message(int source, int tag, MPI_Comm comm, MPI_Status *st)
{
    int flag = 0;
    double start = MPI_Wtime();
    for (;;) {
        E(MPI_Iprobe(source, tag, comm, &flag, st));
        if (flag || MPI_Wtime() - start > patience)
            break;
    }
    if (!flag)
        patience = 0.5;
    return flag;
}

/* Test until complete, at most `patience` seconds. */
static int await_completion(MPI_Request *req, MPI_Status *st)
{
    int flag = 0;
    double start = MPI_Wtime();
    for (;;) {
        E(MPI_Test(req, &flag, st));
        if (flag || MPI_Wtime() - start > patience)
            break;
    }
    if (!flag)
        patience = 0.5;
    return flag;
}

static void free_if_persistent(enum mode m, MPI_Request *req)
{
    if ((m == M_PERSISTENT || m == M_PERSISTENT_SYNC) && *req != MPI_REQUEST_NULL)
        E(MPI_Request_free(req));
}

static void cancel_case(MPI_Comm comm, int partner, enum mode m, int n, enum probe p, enum look l)
{
    MPI_Request req;
    MPI_Status st;
    int tag = next_tag++, me, flag = 0, cancelled = 0, partner_cancelled, count = -1;
    char what[200];

    MPI_Comm_rank(comm, &me);
    /* MPICH 4.0.2 has this very bug with a persistent send to oneself:
     * Request_get_status says flag 0 and the cancel succeeds later. */
    if (MT_IS_MPICH && partner == me && l == L_GET_STATUS && (m == M_PERSISTENT || m == M_PERSISTENT_SYNC))
        return;
    snprintf(what, sizeof what, "%s of %d bytes to %s, %s, then Cancel and %s", mode_name[m], n,
             partner == me ? "self" : "the partner", probe_name[p], look_name[l]);

    fill(sbuf, n, me, 1);
    start_send(m, n, partner, tag, comm, &req);
    if (p == P_PROBE) {
        E(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
        CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == tag,
              "%s: Probe found source %d tag %d, expected %d and %d", what, st.MPI_SOURCE, st.MPI_TAG, partner, tag);
        E(MPI_Get_count(&st, MPI_CHAR, &count));
        CHECK(count == n, "%s: Probe's count %d, expected %d", what, count, n);
    } else if (p == P_IPROBE) {
        CHECK(await_message(partner, tag, comm, &st), "%s: Iprobe never found the message", what);
    }
    swap_with(partner, comm, 0); /* both messages probed */

    E(MPI_Cancel(&req));
    if (l == L_GET_STATUS)
        E(MPI_Request_get_status(req, &flag, &st));
    else
        E(MPI_Test(&req, &flag, &st));
    if (flag)
        E(MPI_Test_cancelled(&st, &cancelled));
    if (MT_CANCELS_SENDS) {
        CHECK(flag, "%s: the cancel is not decided when MPI_Cancel returns (flag 0)", what);
        CHECK(cancelled, "%s: an unmatched send was not cancelled", what);
    }

    partner_cancelled = swap_with(partner, comm, cancelled);
    memset(rbuf, 0, n > 0 ? n : 1);
    if (partner_cancelled) {
        int there = 1;
        E(MPI_Iprobe(partner, tag, comm, &there, MPI_STATUS_IGNORE));
        CHECK(!there, "%s: the partner's send was cancelled, yet its message can still be received", what);
    } else if (await_message(partner, tag, comm, &st)) {
        E(MPI_Recv(rbuf, n, MPI_CHAR, partner, tag, comm, &st));
        E(MPI_Get_count(&st, MPI_CHAR, &count));
        CHECK(count == n && matches(rbuf, n, partner, 1), "%s: not cancelled, but the message arrived wrong", what);
    } else {
        MT_FAIL("%s: the send was reported not cancelled, yet its message never arrived", what);
    }
    swap_with(partner, comm, 0); /* each message received or known to be gone */

    if (req != MPI_REQUEST_NULL && !(flag && l == L_TEST)) {
        if (await_completion(&req, &st)) {
            int final = -1;
            E(MPI_Test_cancelled(&st, &final));
            CHECK(final == cancelled, "%s: Test_cancelled %d at completion, %d when first seen", what, final,
                  cancelled);
        } else {
            MT_FAIL("%s: the request never completed after MPI_Cancel", what);
        }
    }
    free_if_persistent(m, &req);

    /* The next message of the same envelope is received, not a stale one. */
    fill(sbuf, n, me, 2);
    E(MPI_Sendrecv(sbuf, n, MPI_CHAR, partner, tag, rbuf, n, MPI_CHAR, partner, tag, comm, &st));
    CHECK(matches(rbuf, n, partner, 2), "%s: the next message of the same envelope arrived wrong", what);
}

/* A message taken by Mprobe/Improbe is matched: the cancel fails, the Mrecv
 * gets the message and the send completes as not cancelled.  (A synchronous
 * send completes only once the Mrecv started: 3.4 asks for a receive that
 * "has started to receive the message", which Open MPI follows too.) */
static void mprobe_case(MPI_Comm comm, int partner, enum mode m, int n, int immediate)
{
    MPI_Request req;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    int tag = next_tag++, me, flag = 0, cancelled = 0, count = -1;
    char what[200];

    MPI_Comm_rank(comm, &me);
    snprintf(what, sizeof what, "%s of %d bytes to %s, %s, then Cancel", mode_name[m], n,
             partner == me ? "self" : "the partner", immediate ? "Improbe" : "Mprobe");
    fill(sbuf, n, me, 3);
    start_send(m, n, partner, tag, comm, &req);
    if (immediate) {
        double start = MPI_Wtime();
        while (!flag && MPI_Wtime() - start < patience)
            E(MPI_Improbe(partner, tag, comm, &flag, &msg, &st));
        CHECK(flag, "%s: Improbe never found the message", what);
        if (!flag)
            return;
    } else {
        E(MPI_Mprobe(partner, tag, comm, &msg, &st));
    }
    swap_with(partner, comm, 0); /* both messages taken */

    E(MPI_Cancel(&req));
    E(MPI_Request_get_status(req, &flag, &st));
    if (flag) {
        E(MPI_Test_cancelled(&st, &cancelled));
        CHECK(!cancelled, "%s: a send matched by a matched probe was cancelled", what);
    }
    swap_with(partner, comm, 0);
    memset(rbuf, 0, n > 0 ? n : 1);
    E(MPI_Mrecv(rbuf, n, MPI_CHAR, &msg, &st));
    E(MPI_Get_count(&st, MPI_CHAR, &count));
    CHECK(count == n && matches(rbuf, n, partner, 3), "%s: the Mrecv got the message wrong", what);
    if (await_completion(&req, &st)) {
        E(MPI_Test_cancelled(&st, &cancelled));
        CHECK(!cancelled, "%s: Test_cancelled at completion", what);
    } else {
        MT_FAIL("%s: the request never completed after MPI_Cancel and Mrecv", what);
    }
    free_if_persistent(m, &req);
    swap_with(partner, comm, 0);
}

static void run_all(MPI_Comm comm, int partner)
{
    static const int sizes[] = {0, 64, 4096, BIG};
    int s, i;
    enum mode m;
    enum probe p;
    enum look l;

    for (s = 0; s < 4; ++s) {
        for (m = M_STANDARD; m < M_COUNT; ++m)
            for (p = P_NONE; p < P_COUNT; ++p)
                for (l = L_GET_STATUS; l < L_COUNT; ++l)
                    cancel_case(comm, partner, m, sizes[s], p, l);
        for (i = 0; i < 2; ++i) {
            mprobe_case(comm, partner, M_STANDARD, sizes[s], i);
            mprobe_case(comm, partner, M_SYNCHRONOUS, sizes[s], i);
            mprobe_case(comm, partner, M_PERSISTENT_SYNC, sizes[s], i);
        }
    }
}

int main(int argc, char **argv)
{
    int partner, bsize = 2 * (BIG + MPI_BSEND_OVERHEAD), dsize;
    char *bspace;
    void *p;

    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;
    sbuf = malloc(BIG);
    rbuf = malloc(BIG);
    bspace = malloc(bsize);
    E(MPI_Buffer_attach(bspace, bsize));

    run_all(MPI_COMM_SELF, 0);
    if (partner != mt_rank)
        run_all(MPI_COMM_WORLD, partner);

    E(MPI_Buffer_detach(&p, &dsize));
    free(bspace);
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
