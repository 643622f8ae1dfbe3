/* Every predefined C datatype sent and received (exchanged with the pair
 * partner, or with self): values depend on the sender and cover the high
 * bits / full precision of each type.  Also Type_size and extent of each
 * type, Get_count, and the MINLOC/MAXLOC pair types (with their padding). */
#include "mpitest.h"
#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

#define N 37

static int partner;

static void exchange(const void *s, void *r, int count, MPI_Datatype t, int tag)
{
    MPI_Status st;
    int got = -1;
    E(MPI_Sendrecv(s, count, t, partner, tag, r, count, t, partner, tag, MPI_COMM_WORLD, &st));
    E(MPI_Get_count(&st, t, &got));
    if (got != count)
        MT_FAIL("Get_count for datatype test tag %d, expected %d got %d", tag, count, got);
}

static void check_size_extent(const char *name, MPI_Datatype t, int size, MPI_Aint extent)
{
    int sz = -1;
    MPI_Aint lb = -1, ext = -1;
    char w[120];
    E(MPI_Type_size(t, &sz));
    snprintf(w, sizeof w, "MPI_Type_size(%s)", name);
    CHECK_INT(w, size, sz);
    E(MPI_Type_get_extent(t, &lb, &ext));
    snprintf(w, sizeof w, "lb of %s", name);
    CHECK_INT(w, 0, lb);
    snprintf(w, sizeof w, "extent of %s", name);
    CHECK_INT(w, extent, ext);
}

