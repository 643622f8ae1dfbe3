/* Environment inquiry: Initialized/Finalized around Init and Finalize,
 * Get_version, Get_library_version, Get_processor_name, Wtime/Wtick,
 * Alloc_mem/Free_mem, the predefined attributes of MPI_COMM_WORLD,
 * Query_thread/Is_thread_main, Comm_size/Comm_rank, MPI_COMM_SELF attribute
 * deleted by MPI_Finalize. */
#include "mpitest.h"

static int self_deleted = 0;

static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    *(int *)val += 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int flag = -1, version = -1, subversion = -1, len = -1, provided = -1;
    char name[MPI_MAX_PROCESSOR_NAME + 1];
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    double t0, t1, tick;
    int i;

    /* Allowed before MPI_Init. */
    E(MPI_Initialized(&flag));
    CHECK_INT("MPI_Initialized before MPI_Init", 0, flag);
    flag = -1;
    E(MPI_Finalized(&flag));
    CHECK_INT("MPI_Finalized before MPI_Init", 0, flag);
    E(MPI_Get_version(&version, &subversion));
    CHECK(version > 3 || (version == 3 && subversion >= 1),
          "MPI_Get_version before MPI_Init, expected >= 3.1 got %d.%d", version, subversion);

    mt_init(&argc, &argv);

    flag = -1;
    E(MPI_Initialized(&flag));
    CHECK_INT("MPI_Initialized after MPI_Init", 1, flag);
    flag = -1;
    E(MPI_Finalized(&flag));
    CHECK_INT("MPI_Finalized after MPI_Init", 0, flag);

    version = subversion = -1;
    E(MPI_Get_version(&version, &subversion));
    CHECK_INT("MPI_Get_version version vs MPI_VERSION", MPI_VERSION, version);
    CHECK_INT("MPI_Get_version subversion vs MPI_SUBVERSION", MPI_SUBVERSION, subversion);
    CHECK(version > 3 || (version == 3 && subversion >= 1),
          "MPI_Get_version, expected >= 3.1 got %d.%d", version, subversion);

    memset(lib, 'x', sizeof lib);
    len = -1;
    E(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING,
          "MPI_Get_library_version resultlen, expected 1..%d got %d",
          MPI_MAX_LIBRARY_VERSION_STRING - 1, len);
    /* "the number of characters actually written": with or without the
     * terminating NUL (Open MPI counts it). */
    if (len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING)
        CHECK(len == (int)strlen(lib) || len == (int)strlen(lib) + 1,
              "MPI_Get_library_version resultlen, expected strlen %d (or +1) got %d", (int)strlen(lib), len);

    memset(name, 'x', sizeof name);
    len = -1;
    E(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME,
          "MPI_Get_processor_name resultlen, expected 1..%d got %d", MPI_MAX_PROCESSOR_NAME - 1, len);
    if (len > 0 && len < MPI_MAX_PROCESSOR_NAME)
        CHECK_INT("MPI_Get_processor_name strlen == resultlen", len, (int)strlen(name));

    /* Wtime never goes backwards and advances; Wtick is positive and small. */
    tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick <= 1e-3, "MPI_Wtick, expected in (0, 1e-3] got %g", tick);
    t0 = MPI_Wtime();
    for (i = 0; i < 100000; ++i) {
        t1 = MPI_Wtime();
        if (t1 < t0) {
            MT_FAIL("MPI_Wtime monotonic, expected >= %.9f got %.9f", t0, t1);
            break;
        }
        t0 = t1;
    }
    t0 = MPI_Wtime();
    mt_sleep_ms(20);
    t1 = MPI_Wtime();
    CHECK(t1 - t0 >= 0.015 && t1 - t0 < 5.0,
          "MPI_Wtime across a 20 ms sleep, expected ~0.02 s got %g s", t1 - t0);

    /* Alloc_mem gives usable memory; Free_mem takes it back. */
    {
        char *mem = NULL;
        E(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem));
        CHECK(mem != NULL, "MPI_Alloc_mem(1 MiB), expected a pointer got NULL");
        if (mem) {
            memset(mem, 0x5a, 1 << 20);
            CHECK_INT("MPI_Alloc_mem memory writable", 0x5a, (unsigned char)mem[(1 << 20) - 1]);
            E(MPI_Free_mem(mem));
        }
        mem = NULL;
        E(MPI_Alloc_mem(0, MPI_INFO_NULL, &mem));
        if (mem)
            E(MPI_Free_mem(mem));
    }

    /* Predefined attributes of MPI_COMM_WORLD. */
    {
        int *val = NULL;
        flag = 0;
        E(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag));
        CHECK_INT("MPI_TAG_UB attribute flag", 1, flag);
        if (flag && val)
            CHECK(*val >= 32767, "MPI_TAG_UB, expected >= 32767 got %d", *val);
        flag = 0;
        val = NULL;
        E(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &val, &flag));
        CHECK_INT("MPI_HOST attribute flag", 1, flag);
        if (flag && val)
            CHECK(*val == MPI_PROC_NULL || (*val >= 0 && *val < mt_size),
                  "MPI_HOST, expected MPI_PROC_NULL or a rank got %d", *val);
        flag = 0;
        val = NULL;
        E(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &val, &flag));
        CHECK_INT("MPI_IO attribute flag", 1, flag);
        if (flag && val)
            CHECK(*val == MPI_PROC_NULL || *val == MPI_ANY_SOURCE || (*val >= 0 && *val < mt_size),
                  "MPI_IO, expected MPI_PROC_NULL, MPI_ANY_SOURCE or a rank got %d", *val);
        flag = 0;
        val = NULL;
        E(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag));
        if (flag && val)
            CHECK(*val == 0 || *val == 1, "MPI_WTIME_IS_GLOBAL, expected 0 or 1 got %d", *val);
        /* The deprecated MPI-1 spelling gives the same value. */
        flag = 0;
        val = NULL;
        E(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag));
        CHECK_INT("MPI_Attr_get(MPI_TAG_UB) flag", 1, flag);
        if (flag && val)
            CHECK(*val >= 32767, "MPI_Attr_get(MPI_TAG_UB), expected >= 32767 got %d", *val);
    }

    /* Plain MPI_Init: thread level queries are consistent. */
    E(MPI_Query_thread(&provided));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
          "MPI_Query_thread after MPI_Init, expected a thread level got %d", provided);
    flag = -1;
    E(MPI_Is_thread_main(&flag));
    CHECK_INT("MPI_Is_thread_main on the main thread", 1, flag);

    /* COMM_SELF. */
    {
        int r = -1, s = -1;
        E(MPI_Comm_size(MPI_COMM_SELF, &s));
        E(MPI_Comm_rank(MPI_COMM_SELF, &r));
        CHECK_INT("MPI_Comm_size(MPI_COMM_SELF)", 1, s);
        CHECK_INT("MPI_Comm_rank(MPI_COMM_SELF)", 0, r);
    }

    /* Every rank knows its rank exactly once: rank 0 collects the ranks. */
    if (mt_rank == 0) {
        for (i = 1; i < mt_size; ++i) {
            int r = -1;
            E(MPI_Recv(&r, 1, MPI_INT, i, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_INT("rank reported by peer", i, r);
        }
    } else {
        E(MPI_Send(&mt_rank, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
    }

    /* An attribute on MPI_COMM_SELF is deleted (callback called) at the
     * start of MPI_Finalize (MPI-3.1 section 8.7.1). */
    {
        int key = MPI_KEYVAL_INVALID;
        E(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &key, NULL));
        E(MPI_Comm_set_attr(MPI_COMM_SELF, key, &self_deleted));
    }

    if (mt_errors) {
        mt_finish();
        return 1;
    }
    E(MPI_Finalize());
    CHECK_INT("delete callback of an MPI_COMM_SELF attribute called by MPI_Finalize", 1, self_deleted);
    flag = -1;
    E(MPI_Finalized(&flag));
    CHECK_INT("MPI_Finalized after MPI_Finalize", 1, flag);
    flag = -1;
    E(MPI_Initialized(&flag));
    CHECK_INT("MPI_Initialized after MPI_Finalize", 1, flag);
    return mt_errors ? 1 : 0;
}
