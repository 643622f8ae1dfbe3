/* Derived datatypes: contiguous, vector (also negative stride), hvector,
 * indexed, hindexed, indexed_block, hindexed_block, struct, resized
 * (interleaving), dup, nested, subarray.  For each type over MPI_INT:
 *  - Type_size, lb/extent, true lb/extent are the values the standard defines;
 *  - sent with the type and received as contiguous ints (and the reverse:
 *    sent as ints, received with the type — different type maps, same
 *    signature) and sent and received with the type: exactly the elements
 *    of the type map move, in type-map order, and nothing else is written;
 *  - Get_count / Get_elements of the receive.
 * Also Type_get_envelope/contents, Type_get_name/set_name.
 * Then a heterogeneous struct (char, double, int[3], short) exchanged as
 * structs and received through MPI_BOTTOM with absolute addresses into a
 * different memory layout, and an 800 KB vector both ways.  Pairs; odd
 * size: self. */
#include "mpitest.h"

#define MEM 1024
#define BASE 256 /* buffer origin inside mem[], room for negative lbs */
#define MAXE 64

static int partner;

struct tcase {
    const char *name;
    MPI_Datatype type;
    int n;          /* ints per type element */
    int off[MAXE];  /* type map, in ints from the buffer origin */
    MPI_Aint lb, extent, true_lb, true_extent; /* bytes */
    int count;      /* elements sent */
    int combiner;   /* MPI_COMBINER_... */
};

static int mem_s[MEM], mem_r[MEM];

static void run_case(struct tcase *c, int tag)
{
    int size = -1, i, j, k, total = c->count * c->n, got;
    MPI_Aint lb, extent;
    MPI_Status st;
    int offs[4 * MAXE], cont[4 * MAXE], mark[MEM];
    char w[200];

    E(MPI_Type_commit(&c->type));
    {
        int ni = -1, na = -1, nd = -1, comb = -1;
        E(MPI_Type_get_envelope(c->type, &ni, &na, &nd, &comb));
        snprintf(w, sizeof w, "%s: Type_get_envelope combiner", c->name);
        CHECK_INT(w, c->combiner, comb);
    }
    E(MPI_Type_size(c->type, &size));
    snprintf(w, sizeof w, "%s: Type_size", c->name);
    CHECK_INT(w, c->n * (int)sizeof(int), size);
    E(MPI_Type_get_extent(c->type, &lb, &extent));
    snprintf(w, sizeof w, "%s: lb", c->name);
    CHECK_INT(w, c->lb, lb);
    snprintf(w, sizeof w, "%s: extent", c->name);
    CHECK_INT(w, c->extent, extent);
    E(MPI_Type_get_true_extent(c->type, &lb, &extent));
    snprintf(w, sizeof w, "%s: true lb", c->name);
    CHECK_INT(w, c->true_lb, lb);
    snprintf(w, sizeof w, "%s: true extent", c->name);
    CHECK_INT(w, c->true_extent, extent);
    {
        MPI_Count lbx, extx, sizex;
        E(MPI_Type_get_extent_x(c->type, &lbx, &extx));
        snprintf(w, sizeof w, "%s: extent (Type_get_extent_x)", c->name);
        CHECK_INT(w, c->extent, extx);
        E(MPI_Type_size_x(c->type, &sizex));
        snprintf(w, sizeof w, "%s: Type_size_x", c->name);
        CHECK_INT(w, c->n * (int)sizeof(int), sizex);
    }

    /* Full type map for `count` elements. */
    for (k = 0; k < c->count; ++k)
        for (j = 0; j < c->n; ++j)
            offs[k * c->n + j] = c->off[j] + k * (int)(c->extent / (MPI_Aint)sizeof(int));
    memset(mark, 0, sizeof mark);
    for (i = 0; i < total; ++i) {
        if (BASE + offs[i] < 0 || BASE + offs[i] >= MEM) {
            MT_FAIL("%s: test bug, offset %d outside the buffer", c->name, offs[i]);
            return;
        }
        mark[BASE + offs[i]] = 1;
    }

    /* A: type -> contiguous ints. */
    for (i = 0; i < MEM; ++i)
        mem_s[i] = mt_rank * 100000 + i;
    for (i = 0; i < total; ++i)
        cont[i] = -1;
    E(MPI_Sendrecv(mem_s + BASE, c->count, c->type, partner, tag, cont, total, MPI_INT, partner, tag,
                   MPI_COMM_WORLD, &st));
    E(MPI_Get_count(&st, MPI_INT, &got));
    snprintf(w, sizeof w, "%s: sent with the type, Get_count(MPI_INT)", c->name);
    CHECK_INT(w, total, got);
    for (i = 0; i < total; ++i)
        if (cont[i] != partner * 100000 + BASE + offs[i]) {
            MT_FAIL("%s: sent with the type, received as ints: int %d, expected %d got %d", c->name, i,
                    partner * 100000 + BASE + offs[i], cont[i]);
            break;
        }

    /* B: contiguous ints -> type. */
    for (i = 0; i < total; ++i)
        cont[i] = mt_rank * 1000 + i;
    for (i = 0; i < MEM; ++i)
        mem_r[i] = -1;
    E(MPI_Sendrecv(cont, total, MPI_INT, partner, tag, mem_r + BASE, c->count, c->type, partner, tag,
                   MPI_COMM_WORLD, &st));
    E(MPI_Get_count(&st, c->type, &got));
    snprintf(w, sizeof w, "%s: received with the type, Get_count", c->name);
    CHECK_INT(w, c->count, got);
    E(MPI_Get_elements(&st, c->type, &got));
    snprintf(w, sizeof w, "%s: received with the type, Get_elements", c->name);
    CHECK_INT(w, total, got);
    for (i = 0; i < total; ++i)
        if (mem_r[BASE + offs[i]] != partner * 1000 + i) {
            MT_FAIL("%s: sent as ints, received with the type: element %d (offset %d), expected %d got %d", c->name, i,
                    offs[i], partner * 1000 + i, mem_r[BASE + offs[i]]);
            break;
        }
    for (i = 0; i < MEM; ++i)
        if (!mark[i] && mem_r[i] != -1) {
            MT_FAIL("%s: received with the type: int at offset %d outside the type map written, expected -1 got %d",
                    c->name, i - BASE, mem_r[i]);
            break;
        }

    /* C: type -> type. */
    for (i = 0; i < MEM; ++i)
        mem_r[i] = -1;
    E(MPI_Sendrecv(mem_s + BASE, c->count, c->type, partner, tag, mem_r + BASE, c->count, c->type, partner, tag,
                   MPI_COMM_WORLD, &st));
    for (i = 0; i < MEM; ++i) {
        int want = mark[i] ? partner * 100000 + i : -1;
        if (mem_r[i] != want) {
            MT_FAIL("%s: sent and received with the type: int at offset %d, expected %d got %d", c->name, i - BASE,
                    want, mem_r[i]);
            break;
        }
    }
}

