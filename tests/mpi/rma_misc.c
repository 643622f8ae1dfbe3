/* rma_misc.c — windows beyond the data path: MPI_Win_allocate memory,
 * the predefined window attributes, user keyvals (the delete callback runs
 * at MPI_Win_free), names, MPI_Win_get_group, error handlers and the error
 * classes of bad RMA calls, post/start/complete/wait (and MPI_Win_test), and
 * dynamic windows (attach / detach), window hints (MPI_Win_get_info), and
 * operations that move no data (any types). */
#include "mpitest.h"

static int deleted = 0;
static int delete_fn(MPI_Win win, int keyval, void *value, void *extra)
{
    (void)win;
    (void)keyval;
    (void)extra;
    deleted = *(int *)value;
    return MPI_SUCCESS;
}

static int handler_calls = 0, handler_code = 0;
static void win_handler(MPI_Win *win, int *code, ...)
{
    (void)win;
    ++handler_calls;
    handler_code = *code;
}

static void test_attributes(void)
{
    MPI_Win win;
    int *base = NULL, flag = 0, keyval, value = 42, result, len;
    void *attr = NULL;
    MPI_Group wgroup, cgroup;
    char name[MPI_MAX_OBJECT_NAME];
    E(MPI_Win_allocate(10 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK(base != NULL, "MPI_Win_allocate returned no memory");
    base[9] = 5; /* the memory is ours */
    E(MPI_Win_get_attr(win, MPI_WIN_BASE, &attr, &flag));
    /* MPICH 4.0.2 (ch4, shared-memory MPI_Win_allocate) answers another
     * address than the one MPI_Win_allocate returned on ranks > 0. */
    CHECK(flag && (attr == (void *)base || MT_IS_MPICH), "MPI_WIN_BASE: flag %d", flag);
    E(MPI_Win_get_attr(win, MPI_WIN_SIZE, &attr, &flag));
    CHECK(flag, "MPI_WIN_SIZE not set");
    if (flag) CHECK_INT("MPI_WIN_SIZE", 10 * sizeof(int), *(MPI_Aint *)attr);
    E(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &attr, &flag));
    if (flag) CHECK_INT("MPI_WIN_DISP_UNIT", sizeof(int), *(int *)attr);
    E(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &attr, &flag));
    if (flag) CHECK_INT("MPI_WIN_CREATE_FLAVOR", MPI_WIN_FLAVOR_ALLOCATE, *(int *)attr);
    E(MPI_Win_get_attr(win, MPI_WIN_MODEL, &attr, &flag));
    CHECK(flag && (*(int *)attr == MPI_WIN_SEPARATE || *(int *)attr == MPI_WIN_UNIFIED), "MPI_WIN_MODEL");

    E(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_fn, &keyval, NULL));
    E(MPI_Win_set_attr(win, keyval, &value));
    E(MPI_Win_get_attr(win, keyval, &attr, &flag));
    CHECK(flag && attr == &value, "user window attribute read back");

    E(MPI_Win_set_name(win, "my window"));
    E(MPI_Win_get_name(win, name, &len));
    CHECK_STR("window name", "my window", name);
    CHECK_INT("name length", 9, len);

    E(MPI_Win_get_group(win, &wgroup));
    E(MPI_Comm_group(MPI_COMM_WORLD, &cgroup));
    E(MPI_Group_compare(wgroup, cgroup, &result));
    CHECK_INT("window group is the communicator's", MPI_IDENT, result);
    E(MPI_Group_free(&wgroup));
    E(MPI_Group_free(&cgroup));

    E(MPI_Win_free(&win));
    CHECK_INT("delete callback ran at MPI_Win_free", 42, deleted);
    E(MPI_Win_free_keyval(&keyval));
}

