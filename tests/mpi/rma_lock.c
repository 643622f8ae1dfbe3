/* rma_lock.c — passive-target RMA: a counter every rank increments with
 * MPI_Fetch_and_op under exclusive locks (the fetched values must be exactly
 * 0 .. size*ITER-1), a non-atomic get/increment/put that only an exclusive
 * lock keeps correct, a MPI_Compare_and_swap spin lock guarding a
 * read-modify-write under MPI_Win_lock_all + MPI_Win_flush, puts to every
 * target under lock_all + flush_all, MPI_Rput / MPI_Rget / MPI_Raccumulate /
 * MPI_Rget_accumulate completion, and exact MPI_Get_accumulate /
 * MPI_Fetch_and_op / MPI_Compare_and_swap results.
 *
 * Windows are at least 16 bytes: MPICH 4.0.2 (Debian 12, ch4) maps the
 * MPI_Win_allocate / MPI_Win_create memory of ranks > 0 onto rank 0's when a
 * window is smaller than 16 bytes (a one-int window of rank 1 reads rank 0's
 * int), which once made these checks look wrong on MPICH.  Local stores into
 * window memory happen inside a lock of one's own window, as the separate
 * memory model requires. */
#include "mpitest.h"

#define MIN_WIN_INTS 4 /* 16 bytes */

#define ITER 10
#define CAS_ROUNDS 3

