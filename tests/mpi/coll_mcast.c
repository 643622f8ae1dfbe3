/* The dynamic multicast (gridmpi's GMPI_Mcast / GMPI_Imcast /
 * GMPI_Mcast_recv / GMPI_Imcast_recv, core/coll/mcast.hpp): random subsets
 * from every root, several multicasts in flight from one root and from
 * several roots at once (each target must get a root's multicasts in the
 * order sent), a subset of one and of everybody, counts 0, 1, prime and
 * 1 MiB, derived datatypes on either side, truncation (the message is still
 * forwarded to the others), MPI_Cancel of a GMPI_Imcast_recv (withdrawn
 * while nothing came; a cancel after the multicast came changes nothing;
 * MPI_Cancel of a GMPI_Imcast is an error), and bad arguments (clear MPI
 * errors).  Every
 * rank draws the same pseudo-random subsets, so each knows whether it is a
 * target.  With an MPI without the extension the program only says so. */
#include "mpitest.h"

#include <string.h>

#ifndef GMPI_MCAST
int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_rank == 0)
        printf("coll_mcast: this MPI has no GMPI_MCAST extension; nothing to test\n");
    return mt_finish();
}
#else

static unsigned long long rng_state = 88172645463325252ULL;
static unsigned rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state >> 11);
}

static int value(int root, int seq, int i) { return root * 1000003 + seq * 7919 + i; }

/* A random subset of the ranks other than root (at least `min` of them):
 * marks in[] and lists them in targets[] in a random order; returns how many. */
static int draw(int root, int min, int *in, int *targets)
{
    int n = 0, r, i;
    for (r = 0; r < mt_size; ++r) {
        in[r] = r != root && (int)(rnd() % 2);
        n += in[r];
    }
    for (r = 0; r < mt_size && n < min; ++r)
        if (r != root && !in[r])
            in[r] = 1, ++n;
    n = 0;
    for (r = 0; r < mt_size; ++r)
        if (in[r])
            targets[n++] = r;
    for (i = n - 1; i > 0; --i) { /* any order: the library sorts */
        int j = (int)(rnd() % (unsigned)(i + 1)), t = targets[i];
        targets[i] = targets[j];
        targets[j] = t;
    }
    return n;
}

static void check(const char *what, const int *got, int root, int seq, int count)
{
    int i;
    for (i = 0; i < count; ++i) {
        if (got[i] != value(root, seq, i)) {
            MT_FAIL("%s: multicast %d of root %d, element %d of %d is %d, expected %d", what, seq, root, i, count,
                    got[i], value(root, seq, i));
            return;
        }
    }
}

static const int counts[] = {0, 1, 13, 4099, 262147};
#define NCOUNTS 5

/* Blocking multicasts from every root to random subsets; targets receive
 * from that root or from MPI_ANY_SOURCE. */
static void random_subsets(void)
{
    int *in = (int *)mt_malloc((size_t)mt_size * sizeof(int));
    int *targets = (int *)mt_malloc((size_t)mt_size * sizeof(int));
    int *buf = (int *)mt_malloc((262147 + 8) * sizeof(int));
    int round, i;
    for (round = 0; round < 3 * mt_size + 4; ++round) {
        int root = round % mt_size, count = counts[round % NCOUNTS], n = draw(root, 0, in, targets);
        if (mt_rank == root) {
            for (i = 0; i < count; ++i)
                buf[i] = value(root, round, i);
            E(GMPI_Mcast(buf, count, MPI_INT, targets, n, MPI_COMM_WORLD));
        } else if (in[mt_rank]) {
            MPI_Status st;
            int got = -1;
            for (i = 0; i < count + 8; ++i)
                buf[i] = -1;
            E(GMPI_Mcast_recv(buf, count + 8, MPI_INT, round % 2 ? root : MPI_ANY_SOURCE, MPI_COMM_WORLD, &st));
            check("random subsets", buf, root, round, count);
            E(MPI_Get_count(&st, MPI_INT, &got));
            CHECK(st.MPI_SOURCE == root && got == count, "status: source %d count %d, expected %d and %d",
                  st.MPI_SOURCE, got, root, count);
            CHECK(buf[count] == -1, "element past the message written (%d)", buf[count]);
        }
        /* Non-targets do nothing at all.  A receive from MPI_ANY_SOURCE
         * (even rounds) may take any root's next multicast: nobody starts
         * the next round before this one is over. */
        if (round % 2 == 0)
            E(MPI_Barrier(MPI_COMM_WORLD));
    }
    E(MPI_Barrier(MPI_COMM_WORLD));
    free(in);
    free(targets);
    free(buf);
}

