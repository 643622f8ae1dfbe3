/* rma_local_immediate.c — RMA operations whose target memory the origin
 * reaches directly: its own window (created, allocated, dynamic) and every
 * member of a shared window (MPI_Win_allocate_shared).
 *
 * gridmpi performs those operations at once, as Open MPI and MPICH do: when
 * the call returns the target memory holds the result and the result buffer
 * holds the old data, so the origin and result buffers may be freed before
 * the fence, unlock, complete or request wait that ends the epoch (mpi4py's
 * test_rma frees them with MPI_Free_mem before MPI_Win_fence).  That promise
 * goes beyond the standard, which lets an implementation defer the
 * operations: it is checked for gridmpi only (PROMISE), and the other MPIs
 * run the same operations with the buffers freed after the epoch.
 *
 * For every implementation: put, get, accumulate, fetch_and_op,
 * compare_and_swap, get_accumulate and the request-based forms, in fence,
 * exclusive and shared lock, lock_all and post/start/complete/wait epochs;
 * accumulates stay atomic when immediate operations meet those of other
 * origins (every rank fetch-and-adds one counter: each old value seen once;
 * every rank accumulates into one array with large accumulates: no addition
 * lost);
 * an exclusive lock still excludes (read-modify-write by get + put under
 * MPI_LOCK_EXCLUSIVE loses no update, nor by loads and stores to a shared
 * window member, so the lock is held when MPI_Win_lock returns); a rank polling its own window with
 * MPI_Fetch_and_op + MPI_Win_flush sees another rank's put.  For gridmpi also:
 * a bad address on one's own dynamic window fails the call itself with
 * MPI_ERR_RMA_RANGE. */
#include "mpitest.h"

#define PROMISE (!MT_IS_OPENMPI && !MT_IS_MPICH)
/* A check of gridmpi's promise, right after the call returns. */
#define ON_RETURN(cond, ...)                                                   \
    do {                                                                       \
        if (PROMISE) CHECK(cond, __VA_ARGS__);                                 \
    } while (0)

enum { FENCE, LOCK_EXCLUSIVE, LOCK_SHARED, LOCK_ALL, PSCW, EPOCHS };
static const char *epoch_name[EPOCHS] = {"fence", "exclusive lock", "shared lock", "lock_all", "pscw"};

#define SLOTS 16

struct target {
    MPI_Win win;
    int self;       /* this process in the window's group */
    int rank;       /* the target in the window's group */
    int origin;     /* the rank that targets this process */
    MPI_Group to;   /* {rank}, for MPI_Win_start */
    MPI_Group from; /* {origin}, for MPI_Win_post */
    int *memory;    /* the target's window memory, as this process sees it (shared or own) */
    MPI_Aint disp0; /* displacement of slot 0 */
};

static void open_epoch(const struct target *t, int epoch)
{
    switch (epoch) {
    case FENCE: E(MPI_Win_fence(0, t->win)); break;
    case LOCK_EXCLUSIVE: E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t->rank, 0, t->win)); break;
    case LOCK_SHARED: E(MPI_Win_lock(MPI_LOCK_SHARED, t->rank, 0, t->win)); break;
    case LOCK_ALL: E(MPI_Win_lock_all(0, t->win)); break;
    case PSCW:
        E(MPI_Win_post(t->from, 0, t->win));
        E(MPI_Win_start(t->to, 0, t->win));
        break;
    }
}

static void close_epoch(const struct target *t, int epoch)
{
    switch (epoch) {
    case FENCE: E(MPI_Win_fence(MPI_MODE_NOSUCCEED, t->win)); break;
    case LOCK_EXCLUSIVE:
    case LOCK_SHARED: E(MPI_Win_unlock(t->rank, t->win)); break;
    case LOCK_ALL: E(MPI_Win_unlock_all(t->win)); break;
    case PSCW:
        E(MPI_Win_complete(t->win));
        E(MPI_Win_wait(t->win));
        break;
    }
}

static int *buffer(int n)
{
    int *p = NULL;
    E(MPI_Alloc_mem((MPI_Aint)(n * sizeof(int)), MPI_INFO_NULL, &p));
    return p;
}

