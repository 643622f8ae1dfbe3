/* rma_shared.c — MPI_Win_allocate_shared and MPI_Win_shared_query
 * (MPI-3.1 11.2.3) on a communicator from MPI_Comm_split_type
 * (MPI_COMM_TYPE_SHARED): every member's segment, contiguous in rank order
 * by default, including empty ones; MPI_PROC_NULL queries the lowest rank
 * with memory; the model is MPI_WIN_UNIFIED; plain loads and stores by one
 * process are seen by the others after MPI_Win_sync + barrier; RMA
 * operations (put, fetch_and_op) land in the memory the others load from;
 * MPI_Win_shared_query on a window of another flavour is an error; and (for
 * gridmpi) the segment leaves no name behind in /dev/shm. */
#include "mpitest.h"

#include <dirent.h>
#include <unistd.h>

/* rank r contributes (r + 1) ints, except rank 1, which contributes none */
static int ints_of(int r)
{
    return r == 1 ? 0 : r + 1;
}

/* gridmpi names a segment gridmpi-win-<pid of the window's rank 0>-<random> */
static int gridmpi_segments_in_dev_shm(MPI_Comm shm)
{
    int n = 0, pid = (int)getpid();
    char prefix[64];
    struct dirent *e;
    DIR *d;
    E(MPI_Bcast(&pid, 1, MPI_INT, 0, shm));
    snprintf(prefix, sizeof prefix, "gridmpi-win-%d-", pid);
    d = opendir("/dev/shm");
    if (!d) return 0;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) ++n;
    closedir(d);
    return n;
}

