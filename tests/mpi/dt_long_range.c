/* 64-bit long values keep their value from any rank to any other: a ring of
 * LONG_MIN, LONG_MAX, ULONG_MAX, values just beyond 32 bits, wchar_t beyond
 * 16 bits, as MPI_LONG / MPI_UNSIGNED_LONG / MPI_WCHAR, MPI_LONG_INT pairs and
 * a struct holding a long, short (eager) and long (rendezvous, beyond one
 * IMPI packet); Probe + Get_count of such a message.  Split over clusters
 * (label clusters) the ring crosses IMPI, where gridmpi clients of the same
 * representation exchange native bytes and LP64 ones 64-bit longs.
 * MPI_Pack_external of a long is 4 big-endian bytes; one that does not fit
 * them is an error, not a cut value. */
#include <limits.h>
#include <wchar.h>

#include "mpitest.h"

#define BIG 20000 /* longs: 160 KB on LP64, several IMPI packets */

static const long values[] = {LONG_MIN, LONG_MAX, -1L, 0L, 1L, (long)INT_MAX + 1, (long)INT_MIN - 1,
                              LONG_MAX / 3, -(LONG_MAX / 5)};
#define NV ((int)(sizeof values / sizeof values[0]))

struct rec {
    int tag;
    long value;
    unsigned long uvalue;
};

static long big_value(int i, int seed) { return (i % 2 ? LONG_MIN + i : LONG_MAX - i) ^ ((long)seed << 40 >> 8); }

