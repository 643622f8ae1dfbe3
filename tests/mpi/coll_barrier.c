/* MPI_Barrier: nobody leaves before the last rank has entered, many
 * barriers back to back, on MPI_COMM_WORLD, a dup and a split.
 *
 * The entry check compares wall-clock times (CLOCK_REALTIME, the same clock
 * for every process of one host): a late rank sleeps, notes when it enters
 * the barrier, and afterwards tells the others by point-to-point, who check
 * that they left after that moment. */
#include "coll_common.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_late_rank(const cc_comm *c, int late)
{
    double entered = 0, left;
    int i;
    E(MPI_Barrier(c->comm));
    if (c->rank == late) {
        mt_sleep_ms(50);
        entered = now();
    }
    E(MPI_Barrier(c->comm));
    left = now();
    if (c->rank == late) {
        for (i = 0; i < c->size; ++i)
            if (i != late)
                E(MPI_Send(&entered, 1, MPI_DOUBLE, i, 77, c->comm));
    } else {
        E(MPI_Recv(&entered, 1, MPI_DOUBLE, late, 77, c->comm, MPI_STATUS_IGNORE));
        CHECK(left >= entered,
              "barrier on %s (size %d): rank %d left %.6f s before rank %d entered", c->name,
              c->size, c->rank, entered - left, late);
    }
}

int main(int argc, char **argv)
{
    int ci, i;
    cc_setup(&argc, &argv);
    for (ci = 0; ci < cc_ncomms; ++ci) {
        const cc_comm *c = &cc_comms[ci];
        for (i = 0; i < 20; ++i)
            E(MPI_Barrier(c->comm));
        if (c->size > 1) {
            test_late_rank(c, 0);
            test_late_rank(c, c->size - 1);
            test_late_rank(c, c->size / 2);
        }
    }
    return cc_teardown();
}
