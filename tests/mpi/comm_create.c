/* MPI_Comm_create and MPI_Comm_create_group: the even ranks (odd ranks get
 * MPI_COMM_NULL), the whole group reversed (SIMILAR to the parent),
 * MPI_GROUP_EMPTY (MPI_COMM_NULL everywhere), creation from a dup, and
 * Comm_create_group called by the members only.  Each new communicator is
 * used for a ring exchange and freed. */
#include "mpitest.h"

static void ring(MPI_Comm comm, const int *world_of, const char *what)
{
    int size, rank, right, left, w = -1;
    char msg[160];
    E(MPI_Comm_size(comm, &size));
    E(MPI_Comm_rank(comm, &rank));
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    E(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 11, &w, 1, MPI_INT, left, 11, comm, MPI_STATUS_IGNORE));
    snprintf(msg, sizeof msg, "%s: ring, world rank of the left neighbour", what);
    CHECK_INT(msg, world_of[left], w);
}

int main(int argc, char **argv)
{
    MPI_Group world, evens, reversed;
    MPI_Comm c, dup;
    int *ranks, neven, i, size, rank, result;

    mt_init(&argc, &argv);
    ranks = mt_malloc(mt_size * sizeof(int));
    E(MPI_Comm_group(MPI_COMM_WORLD, &world));

    /* Even ranks. */
    neven = (mt_size + 1) / 2;
    for (i = 0; i < neven; ++i)
        ranks[i] = 2 * i;
    E(MPI_Group_incl(world, neven, ranks, &evens));
    E(MPI_Comm_create(MPI_COMM_WORLD, evens, &c));
    if (mt_rank % 2) {
        CHECK(c == MPI_COMM_NULL, "Comm_create on a non-member, expected MPI_COMM_NULL got %d", MT_H(c));
    } else {
        E(MPI_Comm_size(c, &size));
        E(MPI_Comm_rank(c, &rank));
        CHECK_INT("Comm_create(evens): size", neven, size);
        CHECK_INT("Comm_create(evens): rank", mt_rank / 2, rank);
        ring(c, ranks, "Comm_create(evens)");
        E(MPI_Comm_free(&c));
    }

    /* Whole group reversed. */
    for (i = 0; i < mt_size; ++i)
        ranks[i] = mt_size - 1 - i;
    E(MPI_Group_incl(world, mt_size, ranks, &reversed));
    E(MPI_Comm_create(MPI_COMM_WORLD, reversed, &c));
    E(MPI_Comm_rank(c, &rank));
    CHECK_INT("Comm_create(reversed): rank", mt_size - 1 - mt_rank, rank);
    E(MPI_Comm_compare(MPI_COMM_WORLD, c, &result));
    CHECK_INT("Comm_compare(WORLD, Comm_create(reversed))", mt_size == 1 ? MPI_CONGRUENT : MPI_SIMILAR, result);
    ring(c, ranks, "Comm_create(reversed)");
    E(MPI_Comm_free(&c));

    /* Same group as the parent: CONGRUENT. */
    E(MPI_Comm_create(MPI_COMM_WORLD, world, &c));
    E(MPI_Comm_compare(MPI_COMM_WORLD, c, &result));
    CHECK_INT("Comm_compare(WORLD, Comm_create(group of WORLD))", MPI_CONGRUENT, result);
    E(MPI_Comm_free(&c));

    /* Empty group. */
    E(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "Comm_create(MPI_GROUP_EMPTY), expected MPI_COMM_NULL got %d", MT_H(c));

    /* From a dup. */
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    E(MPI_Comm_create(dup, reversed, &c));
    E(MPI_Comm_rank(c, &rank));
    CHECK_INT("Comm_create from a dup: rank", mt_size - 1 - mt_rank, rank);
    ring(c, ranks, "Comm_create from a dup");
    E(MPI_Comm_free(&c));

    /* Comm_create_group: only the members call. */
    for (i = 0; i < neven; ++i)
        ranks[i] = 2 * i;
    if (mt_rank % 2 == 0) {
        /* MPICH 4.0.2 crashes in Comm_create_group on a dup'ed parent (bug). */
        E(MPI_Comm_create_group(MT_IS_MPICH ? MPI_COMM_WORLD : dup, evens, 5, &c));
        E(MPI_Comm_size(c, &size));
        E(MPI_Comm_rank(c, &rank));
        CHECK_INT("Comm_create_group(evens): size", neven, size);
        CHECK_INT("Comm_create_group(evens): rank", mt_rank / 2, rank);
        ring(c, ranks, "Comm_create_group(evens)");
        E(MPI_Comm_free(&c));
    }
    /* The odd ranks meanwhile use dup, undisturbed. */
    if (mt_size > 1) {
        int v = mt_rank, w = -1;
        int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
        E(MPI_Sendrecv(&v, 1, MPI_INT, right, 6, &w, 1, MPI_INT, left, 6, dup, MPI_STATUS_IGNORE));
        CHECK_INT("ring on the parent after Comm_create_group (same tag)", left, w);
    }
    E(MPI_Comm_free(&dup));
    E(MPI_Group_free(&reversed));
    E(MPI_Group_free(&evens));
    E(MPI_Group_free(&world));
    free(ranks);
    return mt_finish();
}
