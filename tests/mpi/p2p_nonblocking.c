/* Non-blocking point-to-point and the completion calls: Wait, Test,
 * Waitany, Testany, Waitall, Testall, Waitsome, Testsome (with
 * MPI_REQUEST_NULL entries, all-null arrays giving MPI_UNDEFINED, and
 * MPI_STATUSES_IGNORE), Request_get_status, Request_free of an active send,
 * and the "empty status" returned for null requests.  Ranks work in pairs
 * (odd size: the last rank works with itself). */
#include "mpitest.h"

#define K 6       /* receives per test */
#define NSLOT 9   /* request array: K receives + 3 null entries */
#define BIG 200000

static int partner;
static int *sbufs[K], *rbufs[K];

static int count_of(int i) { return i == 2 ? BIG : 1 + i * 3; }

static void check_empty_status(const char *what, MPI_Status *st)
{
    int count = -1, flag = -1;
    char w[160];
    snprintf(w, sizeof w, "%s: empty status MPI_SOURCE", what);
    CHECK_INT(w, MPI_ANY_SOURCE, st->MPI_SOURCE);
    snprintf(w, sizeof w, "%s: empty status MPI_TAG", what);
    CHECK_INT(w, MPI_ANY_TAG, st->MPI_TAG);
    E(MPI_Get_count(st, MPI_INT, &count));
    snprintf(w, sizeof w, "%s: empty status Get_count", what);
    CHECK_INT(w, 0, count);
    E(MPI_Test_cancelled(st, &flag));
    snprintf(w, sizeof w, "%s: empty status Test_cancelled", what);
    CHECK_INT(w, 0, flag);
}

/* Post the receives into slots 0,2,3,5,6,8 (1,4,7 stay null). */
static const int slot_of[K] = {0, 2, 3, 5, 6, 8};

static void post_receives(MPI_Request *reqs, int base_tag)
{
    int i;
    for (i = 0; i < NSLOT; ++i)
        reqs[i] = MPI_REQUEST_NULL;
    for (i = 0; i < K; ++i) {
        memset(rbufs[i], 0xff, count_of(i) * sizeof(int));
        E(MPI_Irecv(rbufs[i], count_of(i), MPI_INT, partner, base_tag + i, MPI_COMM_WORLD,
                    &reqs[slot_of[i]]));
    }
}

/* Exchange "go" with the partner, then send it our K messages
 * (in reverse tag order, so that completion order is not posting order). */