static void test_errors(void)
{
    MPI_Win win;
    int buf[4] = {0, 0, 0, 0}, one = 1, rc, cls;
    MPI_Errhandler eh;
    E(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    E(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    E(MPI_Win_fence(0, win));
    rc = MPI_Put(&one, 1, MPI_INT, mt_size, 0, 1, MPI_INT, win);
    E(MPI_Error_class(rc, &cls));
    CHECK_INT("MPI_Put to rank size", MPI_ERR_RANK, cls);
    rc = MPI_Put(&one, 1, MPI_INT, 0, 4, 1, MPI_INT, win);
    E(MPI_Error_class(rc, &cls));
    /* beyond the target window: MPI-3.1 names MPI_ERR_RMA_RANGE for
     * "target memory is not part of the window" */
    if (!MT_IS_OPENMPI && !MT_IS_MPICH)
        CHECK_INT("MPI_Put beyond the window", MPI_ERR_RMA_RANGE, cls);
    E(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* outside any epoch */
    rc = MPI_Win_unlock(0, win);
    E(MPI_Error_class(rc, &cls));
    CHECK_INT("MPI_Win_unlock without a lock", MPI_ERR_RMA_SYNC, cls);
    if (!MT_IS_OPENMPI) { /* Open MPI 4.1's pt2pt component does not check */
        rc = MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        E(MPI_Error_class(rc, &cls));
        CHECK_INT("MPI_Put outside an epoch", MPI_ERR_RMA_SYNC, cls);
    }

    /* a user handler gets the window's errors */
    E(MPI_Win_create_errhandler(win_handler, &eh));
    E(MPI_Win_set_errhandler(win, eh));
    E(MPI_Errhandler_free(&eh));
    rc = MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    CHECK_INT("MPI_Win_call_errhandler returns success", MPI_SUCCESS, rc);
    CHECK_INT("handler calls", 1, handler_calls);
    CHECK_INT("handler code", MPI_ERR_OTHER, handler_code);
    E(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win); /* locked twice: an error */
    CHECK_INT("handler called for a second lock", 2, handler_calls);
    E(MPI_Error_class(handler_code, &cls));
    /* the standard names no class; Open MPI says MPI_ERR_RMA_CONFLICT */
    CHECK(cls == MPI_ERR_RMA_SYNC || cls == MPI_ERR_RMA_CONFLICT, "second lock's class: got %d", cls);
    E(MPI_Win_unlock(0, win));
    E(MPI_Win_get_errhandler(win, &eh));
    E(MPI_Errhandler_free(&eh));
    E(MPI_Win_free(&win));
}

/* post/start/complete/wait on a ring: rank r exposes to r-1, accesses r+1 */
static void test_pscw(void)
{
    MPI_Win win;
    MPI_Group world, to_group, from_group;
    /* 16 bytes at least: MPICH 4.0.2 (Debian 12) loses RMA to windows
     * smaller than that (they alias rank 0's memory). */
    int buf[4] = {-1, -1, -1, -1}, right = (mt_rank + 1) % mt_size, left = (mt_rank - 1 + mt_size) % mt_size;
    int v[2], round, flag;
    E(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    E(MPI_Comm_group(MPI_COMM_WORLD, &world));
    E(MPI_Group_incl(world, 1, &right, &to_group));
    E(MPI_Group_incl(world, 1, &left, &from_group));
    for (round = 0; round < 3; ++round) {
        v[0] = mt_rank * 10 + round;
        v[1] = round;
        E(MPI_Win_post(from_group, 0, win));
        E(MPI_Win_start(to_group, 0, win));
        E(MPI_Put(v, 2, MPI_INT, right, 0, 2, MPI_INT, win));
        E(MPI_Win_complete(win));
        if (round == 1) {
            flag = 0;
            while (!flag) E(MPI_Win_test(win, &flag));
        } else {
            E(MPI_Win_wait(win));
        }
        CHECK_INT("PSCW put from the left", left * 10 + round, buf[0]);
        CHECK_INT("PSCW round", round, buf[1]);
    }
    E(MPI_Group_free(&world));
    E(MPI_Group_free(&to_group));
    E(MPI_Group_free(&from_group));
    E(MPI_Win_free(&win));
}

static void test_dynamic(void)
{
    MPI_Win win;
    int *mem = malloc(4 * sizeof(int)), i, right = (mt_rank + 1) % mt_size, v[2];
    MPI_Aint mine, *addrs = malloc(sizeof(MPI_Aint) * mt_size);
    E(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (i = 0; i < 4; ++i) mem[i] = -1;
    E(MPI_Win_attach(win, mem, 4 * sizeof(int)));
    E(MPI_Get_address(mem, &mine));
    E(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    v[0] = mt_rank;
    v[1] = mt_rank + 100;
    E(MPI_Win_lock_all(0, win));
    E(MPI_Put(v, 2, MPI_INT, right, MPI_Aint_add(addrs[right], sizeof(int)), 2, MPI_INT, win));
    E(MPI_Win_unlock_all(win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
    {
        int left = (mt_rank - 1 + mt_size) % mt_size;
        CHECK_INT("dynamic window [0] untouched", -1, mem[0]);
        CHECK_INT("dynamic window [1]", left, mem[1]);
        CHECK_INT("dynamic window [2]", left + 100, mem[2]);
    }
    E(MPI_Win_unlock(mt_rank, win));
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Win_detach(win, mem));
    E(MPI_Win_free(&win));
    free(mem);
    free(addrs);
}

/* operations that move no data are valid whatever their (committed) types */
static void test_zero_size(void)
{
    MPI_Win win;
    int buf[4] = {1, 2, 3, 4}, result[4], right = (mt_rank + 1) % mt_size, i;
    MPI_Datatype empty;
    E(MPI_Type_contiguous(0, MPI_INT, &empty));
    E(MPI_Type_commit(&empty));
    E(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    E(MPI_Win_fence(0, win));
    E(MPI_Accumulate(result, 0, MPI_INT, right, 0, 0, MPI_INT, MPI_SUM, win));
    /* Open MPI 4.1.4 (pt2pt osc) rejects empty accumulates of unlike types */
    if (!MT_IS_OPENMPI) {
        E(MPI_Accumulate(result, 0, MPI_INT, right, 0, 0, MPI_DOUBLE, MPI_SUM, win));
        E(MPI_Accumulate(result, 1, empty, right, 0, 0, MPI_DOUBLE, MPI_SUM, win));
        E(MPI_Get_accumulate(result, 0, MPI_DOUBLE, result, 0, MPI_INT, right, 0, 1, empty, MPI_SUM, win));
    }
    E(MPI_Put(result, 2, empty, right, 0, 0, MPI_INT, win));
    E(MPI_Get(result, 0, MPI_INT, right, 0, 3, empty, win));
    E(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (i = 0; i < 4; ++i) CHECK_INT("window untouched by empty operations", i + 1, buf[i]);
    E(MPI_Win_free(&win));
    E(MPI_Type_free(&empty));
}

static void check_hint(MPI_Win win, const char *key, const char *expected)
{
    MPI_Info used;
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    E(MPI_Win_get_info(win, &used));
    E(MPI_Info_get(used, key, MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && strcmp(value, expected) == 0, "window hint %s: expected %s, got %s", key, expected,
          flag ? value : "(absent)");
    E(MPI_Info_free(&used));
}

/* the hints of MPI-3.1 11.2.1 given at creation or by MPI_Win_set_info are
 * reported by MPI_Win_get_info */
static void test_info(void)
{
    MPI_Win win;
    MPI_Info hints;
    int *base = NULL;
    E(MPI_Info_create(&hints));
    E(MPI_Info_set(hints, "no_locks", "true"));
    E(MPI_Win_allocate(4 * sizeof(int), sizeof(int), hints, MPI_COMM_WORLD, &base, &win));
    E(MPI_Info_free(&hints));
    check_hint(win, "no_locks", "true");
    /* the standard's default, which gridmpi and MPICH report */
    if (!MT_IS_OPENMPI) check_hint(win, "accumulate_ordering", "rar,raw,war,waw");
    E(MPI_Info_create(&hints));
    E(MPI_Info_set(hints, "accumulate_ordering", "none"));
    E(MPI_Win_set_info(win, hints));
    E(MPI_Info_free(&hints));
    /* Open MPI 4.1.4 (pt2pt osc) does not report hints set by MPI_Win_set_info */
    if (!MT_IS_OPENMPI) check_hint(win, "accumulate_ordering", "none");
    E(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    test_attributes();
    test_errors();
    test_pscw();
    test_dynamic();
    test_info();
    test_zero_size();
    return mt_finish();
}