/* Buffers freed right after their call (gridmpi) or after the epoch. */
static int *to_free[32];
static int n_to_free;

static void done_with(int *p)
{
    if (PROMISE)
        E(MPI_Free_mem(p));
    else
        to_free[n_to_free++] = p;
}

/* A result buffer: read and freed right after its call (gridmpi) or after
 * the epoch. */
struct result {
    int *buf;
    int n;
    int value[3];
};

static int *result_buffer(struct result *r, int n)
{
    int i;
    r->buf = buffer(n);
    r->n = n;
    for (i = 0; i < n; ++i) r->buf[i] = r->value[i] = -1;
    return r->buf;
}

static void settle(struct result *r)
{
    int i;
    if (!r->buf) return;
    for (i = 0; i < r->n; ++i) r->value[i] = r->buf[i];
    E(MPI_Free_mem(r->buf));
    r->buf = NULL;
}

/* Makes the window memory stores of this process and the others' seen
 * (with a barrier around it). */
static void sync_memory(MPI_Win win)
{
    E(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    E(MPI_Win_sync(win));
    E(MPI_Win_unlock_all(win));
}

/* Stores of this process to its own window memory (outside any epoch). */
static void preset(int *mine)
{
    int i;
    for (i = 0; i < SLOTS; ++i) mine[i] = 100 + i;
}

/* The value slot i must hold after the epoch. */
static int expected_slot(int i, int request_forms)
{
    switch (i) {
    case 0: return 7001;              /* put */
    case 1: return 101;               /* get: unchanged */
    case 2: return 102 + 3;           /* accumulate SUM 3 */
    case 3: return 103 + 2;           /* fetch_and_op SUM 2 */
    case 4: return 4000;              /* compare_and_swap 104 -> 4000 */
    case 5: case 6: case 7: return (100 + i) * 2; /* get_accumulate PROD 2 */
    case 8: return request_forms ? 8008 : 108;     /* rput */
    case 9: return 109;                            /* rget: unchanged */
    case 10: return request_forms ? 110 + 5 : 110; /* raccumulate SUM 5 */
    case 11: return request_forms ? 111 * 3 : 111; /* rget_accumulate PROD 3 */
    default: return 100 + i;
    }
}

/* One epoch of every operation on one target; checks right after each call
 * (gridmpi) and, after the epoch, the target memory (by its owner) and the
 * results. */
static void operations(const struct target *t, int epoch, int *mine)
{
    int *o, *c, i, request_forms = epoch != FENCE && epoch != PSCW;
    struct result get = {0}, fetch = {0}, cas = {0}, getacc = {0}, rget = {0}, rgetacc = {0};
    const char *name = epoch_name[epoch];
    MPI_Request req;
    MPI_Aint d = t->disp0;
    n_to_free = 0;

    open_epoch(t, epoch);

    o = buffer(1);
    o[0] = 7001;
    E(MPI_Put(o, 1, MPI_INT, t->rank, d + 0, 1, MPI_INT, t->win));
    ON_RETURN(t->memory[0] == 7001, "%s: MPI_Put on a local target: target holds %d on return", name,
              t->memory[0]);
    done_with(o);

    E(MPI_Get(result_buffer(&get, 1), 1, MPI_INT, t->rank, d + 1, 1, MPI_INT, t->win));
    if (PROMISE) settle(&get);

    o = buffer(1);
    o[0] = 3;
    E(MPI_Accumulate(o, 1, MPI_INT, t->rank, d + 2, 1, MPI_INT, MPI_SUM, t->win));
    ON_RETURN(t->memory[2] == 105, "%s: MPI_Accumulate on a local target: target holds %d on return", name,
              t->memory[2]);
    done_with(o);

    /* mpi4py's TestRMASelf.testFetchAndOp: both buffers freed before the epoch ends */
    o = buffer(1);
    o[0] = 2;
    E(MPI_Fetch_and_op(o, result_buffer(&fetch, 1), MPI_INT, t->rank, d + 3, MPI_SUM, t->win));
    if (PROMISE) {
        settle(&fetch);
        CHECK(t->memory[3] == 105, "%s: MPI_Fetch_and_op on a local target: target holds %d on return", name,
              t->memory[3]);
    }
    done_with(o);

    o = buffer(1);
    c = buffer(1);
    o[0] = 4000;
    c[0] = 104;
    E(MPI_Compare_and_swap(o, c, result_buffer(&cas, 1), MPI_INT, t->rank, d + 4, t->win));
    if (PROMISE) {
        settle(&cas);
        CHECK(t->memory[4] == 4000, "%s: MPI_Compare_and_swap on a local target: target holds %d on return", name,
              t->memory[4]);
    }
    done_with(o);
    done_with(c);

    o = buffer(3);
    for (i = 0; i < 3; ++i) o[i] = 2;
    E(MPI_Get_accumulate(o, 3, MPI_INT, result_buffer(&getacc, 3), 3, MPI_INT, t->rank, d + 5, 3, MPI_INT, MPI_PROD,
                         t->win));
    if (PROMISE) {
        settle(&getacc);
        for (i = 0; i < 3; ++i)
            CHECK(t->memory[5 + i] == (105 + i) * 2,
                  "%s: MPI_Get_accumulate on a local target: target[%d] holds %d on return", name, i, t->memory[5 + i]);
    }
    done_with(o);

    if (request_forms) {
        o = buffer(1);
        o[0] = 8008;
        E(MPI_Rput(o, 1, MPI_INT, t->rank, d + 8, 1, MPI_INT, t->win, &req));
        ON_RETURN(t->memory[8] == 8008, "%s: MPI_Rput on a local target: target holds %d on return", name,
                  t->memory[8]);
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        done_with(o);

        E(MPI_Rget(result_buffer(&rget, 1), 1, MPI_INT, t->rank, d + 9, 1, MPI_INT, t->win, &req));
        ON_RETURN(rget.buf[0] == 109, "%s: MPI_Rget on a local target: result %d on return", name,
                  rget.buf[0]);
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        settle(&rget);

        o = buffer(1);
        o[0] = 5;
        E(MPI_Raccumulate(o, 1, MPI_INT, t->rank, d + 10, 1, MPI_INT, MPI_SUM, t->win, &req));
        ON_RETURN(t->memory[10] == 115, "%s: MPI_Raccumulate on a local target: target holds %d on return", name,
                  t->memory[10]);
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        done_with(o);

        o = buffer(1);
        o[0] = 3;
        E(MPI_Rget_accumulate(o, 1, MPI_INT, result_buffer(&rgetacc, 1), 1, MPI_INT, t->rank, d + 11, 1, MPI_INT,
                              MPI_PROD, t->win, &req));
        ON_RETURN(rgetacc.buf[0] == 111, "%s: MPI_Rget_accumulate on a local target: result %d on return", name,
                  rgetacc.buf[0]);
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        settle(&rgetacc);
        done_with(o);
    }

    close_epoch(t, epoch);
    for (i = 0; i < n_to_free; ++i) E(MPI_Free_mem(to_free[i]));
    settle(&get);
    settle(&fetch);
    settle(&cas);
    settle(&getacc);

    /* on return (gridmpi) or after the epoch (the others) */
    CHECK(get.value[0] == 101, "%s: MPI_Get result %d, expected 101", name, get.value[0]);
    CHECK(fetch.value[0] == 103, "%s: MPI_Fetch_and_op result %d, expected 103", name, fetch.value[0]);
    CHECK(cas.value[0] == 104, "%s: MPI_Compare_and_swap result %d, expected 104", name, cas.value[0]);
    for (i = 0; i < 3; ++i)
        CHECK(getacc.value[i] == 105 + i, "%s: MPI_Get_accumulate result[%d] %d, expected %d", name, i,
              getacc.value[i], 105 + i);
    if (request_forms) {
        CHECK(rget.value[0] == 109, "%s: MPI_Rget result %d, expected 109", name, rget.value[0]);
        CHECK(rgetacc.value[0] == 111, "%s: MPI_Rget_accumulate result %d, expected 111", name, rgetacc.value[0]);
    }
    /* every process checks its own memory once its origin is done */
    mt_barrier();
    sync_memory(t->win);
    for (i = 0; i < SLOTS; ++i)
        CHECK(mine[i] == expected_slot(i, request_forms), "%s: slot %d of the window holds %d, expected %d", name,
              i, mine[i], expected_slot(i, request_forms));
    mt_barrier();
}

static void every_epoch(struct target *t, int *mine)
{
    MPI_Group group;
    int epoch;
    E(MPI_Win_get_group(t->win, &group));
    E(MPI_Group_incl(group, 1, &t->rank, &t->to));
    E(MPI_Group_incl(group, 1, &t->origin, &t->from));
    E(MPI_Group_free(&group));
    for (epoch = 0; epoch < EPOCHS; ++epoch) {
        E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t->self, 0, t->win));
        preset(mine);
        E(MPI_Win_unlock(t->self, t->win));
        mt_barrier();
        operations(t, epoch, mine);
    }
    E(MPI_Group_free(&t->to));
    E(MPI_Group_free(&t->from));
}

