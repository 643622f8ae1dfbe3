#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stddef.h>
#include <wchar.h>

#include "probe.h"

/* probe_dt: derived datatypes with gaps, negative displacements, resized
 * bounds, Get_elements on partial struct receives, Sendrecv_replace with a
 * derived type, Pack/Unpack, zero-size types, predefined type sizes. */

struct cdi { char c; double d; int i; };

static void test_struct_gaps(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {offsetof(struct cdi, c), offsetof(struct cdi, d), offsetof(struct cdi, i)};
    MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, t_gap, t_gap_r, t_packed;
    MPIOK(MPI_Type_create_struct(3, bl, disp, types, &t_gap));
    MPIOK(MPI_Type_create_resized(t_gap, 0, sizeof(struct cdi), &t_gap_r));
    MPI_Type_commit(&t_gap_r);
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t_gap_r, &lb, &ext);
    MPI_Type_get_true_extent(t_gap_r, &tlb, &text);
    int sz;
    MPI_Type_size(t_gap_r, &sz);
    CHECK(sz == 1 + sizeof(double) + sizeof(int), "struct size %d", sz);
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct cdi), "struct lb %ld ext %ld", (long)lb, (long)ext);
    CHECK(tlb == 0 && text == (MPI_Aint)(offsetof(struct cdi, i) + sizeof(int)), "struct true lb %ld ext %ld", (long)tlb, (long)text);
    /* receiving side: the same signature, no gaps (packed byte layout) */
    MPI_Aint pdisp[3] = {0, 1, 1 + sizeof(double)};
    MPIOK(MPI_Type_create_struct(3, bl, pdisp, types, &t_packed));
    MPI_Type_commit(&t_packed);
    MPI_Type_get_extent(t_packed, &lb, &ext);
    CHECK(ext == 1 + (MPI_Aint)sizeof(double) + (MPI_Aint)sizeof(int) || ext > 0, "packed extent %ld", (long)ext);
    enum { N = 5 };
    struct cdi s[N];
    memset(s, 0x5a, sizeof s);
    for (int k = 0; k < N; k++) { s[k].c = (char)('A' + k + rank); s[k].d = rank * 1.5 + k; s[k].i = rank * 100 + k; }
    /* unaligned receive buffer of packed elements, extent of t_packed may be padded by alignment rules,
     * so receive one element at a time with count N and a resized packed type */
    MPI_Datatype t_packed_r;
    MPI_Type_create_resized(t_packed, 0, 1 + sizeof(double) + sizeof(int), &t_packed_r);
    MPI_Type_commit(&t_packed_r);
    unsigned char rbuf[N * 13 + 8];
    memset(rbuf, 0xcc, sizeof rbuf);
    MPI_Status st;
    MPIOK(MPI_Sendrecv(s, N, t_gap_r, right, 1, rbuf, N, t_packed_r, left, 1, MPI_COMM_WORLD, &st));
    int bad = 0;
    for (int k = 0; k < N; k++) {
        char c; double d; int i;
        memcpy(&c, rbuf + 13 * k, 1); memcpy(&d, rbuf + 13 * k + 1, 8); memcpy(&i, rbuf + 13 * k + 9, 4);
        if (c != (char)('A' + k + left) || d != left * 1.5 + k || i != left * 100 + k) bad = 1;
    }
    CHECK(!bad, "struct with gaps -> packed receive: wrong data");
    CHECK(rbuf[N * 13] == 0xcc, "written past packed receive");
    int cnt = -1, el = -1;
    MPI_Get_count(&st, t_packed_r, &cnt);
    MPI_Get_elements(&st, t_packed_r, &el);
    CHECK(cnt == N && el == 3 * N, "struct Get_count %d Get_elements %d", cnt, el);
    /* and back: packed -> struct with gaps, gaps untouched */
    struct cdi r[N];
    memset(r, 0x77, sizeof r);
    MPIOK(MPI_Sendrecv(rbuf, N, t_packed_r, left, 2, r, N, t_gap_r, right, 2, MPI_COMM_WORLD, &st));
    bad = 0;
    for (int k = 0; k < N; k++)
        if (r[k].c != (char)('A' + k + rank) || r[k].d != rank * 1.5 + k || r[k].i != rank * 100 + k) bad = 1;
    CHECK(!bad, "packed -> struct with gaps: wrong data");
    unsigned char *rb = (unsigned char *)r;
    CHECK(rb[1] == 0x77 && rb[offsetof(struct cdi, i) + 4 < sizeof(struct cdi) ? offsetof(struct cdi, i) + 4 : 1] == 0x77, "gap bytes overwritten");

    /* partial receive: send 2 elements + char + double, receive with count N of t_gap_r */
    MPI_Datatype t_part;
    int bl2[2] = {2, 1};
    MPI_Aint d2[2] = {0, 2 * sizeof(struct cdi)};
    MPI_Datatype ty2[2] = {t_gap_r, MPI_CHAR};
    MPI_Type_create_struct(2, bl2, d2, ty2, &t_part);
    MPI_Type_commit(&t_part);
    struct cdi r2[N];
    MPIOK(MPI_Sendrecv(s, 1, t_part, right, 3, r2, N, t_gap_r, left, 3, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, t_gap_r, &cnt);
    MPI_Get_elements(&st, t_gap_r, &el);
    CHECK(cnt == MPI_UNDEFINED, "partial struct Get_count %d expected MPI_UNDEFINED", cnt);
    CHECK(el == 7, "partial struct Get_elements %d expected 7", el);
    MPI_Count elx = -1;
    MPI_Get_elements_x(&st, t_gap_r, &elx);
    CHECK(elx == 7, "Get_elements_x %lld", (long long)elx);
    CHECK(r2[2].c == (char)('A' + 2 + left), "partial third char %d", r2[2].c);
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == 2 * 13 + 1, "partial Get_count(BYTE) %d", cnt);
    MPI_Type_free(&t_part);
    MPI_Type_free(&t_gap);
    MPI_Type_free(&t_gap_r);
    MPI_Type_free(&t_packed);
    MPI_Type_free(&t_packed_r);
}

