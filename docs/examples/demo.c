/* The quick-start demo: a ring pass, a broadcast, a reduction and a
 * derived-datatype exchange, each checked.  Prints one summary line. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int ok, const char *what, int rank) {
    if (!ok) {
        fprintf(stderr, "demo: rank %d: %s failed\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    int rank, size, len;
    char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);

    /* a token travels once around the ring, each rank adds its rank */
    int token = 0;
    if (size > 1) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) check(token == size * (size - 1) / 2, "ring", rank);

    /* pi by the midpoint rule: broadcast the interval count, reduce the sum */
    int n = rank == 0 ? 1000000 : 0;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    double h = 1.0 / n, part = 0.0, pi = 0.0;
    for (int i = rank; i < n; i += size) {
        double x = h * (i + 0.5);
        part += 4.0 / (1.0 + x * x);
    }
    part *= h;
    MPI_Reduce(&part, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) check(pi > 3.14159 && pi < 3.1416, "pi", rank);

    /* a column of a 4x4 matrix sent as a vector type to the next rank */
    double m[4][4], col[4];
    MPI_Datatype column;
    MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) m[i][j] = rank * 100 + i * 4 + j;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Sendrecv(&m[0][2], 1, column, next, 3, col, 4, MPI_DOUBLE, prev, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++) check(col[i] == prev * 100 + i * 4 + 2, "vector type", rank);
    MPI_Type_free(&column);

    /* how many clusters (IMPI clients) the job spans */
    int clusters = 1;
#ifdef IMPI_CLIENT_SIZE
    int *attr, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, IMPI_CLIENT_SIZE, &attr, &flag);
    if (flag) clusters = *attr;
#endif

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Get_library_version(lib, &len);
        printf("demo: %d ranks in %d cluster%s ok (ring %d, pi %.10f) on %s with %s\n", size, clusters,
               clusters == 1 ? "" : "s", token, pi, name, lib);
    }
    MPI_Finalize();
    return 0;
}
