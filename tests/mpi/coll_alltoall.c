/* MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw: sizes 0, 1, small,
 * > 64 KiB, with and without MPI_IN_PLACE, MPI_INT and a non-contiguous
 * derived type (mixed with MPI_INT in alltoallw), on MPI_COMM_WORLD, a dup
 * and a split. */
#include "coll_common.h"

/* Value of element i of the block that `from` sends to `to`. */
static int a2a_val(int from, int to, int i, int salt)
{
    return cc_val(from * 16 + to, i, salt);
}

static void test_alltoall(const cc_comm *c, int count, int in_place, int strided)
{
    int p = c->size, r = c->rank, i, j;
    int unit = strided ? CC_STRIDE : 1;
    MPI_Datatype type = strided ? cc_strided : MPI_INT;
    size_t n = (size_t)count * unit * p;
    int *send = cc_ints(n), *recv = cc_ints(n), *expected = cc_ints(n);
    for (j = 0; j < p; ++j) {
        for (i = 0; i < count; ++i) {
            if (strided) {
                send[(j * count + i) * CC_STRIDE] = a2a_val(r, j, 2 * i, count);
                send[(j * count + i) * CC_STRIDE + 1] = CC_HOLE;
                send[(j * count + i) * CC_STRIDE + 2] = a2a_val(r, j, 2 * i + 1, count);
                send[(j * count + i) * CC_STRIDE + 3] = CC_HOLE;
                expected[(j * count + i) * CC_STRIDE] = a2a_val(j, r, 2 * i, count);
                expected[(j * count + i) * CC_STRIDE + 1] = CC_HOLE;
                expected[(j * count + i) * CC_STRIDE + 2] = a2a_val(j, r, 2 * i + 1, count);
                expected[(j * count + i) * CC_STRIDE + 3] = CC_HOLE;
            } else {
                send[j * count + i] = a2a_val(r, j, i, count);
                expected[j * count + i] = a2a_val(j, r, i, count);
            }
        }
    }
    if (in_place) {
        memcpy(recv, send, n * sizeof(int));
        E(MPI_Alltoall(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, recv, count, type, c->comm));
    } else {
        cc_set(recv, (int)n, strided ? CC_HOLE : CC_UNSET);
        E(MPI_Alltoall(send, count, type, recv, count, type, c->comm));
    }
    CC_CHECK_INTS(in_place ? "alltoall in place" : "alltoall", c, recv, expected, (int)n);
    free(send);
    free(recv);
    free(expected);
}

/* Alltoallv: rank r sends (r + j) % 3 * count elements to rank j, blocks in
 * reverse order with gaps. */
static int a2av_count(int from, int to, int count)
{
    return ((from + to) % 3) * count;
}

static void test_alltoallv(const cc_comm *c, int count, int in_place)
{
    int p = c->size, r = c->rank, i, j, stotal = 0, rtotal = 0;
    int *scounts = cc_ints((size_t)p), *sdispls = cc_ints((size_t)p);
    int *rcounts = cc_ints((size_t)p), *rdispls = cc_ints((size_t)p);
    int *send, *recv, *expected;
    for (j = 0; j < p; ++j) {
        scounts[j] = a2av_count(r, j, count);
        rcounts[j] = a2av_count(j, r, count);
        if (in_place)
            scounts[j] = rcounts[j]; /* in place: the send side mirrors the receive side */
        stotal += scounts[j] + 1;
        rtotal += rcounts[j] + 1;
    }
    for (j = 0, i = stotal; j < p; ++j) {
        i -= scounts[j] + 1;
        sdispls[j] = i;
    }
    for (j = p - 1, i = rtotal; j >= 0; --j) {
        i -= rcounts[j] + 1;
        rdispls[j] = i;
    }
    send = cc_ints((size_t)stotal);
    recv = cc_ints((size_t)rtotal);
    expected = cc_ints((size_t)rtotal);
    cc_set(send, stotal, CC_HOLE);
    cc_set(expected, rtotal, in_place ? CC_HOLE : CC_UNSET);
    for (j = 0; j < p; ++j) {
        for (i = 0; i < scounts[j]; ++i)
            send[sdispls[j] + i] = a2a_val(r, j, i, 5);
        for (i = 0; i < rcounts[j]; ++i)
            expected[rdispls[j] + i] = a2a_val(j, r, i, 5);
    }
    if (in_place) {
        /* recv starts with what this rank sends to each j, at rdispls[j] */
        cc_set(recv, rtotal, CC_HOLE);
        for (j = 0; j < p; ++j)
            for (i = 0; i < rcounts[j]; ++i)
                recv[rdispls[j] + i] = a2a_val(r, j, i, 5);
        E(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, recv, rcounts, rdispls,
                        MPI_INT, c->comm));
    } else {
        cc_set(recv, rtotal, CC_UNSET);
        E(MPI_Alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT,
                        c->comm));
    }
    CC_CHECK_INTS(in_place ? "alltoallv in place" : "alltoallv", c, recv, expected, rtotal);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    free(send);
    free(recv);
    free(expected);
}

