/* MPI_Type_create_f90_real / _complex / _integer (MPI-3.1 17.1.9): the
 * (p, r) -> kind mapping of gfortran's SELECTED_REAL_KIND and
 * SELECTED_INT_KIND, the combiner and contents of the returned types, the
 * same handle for the same arguments, MPI_ERR_ARG when no kind fits, and
 * the types used in a sendrecv and an allreduce. */
#include "mpitest.h"

static void check_type(const char *what, MPI_Datatype t, int size, int combiner, int ni,
                       int p, int r)
{
    int sz = -1, nints = -1, naddrs = -1, ntypes = -1, comb = -1, ints[2] = {-1, -1};
    MPI_Aint lb = -1, ext = -1;
    MPI_Aint addrs[1];
    MPI_Datatype types[1];
    char w[160];
    E(MPI_Type_size(t, &sz));
    snprintf(w, sizeof w, "%s: size", what);
    CHECK_INT(w, size, sz);
    E(MPI_Type_get_extent(t, &lb, &ext));
    snprintf(w, sizeof w, "%s: lb", what);
    CHECK_INT(w, 0, lb);
    snprintf(w, sizeof w, "%s: extent", what);
    CHECK_INT(w, size, ext);
    E(MPI_Type_get_envelope(t, &nints, &naddrs, &ntypes, &comb));
    snprintf(w, sizeof w, "%s: combiner", what);
    CHECK_INT(w, combiner, comb);
    snprintf(w, sizeof w, "%s: number of integers", what);
    CHECK_INT(w, ni, nints);
    snprintf(w, sizeof w, "%s: number of addresses", what);
    CHECK_INT(w, 0, naddrs);
    snprintf(w, sizeof w, "%s: number of datatypes", what);
    CHECK_INT(w, 0, ntypes);
    if (comb != combiner || nints != ni)
        return;
    E(MPI_Type_get_contents(t, 2, 0, 0, ints, addrs, types));
    if (ni == 2) {
        snprintf(w, sizeof w, "%s: contents p", what);
        CHECK_INT(w, p, ints[0]);
        snprintf(w, sizeof w, "%s: contents r", what);
        CHECK_INT(w, r, ints[1]);
    } else {
        snprintf(w, sizeof w, "%s: contents r", what);
        CHECK_INT(w, r, ints[0]);
    }
}

static MPI_Datatype real_type(int p, int r)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    E(MPI_Type_create_f90_real(p, r, &t));
    return t;
}

static MPI_Datatype complex_type(int p, int r)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    E(MPI_Type_create_f90_complex(p, r, &t));
    return t;
}

static MPI_Datatype integer_type(int r)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    E(MPI_Type_create_f90_integer(r, &t));
    return t;
}

static void kinds(void)
{
    const int U = MPI_UNDEFINED;
    MPI_Datatype t;
    check_type("real(6, U)", real_type(6, U), 4, MPI_COMBINER_F90_REAL, 2, 6, U);
    check_type("real(U, 37)", real_type(U, 37), 4, MPI_COMBINER_F90_REAL, 2, U, 37);
    check_type("real(7, U)", real_type(7, U), 8, MPI_COMBINER_F90_REAL, 2, 7, U);
    check_type("real(U, 38)", real_type(U, 38), 8, MPI_COMBINER_F90_REAL, 2, U, 38);
    check_type("real(15, 307)", real_type(15, 307), 8, MPI_COMBINER_F90_REAL, 2, 15, 307);
    check_type("real(3, 300)", real_type(3, 300), 8, MPI_COMBINER_F90_REAL, 2, 3, 300);
    check_type("complex(6, U)", complex_type(6, U), 8, MPI_COMBINER_F90_COMPLEX, 2, 6, U);
    check_type("complex(15, U)", complex_type(15, U), 16, MPI_COMBINER_F90_COMPLEX, 2, 15, U);
    check_type("integer(2)", integer_type(2), 1, MPI_COMBINER_F90_INTEGER, 1, 0, 2);
    check_type("integer(4)", integer_type(4), 2, MPI_COMBINER_F90_INTEGER, 1, 0, 4);
    check_type("integer(9)", integer_type(9), 4, MPI_COMBINER_F90_INTEGER, 1, 0, 9);
    check_type("integer(10)", integer_type(10), 8, MPI_COMBINER_F90_INTEGER, 1, 0, 10);
    check_type("integer(18)", integer_type(18), 8, MPI_COMBINER_F90_INTEGER, 1, 0, 18);
    /* The types are predefined: the same arguments give the same handle. */
    t = real_type(15, U);
    CHECK(t == real_type(15, U), "two calls of create_f90_real(15, U) gave different handles");
    t = integer_type(9);
    CHECK(t == integer_type(9), "two calls of create_f90_integer(9) gave different handles");
}

static void errors(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc, cls = -1;
    /* The standard names no error class; gridmpi and Open MPI give
     * MPI_ERR_ARG, MPICH 4.0.2 MPI_ERR_OTHER. */
    if (MT_IS_MPICH)
        return;
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Type_create_f90_real(1000, MPI_UNDEFINED, &t);
    MPI_Error_class(rc, &cls);
    CHECK_INT("create_f90_real(1000, U): error class", MPI_ERR_ARG, cls);
    rc = MPI_Type_create_f90_complex(MPI_UNDEFINED, 100000, &t);
    MPI_Error_class(rc, &cls);
    CHECK_INT("create_f90_complex(U, 100000): error class", MPI_ERR_ARG, cls);
    rc = MPI_Type_create_f90_integer(100, &t);
    MPI_Error_class(rc, &cls);
    CHECK_INT("create_f90_integer(100): error class", MPI_ERR_ARG, cls);
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void communicate(void)
{
    int partner = mt_rank ^ 1, i, got = -1;
    double s[5], r[5];
    long long total = -1, mine;
    MPI_Status st;
    MPI_Datatype dbl = real_type(12, MPI_UNDEFINED), i8 = integer_type(15);
    if (partner >= mt_size)
        partner = mt_rank;
    for (i = 0; i < 5; ++i) {
        s[i] = mt_rank + i / 8.0;
        r[i] = -1;
    }
    E(MPI_Sendrecv(s, 5, dbl, partner, 1, r, 5, dbl, partner, 1, MPI_COMM_WORLD, &st));
    E(MPI_Get_count(&st, dbl, &got));
    CHECK_INT("Get_count with the f90 real type", 5, got);
    for (i = 0; i < 5; ++i)
        CHECK(r[i] == partner + i / 8.0, "element %d received with the f90 real type: %g", i, r[i]);
    mine = (long long)mt_rank << 33;
    E(MPI_Allreduce(&mine, &total, 1, i8, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT("allreduce MPI_SUM with the f90 integer type",
              ((long long)mt_size * (mt_size - 1) / 2) << 33, total);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    kinds();
    errors();
    communicate();
    return mt_finish();
}