/* Every operation on one's own window, of each flavour but shared. */
static void own_windows(void)
{
    struct target t;
    int *mine;
    memset(&t, 0, sizeof t);
    t.self = t.rank = t.origin = mt_rank;

    E(MPI_Win_allocate(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &t.win));
    t.memory = mine;
    every_epoch(&t, mine);
    E(MPI_Win_free(&t.win));

    mine = buffer(SLOTS);
    E(MPI_Win_create(mine, SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &t.win));
    t.memory = mine;
    every_epoch(&t, mine);
    E(MPI_Win_free(&t.win));

    /* dynamic: displacements are addresses (disp_unit 1), so whole ints */
    E(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &t.win));
    E(MPI_Win_attach(t.win, mine, SLOTS * sizeof(int)));
    E(MPI_Get_address(mine, &t.disp0));
    t.memory = mine;
    {
        /* the slot displacements of operations() count ints: run them on
         * an int-sized unit by hand for the dynamic window */
        int epoch, one = 1, got = -1, rc;
        for (epoch = LOCK_EXCLUSIVE; epoch <= LOCK_SHARED; ++epoch) {
            mine[0] = 5;
            E(MPI_Win_lock(epoch == LOCK_EXCLUSIVE ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t.self, 0, t.win));
            E(MPI_Fetch_and_op(&one, &got, MPI_INT, t.self, t.disp0 + (MPI_Aint)sizeof(int), MPI_SUM, t.win));
            E(MPI_Put(&one, 1, MPI_INT, t.self, t.disp0, 1, MPI_INT, t.win));
            if (PROMISE) {
                CHECK_INT("dynamic window: MPI_Fetch_and_op result on return", 101, got);
                CHECK_INT("dynamic window: MPI_Put on return", 1, mine[0]);
            }
            E(MPI_Win_unlock(t.self, t.win));
            CHECK_INT("dynamic window: MPI_Fetch_and_op result", 101, got);
            CHECK_INT("dynamic window: MPI_Put", 1, mine[0]);
            CHECK_INT("dynamic window: MPI_Fetch_and_op target", 102, mine[1]);
            mine[1] = 101;
        }
        if (PROMISE) {
            /* an address outside the attached memory: the call itself fails */
            E(MPI_Win_set_errhandler(t.win, MPI_ERRORS_RETURN));
            E(MPI_Win_lock(MPI_LOCK_SHARED, t.self, 0, t.win));
            rc = MPI_Put(&one, 1, MPI_INT, t.self, t.disp0 + SLOTS * (MPI_Aint)sizeof(int), 1, MPI_INT, t.win);
            CHECK_INT("dynamic window: MPI_Put past the attached memory of one's own window", MPI_ERR_RMA_RANGE,
                      mt_class(rc));
            E(MPI_Win_unlock(t.self, t.win));
        }
    }
    E(MPI_Win_detach(t.win, mine));
    E(MPI_Win_free(&t.win));
    E(MPI_Free_mem(mine));
}

