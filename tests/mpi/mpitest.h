/* mpitest.h — small helpers shared by the MPI test programs in tests/mpi.
 *
 * Every program checks its own results exactly.  A failed check prints one
 * line "FAIL: [rank R] file:line: <what>, expected X got Y" and the program
 * goes on (so that one run reports every broken check); mt_finish() then
 * calls MPI_Abort(MPI_COMM_WORLD, 1) if this rank saw any failure, so that
 * the job exits non-zero whatever rule the launcher uses for the exit status.
 * Checks whose failure makes continuing pointless use MT_FATAL.
 *
 * Only the MPI API is used; synchronisation helpers are built from
 * point-to-point calls (not from collectives) so that a broken collective
 * does not hide the result of a point-to-point test.
 */
#ifndef GRIDMPI_TESTS_MPITEST_H
#define GRIDMPI_TESTS_MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Known bugs of the reference implementations the tests are validated
 * against (Debian 12: Open MPI 4.1.4, MPICH 4.0.2).  A check that one of
 * them gets wrong is skipped for that implementation only (never for
 * gridmpi), next to a comment naming the bug. */
#if defined(OPEN_MPI)
#define MT_IS_OPENMPI 1
#else
#define MT_IS_OPENMPI 0
#endif
#if defined(MPICH_VERSION) || defined(MPICH_NAME)
#define MT_IS_MPICH 1
#else
#define MT_IS_MPICH 0
#endif

/* A handle as an int for messages (handles are ints in gridmpi and MPICH,
 * pointers in Open MPI). */
#define MT_H(h) ((int)(intptr_t)(h))

/* Tag reserved for mt_barrier; test traffic on MPI_COMM_WORLD never uses it
 * and never receives with MPI_ANY_TAG while a barrier may be in flight. */
#define MT_TAG_SYNC 32000

static int mt_rank = -1;
static int mt_size = -1;
static int mt_errors = 0;

static inline void mt_vfail(const char *file, int line, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    printf("FAIL: [rank %d] %s:%d: %s\n", mt_rank, file, line, msg);
    fflush(stdout);
    ++mt_errors;
}

static inline void mt_fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void mt_fail_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mt_vfail(file, line, fmt, ap);
    va_end(ap);
}

/* Unconditional failure with a printf-style message. */
#define MT_FAIL(...) mt_fail_at(__FILE__, __LINE__, __VA_ARGS__)

/* CHECK(cond, fmt, ...): fail with the message when cond is false. */
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond))                                                           \
            mt_fail_at(__FILE__, __LINE__, __VA_ARGS__);                       \
    } while (0)

/* CHECK_INT(what, expected, got): exact integer comparison. */
#define CHECK_INT(what, expected, got)                                         \
    do {                                                                       \
        long long mt_e_ = (long long)(expected), mt_g_ = (long long)(got);     \
        if (mt_e_ != mt_g_)                                                    \
            mt_fail_at(__FILE__, __LINE__, "%s, expected %lld got %lld",       \
                       (what), mt_e_, mt_g_);                                  \
    } while (0)

#define CHECK_STR(what, expected, got)                                         \
    do {                                                                       \
        const char *mt_e_ = (expected), *mt_g_ = (got);                        \
        if (strcmp(mt_e_, mt_g_) != 0)                                         \
            mt_fail_at(__FILE__, __LINE__, "%s, expected \"%s\" got \"%s\"",   \
                       (what), mt_e_, mt_g_);                                  \
    } while (0)

static inline const char *mt_error_text(int rc)
{
    static char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    text[0] = '\0';
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "(no error string)");
    return text;
}

/* E(call): the call must return MPI_SUCCESS.  (With the default error
 * handler a failing call should not return at all; this also catches a
 * library that returns an error code without invoking the handler.) */