static void test_fetch_and_op_counter(void)
{
    int *counter = NULL, fetched[ITER], one = 1, i;
    MPI_Win win;
    E(MPI_Win_allocate(mt_rank == 0 ? MIN_WIN_INTS * sizeof(int) : 0, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win));
    if (mt_rank == 0) {
        E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        *counter = 0;
        E(MPI_Win_unlock(0, win));
    }
    E(MPI_Barrier(MPI_COMM_WORLD));
    for (i = 0; i < ITER; ++i) {
        E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        E(MPI_Fetch_and_op(&one, &fetched[i], MPI_INT, 0, 0, MPI_SUM, win));
        E(MPI_Win_unlock(0, win));
    }
    for (i = 1; i < ITER; ++i)
        CHECK(fetched[i] > fetched[i - 1], "fetched values grow: %d then %d", fetched[i - 1], fetched[i]);
    {
        int *all = malloc(sizeof(int) * ITER * mt_size), *seen = calloc(ITER * mt_size, sizeof(int));
        E(MPI_Gather(fetched, ITER, MPI_INT, all, ITER, MPI_INT, 0, MPI_COMM_WORLD));
        if (mt_rank == 0) {
            for (i = 0; i < ITER * mt_size; ++i) {
                CHECK(all[i] >= 0 && all[i] < ITER * mt_size, "fetched value %d out of range", all[i]);
                if (all[i] >= 0 && all[i] < ITER * mt_size) {
                    CHECK(!seen[all[i]], "value %d fetched twice", all[i]);
                    seen[all[i]] = 1;
                }
            }
        }
        free(all);
        free(seen);
    }
    E(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        E(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_INT("counter after every increment", ITER * mt_size, *counter);
        E(MPI_Win_unlock(0, win));
    }
    E(MPI_Win_free(&win));
}

/* get, +1, put: correct only if the exclusive lock really excludes */
static void test_exclusive_excludes(void)
{
    int *value = NULL, v, i;
    MPI_Win win;
    E(MPI_Win_allocate(MIN_WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &value, &win));
    E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
    *value = 0;
    E(MPI_Win_unlock(mt_rank, win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    for (i = 0; i < ITER; ++i) {
        int target = (i % 2 == 0) ? 0 : mt_size - 1;
        E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        E(MPI_Get(&v, 1, MPI_INT, target, 0, 1, MPI_INT, win));
        E(MPI_Win_flush(target, win));
        ++v;
        E(MPI_Put(&v, 1, MPI_INT, target, 0, 1, MPI_INT, win));
        E(MPI_Win_unlock(target, win));
    }
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
    if (mt_size == 1)
        CHECK_INT("get/put increments on one process", ITER, *value);
    else if (mt_rank == 0 || mt_rank == mt_size - 1)
        CHECK_INT("get/put increments under exclusive locks", ITER / 2 * mt_size, *value);
    E(MPI_Win_unlock(mt_rank, win));
    E(MPI_Win_free(&win));
}

/* a spin lock from MPI_Compare_and_swap on rank 0's word 0 protecting word 1 */
static void test_cas_mutex(void)
{
    int *words = NULL, i, zero = 0, me = mt_rank + 1, old, v;
    MPI_Win win;
    E(MPI_Win_allocate(MIN_WIN_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &words, &win));
    E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
    words[0] = words[1] = 0;
    E(MPI_Win_unlock(mt_rank, win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_lock_all(0, win));
    for (i = 0; i < CAS_ROUNDS; ++i) {
        do {
            E(MPI_Compare_and_swap(&me, &zero, &old, MPI_INT, 0, 0, win));
            E(MPI_Win_flush(0, win));
        } while (old != 0);
        E(MPI_Get(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        E(MPI_Win_flush(0, win));
        ++v;
        E(MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        E(MPI_Win_flush(0, win));
        /* release: swap our id back to 0 */
        E(MPI_Compare_and_swap(&zero, &me, &old, MPI_INT, 0, 0, win));
        E(MPI_Win_flush(0, win));
        CHECK_INT("the lock word held our id", me, old);
    }
    E(MPI_Win_unlock_all(win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        E(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_INT("increments under the CAS lock", CAS_ROUNDS * mt_size, words[1]);
        CHECK_INT("lock word released", 0, words[0]);
        E(MPI_Win_unlock(0, win));
    }
    E(MPI_Win_free(&win));
}

static void test_lock_all_flush(void)
{
    int *slots = NULL, r, mine;
    MPI_Win win;
    int n = mt_size < MIN_WIN_INTS ? MIN_WIN_INTS : mt_size;
    E(MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slots, &win));
    E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
    for (r = 0; r < n; ++r) slots[r] = -1;
    E(MPI_Win_unlock(mt_rank, win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_lock_all(0, win));
    mine = 7 * mt_rank + 3;
    for (r = 0; r < mt_size; ++r) E(MPI_Put(&mine, 1, MPI_INT, r, mt_rank, 1, MPI_INT, win));
    E(MPI_Win_flush_all(win));
    E(MPI_Win_unlock_all(win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
    for (r = 0; r < n; ++r)
        CHECK_INT("lock_all put from every rank", r < mt_size ? 7 * r + 3 : -1, slots[r]);
    E(MPI_Win_unlock(mt_rank, win));
    E(MPI_Win_free(&win));
}

static void test_request_ops(void)
{
    int *mem = NULL, src[4], back[4], result[4], i;
    int target = (mt_rank + 1) % mt_size;
    MPI_Request req[2];
    MPI_Win win;
    E(MPI_Win_allocate(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
    for (i = 0; i < 16; ++i) mem[i] = 100 + i;
    E(MPI_Win_unlock(mt_rank, win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_lock_all(0, win));
    for (i = 0; i < 4; ++i) src[i] = mt_rank * 10 + i;
    E(MPI_Rput(src, 4, MPI_INT, target, 0, 4, MPI_INT, win, &req[0]));
    E(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    CHECK_INT("MPI_Wait sets MPI_REQUEST_NULL", MT_H(MPI_REQUEST_NULL), MT_H(req[0]));
    E(MPI_Win_flush(target, win));
    E(MPI_Rget(back, 4, MPI_INT, target, 0, 4, MPI_INT, win, &req[0]));
    E(MPI_Raccumulate(src, 4, MPI_INT, target, 8, 4, MPI_INT, MPI_SUM, win, &req[1]));
    E(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    for (i = 0; i < 4; ++i) CHECK_INT("MPI_Rget after MPI_Rput", mt_rank * 10 + i, back[i]);
    E(MPI_Win_flush(target, win));
    E(MPI_Rget_accumulate(src, 4, MPI_INT, result, 4, MPI_INT, target, 8, 4, MPI_INT, MPI_SUM, win, &req[0]));
    {
        int flag = 0;
        while (!flag) E(MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE));
    }
    for (i = 0; i < 4; ++i)
        CHECK_INT("MPI_Rget_accumulate old value", 108 + i + mt_rank * 10 + i, result[i]);
    E(MPI_Win_unlock_all(win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    {
        int from = (mt_rank - 1 + mt_size) % mt_size;
        E(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
        for (i = 0; i < 4; ++i) {
            CHECK_INT("MPI_Rput result", from * 10 + i, mem[i]);
            CHECK_INT("two accumulates", 108 + i + 2 * (from * 10 + i), mem[8 + i]);
        }
        E(MPI_Win_unlock(mt_rank, win));
    }
    E(MPI_Win_free(&win));
}

/* exact fetch results on one's own window (no races) */
static void test_fetch_results(void)
{
    long long *mem = NULL, v[3], res[3], cmp, old, origin;
    int i;
    MPI_Win win;
    E(MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
    for (i = 0; i < 4; ++i) mem[i] = 10 * (i + 1);
    for (i = 0; i < 3; ++i) v[i] = i + 1;
    E(MPI_Get_accumulate(v, 3, MPI_LONG_LONG, res, 3, MPI_LONG_LONG, mt_rank, 1, 3, MPI_LONG_LONG, MPI_PROD, win));
    E(MPI_Win_flush(mt_rank, win));
    for (i = 0; i < 3; ++i) CHECK_INT("MPI_Get_accumulate old value", 10 * (i + 2), res[i]);
    E(MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, res, 3, MPI_LONG_LONG, mt_rank, 1, 3, MPI_LONG_LONG, MPI_NO_OP, win));
    E(MPI_Win_flush(mt_rank, win));
    for (i = 0; i < 3; ++i) CHECK_INT("MPI_NO_OP fetch of the product", 10 * (i + 2) * (i + 1), res[i]);
    origin = 5;
    E(MPI_Fetch_and_op(&origin, &old, MPI_LONG_LONG, mt_rank, 0, MPI_MIN, win));
    E(MPI_Win_flush(mt_rank, win));
    CHECK_INT("MPI_Fetch_and_op old value", 10, old);
    E(MPI_Fetch_and_op(NULL, &old, MPI_LONG_LONG, mt_rank, 0, MPI_NO_OP, win));
    E(MPI_Win_flush(mt_rank, win));
    CHECK_INT("MPI_MIN result", 5, old);
    origin = 77;
    cmp = 4; /* does not match 5 */
    E(MPI_Compare_and_swap(&origin, &cmp, &old, MPI_LONG_LONG, mt_rank, 0, win));
    E(MPI_Win_flush(mt_rank, win));
    CHECK_INT("failed compare-and-swap returns the old value", 5, old);
    cmp = 5;
    E(MPI_Compare_and_swap(&origin, &cmp, &old, MPI_LONG_LONG, mt_rank, 0, win));
    E(MPI_Win_unlock(mt_rank, win));
    CHECK_INT("successful compare-and-swap returns the old value", 5, old);
    CHECK_INT("successful compare-and-swap stores", 77, mem[0]);
    CHECK_INT("MPI_PROD result [3]", 40 * 3, mem[3]);
    E(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    test_fetch_and_op_counter();
    test_exclusive_excludes();
    test_cas_mutex();
    test_lock_all_flush();
    test_request_ops();
    test_fetch_results();
    return mt_finish();
}