/* One function per scalar type: fill, exchange, compare. */
#define SCALAR_TEST(fname, ctype, mpitype, expr)                                           \
    static void fname(int tag)                                                             \
    {                                                                                      \
        ctype s[N], r[N];                                                                  \
        int i, seed;                                                                       \
        check_size_extent(#mpitype, mpitype, (int)sizeof(ctype), (MPI_Aint)sizeof(ctype)); \
        seed = mt_rank;                                                                    \
        for (i = 0; i < N; ++i)                                                            \
            s[i] = (ctype)(expr);                                                          \
        memset(r, 0, sizeof r);                                                            \
        exchange(s, r, N, mpitype, tag);                                                   \
        seed = partner;                                                                    \
        for (i = 0; i < N; ++i) {                                                          \
            ctype want = (ctype)(expr);                                                    \
            if (!(r[i] == want)) {                                                         \
                MT_FAIL("%s element %d: value differs from the one sent", #mpitype, i);   \
                break;                                                                     \
            }                                                                              \
        }                                                                                  \
    }

#define BITS(i, seed) ((unsigned long long)((i) + 1) * 0x9E3779B97F4A7C15ULL ^ (unsigned long long)(seed) << 56)

/* Split over several IMPI clients (clusters), data travels in external32,
 * where long and unsigned long are 32 bits (MPI-3.1 13.5.2): their values
 * stay within 32 bits then. */
static int narrow_long;
#define LONGBITS(i, seed) (narrow_long ? (unsigned long long)(unsigned)BITS(i, seed) : BITS(i, seed))

SCALAR_TEST(t_char, char, MPI_CHAR, 'A' + (i + seed) % 26)
SCALAR_TEST(t_schar, signed char, MPI_SIGNED_CHAR, (signed char)(BITS(i, seed) >> 3))
SCALAR_TEST(t_uchar, unsigned char, MPI_UNSIGNED_CHAR, BITS(i, seed) >> 7)
SCALAR_TEST(t_byte, unsigned char, MPI_BYTE, BITS(i, seed) >> 11)
SCALAR_TEST(t_wchar, wchar_t, MPI_WCHAR, L'a' + i + 1000 * seed)
SCALAR_TEST(t_short, short, MPI_SHORT, (short)BITS(i, seed))
SCALAR_TEST(t_ushort, unsigned short, MPI_UNSIGNED_SHORT, BITS(i, seed) >> 5)
SCALAR_TEST(t_int, int, MPI_INT, (int)(BITS(i, seed) >> 9))
SCALAR_TEST(t_unsigned, unsigned, MPI_UNSIGNED, BITS(i, seed) >> 13)
SCALAR_TEST(t_long, long, MPI_LONG, (long)(narrow_long ? (long)(int)BITS(i, seed) : (long)BITS(i, seed)))
SCALAR_TEST(t_ulong, unsigned long, MPI_UNSIGNED_LONG, LONGBITS(i, seed) ^ 0xF0F0)
SCALAR_TEST(t_llong, long long, MPI_LONG_LONG, (long long)BITS(i, seed))
SCALAR_TEST(t_llong_int, long long, MPI_LONG_LONG_INT, -(long long)BITS(i, seed))
SCALAR_TEST(t_ullong, unsigned long long, MPI_UNSIGNED_LONG_LONG, BITS(i, seed))
SCALAR_TEST(t_float, float, MPI_FLOAT, (i - 18) * 1.25e-3f + seed * 1e5f)
SCALAR_TEST(t_double, double, MPI_DOUBLE, (i - 18) / 3.0 + seed * 1e100)
SCALAR_TEST(t_ldouble, long double, MPI_LONG_DOUBLE, (i - 18) / 3.0L + seed * 1e300L * 1e300L)
SCALAR_TEST(t_bool, bool, MPI_C_BOOL, (i + seed) % 3 == 0)
SCALAR_TEST(t_int8, int8_t, MPI_INT8_T, (int8_t)(BITS(i, seed) >> 17))
SCALAR_TEST(t_int16, int16_t, MPI_INT16_T, (int16_t)(BITS(i, seed) >> 19))
SCALAR_TEST(t_int32, int32_t, MPI_INT32_T, (int32_t)(BITS(i, seed) >> 21))
SCALAR_TEST(t_int64, int64_t, MPI_INT64_T, (int64_t)BITS(i, seed))
SCALAR_TEST(t_uint8, uint8_t, MPI_UINT8_T, BITS(i, seed) >> 23)
SCALAR_TEST(t_uint16, uint16_t, MPI_UINT16_T, BITS(i, seed) >> 25)
SCALAR_TEST(t_uint32, uint32_t, MPI_UINT32_T, BITS(i, seed) >> 27)
SCALAR_TEST(t_uint64, uint64_t, MPI_UINT64_T, BITS(i, seed) * 3)
SCALAR_TEST(t_fcomplex, float _Complex, MPI_C_FLOAT_COMPLEX, (i + 0.5f) + (seed - 0.25f) * I)
SCALAR_TEST(t_complex, float _Complex, MPI_C_COMPLEX, (i - 0.5f) + (seed + 0.75f) * I)
SCALAR_TEST(t_dcomplex, double _Complex, MPI_C_DOUBLE_COMPLEX, (i / 7.0) + (seed / 3.0) * I)
SCALAR_TEST(t_ldcomplex, long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX, (i / 7.0L) + (seed / 3.0L) * I)
SCALAR_TEST(t_aint, MPI_Aint, MPI_AINT, (MPI_Aint)BITS(i, seed))
SCALAR_TEST(t_offset, MPI_Offset, MPI_OFFSET, (MPI_Offset)BITS(i, seed) - 5)
SCALAR_TEST(t_count, MPI_Count, MPI_COUNT, (MPI_Count)BITS(i, seed) + 5)

/* Pair types: compare the two members, never the padding. */
#define PAIR_TEST(fname, vtype, mpitype, expr)                                            \
    static void fname(int tag)                                                            \
    {                                                                                     \
        struct {                                                                          \
            vtype v;                                                                      \
            int k;                                                                        \
        } s[N], r[N];                                                                     \
        int i, seed;                                                                      \
        check_size_extent(#mpitype, mpitype, (int)(sizeof(vtype) + sizeof(int)),          \
                          (MPI_Aint)sizeof(s[0]));                                        \
        seed = mt_rank;                                                                   \
        memset(s, 0, sizeof s);                                                           \
        for (i = 0; i < N; ++i) {                                                         \
            s[i].v = (vtype)(expr);                                                       \
            s[i].k = i * 1000 + seed;                                                     \
        }                                                                                 \
        memset(r, 0, sizeof r);                                                           \
        exchange(s, r, N, mpitype, tag);                                                  \
        seed = partner;                                                                   \
        for (i = 0; i < N; ++i) {                                                         \
            if (!(r[i].v == (vtype)(expr)) || r[i].k != i * 1000 + seed) {                \
                MT_FAIL("%s element %d: value or index differs from the one sent (index " \
                        "expected %d got %d)", #mpitype, i, i * 1000 + seed, r[i].k);    \
                break;                                                                    \
            }                                                                             \
        }                                                                                 \
    }

PAIR_TEST(t_float_int, float, MPI_FLOAT_INT, i * 0.5f - seed)
PAIR_TEST(t_double_int, double, MPI_DOUBLE_INT, i / 3.0 - seed)
PAIR_TEST(t_long_int, long, MPI_LONG_INT, (long)(narrow_long ? (long)(int)BITS(i, seed) : (long)BITS(i, seed)))
PAIR_TEST(t_2int, int, MPI_2INT, (int)BITS(i, seed))
PAIR_TEST(t_short_int, short, MPI_SHORT_INT, (short)BITS(i, seed))
PAIR_TEST(t_ldouble_int, long double, MPI_LONG_DOUBLE_INT, i / 3.0L - seed)

int main(int argc, char **argv)
{
    int tag = 0;
    mt_init(&argc, &argv);
#if defined(IMPI_CLIENT_SIZE) || defined(OPEN_MPI) /* not every MPI has the IMPI attributes */
    {
        int *clients = NULL, flag = 0;
        E(MPI_Comm_get_attr(MPI_COMM_WORLD, IMPI_CLIENT_SIZE, &clients, &flag));
        narrow_long = flag && *clients > 1;
    }
#endif
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;

    t_char(tag++); t_schar(tag++); t_uchar(tag++); t_byte(tag++); t_wchar(tag++);
    t_short(tag++); t_ushort(tag++); t_int(tag++); t_unsigned(tag++); t_long(tag++);
    t_ulong(tag++); t_llong(tag++); t_llong_int(tag++); t_ullong(tag++); t_float(tag++);
    t_double(tag++); t_ldouble(tag++); t_bool(tag++); t_int8(tag++); t_int16(tag++);
    t_int32(tag++); t_int64(tag++); t_uint8(tag++); t_uint16(tag++); t_uint32(tag++);
    t_uint64(tag++); t_fcomplex(tag++); t_complex(tag++); t_dcomplex(tag++); t_ldcomplex(tag++);
    t_aint(tag++); t_offset(tag++); t_count(tag++);
    t_float_int(tag++); t_double_int(tag++); t_long_int(tag++); t_2int(tag++); t_short_int(tag++);
    t_ldouble_int(tag++);

    /* MPI_PACKED moves bytes like MPI_BYTE. */
    {
        unsigned char s[100], r[100];
        check_size_extent("MPI_PACKED", MPI_PACKED, 1, 1);
        mt_fill(s, 100, mt_rank);
        exchange(s, r, 100, MPI_PACKED, tag++);
        CHECK_PATTERN("MPI_PACKED bytes", r, 100, partner);
    }
    /* Same data, two names: MPI_LONG_LONG and MPI_LONG_LONG_INT match. */
    {
        long long s = -123456789012345LL - mt_rank, r = 0;
        E(MPI_Sendrecv(&s, 1, MPI_LONG_LONG, partner, tag, &r, 1, MPI_LONG_LONG_INT, partner, tag, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
        CHECK_INT("MPI_LONG_LONG sent, MPI_LONG_LONG_INT received", -123456789012345LL - partner, r);
    }
#ifdef __SIZEOF_INT128__
    /* Fortran's MPI_INTEGER16 (INTEGER(KIND=16)) from C: its name and size,
     * an exchange, a sum that carries past 64 bits, and
     * MPI_Type_match_size.  gridmpi names it GRIDMPI_INTEGER16 in C and
     * makes C's MPI_INTEGER16 MPI_DATATYPE_NULL, as Open MPI does (mpi4py
     * maps a named MPI_INTEGER16 to NumPy, which has no 16-byte integer);
     * an MPI without it has MPI_DATATYPE_NULL or no such name. */
#ifdef GRIDMPI_INTEGER16
    CHECK(MPI_INTEGER16 == MPI_DATATYPE_NULL, "C's MPI_INTEGER16 is not MPI_DATATYPE_NULL");
#undef MPI_INTEGER16
#define MPI_INTEGER16 GRIDMPI_INTEGER16
#elif !defined(MPI_INTEGER16)
#define MPI_INTEGER16 MPI_DATATYPE_NULL
#endif
    if (MPI_INTEGER16 != MPI_DATATYPE_NULL) {
        __extension__ typedef __int128 i128;
        i128 s[3], r[3], sum[3], expect_sum;
        char name[MPI_MAX_OBJECT_NAME];
        int len = 0, i;
        MPI_Datatype matched = MPI_DATATYPE_NULL;
        check_size_extent("MPI_INTEGER16", MPI_INTEGER16, 16, 16);
        E(MPI_Type_get_name(MPI_INTEGER16, name, &len));
        CHECK_STR("MPI_Type_get_name(MPI_INTEGER16)", "MPI_INTEGER16", name);
        for (i = 0; i < 3; ++i)
            s[i] = ((i128)(mt_rank + 1) << 70) - (i128)(i + 1) * 0x123456789abcdefLL;
        exchange(s, r, 3, MPI_INTEGER16, tag++);
        for (i = 0; i < 3; ++i)
            CHECK(r[i] == ((i128)(partner + 1) << 70) - (i128)(i + 1) * 0x123456789abcdefLL,
                  "MPI_INTEGER16 exchange: element %d wrong", i);
        /* Each rank adds 2^63 + rank: the total needs more than 64 bits. */
        for (i = 0; i < 3; ++i)
            s[i] = ((i128)1 << 63) + mt_rank - i;
        E(MPI_Allreduce(s, sum, 3, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD));
        for (i = 0; i < 3; ++i) {
            expect_sum = ((i128)mt_size << 63) + (i128)mt_size * (mt_size - 1) / 2 - (i128)mt_size * i;
            CHECK(sum[i] == expect_sum, "MPI_INTEGER16 MPI_SUM: element %d wrong (high word %lld, expected %lld)",
                  i, (long long)(sum[i] >> 64), (long long)(expect_sum >> 64));
        }
        E(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &matched));
        CHECK(matched == MPI_INTEGER16, "MPI_Type_match_size(INTEGER, 16) is not MPI_INTEGER16");
    }
#endif
    return mt_finish();
}
