/* MPI-4.0's large-count "_c" functions.
 *  - every family with small counts, against the int functions' results:
 *    Send_c/Recv_c, Isend_c/Irecv_c, Sendrecv_c, Bcast_c, Gather_c,
 *    Allgatherv_c (MPI_Count counts, MPI_Aint displacements), Alltoallv_c,
 *    Reduce_c, Allreduce_c, Scan_c, Pack_c/Unpack_c, Get_count_c;
 *  - MPI_Op_create_c: the user function gets an MPI_Count length;
 *  - counts above INT_MAX without moving gigabytes: the datatype
 *    constructors (contiguous, vector, hindexed, indexed_block, struct) give
 *    the sizes and extents the standard defines, MPI_Get_count_c reads a
 *    status set to more than INT_MAX elements, and MPI_Reduce_local_c of
 *    2^31 + 10 elements of a zero-extent type reaches the user function in
 *    slices that add up to the count;
 *  - gridmpi: a v collective with a count above INT_MAX fails with
 *    MPI_ERR_COUNT (a limit of ours);
 *  - MT_LARGE_MESSAGES=1 (by hand, 2 ranks, about 5 GB of memory): a message
 *    of 2^31 + 8 bytes with MPI_Send_c/MPI_Recv_c, checked at both ends. */
#include "mpitest.h"

#include <limits.h>

#if defined(GRIDMPI_VERSION_STRING) || MPI_VERSION >= 4

static MPI_Count user_calls = 0, user_elements = 0, user_largest = 0;

static void add_ints(void *in, void *inout, MPI_Count *len, MPI_Datatype *type)
{
    MPI_Count i;
    ++user_calls;
    user_elements += *len;
    if (*len > user_largest)
        user_largest = *len;
    if (*type != MPI_INT)
        return; /* the zero-extent slices: counted only */
    for (i = 0; i < *len; ++i)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void check_type(const char *what, MPI_Datatype t, MPI_Count size, MPI_Count lb, MPI_Count extent)
{
    MPI_Count s = -1, l = -1, e = -1;
    E(MPI_Type_size_c(t, &s));
    E(MPI_Type_get_extent_c(t, &l, &e));
    CHECK(s == size, "%s: size, expected %lld got %lld", what, (long long)size, (long long)s);
    CHECK(l == lb, "%s: lb, expected %lld got %lld", what, (long long)lb, (long long)l);
    CHECK(e == extent, "%s: extent, expected %lld got %lld", what, (long long)extent, (long long)e);
}

static void large_types(void)
{
    const MPI_Count big = (MPI_Count)INT_MAX + 3;
    MPI_Datatype t, pair;
    MPI_Count lengths[3] = {5, big, 7}, displs[3] = {0, 100, 0};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};

    E(MPI_Type_contiguous_c(big, MPI_INT, &t));
    check_type("contiguous_c(INT_MAX + 3, MPI_INT)", t, big * 4, 0, big * 4);
    E(MPI_Type_free(&t));

    /* Two blocks of `big` doubles, 3 * big apart. */
    E(MPI_Type_vector_c(2, big, 3 * big, MPI_DOUBLE, &t));
    check_type("vector_c(2, INT_MAX + 3, 3 (INT_MAX + 3), MPI_DOUBLE)", t, 2 * big * 8, 0, 4 * big * 8);
    E(MPI_Type_free(&t));

    /* hindexed: 5 ints at 0, `big` ints at byte 100. */
    displs[1] = 100;
    E(MPI_Type_create_hindexed_c(2, lengths, displs, MPI_INT, &t));
    check_type("hindexed_c({5, INT_MAX + 3}, {0, 100})", t, (5 + big) * 4, 0, 100 + big * 4);
    E(MPI_Type_free(&t));

    /* indexed_block: blocks of `big` ints at element displacements 0 and
     * big + 10. */
    displs[0] = 0;
    displs[1] = big + 10;
    E(MPI_Type_create_indexed_block_c(2, big, displs, MPI_INT, &t));
    check_type("indexed_block_c(INT_MAX + 3, {0, INT_MAX + 13})", t, 2 * big * 4, 0, (2 * big + 10) * 4);
    E(MPI_Type_free(&t));

    /* struct: 5 ints at 0, `big` doubles at 8, 7 chars after them; the
     * extent is padded to the doubles' alignment. */
    displs[0] = 0;
    displs[1] = 8;
    displs[2] = 8 + big * 8;
    E(MPI_Type_create_struct_c(3, lengths, displs, types, &t));
    {
        MPI_Count ub = 8 + big * 8 + 7, padded = (ub + 7) / 8 * 8;
        check_type("struct_c({5 int, INT_MAX + 3 double, 7 char})", t, 5 * 4 + big * 8 + 7, 0, padded);
    }
    E(MPI_Type_free(&t));

    E(MPI_Type_contiguous_c(2, MPI_INT, &pair));
    E(MPI_Type_create_resized_c(pair, -4, 100, &t));
    check_type("resized_c(contiguous(2, MPI_INT), -4, 100)", t, 8, -4, 100);
    E(MPI_Type_free(&t));
    E(MPI_Type_free(&pair));
}

