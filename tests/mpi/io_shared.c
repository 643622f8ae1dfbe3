/* io_shared.c — MPI-IO shared file pointer: write_shared (every record
 * present exactly once), write_ordered / read_ordered (rank order),
 * seek_shared / get_position_shared, the ordered split collectives, and
 * the shared pointer through a view. */
#include "io_common.h"

#define K 20 /* records per rank */

static void test_shared(void)
{
    char path[2048];
    MPI_File fh;
    MPI_Offset pos;
    int rec[2], i, n = K * mt_size, *all = malloc(sizeof(int) * 2 * n), *seen = calloc(n, sizeof(int));

    io_path(path, sizeof path, "shared");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (i = 0; i < K; ++i) {
        rec[0] = mt_rank;
        rec[1] = i;
        E(MPI_File_write_shared(fh, rec, 2, MPI_INT, MPI_STATUS_IGNORE));
    }
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT("shared position after everyone wrote", 2 * n, pos);
    E(MPI_File_read_at(fh, 0, all, 2 * n, MPI_INT, MPI_STATUS_IGNORE));
    for (i = 0; i < n; ++i) {
        int r = all[2 * i], j = all[2 * i + 1];
        if (r < 0 || r >= mt_size || j < 0 || j >= K) {
            MT_FAIL("record %d is garbage (%d, %d)", i, r, j);
            continue;
        }
        ++seen[r * K + j];
    }
    for (i = 0; i < n; ++i)
        if (seen[i] != 1)
            MT_FAIL("record (%d, %d) present %d times", i / K, i % K, seen[i]);

    /* read them back with read_shared: together, each once */
    E(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    E(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT("seek_shared to 0", 0, pos);
    E(MPI_Barrier(MPI_COMM_WORLD)); /* nobody reads before everyone checked */
    {
        int mine = 0, total = 0;
        MPI_Status st;
        int count;
        for (;;) {
            E(MPI_File_read_shared(fh, rec, 2, MPI_INT, &st));
            E(MPI_Get_count(&st, MPI_INT, &count));
            if (count == 0)
                break;
            CHECK_INT("read_shared whole records", 2, count);
            ++mine;
        }
        E(MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK_INT("read_shared: every record read once", n, total);
    }
    E(MPI_File_close(&fh));
    free(all);
    free(seen);
}

static void test_ordered(void)
{
    char path[2048];
    MPI_File fh;
    MPI_Offset pos;
    MPI_Status st;
    int n = mt_size * (mt_size + 1) / 2, *all = malloc(sizeof(int) * n), *mine = malloc(sizeof(int) * (mt_rank + 1));
    int i, r, k, count;

    io_path(path, sizeof path, "ordered");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (i = 0; i <= mt_rank; ++i)
        mine[i] = mt_rank;
    E(MPI_File_write_ordered(fh, mine, mt_rank + 1, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("write_ordered count", mt_rank + 1, count);
    E(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT("shared position after write_ordered", n, pos);
    E(MPI_File_read_at(fh, 0, all, n, MPI_INT, MPI_STATUS_IGNORE));
    for (r = 0, k = 0; r < mt_size; ++r)
        for (i = 0; i <= r; ++i, ++k)
            if (all[k] != r)
                MT_FAIL("ordered file: int %d expected %d got %d", k, r, all[k]);

    /* split collective: a second round appended in rank order */
    for (i = 0; i <= mt_rank; ++i)
        mine[i] = 100 + mt_rank;
    E(MPI_File_write_ordered_begin(fh, mine, mt_rank + 1, MPI_INT));
    E(MPI_File_write_ordered_end(fh, mine, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("write_ordered_end count", mt_rank + 1, count);

    /* read both rounds back in order */
    E(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(mine, 0, sizeof(int) * (mt_rank + 1));
    E(MPI_File_read_ordered(fh, mine, mt_rank + 1, MPI_INT, &st));
    for (i = 0; i <= mt_rank; ++i)
        CHECK_INT("read_ordered round 1", mt_rank, mine[i]);
    E(MPI_File_read_ordered_begin(fh, mine, mt_rank + 1, MPI_INT));
    E(MPI_File_read_ordered_end(fh, mine, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("read_ordered_end count", mt_rank + 1, count);
    for (i = 0; i <= mt_rank; ++i)
        CHECK_INT("read_ordered round 2", 100 + mt_rank, mine[i]);
    E(MPI_File_seek_shared(fh, -1, MPI_SEEK_END));
    E(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT("seek_shared from the end", 2 * n - 1, pos);
    E(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    E(MPI_File_seek_shared(fh, 2, MPI_SEEK_CUR));
    E(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT("seek_shared SEEK_CUR", 2, pos);
    E(MPI_File_close(&fh));
    free(all);
    free(mine);
}

/* MPI_MODE_SEQUENTIAL: shared pointer only; MPI_DISPLACEMENT_CURRENT */
static void test_sequential(void)
{
    char path[2048];
    MPI_File fh;
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    int v = mt_rank, rc, buf;

    io_path(path, sizeof path, "sequential");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                    MPI_INFO_NULL, &fh));
    E(MPI_File_write_ordered(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    rc = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_INT("write_at on a sequential file", MPI_ERR_UNSUPPORTED_OPERATION, io_class(rc));
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    CHECK_INT("seek on a sequential file", MPI_ERR_UNSUPPORTED_OPERATION, io_class(rc));
    E(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    E(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK_INT("MPI_DISPLACEMENT_CURRENT: the shared position in bytes", (long long)mt_size * sizeof(int), disp);
    E(MPI_File_close(&fh));
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    E(MPI_File_read_at(fh, (MPI_Offset)mt_rank * sizeof(int), &buf, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_INT("sequential ordered write", mt_rank, buf);
    E(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    io_setup();
    test_shared();
    test_ordered();
    test_sequential();
    io_cleanup();
    return mt_finish();
}