static void go_and_send(MPI_Request *sreqs, int base_tag, int gotag)
{
    MPI_Request g;
    int i, j;
    E(MPI_Isend(NULL, 0, MPI_BYTE, partner, gotag, MPI_COMM_WORLD, &g));
    E(MPI_Recv(NULL, 0, MPI_BYTE, partner, gotag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    E(MPI_Wait(&g, MPI_STATUS_IGNORE));
    for (i = K - 1; i >= 0; --i) {
        for (j = 0; j < count_of(i); ++j)
            sbufs[i][j] = mt_rank * 10000000 + base_tag * 1000 + i * 100 + j;
        E(MPI_Isend(sbufs[i], count_of(i), MPI_INT, partner, base_tag + i, MPI_COMM_WORLD, &sreqs[i]));
    }
}

static int slot_to_msg(int slot)
{
    int i;
    for (i = 0; i < K; ++i)
        if (slot_of[i] == slot)
            return i;
    return -1;
}

static void check_msg(const char *what, int slot, MPI_Status *st, int base_tag)
{
    int i = slot_to_msg(slot), j, count = -1;
    char w[160];
    if (i < 0) {
        MT_FAIL("%s: completed index %d, expected the index of a non-null request", what, slot);
        return;
    }
    if (st) {
        snprintf(w, sizeof w, "%s: slot %d status.MPI_TAG", what, slot);
        CHECK_INT(w, base_tag + i, st->MPI_TAG);
        snprintf(w, sizeof w, "%s: slot %d status.MPI_SOURCE", what, slot);
        CHECK_INT(w, partner, st->MPI_SOURCE);
        E(MPI_Get_count(st, MPI_INT, &count));
        snprintf(w, sizeof w, "%s: slot %d Get_count", what, slot);
        CHECK_INT(w, count_of(i), count);
    }
    for (j = 0; j < count_of(i); ++j)
        if (rbufs[i][j] != partner * 10000000 + base_tag * 1000 + i * 100 + j) {
            MT_FAIL("%s: message %d int %d, expected %d got %d", what, i, j,
                    partner * 10000000 + base_tag * 1000 + i * 100 + j, rbufs[i][j]);
            break;
        }
}

static void check_all_null(const char *what, MPI_Request *reqs)
{
    int i;
    for (i = 0; i < NSLOT; ++i)
        if (reqs[i] != MPI_REQUEST_NULL) {
            MT_FAIL("%s: request %d after completion, expected MPI_REQUEST_NULL got %d", what, i,
                    MT_H(reqs[i]));
            return;
        }
}

static void finish_sends(MPI_Request *sreqs)
{
    E(MPI_Waitall(K, sreqs, MPI_STATUSES_IGNORE));
}

static void test_null_requests(void)
{
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st, sts[3];
    int index = -5, flag = -5, outcount = -5, indices[3];

    st.MPI_SOURCE = st.MPI_TAG = 12345;
    E(MPI_Wait(&r, &st));
    check_empty_status("MPI_Wait(MPI_REQUEST_NULL)", &st);
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    E(MPI_Test(&r, &flag, &st));
    CHECK_INT("MPI_Test(MPI_REQUEST_NULL) flag", 1, flag);
    check_empty_status("MPI_Test(MPI_REQUEST_NULL)", &st);
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    flag = -5;
    E(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK_INT("MPI_Request_get_status(MPI_REQUEST_NULL) flag", 1, flag);
    check_empty_status("MPI_Request_get_status(MPI_REQUEST_NULL)", &st);

    st.MPI_SOURCE = st.MPI_TAG = 12345;
    E(MPI_Waitany(3, reqs, &index, &st));
    CHECK_INT("MPI_Waitany on null requests: index", MPI_UNDEFINED, index);
    check_empty_status("MPI_Waitany on null requests", &st);
    index = flag = -5;
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    E(MPI_Testany(3, reqs, &index, &flag, &st));
    CHECK_INT("MPI_Testany on null requests: flag", 1, flag);
    CHECK_INT("MPI_Testany on null requests: index", MPI_UNDEFINED, index);
    check_empty_status("MPI_Testany on null requests", &st);
    E(MPI_Waitsome(3, reqs, &outcount, indices, sts));
    CHECK_INT("MPI_Waitsome on null requests: outcount", MPI_UNDEFINED, outcount);
    outcount = -5;
    E(MPI_Testsome(3, reqs, &outcount, indices, sts));
    CHECK_INT("MPI_Testsome on null requests: outcount", MPI_UNDEFINED, outcount);
    E(MPI_Waitall(3, reqs, sts));
    check_empty_status("MPI_Waitall on null requests, status 1", &sts[1]);
    flag = -5;
    E(MPI_Testall(3, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK_INT("MPI_Testall on null requests: flag", 1, flag);
    /* Zero-length arrays. */
    index = -5;
    E(MPI_Waitany(0, reqs, &index, MPI_STATUS_IGNORE));
    CHECK_INT("MPI_Waitany(count 0): index", MPI_UNDEFINED, index);
    E(MPI_Waitall(0, reqs, MPI_STATUSES_IGNORE));
    flag = -5;
    E(MPI_Testall(0, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK_INT("MPI_Testall(count 0): flag", 1, flag);
}

static void test_waitany(void)
{
    MPI_Request reqs[NSLOT], sreqs[K];
    MPI_Status st;
    int done = 0, seen[NSLOT] = {0}, index;

    post_receives(reqs, 100);
    go_and_send(sreqs, 100, 901);
    while (done < K) {
        index = -5;
        E(MPI_Waitany(NSLOT, reqs, &index, &st));
        if (index < 0 || index >= NSLOT || seen[index]) {
            MT_FAIL("MPI_Waitany index, expected a new active slot got %d", index);
            break;
        }
        seen[index] = 1;
        CHECK(reqs[index] == MPI_REQUEST_NULL, "MPI_Waitany: completed request %d, expected MPI_REQUEST_NULL got %d",
              index, MT_H(reqs[index]));
        check_msg("MPI_Waitany", index, &st, 100);
        ++done;
    }
    index = -5;
    E(MPI_Waitany(NSLOT, reqs, &index, MPI_STATUS_IGNORE));
    CHECK_INT("MPI_Waitany after all completed: index", MPI_UNDEFINED, index);
    finish_sends(sreqs);
}

static void test_testany(void)
{
    MPI_Request reqs[NSLOT], sreqs[K];
    MPI_Status st;
    int done = 0, seen[NSLOT] = {0}, index = -5, flag = -5;

    post_receives(reqs, 200);
    /* Nothing can have arrived: the partner sends only after our "go". */
    E(MPI_Testany(NSLOT, reqs, &index, &flag, &st));
    CHECK_INT("MPI_Testany before anything was sent: flag", 0, flag);
    CHECK_INT("MPI_Testany before anything was sent: index", MPI_UNDEFINED, index);
    go_and_send(sreqs, 200, 902);
    while (done < K) {
        index = flag = -5;
        E(MPI_Testany(NSLOT, reqs, &index, &flag, &st));
        if (!flag) {
            CHECK_INT("MPI_Testany flag=0: index", MPI_UNDEFINED, index);
            continue;
        }
        if (index < 0 || index >= NSLOT || seen[index]) {
            MT_FAIL("MPI_Testany index, expected a new active slot got %d", index);
            break;
        }
        seen[index] = 1;
        check_msg("MPI_Testany", index, &st, 200);
        ++done;
    }
    check_all_null("MPI_Testany", reqs);
    E(MPI_Testany(NSLOT, reqs, &index, &flag, &st));
    CHECK_INT("MPI_Testany after all completed: flag", 1, flag);
    CHECK_INT("MPI_Testany after all completed: index", MPI_UNDEFINED, index);
    finish_sends(sreqs);
}

static void test_waitall(int ignore)
{
    MPI_Request reqs[NSLOT], sreqs[K];
    MPI_Status sts[NSLOT];
    int i, base = ignore ? 300 : 350;

    post_receives(reqs, base);
    go_and_send(sreqs, base, ignore ? 903 : 904);
    for (i = 0; i < NSLOT; ++i)
        sts[i].MPI_SOURCE = sts[i].MPI_TAG = 12345;
    E(MPI_Waitall(NSLOT, reqs, ignore ? MPI_STATUSES_IGNORE : sts));
    check_all_null("MPI_Waitall", reqs);
    for (i = 0; i < K; ++i)
        check_msg("MPI_Waitall", slot_of[i], ignore ? NULL : &sts[slot_of[i]], base);
    if (!ignore)
        check_empty_status("MPI_Waitall, status of a null entry", &sts[4]);
    finish_sends(sreqs);
}

static void test_testall(void)
{
    MPI_Request reqs[NSLOT], sreqs[K];
    MPI_Status sts[NSLOT];
    int i, flag = -5, spins = 0;

    post_receives(reqs, 400);
    E(MPI_Testall(NSLOT, reqs, &flag, sts));
    CHECK_INT("MPI_Testall before anything was sent: flag", 0, flag);
    for (i = 0; i < K; ++i)
        CHECK(reqs[slot_of[i]] != MPI_REQUEST_NULL,
              "MPI_Testall returning false must leave request %d active, expected a request got MPI_REQUEST_NULL",
              slot_of[i]);
    go_and_send(sreqs, 400, 905);
    do {
        E(MPI_Testall(NSLOT, reqs, &flag, sts));
        ++spins;
    } while (!flag);
    check_all_null("MPI_Testall", reqs);
    for (i = 0; i < K; ++i)
        check_msg("MPI_Testall", slot_of[i], &sts[slot_of[i]], 400);
    finish_sends(sreqs);
}

static void test_some(int use_test)
{
    MPI_Request reqs[NSLOT], sreqs[K];
    MPI_Status sts[NSLOT];
    int indices[NSLOT], outcount = -5, done = 0, seen[NSLOT] = {0}, i;
    int base = use_test ? 500 : 600;
    const char *what = use_test ? "MPI_Testsome" : "MPI_Waitsome";

    post_receives(reqs, base);
    if (use_test) {
        E(MPI_Testsome(NSLOT, reqs, &outcount, indices, sts));
        CHECK_INT("MPI_Testsome before anything was sent: outcount", 0, outcount);
    }
    go_and_send(sreqs, base, use_test ? 906 : 907);
    while (done < K) {
        outcount = -5;
        if (use_test)
            E(MPI_Testsome(NSLOT, reqs, &outcount, indices, sts));
        else
            E(MPI_Waitsome(NSLOT, reqs, &outcount, indices, sts));
        if (outcount < (use_test ? 0 : 1) || outcount > K - done) {
            MT_FAIL("%s outcount, expected %d..%d got %d", what, use_test ? 0 : 1, K - done, outcount);
            break;
        }
        for (i = 0; i < outcount; ++i) {
            int idx = indices[i];
            if (idx < 0 || idx >= NSLOT || seen[idx]) {
                MT_FAIL("%s index, expected a new active slot got %d", what, idx);
                done = K;
                break;
            }
            seen[idx] = 1;
            check_msg(what, idx, &sts[i], base);
            ++done;
        }
    }
    outcount = -5;
    if (use_test)
        E(MPI_Testsome(NSLOT, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
    else
        E(MPI_Waitsome(NSLOT, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK_INT("outcount after all completed (MPI_UNDEFINED)", MPI_UNDEFINED, outcount);
    finish_sends(sreqs);
}

static void test_wait_test_single(void)
{
    MPI_Request reqs[NSLOT], sreqs[K];
    MPI_Status st;
    int i, flag;

    post_receives(reqs, 700);
    flag = -5;
    E(MPI_Test(&reqs[0], &flag, &st));
    CHECK_INT("MPI_Test before anything was sent: flag", 0, flag);
    CHECK(reqs[0] != MPI_REQUEST_NULL, "MPI_Test returning false freed the request, expected a request got MPI_REQUEST_NULL");
    /* Request_get_status: not complete yet, request stays. */
    flag = -5;
    E(MPI_Request_get_status(reqs[2], &flag, &st));
    CHECK_INT("MPI_Request_get_status before anything was sent: flag", 0, flag);
    go_and_send(sreqs, 700, 908);
    do {
        E(MPI_Request_get_status(reqs[2], &flag, &st));
    } while (!flag);
    CHECK(reqs[2] != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request, expected a request got MPI_REQUEST_NULL");
    check_msg("MPI_Request_get_status", 2, &st, 700);
    E(MPI_Request_get_status(reqs[2], &flag, &st));
    CHECK_INT("MPI_Request_get_status again after completion: flag", 1, flag);
    CHECK_INT("MPI_Request_get_status again: tag", 701, st.MPI_TAG);
    E(MPI_Wait(&reqs[2], &st));
    CHECK(reqs[2] == MPI_REQUEST_NULL, "MPI_Wait after Request_get_status, expected MPI_REQUEST_NULL got %d", MT_H(reqs[2]));
    check_msg("MPI_Wait after Request_get_status", 2, &st, 700);
    for (i = 0; i < NSLOT; ++i) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        if (i % 2) {
            do {
                E(MPI_Test(&reqs[i], &flag, &st));
            } while (!flag);
        } else {
            E(MPI_Wait(&reqs[i], &st));
        }
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d after completion, expected MPI_REQUEST_NULL got %d", i, MT_H(reqs[i]));
        check_msg(i % 2 ? "MPI_Test" : "MPI_Wait", i, &st, 700);
    }
    finish_sends(sreqs);
}

static void test_request_free(void)
{
    int n = 50000, i, *s = mt_malloc(n * sizeof(int)), *r = mt_malloc(n * sizeof(int));
    MPI_Request req;
    for (i = 0; i < n; ++i)
        s[i] = mt_rank + 3 * i;
    E(MPI_Isend(s, n, MPI_INT, partner, 800, MPI_COMM_WORLD, &req));
    E(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free, expected MPI_REQUEST_NULL got %d", MT_H(req));
    E(MPI_Recv(r, n, MPI_INT, partner, 800, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (i = 0; i < n; ++i)
        if (r[i] != partner + 3 * i) {
            MT_FAIL("message sent by a freed Isend: int %d, expected %d got %d", i, partner + 3 * i, r[i]);
            break;
        }
    /* Our send buffer may be reused only once the partner has it. */
    E(MPI_Sendrecv(NULL, 0, MPI_BYTE, partner, 801, NULL, 0, MPI_BYTE, partner, 801, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE));
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    int i;
    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;
    for (i = 0; i < K; ++i) {
        sbufs[i] = mt_malloc(count_of(i) * sizeof(int));
        rbufs[i] = mt_malloc(count_of(i) * sizeof(int));
    }
    test_null_requests();
    test_waitany();
    test_testany();
    test_waitall(0);
    test_waitall(1);
    test_testall();
    test_some(0);
    test_some(1);
    test_wait_test_single();
    test_request_free();
    for (i = 0; i < K; ++i) {
        free(sbufs[i]);
        free(rbufs[i]);
    }
    return mt_finish();
}
