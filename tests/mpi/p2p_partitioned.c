/* MPI-4.0 partitioned communication between rank pairs (0-1, 2-3, ...; an
 * odd last rank sends to itself): sender and receiver partition the same
 * buffer differently (8 send partitions of 12 doubles, 3 receive partitions
 * of 32), five rounds of MPI_Start on the same requests, partitions marked
 * ready in reverse order, by MPI_Pready_range and by MPI_Pready_list, and
 * from other threads while the main thread waits (MPI_THREAD_MULTIPLE);
 * a send request is not complete before its last partition is ready;
 * MPI_Parrived polled until every partition arrived, then the data checked;
 * errors: MPI_Pready on a receive request, a wildcard MPI_Precv_init. */
#include <pthread.h>

#include "mpitest.h"

#if defined(GRIDMPI_VERSION_STRING) || MPI_VERSION >= 4

#define SPARTS 8
#define SCOUNT 12
#define RPARTS 3
#define RCOUNT 32
#define TOTAL (SPARTS * SCOUNT)
#define ROUNDS 5

struct ready_arg {
    MPI_Request req;
    int first, last;
};

static void *ready_thread(void *p)
{
    struct ready_arg *a = p;
    int i;
    for (i = a->first; i <= a->last; ++i)
        E(MPI_Pready(i, a->req));
    return NULL;
}

static double value(int round, int i) { return round * 1000.0 + i + 0.5; }

static void sender(int peer, int threads)
{
    double buf[TOTAL];
    MPI_Request req = MPI_REQUEST_NULL;
    int round, i, flag = -1;

    E(MPI_Psend_init(buf, SPARTS, SCOUNT, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (round = 0; round < ROUNDS; ++round) {
        for (i = 0; i < TOTAL; ++i)
            buf[i] = value(round, i);
        E(MPI_Start(&req));
        if (round == 0) {
            /* Nothing can be complete before the partitions are ready. */
            E(MPI_Pready(SPARTS - 1, req));
            E(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            CHECK_INT("send complete with one partition of 8 ready", 0, flag);
            for (i = SPARTS - 2; i >= 0; --i)
                E(MPI_Pready(i, req));
        } else if (round == 1) {
            E(MPI_Pready_range(0, SPARTS / 2 - 1, req));
            E(MPI_Pready_range(SPARTS / 2, SPARTS - 1, req));
        } else if (round == 2) {
            int list[SPARTS];
            for (i = 0; i < SPARTS; ++i)
                list[i] = (i * 3) % SPARTS;  /* 3 is coprime with 8: every partition once */
            E(MPI_Pready_list(SPARTS, list, req));
        } else if (threads) {
            /* Two threads mark the halves while this one waits. */
            pthread_t t[2];
            struct ready_arg a[2] = {{req, 0, SPARTS / 2 - 1}, {req, SPARTS / 2, SPARTS - 1}};
            for (i = 0; i < 2; ++i)
                pthread_create(&t[i], NULL, ready_thread, &a[i]);
            E(MPI_Wait(&req, MPI_STATUS_IGNORE));
            for (i = 0; i < 2; ++i)
                pthread_join(t[i], NULL);
            continue;
        } else {
            for (i = 0; i < SPARTS; ++i)
                E(MPI_Pready(i, req));
        }
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    E(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle at %d", MT_H(req));
}

static void receiver(int peer)
{
    double buf[TOTAL];
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    int round, i, p, flag, arrived[RPARTS], left, bad, count = -1;

    E(MPI_Precv_init(buf, RPARTS, RCOUNT, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (round = 0; round < ROUNDS; ++round) {
        for (i = 0; i < TOTAL; ++i)
            buf[i] = -1.0;
        E(MPI_Start(&req));
        for (p = 0; p < RPARTS; ++p)
            arrived[p] = 0;
        for (left = RPARTS; left > 0;) {
            for (p = 0; p < RPARTS; ++p) {
                if (arrived[p])
                    continue;
                flag = 0;
                E(MPI_Parrived(req, p, &flag));
                if (flag) {
                    /* An arrived partition holds its data now. */
                    for (i = p * RCOUNT, bad = 0; i < (p + 1) * RCOUNT; ++i)
                        bad += buf[i] != value(round, i);
                    CHECK(bad == 0, "round %d: partition %d arrived with %d wrong values", round, p, bad);
                    arrived[p] = 1;
                    --left;
                }
            }
        }
        E(MPI_Wait(&req, &st));
        CHECK_INT("status.MPI_SOURCE", peer, st.MPI_SOURCE);
        CHECK_INT("status.MPI_TAG", 7, st.MPI_TAG);
        E(MPI_Get_count(&st, MPI_DOUBLE, &count));
        CHECK_INT("elements received", TOTAL, count);
    }
    E(MPI_Request_free(&req));
}

static void check_errors(int peer)
{
    double buf[TOTAL];
    MPI_Request req = MPI_REQUEST_NULL;
    int rc, cls = -1;

    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Precv_init(buf, RPARTS, RCOUNT, MPI_DOUBLE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    CHECK(rc != MPI_SUCCESS, "MPI_Precv_init with MPI_ANY_SOURCE succeeded");
    if (rc == MPI_SUCCESS)
        E(MPI_Request_free(&req));
    E(MPI_Precv_init(buf, RPARTS, RCOUNT, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    rc = MPI_Pready(0, req);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS, "MPI_Pready on a receive request succeeded");
    E(MPI_Request_free(&req));
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    int provided = -1, peer, threads;

    setvbuf(stdout, NULL, _IOLBF, 0);
    E(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    E(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    E(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    threads = provided == MPI_THREAD_MULTIPLE;
    peer = mt_rank ^ 1;
    if (peer >= mt_size)
        peer = mt_rank;
    if (peer == mt_rank) {
        /* Alone: both sides here, the receive polled first. */
        double out[TOTAL], in[TOTAL];
        MPI_Request s, r;
        int i, flag = 0;
        for (i = 0; i < TOTAL; ++i)
            out[i] = value(9, i), in[i] = 0;
        E(MPI_Precv_init(in, RPARTS, RCOUNT, MPI_DOUBLE, mt_rank, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
        E(MPI_Psend_init(out, SPARTS, SCOUNT, MPI_DOUBLE, mt_rank, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
        E(MPI_Start(&r));
        E(MPI_Start(&s));
        E(MPI_Parrived(r, 0, &flag));
        CHECK_INT("MPI_Parrived before any partition is ready", 0, flag);
        E(MPI_Pready_range(0, SPARTS - 1, s));
        E(MPI_Wait(&s, MPI_STATUS_IGNORE));
        E(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (i = 0; i < TOTAL; ++i)
            CHECK(in[i] == value(9, i), "self: element %d, expected %g got %g", i, value(9, i), in[i]);
        E(MPI_Request_free(&s));
        E(MPI_Request_free(&r));
    } else if (mt_rank % 2 == 0) {
        sender(peer, threads);
    } else {
        receiver(peer);
    }
    check_errors(peer);
    return mt_finish();
}

#else
int main(void)
{
    printf("MPI-%d.%d has no partitioned communication; nothing tested\n", MPI_VERSION, MPI_SUBVERSION);
    return 0;
}
#endif
