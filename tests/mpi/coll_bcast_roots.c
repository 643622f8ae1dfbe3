/* MPI_Bcast from every root of MPI_COMM_WORLD and of a reversed split, with
 * counts 0, 1, 13, 7919 and 262147 (primes, so no piece count divides them;
 * the last is 1 MiB of ints), contiguous and non-contiguous (holes must stay
 * untouched) and with the root and the others describing the data with
 * different datatypes of one signature.  tests/mpi/coll.list runs it under
 * every forced algorithm (hybrid with several d) at 1..9 and 16 processes.
 * Standard MPI only. */
#include "mpitest.h"

#include <string.h>

static const int counts[] = {0, 1, 13, 7919, 262147};
#define NCOUNTS 5

static int value(int root, int i) { return root * 1000003 + i * 7 + 1; }

static void check_ints(const char *what, const char *comm_name, int root, int count, const int *got,
                       const int *expected, int n)
{
    int i;
    for (i = 0; i < n; ++i) {
        if (got[i] != expected[i]) {
            MT_FAIL("%s on %s, root %d, count %d: element %d is %d, expected %d", what, comm_name, root,
                    count, i, got[i], expected[i]);
            return;
        }
    }
}

/* MPI_INT everywhere. */
static void contiguous(MPI_Comm comm, const char *name, int rank, int root, int count)
{
    int *buf = (int *)mt_malloc((size_t)(count + 1) * sizeof(int));
    int *expected = (int *)mt_malloc((size_t)(count + 1) * sizeof(int));
    int i;
    for (i = 0; i < count; ++i)
        expected[i] = value(root, i);
    expected[count] = -1; /* past the end: untouched */
    for (i = 0; i <= count; ++i)
        buf[i] = rank == root ? expected[i] : (i < count ? -2 : -1);
    E(MPI_Bcast(buf, count, MPI_INT, root, comm));
    check_ints("MPI_INT", name, root, count, buf, expected, count + 1);
    free(buf);
    free(expected);
}

/* Root: MPI_INT; the others: a vector of 2 ints every 3 (holes untouched). */
static void strided(MPI_Comm comm, const char *name, int rank, int root, int count, MPI_Datatype pairs)
{
    int elements = count / 2, n = 3 * elements + 1, i;
    int *buf = (int *)mt_malloc((size_t)n * sizeof(int));
    int *expected = (int *)mt_malloc((size_t)n * sizeof(int));
    if (rank == root) {
        for (i = 0; i < 2 * elements; ++i)
            buf[i] = value(root, i);
        E(MPI_Bcast(buf, 2 * elements, MPI_INT, root, comm));
    } else {
        for (i = 0; i < n; ++i)
            buf[i] = expected[i] = -3;
        for (i = 0; i < elements; ++i) {
            expected[3 * i] = value(root, 2 * i);
            expected[3 * i + 1] = value(root, 2 * i + 1);
        }
        E(MPI_Bcast(buf, elements, pairs, root, comm));
        check_ints("strided (MPI_INT at the root)", name, root, count, buf, expected, n);
    }
    free(buf);
    free(expected);
}

static void run_on(MPI_Comm comm, const char *name, MPI_Datatype pairs)
{
    int rank, size, root, k;
    E(MPI_Comm_rank(comm, &rank));
    E(MPI_Comm_size(comm, &size));
    for (root = 0; root < size; ++root) {
        for (k = 0; k < NCOUNTS; ++k) {
            contiguous(comm, name, rank, root, counts[k]);
            strided(comm, name, rank, root, counts[k], pairs);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Comm split;
    MPI_Datatype pair, pairs;
    mt_init(&argc, &argv);
    /* 2 ints with an extent of 3 ints. */
    E(MPI_Type_contiguous(2, MPI_INT, &pair));
    E(MPI_Type_create_resized(pair, 0, 3 * (MPI_Aint)sizeof(int), &pairs));
    E(MPI_Type_commit(&pairs));
    run_on(MPI_COMM_WORLD, "MPI_COMM_WORLD", pairs);
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 3 == 0, -mt_rank, &split));
    run_on(split, "split (rank mod 3 == 0, reversed)", pairs);
    E(MPI_Comm_free(&split));
    E(MPI_Type_free(&pairs));
    E(MPI_Type_free(&pair));
    return mt_finish();
}
