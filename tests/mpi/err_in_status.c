/* MPI_ERR_IN_STATUS (MPI-3.1 3.7.5, 8.3) with MPI_ERRORS_RETURN: a truncated
 * receive among good requests makes Waitall / Testall / Waitsome / Testsome
 * return MPI_ERR_IN_STATUS and set every status's MPI_ERROR (MPI_ERR_TRUNCATE
 * for the failed one, MPI_SUCCESS for the others), with the good data
 * delivered and the requests freed; with MPI_STATUSES_IGNORE the call still
 * fails.  Waitany / Testany / Wait return the request's own error (class
 * MPI_ERR_TRUNCATE) and leave status.MPI_ERROR alone.  A user error handler
 * is called once with MPI_ERR_IN_STATUS.  Pairs; odd size: self.
 *
 * Waitall may also return as soon as one request failed, marking the ones
 * not completed MPI_ERR_PENDING (MPICH 4.0.2 does); they stay active.
 * Open MPI 4.1 returns MPI_SUCCESS with MPI_STATUSES_IGNORE, passes the
 * request's code instead of MPI_ERR_IN_STATUS to a user handler, and
 * reports no truncation of a message to itself: those checks are skipped
 * there. */
#include "mpitest.h"

#define SHORT 4
#define LONG 8
static int partner, next_tag = 10;
static int handler_calls, handler_code;

static void count_calls(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    ++handler_calls;
    handler_code = *code;
}

/* Posts requests[0] = a receive of SHORT ints that gets LONG (truncated),
 * requests[1] = a good receive of LONG ints, and the two matching sends
 * (returned in sends[]); the partner does the same. */
static int post_pair(MPI_Request requests[2], MPI_Request sends[2], int *rbuf, int *good, int *sbuf)
{
    int tag = next_tag, i;
    next_tag += 2;
    for (i = 0; i < LONG; ++i)
        sbuf[i] = 1000 * mt_rank + i;
    E(MPI_Irecv(rbuf, SHORT, MPI_INT, partner, tag, MPI_COMM_WORLD, &requests[0]));
    E(MPI_Irecv(good, LONG, MPI_INT, partner, tag + 1, MPI_COMM_WORLD, &requests[1]));
    E(MPI_Isend(sbuf, LONG, MPI_INT, partner, tag, MPI_COMM_WORLD, &sends[0]));
    E(MPI_Isend(sbuf, LONG, MPI_INT, partner, tag + 1, MPI_COMM_WORLD, &sends[1]));
    return tag;
}

static void check_good(const char *what, const int *good)
{
    int i;
    char w[160];
    snprintf(w, sizeof w, "%s: the good receive's data", what);
    for (i = 0; i < LONG; ++i)
        if (good[i] != 1000 * partner + i) {
            CHECK_INT(w, 1000 * partner + i, good[i]);
            break;
        }
}

/* Statuses of Waitall/Testall; a good request left MPI_ERR_PENDING is
 * completed here. */
static void check_statuses(const char *what, MPI_Status *st, MPI_Request *rq, int tag)
{
    char w[160];
    snprintf(w, sizeof w, "%s: MPI_ERROR of the truncated receive (class)", what);
    CHECK_INT(w, MPI_ERR_TRUNCATE, mt_class(st[0].MPI_ERROR));
    snprintf(w, sizeof w, "%s: MPI_TAG of the truncated receive", what);
    CHECK_INT(w, tag, st[0].MPI_TAG);
    CHECK(rq[0] == MPI_REQUEST_NULL, "%s freed the failed request", what);
    if (st[1].MPI_ERROR == MPI_ERR_PENDING) {
        CHECK(rq[1] != MPI_REQUEST_NULL, "%s: a request marked MPI_ERR_PENDING was freed", what);
        E(MPI_Wait(&rq[1], &st[1]));
    } else {
        snprintf(w, sizeof w, "%s: MPI_ERROR of the good receive (MPI_SUCCESS or MPI_ERR_PENDING)", what);
        CHECK_INT(w, MPI_SUCCESS, st[1].MPI_ERROR);
        CHECK(rq[1] == MPI_REQUEST_NULL, "%s freed the completed request", what);
    }
    snprintf(w, sizeof w, "%s: MPI_SOURCE of the good receive", what);
    CHECK_INT(w, partner, st[1].MPI_SOURCE);
}

static void wait_sends(MPI_Request sends[2])
{
    E(MPI_Waitall(2, sends, MPI_STATUSES_IGNORE));
}

