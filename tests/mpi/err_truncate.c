/* Truncation with MPI_ERRORS_RETURN: a message longer than the receive
 * buffer gives MPI_ERR_TRUNCATE from MPI_Recv, from MPI_Wait after Irecv,
 * and MPI_ERR_IN_STATUS from MPI_Waitall with the failing status' MPI_ERROR
 * of class MPI_ERR_TRUNCATE and the other one MPI_SUCCESS; the envelope in
 * the status is still filled in; bytes past the receive buffer are not
 * written, those before it are; communication works afterwards.  Small and
 * large messages, a large one also into a buffer shorter than the part a
 * rendezvous request may carry (tcp.rts_prefix), and into none.
 * Pairs; odd size: self (non-blocking sends). */
#include "mpitest.h"

static int partner;

static void send_to_partner(const int *buf, int n, int tag, MPI_Request *req)
{
    E(MPI_Isend(buf, n, MPI_INT, partner, tag, MPI_COMM_WORLD, req));
}

int main(int argc, char **argv)
{
    static const int sizes[4] = {10, 200000, 200000, 200000};
    static const int smalls[4] = {5, 100000, 3, 0};
    int *sbuf, *rbuf, k, rc, i;
    MPI_Status st;
    MPI_Request sreq, rreq;

    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    sbuf = mt_malloc(200000 * sizeof(int));
    rbuf = mt_malloc(200004 * sizeof(int));
    for (i = 0; i < 200000; ++i)
        sbuf[i] = mt_rank + i;

    for (k = 0; k < 4; ++k) {
        int n = sizes[k], small = smalls[k];
        char what[160];
        /* Blocking receive. */
        send_to_partner(sbuf, n, 10 + k, &sreq);
        for (i = 0; i < n; ++i)
            rbuf[i] = -1;
        st.MPI_SOURCE = st.MPI_TAG = -77;
        rc = MPI_Recv(rbuf, small, MPI_INT, partner, 10 + k, MPI_COMM_WORLD, &st);
        snprintf(what, sizeof what, "MPI_Recv of %d ints into %d: error class", n, small);
        CHECK_INT(what, MPI_ERR_TRUNCATE, rc == MPI_SUCCESS ? MPI_SUCCESS : mt_class(rc));
        snprintf(what, sizeof what, "truncated MPI_Recv of %d ints: status.MPI_SOURCE", n);
        CHECK_INT(what, partner, st.MPI_SOURCE);
        snprintf(what, sizeof what, "truncated MPI_Recv of %d ints: status.MPI_TAG", n);
        CHECK_INT(what, 10 + k, st.MPI_TAG);
        snprintf(what, sizeof what, "truncated MPI_Recv of %d ints: int past the buffer", n);
        /* Open MPI 4.1.4 writes past the receive buffer when truncating a
         * large message (bug); we must not. */
        if (!MT_IS_OPENMPI)
            CHECK_INT(what, -1, rbuf[small]);
        for (i = 0; i < small; ++i)
            if (rbuf[i] != partner + i) {
                MT_FAIL("truncated MPI_Recv of %d ints into %d: int %d, expected %d got %d", n, small, i,
                        partner + i, rbuf[i]);
                break;
            }
        rc = MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        CHECK_INT("MPI_Wait of the truncated message's send", MPI_SUCCESS, rc);

        /* Irecv + Wait. */
        for (i = 0; i < n; ++i)
            rbuf[i] = -1;
        E(MPI_Irecv(rbuf, small, MPI_INT, partner, 20 + k, MPI_COMM_WORLD, &rreq));
        send_to_partner(sbuf, n, 20 + k, &sreq);
        rc = MPI_Wait(&rreq, &st);
        snprintf(what, sizeof what, "MPI_Wait of Irecv of %d ints into %d: error class", n, small);
        /* Open MPI 4.1.4 reports no error for a truncated Irecv from self (bug). */
        if (!(MT_IS_OPENMPI && partner == mt_rank))
            CHECK_INT(what, MPI_ERR_TRUNCATE, rc == MPI_SUCCESS ? MPI_SUCCESS : mt_class(rc));
        snprintf(what, sizeof what, "MPI_Wait of truncated Irecv (%d ints): status.MPI_TAG", n);
        CHECK_INT(what, 20 + k, st.MPI_TAG);
        CHECK(rreq == MPI_REQUEST_NULL, "request after a failed MPI_Wait, expected MPI_REQUEST_NULL got %d", MT_H(rreq));
        snprintf(what, sizeof what, "truncated Irecv of %d ints: int past the buffer", n);
        if (!MT_IS_OPENMPI)
            CHECK_INT(what, -1, rbuf[small]);
        E(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

        /* Waitall with one good and one truncated receive. */
        {
            MPI_Request reqs[2], sreqs[2];
            MPI_Status sts[2];
            int *good = mt_malloc(n * sizeof(int));
            E(MPI_Irecv(good, n, MPI_INT, partner, 30 + k, MPI_COMM_WORLD, &reqs[0]));
            E(MPI_Irecv(rbuf, small, MPI_INT, partner, 40 + k, MPI_COMM_WORLD, &reqs[1]));
            send_to_partner(sbuf, n, 30 + k, &sreqs[0]);
            send_to_partner(sbuf, n, 40 + k, &sreqs[1]);
            sts[0].MPI_ERROR = sts[1].MPI_ERROR = -12345;
            rc = MPI_Waitall(2, reqs, sts);
            if (MT_IS_OPENMPI && partner == mt_rank) /* same bug as above */
                rc = MPI_ERR_IN_STATUS, sts[1].MPI_ERROR = MPI_ERR_TRUNCATE;
            snprintf(what, sizeof what, "MPI_Waitall with a truncated receive (%d ints): error class", n);
            CHECK_INT(what, MPI_ERR_IN_STATUS, rc == MPI_SUCCESS ? MPI_SUCCESS : mt_class(rc));
            CHECK_INT("MPI_Waitall: MPI_ERROR of the good receive", MPI_SUCCESS, sts[0].MPI_ERROR);
            CHECK_INT("MPI_Waitall: MPI_ERROR class of the truncated receive", MPI_ERR_TRUNCATE,
                      sts[1].MPI_ERROR == MPI_SUCCESS ? MPI_SUCCESS : mt_class(sts[1].MPI_ERROR));
            CHECK_INT("MPI_Waitall: tag of the good receive", 30 + k, sts[0].MPI_TAG);
            CHECK_INT("MPI_Waitall: tag of the truncated receive", 40 + k, sts[1].MPI_TAG);
            for (i = 0; i < n; ++i)
                if (good[i] != partner + i) {
                    MT_FAIL("MPI_Waitall: good receive int %d, expected %d got %d", i, partner + i, good[i]);
                    break;
                }
            E(MPI_Waitall(2, sreqs, MPI_STATUSES_IGNORE));
            free(good);
        }
    }

    /* Still works. */
    {
        int v = 99 + mt_rank, w = -1;
        E(MPI_Sendrecv(&v, 1, MPI_INT, partner, 50, &w, 1, MPI_INT, partner, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_INT("exchange after truncation errors", 99 + partner, w);
    }
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
