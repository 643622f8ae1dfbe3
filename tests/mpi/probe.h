/* Shared harness of the probe_*.c programs: CHECK records a failure (printed
 * as "FAIL: ..." for the runner) and p_finish aborts the job if any check
 * failed, else finalizes. */
#ifndef GRIDMPI_TESTS_PROBE_H
#define GRIDMPI_TESTS_PROBE_H
#include <mpi.h>
#include <stdio.h>

static int p_errs = 0;
static int p_rank = -1;
#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            printf("FAIL: [rank %d] %s:%d: ", p_rank, __FILE__, __LINE__);     \
            printf(__VA_ARGS__);                                                \
            printf("\n");                                                       \
            fflush(stdout);                                                     \
            p_errs++;                                                           \
        }                                                                       \
    } while (0)
#define MPIOK(call)                                                             \
    do {                                                                        \
        int rc_ = (call);                                                       \
        CHECK(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_);                \
    } while (0)

static void p_finish(void)
{
    if (p_errs) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
}

#endif