static void large_status_and_slices(void)
{
    MPI_Status st;
    MPI_Count n = -1;
    MPI_Datatype zero;
    MPI_Op op;
    int one = 1, acc = 0;
    const MPI_Count count = ((MPI_Count)1 << 31) + 10;

    memset(&st, 0, sizeof st);
    E(MPI_Status_set_elements_x(&st, MPI_INT, (MPI_Count)INT_MAX + 5));
    E(MPI_Get_count_c(&st, MPI_INT, &n));
    CHECK(n == (MPI_Count)INT_MAX + 5, "Get_count_c above INT_MAX, expected %lld got %lld",
          (long long)INT_MAX + 5, (long long)n);
    E(MPI_Get_elements_c(&st, MPI_INT, &n));
    CHECK(n == (MPI_Count)INT_MAX + 5, "Get_elements_c above INT_MAX, got %lld", (long long)n);

    /* 2^31 + 10 elements of a type of extent 0: no memory, only slices.
     * MPICH 4.0.2 crashes on it (it copies the elements first). */
    if (MT_IS_MPICH)
        return;
    E(MPI_Op_create_c(add_ints, 1, &op));
    E(MPI_Type_create_resized(MPI_INT, 0, 0, &zero));
    E(MPI_Type_commit(&zero));
    user_calls = user_elements = user_largest = 0;
    E(MPI_Reduce_local_c(&one, &acc, count, zero, op));
    CHECK(user_elements == count, "Reduce_local_c: the user function saw %lld elements, expected %lld",
          (long long)user_elements, (long long)count);
    /* gridmpi reduces in slices of 2^30 elements (so that an int user
     * function would work too). */
    CHECK(user_largest <= INT_MAX && user_calls >= 3,
          "Reduce_local_c: %lld calls, largest slice %lld (expected slices of at most INT_MAX)",
          (long long)user_calls, (long long)user_largest);
    E(MPI_Type_free(&zero));
    E(MPI_Op_free(&op));
}

