/* MPI_Pack / MPI_Unpack / MPI_Pack_size: several items of different
 * datatypes packed one after another and unpacked in order (round trip,
 * positions), Pack_size bounds, count 0, a packed buffer sent as MPI_PACKED
 * and received as MPI_PACKED or as the typed data, typed data received as
 * MPI_PACKED and unpacked; Pack_external / Unpack_external ("external32":
 * big-endian, standard sizes).  Pairs; odd size: self. */
#include "mpitest.h"

static int partner;

int main(int argc, char **argv)
{
    int ints[10], ints2[10], i, pos, pos2, sz, total_bound = 0, count;
    double dbl[12], dbl2[12];
    struct {
        short s;
        long long ll;
    } st_in[3], st_out[3];
    MPI_Datatype vec, pair;
    char packbuf[4096], recvbuf[4096];
    MPI_Status status;

    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;

    for (i = 0; i < 10; ++i)
        ints[i] = mt_rank * 1000 - i;
    for (i = 0; i < 12; ++i)
        dbl[i] = i * 1.5 + mt_rank;
    memset(st_in, 0, sizeof st_in);
    for (i = 0; i < 3; ++i) {
        st_in[i].s = (short)(i - mt_rank);
        st_in[i].ll = 0x123456789LL * (i + 1) + mt_rank;
    }
    E(MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &vec)); /* dbl[0], dbl[3], dbl[6], dbl[9] */
    E(MPI_Type_commit(&vec));
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {offsetof(__typeof__(st_in[0]), s), offsetof(__typeof__(st_in[0]), ll)};
        MPI_Datatype t[2] = {MPI_SHORT, MPI_LONG_LONG}, tmp;
        E(MPI_Type_create_struct(2, bl, d, t, &tmp));
        E(MPI_Type_create_resized(tmp, 0, sizeof st_in[0], &pair));
        E(MPI_Type_commit(&pair));
        E(MPI_Type_free(&tmp));
    }

    /* Pack_size bounds. */
    E(MPI_Pack_size(10, MPI_INT, MPI_COMM_WORLD, &sz));
    CHECK(sz >= 10 * (int)sizeof(int), "Pack_size(10 ints), expected >= %d got %d", 10 * (int)sizeof(int), sz);
    total_bound += sz;
    E(MPI_Pack_size(1, vec, MPI_COMM_WORLD, &sz));
    CHECK(sz >= 4 * (int)sizeof(double), "Pack_size(vector of 4 doubles), expected >= %d got %d",
          4 * (int)sizeof(double), sz);
    total_bound += sz;
    E(MPI_Pack_size(3, pair, MPI_COMM_WORLD, &sz));
    CHECK(sz >= 3 * (int)(sizeof(short) + sizeof(long long)), "Pack_size(3 x {short,long long}), expected >= %d got %d",
          3 * (int)(sizeof(short) + sizeof(long long)), sz);
    total_bound += sz;
    E(MPI_Pack_size(0, MPI_INT, MPI_COMM_WORLD, &sz));
    CHECK_INT("Pack_size(0 ints)", 0, sz);

    /* Pack three items. */
    pos = 0;
    E(MPI_Pack(ints, 10, MPI_INT, packbuf, sizeof packbuf, &pos, MPI_COMM_WORLD));
    CHECK(pos >= 10 * (int)sizeof(int), "position after packing 10 ints, expected >= 40 got %d", pos);
    E(MPI_Pack(dbl, 1, vec, packbuf, sizeof packbuf, &pos, MPI_COMM_WORLD));
    pos2 = pos;
    E(MPI_Pack(ints, 0, MPI_INT, packbuf, sizeof packbuf, &pos, MPI_COMM_WORLD));
    CHECK_INT("position unchanged after packing 0 items", pos2, pos);
    E(MPI_Pack(st_in, 3, pair, packbuf, sizeof packbuf, &pos, MPI_COMM_WORLD));
    CHECK(pos <= total_bound, "final position vs sum of Pack_size, expected <= %d got %d", total_bound, pos);

    /* Local round trip. */
    memset(ints2, 0, sizeof ints2);
    for (i = 0; i < 12; ++i)
        dbl2[i] = -1.0;
    memset(st_out, 0, sizeof st_out);
    pos2 = 0;
    E(MPI_Unpack(packbuf, pos, &pos2, ints2, 10, MPI_INT, MPI_COMM_WORLD));
    E(MPI_Unpack(packbuf, pos, &pos2, dbl2, 1, vec, MPI_COMM_WORLD));
    E(MPI_Unpack(packbuf, pos, &pos2, st_out, 3, pair, MPI_COMM_WORLD));
    CHECK_INT("position after unpacking everything", pos, pos2);
    for (i = 0; i < 10; ++i)
        CHECK_INT("Pack/Unpack round trip: int", ints[i], ints2[i]);
    for (i = 0; i < 12; ++i)
        CHECK(dbl2[i] == (i % 3 == 0 && i < 12 ? dbl[i] : -1.0), "Pack/Unpack round trip: double %d, expected %g got %g",
              i, i % 3 == 0 ? dbl[i] : -1.0, dbl2[i]);
    for (i = 0; i < 3; ++i) {
        CHECK_INT("Pack/Unpack round trip: struct short", st_in[i].s, st_out[i].s);
        CHECK_INT("Pack/Unpack round trip: struct long long", st_in[i].ll, st_out[i].ll);
    }

    /* Packed buffer sent as MPI_PACKED, received as MPI_PACKED. */
    E(MPI_Sendrecv(packbuf, pos, MPI_PACKED, partner, 1, recvbuf, sizeof recvbuf, MPI_PACKED, partner, 1,
                   MPI_COMM_WORLD, &status));
    E(MPI_Get_count(&status, MPI_PACKED, &count));
    CHECK_INT("Get_count(MPI_PACKED) of a packed message (same packing on both sides)", pos, count);
    pos2 = 0;
    memset(ints2, 0, sizeof ints2);
    memset(st_out, 0, sizeof st_out);
    E(MPI_Unpack(recvbuf, count, &pos2, ints2, 10, MPI_INT, MPI_COMM_WORLD));
    E(MPI_Unpack(recvbuf, count, &pos2, dbl2, 1, vec, MPI_COMM_WORLD));
    E(MPI_Unpack(recvbuf, count, &pos2, st_out, 3, pair, MPI_COMM_WORLD));
    for (i = 0; i < 10; ++i)
        CHECK_INT("packed message from partner: int", partner * 1000 - i, ints2[i]);
    CHECK(dbl2[9] == 9 * 1.5 + partner, "packed message from partner: double 9, expected %g got %g", 9 * 1.5 + partner,
          dbl2[9]);
    for (i = 0; i < 3; ++i)
        CHECK_INT("packed message from partner: struct long long", 0x123456789LL * (i + 1) + partner, st_out[i].ll);

    /* Packed ints received as MPI_INT; typed ints received as MPI_PACKED. */
    pos = 0;
    E(MPI_Pack(ints, 10, MPI_INT, packbuf, sizeof packbuf, &pos, MPI_COMM_WORLD));
    memset(ints2, 0, sizeof ints2);
    E(MPI_Sendrecv(packbuf, pos, MPI_PACKED, partner, 2, ints2, 10, MPI_INT, partner, 2, MPI_COMM_WORLD, &status));
    E(MPI_Get_count(&status, MPI_INT, &count));
    CHECK_INT("packed ints received as MPI_INT: Get_count", 10, count);
    for (i = 0; i < 10; ++i)
        CHECK_INT("packed ints received as MPI_INT", partner * 1000 - i, ints2[i]);
    E(MPI_Sendrecv(ints, 10, MPI_INT, partner, 3, recvbuf, sizeof recvbuf, MPI_PACKED, partner, 3, MPI_COMM_WORLD,
                   &status));
    E(MPI_Get_count(&status, MPI_PACKED, &count));
    pos2 = 0;
    memset(ints2, 0, sizeof ints2);
    E(MPI_Unpack(recvbuf, count, &pos2, ints2, 10, MPI_INT, MPI_COMM_WORLD));
    for (i = 0; i < 10; ++i)
        CHECK_INT("ints received as MPI_PACKED and unpacked", partner * 1000 - i, ints2[i]);

    /* external32: big-endian, 4-byte int, 8-byte IEEE double. */
    {
        int v[2] = {0x01020304, -2};
        double d = 1.0;
        unsigned char ext[64];
        MPI_Aint epos = 0, esz = -1, upos = 0;
        int back[2] = {0, 0};
        double dback = 0.0;
        static const unsigned char want[16] = {0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe,
                                               0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
        E(MPI_Pack_external_size("external32", 2, MPI_INT, &esz));
        CHECK_INT("Pack_external_size(external32, 2 ints)", 8, esz);
        E(MPI_Pack_external("external32", v, 2, MPI_INT, ext, sizeof ext, &epos));
        CHECK_INT("Pack_external position after 2 ints", 8, epos);
        E(MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, ext, sizeof ext, &epos));
        CHECK_INT("Pack_external position after a double", 16, epos);
        for (i = 0; i < 16; ++i)
            if (ext[i] != want[i]) {
                MT_FAIL("external32 byte %d, expected 0x%02x got 0x%02x", i, want[i], ext[i]);
                break;
            }
        E(MPI_Unpack_external("external32", ext, epos, &upos, back, 2, MPI_INT));
        E(MPI_Unpack_external("external32", ext, epos, &upos, &dback, 1, MPI_DOUBLE));
        CHECK_INT("Unpack_external int 0", v[0], back[0]);
        CHECK_INT("Unpack_external int 1", v[1], back[1]);
        CHECK(dback == 1.0, "Unpack_external double, expected 1 got %g", dback);
        CHECK_INT("Unpack_external position", 16, upos);
    }

    E(MPI_Type_free(&vec));
    E(MPI_Type_free(&pair));
    return mt_finish();
}
