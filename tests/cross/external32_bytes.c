/* external32_bytes.c — MPI_Pack_external("external32") of every predefined
 * datatype (and two derived ones) gives exactly the bytes of MPI-2.2
 * §4.3.2 / IMPI's data representation, on any host: big-endian, LONG 4
 * bytes, WCHAR 2, LONG DOUBLE and REAL16 16-byte IEEE binary128, pairs
 * packed without padding.  Each stream is then unpacked and must give the
 * original values back.  The same program runs on the x86-64 build and on
 * the big-endian (s390x) build (tests/cross/run_external32): both must pass,
 * which is what lets the two clusters of a heterogeneous IMPI job exchange
 * data.  Every rank does the same checks (rank count does not matter).
 * Not in tests/mpi: Debian's Open MPI 4.1.4 (8-byte LONG, native long
 * double) and MPICH 4.0.2 (asserts in Pack_external) fail it.
 */
#include <complex.h>
#include <float.h>
#include <stdbool.h>
#include <wchar.h>

#include "mpitest.h"

#if __LDBL_MANT_DIG__ == 113
typedef long double quad; /* s390x, aarch64: long double is binary128 */
#else
typedef __float128 quad;
#endif

static void dump(const char *what, const unsigned char *p, MPI_Aint n)
{
    char text[3 * 64 + 1];
    MPI_Aint i;
    text[0] = 0;
    for (i = 0; i < n && i < 64; ++i)
        sprintf(text + 3 * i, "%02x ", p[i]);
    printf("    %s: %s\n", what, text);
}

/* Packs count elements of type at value, compares with want[0..n), unpacks
 * into a zeroed buffer and compares its first `compare` bytes with value
 * (compare = 0: skip, for types with padding the caller checks by hand). */
static void check_type(const char *name, MPI_Datatype type, const void *value, int count, const unsigned char *want,
                       MPI_Aint n, void *back, size_t compare)
{
    unsigned char ext[256];
    MPI_Aint size = -1, pos = 0, upos = 0;
    int rc = MPI_Pack_external_size("external32", count, type, &size);
    if (rc != MPI_SUCCESS) {
        MT_FAIL("%s: Pack_external_size returned %d", name, rc);
        return;
    }
    if (size != n) {
        MT_FAIL("%s: Pack_external_size, expected %ld got %ld", name, (long)n, (long)size);
        return;
    }
    memset(ext, 0xee, sizeof ext);
    rc = MPI_Pack_external("external32", value, count, type, ext, sizeof ext, &pos);
    if (rc != MPI_SUCCESS || pos != n) {
        MT_FAIL("%s: Pack_external returned %d, position %ld (expected %ld)", name, rc, (long)pos, (long)n);
        return;
    }
    if (memcmp(ext, want, (size_t)n) != 0) {
        MT_FAIL("%s: external32 bytes differ", name);
        dump("expected", want, n);
        dump("got     ", ext, n);
    }
    if (compare > 0) {
        memset(back, 0, compare);
        rc = MPI_Unpack_external("external32", ext, n, &upos, back, count, type);
        if (rc != MPI_SUCCESS || upos != n)
            MT_FAIL("%s: Unpack_external returned %d, position %ld", name, rc, (long)upos);
        else if (memcmp(back, value, compare) != 0)
            MT_FAIL("%s: Unpack_external does not give the packed value back", name);
    }
}

/* Unpacks one element of type from the n bytes at ext into back (zeroed first). */
static void unpack_value(const char *name, MPI_Datatype type, const unsigned char *ext, MPI_Aint n, void *back,
                         size_t size)
{
    MPI_Aint upos = 0;
    memset(back, 0, size);
    if (MPI_Unpack_external("external32", ext, n, &upos, back, 1, type) != MPI_SUCCESS || upos != n)
        MT_FAIL("%s: Unpack_external failed or stopped at %ld", name, (long)upos);
}

