/* MPI_Init_thread: the provided level is a valid level, MPI_Query_thread
 * returns the same value, and the library then works (a message round
 * trip).  The requested level comes from the environment variable
 * MT_THREAD_LEVEL (single, funneled, serialized, multiple; default
 * multiple) so that one program covers every level from the list file. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int required = MPI_THREAD_MULTIPLE, provided = -1, queried = -1, flag = -1;
    const char *lvl = getenv("MT_THREAD_LEVEL");

    if (lvl && strcmp(lvl, "single") == 0)
        required = MPI_THREAD_SINGLE;
    else if (lvl && strcmp(lvl, "funneled") == 0)
        required = MPI_THREAD_FUNNELED;
    else if (lvl && strcmp(lvl, "serialized") == 0)
        required = MPI_THREAD_SERIALIZED;

    setvbuf(stdout, NULL, _IOLBF, 0);
    E(MPI_Initialized(&flag));
    CHECK_INT("MPI_Initialized before MPI_Init_thread", 0, flag);
    E(MPI_Init_thread(&argc, &argv, required, &provided));
    E(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    E(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    flag = -1;
    E(MPI_Initialized(&flag));
    CHECK_INT("MPI_Initialized after MPI_Init_thread", 1, flag);

    /* The standard lets an implementation give more or less than required,
     * but never a value outside the four levels. */
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
              provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
          "MPI_Init_thread(required=%d) provided, expected a thread level got %d", required, provided);
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
              MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
          "thread level constants, expected SINGLE < FUNNELED < SERIALIZED < MULTIPLE got %d %d %d %d",
          MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE);
    /* gridmpi, Open MPI and MPICH all provide MPI_THREAD_MULTIPLE when asked. */
    if (required == MPI_THREAD_MULTIPLE)
        CHECK_INT("MPI_Init_thread(MPI_THREAD_MULTIPLE) provided", MPI_THREAD_MULTIPLE, provided);
    E(MPI_Query_thread(&queried));
    CHECK_INT("MPI_Query_thread vs provided", provided, queried);
    flag = -1;
    E(MPI_Is_thread_main(&flag));
    CHECK_INT("MPI_Is_thread_main on the thread that called MPI_Init_thread", 1, flag);

    /* The library works at this level: a ring of one int. */
    {
        int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
        int out = 1000 + mt_rank, in = -1;
        MPI_Status st;
        E(MPI_Sendrecv(&out, 1, MPI_INT, right, 5, &in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &st));
        CHECK_INT("ring value from left neighbour", 1000 + left, in);
        CHECK_INT("ring status.MPI_SOURCE", left, st.MPI_SOURCE);
    }
    return mt_finish();
}
