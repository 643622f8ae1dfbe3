/* rma_fence.c — MPI_Put / MPI_Get / MPI_Accumulate under MPI_Win_fence:
 * MPI_SUM, MPI_REPLACE, MPI_MAX and MPI_MAXLOC on int, double and MPI_2INT,
 * with contiguous and derived origin and target datatypes.  Every value is
 * checked exactly. */
#include "mpitest.h"

#define N 64

static int left_of(int r) { return (r - 1 + mt_size) % mt_size; }
static int right_of(int r) { return (r + 1) % mt_size; }

static void test_put_get_int(void)
{
    int buf[N], got[10], i, one;
    MPI_Win win;
    for (i = 0; i < N; ++i) buf[i] = mt_rank * 1000 + i;
    E(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    E(MPI_Win_fence(0, win));
    /* read before anyone writes: the right neighbour's slots 5..14 */
    E(MPI_Get(got, 10, MPI_INT, right_of(mt_rank), 5, 10, MPI_INT, win));
    E(MPI_Win_fence(0, win));
    for (i = 0; i < 10; ++i)
        CHECK_INT("MPI_Get from the right neighbour", right_of(mt_rank) * 1000 + 5 + i, got[i]);
    one = mt_rank + 100;
    E(MPI_Put(&one, 1, MPI_INT, right_of(mt_rank), 50, 1, MPI_INT, win));
    E(MPI_Win_fence(0, win));
    CHECK_INT("MPI_Put from the left neighbour", left_of(mt_rank) + 100, buf[50]);
    CHECK_INT("untouched slot", mt_rank * 1000 + 49, buf[49]);
    /* MPI_PROC_NULL is a no-op target */
    E(MPI_Put(&one, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    E(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_INT("MPI_PROC_NULL put changed nothing", mt_rank * 1000, buf[0]);
    E(MPI_Win_free(&win));
    CHECK_INT("MPI_Win_free sets MPI_WIN_NULL", MT_H(MPI_WIN_NULL), MT_H(win));
}

static void test_accumulate(void)
{
    int ibuf[N], vals[8], i, r;
    double dbuf[N], dv[4];
    MPI_Win iwin, dwin;
    for (i = 0; i < N; ++i) {
        ibuf[i] = i;
        dbuf[i] = -1000.0;
    }
    E(MPI_Win_create(ibuf, sizeof ibuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &iwin));
    E(MPI_Win_create(dbuf, sizeof dbuf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &dwin));
    E(MPI_Win_fence(0, iwin));
    E(MPI_Win_fence(0, dwin));
    for (i = 0; i < 8; ++i) vals[i] = mt_rank + i;
    for (i = 0; i < 4; ++i) dv[i] = 0.5 * mt_rank + i;
    for (r = 0; r < mt_size; ++r) {
        E(MPI_Accumulate(vals, 8, MPI_INT, r, 8, 8, MPI_INT, MPI_SUM, iwin));
        E(MPI_Accumulate(vals, 2, MPI_INT, r, 20, 2, MPI_INT, MPI_REPLACE, iwin));
        E(MPI_Accumulate(dv, 4, MPI_DOUBLE, r, 0, 4, MPI_DOUBLE, MPI_MAX, dwin));
        E(MPI_Accumulate(dv, 4, MPI_DOUBLE, r, 10, 4, MPI_DOUBLE, MPI_SUM, dwin));
    }
    E(MPI_Win_fence(0, iwin));
    E(MPI_Win_fence(0, dwin));
    for (i = 0; i < 8; ++i) {
        int expect = 8 + i;
        for (r = 0; r < mt_size; ++r) expect += r + i;
        CHECK_INT("MPI_SUM accumulate of every rank", expect, ibuf[8 + i]);
    }
    /* MPI_REPLACE from every rank: one of them wins, whole */
    CHECK(ibuf[20] >= 0 && ibuf[20] < mt_size && ibuf[21] == ibuf[20] + 1,
          "MPI_REPLACE accumulate: got %d %d", ibuf[20], ibuf[21]);
    for (i = 0; i < 4; ++i) {
        double sum = -1000.0;
        for (r = 0; r < mt_size; ++r) sum += 0.5 * r + i;
        CHECK(dbuf[i] == 0.5 * (mt_size - 1) + i, "MPI_MAX on double [%d]: got %g", i, dbuf[i]);
        CHECK(dbuf[10 + i] == sum, "MPI_SUM on double [%d]: expected %g got %g", i, sum, dbuf[10 + i]);
    }
    E(MPI_Win_free(&iwin));
    E(MPI_Win_free(&dwin));
}

static void test_derived(void)
{
    int buf[N], src[8], got[6], i;
    double dbuf[N], dsrc[3];
    int blens[3] = {2, 1, 1}, disps[3] = {0, 5, 10};
    MPI_Datatype every_other, scattered, dstride, istride3;
    MPI_Win win, dwin;
    E(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other)); /* 4 ints, stride 2 */
    E(MPI_Type_commit(&every_other));
    E(MPI_Type_indexed(3, blens, disps, MPI_INT, &scattered)); /* 4 ints at 0,1,5,10 */
    E(MPI_Type_commit(&scattered));
    E(MPI_Type_vector(3, 1, 4, MPI_DOUBLE, &dstride)); /* 3 doubles, stride 4 */
    E(MPI_Type_commit(&dstride));
    E(MPI_Type_vector(6, 1, 3, MPI_INT, &istride3));
    E(MPI_Type_commit(&istride3));
    for (i = 0; i < N; ++i) {
        buf[i] = -1;
        dbuf[i] = 1.0;
    }
    for (i = 0; i < 8; ++i) src[i] = mt_rank * 10 + i;
    for (i = 0; i < 3; ++i) dsrc[i] = mt_rank + 1.0;
    E(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    E(MPI_Win_create(dbuf, sizeof dbuf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &dwin));
    E(MPI_Win_fence(0, win));
    E(MPI_Win_fence(0, dwin));
    /* src[0], src[2], src[4], src[6] -> target 30, 31, 35, 40 */
    E(MPI_Put(src, 1, every_other, right_of(mt_rank), 30, 1, scattered, win));
    E(MPI_Accumulate(dsrc, 3, MPI_DOUBLE, right_of(mt_rank), 2, 1, dstride, MPI_SUM, dwin));
    E(MPI_Win_fence(0, win));
    E(MPI_Win_fence(0, dwin));
    {
        int l = left_of(mt_rank);
        CHECK_INT("derived put [30]", l * 10 + 0, buf[30]);
        CHECK_INT("derived put [31]", l * 10 + 2, buf[31]);
        CHECK_INT("derived put [32] untouched", -1, buf[32]);
        CHECK_INT("derived put [35]", l * 10 + 4, buf[35]);
        CHECK_INT("derived put [40]", l * 10 + 6, buf[40]);
        for (i = 0; i < 12; ++i) {
            double expect = (i % 4 == 0 && i < 12) ? 1.0 + l + 1.0 : 1.0;
            CHECK(dbuf[2 + i] == expect, "derived accumulate dbuf[%d]: expected %g got %g", 2 + i, expect, dbuf[2 + i]);
        }
    }
    /* a strided get: every third int of the right neighbour from slot 0 */
    for (i = 0; i < N; ++i) buf[i] = mt_rank * 1000 + i;
    E(MPI_Win_fence(0, win));
    E(MPI_Get(got, 6, MPI_INT, right_of(mt_rank), 0, 1, istride3, win));
    E(MPI_Win_fence(0, win));
    for (i = 0; i < 6; ++i)
        CHECK_INT("strided get", right_of(mt_rank) * 1000 + 3 * i, got[i]);
    E(MPI_Win_fence(MPI_MODE_NOSUCCEED, dwin));
    E(MPI_Win_free(&win));
    E(MPI_Win_free(&dwin));
    E(MPI_Type_free(&every_other));
    E(MPI_Type_free(&scattered));
    E(MPI_Type_free(&dstride));
    E(MPI_Type_free(&istride3));
}

static void test_maxloc(void)
{
    int pairs[2 * 4], mine[2], i;
    MPI_Win win;
    for (i = 0; i < 4; ++i) {
        pairs[2 * i] = -1;
        pairs[2 * i + 1] = -1;
    }
    E(MPI_Win_create(pairs, sizeof pairs, 2 * sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    E(MPI_Win_fence(0, win));
    mine[0] = (mt_rank * 5) % 3; /* value */
    mine[1] = mt_rank;           /* location */
    E(MPI_Accumulate(mine, 1, MPI_2INT, 0, 1, 1, MPI_2INT, MPI_MAXLOC, win));
    E(MPI_Win_fence(0, win));
    if (mt_rank == 0) {
        int best = -1, where = -1, r;
        for (r = 0; r < mt_size; ++r)
            if ((r * 5) % 3 > best) {
                best = (r * 5) % 3;
                where = r;
            }
        CHECK_INT("MPI_MAXLOC value", best, pairs[2]);
        CHECK_INT("MPI_MAXLOC location (lowest on ties)", where, pairs[3]);
        CHECK_INT("pair 0 untouched", -1, pairs[0]);
    }
    E(MPI_Win_free(&win));
}

/* 256 KiB each way: operations and answers larger than any eager limit */
static void test_large(void)
{
    enum { BIG = 1 << 16 };
    int *mem = NULL, *src = malloc(sizeof(int) * BIG), *back = malloc(sizeof(int) * BIG), i, bad = 0;
    MPI_Win win;
    E(MPI_Win_allocate(sizeof(int) * BIG, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (i = 0; i < BIG; ++i) src[i] = mt_rank * BIG + i;
    E(MPI_Win_fence(0, win));
    E(MPI_Put(src, BIG, MPI_INT, right_of(mt_rank), 0, BIG, MPI_INT, win));
    E(MPI_Win_fence(0, win));
    E(MPI_Get(back, BIG, MPI_INT, right_of(mt_rank), 0, BIG, MPI_INT, win));
    E(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (i = 0; i < BIG; ++i) {
        bad += mem[i] != left_of(mt_rank) * BIG + i;
        bad += back[i] != src[i];
    }
    CHECK_INT("wrong values in a large put and get", 0, bad);
    E(MPI_Win_free(&win));
    free(src);
    free(back);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    test_put_get_int();
    test_large();
    test_accumulate();
    test_derived();
    test_maxloc();
    return mt_finish();
}