static void test_layout_and_memory(MPI_Comm shm, int rank, int size)
{
    MPI_Win win;
    int *mine = NULL, *base_of[64], unit, r, flag, *model, *flavor, i;
    MPI_Aint bytes, offset = 0;
    E(MPI_Win_allocate_shared(ints_of(rank) * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, shm, &mine, &win));
    /* checked by every member as soon as it returns */
    if (!MT_IS_OPENMPI && !MT_IS_MPICH)
        CHECK_INT("segment names left in /dev/shm after MPI_Win_allocate_shared", 0,
                  gridmpi_segments_in_dev_shm(shm));

    E(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "shared windows use the unified model");
    E(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "flavour MPI_WIN_FLAVOR_SHARED");

    for (r = 0; r < size; ++r) {
        E(MPI_Win_shared_query(win, r, &bytes, &unit, &base_of[r]));
        CHECK_INT("segment size", ints_of(r) * (MPI_Aint)sizeof(int), bytes);
        CHECK_INT("segment displacement unit", (int)sizeof(int), unit);
        /* contiguous by default: each segment follows the previous one */
        if (ints_of(r) > 0)
            CHECK(base_of[r] == base_of[0] + offset, "rank %d's segment starts %ld ints after rank 0's", r,
                  (long)offset);
        offset += ints_of(r);
    }
    if (ints_of(rank) > 0) CHECK(mine == base_of[rank], "baseptr is the queried base of this rank");
    E(MPI_Win_shared_query(win, MPI_PROC_NULL, &bytes, &unit, &base_of[size]));
    CHECK_INT("MPI_PROC_NULL: the size of rank 0 (the lowest with memory)", (MPI_Aint)sizeof(int), bytes);
    CHECK(base_of[size] == base_of[0], "MPI_PROC_NULL gives rank 0's segment");

    /* plain stores, seen by everyone after sync + barrier + sync */
    E(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (i = 0; i < ints_of(rank); ++i) mine[i] = 1000 * rank + i;
    E(MPI_Win_sync(win));
    E(MPI_Barrier(shm));
    E(MPI_Win_sync(win));
    for (r = 0; r < size; ++r)
        for (i = 0; i < ints_of(r); ++i) CHECK_INT("load of another process's store", 1000 * r + i, base_of[r][i]);
    E(MPI_Barrier(shm));

    /* a put by the last rank to rank 0's first int, loaded by everyone */
    if (rank == size - 1) {
        int v = -7;
        E(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        E(MPI_Win_flush(0, win));
    }
    E(MPI_Win_sync(win));
    E(MPI_Barrier(shm));
    E(MPI_Win_sync(win));
    CHECK_INT("load of a put", -7, base_of[0][0]);
    E(MPI_Barrier(shm));

    /* an atomic counter in the last rank's segment */
    {
        int one = 1, old, last = size - 1, target = ints_of(last) > 0 ? last : 0;
        for (i = 0; i < 5; ++i) {
            E(MPI_Fetch_and_op(&one, &old, MPI_INT, target, 0, MPI_SUM, win));
            E(MPI_Win_flush(target, win));
        }
        E(MPI_Win_sync(win));
        E(MPI_Barrier(shm));
        E(MPI_Win_sync(win));
        CHECK_INT("fetch_and_op counter loaded from shared memory", 1000 * target + 5 * size - (target == 0 ? 7 : 0),
                  base_of[target][0]);
    }
    E(MPI_Win_unlock_all(win));
    E(MPI_Win_free(&win));
}

/* every member asks for nothing */
static void test_all_empty(MPI_Comm shm)
{
    MPI_Win win;
    void *mine = NULL, *q = NULL;
    MPI_Aint bytes = -1;
    int unit = -1;
    E(MPI_Win_allocate_shared(0, 1, MPI_INFO_NULL, shm, &mine, &win));
    E(MPI_Win_shared_query(win, MPI_PROC_NULL, &bytes, &unit, &q));
    CHECK_INT("all empty: MPI_PROC_NULL size", 0, bytes);
    E(MPI_Win_free(&win));
}

static void test_errors(MPI_Comm shm)
{
    MPI_Win win;
    int buf[4], unit, rc, cls;
    MPI_Aint bytes;
    void *q;
    /* MPI-4 allows MPI_Win_shared_query on other flavours (Open MPI and
     * MPICH answer it); MPI-3.1 defines it for shared windows only.  (Open
     * MPI's default osc component also fails MPI_Win_create on one process.) */
    if (MT_IS_OPENMPI || MT_IS_MPICH) return;
    E(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, shm, &win));
    E(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    rc = MPI_Win_shared_query(win, 0, &bytes, &unit, &q);
    E(MPI_Error_class(rc, &cls));
    CHECK_INT("MPI_Win_shared_query on an MPI_Win_create window", MPI_ERR_RMA_FLAVOR, cls);
    E(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Comm shm;
    int rank, size;
    mt_init(&argc, &argv);
    E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    E(MPI_Comm_rank(shm, &rank));
    E(MPI_Comm_size(shm, &size));
    {
        /* Every test run is on one host; split over several clusters (IMPI
         * clients), shared memory joins only the processes of one cluster. */
        int expected = mt_size;
#if defined(IMPI_CLIENT_COLOR) || defined(OPEN_MPI) /* not every MPI has the IMPI attributes */
        int *clients = NULL, *color = NULL, flag = 0, flag2 = 0;
        E(MPI_Comm_get_attr(MPI_COMM_WORLD, IMPI_CLIENT_SIZE, &clients, &flag));
        E(MPI_Comm_get_attr(MPI_COMM_WORLD, IMPI_CLIENT_COLOR, &color, &flag2));
        if (flag && flag2 && *clients > 1) {
            MPI_Comm cluster;
            E(MPI_Comm_split(MPI_COMM_WORLD, *color, 0, &cluster));
            E(MPI_Comm_size(cluster, &expected));
            E(MPI_Comm_free(&cluster));
        }
#endif
        CHECK_INT("one host: the shared communicator holds this cluster's processes", expected, size);
    }
    if (size < 64) {
        test_layout_and_memory(shm, rank, size);
        test_all_empty(shm);
        test_errors(shm);
    }
    E(MPI_Comm_free(&shm));
    return mt_finish();
}
