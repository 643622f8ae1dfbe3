/* io_view.c — MPI-IO file views: interleaved blocks (resized contiguous),
 * subarray, darray (cyclic), a struct filetype with holes, a
 * noncontiguous memory type, get_view, byte offsets and positions in a
 * view, type extent, data representations. */
#include "io_common.h"

#define B 3      /* ints per block */
#define M 5      /* blocks per rank */

static void read_raw(MPI_File fh, int *all, int total)
{
    MPI_Status st;
    int count, i;
    for (i = 0; i < total; ++i)
        all[i] = -999;
    E(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    E(MPI_File_read_at(fh, 0, all, total, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("whole file count", total, count);
}

static void test_interleaved(void)
{
    char path[2048];
    MPI_File fh;
    MPI_Datatype block, filetype, etype_got, filetype_got;
    MPI_Offset disp, byte, pos;
    MPI_Status st;
    char rep[MPI_MAX_DATAREP_STRING];
    int total = B * M * mt_size, local[B * M], *all = malloc(sizeof(int) * total);
    int i, count, ni, na, nd, combiner;

    io_path(path, sizeof path, "interleaved");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_Type_contiguous(B, MPI_INT, &block));
    E(MPI_Type_create_resized(block, 0, (MPI_Aint)B * mt_size * sizeof(int), &filetype));
    E(MPI_Type_commit(&filetype));
    E(MPI_File_set_view(fh, (MPI_Offset)mt_rank * B * sizeof(int), MPI_INT, filetype, "native", MPI_INFO_NULL));
    for (i = 0; i < B * M; ++i)
        local[i] = mt_rank * 100000 + i;
    E(MPI_File_write_all(fh, local, B * M, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("write_all through the view", B * M, count);
    E(MPI_File_get_position(fh, &pos));
    CHECK_INT("position in etypes", B * M, pos);
    E(MPI_File_get_byte_offset(fh, B + 1, &byte));
    CHECK_INT("byte offset of etype B+1",
              (long long)(mt_rank * B + B * mt_size + 1) * (long long)sizeof(int), byte);

    E(MPI_File_get_view(fh, &disp, &etype_got, &filetype_got, rep));
    CHECK_INT("view disp", (long long)mt_rank * B * sizeof(int), disp);
    CHECK(etype_got == MPI_INT, "view etype is MPI_INT");
    CHECK_STR("datarep", "native", rep);
    /* a new handle of the same type (MPICH and we return a dup) */
    E(MPI_Type_get_envelope(filetype_got, &ni, &na, &nd, &combiner));
    CHECK(combiner != MPI_COMBINER_NAMED, "view filetype is a derived type");
    {
        MPI_Aint lb, extent;
        int size;
        E(MPI_Type_get_extent(filetype_got, &lb, &extent));
        E(MPI_Type_size(filetype_got, &size));
        CHECK_INT("view filetype extent", (long long)B * mt_size * sizeof(int), extent);
        CHECK_INT("view filetype size", (long long)B * sizeof(int), size);
    }
    E(MPI_Type_free(&filetype_got));
    E(MPI_Type_free(&filetype)); /* the view keeps its own reference */
    E(MPI_Type_free(&block));

    /* read back my part through the view, then past the end */
    memset(local, 0, sizeof local);
    E(MPI_File_read_at_all(fh, 0, local, B * M, MPI_INT, &st));
    for (i = 0; i < B * M; ++i)
        if (local[i] != mt_rank * 100000 + i) {
            MT_FAIL("read through the view: int %d got %d", i, local[i]);
            break;
        }
    E(MPI_File_read_at(fh, B * M - 1, local, 4, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    /* the last rank's last block ends the file; others have data after */
    if (mt_rank == mt_size - 1)
        CHECK_INT("read past the end of the view", 1, count);
    E(MPI_File_seek(fh, 0, MPI_SEEK_END));
    E(MPI_File_get_position(fh, &pos));
    CHECK_INT("SEEK_END in the view", mt_rank == mt_size - 1 ? B * M : B * M, pos);

    /* every rank checks the whole file */
    read_raw(fh, all, total);
    for (i = 0; i < total; ++i) {
        int blk = i / B, owner = blk % mt_size, idx = (blk / mt_size) * B + i % B;
        if (all[i] != owner * 100000 + idx) {
            MT_FAIL("interleaved file: int %d expected %d got %d", i, owner * 100000 + idx, all[i]);
            break;
        }
    }
    E(MPI_File_close(&fh));
    free(all);
}

static void test_subarray(void)
{
    enum { R = 4, C = 3 };
    char path[2048];
    MPI_File fh;
    MPI_Datatype sub;
    int sizes[2] = {R, C * mt_size}, subsizes[2] = {R, C}, starts[2] = {0, C * mt_rank};
    int local[R * C], total = R * C * mt_size, *all = malloc(sizeof(int) * total), i, r, c;

    io_path(path, sizeof path, "subarray");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub));
    E(MPI_Type_commit(&sub));
    E(MPI_File_set_view(fh, 0, MPI_INT, sub, "native", MPI_INFO_NULL));
    for (r = 0; r < R; ++r)
        for (c = 0; c < C; ++c)
            local[r * C + c] = r * 1000 + C * mt_rank + c;
    E(MPI_File_write_all(fh, local, R * C, MPI_INT, MPI_STATUS_IGNORE));
    read_raw(fh, all, total);
    for (i = 0; i < total; ++i) {
        int row = i / (C * mt_size), col = i % (C * mt_size);
        if (all[i] != row * 1000 + col) {
            MT_FAIL("subarray file: int %d expected %d got %d", i, row * 1000 + col, all[i]);
            break;
        }
    }
    E(MPI_Type_free(&sub));
    E(MPI_File_close(&fh));
    free(all);
}

static void test_darray(void)
{
    enum { K = 2 };
    char path[2048];
    MPI_File fh;
    MPI_Datatype da;
    int n = 2 * K * mt_size * 5, gsizes[1], distribs[1] = {MPI_DISTRIBUTE_CYCLIC}, dargs[1] = {K};
    int psizes[1], size, nlocal, *local, *all = malloc(sizeof(int) * n), k, i;

    gsizes[0] = n;
    psizes[0] = mt_size;
    io_path(path, sizeof path, "darray");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_Type_create_darray(mt_size, mt_rank, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &da));
    E(MPI_Type_commit(&da));
    E(MPI_Type_size(da, &size));
    nlocal = size / (int)sizeof(int);
    CHECK_INT("darray local size", n / mt_size, nlocal);
    local = malloc(sizeof(int) * nlocal);
    for (k = 0; k < nlocal; ++k)
        local[k] = ((k / K) * mt_size + mt_rank) * K + k % K;
    E(MPI_File_set_view(fh, 0, MPI_INT, da, "native", MPI_INFO_NULL));
    E(MPI_File_write_all(fh, local, nlocal, MPI_INT, MPI_STATUS_IGNORE));
    read_raw(fh, all, n);
    for (i = 0; i < n; ++i)
        if (all[i] != i) {
            MT_FAIL("darray file: int %d got %d", i, all[i]);
            break;
        }
    E(MPI_Type_free(&da));
    E(MPI_File_close(&fh));
    free(local);
    free(all);
}

/* a struct filetype with holes, a vector memory type, one process */
static void test_holes(void)
{
    char path[2048];
    MPI_File fh;
    MPI_Datatype ft, memtype;
    int bl[2] = {1, 1};
    MPI_Aint displs[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    int fill[16], data[8], mem[16], got[16], i;
    MPI_Aint extent;
    MPI_Offset byte;

    io_path(path, sizeof path, "holes");
    if (mt_rank != 0)
        return;
    E(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    for (i = 0; i < 16; ++i)
        fill[i] = -1;
    E(MPI_File_write_at(fh, 0, fill, 16, MPI_INT, MPI_STATUS_IGNORE));
    E(MPI_Type_create_struct(2, bl, displs, types, &ft));
    {
        MPI_Datatype r;
        E(MPI_Type_create_resized(ft, 0, 16, &r));
        E(MPI_Type_free(&ft));
        ft = r;
    }
    E(MPI_Type_commit(&ft));
    E(MPI_File_set_view(fh, 4, MPI_INT, ft, "native", MPI_INFO_NULL));
    /* memory: every other int of mem */
    E(MPI_Type_vector(8, 1, 2, MPI_INT, &memtype));
    E(MPI_Type_commit(&memtype));
    for (i = 0; i < 16; ++i)
        mem[i] = (i % 2 == 0) ? i / 2 + 10 : -7;
    E(MPI_File_write(fh, mem, 1, memtype, MPI_STATUS_IGNORE));
    E(MPI_File_get_byte_offset(fh, 3, &byte));
    CHECK_INT("byte offset with holes", 4 + 16 + 8, byte);
    E(MPI_File_get_type_extent(fh, ft, &extent));
    CHECK_INT("file type extent", 16, extent);
    E(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    E(MPI_File_read_at(fh, 0, got, 16, MPI_INT, MPI_STATUS_IGNORE));
    /* ints at byte 4 + 16k and 12 + 16k: int indices 1,3,5,7,... */
    for (i = 0; i < 16; ++i) {
        int want = (i % 2 == 1) ? 10 + i / 2 : -1;
        if (got[i] != want)
            MT_FAIL("holes: int %d expected %d got %d", i, want, got[i]);
    }
    /* read back through the view into the vector memory type */
    E(MPI_File_set_view(fh, 4, MPI_INT, ft, "internal", MPI_INFO_NULL));
    for (i = 0; i < 16; ++i)
        mem[i] = -5;
    E(MPI_File_read_at(fh, 0, mem, 1, memtype, MPI_STATUS_IGNORE));
    for (i = 0; i < 16; ++i) {
        int want = (i % 2 == 0) ? i / 2 + 10 : -5;
        if (mem[i] != want)
            MT_FAIL("holes read back: mem[%d] expected %d got %d", i, want, mem[i]);
    }
    for (i = 0; i < 8; ++i)
        data[i] = 0;
    (void)data;
    E(MPI_Type_free(&ft));
    E(MPI_Type_free(&memtype));
    E(MPI_File_close(&fh));
}

static void test_view_errors(void)
{
    char path[2048];
    MPI_File fh;
    int rc;
    io_path(path, sizeof path, "viewerr");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                    MPI_INFO_NULL, &fh));
    rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-datarep", MPI_INFO_NULL);
    CHECK_INT("unknown datarep", MPI_ERR_UNSUPPORTED_DATAREP, io_class(rc));
    rc = MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    CHECK(rc != MPI_SUCCESS, "MPI_DISPLACEMENT_CURRENT without MPI_MODE_SEQUENTIAL fails");
    rc = MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_INT, "native", MPI_INFO_NULL);
    CHECK(rc != MPI_SUCCESS, "a filetype that is no multiple of the etype fails");
    E(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    io_setup();
    test_interleaved();
    test_subarray();
    test_darray();
    test_holes();
    test_view_errors();
    io_cleanup();
    return mt_finish();
}
