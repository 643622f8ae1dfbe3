/* MPI_Comm_split and MPI_Comm_create on an intercommunicator (MPI-3.1
 * 6.4.2).  The intercommunicator joins the even and the odd world ranks.
 * Split: color = (local rank % 2), key = -local rank (so each new side is
 * in reverse order); a color missing on the other side gives
 * MPI_COMM_NULL.  Create: each side drops its local rank 0 (when it has
 * more than one process).  Every result is checked by its sizes, ranks and
 * an exchange of world ranks with the remote group. */
#include "mpitest.h"

/* World ranks of side `side` (0 even, 1 odd) with color `color` under the
 * split, in new rank order (descending); returns how many. */
static int split_members(int side, int color, int *out)
{
    int n = 0, w;
    for (w = mt_size - 1; w >= 0; --w)
        if (w % 2 == side && (w / 2) % 2 == color)
            out[n++] = w;
    return n;
}

static void exchange(MPI_Comm inter, const int *remote, int nremote, const char *what)
{
    int rank, got = -1;
    char msg[160];
    E(MPI_Comm_rank(inter, &rank));
    if (rank < nremote) {
        E(MPI_Sendrecv(&mt_rank, 1, MPI_INT, rank, 3, &got, 1, MPI_INT, rank, 3, inter, MPI_STATUS_IGNORE));
        snprintf(msg, sizeof msg, "%s: world rank of remote rank %d", what, rank);
        CHECK_INT(msg, remote[rank], got);
    }
}

int main(int argc, char **argv)
{
    MPI_Comm half, inter, sub;
    MPI_Group lg, sg;
    int side, l, nl, nr, size, rank, flag, i;
    int *mine, *theirs;

    mt_init(&argc, &argv);
    if (mt_size < 2)
        return mt_finish();
    mine = mt_malloc(mt_size * sizeof(int));
    theirs = mt_malloc(mt_size * sizeof(int));
    side = mt_rank % 2;
    l = mt_rank / 2;
    E(MPI_Comm_split(MPI_COMM_WORLD, side, mt_rank, &half));
    E(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - side, 9, &inter));

    /* Split. */
    E(MPI_Comm_split(inter, l % 2, -l, &sub));
    nl = split_members(side, l % 2, mine);
    nr = split_members(1 - side, l % 2, theirs);
    if (nr == 0) {
        CHECK(sub == MPI_COMM_NULL, "split: color %d has no remote process, expected MPI_COMM_NULL got %d", l % 2,
              MT_H(sub));
    } else {
        CHECK(sub != MPI_COMM_NULL, "split: expected an intercommunicator, got MPI_COMM_NULL");
        if (sub != MPI_COMM_NULL) {
            E(MPI_Comm_test_inter(sub, &flag));
            CHECK_INT("split: result is an intercommunicator", 1, flag);
            E(MPI_Comm_size(sub, &size));
            CHECK_INT("split: local size", nl, size);
            E(MPI_Comm_remote_size(sub, &size));
            CHECK_INT("split: remote size", nr, size);
            E(MPI_Comm_rank(sub, &rank));
            for (i = 0; i < nl && mine[i] != mt_rank; ++i)
                ;
            CHECK_INT("split: rank ordered by key", i, rank);
            exchange(sub, theirs, nr, "split");
            E(MPI_Barrier(sub));
            E(MPI_Comm_free(&sub));
        }
    }

    /* MPI_UNDEFINED everywhere. */
    E(MPI_Comm_split(inter, MPI_UNDEFINED, 0, &sub));
    CHECK(sub == MPI_COMM_NULL, "split with MPI_UNDEFINED: expected MPI_COMM_NULL got %d", MT_H(sub));

    /* Create with each side minus its local rank 0. */
    {
        int my_n = (mt_size - side + 1) / 2, other_n = (mt_size - (1 - side) + 1) / 2, zero = 0, k;
        E(MPI_Comm_group(inter, &lg));
        if (my_n > 1)
            E(MPI_Group_excl(lg, 1, &zero, &sg));
        else
            E(MPI_Group_incl(lg, 1, &zero, &sg));
        E(MPI_Comm_create(inter, sg, &sub));
        if (my_n > 1 && l == 0) {
            CHECK(sub == MPI_COMM_NULL, "create: non-member, expected MPI_COMM_NULL got %d", MT_H(sub));
        } else {
            CHECK(sub != MPI_COMM_NULL, "create: expected an intercommunicator, got MPI_COMM_NULL");
            if (sub != MPI_COMM_NULL) {
                nr = 0;
                for (k = other_n > 1 ? 1 : 0; k < other_n; ++k)
                    theirs[nr++] = 2 * k + (1 - side);
                E(MPI_Comm_size(sub, &size));
                CHECK_INT("create: local size", my_n > 1 ? my_n - 1 : 1, size);
                E(MPI_Comm_remote_size(sub, &size));
                CHECK_INT("create: remote size", nr, size);
                exchange(sub, theirs, nr, "create");
                E(MPI_Comm_free(&sub));
            }
        }
        E(MPI_Group_free(&sg));
        E(MPI_Group_free(&lg));
    }

    E(MPI_Comm_free(&inter));
    E(MPI_Comm_free(&half));
    free(mine);
    free(theirs);
    return mt_finish();
}
