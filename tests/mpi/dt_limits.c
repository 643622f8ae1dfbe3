/* Datatype bounds and sizes at the edges:
 *  - MPI_LB / MPI_UB markers: Type_get_extent(_x) of the markers and of
 *    types built from them (the markers win over the data bounds, and
 *    propagate through contiguous);
 *  - sizes and extents that do not fit: Type_size gives MPI_UNDEFINED past
 *    INT_MAX, and Type_size_x / Type_get_extent_x give MPI_UNDEFINED when
 *    the size overflows 64 bits;
 *  - MPI_Get_elements / MPI_Get_count of partial receives of a struct type
 *    (messages carrying a prefix of its type signature). */
#include "mpitest.h"
#include <limits.h>

static void markers(void)
{
#if !MT_IS_OPENMPI /* Debian's Open MPI is built without the MPI-1 MPI_LB/MPI_UB */
    MPI_Aint lb = -1, ext = -1;
    MPI_Count clb = -1, cext = -1;
    int bl[4] = {1, 2, 1, 1}, sz = -1;
    MPI_Aint d[4] = {-8, 0, 20, 4};
    MPI_Datatype ty[4] = {MPI_LB, MPI_INT, MPI_UB, MPI_CHAR}, s, c;
    E(MPI_Type_get_extent(MPI_LB, &lb, &ext));
    CHECK_INT("lb of MPI_LB", 0, lb);
    CHECK_INT("extent of MPI_LB", 0, ext);
    E(MPI_Type_get_extent(MPI_UB, &lb, &ext));
    CHECK_INT("extent of MPI_UB", 0, ext);
    E(MPI_Type_size(MPI_UB, &sz));
    CHECK_INT("size of MPI_UB", 0, sz);
    /* {LB at -8, 2 ints at 0, UB at 20}: lb -8, extent 28, data [0, 8). */
    E(MPI_Type_create_struct(3, bl, d, ty, &s));
    E(MPI_Type_get_extent(s, &lb, &ext));
    CHECK_INT("lb of {LB -8, 2 int, UB 20}", -8, lb);
    CHECK_INT("extent of {LB -8, 2 int, UB 20}", 28, ext);
    E(MPI_Type_get_extent_x(s, &clb, &cext));
    CHECK_INT("lb (_x) of {LB -8, 2 int, UB 20}", -8, clb);
    CHECK_INT("extent (_x) of {LB -8, 2 int, UB 20}", 28, cext);
    E(MPI_Type_get_true_extent(s, &lb, &ext));
    CHECK_INT("true lb of {LB -8, 2 int, UB 20}", 0, lb);
    CHECK_INT("true extent of {LB -8, 2 int, UB 20}", 8, ext);
    E(MPI_Type_contiguous(3, s, &c));
    E(MPI_Type_get_extent(c, &lb, &ext));
    CHECK_INT("lb of contiguous(3, struct)", -8, lb);
    CHECK_INT("extent of contiguous(3, struct)", 84, ext);
    E(MPI_Type_get_true_extent(c, &lb, &ext));
    CHECK_INT("true extent of contiguous(3, struct)", 64, ext);
    E(MPI_Type_free(&c));
    E(MPI_Type_free(&s));
    /* An UB marker inside the data: the data still counts for true extent. */
    bl[0] = 4;
    ty[0] = MPI_INT;
    d[0] = 0;
    ty[1] = MPI_UB;
    d[1] = 8;
    bl[1] = 1;
    E(MPI_Type_create_struct(2, bl, d, ty, &s));
    E(MPI_Type_get_extent(s, &lb, &ext));
    CHECK_INT("extent of {4 int, UB 8}", 8, ext);
    E(MPI_Type_get_true_extent(s, &lb, &ext));
    CHECK_INT("true extent of {4 int, UB 8}", 16, ext);
    E(MPI_Type_free(&s));
#endif
}

