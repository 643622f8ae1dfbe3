/* The MPI-3 "_x" functions on types whose size or extent does not fit an
 * int (what MPICH's datatype/large_count checks), without allocating them:
 * - Type_size gives MPI_UNDEFINED when the size exceeds INT_MAX,
 *   Type_size_x the size; Type_get_extent(_x) and Type_get_true_extent(_x)
 *   the bounds (MPI_Aint and MPI_Count hold them on LP64), also for a
 *   resized type with lb INT_MAX and a negative extent;
 * - Status_set_elements(_x) with the basic elements of one element of each
 *   type, then Get_elements(_x) / Get_count: MPI_UNDEFINED from the int
 *   forms beyond INT_MAX (MPI-3.1 13.3; MPICH differs, see below);
 * - MPI_COUNT is a predefined type (sent to MPI_PROC_NULL). */
#include <limits.h>

#include "mpitest.h"

/* One element of `type` holds `elements` basic elements.  The standard
 * (MPI-3.1 13.3): after Status_set_elements(_x)(status, type, n),
 * Get_elements(_x) returns n and Get_count a compatible value.  MPICH reads
 * n as a count of `type` instead (its large_count test expects that);
 * Open MPI and this library follow the standard, so MPICH skips this. */
#if !MT_IS_MPICH
static void check_elements(MPI_Datatype type, MPI_Count elements, const char *what)
{
    MPI_Status status;
    MPI_Count elements_x = -7;
    int elements_int = -7, count = -7;

    if (elements <= INT_MAX) {
        E(MPI_Status_set_elements(&status, type, (int)elements));
        E(MPI_Get_elements(&status, type, &elements_int));
        E(MPI_Get_elements_x(&status, type, &elements_x));
        E(MPI_Get_count(&status, type, &count));
        CHECK(elements_int == (int)elements && elements_x == elements && count == 1,
              "%s: Status_set_elements(%lld): Get_elements %d, Get_elements_x %lld, Get_count %d, expected "
              "%lld, %lld, 1", what, (long long)elements, elements_int, (long long)elements_x, count,
              (long long)elements, (long long)elements);
    }
    elements_int = count = -7;
    elements_x = -7;
    E(MPI_Status_set_elements_x(&status, type, elements));
    E(MPI_Get_elements(&status, type, &elements_int));
    E(MPI_Get_elements_x(&status, type, &elements_x));
    E(MPI_Get_count(&status, type, &count));
    CHECK(elements_int == (elements > INT_MAX ? MPI_UNDEFINED : (int)elements) && elements_x == elements &&
              count == 1,
          "%s: Status_set_elements_x(%lld): Get_elements %d, Get_elements_x %lld, Get_count %d", what,
          (long long)elements, elements_int, (long long)elements_x, count);
}
#endif