/* Every rank multicasts `per_root` messages at once to subsets, all in
 * flight together with the receives of the others' multicasts; a target
 * must get each root's in the order sent. */
static void in_flight(int per_root, int count)
{
    int nmsg = mt_size * per_root, m, r, i, nreq = 0;
    int *in = (int *)mt_malloc((size_t)nmsg * (size_t)mt_size * sizeof(int));
    int *targets = (int *)mt_malloc((size_t)nmsg * (size_t)mt_size * sizeof(int));
    int *ntargets = (int *)mt_malloc((size_t)nmsg * sizeof(int));
    /* Multicast m carries count + 13 * (m / size) ints: a message matched by
     * another multicast's receive shows as a wrong size or wrong values. */
    int stride = count + 13 * per_root;
    int *data = (int *)mt_malloc((size_t)nmsg * (size_t)stride * sizeof(int));
    MPI_Request *req = (MPI_Request *)mt_malloc((size_t)(2 * nmsg) * sizeof(MPI_Request));
    MPI_Status *st = (MPI_Status *)mt_malloc((size_t)(2 * nmsg) * sizeof(MPI_Status));
    int *expect_seq = (int *)mt_malloc((size_t)(2 * nmsg) * sizeof(int));
    /* Multicast m comes from root m % size, its (m / size)-th. */
    for (m = 0; m < nmsg; ++m)
        ntargets[m] = draw(m % mt_size, m % 3 == 0 ? mt_size - 1 : 1, in + (size_t)m * mt_size,
                           targets + (size_t)m * mt_size);
    /* Receives first (in each root's order), then the sends. */
    for (m = 0; m < nmsg; ++m) {
        r = m % mt_size;
        if (r == mt_rank || !in[(size_t)m * mt_size + mt_rank])
            continue;
        for (i = 0; i < stride; ++i)
            data[(size_t)m * stride + i] = -1;
        expect_seq[nreq] = m;
        E(GMPI_Imcast_recv(data + (size_t)m * stride, stride, MPI_INT, r, MPI_COMM_WORLD, &req[nreq++]));
    }
    for (m = 0; m < nmsg; ++m) {
        if (m % mt_size != mt_rank)
            continue;
        for (i = 0; i < count + 13 * (m / mt_size); ++i)
            data[(size_t)m * stride + i] = value(mt_rank, m, i);
        expect_seq[nreq] = -1;
        E(GMPI_Imcast(data + (size_t)m * stride, count + 13 * (m / mt_size), MPI_INT, targets + (size_t)m * mt_size,
                      ntargets[m], MPI_COMM_WORLD, &req[nreq++]));
    }
    E(MPI_Waitall(nreq, req, st));
    for (i = 0; i < nreq; ++i) {
        int got = -1;
        m = expect_seq[i];
        if (m < 0)
            continue;
        check("in flight", data + (size_t)m * stride, m % mt_size, m, count + 13 * (m / mt_size));
        E(MPI_Get_count(&st[i], MPI_INT, &got));
        CHECK(st[i].MPI_SOURCE == m % mt_size && got == count + 13 * (m / mt_size),
              "in flight: multicast %d: status source %d count %d", m, st[i].MPI_SOURCE, got);
    }
    E(MPI_Barrier(MPI_COMM_WORLD));
    free(in);
    free(targets);
    free(ntargets);
    free(data);
    free(req);
    free(st);
    free(expect_seq);
}

/* A subset of one and of everybody, with derived datatypes: the root sends
 * 2-int elements with a 3-int extent, the targets receive plain ints (and
 * the other way round). */
