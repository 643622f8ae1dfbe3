/* io_datarep.c — file data representations other than "native"
 * (MPI-3.1 13.5): "external32" (big-endian, the standard's sizes: MPI_LONG
 * is 4 bytes, MPI_LONG_DOUBLE 16), the scaling of portable filetypes and
 * the unscaled byte displacements of the others, MPI_File_get_type_extent,
 * status counts in the program's elements, and a representation registered
 * with MPI_Register_datarep and its conversion and extent functions. */
#include "io_common.h"

#include <stdint.h>

/* The bytes of the file from byte 0, read through a native byte view. */
static void read_bytes(MPI_File fh, unsigned char *out, int n)
{
    MPI_Status st;
    int count;
    memset(out, 0xee, (size_t)n);
    E(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    E(MPI_File_read_at(fh, 0, out, n, MPI_BYTE, &st));
    E(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK_INT("raw bytes read", n, count);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Each rank writes its ints and longs contiguously at rank * 6 * 4 bytes in
 * external32: 3 ints then 3 longs, each 4 bytes big-endian. */
static void test_contiguous(void)
{
    char path[2048];
    MPI_File fh;
    MPI_Status st;
    int ints[3], back_i[3], i, r, count, n = 24 * mt_size;
    long longs[3], back_l[3];
    unsigned char *raw = malloc((size_t)n);
    MPI_Offset pos;

    io_path(path, sizeof path, "contig");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_File_set_view(fh, (MPI_Offset)mt_rank * 24, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    for (i = 0; i < 3; ++i) {
        ints[i] = mt_rank * 1000 + i - 7;
        longs[i] = -(long)(mt_rank * 100000 + i + 1);
    }
    E(MPI_File_write(fh, ints, 3, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("ints written (status counts the program's elements)", 3, count);
    E(MPI_File_write(fh, longs, 3, MPI_LONG, &st));
    E(MPI_Get_count(&st, MPI_LONG, &count));
    CHECK_INT("longs written", 3, count);
    E(MPI_File_get_position(fh, &pos));
    CHECK_INT("the pointer moves by the file's bytes (12 + 12)", 24, pos);
    {
        char rep[MPI_MAX_DATAREP_STRING];
        MPI_Offset disp;
        MPI_Datatype et, ft;
        E(MPI_File_get_view(fh, &disp, &et, &ft, rep));
        CHECK_STR("get_view datarep", "external32", rep);
    }

    /* read back through the same view */
    E(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    E(MPI_File_read(fh, back_i, 3, MPI_INT, &st));
    E(MPI_File_read(fh, back_l, 3, MPI_LONG, &st));
    E(MPI_Get_count(&st, MPI_LONG, &count));
    CHECK_INT("longs read", 3, count);
    for (i = 0; i < 3; ++i) {
        CHECK_INT("int read back", ints[i], back_i[i]);
        CHECK_INT("long read back", longs[i], back_l[i]);
    }
    E(MPI_Barrier(MPI_COMM_WORLD));

    read_bytes(fh, raw, n);
    for (r = 0; r < mt_size; ++r) {
        for (i = 0; i < 3; ++i) {
            CHECK_INT("external32 int is 4 bytes big-endian", r * 1000 + i - 7, (int32_t)be32(raw + r * 24 + 4 * i));
            CHECK_INT("external32 long is 4 bytes big-endian", -(long)(r * 100000 + i + 1),
                      (int32_t)be32(raw + r * 24 + 12 + 4 * i));
        }
    }
    E(MPI_File_close(&fh));
    free(raw);
}

/* A vector filetype of MPI_LONG is portable: its stride counts file extents
 * (4 bytes), not memory extents (8).  An hvector's byte stride is used as
 * given.  Ranks interleave longs: rank r owns file longs r, r + size, ... */
static void test_scaling(void)
{
    char path[2048];
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype vec, hvec, ft;
    MPI_Aint extent;
    long mine[4], back[4];
    int i, k, count, n = 16 * mt_size;
    unsigned char *raw = malloc((size_t)n);

    io_path(path, sizeof path, "scaled");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_Type_vector(4, 1, mt_size, MPI_LONG, &vec));
    E(MPI_Type_create_resized(vec, 0, (MPI_Aint)4 * mt_size * (MPI_Aint)sizeof(long), &ft));
    E(MPI_Type_commit(&vec));
    E(MPI_Type_commit(&ft));
    E(MPI_File_set_view(fh, (MPI_Offset)mt_rank * 4, MPI_LONG, vec, "external32", MPI_INFO_NULL));
    E(MPI_File_get_type_extent(fh, MPI_LONG, &extent));
    CHECK_INT("file extent of MPI_LONG in external32", 4, extent);
    E(MPI_File_get_type_extent(fh, MPI_LONG_DOUBLE, &extent));
    CHECK_INT("file extent of MPI_LONG_DOUBLE in external32", 16, extent);
    E(MPI_File_get_type_extent(fh, vec, &extent));
    CHECK_INT("file extent of the vector (scaled)", (long long)(3 * mt_size + 1) * 4, extent);
    E(MPI_File_get_type_extent(fh, ft, &extent));
    CHECK_INT("file extent of a resized type is its byte extent", (long long)4 * mt_size * (long long)sizeof(long),
              extent);
    for (i = 0; i < 4; ++i)
        mine[i] = mt_rank * 10 + i;
    E(MPI_File_write_at_all(fh, 0, mine, 4, MPI_LONG, &st));
    E(MPI_Get_count(&st, MPI_LONG, &count));
    CHECK_INT("longs written through the vector", 4, count);
    for (i = 0; i < 4; ++i)
        back[i] = -1;
    E(MPI_File_read_at_all(fh, 0, back, 4, MPI_LONG, &st));
    for (i = 0; i < 4; ++i)
        CHECK_INT("long read back through the vector", mine[i], back[i]);
    read_bytes(fh, raw, n);
    for (k = 0; k < 4 * mt_size; ++k)
        CHECK_INT("file long k is rank k%size's element k/size", (k % mt_size) * 10 + k / mt_size,
                  (int32_t)be32(raw + 4 * k));

    /* hvector: the stride is bytes in the file, not scaled */
    E(MPI_Barrier(MPI_COMM_WORLD));
    E(MPI_Type_create_hvector(2, 1, 12, MPI_INT, &hvec));
    E(MPI_Type_commit(&hvec));
    E(MPI_File_set_view(fh, (MPI_Offset)mt_rank * 4, MPI_INT, hvec, "external32", MPI_INFO_NULL));
    E(MPI_File_get_type_extent(fh, hvec, &extent));
    CHECK_INT("file extent of an hvector (unscaled bytes)", 16, extent);
    if (mt_rank < 3) {
        int two[2] = {0x01020304 + mt_rank, -5 - mt_rank};
        E(MPI_File_write_at(fh, 0, two, 2, MPI_INT, &st));
    }
    E(MPI_Barrier(MPI_COMM_WORLD));
    read_bytes(fh, raw, 16);
    for (k = 0; k < mt_size && k < 3; ++k) {
        CHECK_INT("hvector first int at rank*4", 0x01020304 + k, (int32_t)be32(raw + 4 * k));
        if (12 + 4 * k + 4 <= 16)
            CHECK_INT("hvector second int 12 bytes later", -5 - k, (int32_t)be32(raw + 12 + 4 * k));
    }
    E(MPI_Type_free(&hvec));
    E(MPI_Type_free(&vec));
    E(MPI_Type_free(&ft));
    E(MPI_File_close(&fh));
    free(raw);
}

/* Like MPICH's external32_derived_dtype: an indexed type of chars as etype
 * and filetype, each rank one element at offset rank, collectively. */
static void test_indexed_chars(void)
{
    char path[2048], buf[2] = {'a', 'b'}, back[2] = {0, 0};
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype dt;
    int blocks[2] = {1, 1}, disps[2] = {0, 1};

    io_path(path, sizeof path, "chars");
    E(MPI_Type_indexed(2, blocks, disps, MPI_CHAR, &dt));
    E(MPI_Type_commit(&dt));
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_File_set_view(fh, 0, dt, dt, "external32", MPI_INFO_NULL));
    buf[0] = (char)('a' + mt_rank % 20);
    buf[1] = (char)('A' + mt_rank % 20);
    E(MPI_File_write_at_all(fh, mt_rank, buf, 1, dt, &st));
    E(MPI_File_read_at_all(fh, mt_rank, back, 1, dt, &st));
    CHECK(back[0] == buf[0] && back[1] == buf[1], "indexed chars read back");
    E(MPI_File_close(&fh));
    E(MPI_Type_free(&dt));
}

/* A registered representation: ints are stored as 8 bytes, the value
 * big-endian in the last 4 bytes and the marker "GRID" in the first 4. */
static int conversions;

static int ext_fn(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    (void)extra;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    *extent = 8;
    return MPI_SUCCESS;
}

static int write_fn(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra)
{
    const int *in = (const int *)userbuf + position;
    unsigned char *out = filebuf;
    int i;
    (void)extra;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    for (i = 0; i < count; ++i) {
        uint32_t v = (uint32_t)in[i];
        memcpy(out + 8 * i, "GRID", 4);
        out[8 * i + 4] = (unsigned char)(v >> 24);
        out[8 * i + 5] = (unsigned char)(v >> 16);
        out[8 * i + 6] = (unsigned char)(v >> 8);
        out[8 * i + 7] = (unsigned char)v;
    }
    ++conversions;
    return MPI_SUCCESS;
}

static int read_fn(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra)
{
    int *out = (int *)userbuf + position;
    const unsigned char *in = filebuf;
    int i;
    (void)extra;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    for (i = 0; i < count; ++i) {
        if (memcmp(in + 8 * i, "GRID", 4) != 0)
            return MPI_ERR_CONVERSION;
        out[i] = (int)be32(in + 8 * i + 4);
    }
    ++conversions;
    return MPI_SUCCESS;
}

static void test_registered(void)
{
    char path[2048];
    MPI_File fh;
    MPI_Status st;
    MPI_Aint extent;
    int vals[3], back[3], i, count, rc;
    unsigned char raw[24];

    E(MPI_Register_datarep("gridmpi-test-rep", read_fn, write_fn, ext_fn, NULL));
    rc = MPI_Register_datarep("gridmpi-test-rep", read_fn, write_fn, ext_fn, NULL);
    CHECK_INT("registering twice", MPI_ERR_DUP_DATAREP, io_class(rc));
    rc = MPI_Register_datarep("external32", read_fn, write_fn, ext_fn, NULL);
    CHECK_INT("registering external32", MPI_ERR_DUP_DATAREP, io_class(rc));

    io_path(path, sizeof path, "registered");
    E(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    E(MPI_File_set_view(fh, (MPI_Offset)mt_rank * 24, MPI_INT, MPI_INT, "gridmpi-test-rep", MPI_INFO_NULL));
    E(MPI_File_get_type_extent(fh, MPI_INT, &extent));
    CHECK_INT("file extent from the extent function", 8, extent);
    for (i = 0; i < 3; ++i)
        vals[i] = 0x10203040 * (mt_rank + 1) + i;
    E(MPI_File_write(fh, vals, 3, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("ints written through the registered representation", 3, count);
    E(MPI_File_read_at(fh, 0, back, 3, MPI_INT, &st));
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("ints read", 3, count);
    for (i = 0; i < 3; ++i)
        CHECK_INT("converted int read back", vals[i], back[i]);
    CHECK(conversions == 2, "the conversion functions ran");
    E(MPI_File_set_view(fh, (MPI_Offset)mt_rank * 24, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    E(MPI_File_read_at(fh, 0, raw, 24, MPI_BYTE, &st));
    for (i = 0; i < 3; ++i) {
        CHECK(memcmp(raw + 8 * i, "GRID", 4) == 0, "the file holds the write function's marker");
        CHECK_INT("the file holds the converted value", vals[i], (int)be32(raw + 8 * i + 4));
    }
    /* a conversion function's error reaches the caller */
    E(MPI_File_set_view(fh, (MPI_Offset)mt_rank * 24, MPI_INT, MPI_INT, "gridmpi-test-rep", MPI_INFO_NULL));
    rc = MPI_File_write_at(fh, 0, raw, 3, MPI_DOUBLE, &st);
    CHECK(rc != MPI_SUCCESS, "an access the extent function refuses fails");
    E(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    io_setup();
    test_contiguous();
    test_scaling();
    test_indexed_chars();
    test_registered();
    io_cleanup();
    return mt_finish();
}