static void huge(void)
{
    MPI_Datatype big, bigger, biggest;
    MPI_Count sx = -1, lb = -1, ext = -1;
    int sz = 0;
    /* 2^31-1 doubles: fits an MPI_Count, not an int. */
    E(MPI_Type_contiguous(INT_MAX, MPI_DOUBLE, &big));
    E(MPI_Type_size(big, &sz));
    CHECK_INT("Type_size of contiguous(INT_MAX, double)", MPI_UNDEFINED, sz);
    E(MPI_Type_size_x(big, &sx));
    CHECK_INT("Type_size_x of contiguous(INT_MAX, double)", (MPI_Count)INT_MAX * 8, sx);
    E(MPI_Type_get_extent_x(big, &lb, &ext));
    CHECK_INT("extent (_x) of contiguous(INT_MAX, double)", (MPI_Count)INT_MAX * 8, ext);
    /* 2^31-1 of those in a vector of blocks of 2: ~2^66 bytes, past 64 bits.
     * MPICH 4.0.2 asserts and Open MPI wraps, so only gridmpi is checked. */
    if (!MT_IS_MPICH && !MT_IS_OPENMPI) {
        E(MPI_Type_contiguous(INT_MAX, big, &bigger));
        E(MPI_Type_vector(INT_MAX, 2, 4, bigger, &biggest));
        E(MPI_Type_size_x(bigger, &sx));
        CHECK_INT("Type_size_x of 2^62+ bytes", MPI_UNDEFINED, sx);
        E(MPI_Type_get_extent_x(bigger, &lb, &ext));
        CHECK_INT("extent (_x) of 2^62+ bytes", MPI_UNDEFINED, ext);
        E(MPI_Type_size_x(biggest, &sx));
        CHECK_INT("Type_size_x of a vector of those", MPI_UNDEFINED, sx);
        E(MPI_Type_free(&biggest));
        E(MPI_Type_free(&bigger));
    }
    E(MPI_Type_free(&big));
}

/* struct {double; int[2]; short[3]} received from messages that carry the
 * first e basic elements of its type signature (a struct of e basic
 * elements on the sending side): Get_elements is e, Get_count is e / 6 for
 * whole structs and MPI_UNDEFINED otherwise. */
static void partial_struct(void)
{
    int bl[12], e, i, n, c, partner = mt_rank ^ 1;
    MPI_Aint d[3] = {0, 8, 16}, sd[12];
    MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_INT, MPI_SHORT}, seq[12], st, prefix;
    int seqsize[12];
    char sbuf[64], rbuf[96];
    MPI_Status status;
    char w[120];
    if (partner >= mt_size)
        partner = mt_rank;
    memset(sbuf, 0, sizeof sbuf);
    for (i = 0; i < 12; ++i) {
        int k = i % 6;
        seq[i] = k == 0 ? MPI_DOUBLE : k < 3 ? MPI_INT : MPI_SHORT;
        seqsize[i] = k == 0 ? 8 : k < 3 ? 4 : 2;
        bl[i] = 1;
        sd[i] = i == 0 ? 0 : sd[i - 1] + seqsize[i - 1];
    }
    bl[0] = 1;
    bl[1] = 2;
    bl[2] = 3;
    E(MPI_Type_create_struct(3, bl, d, ty, &st));
    E(MPI_Type_commit(&st));
    bl[1] = bl[2] = 1;
    for (e = 0; e <= 12; ++e) {
        if (e == 0) {
            E(MPI_Sendrecv(sbuf, 0, MPI_INT, partner, e, rbuf, 4, st, partner, e,
                           MPI_COMM_WORLD, &status));
        } else {
            E(MPI_Type_create_struct(e, bl, sd, seq, &prefix));
            E(MPI_Type_commit(&prefix));
            E(MPI_Sendrecv(sbuf, 1, prefix, partner, e, rbuf, 4, st, partner, e,
                           MPI_COMM_WORLD, &status));
            E(MPI_Type_free(&prefix));
        }
        E(MPI_Get_elements(&status, st, &n));
        snprintf(w, sizeof w, "Get_elements after %d basic elements of the struct", e);
        CHECK_INT(w, e, n);
        E(MPI_Get_count(&status, st, &c));
        snprintf(w, sizeof w, "Get_count after %d basic elements of the struct", e);
        CHECK_INT(w, e % 6 ? MPI_UNDEFINED : e / 6, c);
    }
    E(MPI_Type_free(&st));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    markers();
    huge();
    partial_struct();
    return mt_finish();
}