int main(int argc, char **argv)
{
    MPI_Request rq[2], sends[2];
    MPI_Status st[2];
    int rbuf[LONG], good[LONG], sbuf[LONG], rc, tag, flag, idx[2], outcount, index, i;
    MPI_Errhandler eh;

    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    if (MT_IS_OPENMPI && partner == mt_rank) {
        /* No truncation is reported for a message to oneself. */
        E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        return mt_finish();
    }

    /* Waitall. */
    tag = post_pair(rq, sends, rbuf, good, sbuf);
    st[0].MPI_ERROR = st[1].MPI_ERROR = -1;
    rc = MPI_Waitall(2, rq, st);
    CHECK_INT("MPI_Waitall with a truncated receive: class", MPI_ERR_IN_STATUS, mt_class(rc));
    check_statuses("MPI_Waitall", st, rq, tag);
    check_good("MPI_Waitall", good);
    wait_sends(sends);

    /* Testall: MPI_ERR_IN_STATUS once everything is complete. */
    tag = post_pair(rq, sends, rbuf, good, sbuf);
    flag = 0;
    st[0].MPI_ERROR = st[1].MPI_ERROR = -1;
    for (i = 0; i < 100000000 && !flag; ++i) {
        rc = MPI_Testall(2, rq, &flag, st);
        if (rc != MPI_SUCCESS)
            break;
    }
    /* (MPICH returns at the failure with flag 0 and the other one pending.) */
    CHECK(flag || rc != MPI_SUCCESS, "MPI_Testall with a truncated receive never completed");
    CHECK_INT("MPI_Testall with a truncated receive: class", MPI_ERR_IN_STATUS, mt_class(rc));
    check_statuses("MPI_Testall", st, rq, tag);
    check_good("MPI_Testall", good);
    wait_sends(sends);

    /* Waitsome / Testsome: the statuses are in completion order (indices). */
    {
        const char *names[2] = {"MPI_Waitsome", "MPI_Testsome"};
        int which;
        for (which = 0; which < 2; ++which) {
            int done = 0, failed = 0;
            tag = post_pair(rq, sends, rbuf, good, sbuf);
            while (done < 2) {
                st[0].MPI_ERROR = st[1].MPI_ERROR = -1;
                outcount = 0;
                if (which == 0)
                    rc = MPI_Waitsome(2, rq, &outcount, idx, st);
                else
                    rc = MPI_Testsome(2, rq, &outcount, idx, st);
                if (outcount == MPI_UNDEFINED)
                    break;
                for (i = 0; i < outcount; ++i) {
                    if (idx[i] == 0) {
                        char w[160];
                        snprintf(w, sizeof w, "%s: class when the truncated receive completes", names[which]);
                        CHECK_INT(w, MPI_ERR_IN_STATUS, mt_class(rc));
                        snprintf(w, sizeof w, "%s: MPI_ERROR of the truncated receive (class)", names[which]);
                        CHECK_INT(w, MPI_ERR_TRUNCATE, mt_class(st[i].MPI_ERROR));
                        failed = 1;
                    } else if (rc != MPI_SUCCESS) {
                        char w[160];
                        snprintf(w, sizeof w, "%s: MPI_ERROR of the good receive", names[which]);
                        CHECK_INT(w, MPI_SUCCESS, st[i].MPI_ERROR);
                    }
                }
                if (outcount > 0 && !failed)
                    CHECK_INT("Waitsome/Testsome without a failure returns", MPI_SUCCESS, rc);
                done += outcount;
            }
            CHECK_INT("Waitsome/Testsome completed both requests", 2, done);
            CHECK_INT("Waitsome/Testsome saw the truncated receive", 1, failed);
            check_good(names[which], good);
            wait_sends(sends);
        }
    }

    /* MPI_STATUSES_IGNORE: the call still fails. */
    if (!MT_IS_OPENMPI) {
        post_pair(rq, sends, rbuf, good, sbuf);
        rc = MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        CHECK(rc != MPI_SUCCESS, "MPI_Waitall(MPI_STATUSES_IGNORE) with a truncated receive returned MPI_SUCCESS");
        CHECK_INT("MPI_Waitall(MPI_STATUSES_IGNORE) with a truncated receive: class", MPI_ERR_IN_STATUS, mt_class(rc));
        if (rq[1] != MPI_REQUEST_NULL)
            E(MPI_Wait(&rq[1], MPI_STATUS_IGNORE)); /* returned early */
        check_good("MPI_Waitall(MPI_STATUSES_IGNORE)", good);
        wait_sends(sends);
    }

    /* Waitany / Testany / Wait: the request's own error; MPI_ERROR untouched. */
    {
        int seen_bad = 0, k;
        post_pair(rq, sends, rbuf, good, sbuf);
        for (k = 0; k < 2; ++k) {
            st[0].MPI_ERROR = 12345;
            index = -1;
            if (k == 0) {
                rc = MPI_Waitany(2, rq, &index, &st[0]);
            } else {
                flag = 0;
                for (i = 0; i < 100000000 && !flag; ++i) {
                    rc = MPI_Testany(2, rq, &index, &flag, &st[0]);
                    if (rc != MPI_SUCCESS)
                        break;
                }
            }
            CHECK(index == 0 || index == 1, "MPI_Waitany/Testany index, expected 0 or 1 got %d", index);
            if (index == 0) {
                seen_bad = 1;
                CHECK_INT("MPI_Waitany/Testany of the truncated receive: class", MPI_ERR_TRUNCATE, mt_class(rc));
            } else {
                CHECK_INT("MPI_Waitany/Testany of the good receive", MPI_SUCCESS, rc);
            }
            CHECK_INT("MPI_Waitany/Testany leave status.MPI_ERROR alone", 12345, st[0].MPI_ERROR);
        }
        CHECK_INT("MPI_Waitany/Testany saw the truncated receive", 1, seen_bad);
        check_good("MPI_Waitany", good);
        wait_sends(sends);
    }

    /* A user handler sees MPI_ERR_IN_STATUS once, and the call returns it. */
    E(MPI_Comm_create_errhandler(count_calls, &eh));
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    E(MPI_Errhandler_free(&eh));
    handler_calls = 0;
    post_pair(rq, sends, rbuf, good, sbuf);
    rc = MPI_Waitall(2, rq, st);
    CHECK_INT("user handler calls for one failing MPI_Waitall", 1, handler_calls);
    if (!MT_IS_OPENMPI) {
        CHECK_INT("user handler code for a failing MPI_Waitall (class)", MPI_ERR_IN_STATUS, mt_class(handler_code));
        CHECK_INT("MPI_Waitall returns the handler's code", handler_code, rc);
    }
    if (rq[1] != MPI_REQUEST_NULL)
        E(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    wait_sends(sends);

    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    return mt_finish();
}
