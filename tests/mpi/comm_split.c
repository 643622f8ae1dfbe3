/* MPI_Comm_split: colours by rank % 3 with reversed keys (new rank order
 * follows the key), equal keys keep the old order, MPI_UNDEFINED colour
 * gives MPI_COMM_NULL, one colour with equal keys is CONGRUENT to the
 * parent and with reversed keys SIMILAR, splitting a split communicator,
 * communication inside each part isolated from the parent, and rank
 * translation back to MPI_COMM_WORLD, Comm_split_type(MPI_COMM_TYPE_SHARED). */
#include "mpitest.h"

/* Expected rank of world rank r in a split where members are the ranks with
 * colour c, ordered by key = -rank (descending rank). */
static int members_with_colour(int c, int ncol, int *list)
{
    int n = 0, r;
    for (r = mt_size - 1; r >= 0; --r)
        if (r % ncol == c)
            list[n++] = r;
    return n;
}

int main(int argc, char **argv)
{
    MPI_Comm part, whole, rev, undef, sub;
    int size, rank, result, i, n, list[1024];

    mt_init(&argc, &argv);
    if (mt_size > 1024)
        MT_FATAL("size, expected <= 1024 got %d", mt_size);

    /* 1. colour rank % 3, key -rank. */
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 3, -mt_rank, &part));
    n = members_with_colour(mt_rank % 3, 3, list);
    E(MPI_Comm_size(part, &size));
    E(MPI_Comm_rank(part, &rank));
    CHECK_INT("split by rank%3: size", n, size);
    for (i = 0; i < n; ++i)
        if (list[i] == mt_rank)
            CHECK_INT("split by rank%3 with key -rank: new rank", i, rank);
    /* Ring inside the part: neighbours' world ranks as predicted. */
    {
        int right = (rank + 1) % size, left = (rank + size - 1) % size, w = -1;
        MPI_Status st;
        E(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 4, &w, 1, MPI_INT, left, 4, part, &st));
        CHECK_INT("ring in the split communicator: world rank of the left neighbour", list[left], w);
        CHECK_INT("ring in the split communicator: status.MPI_SOURCE (rank in part)", left, st.MPI_SOURCE);
    }
    /* Rank translation part -> world. */
    {
        MPI_Group gp, gw;
        int *in = mt_malloc(n * sizeof(int)), *out = mt_malloc(n * sizeof(int));
        E(MPI_Comm_group(part, &gp));
        E(MPI_Comm_group(MPI_COMM_WORLD, &gw));
        for (i = 0; i < n; ++i)
            in[i] = i;
        E(MPI_Group_translate_ranks(gp, n, in, gw, out));
        for (i = 0; i < n; ++i)
            CHECK_INT("translate rank of split part to WORLD", list[i], out[i]);
        E(MPI_Group_free(&gp));
        E(MPI_Group_free(&gw));
        free(in);
        free(out);
    }

    /* 2. One colour, equal keys: same order as the parent -> CONGRUENT. */
    E(MPI_Comm_split(MPI_COMM_WORLD, 5, 0, &whole));
    E(MPI_Comm_rank(whole, &rank));
    CHECK_INT("split with one colour and equal keys: rank", mt_rank, rank);
    E(MPI_Comm_compare(MPI_COMM_WORLD, whole, &result));
    CHECK_INT("Comm_compare(WORLD, split with one colour, equal keys)", MPI_CONGRUENT, result);

    /* 3. One colour, reversed keys -> SIMILAR (or CONGRUENT for one rank). */
    E(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_size - mt_rank, &rev));
    E(MPI_Comm_rank(rev, &rank));
    CHECK_INT("split with reversed keys: rank", mt_size - 1 - mt_rank, rank);
    E(MPI_Comm_compare(MPI_COMM_WORLD, rev, &result));
    CHECK_INT("Comm_compare(WORLD, split with reversed keys)", mt_size == 1 ? MPI_CONGRUENT : MPI_SIMILAR, result);

    /* 4. MPI_UNDEFINED for the last rank; keys in pairs (ties broken by
     * the old rank). */
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank == mt_size - 1 ? MPI_UNDEFINED : 1, mt_rank / 2, &undef));
    if (mt_rank == mt_size - 1) {
        CHECK(undef == MPI_COMM_NULL, "split with MPI_UNDEFINED colour, expected MPI_COMM_NULL got %d", MT_H(undef));
    } else {
        E(MPI_Comm_size(undef, &size));
        E(MPI_Comm_rank(undef, &rank));
        CHECK_INT("split without the last rank: size", mt_size - 1, size);
        CHECK_INT("split with tied keys: rank", mt_rank, rank);
        {
            int right = (rank + 1) % size, left = (rank + size - 1) % size, w = -1;
            E(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 4, &w, 1, MPI_INT, left, 4, undef, MPI_STATUS_IGNORE));
            CHECK_INT("ring in the split without the last rank", left, w);
        }
    }

    /* 5. Split of a split: the reversed communicator by parity of its rank. */
    E(MPI_Comm_rank(rev, &rank));
    E(MPI_Comm_split(rev, rank % 2, rank, &sub));
    {
        int subsize, subrank, expect_size;
        E(MPI_Comm_size(sub, &subsize));
        E(MPI_Comm_rank(sub, &subrank));
        expect_size = (mt_size + (rank % 2 ? 0 : 1)) / 2;
        CHECK_INT("split of a split: size", expect_size, subsize);
        CHECK_INT("split of a split: rank", rank / 2, subrank);
    }

    /* 6. Isolation: same tag, same peers, on WORLD, whole and part. */
    {
        int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
        int a = 1, b = 2, ra = -1, rb = -1;
        MPI_Request r[2];
        E(MPI_Isend(&a, 1, MPI_INT, right, 9, whole, &r[0]));
        E(MPI_Isend(&b, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &r[1]));
        E(MPI_Recv(&rb, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        E(MPI_Recv(&ra, 1, MPI_INT, left, 9, whole, MPI_STATUS_IGNORE));
        E(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK_INT("message on WORLD (not the split's)", 2, rb);
        CHECK_INT("message on the split (not WORLD's)", 1, ra);
    }

    /* 7. Comm_split_type: processes that can share memory (all of them on
     * one host); members ordered by the key, ties by the old rank. */
    {
        MPI_Comm shm, none;
        MPI_Group gs, gw;
        int ssize, srank, *in, *out;
        E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
        CHECK(shm != MPI_COMM_NULL, "Comm_split_type(MPI_COMM_TYPE_SHARED), expected a communicator got MPI_COMM_NULL");
        if (shm != MPI_COMM_NULL) {
            E(MPI_Comm_size(shm, &ssize));
            E(MPI_Comm_rank(shm, &srank));
            CHECK(ssize >= 1 && ssize <= mt_size, "Comm_split_type(SHARED) size, expected 1..%d got %d", mt_size, ssize);
            E(MPI_Comm_group(shm, &gs));
            E(MPI_Comm_group(MPI_COMM_WORLD, &gw));
            in = mt_malloc(ssize * sizeof(int));
            out = mt_malloc(ssize * sizeof(int));
            for (i = 0; i < ssize; ++i)
                in[i] = i;
            E(MPI_Group_translate_ranks(gs, ssize, in, gw, out));
            CHECK_INT("Comm_split_type(SHARED): my own world rank at my rank", mt_rank, out[srank]);
            for (i = 1; i < ssize; ++i)
                CHECK(out[i] > out[i - 1], "Comm_split_type(SHARED) with equal keys keeps the old order, expected "
                      "increasing world ranks got %d then %d", out[i - 1], out[i]);
            {
                int right = (srank + 1) % ssize, left = (srank + ssize - 1) % ssize, w = -1;
                E(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 4, &w, 1, MPI_INT, left, 4, shm, MPI_STATUS_IGNORE));
                CHECK_INT("ring in the shared-memory communicator", out[left], w);
            }
            free(in);
            free(out);
            E(MPI_Group_free(&gs));
            E(MPI_Group_free(&gw));
            E(MPI_Comm_free(&shm));
        }
        E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none));
        CHECK(none == MPI_COMM_NULL, "Comm_split_type(MPI_UNDEFINED), expected MPI_COMM_NULL got %d", MT_H(none));
    }

    E(MPI_Comm_free(&sub));
    if (undef != MPI_COMM_NULL)
        E(MPI_Comm_free(&undef));
    E(MPI_Comm_free(&rev));
    E(MPI_Comm_free(&whole));
    E(MPI_Comm_free(&part));
    return mt_finish();
}
