/* Groups, all local: size, rank (MPI_UNDEFINED for non-members),
 * translate_ranks (MPI_PROC_NULL and MPI_UNDEFINED), compare (IDENT,
 * SIMILAR, UNEQUAL), union, intersection, difference (with the standard's
 * ordering), incl, excl, range_incl and range_excl (positive and negative
 * strides), MPI_GROUP_EMPTY, free. */
#include "mpitest.h"

static int n;

static void check_members(const char *what, MPI_Group g, const int *expect, int count, MPI_Group world)
{
    int size = -1, i, *in, *out, rank, myidx = MPI_UNDEFINED;
    char w[200];
    E(MPI_Group_size(g, &size));
    snprintf(w, sizeof w, "%s: size", what);
    CHECK_INT(w, count, size);
    if (size != count)
        return;
    in = mt_malloc((count + 1) * sizeof(int));
    out = mt_malloc((count + 1) * sizeof(int));
    for (i = 0; i < count; ++i)
        in[i] = i;
    E(MPI_Group_translate_ranks(g, count, in, world, out));
    for (i = 0; i < count; ++i) {
        snprintf(w, sizeof w, "%s: member %d (as a WORLD rank)", what, i);
        CHECK_INT(w, expect[i], out[i]);
        if (expect[i] == mt_rank)
            myidx = i;
    }
    E(MPI_Group_rank(g, &rank));
    snprintf(w, sizeof w, "%s: Group_rank", what);
    CHECK_INT(w, myidx, rank);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_Group world, evens, odds, rev, g, g2;
    int *list, *list2, i, k, result, size;

    mt_init(&argc, &argv);
    n = mt_size;
    list = mt_malloc((n + 2) * sizeof(int));
    list2 = mt_malloc((n + 2) * sizeof(int));
    E(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (i = 0; i < n; ++i)
        list[i] = i;
    check_members("group of WORLD", world, list, n, world);

    /* Empty group. */
    E(MPI_Group_size(MPI_GROUP_EMPTY, &size));
    CHECK_INT("size of MPI_GROUP_EMPTY", 0, size);
    E(MPI_Group_rank(MPI_GROUP_EMPTY, &result));
    CHECK_INT("rank in MPI_GROUP_EMPTY", MPI_UNDEFINED, result);

    /* incl: evens, odds, reversed. */
    for (i = k = 0; i < n; i += 2)
        list[k++] = i;
    E(MPI_Group_incl(world, k, list, &evens));
    check_members("Group_incl(evens)", evens, list, k, world);
    for (i = 1, k = 0; i < n; i += 2)
        list[k++] = i;
    E(MPI_Group_incl(world, k, list, &odds));
    check_members("Group_incl(odds)", odds, list, k, world);
    for (i = 0; i < n; ++i)
        list[i] = n - 1 - i;
    E(MPI_Group_incl(world, n, list, &rev));
    check_members("Group_incl(reversed)", rev, list, n, world);

    /* compare */
    E(MPI_Group_compare(world, world, &result));
    CHECK_INT("Group_compare(world, world)", MPI_IDENT, result);
    E(MPI_Group_compare(world, rev, &result));
    CHECK_INT("Group_compare(world, reversed)", n == 1 ? MPI_IDENT : MPI_SIMILAR, result);
    if (n > 1) {
        E(MPI_Group_compare(evens, odds, &result));
        CHECK_INT("Group_compare(evens, odds)", MPI_UNEQUAL, result);
        E(MPI_Group_compare(world, evens, &result));
        CHECK_INT("Group_compare(world, evens)", MPI_UNEQUAL, result);
    }

    /* translate_ranks with special values. */
    {
        int in[3] = {MPI_PROC_NULL, 0, n - 1}, out[3] = {-5, -5, -5};
        E(MPI_Group_translate_ranks(rev, 3, in, world, out));
        CHECK_INT("translate MPI_PROC_NULL", MPI_PROC_NULL, out[0]);
        CHECK_INT("translate rank 0 of reversed to world", n - 1, out[1]);
        CHECK_INT("translate last rank of reversed to world", 0, out[2]);
        if (n > 1) {
            int in2[2] = {0, 1}, out2[2] = {-5, -5};
            /* world rank 1 is not even: MPI_UNDEFINED. */
            E(MPI_Group_translate_ranks(world, 2, in2, evens, out2));
            CHECK_INT("translate world rank 0 into evens", 0, out2[0]);
            CHECK_INT("translate world rank 1 into evens (non-member)", MPI_UNDEFINED, out2[1]);
        }
    }

    /* excl: everyone but rank 0. */
    list[0] = 0;
    E(MPI_Group_excl(world, 1, list, &g));
    for (i = 1; i < n; ++i)
        list2[i - 1] = i;
    check_members("Group_excl(0)", g, list2, n - 1, world);
    E(MPI_Group_free(&g));
    /* excl of nobody: IDENT to world. */
    E(MPI_Group_excl(world, 0, list, &g));
    E(MPI_Group_compare(world, g, &result));
    CHECK_INT("Group_excl of nobody vs world", MPI_IDENT, result);
    E(MPI_Group_free(&g));
    /* incl of nobody: empty. */
    E(MPI_Group_incl(world, 0, list, &g));
    E(MPI_Group_size(g, &size));
    CHECK_INT("Group_incl of nobody: size", 0, size);
    E(MPI_Group_compare(g, MPI_GROUP_EMPTY, &result));
    CHECK_INT("Group_incl of nobody vs MPI_GROUP_EMPTY", MPI_IDENT, result);
    if (g != MPI_GROUP_EMPTY)
        E(MPI_Group_free(&g));

    /* union: evens then the odds that are not in evens. */
    E(MPI_Group_union(evens, odds, &g));
    for (i = k = 0; i < n; i += 2)
        list[k++] = i;
    for (i = 1; i < n; i += 2)
        list[k++] = i;
    check_members("Group_union(evens, odds)", g, list, n, world);
    E(MPI_Group_compare(world, g, &result));
    CHECK_INT("Group_compare(world, union(evens, odds))", n <= 2 ? MPI_IDENT : MPI_SIMILAR, result);
    E(MPI_Group_free(&g));
    E(MPI_Group_union(world, evens, &g));
    E(MPI_Group_compare(world, g, &result));
    CHECK_INT("Group_compare(world, union(world, evens))", MPI_IDENT, result);
    E(MPI_Group_free(&g));

    /* intersection keeps the order of the first group. */
    E(MPI_Group_intersection(rev, evens, &g));
    for (i = n - 1, k = 0; i >= 0; --i)
        if (i % 2 == 0)
            list[k++] = i;
    check_members("Group_intersection(reversed, evens)", g, list, k, world);
    E(MPI_Group_free(&g));
    E(MPI_Group_intersection(evens, odds, &g));
    E(MPI_Group_size(g, &size));
    CHECK_INT("Group_intersection(evens, odds): size", 0, size);
    E(MPI_Group_rank(g, &result));
    CHECK_INT("Group_intersection(evens, odds): rank", MPI_UNDEFINED, result);
    if (g != MPI_GROUP_EMPTY)
        E(MPI_Group_free(&g));

    /* difference keeps the order of the first group. */
    E(MPI_Group_difference(rev, evens, &g));
    for (i = n - 1, k = 0; i >= 0; --i)
        if (i % 2 == 1)
            list[k++] = i;
    check_members("Group_difference(reversed, evens)", g, list, k, world);
    E(MPI_Group_compare(g, odds, &result));
    CHECK_INT("Group_compare(difference(reversed, evens), odds)", k <= 1 ? MPI_IDENT : MPI_SIMILAR, result);
    E(MPI_Group_free(&g));
    E(MPI_Group_difference(world, world, &g));
    E(MPI_Group_size(g, &size));
    CHECK_INT("Group_difference(world, world): size", 0, size);
    if (g != MPI_GROUP_EMPTY)
        E(MPI_Group_free(&g));

    /* range_incl: evens as (0, n-1, 2); reversed as (n-1, 0, -1);
     * two ranges. */
    {
        int r1[1][3] = {{0, n - 1, 2}};
        int r2[1][3] = {{n - 1, 0, -1}};
        E(MPI_Group_range_incl(world, 1, r1, &g));
        E(MPI_Group_compare(g, evens, &result));
        CHECK_INT("Group_range_incl(0..n-1 step 2) vs evens", MPI_IDENT, result);
        E(MPI_Group_free(&g));
        E(MPI_Group_range_incl(world, 1, r2, &g));
        E(MPI_Group_compare(g, rev, &result));
        CHECK_INT("Group_range_incl(n-1..0 step -1) vs reversed", MPI_IDENT, result);
        E(MPI_Group_free(&g));
        if (n >= 4) {
            int r3[2][3] = {{n - 1, n / 2, -2}, {0, 1, 1}};
            E(MPI_Group_range_incl(world, 2, r3, &g));
            for (i = n - 1, k = 0; i >= n / 2; i -= 2)
                list[k++] = i;
            list[k++] = 0;
            list[k++] = 1;
            check_members("Group_range_incl with two ranges", g, list, k, world);
            E(MPI_Group_free(&g));
        }
        /* range_excl: remove the odds with (1, n-1, 2) -> evens. */
        if (n > 1) {
            int r4[1][3] = {{1, n - 1, 2}};
            E(MPI_Group_range_excl(world, 1, r4, &g));
            E(MPI_Group_compare(g, evens, &result));
            CHECK_INT("Group_range_excl(1..n-1 step 2) vs evens", MPI_IDENT, result);
            E(MPI_Group_free(&g));
        }
        /* range_excl with a negative stride: remove n-1 down to 1 -> {0}. */
        {
            int r5[1][3] = {{n - 1, 1, -1}};
            list[0] = 0;
            if (n > 1) {
                E(MPI_Group_range_excl(world, 1, r5, &g));
                check_members("Group_range_excl(n-1..1 step -1)", g, list, 1, world);
                E(MPI_Group_free(&g));
            }
        }
    }

    /* A group from a communicator other than WORLD. */
    {
        MPI_Comm c;
        E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &c));
        E(MPI_Comm_group(c, &g2));
        for (i = n - 1, k = 0; i >= 0; --i)
            if (i % 2 == mt_rank % 2)
                list[k++] = i;
        check_members("group of a split communicator", g2, list, k, world);
        E(MPI_Group_free(&g2));
        E(MPI_Comm_free(&c));
    }

    E(MPI_Group_free(&rev));
    E(MPI_Group_free(&odds));
    E(MPI_Group_free(&evens));
    E(MPI_Group_free(&world));
    CHECK(world == MPI_GROUP_NULL, "Group_free, expected MPI_GROUP_NULL got %d", MT_H(world));
    free(list);
    free(list2);
    return mt_finish();
}