static void small_counts(void)
{
    int i, n = mt_size, r = mt_rank, right = (r + 1) % n, left = (r + n - 1) % n;
    int sbuf[8], rbuf[8], got, one = 1, *all, *expect;
    MPI_Count c = -1, *counts;
    MPI_Aint *displs;
    MPI_Request req[2];
    MPI_Status st;
    MPI_Op op;

    for (i = 0; i < 8; ++i)
        sbuf[i] = 100 * r + i, rbuf[i] = -1;
    E(MPI_Irecv_c(rbuf, 8, MPI_INT, left, 3, MPI_COMM_WORLD, &req[0]));
    E(MPI_Isend_c(sbuf, 8, MPI_INT, right, 3, MPI_COMM_WORLD, &req[1]));
    E(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    for (i = 0; i < 8; ++i)
        CHECK_INT("Isend_c/Irecv_c", 100 * left + i, rbuf[i]);
    E(MPI_Sendrecv_c(sbuf, 5, MPI_INT, right, 4, rbuf, 8, MPI_INT, left, 4, MPI_COMM_WORLD, &st));
    E(MPI_Get_count_c(&st, MPI_INT, &c));
    CHECK(c == 5, "Get_count_c after Sendrecv_c of 5, got %lld", (long long)c);
    /* (A blocking send to oneself before the receive is not safe: n > 1.) */
    if (n > 1 && r == 0)
        E(MPI_Send_c(sbuf, 3, MPI_INT, n - 1, 5, MPI_COMM_WORLD));
    if (n > 1 && r == n - 1) {
        E(MPI_Recv_c(rbuf, 8, MPI_INT, 0, 5, MPI_COMM_WORLD, &st));
        E(MPI_Get_count_c(&st, MPI_INT, &c));
        CHECK(c == 3 && rbuf[2] == 2, "Send_c/Recv_c: count %lld, last %d", (long long)c, rbuf[2]);
    }

    got = r == 0 ? 42 : -1;
    E(MPI_Bcast_c(&got, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK_INT("Bcast_c", 42, got);

    all = mt_malloc(n * 8 * sizeof(int));
    expect = mt_malloc(n * 8 * sizeof(int));
    counts = mt_malloc(n * sizeof(MPI_Count));
    displs = mt_malloc(n * sizeof(MPI_Aint));
    E(MPI_Gather_c(&r, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (r == 0)
        for (i = 0; i < n; ++i)
            CHECK_INT("Gather_c", i, all[i]);
    /* Rank i contributes i % 3 + 1 values, placed in reverse rank order. */
    for (i = 0, displs[n - 1] = 0; i < n; ++i)
        counts[i] = i % 3 + 1;
    for (i = n - 1; i >= 0; --i)
        displs[i] = i == n - 1 ? 0 : displs[i + 1] + counts[i + 1];
    E(MPI_Allgatherv_c(sbuf, counts[r], MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (i = 0; i < n; ++i) {
        int k;
        for (k = 0; k < counts[i]; ++k)
            CHECK(all[displs[i] + k] == 100 * i + k, "Allgatherv_c: rank %d value %d, expected %d got %d", i, k,
                  100 * i + k, all[displs[i] + k]);
    }
    /* Alltoallv_c: one int to every rank. */
    for (i = 0; i < n; ++i)
        counts[i] = 1, displs[i] = i, expect[i] = 1000 * r + i;
    E(MPI_Alltoallv_c(expect, counts, displs, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (i = 0; i < n; ++i)
        CHECK(all[i] == 1000 * i + r, "Alltoallv_c from %d, expected %d got %d", i, 1000 * i + r, all[i]);

    /* Reductions, with a user op taking MPI_Count lengths. */
    E(MPI_Op_create_c(add_ints, 1, &op));
    user_calls = 0;
    E(MPI_Allreduce_c(&r, &got, 1, MPI_INT, op, MPI_COMM_WORLD));
    CHECK_INT("Allreduce_c with an Op_create_c op", n * (n - 1) / 2, got);
    {
        /* Some rank ran the user function (not necessarily every one). */
        long long mine = user_calls, calls = 0;
        E(MPI_Allreduce(&mine, &calls, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(n == 1 || calls > 0, "the Op_create_c function was not called on any rank");
    }
    E(MPI_Reduce_c(&r, &got, 1, MPI_INT, MPI_MAX, n - 1, MPI_COMM_WORLD));
    if (r == n - 1)
        CHECK_INT("Reduce_c MPI_MAX", n - 1, got);
    E(MPI_Scan_c(&one, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT("Scan_c of ones", r + 1, got);
    E(MPI_Op_free(&op));

    /* gridmpi: a v collective with a count above INT_MAX is refused with
     * MPI_ERR_COUNT (not supported yet), before anything moves.  MPICH
     * supports it and would write past this small buffer. */
    if (!MT_IS_MPICH) {
        int rc, cls = -1;
        counts[0] = (MPI_Count)INT_MAX + 1;
        E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        rc = MPI_Allgatherv_c(sbuf, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK_INT("Allgatherv_c with a count above INT_MAX: error class", MPI_ERR_COUNT, cls);
        E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }

    /* Pack_c / Unpack_c with an MPI_Count position. */
    {
        char packed[64];
        MPI_Count pos = 0, size = -1;
        int back[4] = {0, 0, 0, 0};
        E(MPI_Pack_size_c(4, MPI_INT, MPI_COMM_WORLD, &size));
        CHECK(size >= 16, "Pack_size_c of 4 ints, got %lld", (long long)size);
        E(MPI_Pack_c(sbuf, 4, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD));
        CHECK(pos == 16, "Pack_c position, expected 16 got %lld", (long long)pos);
        pos = 0;
        E(MPI_Unpack_c(packed, sizeof packed, &pos, back, 4, MPI_INT, MPI_COMM_WORLD));
        for (i = 0; i < 4; ++i)
            CHECK_INT("Unpack_c", sbuf[i], back[i]);
    }
    free(all);
    free(expect);
    free(counts);
    free(displs);
}

static void large_message(void)
{
    const MPI_Count bytes = ((MPI_Count)1 << 31) + 8;
    unsigned char *buf;
    MPI_Count i, c = -1;
    MPI_Status st;
    int bad = 0;
    if (mt_size < 2 || mt_rank > 1)
        return;
    buf = malloc((size_t)bytes);
    if (!buf)
        MT_FATAL("cannot allocate %lld bytes", (long long)bytes);
    if (mt_rank == 0) {
        for (i = 0; i < bytes; ++i)
            buf[i] = (unsigned char)(i * 7 + (i >> 20));
        E(MPI_Send_c(buf, bytes, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
    } else {
        memset(buf, 0, (size_t)bytes);
        E(MPI_Recv_c(buf, bytes, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &st));
        E(MPI_Get_count_c(&st, MPI_BYTE, &c));
        CHECK(c == bytes, "Recv_c of 2^31 + 8 bytes: count %lld", (long long)c);
        for (i = 0; i < bytes; ++i)
            bad += buf[i] != (unsigned char)(i * 7 + (i >> 20));
        CHECK(bad == 0, "Recv_c of 2^31 + 8 bytes: %d wrong bytes", bad);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    large_types();
    large_status_and_slices();
    small_counts();
    if (getenv("MT_LARGE_MESSAGES") && atoi(getenv("MT_LARGE_MESSAGES")) == 1)
        large_message();
    return mt_finish();
}

#else
int main(void)
{
    printf("MPI-%d.%d has no large-count functions; nothing tested\n", MPI_VERSION, MPI_SUBVERSION);
    return 0;
}
#endif
