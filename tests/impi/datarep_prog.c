/* Used by test_datarep.py: a 2-rank job, one rank per cluster.  Each rank
 * sends the other LONG_MAX, then LONG_MIN + 1 in a struct, then -5 and
 * 0x7fffffff as MPI_LONG, under MPI_ERRORS_RETURN.
 *   datarep_prog pass   every value arrives unchanged
 *   datarep_prog error  the values beyond 32 bits fail on the sending side
 *                       with MPI_ERR_CONVERSION (the peer takes external32),
 *                       the others arrive unchanged
 *   datarep_prog fatal  rank 0 sends LONG_MAX under MPI_ERRORS_ARE_FATAL:
 *                       the job ends with the reason (MPI_Error_string gives
 *                       only the class's text)
 * Prints "rank R ok" at the end, or FAIL lines. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failures;

#define FAIL(...)                                                              \
    do {                                                                       \
        printf("FAIL: " __VA_ARGS__);                                          \
        printf("\n");                                                          \
        ++failures;                                                            \
    } while (0)

static void send_checked(long value, MPI_Datatype type, const void *buf, int peer, int tag, int expect_error)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_SUCCESS;
    int rc = MPI_Send(buf, 1, type, peer, tag, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    if (!expect_error) {
        if (rc != MPI_SUCCESS)
            FAIL("send of %ld failed (class %d)", value, cls);
        return;
    }
    if (cls != MPI_ERR_CONVERSION) {
        FAIL("send of %ld: expected MPI_ERR_CONVERSION, got class %d", value, cls);
        return;
    }
    MPI_Error_string(rc, text, &len);
    printf("rank error: %ld: %s\n", value, text);
}

int main(int argc, char **argv)
{
    int rank, size, peer, expect_error, i;
    long big = LONG_MAX, small[2] = {-5, 0x7fffffffL}, got[2] = {0, 0};
    struct { int k; long v; } rec = {7, LONG_MIN + 1}, rgot = {0, 0};
    MPI_Datatype rtype;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    expect_error = argc > 1 && strcmp(argv[1], "error") == 0 && sizeof(long) > 4;
    if (size != 2) {
        printf("FAIL: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2];
        MPI_Datatype t[2] = {MPI_INT, MPI_LONG};
        MPI_Get_address(&rec.k, &d[0]);
        MPI_Get_address(&rec.v, &d[1]);
        d[1] -= d[0];
        d[0] = 0;
        MPI_Type_create_struct(2, bl, d, t, &rtype);
        MPI_Type_commit(&rtype);
    }
    peer = 1 - rank;
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        if (rank == 0)
            MPI_Send(&big, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD);
        else
            MPI_Recv(&big, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("FAIL: rank %d: the send of LONG_MAX did not end the job\n", rank);
        MPI_Finalize();
        return 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (i = 0; i < 2; ++i) {
        if (rank == i) {
            send_checked(big, MPI_LONG, &big, peer, 1, expect_error);
            send_checked(rec.v, rtype, &rec, peer, 2, expect_error);
            MPI_Send(small, 2, MPI_LONG, peer, 3, MPI_COMM_WORLD);
        } else {
            if (!expect_error) {
                long in = 0;
                MPI_Recv(&in, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (in != LONG_MAX)
                    FAIL("rank %d: LONG_MAX arrived as %ld", rank, in);
                MPI_Recv(&rgot, 1, rtype, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (rgot.k != 7 || rgot.v != LONG_MIN + 1)
                    FAIL("rank %d: struct arrived as (%d, %ld)", rank, rgot.k, rgot.v);
            }
            MPI_Recv(got, 2, MPI_LONG, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (got[0] != -5 || got[1] != 0x7fffffffL)
                FAIL("rank %d: small longs arrived as %ld %ld", rank, got[0], got[1]);
        }
    }
    MPI_Type_free(&rtype);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!failures)
        printf("rank %d ok\n", rank);
    MPI_Finalize();
    return failures ? 1 : 0;
}
