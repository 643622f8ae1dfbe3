/* io_nonblocking.c — MPI-IO non-blocking access (iread/iwrite, _at,
 * _shared, _all, _at_all) completed with MPI_Wait / Test / Waitall, the
 * status counts, and the split collectives (begin/end) of the individual
 * and explicit-offset kinds, with their misuse errors. */
#include "io_common.h"

#define N 32

int main(int argc, char **argv)
{
    char path[2048];
    MPI_File fh;
    MPI_Request reqs[4];
    MPI_Status sts[4], st;
    int a[N], b[N], c[N], i, count, flag, rc, total;
    int *all;

    mt_init(&argc, &argv);
    io_setup();
    total = N * mt_size;
    all = malloc(sizeof(int) * total);
    io_path(path, sizeof path, "nonblocking");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));

    /* iwrite_at of my block, iwrite_at_all of a second region */
    for (i = 0; i < N; ++i) {
        a[i] = mt_rank * N + i;
        b[i] = 1000000 + mt_rank * N + i;
    }
    E(MPI_File_iwrite_at(fh, (MPI_Offset)mt_rank * N, a, N, MPI_INT, &reqs[0]));
    E(MPI_File_iwrite_at_all(fh, (MPI_Offset)(total + mt_rank * N), b, N, MPI_INT, &reqs[1]));
    E(MPI_Waitall(2, reqs, sts));
    E(MPI_Get_count(&sts[0], MPI_INT, &count));
    CHECK_INT("iwrite_at count", N, count);
    E(MPI_Get_count(&sts[1], MPI_INT, &count));
    CHECK_INT("iwrite_at_all count", N, count);
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "requests freed");
    E(MPI_Barrier(MPI_COMM_WORLD));

    /* iread_at of everything, completed by MPI_Test */
    E(MPI_File_iread_at(fh, 0, all, total, MPI_INT, &reqs[0]));
    flag = 0;
    while (!flag)
        E(MPI_Test(&reqs[0], &flag, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("iread_at count", total, count);
    for (i = 0; i < total; ++i)
        if (all[i] != i) {
            MT_FAIL("iread_at: int %d got %d", i, all[i]);
            break;
        }

    /* individual pointer: iwrite / iread / iread_all */
    E(MPI_File_seek(fh, (MPI_Offset)2 * total + mt_rank * N, MPI_SEEK_SET));
    for (i = 0; i < N; ++i)
        c[i] = -mt_rank * N - i;
    E(MPI_File_iwrite(fh, c, N / 2, MPI_INT, &reqs[0]));
    E(MPI_Wait(&reqs[0], &st));
    E(MPI_File_iwrite_all(fh, c + N / 2, N / 2, MPI_INT, &reqs[0]));
    E(MPI_Wait(&reqs[0], &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("iwrite_all count", N / 2, count);
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_File_seek(fh, (MPI_Offset)2 * total + mt_rank * N, MPI_SEEK_SET));
    memset(c, 0, sizeof c);
    E(MPI_File_iread(fh, c, N / 2, MPI_INT, &reqs[0]));
    E(MPI_File_iread_all(fh, c + N / 2, N / 2, MPI_INT, &reqs[1]));
    E(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    for (i = 0; i < N; ++i)
        if (c[i] != -mt_rank * N - i) {
            MT_FAIL("iread/iread_all: int %d got %d", i, c[i]);
            break;
        }
    E(MPI_File_iread_at_all(fh, (MPI_Offset)total + mt_rank * N, c, N, MPI_INT, &reqs[0]));
    E(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    CHECK_INT("iread_at_all", 1000000 + mt_rank * N + N - 1, c[N - 1]);

    /* shared pointer: iwrite_shared of one record each at the end */
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_File_seek_shared(fh, 3 * total, MPI_SEEK_SET));
    E(MPI_File_iwrite_shared(fh, &mt_rank, 1, MPI_INT, &reqs[0]));
    E(MPI_Wait(&reqs[0], &st));
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_File_seek_shared(fh, 3 * total, MPI_SEEK_SET));
    {
        int got = -1, sum = 0;
        E(MPI_File_iread_shared(fh, &got, 1, MPI_INT, &reqs[0]));
        E(MPI_Wait(&reqs[0], &st));
        E(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_INT("iread_shared count", 1, count);
        E(MPI_Allreduce(&got, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK_INT("iread_shared: every rank's record once", mt_size * (mt_size - 1) / 2, sum);
    }

    /* split collectives */
    for (i = 0; i < N; ++i)
        a[i] = 5000 + mt_rank * N + i;
    E(MPI_File_write_at_all_begin(fh, (MPI_Offset)mt_rank * N, a, N, MPI_INT));
    rc = MPI_File_write_at_all_begin(fh, (MPI_Offset)mt_rank * N, a, N, MPI_INT);
    CHECK(rc != MPI_SUCCESS, "a second split collective while one is active fails");
    rc = MPI_File_read_all_end(fh, a, &st);
    CHECK(rc != MPI_SUCCESS, "an end that matches no begin fails");
    E(MPI_File_write_at_all_end(fh, a, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("write_at_all_end count", N, count);
    rc = MPI_File_write_at_all_end(fh, a, &st);
    CHECK(rc != MPI_SUCCESS, "an end without a begin fails");
    memset(b, 0, sizeof b);
    E(MPI_File_read_at_all_begin(fh, (MPI_Offset)((mt_rank + 1) % mt_size) * N, b, N, MPI_INT));
    E(MPI_File_read_at_all_end(fh, b, &st));
    CHECK_INT("read_at_all_end data", 5000 + ((mt_rank + 1) % mt_size) * N + 3, b[3]);
    E(MPI_File_seek(fh, (MPI_Offset)mt_rank * N, MPI_SEEK_SET));
    E(MPI_File_write_all_begin(fh, a, N, MPI_INT));
    E(MPI_File_write_all_end(fh, a, &st));
    E(MPI_File_seek(fh, (MPI_Offset)mt_rank * N, MPI_SEEK_SET));
    memset(b, 0, sizeof b);
    E(MPI_File_read_all_begin(fh, b, N, MPI_INT));
    E(MPI_File_read_all_end(fh, b, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("read_all_end count", N, count);
    CHECK_INT("read_all_end data", 5000 + mt_rank * N + N - 1, b[N - 1]);

    E(MPI_File_close(&fh));
    free(all);
    io_cleanup();
    return mt_finish();
}