int main(int argc, char **argv)
{
    int next, prev, i, count;
    long out[NV], in[NV];
    unsigned long uout[4], uin[4];
    wchar_t wout[3], win[3];
    struct { long v; int i; } pout[2], pin[2];
    struct rec rout[3], rin[3];
    long *bigout, *bigin;
    MPI_Datatype rtype;
    MPI_Status st;

    mt_init(&argc, &argv);
    next = (mt_rank + 1) % mt_size;
    prev = (mt_rank + mt_size - 1) % mt_size;

    for (i = 0; i < NV; ++i)
        out[i] = values[i];
    uout[0] = ULONG_MAX;
    uout[1] = (unsigned long)UINT_MAX + 1;
    uout[2] = ULONG_MAX / 3;
    uout[3] = 5;
    wout[0] = (wchar_t)0x1F600; /* beyond 16 bits */
    wout[1] = L'x';
    wout[2] = (wchar_t)0x10FFFF;
    pout[0].v = LONG_MIN;
    pout[0].i = mt_rank;
    pout[1].v = LONG_MAX;
    pout[1].i = -mt_rank;
    for (i = 0; i < 3; ++i) {
        rout[i].tag = i + mt_rank;
        rout[i].value = i == 0 ? LONG_MIN : i == 1 ? LONG_MAX : (long)mt_rank << 33;
        rout[i].uvalue = ULONG_MAX - (unsigned long)i;
    }
    {
        int bl[3] = {1, 1, 1};
        MPI_Aint d[3] = {offsetof(struct rec, tag), offsetof(struct rec, value), offsetof(struct rec, uvalue)};
        MPI_Datatype t[3] = {MPI_INT, MPI_LONG, MPI_UNSIGNED_LONG}, tmp;
        E(MPI_Type_create_struct(3, bl, d, t, &tmp));
        E(MPI_Type_create_resized(tmp, 0, sizeof(struct rec), &rtype));
        E(MPI_Type_commit(&rtype));
        E(MPI_Type_free(&tmp));
    }

    /* The ring, each type in turn. */
    E(MPI_Sendrecv(out, NV, MPI_LONG, next, 1, in, NV, MPI_LONG, prev, 1, MPI_COMM_WORLD, &st));
    for (i = 0; i < NV; ++i)
        CHECK(in[i] == values[i], "MPI_LONG element %d from rank %d, expected %ld got %ld", i, prev, values[i], in[i]);
    E(MPI_Sendrecv(uout, 4, MPI_UNSIGNED_LONG, next, 2, uin, 4, MPI_UNSIGNED_LONG, prev, 2, MPI_COMM_WORLD, &st));
    for (i = 0; i < 4; ++i)
        CHECK(uin[i] == uout[i], "MPI_UNSIGNED_LONG element %d, expected %lu got %lu", i, uout[i], uin[i]);
    E(MPI_Sendrecv(wout, 3, MPI_WCHAR, next, 3, win, 3, MPI_WCHAR, prev, 3, MPI_COMM_WORLD, &st));
    for (i = 0; i < 3; ++i)
        CHECK(win[i] == wout[i], "MPI_WCHAR element %d, expected 0x%lx got 0x%lx", i, (long)wout[i], (long)win[i]);
    E(MPI_Sendrecv(pout, 2, MPI_LONG_INT, next, 4, pin, 2, MPI_LONG_INT, prev, 4, MPI_COMM_WORLD, &st));
    CHECK(pin[0].v == LONG_MIN && pin[0].i == prev, "MPI_LONG_INT 0, expected (%ld,%d) got (%ld,%d)", LONG_MIN, prev,
          pin[0].v, pin[0].i);
    CHECK(pin[1].v == LONG_MAX && pin[1].i == -prev, "MPI_LONG_INT 1, expected (%ld,%d) got (%ld,%d)", LONG_MAX,
          -prev, pin[1].v, pin[1].i);
    E(MPI_Sendrecv(rout, 3, rtype, next, 5, rin, 3, rtype, prev, 5, MPI_COMM_WORLD, &st));
    for (i = 0; i < 3; ++i) {
        long expect = i == 0 ? LONG_MIN : i == 1 ? LONG_MAX : (long)prev << 33;
        CHECK(rin[i].tag == i + prev && rin[i].value == expect && rin[i].uvalue == ULONG_MAX - (unsigned long)i,
              "struct element %d, expected (%d,%ld,%lu) got (%d,%ld,%lu)", i, i + prev, expect,
              ULONG_MAX - (unsigned long)i, rin[i].tag, rin[i].value, rin[i].uvalue);
    }

    /* Long messages, probed first: Get_count counts longs. */
    bigout = mt_malloc(BIG * sizeof(long));
    bigin = mt_malloc(BIG * sizeof(long));
    for (i = 0; i < BIG; ++i) {
        bigout[i] = big_value(i, mt_rank);
        bigin[i] = 0;
    }
    {
        MPI_Request req;
        E(MPI_Isend(bigout, BIG, MPI_LONG, next, 6, MPI_COMM_WORLD, &req));
        E(MPI_Probe(prev, 6, MPI_COMM_WORLD, &st));
        E(MPI_Get_count(&st, MPI_LONG, &count));
        CHECK_INT("Get_count of the probed long message", BIG, count);
        E(MPI_Recv(bigin, BIG, MPI_LONG, prev, 6, MPI_COMM_WORLD, &st));
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        E(MPI_Get_count(&st, MPI_LONG, &count));
        CHECK_INT("Get_count of the long message", BIG, count);
        for (i = 0; i < BIG; ++i)
            if (bigin[i] != big_value(i, prev)) {
                MT_FAIL("long message element %d, expected %ld got %ld", i, big_value(i, prev), bigin[i]);
                break;
            }
    }

    /* MPI_Pack_external: external32 holds a long in 4 big-endian bytes. */
    {
        MPI_Aint size, pos = 0;
        unsigned char buf[16];
        long small = -2, large = LONG_MAX;
        int rc, cls;
        E(MPI_Pack_external_size("external32", 1, MPI_LONG, &size));
        CHECK(size == 4, "Pack_external_size(1, MPI_LONG), expected 4 got %ld", (long)size);
        E(MPI_Pack_external("external32", &small, 1, MPI_LONG, buf, sizeof buf, &pos));
        CHECK(pos == 4 && buf[0] == 0xff && buf[1] == 0xff && buf[2] == 0xff && buf[3] == 0xfe,
              "Pack_external(-2L): expected ff ff ff fe at 4, got %02x %02x %02x %02x at %ld", buf[0], buf[1], buf[2],
              buf[3], (long)pos);
        /* MPICH and Open MPI truncate a long beyond 32 bits silently (a
         * value changed without an error): checked on gridmpi only. */
        if (sizeof(long) > 4 && !MT_IS_MPICH && !MT_IS_OPENMPI) {
            E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
            E(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
            pos = 0;
            rc = MPI_Pack_external("external32", &large, 1, MPI_LONG, buf, sizeof buf, &pos);
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_CONVERSION, "Pack_external(LONG_MAX) into external32, expected MPI_ERR_CONVERSION "
                                             "got %s", mt_error_text(rc));
            E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
            E(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
        }
    }

    free(bigout);
    free(bigin);
    E(MPI_Type_free(&rtype));
    return mt_finish();
}