/* Every operation on the next member of a shared window. */
static void shared_window(MPI_Comm shm)
{
    struct target t;
    int *mine, size, unit;
    MPI_Aint bytes;
    memset(&t, 0, sizeof t);
    E(MPI_Comm_rank(shm, &t.self));
    E(MPI_Comm_size(shm, &size));
    t.rank = (t.self + 1) % size;
    t.origin = (t.self + size - 1) % size;
    E(MPI_Win_allocate_shared(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, shm, &mine, &t.win));
    E(MPI_Win_shared_query(t.win, t.rank, &bytes, &unit, &t.memory));
    every_epoch(&t, mine);
    E(MPI_Win_free(&t.win));
}

#define ROUNDS 32

static int compare_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Every member fetch-and-adds 1 to member 0's counter ROUNDS times: the
 * counter ends at size * ROUNDS and every old value is seen exactly once. */
static void counter_is_atomic(MPI_Win win, MPI_Comm comm, int *counter, const char *what)
{
    int rank, size, i, one = 1, seen[ROUNDS], *all = NULL;
    E(MPI_Comm_rank(comm, &rank));
    E(MPI_Comm_size(comm, &size));
    E(MPI_Win_lock_all(0, win));
    for (i = 0; i < ROUNDS; ++i) {
        E(MPI_Fetch_and_op(&one, &seen[i], MPI_INT, 0, 0, MPI_SUM, win));
        E(MPI_Win_flush(0, win));
    }
    E(MPI_Win_unlock_all(win));
    if (rank == 0) all = malloc((size_t)size * ROUNDS * sizeof(int));
    E(MPI_Gather(seen, ROUNDS, MPI_INT, all, ROUNDS, MPI_INT, 0, comm));
    E(MPI_Barrier(comm));
    if (rank == 0) {
        sync_memory(win);
        CHECK(*counter == size * ROUNDS, "%s: fetch_and_op counter %d, expected %d", what, *counter, size * ROUNDS);
        qsort(all, (size_t)size * ROUNDS, sizeof(int), compare_ints);
        for (i = 0; i < size * ROUNDS; ++i)
            if (all[i] != i) {
                MT_FAIL("%s: fetch_and_op old values: position %d holds %d (an old value seen twice or never)",
                        what, i, all[i]);
                break;
            }
        free(all);
    }
    E(MPI_Barrier(comm)); /* the counter is checked before anyone goes on */
}

