/* inter_nonblocking.c — every non-blocking collective on intercommunicators
 * (MPI-3.1 5.12 with 5.2.2): the cases of inter_common.h with the I-calls
 * each followed by MPI_Wait, then several collectives in flight at once on
 * one intercommunicator, completed with one MPI_Waitall in reverse order. */
#define INTER_NB 1
#include "inter_common.h"

/* Ibcast (root: group 0 rank 0), Iallreduce, Ialltoall and Ibarrier started
 * back to back, completed together. */
static void t_overlap(const Inter *t)
{
    MPI_Request rq[4];
    int bc[3], one = t->rank + 1, sum = SENTINEL, i, k;
    int *sb = (int *)mt_malloc(sizeof(int) * (size_t)t->rsize);
    int *rb = (int *)mt_malloc(sizeof(int) * (size_t)t->rsize);
    for (i = 0; i < t->rsize; ++i) {
        sb[i] = a2a(t->group, t->rank, i, 0);
        rb[i] = SENTINEL;
    }
    for (k = 0; k < 3; ++k) bc[k] = t->group == 0 && t->rank == 0 ? val(0, 0, k) : SENTINEL;
    E(MPI_Ibcast(bc, 3, MPI_INT, t->group == 0 ? (t->rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0,
                 t->comm, &rq[0]));
    E(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, t->comm, &rq[1]));
    E(MPI_Ialltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, t->comm, &rq[2]));
    E(MPI_Ibarrier(t->comm, &rq[3]));
    {
        MPI_Request rev[4] = {rq[3], rq[2], rq[1], rq[0]};
        E(MPI_Waitall(4, rev, MPI_STATUSES_IGNORE));
    }
    for (k = 0; k < 3; ++k)
        CHECK_INT("overlapped ibcast", t->group == 0 && t->rank != 0 ? SENTINEL : val(0, 0, k), bc[k]);
    CHECK_INT("overlapped iallreduce", t->rsize * (t->rsize + 1) / 2, sum);
    for (i = 0; i < t->rsize; ++i)
        CHECK_INT("overlapped ialltoall", a2a(1 - t->group, i, t->rank, 0), rb[i]);
    free(sb);
    free(rb);
}

/* MPI_Test drives a collective to completion. */
static void t_test_loop(const Inter *t)
{
    MPI_Request rq;
    int flag = 0, mine = t->rank + 10 * t->group, got = SENTINEL;
    E(MPI_Iallreduce(&mine, &got, 1, MPI_INT, MPI_MAX, t->comm, &rq));
    while (!flag) E(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    CHECK_INT("iallreduce by MPI_Test", t->rsize - 1 + 10 * (1 - t->group), got);
}

static void inter_extra(const Inter *t)
{
    t_overlap(t);
    t_test_loop(t);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_size < 2) {
        printf("inter_nonblocking: needs at least 2 ranks, skipped\n");
        return mt_finish();
    }
    inter_setup();
    run_every_split();
    inter_teardown();
    return mt_finish();
}
