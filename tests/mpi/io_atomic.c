/* io_atomic.c — MPI-IO atomic mode: set/get_atomicity, and concurrent
 * overlapping accesses: while rank 0 rewrites a region (one noncontiguous
 * write through a view) with a new value, the other ranks read it; in
 * atomic mode every read must see the region wholly old or wholly new. */
#include "io_common.h"

#define N 4096 /* ints in the region */
#define ROUNDS 40

int main(int argc, char **argv)
{
    char path[2048];
    MPI_File fh;
    MPI_Datatype ft;
    int *buf, flag, round, i;

    mt_init(&argc, &argv);
    io_setup();
    buf = malloc(sizeof(int) * N);
    io_path(path, sizeof path, "atomic");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_File_get_atomicity(fh, &flag));
    CHECK_INT("atomicity off at open", 0, flag);
    E(MPI_File_set_atomicity(fh, 1));
    E(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag, "atomicity on after set_atomicity(1)");

    /* the region: blocks of 32 ints with holes of 32 ints between them */
    E(MPI_Type_vector(N / 32, 32, 64, MPI_INT, &ft));
    E(MPI_Type_commit(&ft));
    E(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    if (mt_rank == 0) {
        for (i = 0; i < N; ++i)
            buf[i] = 0;
        E(MPI_File_write_at(fh, 0, buf, N, MPI_INT, MPI_STATUS_IGNORE));
    }
    E(MPI_Barrier(MPI_COMM_WORLD));
    for (round = 1; round <= ROUNDS; ++round) {
        if (mt_rank == 0) {
            for (i = 0; i < N; ++i)
                buf[i] = round;
            E(MPI_File_write_at(fh, 0, buf, N, MPI_INT, MPI_STATUS_IGNORE));
        } else {
            E(MPI_File_read_at(fh, 0, buf, N, MPI_INT, MPI_STATUS_IGNORE));
            for (i = 1; i < N; ++i)
                if (buf[i] != buf[0]) {
                    MT_FAIL("round %d: torn read in atomic mode: int 0 is %d, int %d is %d", round, buf[0], i,
                            buf[i]);
                    break;
                }
            CHECK(buf[0] == round - 1 || buf[0] == round, "round %d: value %d is neither old nor new", round,
                  buf[0]);
        }
        E(MPI_Barrier(MPI_COMM_WORLD));
    }
    E(MPI_File_set_atomicity(fh, 0));
    E(MPI_File_get_atomicity(fh, &flag));
    CHECK_INT("atomicity off again", 0, flag);
    E(MPI_Type_free(&ft));
    E(MPI_File_close(&fh));
    free(buf);
    io_cleanup();
    return mt_finish();
}