/* Every member adds 1 to each of member 0's ELEMENTS counters ACC_ROUNDS
 * times with large accumulates (long enough to overlap one another): no
 * addition is lost. */
#define ELEMENTS 4096
#define ACC_ROUNDS 256

static void accumulate_is_atomic(MPI_Win win, MPI_Comm comm, int *counters, const char *what)
{
    int rank, size, i, *ones = malloc(ELEMENTS * sizeof(int));
    E(MPI_Comm_rank(comm, &rank));
    E(MPI_Comm_size(comm, &size));
    for (i = 0; i < ELEMENTS; ++i) ones[i] = 1;
    E(MPI_Win_lock_all(0, win));
    for (i = 0; i < ACC_ROUNDS; ++i) E(MPI_Accumulate(ones, ELEMENTS, MPI_INT, 0, 0, ELEMENTS, MPI_INT, MPI_SUM, win));
    E(MPI_Win_unlock_all(win));
    E(MPI_Barrier(comm));
    if (rank == 0) {
        sync_memory(win);
        for (i = 0; i < ELEMENTS; ++i)
            if (counters[i] != size * ACC_ROUNDS) {
                MT_FAIL("%s: accumulate counter %d holds %d, expected %d", what, i, counters[i], size * ACC_ROUNDS);
                break;
            }
    }
    E(MPI_Barrier(comm));
    free(ones);
}

/* Read-modify-write by get + put, each under an exclusive lock of member 0:
 * no update is lost. */