/* Alltoallw: even peers exchange MPI_INT, odd peers exchange strided
 * elements (send side) received as MPI_INT, byte displacements. */
static void test_alltoallw(const cc_comm *c, int count, int in_place)
{
    int p = c->size, r = c->rank, i, j;
    int *scounts = cc_ints((size_t)p), *sdispls = cc_ints((size_t)p);
    int *rcounts = cc_ints((size_t)p), *rdispls = cc_ints((size_t)p);
    MPI_Datatype *stypes = (MPI_Datatype *)mt_malloc((size_t)p * sizeof(MPI_Datatype));
    MPI_Datatype *rtypes = (MPI_Datatype *)mt_malloc((size_t)p * sizeof(MPI_Datatype));
    size_t block = (size_t)count * CC_STRIDE + 1; /* ints reserved per peer */
    int *send = cc_ints(block * p), *recv = cc_ints(block * p), *expected = cc_ints(block * p);
    cc_set(expected, (int)(block * p), CC_UNSET);
    for (j = 0; j < p; ++j) {
        sdispls[j] = rdispls[j] = (int)(j * block * sizeof(int));
        if (in_place) {
            /* both sides must describe the same layout: strided for odd pairs */
            int strided = (r + j) % 2;
            stypes[j] = rtypes[j] = strided ? cc_strided : MPI_INT;
            scounts[j] = rcounts[j] = strided ? count : 2 * count;
            cc_set(expected + j * block, (int)block, CC_HOLE); /* recv starts as a copy of send */
            for (i = 0; i < 2 * count; ++i)
                expected[j * block + (strided ? (i / 2) * CC_STRIDE + (i % 2) * 2 : i)] =
                    a2a_val(j, r, i, 7);
        } else {
            stypes[j] = (r + j) % 2 ? cc_strided : MPI_INT;
            scounts[j] = (r + j) % 2 ? count : 2 * count;
            rtypes[j] = MPI_INT;
            rcounts[j] = 2 * count;
            for (i = 0; i < 2 * count; ++i)
                expected[j * block + i] = a2a_val(j, r, i, 7);
        }
    }
    cc_set(send, (int)(block * p), CC_HOLE);
    for (j = 0; j < p; ++j)
        for (i = 0; i < 2 * count; ++i)
            send[j * block + (stypes[j] == cc_strided ? (i / 2) * CC_STRIDE + (i % 2) * 2 : i)] =
                a2a_val(r, j, i, 7);
    if (in_place) {
        memcpy(recv, send, block * p * sizeof(int));
        E(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, recv, rcounts, rdispls, rtypes,
                        c->comm));
    } else {
        cc_set(recv, (int)(block * p), CC_UNSET);
        E(MPI_Alltoallw(send, scounts, sdispls, stypes, recv, rcounts, rdispls, rtypes, c->comm));
    }
    CC_CHECK_INTS(in_place ? "alltoallw in place" : "alltoallw", c, recv, expected,
                  (int)(block * p));
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    free(stypes);
    free(rtypes);
    free(send);
    free(recv);
    free(expected);
}

int main(int argc, char **argv)
{
    int ci, k;
    cc_setup(&argc, &argv);
    for (ci = 0; ci < cc_ncomms; ++ci) {
        const cc_comm *c = &cc_comms[ci];
        for (k = 0; k < CC_NCOUNTS; ++k) {
            int n = cc_counts[k];
            if (cc_skip(ci, n))
                continue;
            test_alltoall(c, n, 0, 0);
            test_alltoall(c, n, 1, 0);
            test_alltoall(c, n / 2, 0, 1);
            test_alltoall(c, n / 2, 1, 1);
            test_alltoallv(c, n / 2, 0);
            test_alltoallv(c, n / 2, 1);
            test_alltoallw(c, n / 2, 0);
            test_alltoallw(c, n / 2, 1);
        }
    }
    return cc_teardown();
}
