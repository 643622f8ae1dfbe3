/* rma_many.c — many small operations per epoch, and large accumulates with
 * MPI_Win_flush_local, checked exactly; the run's time limit is part of the
 * test (an origin that rescans every outstanding operation per call, or
 * waits for one answer per put/accumulate, takes far longer):
 *   1. fence epochs of 60000 one-element accumulates to the next rank;
 *   2. lock_all with MPI_MODE_NOCHECK: puts completed by MPI_Win_unlock_all
 *      alone (no lock or unlock messages), then by MPI_Win_flush;
 *   3. 1 MiB accumulates with MPI_Win_flush_local between them, the origin
 *      buffer rewritten after each flush_local;
 *   4. post/start/complete/wait with puts. */
#include "mpitest.h"

#define SLOTS 64
#define FENCE_OPS 60000
#define ROUNDS 3
#define BIG (1 << 18) /* ints: 1 MiB */
#define BIG_OPS 8

static void fence_accumulates(void)
{
    long long *mem = NULL, one = 1;
    MPI_Win win;
    int round, i, target = (mt_rank + 1) % mt_size;
    E(MPI_Win_allocate(SLOTS * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (i = 0; i < SLOTS; ++i) mem[i] = 0;
    E(MPI_Win_fence(0, win));
    for (round = 0; round < ROUNDS; ++round) {
        for (i = 0; i < FENCE_OPS; ++i)
            E(MPI_Accumulate(&one, 1, MPI_LONG_LONG, target, i % SLOTS, 1, MPI_LONG_LONG, MPI_SUM, win));
        E(MPI_Win_fence(0, win));
        for (i = 0; i < SLOTS; ++i) {
            long long expected = (long long)(round + 1) * (FENCE_OPS / SLOTS + (i < FENCE_OPS % SLOTS));
            if (mem[i] != expected) {
                MT_FAIL("fence round %d: slot %d expected %lld got %lld", round, i, expected, mem[i]);
                break;
            }
        }
        E(MPI_Win_fence(0, win));
    }
    E(MPI_Win_free(&win));
}

static void nocheck_puts(void)
{
    int *mem = NULL, values[SLOTS], i, from = (mt_rank + mt_size - 1) % mt_size;
    int target = (mt_rank + 1) % mt_size;
    MPI_Win win;
    E(MPI_Win_allocate(2 * SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (i = 0; i < 2 * SLOTS; ++i) mem[i] = -1;
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (i = 0; i < SLOTS; ++i) {
        values[i] = 1000 * mt_rank + i;
        E(MPI_Put(&values[i], 1, MPI_INT, target, i, 1, MPI_INT, win));
    }
    E(MPI_Win_unlock_all(win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
    for (i = 0; i < SLOTS; ++i)
        if (mem[i] != 1000 * from + i) {
            MT_FAIL("put under lock_all(NOCHECK), complete at unlock_all: slot %d expected %d got %d", i,
                    1000 * from + i, mem[i]);
            break;
        }
    E(MPI_Win_unlock(mt_rank, win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    /* Completed by MPI_Win_flush inside the epoch. */
    E(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (i = 0; i < SLOTS; ++i) {
        values[i] = 2000 * mt_rank + i;
        E(MPI_Put(&values[i], 1, MPI_INT, target, SLOTS + i, 1, MPI_INT, win));
    }
    E(MPI_Win_flush(target, win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    for (i = 0; i < SLOTS; ++i)
        if (mem[SLOTS + i] != 2000 * from + i) {
            MT_FAIL("put under lock_all(NOCHECK), complete at flush: slot %d expected %d got %d", i,
                    2000 * from + i, mem[SLOTS + i]);
            break;
        }
    E(MPI_Win_unlock_all(win));
    E(MPI_Win_free(&win));
}

static void big_accumulates(void)
{
    int *mem = NULL, *buf = malloc(BIG * sizeof(int)), i, k;
    int from = (mt_rank + mt_size - 1) % mt_size, target = (mt_rank + 1) % mt_size;
    MPI_Win win;
    E(MPI_Win_allocate(BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (i = 0; i < BIG; ++i) mem[i] = 0;
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_lock_all(0, win));
    for (k = 0; k < BIG_OPS; ++k) {
        for (i = 0; i < BIG; ++i) buf[i] = (k + 1) * (mt_rank + 1) + (i & 7);
        E(MPI_Accumulate(buf, BIG, MPI_INT, target, 0, BIG, MPI_INT, MPI_SUM, win));
        E(MPI_Win_flush_local(target, win));
        for (i = 0; i < BIG; ++i) buf[i] = -12345; /* reusable after flush_local */
    }
    E(MPI_Win_flush(target, win));
    E(MPI_Win_unlock_all(win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    for (i = 0; i < BIG; ++i) {
        int expected = BIG_OPS * (BIG_OPS + 1) / 2 * (from + 1) + BIG_OPS * (i & 7);
        if (mem[i] != expected) {
            MT_FAIL("1 MiB accumulates with flush_local: element %d expected %d got %d", i, expected, mem[i]);
            break;
        }
    }
    E(MPI_Win_free(&win));
    free(buf);
}

static void pscw_puts(void)
{
    int *mem = NULL, values[SLOTS], i, from = (mt_rank + mt_size - 1) % mt_size;
    int target = (mt_rank + 1) % mt_size, ranks[2];
    MPI_Group world, origin_group, target_group;
    MPI_Win win;
    E(MPI_Win_allocate(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (i = 0; i < SLOTS; ++i) mem[i] = -1;
    E(MPI_Comm_group(MPI_COMM_WORLD, &world));
    ranks[0] = from;
    E(MPI_Group_incl(world, 1, ranks, &origin_group));
    ranks[0] = target;
    E(MPI_Group_incl(world, 1, ranks, &target_group));
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_post(origin_group, 0, win));
    E(MPI_Win_start(target_group, 0, win));
    for (i = 0; i < SLOTS; ++i) {
        values[i] = 3000 * mt_rank + i;
        E(MPI_Put(&values[i], 1, MPI_INT, target, i, 1, MPI_INT, win));
    }
    E(MPI_Win_complete(win));
    E(MPI_Win_wait(win));
    for (i = 0; i < SLOTS; ++i)
        if (mem[i] != 3000 * from + i) {
            MT_FAIL("put in a post/start epoch: slot %d expected %d got %d", i, 3000 * from + i, mem[i]);
            break;
        }
    E(MPI_Group_free(&origin_group));
    E(MPI_Group_free(&target_group));
    E(MPI_Group_free(&world));
    E(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    fence_accumulates();
    nocheck_puts();
    big_accumulates();
    pscw_puts();
    return mt_finish();
}