static void exclusive_lock_excludes(MPI_Win win, MPI_Comm comm, int *counter, const char *what)
{
    int rank, size, i, value;
    E(MPI_Comm_rank(comm, &rank));
    E(MPI_Comm_size(comm, &size));
    for (i = 0; i < ROUNDS; ++i) {
        E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        E(MPI_Get(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        E(MPI_Win_flush(0, win));
        ++value;
        E(MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        E(MPI_Win_unlock(0, win));
    }
    E(MPI_Barrier(comm));
    if (rank == 0) {
        sync_memory(win);
        CHECK(*counter == 2 * size * ROUNDS, "%s: counter after get+put under exclusive locks %d, expected %d",
              what, *counter, 2 * size * ROUNDS);
    }
    E(MPI_Barrier(comm));
}

/* Loads and stores to member 0's memory of a shared window, each
 * read-modify-write under an exclusive lock of member 0 (MPI-3.1 11.5.3:
 * locks protect load/store accesses to a shared memory window): no update
 * is lost, so the lock is held when MPI_Win_lock returns. */
static void exclusive_lock_protects_stores(MPI_Win win, MPI_Comm comm, int *counter, int before)
{
    int rank, size, i, unit, *at, value;
    MPI_Aint bytes;
    E(MPI_Comm_rank(comm, &rank));
    E(MPI_Comm_size(comm, &size));
    E(MPI_Win_shared_query(win, 0, &bytes, &unit, &at));
    for (i = 0; i < ROUNDS; ++i) {
        E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        E(MPI_Win_sync(win));
        value = *at;
        mt_sleep_ms(1); /* another process's store would fall in here */
        *at = value + 1;
        E(MPI_Win_sync(win));
        E(MPI_Win_unlock(0, win));
    }
    E(MPI_Barrier(comm));
    if (rank == 0) {
        sync_memory(win);
        CHECK(*counter == before + size * ROUNDS,
              "shared window: counter after loads and stores under exclusive locks %d, expected %d", *counter,
              before + size * ROUNDS);
    }
    E(MPI_Barrier(comm));
}

static void atomicity(MPI_Comm shm)
{
    MPI_Win win;
    int *counter;
    E(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, shm, &counter, &win));
    *counter = 0;
    sync_memory(win);
    E(MPI_Barrier(shm));
    counter_is_atomic(win, shm, counter, "shared window");
    exclusive_lock_excludes(win, shm, counter, "shared window");
    {
        int size;
        E(MPI_Comm_size(shm, &size));
        exclusive_lock_protects_stores(win, shm, counter, 2 * size * ROUNDS);
    }
    E(MPI_Win_free(&win));

    E(MPI_Win_allocate_shared(ELEMENTS * sizeof(int), sizeof(int), MPI_INFO_NULL, shm, &counter, &win));
    memset(counter, 0, ELEMENTS * sizeof(int));
    sync_memory(win);
    E(MPI_Barrier(shm));
    accumulate_is_atomic(win, shm, counter, "shared window");
    E(MPI_Win_free(&win));

    /* member 0's own operations are immediate, the others' are applied by
     * its server */
    E(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win));
    E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
    *counter = 0;
    E(MPI_Win_unlock(mt_rank, win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    counter_is_atomic(win, MPI_COMM_WORLD, counter, "allocated window");
    exclusive_lock_excludes(win, MPI_COMM_WORLD, counter, "allocated window");
    E(MPI_Win_free(&win));
}

/* The last rank puts a flag into rank 0's window while rank 0 polls its
 * own window: immediate operations still serve the others. */
static void polling_own_window(void)
{
    MPI_Win win;
    int *flag, one = 1, seen = 0, zero = 0, polls = 0;
    E(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &flag, &win));
    E(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
    *flag = 0;
    E(MPI_Win_unlock(mt_rank, win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        int writer = mt_size - 1;
        if (writer == 0) seen = 1;
        else
            E(MPI_Send(&zero, 1, MPI_INT, writer, 1, MPI_COMM_WORLD));
        E(MPI_Win_lock_all(0, win));
        while (!seen) {
            E(MPI_Fetch_and_op(NULL, &seen, MPI_INT, 0, 0, MPI_NO_OP, win));
            E(MPI_Win_flush(0, win));
            ++polls;
        }
        E(MPI_Win_unlock_all(win));
    } else if (mt_rank == mt_size - 1) {
        E(MPI_Recv(&zero, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        E(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        E(MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        E(MPI_Win_unlock(0, win));
    }
    E(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Comm shm;
    mt_init(&argc, &argv);
    own_windows();
    E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    shared_window(shm);
    atomicity(shm);
    polling_own_window();
    E(MPI_Comm_free(&shm));
    return mt_finish();
}
