/* Communicators: compare (IDENT / CONGRUENT / UNEQUAL), dup (same group,
 * separate context: traffic on a dup never matches receives on the
 * original), dup of a dup, many dup/free cycles and many live dups, free
 * sets MPI_COMM_NULL, Comm_idup, names (MPI_COMM_WORLD / MPI_COMM_SELF defaults,
 * set/get), Comm_test_inter, Comm_group, and attribute copy/delete
 * callbacks on dup and free. */
#include "mpitest.h"

static int copy_calls = 0, delete_calls = 0;

static int copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra;
    ++copy_calls;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    ++delete_calls;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int result = -1, size, rank, i, flag, len;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Comm dup, dup2, many[20];
    MPI_Group g1, g2;
    int right, left;

    mt_init(&argc, &argv);
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;

    E(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &result));
    CHECK_INT("Comm_compare(WORLD, WORLD)", MPI_IDENT, result);
    E(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &result));
    CHECK_INT("Comm_compare(WORLD, SELF)", mt_size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, result);
    E(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK_INT("Comm_test_inter(WORLD)", 0, flag);

    /* Default names. */
    E(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK_STR("name of MPI_COMM_WORLD", "MPI_COMM_WORLD", name);
    CHECK_INT("name length of MPI_COMM_WORLD", 14, len);
    E(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK_STR("name of MPI_COMM_SELF", "MPI_COMM_SELF", name);

    /* Dup. */
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    E(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
    CHECK_INT("Comm_compare(WORLD, dup)", MPI_CONGRUENT, result);
    E(MPI_Comm_compare(dup, dup, &result));
    CHECK_INT("Comm_compare(dup, dup)", MPI_IDENT, result);
    E(MPI_Comm_size(dup, &size));
    E(MPI_Comm_rank(dup, &rank));
    CHECK_INT("size of dup", mt_size, size);
    CHECK_INT("rank in dup", mt_rank, rank);
    E(MPI_Comm_group(dup, &g1));
    E(MPI_Comm_group(MPI_COMM_WORLD, &g2));
    E(MPI_Group_compare(g1, g2, &result));
    CHECK_INT("Group_compare(group of dup, group of WORLD)", MPI_IDENT, result);
    E(MPI_Group_free(&g1));
    E(MPI_Group_free(&g2));
    CHECK(g1 == MPI_GROUP_NULL, "Group_free, expected MPI_GROUP_NULL got %d", MT_H(g1));

    /* Names. */
    E(MPI_Comm_set_name(dup, "gridmpi test dup"));
    E(MPI_Comm_get_name(dup, name, &len));
    CHECK_STR("name of a dup after set_name", "gridmpi test dup", name);
    CHECK_INT("name length after set_name", (int)strlen("gridmpi test dup"), len);
    E(MPI_Comm_set_name(MPI_COMM_WORLD, "renamed world"));
    E(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK_STR("name of MPI_COMM_WORLD after set_name", "renamed world", name);
    E(MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD"));
    E(MPI_Comm_get_name(dup, name, &len));
    CHECK_STR("name of the dup unaffected by renaming WORLD", "gridmpi test dup", name);

    /* Context isolation: the same (source, tag) on dup and WORLD. The dup
     * message is sent first but the WORLD receive must get the WORLD one. */
    {
        int a = 1000 + mt_rank, b = 2000 + mt_rank, ra = -1, rb = -1;
        MPI_Request r[2];
        MPI_Status st;
        E(MPI_Isend(&a, 1, MPI_INT, right, 7, dup, &r[0]));
        E(MPI_Isend(&b, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &r[1]));
        E(MPI_Recv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        E(MPI_Recv(&ra, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st));
        E(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK_INT("message received on WORLD came from WORLD", 2000 + left, rb);
        CHECK_INT("message received on dup came from dup", 1000 + left, ra);
        CHECK_INT("status.MPI_SOURCE on dup", left, st.MPI_SOURCE);
    }

    /* Dup of a dup, freed before its parent. */
    E(MPI_Comm_dup(dup, &dup2));
    E(MPI_Comm_compare(dup, dup2, &result));
    CHECK_INT("Comm_compare(dup, dup of dup)", MPI_CONGRUENT, result);
    {
        int v = mt_rank, w = -1;
        E(MPI_Sendrecv(&v, 1, MPI_INT, right, 0, &w, 1, MPI_INT, left, 0, dup2, MPI_STATUS_IGNORE));
        CHECK_INT("ring on dup of dup", left, w);
    }
    E(MPI_Comm_free(&dup2));
    CHECK(dup2 == MPI_COMM_NULL, "Comm_free, expected MPI_COMM_NULL got %d", MT_H(dup2));

    /* Attribute callbacks on dup and free. */
    {
        int keyval = MPI_KEYVAL_INVALID, nocopy = MPI_KEYVAL_INVALID;
        static char base[4];
        void *val = NULL;
        E(MPI_Comm_create_keyval(copy_fn, delete_fn, &keyval, NULL));
        E(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &nocopy, NULL));
        E(MPI_Comm_set_attr(dup, keyval, base));
        E(MPI_Comm_set_attr(dup, nocopy, base));
        copy_calls = delete_calls = 0;
        E(MPI_Comm_dup(dup, &dup2));
        CHECK_INT("attribute copy callback calls on dup", 1, copy_calls);
        flag = 0;
        E(MPI_Comm_get_attr(dup2, keyval, &val, &flag));
        CHECK_INT("copied attribute present on the new dup", 1, flag);
        CHECK(val == base + 1, "copied attribute value, expected %p got %p", (void *)(base + 1), val);
        flag = 1;
        E(MPI_Comm_get_attr(dup2, nocopy, &val, &flag));
        CHECK_INT("attribute with MPI_COMM_NULL_COPY_FN absent on the dup", 0, flag);
        E(MPI_Comm_free(&dup2));
        CHECK_INT("attribute delete callback calls on free", 1, delete_calls);
        E(MPI_Comm_delete_attr(dup, keyval));
        CHECK_INT("attribute delete callback calls on delete_attr", 2, delete_calls);
        flag = 1;
        E(MPI_Comm_get_attr(dup, keyval, &val, &flag));
        CHECK_INT("attribute after delete_attr", 0, flag);
        E(MPI_Comm_free_keyval(&keyval));
        E(MPI_Comm_free_keyval(&nocopy));
        CHECK_INT("Comm_free_keyval sets MPI_KEYVAL_INVALID", MPI_KEYVAL_INVALID, keyval);
    }

    /* Many live dups, used in interleaved order, then freed. */
    for (i = 0; i < 20; ++i)
        E(MPI_Comm_dup(i % 2 ? dup : MPI_COMM_WORLD, &many[i]));
    {
        MPI_Request r[40];
        int out[20], in[20];
        for (i = 0; i < 20; ++i) {
            out[i] = mt_rank * 100 + i;
            in[i] = -1;
            E(MPI_Irecv(&in[i], 1, MPI_INT, left, 3, many[19 - i], &r[i]));
        }
        for (i = 0; i < 20; ++i)
            E(MPI_Isend(&out[i], 1, MPI_INT, right, 3, many[19 - i], &r[20 + i]));
        E(MPI_Waitall(40, r, MPI_STATUSES_IGNORE));
        for (i = 0; i < 20; ++i)
            CHECK_INT("message on one of 20 live dups", left * 100 + i, in[i]);
    }
    for (i = 0; i < 20; ++i) {
        for (flag = i + 1; flag < 20; ++flag) {
            E(MPI_Comm_compare(many[i], many[flag], &result));
            if (result != MPI_CONGRUENT) {
                MT_FAIL("Comm_compare of two dups, expected MPI_CONGRUENT got %d", result);
                break;
            }
        }
    }
    for (i = 19; i >= 0; --i)
        E(MPI_Comm_free(&many[i]));

    /* Non-blocking dup. */
    {
        MPI_Request r;
        int v = mt_rank, w = -1;
        E(MPI_Comm_idup(MPI_COMM_WORLD, &dup2, &r));
        E(MPI_Wait(&r, MPI_STATUS_IGNORE));
        E(MPI_Comm_compare(MPI_COMM_WORLD, dup2, &result));
        CHECK_INT("Comm_compare(WORLD, Comm_idup(WORLD))", MPI_CONGRUENT, result);
        E(MPI_Sendrecv(&v, 1, MPI_INT, right, 0, &w, 1, MPI_INT, left, 0, dup2, MPI_STATUS_IGNORE));
        CHECK_INT("ring on a Comm_idup communicator", left, w);
        E(MPI_Comm_free(&dup2));
    }

    /* Dup/free cycles (context ids are recycled). */
    for (i = 0; i < 30; ++i) {
        int v = i, w = -1;
        E(MPI_Comm_dup(MPI_COMM_WORLD, &dup2));
        E(MPI_Sendrecv(&v, 1, MPI_INT, right, i, &w, 1, MPI_INT, left, i, dup2, MPI_STATUS_IGNORE));
        if (w != i) {
            MT_FAIL("dup/free cycle %d: value, expected %d got %d", i, i, w);
            break;
        }
        E(MPI_Comm_free(&dup2));
    }
    E(MPI_Comm_free(&dup));
    return mt_finish();
}
