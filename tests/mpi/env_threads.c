/* MPI_THREAD_MULTIPLE: two threads per
 * process exchange messages with the partner at the same time (one on
 * MPI_COMM_WORLD, one on a dup; also a wildcard receive), and the main
 * thread finishes with Finalize after joining.  The library must provide
 * MPI_THREAD_MULTIPLE (gridmpi, Open MPI and MPICH all do; the thr_*
 * programs go further).  Pairs; odd size: self. */
#include "mpitest.h"
#include <pthread.h>

#define ITER 200

static int partner;
static MPI_Comm dup;

struct arg {
    MPI_Comm comm;
    int tag;
    int errors;
};

static void *worker(void *p)
{
    struct arg *a = (struct arg *)p;
    int i, out[64], in[64], j;
    MPI_Request r[2];
    MPI_Status st;
    for (i = 0; i < ITER; ++i) {
        for (j = 0; j < 64; ++j)
            out[j] = mt_rank * 100000 + a->tag * 1000 + i + j;
        if (MPI_Irecv(in, 64, MPI_INT, i % 2 ? MPI_ANY_SOURCE : partner, a->tag, a->comm, &r[0]) != MPI_SUCCESS ||
            MPI_Isend(out, 64, MPI_INT, partner, a->tag, a->comm, &r[1]) != MPI_SUCCESS ||
            MPI_Wait(&r[0], &st) != MPI_SUCCESS || MPI_Wait(&r[1], MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            a->errors++;
            return NULL;
        }
        for (j = 0; j < 64; ++j)
            if (in[j] != partner * 100000 + a->tag * 1000 + i + j) {
                a->errors++;
                break;
            }
        if (st.MPI_SOURCE != partner || st.MPI_TAG != a->tag)
            a->errors++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, q = -1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    E(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    E(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    E(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    E(MPI_Query_thread(&q));
    CHECK_INT("MPI_Query_thread vs provided", provided, q);
    CHECK_INT("MPI_Init_thread(MPI_THREAD_MULTIPLE) provided", MPI_THREAD_MULTIPLE, provided);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;
    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t t[2];
        struct arg a[2];
        int k;
        E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        a[0].comm = MPI_COMM_WORLD;
        a[0].tag = 1;
        a[1].comm = dup;
        a[1].tag = 2;
        for (k = 0; k < 2; ++k) {
            a[k].errors = 0;
            if (pthread_create(&t[k], NULL, worker, &a[k]) != 0)
                MT_FATAL("pthread_create, expected 0 got an error");
        }
        for (k = 0; k < 2; ++k) {
            pthread_join(t[k], NULL);
            CHECK_INT("errors in a thread exchanging messages under MPI_THREAD_MULTIPLE", 0, a[k].errors);
        }
        E(MPI_Comm_free(&dup));
    }
    return mt_finish();
}
