/* p2p_predict: long messages whose sizes and tags repeat, as iterative codes
 * send them, so that a receive-message predictor (gridmpi's request.predict,
 * run with it on by p2p.list) foresees them and lets them come eagerly on a
 * credit; then the cases where the prediction is wrong or the receive is
 * not what the message expects.  Every message's bytes are checked; the
 * results must be the same with prediction on and off.
 *
 * Ranks 0 and 1 talk (others, if any, only start and finish):
 *   1. ping-pong, 24 rounds of 256 KiB (the stream becomes predictable);
 *   2. the same tag, a larger message than predicted (goes the usual way);
 *   3. a predicted message arriving before its receive is posted (buffered);
 *   4. probe of a predicted message: its size and tag;
 *   5. a receive too small for a predicted message: MPI_ERR_TRUNCATE, and the
 *      stream goes on;
 *   6. a wildcard receive (MPI_ANY_SOURCE, MPI_ANY_TAG) of a predicted one;
 *   7. a synchronous send of a predicted message completes only once
 *      received.
 * Under gridmpi, rank 1 reads the pvar request.predict.credits_used over the
 * whole exchange and checks it against MT_EXPECT_CREDITS when set.
 */
#include "mpitest.h"

#define N (256 * 1024)
#define ROUNDS 24

/* Whether the library has the pvar (gridmpi does; other MPIs do not). */
static int has_credits_pvar(void)
{
    int provided, num = 0, found = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 0;
    MPI_T_pvar_get_num(&num);
    for (int i = 0; i < num; ++i) {
        char name[128], desc[256];
        int nl = sizeof name, dl = sizeof desc, verbosity, cls, bind, ro, cont, atomic;
        MPI_Datatype type;
        MPI_T_enum e;
        if (MPI_T_pvar_get_info(i, name, &nl, &verbosity, &cls, &type, &e, desc, &dl, &bind, &ro, &cont, &atomic) ==
                MPI_SUCCESS &&
            strcmp(name, "request.predict.credits_used") == 0)
            found = 1;
    }
    MPI_T_finalize();
    return found;
}

/* Rank 1's long reply to rank 0 (tag 6, N bytes of pattern `seed`): the
 * message the predictor expects in every section after the first. */
