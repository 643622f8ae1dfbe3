/* thr.h — helpers of the MPI_THREAD_MULTIPLE programs (tests/mpi/thr_*.c).
 *
 * thr_init() asks for MPI_THREAD_MULTIPLE and fails the run when it is not
 * provided; thr_threads() is the number of threads per process (environment
 * THR_THREADS, default 2, 1..8, set by thr.list); thr_run() starts n threads
 * on one function (argument: the thread's index) and joins them.  Checks
 * made inside threads use TCHECK / TE, which serialise the shared failure
 * counter of mpitest.h with a mutex (CHECK and E are for the main thread). */
#ifndef GRIDMPI_TESTS_THR_H
#define GRIDMPI_TESTS_THR_H

#include "mpitest.h"
#include <pthread.h>

static pthread_mutex_t thr_fail_lock = PTHREAD_MUTEX_INITIALIZER;

#define TCHECK(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            pthread_mutex_lock(&thr_fail_lock);                                \
            mt_fail_at(__FILE__, __LINE__, __VA_ARGS__);                       \
            pthread_mutex_unlock(&thr_fail_lock);                              \
        }                                                                      \
    } while (0)

#define TE(call)                                                               \
    do {                                                                       \
        int thr_rc_ = (call);                                                  \
        TCHECK(thr_rc_ == MPI_SUCCESS, "%s, expected MPI_SUCCESS got %d", #call, thr_rc_); \
    } while (0)

static inline int thr_threads(void)
{
    const char *text = getenv("THR_THREADS");
    int n = text ? atoi(text) : 2;
    return n < 1 ? 1 : n > 8 ? 8 : n;
}

static inline void thr_init(int *argc, char ***argv)
{
    int provided = -1, queried = -1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    E(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    E(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    E(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    E(MPI_Query_thread(&queried));
    CHECK_INT("MPI_Query_thread vs provided", provided, queried);
    if (provided != MPI_THREAD_MULTIPLE)
        MT_FATAL("MPI_Init_thread(MPI_THREAD_MULTIPLE) provided, expected %d got %d", MPI_THREAD_MULTIPLE,
                 provided);
}

struct thr_slot {
    pthread_t thread;
    void *(*fn)(int);
    int index;
};

static void *thr_trampoline(void *p)
{
    struct thr_slot *s = (struct thr_slot *)p;
    return s->fn(s->index);
}

/* Runs fn(0) .. fn(n-1) in n threads at once and waits for all of them. */
static inline void thr_run(int n, void *(*fn)(int))
{
    struct thr_slot slots[8];
    int i;
    for (i = 0; i < n; ++i) {
        slots[i].fn = fn;
        slots[i].index = i;
        if (pthread_create(&slots[i].thread, NULL, thr_trampoline, &slots[i]) != 0)
            MT_FATAL("pthread_create of thread %d, expected 0 got an error", i);
    }
    for (i = 0; i < n; ++i)
        pthread_join(slots[i].thread, NULL);
}

#endif