static void one_and_all(void)
{
    MPI_Datatype pair, pairs;
    int *targets = (int *)mt_malloc((size_t)mt_size * sizeof(int));
    int count = 1000, n = 0, r, i, root = mt_size - 1;
    int *buf = (int *)mt_malloc((size_t)(3 * count + 3) * sizeof(int));
    E(MPI_Type_contiguous(2, MPI_INT, &pair));
    E(MPI_Type_create_resized(pair, 0, 3 * (MPI_Aint)sizeof(int), &pairs));
    E(MPI_Type_commit(&pairs));
    for (r = 0; r < mt_size; ++r)
        if (r != root)
            targets[n++] = r;
    /* everybody; strided at the root */
    if (mt_rank == root) {
        for (i = 0; i < count; ++i)
            buf[3 * i] = value(root, 500, 2 * i), buf[3 * i + 1] = value(root, 500, 2 * i + 1), buf[3 * i + 2] = -7;
        E(GMPI_Mcast(buf, count, pairs, targets, n, MPI_COMM_WORLD));
    } else {
        for (i = 0; i < 2 * count; ++i)
            buf[i] = -1;
        E(GMPI_Mcast_recv(buf, 2 * count, MPI_INT, root, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check("everybody, strided at the root", buf, root, 500, 2 * count);
    }
    /* one target (rank 0, or nobody in a job of one); strided at the target */
    if (mt_rank == root) {
        for (i = 0; i < 2 * count; ++i)
            buf[i] = value(root, 501, i);
        E(GMPI_Mcast(buf, 2 * count, MPI_INT, targets, mt_size > 1 ? 1 : 0, MPI_COMM_WORLD));
    } else if (mt_rank == 0) {
        for (i = 0; i < 3 * count; ++i)
            buf[i] = -9;
        E(GMPI_Mcast_recv(buf, count, pairs, root, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (i = 0; i < count; ++i) {
            if (buf[3 * i] != value(root, 501, 2 * i) || buf[3 * i + 1] != value(root, 501, 2 * i + 1) ||
                buf[3 * i + 2] != -9) {
                MT_FAIL("one target, strided: element %d is (%d %d %d)", i, buf[3 * i], buf[3 * i + 1],
                        buf[3 * i + 2]);
                break;
            }
        }
    }
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Type_free(&pairs));
    E(MPI_Type_free(&pair));
    free(targets);
    free(buf);
}

/* A target whose buffer is too short gets MPI_ERR_TRUNCATE; the message
 * still reaches the others through it. */
static void truncation(MPI_Comm comm)
{
    int *targets = (int *)mt_malloc((size_t)mt_size * sizeof(int));
    int count = 50000, n = 0, r, i, short_rank = 1;
    int *buf = (int *)mt_malloc((size_t)count * sizeof(int));
    if (mt_size < 3)
        goto done;
    for (r = 1; r < mt_size; ++r)
        targets[n++] = r;
    if (mt_rank == 0) {
        for (i = 0; i < count; ++i)
            buf[i] = value(0, 600, i);
        E(GMPI_Mcast(buf, count, MPI_INT, targets, n, comm));
    } else {
        MPI_Status st;
        int rc = GMPI_Mcast_recv(buf, mt_rank == short_rank ? 10 : count, MPI_INT, 0, comm, &st);
        if (mt_rank == short_rank) {
            int cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE, "a short buffer gave error class %d, expected MPI_ERR_TRUNCATE", cls);
            check("truncated (its first 10)", buf, 0, 600, 10);
        } else {
            CHECK(rc == MPI_SUCCESS, "a full buffer gave %d", rc);
            check("past a truncated target", buf, 0, 600, count);
        }
    }
done:
    E(MPI_Barrier(comm));
    free(targets);
    free(buf);
}

static void expect_class(int rc, int cls_expected, const char *what)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == cls_expected, "%s: error class %d, expected %d", what, cls, cls_expected);
}

/* A worker's receive posted for work that never comes is withdrawn at the
 * end (MPI_Cancel, then MPI_Wait: cancelled); one whose multicast came
 * completes normally even if cancelled afterwards; the root's request
 * cannot be cancelled. */