static void reply(unsigned char *buf, int seed)
{
    mt_fill(buf, N, seed);
    E(MPI_Send(buf, N, MPI_BYTE, 0, 6, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    unsigned char *buf = mt_malloc(4 * N), *big = mt_malloc(4 * N);
    MPI_Status st;
    int count;
    const int me = mt_rank;
    const int talk = mt_size >= 2 && me <= 1;

    /* pvar handles started before the traffic (gridmpi only). */
    int pvar = -1, provided;
    MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
    MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
    if (has_credits_pvar() && MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS) {
        E(MPI_T_pvar_get_index("request.predict.credits_used", MPI_T_PVAR_CLASS_COUNTER, &pvar));
        E(MPI_T_pvar_session_create(&session));
        E(MPI_T_pvar_handle_alloc(session, pvar, NULL, &handle, &count));
        E(MPI_T_pvar_start(session, handle));
    }

    if (talk) {
        /* 1. ping-pong */
        for (int round = 0; round < ROUNDS; ++round) {
            if (me == 0) {
                mt_fill(buf, N, round);
                E(MPI_Send(buf, N, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
                memset(buf, 0, N);
                E(MPI_Recv(buf, N, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &st));
                CHECK_PATTERN("ping-pong reply", buf, N, 100 + round);
            } else {
                memset(buf, 0, N);
                E(MPI_Recv(buf, N, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
                CHECK_PATTERN("ping-pong message", buf, N, round);
                mt_fill(buf, N, 100 + round);
                E(MPI_Send(buf, N, MPI_BYTE, 0, 6, MPI_COMM_WORLD));
            }
        }
        /* 2. larger than predicted, same tag (rank 1 -> 0) */
        if (me == 1) {
            mt_fill(big, 3 * N, 7);
            E(MPI_Send(big, 3 * N, MPI_BYTE, 0, 6, MPI_COMM_WORLD));
        } else {
            E(MPI_Recv(big, 4 * N, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &st));
            E(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECK_INT("larger message's count", 3 * N, count);
            CHECK_PATTERN("larger message", big, 3 * N, 7);
        }
        /* Re-establish the pattern: a few more rounds of N. */
        for (int round = 0; round < 4; ++round) {
            if (me == 0) {
                E(MPI_Send(buf, N, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
                E(MPI_Recv(buf, N, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &st));
            } else {
                E(MPI_Recv(buf, N, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
                E(MPI_Send(buf, N, MPI_BYTE, 0, 6, MPI_COMM_WORLD));
            }
        }
        /* 3. arrives before its receive is posted */
        if (me == 1) {
            reply(buf, 33);
        } else {
            /* Progress without the receive posted (a probe of another tag),
             * so that the message is buffered as unexpected when it comes. */
            int flag = 0;
            for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.1;) {
                E(MPI_Iprobe(1, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                CHECK_INT("probe of a tag nobody sends", 0, flag);
                mt_sleep_ms(1);
            }
            memset(buf, 0, N);
            E(MPI_Recv(buf, N, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &st));
            CHECK_PATTERN("message received late", buf, N, 33);
        }
        /* 4. probe */
        if (me == 1) {
            reply(buf, 44);
        } else {
            E(MPI_Probe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            E(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECK_INT("probed count", N, count);
            CHECK_INT("probed tag", 6, st.MPI_TAG);
            memset(buf, 0, N);
            E(MPI_Recv(buf, N, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &st));
            CHECK_PATTERN("probed message", buf, N, 44);
        }
        /* 5. a receive too small */
        if (me == 1) {
            reply(buf, 55);
            reply(buf, 56);
        } else {
            E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
            memset(big, 0, N);
            int rc = MPI_Recv(big, N / 2, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &st);
            CHECK_INT("truncated receive's class", MPI_ERR_TRUNCATE, mt_class(rc));
            CHECK_PATTERN("truncated receive's first half", big, N / 2, 55);
            E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
            memset(buf, 0, N);
            E(MPI_Recv(buf, N, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &st));
            CHECK_PATTERN("message after a truncated one", buf, N, 56);
        }
        /* 6. wildcard receive */
        if (me == 1) {
            reply(buf, 66);
        } else {
            memset(buf, 0, N);
            E(MPI_Recv(buf, N, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK_INT("wildcard source", 1, st.MPI_SOURCE);
            CHECK_INT("wildcard tag", 6, st.MPI_TAG);
            CHECK_PATTERN("wildcard message", buf, N, 66);
        }
        /* 7. synchronous: the Ssend must not complete before its receive
         * starts, which rank 0 delays by 0.2 s. */
        if (me == 1) {
            mt_fill(buf, N, 77);
            double t0 = MPI_Wtime();
            E(MPI_Ssend(buf, N, MPI_BYTE, 0, 6, MPI_COMM_WORLD));
            double waited = MPI_Wtime() - t0;
            CHECK(waited >= 0.15, "synchronous send completed after %.3f s, before its receive (0.2 s later)", waited);
        } else {
            mt_sleep_ms(200);
            memset(buf, 0, N);
            E(MPI_Recv(buf, N, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &st));
            CHECK_PATTERN("synchronous message", buf, N, 77);
        }
    }
    if (pvar >= 0) {
        unsigned long long used = 0;
        E(MPI_T_pvar_read(session, handle, &used));
        /* MT_EXPECT_CREDITS (p2p.list, single-cluster entries): the least
         * number of rank 1's long replies that must have gone on a credit
         * (0: exactly none, prediction off).  Ranks in different clusters
         * talk IMPI, which has no credits. */
        const char *expect = getenv("MT_EXPECT_CREDITS");
        if (expect && me == 1 && mt_size >= 2) {
            unsigned long long least = strtoull(expect, NULL, 10);
            if (least == 0)
                CHECK_INT("request.predict.credits_used with prediction off", 0, used);
            else
                CHECK(used >= least, "request.predict.credits_used, expected at least %llu got %llu", least, used);
        }
        E(MPI_T_pvar_handle_free(session, &handle));
        E(MPI_T_pvar_session_free(&session));
        E(MPI_T_finalize());
    }
    free(buf);
    free(big);
    return mt_finish();
}
