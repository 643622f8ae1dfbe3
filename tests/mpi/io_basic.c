/* io_basic.c — MPI-IO: open modes and their errors, explicit offsets,
 * individual file pointers, collective access, sizes, hints, amode, group,
 * DELETE_ON_CLOSE, APPEND, files on MPI_COMM_SELF, error handlers. */
#include "io_common.h"

#define N 64

static int handler_calls = 0;
static int handler_class = 0;
static MPI_File handler_file = MPI_FILE_NULL;

static void file_handler(MPI_File *fh, int *code, ...)
{
    ++handler_calls;
    handler_class = io_class(*code);
    handler_file = *fh;
}

static void test_errors(void)
{
    char path[2048], missing[2048];
    MPI_File fh;
    MPI_Errhandler eh;
    int rc, buf[4] = {0};

    io_path(path, sizeof path, "errors");
    io_path(missing, sizeof missing, "no-such-file");

    /* MPI_FILE_NULL's handler is MPI_ERRORS_RETURN by default */
    E(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's default handler is MPI_ERRORS_RETURN");
    E(MPI_Errhandler_free(&eh));

    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_INT("RDONLY|RDWR: MPI_ERR_AMODE", MPI_ERR_AMODE, io_class(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK_INT("no access mode: MPI_ERR_AMODE", MPI_ERR_AMODE, io_class(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK_INT("RDONLY|CREATE: MPI_ERR_AMODE", MPI_ERR_AMODE, io_class(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_EXCL, MPI_INFO_NULL, &fh);
    CHECK_INT("RDONLY|EXCL: MPI_ERR_AMODE", MPI_ERR_AMODE, io_class(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_CREATE,
                       MPI_INFO_NULL, &fh);
    CHECK_INT("RDWR|SEQUENTIAL: MPI_ERR_AMODE", MPI_ERR_AMODE, io_class(rc));

    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK_INT("missing file: MPI_ERR_NO_SUCH_FILE", MPI_ERR_NO_SUCH_FILE, io_class(rc));
    CHECK(fh == MPI_FILE_NULL, "failed open leaves MPI_FILE_NULL");

    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    E(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "a new file's handler is MPI_ERRORS_RETURN");
    E(MPI_Errhandler_free(&eh));
    rc = MPI_File_read_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_INT("reading a WRONLY file: MPI_ERR_ACCESS", MPI_ERR_ACCESS, io_class(rc));
    E(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close sets MPI_FILE_NULL");

    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_INT("EXCL on an existing file: MPI_ERR_FILE_EXISTS", MPI_ERR_FILE_EXISTS, io_class(rc));

    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    rc = MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(io_class(rc) == MPI_ERR_READ_ONLY || io_class(rc) == MPI_ERR_ACCESS,
          "writing a RDONLY file: MPI_ERR_READ_ONLY (or MPI_ERR_ACCESS), got %d", io_class(rc));
    rc = MPI_File_write(fh, buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(io_class(rc) == MPI_ERR_READ_ONLY || io_class(rc) == MPI_ERR_ACCESS,
          "MPI_File_write on a RDONLY file, got %d", io_class(rc));

    /* a user handler on the file */
    E(MPI_File_create_errhandler(file_handler, &eh));
    E(MPI_File_set_errhandler(fh, eh));
    rc = MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_INT("handler called once", 1, handler_calls);
    CHECK(handler_file == fh, "handler got the file");
    CHECK(handler_class == MPI_ERR_READ_ONLY || handler_class == MPI_ERR_ACCESS, "handler got the class");
    E(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK_INT("MPI_File_call_errhandler calls it", 2, handler_calls);
    CHECK_INT("with the code", MPI_ERR_IO, handler_class);
    E(MPI_Errhandler_free(&eh));
    E(MPI_File_close(&fh));

    /* MPI_FILE_NULL's handler: used by open and given to new files */
    E(MPI_File_create_errhandler(file_handler, &eh));
    E(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    handler_calls = 0;
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK_INT("open error went to MPI_FILE_NULL's handler", 1, handler_calls);
    CHECK(handler_file == MPI_FILE_NULL, "with MPI_FILE_NULL");
    CHECK_INT("class", MPI_ERR_NO_SUCH_FILE, handler_class);
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    {
        MPI_Errhandler got;
        E(MPI_File_get_errhandler(fh, &got));
        CHECK(got == eh, "a new file inherits MPI_FILE_NULL's handler");
        E(MPI_Errhandler_free(&got));
    }
    E(MPI_File_close(&fh));
    E(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    E(MPI_Errhandler_free(&eh));

    E(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        E(MPI_File_delete(path, MPI_INFO_NULL));
        rc = MPI_File_delete(path, MPI_INFO_NULL);
        CHECK_INT("deleting a missing file: MPI_ERR_NO_SUCH_FILE", MPI_ERR_NO_SUCH_FILE, io_class(rc));
    }
    E(MPI_Barrier(MPI_COMM_WORLD));
    handler_calls = 0;
}

/* value of int i of the shared test file */
static int expected(int i) { return i * 7 + 3; }

static void check_whole_file(MPI_File fh, int total, const char *what)
{
    int *all = malloc(sizeof(int) * total), i, count;
    MPI_Status st;
    for (i = 0; i < total; ++i)
        all[i] = -1;
    E(MPI_File_read_at(fh, 0, all, total, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT(what, total, count);
    for (i = 0; i < total; ++i)
        if (all[i] != expected(i)) {
            MT_FAIL("%s: int %d, expected %d got %d", what, i, expected(i), all[i]);
            break;
        }
    free(all);
}

static void test_access(void)
{
    char path[2048];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos, size, byte;
    int buf[N], i, count, total = N * mt_size;

    io_path(path, sizeof path, "access");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));

    /* explicit offsets (bytes: the default view) */
    for (i = 0; i < N; ++i)
        buf[i] = expected(mt_rank * N + i);
    E(MPI_File_write_at(fh, (MPI_Offset)mt_rank * N * sizeof(int), buf, N, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("write_at count", N, count);
    E(MPI_Barrier(MPI_COMM_WORLD));
    check_whole_file(fh, total, "after write_at");
    E(MPI_File_get_size(fh, &size));
    CHECK_INT("size", (long long)total * sizeof(int), size);

    /* reading past the end: short count */
    E(MPI_File_read_at(fh, (MPI_Offset)(total - 2) * sizeof(int), buf, 5, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("read past EOF: count", 2, count);
    CHECK_INT("read past EOF: data", expected(total - 1), buf[1]);

    /* individual file pointer: seek, read, position */
    E(MPI_File_seek(fh, (MPI_Offset)mt_rank * sizeof(int), MPI_SEEK_SET));
    E(MPI_File_read(fh, buf, 3, MPI_INT, &st));
    CHECK_INT("read at pointer", expected(mt_rank), buf[0]);
    CHECK_INT("read at pointer [2]", expected(mt_rank + 2), buf[2]);
    E(MPI_File_get_position(fh, &pos));
    CHECK_INT("position after read", (mt_rank + 3) * (long long)sizeof(int), pos);
    E(MPI_File_seek(fh, -(MPI_Offset)sizeof(int), MPI_SEEK_CUR));
    E(MPI_File_read(fh, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_INT("SEEK_CUR back one", expected(mt_rank + 2), buf[0]);
    E(MPI_File_seek(fh, -(MPI_Offset)sizeof(int), MPI_SEEK_END));
    E(MPI_File_read(fh, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_INT("SEEK_END", expected(total - 1), buf[0]);
    E(MPI_File_get_position(fh, &pos));
    CHECK_INT("position at EOF", (long long)total * sizeof(int), pos);
    E(MPI_File_get_byte_offset(fh, 5, &byte));
    CHECK_INT("byte offset in the default view", 5, byte);
    CHECK(MPI_File_seek(fh, -1, MPI_SEEK_SET) != MPI_SUCCESS, "seek to a negative offset fails");
    E(MPI_Barrier(MPI_COMM_WORLD));

    /* collective with individual pointers: rewrite in reverse rank blocks */
    E(MPI_File_seek(fh, (MPI_Offset)mt_rank * N * sizeof(int), MPI_SEEK_SET));
    for (i = 0; i < N; ++i)
        buf[i] = expected(mt_rank * N + i);
    E(MPI_File_write_all(fh, buf, N, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("write_all count", N, count);
    check_whole_file(fh, total, "after write_all");
    E(MPI_File_seek(fh, (MPI_Offset)((mt_rank + 1) % mt_size) * N * sizeof(int), MPI_SEEK_SET));
    E(MPI_File_read_all(fh, buf, N, MPI_INT, &st));
    for (i = 0; i < N; ++i)
        if (buf[i] != expected(((mt_rank + 1) % mt_size) * N + i)) {
            MT_FAIL("read_all: int %d wrong (%d)", i, buf[i]);
            break;
        }

    /* collective with explicit offsets */
    for (i = 0; i < N; ++i)
        buf[i] = expected(mt_rank * N + i);
    E(MPI_File_write_at_all(fh, (MPI_Offset)mt_rank * N * sizeof(int), buf, N, MPI_INT, &st));
    check_whole_file(fh, total, "after write_at_all");
    memset(buf, 0, sizeof buf);
    E(MPI_File_read_at_all(fh, (MPI_Offset)mt_rank * N * sizeof(int), buf, N, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("read_at_all count", N, count);
    CHECK_INT("read_at_all data", expected(mt_rank * N + N - 1), buf[N - 1]);

    /* zero-count access */
    E(MPI_File_write_at(fh, 0, buf, 0, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("zero-count write", 0, count);

    /* sizes */
    E(MPI_File_set_size(fh, 100));
    E(MPI_File_get_size(fh, &size));
    CHECK_INT("set_size shrinks", 100, size);
    E(MPI_File_preallocate(fh, 50));
    E(MPI_File_get_size(fh, &size));
    CHECK_INT("preallocate never shrinks", 100, size);
    E(MPI_File_preallocate(fh, 4096));
    E(MPI_File_get_size(fh, &size));
    CHECK_INT("preallocate grows", 4096, size);
    E(MPI_File_set_size(fh, 0));
    E(MPI_File_get_size(fh, &size));
    CHECK_INT("set_size 0", 0, size);
    E(MPI_File_sync(fh));
    E(MPI_File_close(&fh));
    E(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0)
        E(MPI_File_delete(path, MPI_INFO_NULL));
}

static void test_attributes(void)
{
    char path[2048], value[MPI_MAX_INFO_VAL];
    MPI_File fh;
    MPI_Info info, used;
    MPI_Group g, wg;
    MPI_Offset pos, size;
    int amode, flag, result, atom;

    io_path(path, sizeof path, "attributes");
    E(MPI_Info_create(&info));
    E(MPI_Info_set(info, "access_style", "read_once,write_once"));
    E(MPI_Info_set(info, "cb_buffer_size", "1048576"));
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN, info, &fh));
    E(MPI_Info_free(&info));
    E(MPI_File_get_info(fh, &used));
    E(MPI_Info_get(used, "access_style", sizeof value - 1, value, &flag));
    CHECK(flag, "access_style hint present");
    if (flag)
        CHECK_STR("access_style", "read_once,write_once", value);
    E(MPI_Info_get(used, "filename", sizeof value - 1, value, &flag));
    if (flag)
        CHECK_STR("filename hint", path, value);
    E(MPI_Info_free(&used));
    E(MPI_Info_create(&info));
    E(MPI_Info_set(info, "access_style", "random"));
    E(MPI_File_set_info(fh, info));
    E(MPI_Info_free(&info));
    E(MPI_File_get_info(fh, &used));
    E(MPI_Info_get(used, "access_style", sizeof value - 1, value, &flag));
    if (flag)
        CHECK_STR("access_style after set_info", "random", value);
    E(MPI_Info_free(&used));

    E(MPI_File_get_amode(fh, &amode));
    CHECK_INT("amode", MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN, amode);
    E(MPI_File_get_group(fh, &g));
    E(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    E(MPI_Group_compare(g, wg, &result));
    CHECK_INT("group is MPI_COMM_WORLD's", MPI_IDENT, result);
    E(MPI_Group_free(&g));
    E(MPI_Group_free(&wg));
    E(MPI_File_get_atomicity(fh, &atom));
    CHECK_INT("atomicity off by default", 0, atom);
    if (mt_rank == 0)
        E(MPI_File_write_at(fh, 0, "0123456789", 10, MPI_CHAR, MPI_STATUS_IGNORE));
    E(MPI_File_close(&fh));

    /* MPI_MODE_APPEND: pointers start at the end */
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    E(MPI_File_get_position(fh, &pos));
    CHECK_INT("APPEND: individual pointer at the end", 10, pos);
    E(MPI_File_get_position_shared(fh, &pos));
    CHECK_INT("APPEND: shared pointer at the end", 10, pos);
    E(MPI_File_close(&fh));

    /* MPI_MODE_DELETE_ON_CLOSE */
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    E(MPI_File_get_size(fh, &size));
    CHECK_INT("size before delete on close", 10, size);
    E(MPI_File_close(&fh));
    CHECK(access(path, F_OK) != 0 && errno == ENOENT, "DELETE_ON_CLOSE removed the file");

    /* one file per process on MPI_COMM_SELF */
    {
        char mine[2048], name[64];
        int v = mt_rank * 11, got = -1;
        snprintf(name, sizeof name, "self-%d", mt_rank);
        io_path(mine, sizeof mine, name);
        E(MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                        MPI_INFO_NULL, &fh));
        E(MPI_File_write(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
        E(MPI_File_read_at(fh, 0, &got, 1, MPI_INT, MPI_STATUS_IGNORE));
        CHECK_INT("MPI_COMM_SELF file", v, got);
        E(MPI_File_close(&fh));
    }
    CHECK_INT("no file handler calls", 0, handler_calls);
    /* handle conversion */
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL, "c2f/f2c of MPI_FILE_NULL");
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    io_setup();
    test_errors();
    test_access();
    test_attributes();
    io_cleanup();
    return mt_finish();
}