static void set_off(struct tcase *c, int n, const int *off)
{
    int i;
    c->n = n;
    for (i = 0; i < n; ++i)
        c->off[i] = off[i];
}

struct hetero {
    char c;
    double d;
    int i[3];
    short s;
};

static void hetero_test(int tag)
{
    struct hetero s[4], r[4];
    MPI_Datatype h, hr, recvt;
    int bl[4] = {1, 1, 3, 1}, i;
    MPI_Aint disp[4] = {offsetof(struct hetero, c), offsetof(struct hetero, d), offsetof(struct hetero, i),
                        offsetof(struct hetero, s)};
    MPI_Datatype types[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT};
    MPI_Aint lb, extent;
    int size;

    E(MPI_Type_create_struct(4, bl, disp, types, &h));
    E(MPI_Type_get_extent(h, &lb, &extent));
    CHECK_INT("struct{char,double,int[3],short}: lb", 0, lb);
    /* The extent is padded to the alignment of double, as the C struct. */
    CHECK_INT("struct{char,double,int[3],short}: extent (== sizeof)", sizeof(struct hetero), extent);
    E(MPI_Type_size(h, &size));
    CHECK_INT("struct{char,double,int[3],short}: size", 1 + 8 + 12 + 2, size);
    E(MPI_Type_create_resized(h, 0, sizeof(struct hetero), &hr));
    E(MPI_Type_commit(&hr));
    memset(s, 0, sizeof s);
    for (i = 0; i < 4; ++i) {
        s[i].c = (char)('a' + i + mt_rank);
        s[i].d = i * 0.25 + mt_rank;
        s[i].i[0] = i;
        s[i].i[1] = -i * mt_rank;
        s[i].i[2] = 1000 + mt_rank;
        s[i].s = (short)(i - 7 * mt_rank);
    }
    memset(r, 0, sizeof r);
    E(MPI_Sendrecv(s, 4, hr, partner, tag, r, 4, hr, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (i = 0; i < 4; ++i) {
        CHECK_INT("hetero struct: char", (char)('a' + i + partner), r[i].c);
        CHECK(r[i].d == i * 0.25 + partner, "hetero struct: double, expected %g got %g", i * 0.25 + partner, r[i].d);
        CHECK_INT("hetero struct: int[0]", i, r[i].i[0]);
        CHECK_INT("hetero struct: int[1]", -i * partner, r[i].i[1]);
        CHECK_INT("hetero struct: int[2]", 1000 + partner, r[i].i[2]);
        CHECK_INT("hetero struct: short", (short)(i - 7 * partner), r[i].s);
    }

    /* Receive the same 4 structs into separate arrays, through MPI_BOTTOM. */
    {
        char cs[4];
        double ds[4];
        int is[12];
        short ss[4];
        int rbl[16];
        MPI_Aint rdisp[16];
        MPI_Datatype rtypes[16];
        for (i = 0; i < 4; ++i) {
            rbl[4 * i] = 1;
            E(MPI_Get_address(&cs[i], &rdisp[4 * i]));
            rtypes[4 * i] = MPI_CHAR;
            rbl[4 * i + 1] = 1;
            E(MPI_Get_address(&ds[i], &rdisp[4 * i + 1]));
            rtypes[4 * i + 1] = MPI_DOUBLE;
            rbl[4 * i + 2] = 3;
            E(MPI_Get_address(&is[3 * i], &rdisp[4 * i + 2]));
            rtypes[4 * i + 2] = MPI_INT;
            rbl[4 * i + 3] = 1;
            E(MPI_Get_address(&ss[i], &rdisp[4 * i + 3]));
            rtypes[4 * i + 3] = MPI_SHORT;
        }
        E(MPI_Type_create_struct(16, rbl, rdisp, rtypes, &recvt));
        E(MPI_Type_commit(&recvt));
        E(MPI_Sendrecv(s, 4, hr, partner, tag + 1, MPI_BOTTOM, 1, recvt, partner, tag + 1, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
        for (i = 0; i < 4; ++i) {
            CHECK_INT("MPI_BOTTOM receive: char", (char)('a' + i + partner), cs[i]);
            CHECK(ds[i] == i * 0.25 + partner, "MPI_BOTTOM receive: double, expected %g got %g", i * 0.25 + partner,
                  ds[i]);
            CHECK_INT("MPI_BOTTOM receive: int[1]", -i * partner, is[3 * i + 1]);
            CHECK_INT("MPI_BOTTOM receive: short", (short)(i - 7 * partner), ss[i]);
        }
        E(MPI_Type_free(&recvt));
    }
    E(MPI_Type_free(&h));
    E(MPI_Type_free(&hr));
}

int main(int argc, char **argv)
{
    struct tcase c;
    MPI_Datatype vec, tmp;
    int tag = 0;

    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;

    /* contiguous(5, int) */
    {
        static const int off[] = {0, 1, 2, 3, 4};
        memset(&c, 0, sizeof c);
        c.name = "contiguous(5,int)";
        c.combiner = MPI_COMBINER_CONTIGUOUS;
        E(MPI_Type_contiguous(5, MPI_INT, &c.type));
        set_off(&c, 5, off);
        c.lb = 0, c.extent = 20, c.true_lb = 0, c.true_extent = 20, c.count = 3;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
    }
    /* vector(3, 2, 4, int) */
    {
        static const int off[] = {0, 1, 4, 5, 8, 9};
        c.name = "vector(3,2,4,int)";
        c.combiner = MPI_COMBINER_VECTOR;
        E(MPI_Type_vector(3, 2, 4, MPI_INT, &c.type));
        set_off(&c, 6, off);
        c.lb = 0, c.extent = 40, c.true_lb = 0, c.true_extent = 40, c.count = 2;
        run_case(&c, tag++);
        /* dup behaves the same */
        tmp = c.type;
        E(MPI_Type_dup(tmp, &c.type));
        c.name = "dup of vector(3,2,4,int)";
        c.combiner = MPI_COMBINER_DUP;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
        E(MPI_Type_free(&tmp));
    }
    /* vector with a negative stride: (3, 1, -2, int) */
    {
        static const int off[] = {0, -2, -4};
        c.name = "vector(3,1,-2,int)";
        c.combiner = MPI_COMBINER_VECTOR;
        E(MPI_Type_vector(3, 1, -2, MPI_INT, &c.type));
        set_off(&c, 3, off);
        c.lb = -16, c.extent = 20, c.true_lb = -16, c.true_extent = 20, c.count = 2;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
    }
    /* hvector(2, 3, 28 bytes, int) */
    {
        static const int off[] = {0, 1, 2, 7, 8, 9};
        c.name = "hvector(2,3,28B,int)";
        c.combiner = MPI_COMBINER_HVECTOR;
        E(MPI_Type_create_hvector(2, 3, 28, MPI_INT, &c.type));
        set_off(&c, 6, off);
        c.lb = 0, c.extent = 40, c.true_lb = 0, c.true_extent = 40, c.count = 2;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
    }
    /* indexed({2,1,3}, {5,0,9}, int) */
    {
        static const int off[] = {5, 6, 0, 9, 10, 11};
        int bl[3] = {2, 1, 3}, d[3] = {5, 0, 9};
        c.name = "indexed({2,1,3},{5,0,9},int)";
        c.combiner = MPI_COMBINER_INDEXED;
        E(MPI_Type_indexed(3, bl, d, MPI_INT, &c.type));
        set_off(&c, 6, off);
        c.lb = 0, c.extent = 48, c.true_lb = 0, c.true_extent = 48, c.count = 2;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
    }
    /* indexed({1,2}, {3,7}, int): lb > 0 */
    {
        static const int off[] = {3, 7, 8};
        int bl[2] = {1, 2}, d[2] = {3, 7};
        c.name = "indexed({1,2},{3,7},int)";
        c.combiner = MPI_COMBINER_INDEXED;
        E(MPI_Type_indexed(2, bl, d, MPI_INT, &c.type));
        set_off(&c, 3, off);
        c.lb = 12, c.extent = 24, c.true_lb = 12, c.true_extent = 24, c.count = 3;
        run_case(&c, tag++);
        /* contiguous(2, that): nested */
        tmp = c.type;
        E(MPI_Type_contiguous(2, tmp, &c.type));
        {
            static const int off2[] = {3, 7, 8, 9, 13, 14};
            set_off(&c, 6, off2);
        }
        c.name = "contiguous(2, indexed({1,2},{3,7},int))";
        c.combiner = MPI_COMBINER_CONTIGUOUS;
        c.lb = 12, c.extent = 48, c.true_lb = 12, c.true_extent = 48, c.count = 2;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
        E(MPI_Type_free(&tmp));
    }
    /* hindexed({1,2}, {8B,40B}, int) */
    {
        static const int off[] = {2, 10, 11};
        int bl[2] = {1, 2};
        MPI_Aint d[2] = {8, 40};
        c.name = "hindexed({1,2},{8B,40B},int)";
        c.combiner = MPI_COMBINER_HINDEXED;
        E(MPI_Type_create_hindexed(2, bl, d, MPI_INT, &c.type));
        set_off(&c, 3, off);
        c.lb = 8, c.extent = 40, c.true_lb = 8, c.true_extent = 40, c.count = 2;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
    }
    /* indexed_block(2, {4,0,8}, int) */
    {
        static const int off[] = {4, 5, 0, 1, 8, 9};
        int d[3] = {4, 0, 8};
        c.name = "indexed_block(2,{4,0,8},int)";
        c.combiner = MPI_COMBINER_INDEXED_BLOCK;
        E(MPI_Type_create_indexed_block(3, 2, d, MPI_INT, &c.type));
        set_off(&c, 6, off);
        c.lb = 0, c.extent = 40, c.true_lb = 0, c.true_extent = 40, c.count = 2;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
    }
    /* hindexed_block(2, {12B,0B}, int) */
    {
        static const int off[] = {3, 4, 0, 1};
        MPI_Aint d[2] = {12, 0};
        c.name = "hindexed_block(2,{12B,0B},int)";
        c.combiner = MPI_COMBINER_HINDEXED_BLOCK;
        E(MPI_Type_create_hindexed_block(2, 2, d, MPI_INT, &c.type));
        set_off(&c, 4, off);
        c.lb = 0, c.extent = 20, c.true_lb = 0, c.true_extent = 20, c.count = 2;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
    }
    /* struct({1,2}, {0B,12B}, {int,int}) */
    {
        static const int off[] = {0, 3, 4};
        int bl[2] = {1, 2};
        MPI_Aint d[2] = {0, 12};
        MPI_Datatype t[2] = {MPI_INT, MPI_INT};
        c.name = "struct({1,2},{0B,12B},{int,int})";
        c.combiner = MPI_COMBINER_STRUCT;
        E(MPI_Type_create_struct(2, bl, d, t, &c.type));
        set_off(&c, 3, off);
        c.lb = 0, c.extent = 20, c.true_lb = 0, c.true_extent = 20, c.count = 3;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
    }
    /* struct with a vector inside and a negative displacement */
    {
        static const int off[] = {-2, 0, 2};
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {-8, 0};
        MPI_Datatype t[2];
        E(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
        t[0] = MPI_INT;
        t[1] = vec;
        c.name = "struct({1,1},{-8B,0B},{int,vector(2,1,2)})";
        c.combiner = MPI_COMBINER_STRUCT;
        E(MPI_Type_create_struct(2, bl, d, t, &c.type));
        set_off(&c, 3, off);
        c.lb = -8, c.extent = 20, c.true_lb = -8, c.true_extent = 20, c.count = 2;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
        E(MPI_Type_free(&vec));
    }
    /* resized(int, lb -4, extent 12): holes between elements */
    {
        static const int off[] = {0};
        c.name = "resized(int,-4B,12B)";
        c.combiner = MPI_COMBINER_RESIZED;
        E(MPI_Type_create_resized(MPI_INT, -4, 12, &c.type));
        set_off(&c, 1, off);
        c.lb = -4, c.extent = 12, c.true_lb = 0, c.true_extent = 4, c.count = 4;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
    }
    /* resized(vector(2,1,3,int), 0, 4B): interleaved elements */
    {
        static const int off[] = {0, 3};
        E(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
        c.name = "resized(vector(2,1,3,int),0,4B)";
        c.combiner = MPI_COMBINER_RESIZED;
        E(MPI_Type_create_resized(vec, 0, 4, &c.type));
        set_off(&c, 2, off);
        c.lb = 0, c.extent = 4, c.true_lb = 0, c.true_extent = 16, c.count = 3;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
        E(MPI_Type_free(&vec));
    }
    /* subarray: 4x5 ints, 2x3 block at (1,1), C order */
    {
        static const int off[] = {6, 7, 8, 11, 12, 13};
        int sizes[2] = {4, 5}, sub[2] = {2, 3}, start[2] = {1, 1};
        c.name = "subarray(4x5, 2x3 at (1,1), C order)";
        c.combiner = MPI_COMBINER_SUBARRAY;
        E(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &c.type));
        set_off(&c, 6, off);
        c.lb = 0, c.extent = 80, c.true_lb = 24, c.true_extent = 32, c.count = 2;
        run_case(&c, tag++);
        E(MPI_Type_free(&c.type));
    }
    /* vector <-> indexed: two different derived maps, same signature. */
    {
        int bl[3] = {1, 1, 1}, d[3] = {9, 4, 0}, in[12], out[12], i;
        MPI_Datatype ind;
        E(MPI_Type_vector(3, 1, 4, MPI_INT, &vec));
        E(MPI_Type_indexed(3, bl, d, MPI_INT, &ind));
        E(MPI_Type_commit(&vec));
        E(MPI_Type_commit(&ind));
        for (i = 0; i < 12; ++i) {
            out[i] = mt_rank * 100 + i;
            in[i] = -1;
        }
        E(MPI_Sendrecv(out, 1, vec, partner, tag, in, 1, ind, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        ++tag;
        /* vector sends out[0], out[4], out[8] into in[9], in[4], in[0]. */
        CHECK_INT("vector -> indexed: in[9]", partner * 100 + 0, in[9]);
        CHECK_INT("vector -> indexed: in[4]", partner * 100 + 4, in[4]);
        CHECK_INT("vector -> indexed: in[0]", partner * 100 + 8, in[0]);
        CHECK_INT("vector -> indexed: in[1] untouched", -1, in[1]);
        E(MPI_Type_free(&vec));
        E(MPI_Type_free(&ind));
    }
    /* Envelope/contents of a vector and of a named type; type names. */
    {
        int ni, na, nd, comb, ints[3] = {0, 0, 0}, len;
        MPI_Aint addrs[1];
        MPI_Datatype types[1] = {MPI_DATATYPE_NULL};
        char name[MPI_MAX_OBJECT_NAME];
        E(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
        E(MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb));
        CHECK_INT("vector envelope: integers", 3, ni);
        CHECK_INT("vector envelope: addresses", 0, na);
        CHECK_INT("vector envelope: datatypes", 1, nd);
        E(MPI_Type_get_contents(vec, 3, 0, 1, ints, addrs, types));
        CHECK_INT("vector contents: count", 3, ints[0]);
        CHECK_INT("vector contents: blocklength", 2, ints[1]);
        CHECK_INT("vector contents: stride", 4, ints[2]);
        CHECK(types[0] == MPI_INT, "vector contents: old type, expected MPI_INT got %d", MT_H(types[0]));
        E(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
        CHECK_INT("envelope of MPI_INT: combiner", MPI_COMBINER_NAMED, comb);
        E(MPI_Type_get_name(MPI_INT, name, &len));
        CHECK_STR("name of MPI_INT", "MPI_INT", name);
        E(MPI_Type_get_name(MPI_DOUBLE_INT, name, &len));
        CHECK_STR("name of MPI_DOUBLE_INT", "MPI_DOUBLE_INT", name);
        E(MPI_Type_set_name(vec, "my vector"));
        E(MPI_Type_get_name(vec, name, &len));
        CHECK_STR("name of a derived type after Type_set_name", "my vector", name);
        CHECK_INT("name length after Type_set_name", 9, len);
        E(MPI_Type_free(&vec));
        CHECK(vec == MPI_DATATYPE_NULL, "Type_free, expected MPI_DATATYPE_NULL got %d", MT_H(vec));
    }
    hetero_test(tag);
    tag += 2;

    /* Large non-contiguous messages (past any eager limit): every other
     * double of 2 x 100000, received contiguous, and back into a vector. */
    {
        int nd = 100000, i;
        double *s = mt_malloc(2 * nd * sizeof(double)), *r = mt_malloc(2 * nd * sizeof(double));
        MPI_Status st;
        int count;
        E(MPI_Type_vector(nd, 1, 2, MPI_DOUBLE, &vec));
        E(MPI_Type_commit(&vec));
        for (i = 0; i < 2 * nd; ++i)
            s[i] = (i % 2) ? -1.0 : mt_rank * 1e6 + i;
        E(MPI_Sendrecv(s, 1, vec, partner, tag, r, nd, MPI_DOUBLE, partner, tag, MPI_COMM_WORLD, &st));
        E(MPI_Get_count(&st, MPI_DOUBLE, &count));
        CHECK_INT("large vector received as doubles: Get_count", nd, count);
        for (i = 0; i < nd; ++i)
            if (r[i] != partner * 1e6 + 2 * i) {
                MT_FAIL("large vector received as doubles: element %d, expected %g got %g", i, partner * 1e6 + 2 * i, r[i]);
                break;
            }
        for (i = 0; i < nd; ++i)
            s[i] = mt_rank + i * 0.5;
        for (i = 0; i < 2 * nd; ++i)
            r[i] = -7.0;
        E(MPI_Sendrecv(s, nd, MPI_DOUBLE, partner, tag + 1, r, 1, vec, partner, tag + 1, MPI_COMM_WORLD, &st));
        for (i = 0; i < 2 * nd - 1; ++i) {
            double want = (i % 2) ? -7.0 : partner + (i / 2) * 0.5;
            if (r[i] != want) {
                MT_FAIL("doubles received as a large vector: element %d, expected %g got %g", i, want, r[i]);
                break;
            }
        }
        E(MPI_Type_free(&vec));
        free(s);
        free(r);
    }
    return mt_finish();
}