int main(int argc, char **argv)
{
    MPI_Datatype imax_contig, four_ints, imx4i, imx4i_rsz;
    MPI_Count size_x, lb_x, extent_x, big_true_extent, big_size;
    MPI_Aint lb, extent;
    MPI_Status status;
    int size;

    mt_init(&argc, &argv);
    big_size = 4LL * (MPI_Count)sizeof(int) * (INT_MAX / 2);
    big_true_extent = 3LL * 4 * (MPI_Count)sizeof(int) * ((INT_MAX / 2) - 1) + 4LL * (MPI_Count)sizeof(int);

    E(MPI_Type_contiguous(INT_MAX, MPI_CHAR, &imax_contig));
    E(MPI_Type_commit(&imax_contig));
    E(MPI_Type_contiguous(4, MPI_INT, &four_ints));
    E(MPI_Type_commit(&four_ints));
    E(MPI_Type_vector(INT_MAX / 2, 1, 3, four_ints, &imx4i));
    E(MPI_Type_commit(&imx4i));
    E(MPI_Type_create_resized(imx4i, INT_MAX, -1024, &imx4i_rsz));
    E(MPI_Type_commit(&imx4i_rsz));
    E(MPI_Send(&big_size, 1, MPI_COUNT, MPI_PROC_NULL, 0, MPI_COMM_SELF));
    E(MPI_Recv(&big_size, 1, MPI_COUNT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &status));

    E(MPI_Type_size(imax_contig, &size));
    CHECK_INT("Type_size(contiguous INT_MAX chars)", INT_MAX, size);
    E(MPI_Type_size(imx4i, &size));
    CHECK_INT("Type_size of a type larger than INT_MAX", MPI_UNDEFINED, size);
    E(MPI_Type_size(imx4i_rsz, &size));
    CHECK_INT("Type_size of the resized large type", MPI_UNDEFINED, size);
    E(MPI_Type_size_x(imax_contig, &size_x));
    CHECK_INT("Type_size_x(contiguous INT_MAX chars)", INT_MAX, size_x);
    E(MPI_Type_size_x(four_ints, &size_x));
    CHECK_INT("Type_size_x(4 ints)", 4 * sizeof(int), size_x);
    E(MPI_Type_size_x(imx4i, &size_x));
    CHECK_INT("Type_size_x of a type larger than INT_MAX", big_size, size_x);
    E(MPI_Type_size_x(imx4i_rsz, &size_x));
    CHECK_INT("Type_size_x of the resized large type", big_size, size_x);

    E(MPI_Type_get_extent(imax_contig, &lb, &extent));
    CHECK(lb == 0 && extent == INT_MAX, "Type_get_extent(contiguous INT_MAX chars): %ld %ld", (long)lb, (long)extent);
    E(MPI_Type_get_extent(imx4i, &lb, &extent));
    CHECK(lb == 0 && extent == big_true_extent, "Type_get_extent(large): %ld %ld", (long)lb, (long)extent);
    E(MPI_Type_get_extent(imx4i_rsz, &lb, &extent));
    CHECK(lb == INT_MAX && extent == -1024, "Type_get_extent(resized): %ld %ld", (long)lb, (long)extent);
    E(MPI_Type_get_extent_x(imx4i, &lb_x, &extent_x));
    CHECK(lb_x == 0 && extent_x == big_true_extent, "Type_get_extent_x(large): %lld %lld", (long long)lb_x,
          (long long)extent_x);
    E(MPI_Type_get_extent_x(imx4i_rsz, &lb_x, &extent_x));
    CHECK(lb_x == INT_MAX && extent_x == -1024, "Type_get_extent_x(resized): %lld %lld", (long long)lb_x,
          (long long)extent_x);
    E(MPI_Type_get_true_extent(imx4i, &lb, &extent));
    CHECK(lb == 0 && extent == big_true_extent, "Type_get_true_extent(large): %ld %ld", (long)lb, (long)extent);
    E(MPI_Type_get_true_extent(imx4i_rsz, &lb, &extent));
    CHECK(lb == 0 && extent == big_true_extent, "Type_get_true_extent(resized): %ld %ld", (long)lb, (long)extent);
    E(MPI_Type_get_true_extent_x(imax_contig, &lb_x, &extent_x));
    CHECK(lb_x == 0 && extent_x == INT_MAX, "Type_get_true_extent_x(contiguous INT_MAX chars): %lld %lld",
          (long long)lb_x, (long long)extent_x);
    E(MPI_Type_get_true_extent_x(imx4i, &lb_x, &extent_x));
    CHECK(lb_x == 0 && extent_x == big_true_extent, "Type_get_true_extent_x(large): %lld %lld", (long long)lb_x,
          (long long)extent_x);
    E(MPI_Type_get_true_extent_x(imx4i_rsz, &lb_x, &extent_x));
    CHECK(lb_x == 0 && extent_x == big_true_extent, "Type_get_true_extent_x(resized): %lld %lld",
          (long long)lb_x, (long long)extent_x);

#if !MT_IS_MPICH
    check_elements(MPI_INT, 1, "MPI_INT");
    check_elements(imax_contig, INT_MAX, "contiguous INT_MAX chars");
    check_elements(four_ints, 4, "4 ints");
    check_elements(imx4i, 4LL * (INT_MAX / 2), "large vector");
    check_elements(imx4i_rsz, 4LL * (INT_MAX / 2), "resized large vector");
#endif
    /* Ten MPI_INTs, through both setters. */
    {
        int elements = -1, count = -1;
        MPI_Count elements_x = -1;
        E(MPI_Status_set_elements(&status, MPI_INT, 10));
        E(MPI_Get_elements(&status, MPI_INT, &elements));
        E(MPI_Get_elements_x(&status, MPI_INT, &elements_x));
        E(MPI_Get_count(&status, MPI_INT, &count));
        CHECK(elements == 10 && elements_x == 10 && count == 10, "10 ints: %d %lld %d", elements,
              (long long)elements_x, count);
        E(MPI_Status_set_elements_x(&status, MPI_INT, 10));
        E(MPI_Get_elements(&status, MPI_INT, &elements));
        E(MPI_Get_elements_x(&status, MPI_INT, &elements_x));
        E(MPI_Get_count(&status, MPI_INT, &count));
        CHECK(elements == 10 && elements_x == 10 && count == 10, "10 ints (_x): %d %lld %d", elements,
              (long long)elements_x, count);
    }

    E(MPI_Type_free(&imax_contig));
    E(MPI_Type_free(&four_ints));
    E(MPI_Type_free(&imx4i));
    E(MPI_Type_free(&imx4i_rsz));
    return mt_finish();
}