static void test_negative(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* vector with negative stride: 3 blocks of 2, stride -4 starting at base+8 */
    MPI_Datatype v;
    MPIOK(MPI_Type_vector(3, 2, -4, MPI_INT, &v));
    MPI_Type_commit(&v);
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(v, &lb, &ext);
    MPI_Type_get_true_extent(v, &tlb, &text);
    CHECK(lb == -8 * (MPI_Aint)sizeof(int) && ext == 10 * (MPI_Aint)sizeof(int), "neg vector lb %ld ext %ld", (long)lb, (long)ext);
    CHECK(tlb == lb && text == ext, "neg vector true lb %ld ext %ld", (long)tlb, (long)text);
    int src[12], dst[6];
    for (int i = 0; i < 12; i++) src[i] = rank * 100 + i;
    MPIOK(MPI_Sendrecv(src + 8, 1, v, right, 4, dst, 6, MPI_INT, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int exp[6] = {8, 9, 4, 5, 0, 1}, bad = 0;
    for (int i = 0; i < 6; i++) if (dst[i] != left * 100 + exp[i]) bad = 1;
    CHECK(!bad, "negative-stride vector data: %d %d %d %d %d %d", dst[0], dst[1], dst[2], dst[3], dst[4], dst[5]);
    /* receive into negative vector */
    int rec[12];
    for (int i = 0; i < 12; i++) rec[i] = -1;
    int lin[6] = {10, 11, 12, 13, 14, 15};
    MPIOK(MPI_Sendrecv(lin, 6, MPI_INT, right, 5, rec + 8, 1, v, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(rec[8] == 10 && rec[9] == 11 && rec[4] == 12 && rec[5] == 13 && rec[0] == 14 && rec[1] == 15 && rec[2] == -1 && rec[10] == -1, "recv into neg vector");
    MPI_Type_free(&v);
    /* hindexed with negative displacement, then resized with lb<0 ("MPI_LB" marker) */
    int bl[2] = {1, 2};
    MPI_Aint d[2] = {-2 * (MPI_Aint)sizeof(double), 1 * (MPI_Aint)sizeof(double)};
    MPI_Datatype h, hr;
    MPIOK(MPI_Type_create_hindexed(2, bl, d, MPI_DOUBLE, &h));
    MPI_Type_get_extent(h, &lb, &ext);
    CHECK(lb == -16 && ext == 40, "hindexed lb %ld ext %ld", (long)lb, (long)ext);
    MPIOK(MPI_Type_create_resized(h, -4 * (MPI_Aint)sizeof(double), 8 * sizeof(double), &hr));
    MPI_Type_commit(&hr);
    MPI_Type_get_extent(hr, &lb, &ext);
    MPI_Type_get_true_extent(hr, &tlb, &text);
    CHECK(lb == -32 && ext == 64, "resized lb %ld ext %ld", (long)lb, (long)ext);
    CHECK(tlb == -16 && text == 40, "resized true lb %ld ext %ld", (long)tlb, (long)text);
    /* 2 elements: element k at base + 64k: doubles at -2,1,2 and 6,9,10 (in units of double) */
    double buf[20], out[6];
    for (int i = 0; i < 20; i++) buf[i] = rank + i * 0.25;
    MPIOK(MPI_Sendrecv(buf + 4, 2, hr, right, 6, out, 6, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int idx[6] = {2, 5, 6, 10, 13, 14};
    bad = 0;
    for (int i = 0; i < 6; i++) if (out[i] != left + idx[i] * 0.25) bad = 1;
    CHECK(!bad, "resized hindexed x2 data wrong: %g %g %g %g %g %g", out[0], out[1], out[2], out[3], out[4], out[5]);
    MPI_Type_free(&h);
    MPI_Type_free(&hr);
}

static void test_replace_derived(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* 2D column of a 100x100 matrix via vector, exchanged with Sendrecv_replace */
    enum { M = 100 };
    double *a = malloc(sizeof(double) * M * M);
    for (int i = 0; i < M * M; i++) a[i] = rank * 1e5 + i;
    MPI_Datatype col, colr;
    MPI_Type_vector(M, 1, M, MPI_DOUBLE, &col);
    MPI_Type_create_resized(col, 0, sizeof(double), &colr);
    MPI_Type_commit(&colr);
    /* columns 3..5 (3 consecutive resized columns) */
    MPI_Status st;
    MPIOK(MPI_Sendrecv_replace(a + 3, 3, colr, right, 7, left, 7, MPI_COMM_WORLD, &st));
    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            double e = (j >= 3 && j < 6) ? left * 1e5 + i * M + j : rank * 1e5 + i * M + j;
            if (a[i * M + j] != e) bad++;
        }
    CHECK(!bad, "Sendrecv_replace with column type: %d wrong", bad);
    int c = -1;
    MPI_Get_count(&st, colr, &c);
    CHECK(c == 3, "Sendrecv_replace Get_count %d", c);
    MPI_Get_elements(&st, colr, &c);
    CHECK(c == 3 * M, "Sendrecv_replace Get_elements %d", c);
    MPI_Type_free(&col);
    MPI_Type_free(&colr);
    free(a);
    /* indexed_block + dup */
    int displs[4] = {7, 0, 3, 12};
    MPI_Datatype ib, ibd;
    MPIOK(MPI_Type_create_indexed_block(4, 2, displs, MPI_SHORT, &ib));
    MPIOK(MPI_Type_dup(ib, &ibd));
    MPI_Type_commit(&ibd);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(ibd, &lb, &ext);
    CHECK(lb == 0 && ext == 14 * (MPI_Aint)sizeof(short), "indexed_block dup lb %ld ext %ld", (long)lb, (long)ext);
    short s[14];
    for (int i = 0; i < 14; i++) s[i] = (short)(rank * 50 + i);
    MPIOK(MPI_Sendrecv_replace(s, 1, ibd, right, 8, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    bad = 0;
    for (int i = 0; i < 14; i++) {
        int in = (i == 7 || i == 8 || i == 0 || i == 1 || i == 3 || i == 4 || i == 12 || i == 13);
        if (s[i] != (short)((in ? left : rank) * 50 + i)) bad = 1;
    }
    CHECK(!bad, "indexed_block Sendrecv_replace");
    MPI_Type_free(&ib);
    MPI_Type_free(&ibd);
}

static void test_pack(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype v;
    MPI_Type_vector(4, 1, 3, MPI_INT, &v);
    MPI_Type_commit(&v);
    int a[12], psz_v, psz_d, psz_c;
    for (int i = 0; i < 12; i++) a[i] = rank * 10 + i;
    double dd = rank + 0.5;
    MPI_Pack_size(2, v, MPI_COMM_WORLD, &psz_v);
    MPI_Pack_size(1, MPI_DOUBLE, MPI_COMM_WORLD, &psz_d);
    MPI_Pack_size(3, MPI_CHAR, MPI_COMM_WORLD, &psz_c);
    CHECK(psz_v >= 8 * 4 && psz_d >= 8 && psz_c >= 3, "Pack_size %d %d %d", psz_v, psz_d, psz_c);
    int total = psz_v + psz_d + psz_c;
    char *pb = malloc(total), *rb = malloc(total);
    int pos = 0;
    /* two vector elements: extent is 10 ints, so second starts at a[10]? no: a has 12, use count 1 twice at offsets */
    MPIOK(MPI_Pack(a, 1, v, pb, total, &pos, MPI_COMM_WORLD));
    MPIOK(MPI_Pack(a + 1, 1, v, pb, total, &pos, MPI_COMM_WORLD));
    MPIOK(MPI_Pack(&dd, 1, MPI_DOUBLE, pb, total, &pos, MPI_COMM_WORLD));
    MPIOK(MPI_Pack("xyz", 3, MPI_CHAR, pb, total, &pos, MPI_COMM_WORLD));
    CHECK(pos <= total, "pack position %d > Pack_size sum %d", pos, total);
    MPI_Status st;
    MPIOK(MPI_Sendrecv(pb, pos, MPI_PACKED, right, 9, rb, total, MPI_PACKED, left, 9, MPI_COMM_WORLD, &st));
    int got;
    MPI_Get_count(&st, MPI_PACKED, &got);
    CHECK(got == pos, "packed count %d vs %d", got, pos);
    int out[12];
    for (int i = 0; i < 12; i++) out[i] = -1;
    double od = 0;
    char oc[4] = {0};
    int upos = 0;
    MPIOK(MPI_Unpack(rb, got, &upos, out, 1, v, MPI_COMM_WORLD));
    MPIOK(MPI_Unpack(rb, got, &upos, out + 1, 1, v, MPI_COMM_WORLD));
    MPIOK(MPI_Unpack(rb, got, &upos, &od, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    MPIOK(MPI_Unpack(rb, got, &upos, oc, 3, MPI_CHAR, MPI_COMM_WORLD));
    CHECK(upos == got, "unpack position %d vs %d", upos, got);
    int bad = 0;
    for (int i = 0; i < 12; i++) {
        int e = (i % 3 == 2) ? -1 : left * 10 + i;
        if (out[i] != e) bad = 1;
    }
    CHECK(!bad, "unpacked vectors wrong");
    CHECK(od == left + 0.5 && strcmp(oc, "xyz") == 0, "unpacked double %g chars %s", od, oc);
    /* packed data received as typed data (same signature: 8 ints, 1 double, 3 chars) */
    int bls[3] = {8, 1, 3};
    struct { int i[8]; double d; char c[3]; } rs;
    MPI_Aint ds[3] = {(char *)rs.i - (char *)&rs, (char *)&rs.d - (char *)&rs, (char *)rs.c - (char *)&rs};
    MPI_Datatype ts[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st_t;
    MPI_Type_create_struct(3, bls, ds, ts, &st_t);
    MPI_Type_commit(&st_t);
    MPIOK(MPI_Sendrecv(pb, pos, MPI_PACKED, right, 10, &rs, 1, st_t, left, 10, MPI_COMM_WORLD, &st));
    CHECK(rs.i[0] == left * 10 && rs.i[1] == left * 10 + 3 && rs.i[4] == left * 10 + 1 && rs.d == left + 0.5 && rs.c[2] == 'z', "packed -> typed struct wrong");
    MPI_Type_free(&st_t);
    MPI_Type_free(&v);
    free(pb); free(rb);
}

static void test_predefined_sizes(void)
{
    struct { MPI_Datatype t; int sz; const char *n; } tab[] = {
        {MPI_CHAR, 1, "CHAR"}, {MPI_SIGNED_CHAR, 1, "SIGNED_CHAR"}, {MPI_UNSIGNED_CHAR, 1, "UNSIGNED_CHAR"},
        {MPI_BYTE, 1, "BYTE"}, {MPI_WCHAR, sizeof(wchar_t), "WCHAR"}, {MPI_SHORT, sizeof(short), "SHORT"},
        {MPI_UNSIGNED_SHORT, sizeof(short), "USHORT"}, {MPI_INT, sizeof(int), "INT"}, {MPI_UNSIGNED, sizeof(int), "UNSIGNED"},
        {MPI_LONG, sizeof(long), "LONG"}, {MPI_UNSIGNED_LONG, sizeof(long), "ULONG"}, {MPI_LONG_LONG_INT, sizeof(long long), "LLI"},
        {MPI_LONG_LONG, sizeof(long long), "LL"}, {MPI_UNSIGNED_LONG_LONG, sizeof(long long), "ULL"},
        {MPI_FLOAT, sizeof(float), "FLOAT"}, {MPI_DOUBLE, sizeof(double), "DOUBLE"}, {MPI_LONG_DOUBLE, sizeof(long double), "LONG_DOUBLE"},
        {MPI_INT8_T, 1, "INT8"}, {MPI_INT16_T, 2, "INT16"}, {MPI_INT32_T, 4, "INT32"}, {MPI_INT64_T, 8, "INT64"},
        {MPI_UINT8_T, 1, "UINT8"}, {MPI_UINT16_T, 2, "UINT16"}, {MPI_UINT32_T, 4, "UINT32"}, {MPI_UINT64_T, 8, "UINT64"},
        {MPI_C_BOOL, sizeof(_Bool), "C_BOOL"}, {MPI_C_FLOAT_COMPLEX, 2 * sizeof(float), "C_FLOAT_COMPLEX"},
        {MPI_C_DOUBLE_COMPLEX, 2 * sizeof(double), "C_DOUBLE_COMPLEX"}, {MPI_C_LONG_DOUBLE_COMPLEX, 2 * sizeof(long double), "C_LD_COMPLEX"},
        {MPI_AINT, sizeof(MPI_Aint), "AINT"}, {MPI_OFFSET, sizeof(MPI_Offset), "OFFSET"}, {MPI_COUNT, sizeof(MPI_Count), "COUNT"},
        {MPI_FLOAT_INT, sizeof(float) + sizeof(int), "FLOAT_INT"}, {MPI_DOUBLE_INT, sizeof(double) + sizeof(int), "DOUBLE_INT"},
        {MPI_LONG_INT, sizeof(long) + sizeof(int), "LONG_INT"}, {MPI_2INT, 2 * sizeof(int), "2INT"},
        {MPI_SHORT_INT, sizeof(short) + sizeof(int), "SHORT_INT"}, {MPI_LONG_DOUBLE_INT, sizeof(long double) + sizeof(int), "LONG_DOUBLE_INT"},
        {MPI_PACKED, 1, "PACKED"},
    };
    for (unsigned k = 0; k < sizeof tab / sizeof tab[0]; k++) {
        int sz = -1;
        MPI_Type_size(tab[k].t, &sz);
        CHECK(sz == tab[k].sz, "MPI_%s size %d expected %d", tab[k].n, sz, tab[k].sz);
    }
    MPI_Aint lb, ext;
    struct { double d; int i; } di;
    MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext);
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof di, "DOUBLE_INT extent %ld expected %zu", (long)ext, sizeof di);
    struct { short s; int i; } si;
    MPI_Type_get_extent(MPI_SHORT_INT, &lb, &ext);
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof si, "SHORT_INT extent %ld expected %zu", (long)ext, sizeof si);
    struct { long double d; int i; } ldi;
    MPI_Type_get_extent(MPI_LONG_DOUBLE_INT, &lb, &ext);
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof ldi, "LONG_DOUBLE_INT extent %ld expected %zu", (long)ext, sizeof ldi);
    /* struct alignment rule: {double, char} extent padded to 16 */
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype t[2] = {MPI_DOUBLE, MPI_CHAR}, s;
    MPI_Type_create_struct(2, bl, d, t, &s);
    MPI_Type_get_extent(s, &lb, &ext);
    CHECK(ext == 16, "struct {double,char} extent %ld expected 16", (long)ext);
    MPI_Type_free(&s);
    /* zero-length vector / indexed */
    MPI_Datatype z;
    MPI_Type_vector(0, 1, 1, MPI_INT, &z);
    int sz;
    MPI_Type_size(z, &sz);
    MPI_Type_get_extent(z, &lb, &ext);
    CHECK(sz == 0 && ext == 0, "vector(0) size %d extent %ld", sz, (long)ext);
    MPI_Type_free(&z);
}

static void test_long_double_and_complex(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long double ld[3] = {rank + 0.125L, -rank * 1e300L, 1.0L / 3}, rld[3];
    MPIOK(MPI_Sendrecv(ld, 3, MPI_LONG_DOUBLE, right, 11, rld, 3, MPI_LONG_DOUBLE, left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(rld[0] == left + 0.125L && rld[1] == -left * 1e300L && rld[2] == 1.0L / 3, "long double transfer");
    struct { long double v; int i; } ldi = {rank * 2.5L, rank}, rldi = {0, -1};
    MPIOK(MPI_Sendrecv(&ldi, 1, MPI_LONG_DOUBLE_INT, right, 12, &rldi, 1, MPI_LONG_DOUBLE_INT, left, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(rldi.v == left * 2.5L && rldi.i == left, "LONG_DOUBLE_INT transfer");
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p_rank = rank;
    test_predefined_sizes();
    test_struct_gaps(rank, size);
    test_negative(rank, size);
    test_replace_derived(rank, size);
    test_pack(rank, size);
    test_long_double_and_complex(rank, size);
    p_finish();
    return 0;
}
