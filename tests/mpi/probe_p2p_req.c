#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "probe.h"

/* probe_p2p_req: persistent requests, Wait/Test family over null and
 * inactive requests, Request_free, Cancel, Request_get_status, 1000
 * outstanding Isends, Probe + Recv, buffered and ready modes, PROC_NULL. */

static void test_persistent(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int sbuf[64], rbuf[64];
    MPI_Request rq[2];
    MPIOK(MPI_Send_init(sbuf, 64, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[0]));
    MPIOK(MPI_Recv_init(rbuf, 64, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[1]));
    /* inactive persistent: Test returns flag=true with empty status */
    int flag = 0;
    MPI_Status st;
    st.MPI_SOURCE = 123; st.MPI_TAG = 456;
    MPIOK(MPI_Test(&rq[1], &flag, &st));
    CHECK(flag, "Test on inactive persistent request: flag false");
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "inactive: empty status expected, src %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(rq[1] != MPI_REQUEST_NULL, "inactive persistent request freed by Test");
    for (int it = 0; it < 300; it++) {
        for (int i = 0; i < 64; i++) sbuf[i] = rank * 100000 + it * 100 + i;
        memset(rbuf, 0xff, sizeof rbuf);
        if (it % 3 == 0) {
            MPIOK(MPI_Startall(2, rq));
        } else {
            MPIOK(MPI_Start(&rq[1]));
            MPIOK(MPI_Start(&rq[0]));
        }
        MPI_Status sts[2];
        if (it % 2) {
            MPIOK(MPI_Waitall(2, rq, sts));
        } else {
            int done = 0;
            while (!done) MPIOK(MPI_Testall(2, rq, &done, sts));
        }
        CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL, "persistent request freed by completion");
        int bad = 0;
        for (int i = 0; i < 64; i++) if (rbuf[i] != left * 100000 + it * 100 + i) bad = 1;
        CHECK(!bad, "iteration %d: persistent data wrong (rbuf[0]=%d)", it, rbuf[0]);
        CHECK(sts[1].MPI_SOURCE == left && sts[1].MPI_TAG == 1, "iteration %d: status src %d tag %d", it, sts[1].MPI_SOURCE, sts[1].MPI_TAG);
        if (bad) break;
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL");
    /* persistent Ssend, large */
    size_t n = 300000;
    char *sb = malloc(n), *rb = malloc(n);
    MPI_Request p[2];
    MPI_Ssend_init(sb, (int)n, MPI_CHAR, right, 2, MPI_COMM_WORLD, &p[0]);
    MPI_Recv_init(rb, (int)n, MPI_CHAR, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &p[1]);
    for (int it = 0; it < 5; it++) {
        memset(sb, 'a' + it + rank, n);
        MPI_Start(&p[1]);
        MPI_Start(&p[0]);
        MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
        CHECK(rb[0] == 'a' + it + left && rb[n - 1] == 'a' + it + left, "persistent ssend it %d wrong", it);
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    free(sb); free(rb);
}

static void test_waitsome(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request rq[6];
    int a = -1, b = -1, inact = 0;
    rq[0] = MPI_REQUEST_NULL;
    MPI_Recv_init(&inact, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &rq[1]); /* inactive */
    MPI_Irecv(&a, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[2]);
    rq[3] = MPI_REQUEST_NULL;
    MPI_Irecv(&b, 1, MPI_INT, left, 4, MPI_COMM_WORLD, &rq[4]);
    rq[5] = MPI_REQUEST_NULL;
    int v3 = rank * 10 + 3, v4 = rank * 10 + 4;
    MPI_Send(&v3, 1, MPI_INT, right, 3, MPI_COMM_WORLD);
    MPI_Send(&v4, 1, MPI_INT, right, 4, MPI_COMM_WORLD);
    int got = 0, seen[6] = {0};
    while (got < 2) {
        int outc = -5, idx[6];
        MPI_Status st[6];
        MPIOK(MPI_Waitsome(6, rq, &outc, idx, st));
        CHECK(outc >= 1 && outc <= 2, "Waitsome outcount %d", outc);
        if (outc < 1 || outc > 2) break;
        for (int i = 0; i < outc; i++) {
            CHECK(idx[i] == 2 || idx[i] == 4, "Waitsome index %d", idx[i]);
            if (idx[i] != 2 && idx[i] != 4) continue;
            CHECK(!seen[idx[i]], "index %d returned twice", idx[i]);
            seen[idx[i]] = 1;
            CHECK(st[i].MPI_TAG == (idx[i] == 2 ? 3 : 4), "Waitsome status tag %d for index %d", st[i].MPI_TAG, idx[i]);
            CHECK(rq[idx[i]] == MPI_REQUEST_NULL, "completed request not nulled");
            got++;
        }
    }
    CHECK(a == left * 10 + 3 && b == left * 10 + 4, "Waitsome data %d %d", a, b);
    int outc = -5, idx[6];
    MPIOK(MPI_Waitsome(6, rq, &outc, idx, MPI_STATUSES_IGNORE));
    CHECK(outc == MPI_UNDEFINED, "Waitsome on null/inactive: outcount %d, expected MPI_UNDEFINED", outc);
    outc = -5;
    MPIOK(MPI_Testsome(6, rq, &outc, idx, MPI_STATUSES_IGNORE));
    CHECK(outc == MPI_UNDEFINED, "Testsome on null/inactive: outcount %d, expected MPI_UNDEFINED", outc);
    int index = -5, flag = 0;
    MPI_Status st;
    MPIOK(MPI_Waitany(6, rq, &index, &st));
    CHECK(index == MPI_UNDEFINED, "Waitany on null/inactive: index %d", index);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "Waitany empty status src %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    index = -5;
    MPIOK(MPI_Testany(6, rq, &index, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && index == MPI_UNDEFINED, "Testany on null/inactive: flag %d index %d", flag, index);
    flag = 0;
    MPIOK(MPI_Testall(6, rq, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag, "Testall on null/inactive: flag 0");
    MPIOK(MPI_Waitall(6, rq, MPI_STATUSES_IGNORE));
    MPIOK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
    MPIOK(MPI_Waitsome(0, NULL, &outc, NULL, MPI_STATUSES_IGNORE));
    CHECK(outc == MPI_UNDEFINED, "Waitsome(0) outcount %d", outc);
    CHECK(rq[1] != MPI_REQUEST_NULL, "inactive persistent request freed");
    MPI_Request_free(&rq[1]);
    MPI_Request r = MPI_REQUEST_NULL;
    flag = 0;
    MPIOK(MPI_Test(&r, &flag, &st));
    CHECK(flag, "Test(REQUEST_NULL) flag 0");
    MPIOK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "Wait(NULL) status src %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    int c = -1;
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK(c == 0, "Wait(NULL) empty status count %d", c);
}

static void test_free_cancel_status(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request r;
    int x = -7, y, z, w = 0, canc = 0, flag = 0;
    MPI_Status st;
    /* Request_free on an active send (small and large), not to self */
    if (size > 1) {
    size_t n = 500000;
    char *big = malloc(n), *rbig = malloc(n);
    (void)0;
    memset(big, 'x' + (rank % 2), n);
    int v = 4242 + rank;
    MPIOK(MPI_Isend(&v, 1, MPI_INT, right, 50, MPI_COMM_WORLD, &r));
    MPIOK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free active send: not NULL");
    MPIOK(MPI_Isend(big, (int)n, MPI_CHAR, right, 51, MPI_COMM_WORLD, &r));
    MPIOK(MPI_Request_free(&r));
    MPI_Recv(&w, 1, MPI_INT, left, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(w == 4242 + left, "freed send delivered %d", w);
    MPI_Recv(rbig, (int)n, MPI_CHAR, left, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(rbig[0] == 'x' + (left % 2) && rbig[n - 1] == 'x' + (left % 2), "freed large send data");
    /* acknowledge, so the big buffer can be released safely */
    int ack = 1;
    MPI_Sendrecv(&ack, 1, MPI_INT, left, 52, &w, 1, MPI_INT, right, 52, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    free(big); free(rbig);
    }

    /* Cancel of a receive that never matches */
    MPIOK(MPI_Irecv(&x, 1, MPI_INT, left, 60, MPI_COMM_WORLD, &r));
    MPIOK(MPI_Cancel(&r));
    MPIOK(MPI_Wait(&r, &st));
    MPIOK(MPI_Test_cancelled(&st, &canc));
    CHECK(canc, "cancelled receive: Test_cancelled false");
    CHECK(r == MPI_REQUEST_NULL, "cancelled request not freed by Wait");
    /* every rank has cancelled before anyone sends tag 60 */
    int tok = 0;
    int tok2 = -1;
    MPI_Sendrecv(&tok, 1, MPI_INT, left, 58, &tok2, 1, MPI_INT, right, 58, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* the next message with tag 60 must go to a new receive, not the cancelled one */
    y = 600 + rank;
    MPI_Request sr;
    MPI_Isend(&y, 1, MPI_INT, right, 60, MPI_COMM_WORLD, &sr);
    z = -1;
    MPI_Recv(&z, 1, MPI_INT, left, 60, MPI_COMM_WORLD, &st);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    CHECK(z == 600 + left, "after cancel got %d", z);
    CHECK(x == -7, "cancelled receive buffer written (%d)", x);
    MPI_Test_cancelled(&st, &canc);
    CHECK(!canc, "normal receive reports cancelled");
    /* cancel an ANY_SOURCE receive, with Test loop */
    MPIOK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 61, MPI_COMM_WORLD, &r));
    MPIOK(MPI_Cancel(&r));
    flag = 0;
    while (!flag) MPI_Test(&r, &flag, &st);
    MPI_Test_cancelled(&st, &canc);
    CHECK(canc, "cancelled ANY_SOURCE receive: Test_cancelled false");
    /* cancel of a completed receive: no effect */
    MPI_Irecv(&x, 1, MPI_INT, left, 62, MPI_COMM_WORLD, &r);
    MPI_Send(&y, 1, MPI_INT, right, 62, MPI_COMM_WORLD);
    /* wait until it completes via Request_get_status (must not free it) */
    flag = 0;
    while (!flag) MPIOK(MPI_Request_get_status(r, &flag, &st));
    CHECK(r != MPI_REQUEST_NULL, "Request_get_status freed the request");
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 62, "get_status status src %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &canc);
    CHECK(!canc && x == 600 + left, "cancel after completion: cancelled=%d x=%d", canc, x);
    /* Request_get_status on NULL */
    flag = 0;
    MPIOK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK(flag, "Request_get_status(NULL) flag 0");
}

static void test_many_isends(int rank, int size)
{
    enum { N = 1000 };
    if (size < 2) return;
    if (rank != 0) {
        int *vals = malloc(N * sizeof(int));
        MPI_Request *rq = malloc(N * sizeof(MPI_Request));
        for (int i = 0; i < N; i++) {
            vals[i] = rank * N + i;
            MPIOK(MPI_Isend(&vals[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, &rq[i]));
        }
        MPIOK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
        free(vals); free(rq);
    } else {
        /* receive from rank 1 in reverse tag order, from others with ANY_TAG */
        int *got = malloc(N * sizeof(int));
        MPI_Request *rq = malloc(N * sizeof(MPI_Request));
        for (int i = N - 1; i >= 0; i--)
            MPIOK(MPI_Irecv(&got[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD, &rq[N - 1 - i]));
        MPIOK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
        int bad = 0;
        for (int i = 0; i < N; i++) if (got[i] != N + i) bad++;
        CHECK(!bad, "1000 isends from rank 1: %d wrong", bad);
        for (int src = 2; src < size; src++) {
            for (int i = 0; i < N; i++) {
                int v = -1;
                MPI_Status st;
                MPI_Recv(&v, 1, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                if (v != src * N + i || st.MPI_TAG != i) { bad++; }
            }
        }
        CHECK(!bad, "1000 isends from others: %d wrong", bad);
        free(got); free(rq);
    }
}

static void test_probe(int rank, int size)
{
    /* everyone sends 5 messages of varying size to rank 0; rank 0 probes with wildcards */
    if (rank != 0) {
        for (int i = 0; i < 5; i++) {
            int n = 1 + (rank * 7919 + i * 104729) % 70000;
            int *b = malloc((size_t)n * sizeof(int));
            for (int j = 0; j < n; j++) b[j] = rank + i + j;
            MPI_Send(b, n, MPI_INT, 0, 100 + i, MPI_COMM_WORLD);
            free(b);
        }
    } else {
        int total = (size - 1) * 5;
        for (int k = 0; k < total; k++) {
            MPI_Status st, st2;
            int flag = 0;
            if (k % 2) {
                MPIOK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            } else {
                while (!flag) MPIOK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
            }
            int n = -1;
            MPI_Get_count(&st, MPI_INT, &n);
            int src = st.MPI_SOURCE, i = st.MPI_TAG - 100;
            CHECK(src > 0 && src < size && i >= 0 && i < 5, "probe src %d tag %d", src, st.MPI_TAG);
            if (!(src > 0 && src < size && i >= 0 && i < 5)) break;
            int expn = 1 + (src * 7919 + i * 104729) % 70000;
            CHECK(n == expn, "probe count %d expected %d", n, expn);
            /* probe again specific: same message */
            MPI_Probe(src, st.MPI_TAG, MPI_COMM_WORLD, &st2);
            int n2;
            MPI_Get_count(&st2, MPI_INT, &n2);
            CHECK(n2 == n, "second probe count %d vs %d", n2, n);
            int *b = malloc((size_t)n * sizeof(int));
            MPI_Recv(b, n, MPI_INT, src, st.MPI_TAG, MPI_COMM_WORLD, &st2);
            int bad = 0;
            for (int j = 0; j < n; j++) if (b[j] != src + i + j) bad = 1;
            CHECK(!bad, "probed message from %d tag %d content wrong", src, st.MPI_TAG);
            free(b);
        }
        int flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "Iprobe found a message after all were received");
    }
}

static void test_bsend_rsend(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int psz = 0;
    MPI_Pack_size(20000, MPI_INT, MPI_COMM_WORLD, &psz);
    int bsz = 4 * (psz + MPI_BSEND_OVERHEAD) + 64;
    char *buf = malloc((size_t)bsz);
    MPIOK(MPI_Buffer_attach(buf, bsz));
    int *data = malloc(4 * 20000 * sizeof(int));
    for (int i = 0; i < 4 * 20000; i++) data[i] = rank + i;
    /* 3 Bsends and 1 Ibsend, none received yet */
    for (int m = 0; m < 3; m++) MPIOK(MPI_Bsend(data + m * 20000, 20000, MPI_INT, right, 70 + m, MPI_COMM_WORLD));
    MPI_Request r;
    MPIOK(MPI_Ibsend(data + 3 * 20000, 20000, MPI_INT, right, 73, MPI_COMM_WORLD, &r));
    MPIOK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    /* user buffer may be reused immediately */
    memset(data, 0, 4 * 20000 * sizeof(int));
    int *rb = malloc(20000 * sizeof(int));
    for (int m = 3; m >= 0; m--) {
        MPI_Recv(rb, 20000, MPI_INT, left, 70 + m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int bad = 0;
        for (int i = 0; i < 20000; i++) if (rb[i] != left + m * 20000 + i) bad = 1;
        CHECK(!bad, "bsend message %d wrong", m);
    }
    void *dbuf = NULL;
    int dsz = 0;
    MPIOK(MPI_Buffer_detach(&dbuf, &dsz));
    CHECK(dbuf == buf && dsz == bsz, "detach returned %p/%d expected %p/%d", dbuf, dsz, (void *)buf, bsz);
    /* attach/detach again, reuse: small buffer, repeated Bsend/recv */
    MPIOK(MPI_Buffer_attach(buf, bsz));
    for (int it = 0; it < 50; it++) {
        int v = it * 1000 + rank, w = -1;
        MPIOK(MPI_Bsend(&v, 1, MPI_INT, right, 80, MPI_COMM_WORLD));
        MPI_Recv(&w, 1, MPI_INT, left, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(w == it * 1000 + left, "bsend loop %d got %d", it, w);
    }
    MPIOK(MPI_Buffer_detach(&dbuf, &dsz));
    free(buf);
    /* Rsend: receive posted first, confirmed by a token */
    int token = 0, token2 = 0, x = -1, big_ok;
    MPI_Irecv(&x, 1, MPI_INT, left, 90, MPI_COMM_WORLD, &r);
    MPI_Sendrecv(&token, 1, MPI_INT, left, 91, &token2, 1, MPI_INT, right, 91, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int v = 900 + rank;
    MPIOK(MPI_Rsend(&v, 1, MPI_INT, right, 90, MPI_COMM_WORLD));
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(x == 900 + left, "rsend got %d", x);
    MPI_Irecv(rb, 20000, MPI_INT, left, 92, MPI_COMM_WORLD, &r);
    MPI_Sendrecv(&token, 1, MPI_INT, left, 93, &token2, 1, MPI_INT, right, 93, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 20000; i++) data[i] = i - rank;
    MPI_Request r2;
    MPIOK(MPI_Irsend(data, 20000, MPI_INT, right, 92, MPI_COMM_WORLD, &r2));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    big_ok = 1;
    for (int i = 0; i < 20000; i++) if (rb[i] != i - left) big_ok = 0;
    CHECK(big_ok, "large irsend data wrong");
    free(rb); free(data);
}

static void test_proc_null(int rank)
{
    int b[3] = {5, 6, 7};
    MPI_Status st;
    MPIOK(MPI_Send(b, 3, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPIOK(MPI_Ssend(b, 3, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPIOK(MPI_Rsend(b, 3, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPIOK(MPI_Recv(b, 3, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    CHECK(b[0] == 5, "PROC_NULL recv wrote the buffer");
    int c = -1;
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && c == 0, "PROC_NULL recv status src %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, c);
    MPI_Request r[2];
    MPIOK(MPI_Irecv(b, 3, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]));
    MPIOK(MPI_Isend(b, 3, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &r[1]));
    MPI_Status sts[2];
    MPIOK(MPI_Wait(&r[0], &sts[0]));
    MPIOK(MPI_Wait(&r[1], &sts[1]));
    MPIOK(MPI_Sendrecv(b, 3, MPI_INT, MPI_PROC_NULL, 3, b, 3, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Sendrecv PROC_NULL status src %d", st.MPI_SOURCE);
    MPIOK(MPI_Sendrecv_replace(b, 3, MPI_INT, MPI_PROC_NULL, 3, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    CHECK(b[0] == 5 && b[2] == 7, "Sendrecv_replace PROC_NULL changed buffer");
    int flag = 0;
    MPIOK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL, "Iprobe PROC_NULL flag %d src %d", flag, st.MPI_SOURCE);
    MPIOK(MPI_Probe(MPI_PROC_NULL, 4, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Probe PROC_NULL src %d", st.MPI_SOURCE);
    MPI_Request p;
    MPIOK(MPI_Recv_init(b, 3, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &p));
    MPIOK(MPI_Start(&p));
    MPIOK(MPI_Wait(&p, &st));
    MPI_Request_free(&p);
    (void)rank;
}

static void test_sendrecv_replace(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    size_t n = 1u << 20; /* 4 MiB of ints */
    int *b = malloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++) b[i] = (int)(rank * 7 + i);
    MPI_Status st;
    MPIOK(MPI_Sendrecv_replace(b, (int)n, MPI_INT, right, 5, left, 5, MPI_COMM_WORLD, &st));
    int bad = 0;
    for (size_t i = 0; i < n; i++) if (b[i] != (int)(left * 7 + i)) { bad = 1; break; }
    CHECK(!bad, "Sendrecv_replace 4MiB wrong");
    int c;
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK(c == (int)n && st.MPI_SOURCE == left, "Sendrecv_replace status count %d src %d", c, st.MPI_SOURCE);
    free(b);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p_rank = rank;
    test_persistent(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_waitsome(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_free_cancel_status(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_many_isends(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_probe(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_bsend_rsend(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_proc_null(rank);
    test_sendrecv_replace(rank, size);
    p_finish();
    return 0;
}