#define E(call)                                                                \
    do {                                                                       \
        int mt_rc_ = (call);                                                   \
        if (mt_rc_ != MPI_SUCCESS)                                             \
            mt_fail_at(__FILE__, __LINE__, "%s, expected MPI_SUCCESS got %d (%s)", \
                       #call, mt_rc_, mt_error_text(mt_rc_));                 \
    } while (0)

/* Fail and abort now: for checks after which the test cannot go on. */
#define MT_FATAL(...)                                                          \
    do {                                                                       \
        mt_fail_at(__FILE__, __LINE__, __VA_ARGS__);                           \
        MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        exit(1);                                                               \
    } while (0)

static inline void mt_init(int *argc, char ***argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    E(MPI_Init(argc, argv));
    E(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    E(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    if (mt_size < 1 || mt_rank < 0 || mt_rank >= mt_size)
        MT_FATAL("MPI_COMM_WORLD rank/size, expected 0 <= rank < size got rank %d size %d",
                 mt_rank, mt_size);
}

/* Ends the test: abort with status 1 if this rank failed, else finalize.
 * Use as "return mt_finish();" at the end of main. */
static inline int mt_finish(void)
{
    if (mt_errors > 0) {
        printf("FAIL: [rank %d] %d failed check(s)\n", mt_rank, mt_errors);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    E(MPI_Finalize());
    return mt_errors ? 1 : 0;
}

/* Barrier from point-to-point calls: everyone reports to rank 0 of comm,
 * rank 0 then releases everyone. */
static inline void mt_barrier_comm(MPI_Comm comm)
{
    int rank, size, i;
    E(MPI_Comm_rank(comm, &rank));
    E(MPI_Comm_size(comm, &size));
    if (rank == 0) {
        for (i = 1; i < size; ++i)
            E(MPI_Recv(NULL, 0, MPI_BYTE, i, MT_TAG_SYNC, comm, MPI_STATUS_IGNORE));
        for (i = 1; i < size; ++i)
            E(MPI_Send(NULL, 0, MPI_BYTE, i, MT_TAG_SYNC, comm));
    } else {
        E(MPI_Send(NULL, 0, MPI_BYTE, 0, MT_TAG_SYNC, comm));
        E(MPI_Recv(NULL, 0, MPI_BYTE, 0, MT_TAG_SYNC, comm, MPI_STATUS_IGNORE));
    }
}

static inline void mt_barrier(void) { mt_barrier_comm(MPI_COMM_WORLD); }

/* Rank 0 releases everyone else (who block until it does).  Unlike
 * mt_barrier it sends nothing to rank 0, so it is safe when rank 0 may still
 * be receiving with MPI_ANY_SOURCE / MPI_ANY_TAG. */
static inline void mt_release_from_root(void)
{
    int i;
    if (mt_rank == 0) {
        for (i = 1; i < mt_size; ++i)
            E(MPI_Send(NULL, 0, MPI_BYTE, i, MT_TAG_SYNC, MPI_COMM_WORLD));
    } else {
        E(MPI_Recv(NULL, 0, MPI_BYTE, 0, MT_TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

/* Global "did anyone fail" without collectives: returns the number of ranks
 * of MPI_COMM_WORLD with failures (same answer on every rank). */
static inline int mt_any_failed(void)
{
    int mine = mt_errors > 0, total = mine, i, v;
    if (mt_rank == 0) {
        for (i = 1; i < mt_size; ++i) {
            E(MPI_Recv(&v, 1, MPI_INT, i, MT_TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            total += v;
        }
        for (i = 1; i < mt_size; ++i)
            E(MPI_Send(&total, 1, MPI_INT, i, MT_TAG_SYNC, MPI_COMM_WORLD));
    } else {
        E(MPI_Send(&mine, 1, MPI_INT, 0, MT_TAG_SYNC, MPI_COMM_WORLD));
        E(MPI_Recv(&total, 1, MPI_INT, 0, MT_TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    return total;
}

static inline void mt_sleep_ms(int ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* Deterministic byte pattern for buffers: depends on a seed (e.g. sender
 * rank and tag) and the byte index, and is never constant over 256 bytes. */
static inline unsigned char mt_pattern(int seed, size_t i)
{
    return (unsigned char)((i * 131u + (size_t)seed * 17u + (i >> 8) * 7u) & 0xff);
}

static inline void mt_fill(void *buf, size_t n, int seed)
{
    unsigned char *p = (unsigned char *)buf;
    size_t i;
    for (i = 0; i < n; ++i)
        p[i] = mt_pattern(seed, i);
}

/* Returns 1 if buf holds the pattern, else fails once (first bad byte). */
#define CHECK_PATTERN(what, buf, n, seed)                                      \
    mt_check_pattern(__FILE__, __LINE__, (what), (buf), (n), (seed))

static inline int mt_check_pattern(const char *file, int line, const char *what, const void *buf,
                            size_t n, int seed)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t i;
    for (i = 0; i < n; ++i) {
        if (p[i] != mt_pattern(seed, i)) {
            mt_fail_at(file, line, "%s: byte %zu of %zu, expected %d got %d", what, i, n,
                       mt_pattern(seed, i), p[i]);
            return 0;
        }
    }
    return 1;
}

static inline void *mt_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        MT_FATAL("malloc(%zu), expected memory got NULL", n);
    return p;
}

/* Error class of an error code (MPI_Error_class must work for this). */
static inline int mt_class(int code)
{
    int cls = -1;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS)
        return -1;
    return cls;
}

#endif /* GRIDMPI_TESTS_MPITEST_H */