#define BYTES(...) ((const unsigned char[]){__VA_ARGS__}), sizeof((const unsigned char[]){__VA_ARGS__})
/* One variable of a C type: value v, expected external32 bytes. */
#define ONE(mpi, ctype, v, ...)                                                                                        \
    do {                                                                                                               \
        ctype value_ = (v), back_;                                                                                     \
        check_type(#mpi, mpi, &value_, 1, BYTES(__VA_ARGS__), &back_, sizeof value_);                                 \
    } while (0)

/* The same for long double types, compared by value: the x87 format has 6
 * bytes of padding that Unpack need not write. */
#define LDOUBLE(mpi, ctype, v, ...)                                                                                    \
    do {                                                                                                               \
        ctype value_ = (v), back_;                                                                                     \
        check_type(#mpi, mpi, &value_, 1, BYTES(__VA_ARGS__), &back_, 0);                                             \
        unpack_value(#mpi, mpi, BYTES(__VA_ARGS__), &back_, sizeof back_);                                            \
        CHECK(back_ == value_, "%s: Unpack_external does not give the packed value back", #mpi);                      \
    } while (0)

#define Q1_5 0x3f, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0        /* binary128 1.5 */
#define QM2 0xc0, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0            /* binary128 -2 */
#define QTENTH 0x3f, 0xfb, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99 /* 0.1L: first 72 bits */

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);

    ONE(MPI_CHAR, char, 'A', 0x41);
    ONE(MPI_SIGNED_CHAR, signed char, -2, 0xfe);
    ONE(MPI_UNSIGNED_CHAR, unsigned char, 0xab, 0xab);
    ONE(MPI_BYTE, unsigned char, 0x5c, 0x5c);
    ONE(MPI_SHORT, short, -2, 0xff, 0xfe);
    ONE(MPI_UNSIGNED_SHORT, unsigned short, 0x1234, 0x12, 0x34);
    ONE(MPI_INT, int, 0x01020304, 0x01, 0x02, 0x03, 0x04);
    ONE(MPI_UNSIGNED, unsigned, 0xfffffffeu, 0xff, 0xff, 0xff, 0xfe);
    ONE(MPI_LONG, long, -2, 0xff, 0xff, 0xff, 0xfe); /* external32 LONG is 4 bytes */
    ONE(MPI_LONG, long, 0x12345678, 0x12, 0x34, 0x56, 0x78);
    ONE(MPI_UNSIGNED_LONG, unsigned long, 0x89abcdefUL, 0x89, 0xab, 0xcd, 0xef);
    ONE(MPI_LONG_LONG, long long, 0x0102030405060708LL, 1, 2, 3, 4, 5, 6, 7, 8);
    ONE(MPI_UNSIGNED_LONG_LONG, unsigned long long, 0xfffffffffffffffeULL, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xfe);
    ONE(MPI_FLOAT, float, 1.5f, 0x3f, 0xc0, 0, 0);
    ONE(MPI_DOUBLE, double, -2.5, 0xc0, 0x04, 0, 0, 0, 0, 0, 0);
    LDOUBLE(MPI_LONG_DOUBLE, long double, 1.5L, Q1_5);
    LDOUBLE(MPI_LONG_DOUBLE, long double, -2.0L, QM2);
    ONE(MPI_WCHAR, wchar_t, L'Z', 0x00, 0x5a); /* external32 WCHAR is 2 bytes */
    ONE(MPI_C_BOOL, bool, true, 0x01);
    ONE(MPI_INT8_T, int8_t, -3, 0xfd);
    ONE(MPI_UINT8_T, uint8_t, 0xfe, 0xfe);
    ONE(MPI_INT16_T, int16_t, -3, 0xff, 0xfd);
    ONE(MPI_UINT16_T, uint16_t, 0xbeef, 0xbe, 0xef);
    ONE(MPI_INT32_T, int32_t, -3, 0xff, 0xff, 0xff, 0xfd);
    ONE(MPI_UINT32_T, uint32_t, 0xdeadbeefu, 0xde, 0xad, 0xbe, 0xef);
    ONE(MPI_INT64_T, int64_t, -3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd);
    ONE(MPI_UINT64_T, uint64_t, 0x0123456789abcdefULL, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef);
    ONE(MPI_AINT, MPI_Aint, -2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe);
    ONE(MPI_OFFSET, MPI_Offset, 0x0102030405060708LL, 1, 2, 3, 4, 5, 6, 7, 8);
    ONE(MPI_COUNT, MPI_Count, 0x0102030405060708LL, 1, 2, 3, 4, 5, 6, 7, 8);
    ONE(MPI_C_FLOAT_COMPLEX, float _Complex, 1.5f - 2.5f * I, 0x3f, 0xc0, 0, 0, 0xc0, 0x20, 0, 0);
    ONE(MPI_C_DOUBLE_COMPLEX, double _Complex, 1.0 - 2.5 * I, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0x04, 0, 0, 0, 0,
        0, 0);
    LDOUBLE(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, 1.5L - 2.0L * I, Q1_5, QM2);
    /* Fortran types through their C equivalents (gfortran's sizes). */
    ONE(MPI_INTEGER, int, -2, 0xff, 0xff, 0xff, 0xfe);
    ONE(MPI_LOGICAL, int, 1, 0, 0, 0, 1);
    ONE(MPI_REAL, float, 1.5f, 0x3f, 0xc0, 0, 0);
    ONE(MPI_DOUBLE_PRECISION, double, -2.5, 0xc0, 0x04, 0, 0, 0, 0, 0, 0);
    ONE(MPI_CHARACTER, char, 'x', 0x78);
    ONE(MPI_COMPLEX, float _Complex, 1.5f - 2.5f * I, 0x3f, 0xc0, 0, 0, 0xc0, 0x20, 0, 0);
    ONE(MPI_INTEGER8, int64_t, -3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd);
    ONE(MPI_REAL16, quad, 1.5, Q1_5);

    /* 0.1L is not exact in any format: x87 (64-bit significand, rounded in
     * the 80th bit of the stream) and binary128 agree on the leading 72 bits;
     * compare those and check the round trip in host precision. */
    {
        long double v = 0.1L, back = 0;
        unsigned char ext[16];
        MPI_Aint pos = 0, upos = 0;
        static const unsigned char want[] = {QTENTH};
        E(MPI_Pack_external("external32", &v, 1, MPI_LONG_DOUBLE, ext, sizeof ext, &pos));
        if (memcmp(ext, want, sizeof want) != 0) {
            MT_FAIL("MPI_LONG_DOUBLE 0.1: leading external32 bytes differ");
            dump("expected", want, sizeof want);
            dump("got     ", ext, sizeof want);
        }
        E(MPI_Unpack_external("external32", ext, pos, &upos, &back, 1, MPI_LONG_DOUBLE));
        CHECK(back == v, "MPI_LONG_DOUBLE 0.1: Unpack_external gives %Lg", back);
    }

    /* Pair types: the two parts back to back, no padding. */
    {
        struct { float v; int i; } fi = {1.5f, -2}, fib;
        struct { double v; int i; } di = {1.0, 7}, dib;
        struct { long v; int i; } li = {-2, 3}, lib;
        struct { short v; int i; } si = {-2, 3}, sib;
        struct { long double v; int i; } ldi = {1.5L, 5}, ldib;
        int two[2] = {1, -1}, twob[2];
        check_type("MPI_FLOAT_INT", MPI_FLOAT_INT, &fi, 1, BYTES(0x3f, 0xc0, 0, 0, 0xff, 0xff, 0xff, 0xfe), &fib, 0);
        check_type("MPI_DOUBLE_INT", MPI_DOUBLE_INT, &di, 1, BYTES(0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7), &dib,
                   0);
        check_type("MPI_LONG_INT", MPI_LONG_INT, &li, 1, BYTES(0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 3), &lib, 0);
        check_type("MPI_SHORT_INT", MPI_SHORT_INT, &si, 1, BYTES(0xff, 0xfe, 0, 0, 0, 3), &sib, 0);
        check_type("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, &ldi, 1, BYTES(Q1_5, 0, 0, 0, 5), &ldib, 0);
        check_type("MPI_2INT", MPI_2INT, two, 1, BYTES(0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff), twob, sizeof two);
        memset(&dib, 0, sizeof dib);
        {
            unsigned char ext[12] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
            MPI_Aint upos = 0;
            E(MPI_Unpack_external("external32", ext, 12, &upos, &dib, 1, MPI_DOUBLE_INT));
            CHECK(dib.v == 1.0 && dib.i == 7, "MPI_DOUBLE_INT unpacked as (%g, %d)", dib.v, dib.i);
        }
        {
            unsigned char ext[8] = {0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 3};
            MPI_Aint upos = 0;
            memset(&lib, 0, sizeof lib);
            E(MPI_Unpack_external("external32", ext, 8, &upos, &lib, 1, MPI_LONG_INT));
            CHECK(lib.v == -2 && lib.i == 3, "MPI_LONG_INT unpacked as (%ld, %d): LONG sign-extended", lib.v, lib.i);
        }
        (void)fib;
        (void)sib;
        (void)ldib;
    }

    /* A struct with padding (char, double, 2 ints, long) and a strided
     * vector of shorts: the stream has no holes, every field big-endian. */
    {
        struct s { char c; double d; int i[2]; long l; } v[2] = {{'a', 1.5, {1, -1}, -2}, {'b', -2.5, {2, 3}, 4}}, b[2];
        int lens[4] = {1, 1, 2, 1};
        MPI_Aint disp[4] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i), offsetof(struct s, l)};
        MPI_Datatype types[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_LONG}, st, st2, vec;
        short sh[6] = {1, -1, 2, -2, 3, -3}, shb[6];
        E(MPI_Type_create_struct(4, lens, disp, types, &st));
        E(MPI_Type_create_resized(st, 0, sizeof(struct s), &st2));
        E(MPI_Type_commit(&st2));
        check_type("struct {char, double, int[2], long} x 2", st2, v, 2,
                   BYTES('a', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
                         'b', 0xc0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4),
                   b, 0);
        {
            unsigned char ext[42] = {'a', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xff, 0xfe, 'b', 0xc0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4};
            MPI_Aint upos = 0;
            int k;
            memset(b, 0, sizeof b);
            E(MPI_Unpack_external("external32", ext, sizeof ext, &upos, b, 2, st2));
            for (k = 0; k < 2; ++k)
                CHECK(b[k].c == v[k].c && b[k].d == v[k].d && b[k].i[0] == v[k].i[0] && b[k].i[1] == v[k].i[1] &&
                          b[k].l == v[k].l,
                      "struct element %d unpacked wrong", k);
        }
        E(MPI_Type_vector(3, 1, 2, MPI_SHORT, &vec));
        E(MPI_Type_commit(&vec));
        memset(shb, 0, sizeof shb);
        check_type("vector(3, 1, 2, MPI_SHORT)", vec, sh, 1, BYTES(0, 1, 0, 2, 0, 3), shb, 0);
        {
            unsigned char ext[6] = {0, 1, 0, 2, 0, 3};
            MPI_Aint upos = 0;
            E(MPI_Unpack_external("external32", ext, 6, &upos, shb, 1, vec));
            CHECK(shb[0] == 1 && shb[1] == 0 && shb[2] == 2 && shb[3] == 0 && shb[4] == 3 && shb[5] == 0,
                  "vector unpack wrote %d %d %d %d %d %d", shb[0], shb[1], shb[2], shb[3], shb[4], shb[5]);
        }
        E(MPI_Type_free(&st));
        E(MPI_Type_free(&st2));
        E(MPI_Type_free(&vec));
    }
    return mt_finish();
}