static void cancelling(MPI_Comm comm)
{
    int buf[8], i, flag = -1, target = 1;
    MPI_Request req;
    MPI_Status st;
    if (mt_size < 2)
        return;
    /* Withdrawn: rank 0 never multicasts to anybody here. */
    if (mt_rank != 0) {
        E(GMPI_Imcast_recv(buf, 8, MPI_INT, 0, comm, &req));
        E(MPI_Cancel(&req));
        E(MPI_Wait(&req, &st));
        E(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 1, "a GMPI_Imcast_recv with nothing to receive was not cancelled");
        CHECK(req == MPI_REQUEST_NULL, "the cancelled request was not freed by MPI_Wait");
        /* Again from any root, completed by MPI_Test. */
        E(GMPI_Imcast_recv(buf, 8, MPI_INT, MPI_ANY_SOURCE, comm, &req));
        E(MPI_Cancel(&req));
        flag = 0;
        for (i = 0; i < 1000000 && !flag; ++i)
            E(MPI_Test(&req, &flag, &st));
        CHECK(flag, "a cancelled GMPI_Imcast_recv did not complete");
        E(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 1, "a GMPI_Imcast_recv from MPI_ANY_SOURCE was not cancelled");
    }
    E(MPI_Barrier(comm));
    /* Not withdrawn: the multicast came first.  And the root cannot cancel. */
    if (mt_rank == 0) {
        for (i = 0; i < 8; ++i)
            buf[i] = value(0, 700, i);
        E(GMPI_Imcast(buf, 8, MPI_INT, &target, 1, comm, &req));
        expect_class(MPI_Cancel(&req), MPI_ERR_REQUEST, "MPI_Cancel of a GMPI_Imcast");
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else if (mt_rank == target) {
        E(GMPI_Imcast_recv(buf, 8, MPI_INT, 0, comm, &req));
        flag = 0;
        while (!flag) { /* until the multicast has arrived */
            E(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
        }
        E(MPI_Cancel(&req));
        E(MPI_Wait(&req, &st));
        E(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0, "a GMPI_Imcast_recv that had its multicast reads as cancelled");
        CHECK(st.MPI_SOURCE == 0, "source %d after a late cancel, expected 0", st.MPI_SOURCE);
        check("after a late cancel", buf, 0, 700, 8);
    }
    E(MPI_Barrier(comm));
}

static void bad_arguments(MPI_Comm comm)
{
    int buf[4] = {0}, list[3];
    MPI_Request req;
    if (mt_size < 2)
        return;
    list[0] = mt_size; /* out of range */
    expect_class(GMPI_Mcast(buf, 4, MPI_INT, list, 1, comm), MPI_ERR_RANK, "a target out of range");
    list[0] = -1;
    expect_class(GMPI_Imcast(buf, 4, MPI_INT, list, 1, comm, &req), MPI_ERR_RANK, "a negative target");
    list[0] = list[1] = (mt_rank + 1) % mt_size;
    expect_class(GMPI_Mcast(buf, 4, MPI_INT, list, 2, comm), MPI_ERR_RANK, "a target listed twice");
    list[0] = mt_rank;
    expect_class(GMPI_Mcast(buf, 4, MPI_INT, list, 1, comm), MPI_ERR_RANK, "the root in its own list");
    list[0] = (mt_rank + 1) % mt_size;
    expect_class(GMPI_Mcast(buf, -1, MPI_INT, list, 1, comm), MPI_ERR_COUNT, "a negative count");
    expect_class(GMPI_Mcast(buf, 4, MPI_DATATYPE_NULL, list, 1, comm), MPI_ERR_TYPE, "MPI_DATATYPE_NULL");
    expect_class(GMPI_Mcast(buf, 4, MPI_INT, list, -1, comm), MPI_ERR_ARG, "a negative ntargets");
    expect_class(GMPI_Mcast_recv(buf, 4, MPI_INT, mt_size, comm, MPI_STATUS_IGNORE), MPI_ERR_ROOT,
                 "a root out of range");
    expect_class(GMPI_Mcast_recv(buf, 4, MPI_INT, mt_rank, comm, MPI_STATUS_IGNORE), MPI_ERR_ROOT,
                 "this process as the root");
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)); /* MPI_COMM_NULL's errors go there */
    expect_class(GMPI_Mcast(buf, 4, MPI_INT, list, 1, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_COMM_NULL");
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* Nothing was sent: a barrier completes and no message is left over. */
    E(MPI_Barrier(comm));
}

int main(int argc, char **argv)
{
    MPI_Comm returning;
    mt_init(&argc, &argv);
    random_subsets();
    in_flight(8, 7);
    in_flight(3, 70001);
    one_and_all();
    E(MPI_Comm_dup(MPI_COMM_WORLD, &returning));
    E(MPI_Comm_set_errhandler(returning, MPI_ERRORS_RETURN));
    truncation(returning);
    cancelling(returning);
    bad_arguments(returning);
    E(MPI_Comm_free(&returning));
    return mt_finish();
}
#endif
