/* MPI_Comm_idup / MPI_Comm_idup_with_info as non-blocking collectives:
 * - the call does not block (rank 0 enters it only after every other rank
 *   has called it and then completed a synchronous send to rank 0);
 * - idups on overlapping communicators started in different orders on
 *   different ranks (pairs of ranks, a ring of two-rank communicators, two
 *   dups of MPI_COMM_WORLD in reversed order by parity) complete;
 * - several outstanding idups completed with Waitall, Wait in reverse
 *   order and Test loops, each with its own context;
 * - idups interleaved with Ibarrier / Iallreduce on the same and on other
 *   communicators, in different orders across communicators;
 * - the new communicator works right after completion (congruent, an
 *   allreduce, traffic isolated from the parent and from the other dups);
 * - attributes copied by the copy callbacks (and not by a null one), the
 *   error handler and the topology kept, delete callbacks at free;
 * - idup_with_info: the info's hints (info freed before completion),
 *   MPI_INFO_NULL;
 * - an intercommunicator idup; MPI_COMM_SELF; many idup/free cycles;
 * - the local settings and queries on the new communicator before the
 *   request completes (mpi4py's Comm.Idup sets an error handler at once;
 *   Open MPI and MPICH accept): error handler, name, attributes, info,
 *   size, rank, group, test_inter; kept after completion. */
#include "mpitest.h"

#if defined(GRIDMPI_VERSION_STRING) || MPI_VERSION >= 4
#define HAVE_IDUP_WITH_INFO 1
#else
#define HAVE_IDUP_WITH_INFO 0
#endif

/* The new communicator is congruent to its parent, runs an allreduce, and
 * its messages never match receives on the parent (and back). */
static void check_dup(MPI_Comm parent, MPI_Comm dup, const char *what)
{
    int result = -1, rank, size, sum = -1, inter = 0, expected, right, left;
    int on_parent = -1, on_dup = -1, one = 1, two = 2;
    MPI_Request r[2];

    if (dup == MPI_COMM_NULL) {
        MT_FAIL("%s: MPI_COMM_NULL", what);
        return;
    }
    E(MPI_Comm_compare(parent, dup, &result));
    CHECK(result == MPI_CONGRUENT, "%s: Comm_compare(parent, dup), expected MPI_CONGRUENT got %d", what,
          result);
    E(MPI_Comm_test_inter(dup, &inter));
    E(MPI_Comm_rank(dup, &rank));
    if (inter)
        E(MPI_Comm_remote_size(dup, &size));
    else
        E(MPI_Comm_size(dup, &size));
    E(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
    /* Intercommunicator: each group gets the sum of the remote ranks. */
    expected = size * (size - 1) / 2;
    CHECK(sum == expected, "%s: allreduce on the dup, expected %d got %d", what, expected, sum);
    if (inter)
        return;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    E(MPI_Irecv(&on_dup, 1, MPI_INT, left, 7, dup, &r[0]));
    E(MPI_Irecv(&on_parent, 1, MPI_INT, left, 7, parent, &r[1]));
    E(MPI_Send(&one, 1, MPI_INT, right, 7, parent));
    E(MPI_Send(&two, 1, MPI_INT, right, 7, dup));
    E(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(on_dup == 2 && on_parent == 1, "%s: isolation from the parent, expected 2/1 got %d/%d", what,
          on_dup, on_parent);
}

/* Each comms[k] gets its own context: receives posted on every one, sends
 * in the opposite order, every receive gets its communicator's value. */
static void check_distinct(MPI_Comm *comms, int n, const char *what)
{
    int k, rank, size, got[16];
    MPI_Request r[16];
    E(MPI_Comm_rank(comms[0], &rank));
    E(MPI_Comm_size(comms[0], &size));
    for (k = 0; k < n; ++k) {
        got[k] = -1;
        E(MPI_Irecv(&got[k], 1, MPI_INT, (rank + size - 1) % size, 3, comms[k], &r[k]));
    }
    for (k = n - 1; k >= 0; --k)
        E(MPI_Send(&k, 1, MPI_INT, (rank + 1) % size, 3, comms[k]));
    E(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
    for (k = 0; k < n; ++k)
        CHECK(got[k] == k, "%s: message on communicator %d, expected %d got %d", what, k, k, got[k]);
}

static int copies = 0, deletes = 0;

static int copy_plus_one(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra;
    ++copies;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    ++deletes;
    return MPI_SUCCESS;
}

static void test_not_blocking(void)
{
    MPI_Comm dup;
    MPI_Request req;
    int i, buf = 0;
    /* Rank 0 calls MPI_Comm_idup only after everyone else has called it and
     * completed a synchronous send: an idup that blocked would deadlock. */
    if (mt_rank == 0) {
        for (i = 1; i < mt_size; ++i)
            E(MPI_Recv(&buf, 1, MPI_INT, i, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        E(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        E(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
        E(MPI_Ssend(&mt_rank, 1, MPI_INT, 0, 11, MPI_COMM_WORLD));
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    CHECK(req == MPI_REQUEST_NULL, "request after Wait, expected MPI_REQUEST_NULL");
    check_dup(MPI_COMM_WORLD, dup, "idup of WORLD (not blocking)");
    E(MPI_Comm_free(&dup));

    E(MPI_Comm_idup(MPI_COMM_SELF, &dup, &req));
    E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_dup(MPI_COMM_SELF, dup, "idup of SELF");
    E(MPI_Comm_free(&dup));
}

static void test_overlap(void)
{
    MPI_Comm a, b, da, db, w1, w2, dw1, dw2, tmp, primary = MPI_COMM_NULL, secondary = MPI_COMM_NULL;
    MPI_Comm dp = MPI_COMM_NULL, ds = MPI_COMM_NULL;
    MPI_Request req[2];
    int i;

    /* Pairs {0,1},{2,3},... and {1,2},{3,4},...: even ranks dup the first
     * kind first, odd ranks the second kind first. */
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank / 2, mt_rank, &a));
    E(MPI_Comm_split(MPI_COMM_WORLD, ((mt_rank + 1) % mt_size) / 2, mt_rank, &b));
    if (mt_rank % 2 == 0) {
        E(MPI_Comm_idup(a, &da, &req[0]));
        E(MPI_Comm_idup(b, &db, &req[1]));
    } else {
        E(MPI_Comm_idup(b, &db, &req[0]));
        E(MPI_Comm_idup(a, &da, &req[1]));
    }
    E(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    check_dup(a, da, "idup of a pair (even first)");
    check_dup(b, db, "idup of a pair (odd first)");

    /* Two dups of WORLD, idup'ed in reversed orders by parity. */
    E(MPI_Comm_dup(MPI_COMM_WORLD, &w1));
    E(MPI_Comm_dup(MPI_COMM_WORLD, &w2));
    if (mt_rank % 2 == 0) {
        E(MPI_Comm_idup(w1, &dw1, &req[0]));
        E(MPI_Comm_idup(w2, &dw2, &req[1]));
    } else {
        E(MPI_Comm_idup(w2, &dw2, &req[0]));
        E(MPI_Comm_idup(w1, &dw1, &req[1]));
    }
    /* Completed in the order opposite to the start. */
    E(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    E(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    check_dup(w1, dw1, "idup of WORLD dup 1 (reversed orders)");
    check_dup(w2, dw2, "idup of WORLD dup 2 (reversed orders)");
    {
        MPI_Comm all[4] = {w1, w2, dw1, dw2};
        check_distinct(all, 4, "dups of WORLD and their idups");
    }

    /* A ring of two-rank communicators {i, i+1}: every rank dups the one
     * where it is first, then the one where it is second (a cycle that
     * blocking dups would deadlock on). */
    if (mt_size >= 3) {
        for (i = 0; i < mt_size; ++i) {
            if (mt_rank == i)
                E(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &primary));
            else if (mt_rank == (i + 1) % mt_size)
                E(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &secondary));
            else {
                E(MPI_Comm_split(MPI_COMM_WORLD, 1, 0, &tmp));
                E(MPI_Comm_free(&tmp));
            }
        }
        E(MPI_Comm_idup(primary, &dp, &req[0]));
        E(MPI_Comm_idup(secondary, &ds, &req[1]));
        E(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        /* The checks use blocking collectives: in the order of i, {0,1}
         * first, so rank 0 checks its primary first, the others their
         * secondary. */
        if (mt_rank == 0)
            check_dup(primary, dp, "ring: idup of the first communicator");
        check_dup(secondary, ds, "ring: idup of the second communicator");
        if (mt_rank != 0)
            check_dup(primary, dp, "ring: idup of the first communicator");
        E(MPI_Comm_free(&dp));
        E(MPI_Comm_free(&ds));
        E(MPI_Comm_free(&primary));
        E(MPI_Comm_free(&secondary));
    }

    E(MPI_Comm_free(&da));
    E(MPI_Comm_free(&db));
    E(MPI_Comm_free(&a));
    E(MPI_Comm_free(&b));
    E(MPI_Comm_free(&dw1));
    E(MPI_Comm_free(&dw2));
    E(MPI_Comm_free(&w1));
    E(MPI_Comm_free(&w2));
}

static void test_many_outstanding(void)
{
    enum { N = 6 };
    MPI_Comm dups[N];
    MPI_Request req[N];
    int k, flag = 0;
    for (k = 0; k < N; ++k)
        E(MPI_Comm_idup(MPI_COMM_WORLD, &dups[k], &req[k]));
    E(MPI_Waitall(N, req, MPI_STATUSES_IGNORE));
    for (k = 0; k < N; ++k)
        check_dup(MPI_COMM_WORLD, dups[k], "one of 6 outstanding idups");
    check_distinct(dups, N, "6 outstanding idups");

    /* An idup of each of them at once, completed with a Test loop. */
    {
        MPI_Comm second[N];
        for (k = 0; k < N; ++k)
            E(MPI_Comm_idup(dups[(k + mt_rank) % N], &second[(k + mt_rank) % N], &req[k]));
        while (!flag)
            E(MPI_Testall(N, req, &flag, MPI_STATUSES_IGNORE));
        for (k = 0; k < N; ++k)
            check_dup(dups[k], second[k], "idup of an idup'ed communicator (Testall)");
        check_distinct(second, N, "idups of 6 idups");
        for (k = 0; k < N; ++k)
            E(MPI_Comm_free(&second[k]));
    }
    for (k = 0; k < N; ++k)
        E(MPI_Comm_free(&dups[k]));
}

static void test_interleaved(void)
{
    MPI_Comm other, d1, d2;
    MPI_Request wreq[4], oreq[3], all[7];
    int in = mt_rank + 1, sum1 = -1, sum2 = -1, sum3 = -1, k, flag = 0;
    const int expected = mt_size * (mt_size + 1) / 2;

    E(MPI_Comm_dup(MPI_COMM_WORLD, &other));
    /* Same order on every rank per communicator, but even ranks start the
     * WORLD operations first and odd ranks those on `other` first. */
    for (k = 0; k < 2; ++k) {
        if ((k == 0) == (mt_rank % 2 == 0)) {
            E(MPI_Iallreduce(&in, &sum1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &wreq[0]));
            E(MPI_Comm_idup(MPI_COMM_WORLD, &d1, &wreq[1]));
            E(MPI_Ibarrier(MPI_COMM_WORLD, &wreq[2]));
            E(MPI_Iallreduce(&in, &sum2, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &wreq[3]));
        } else {
            E(MPI_Ibarrier(other, &oreq[0]));
            E(MPI_Comm_idup(other, &d2, &oreq[1]));
            E(MPI_Iallreduce(&in, &sum3, 1, MPI_INT, MPI_SUM, other, &oreq[2]));
        }
    }
    /* Completed in a rank-dependent order. */
    for (k = 0; k < 4; ++k)
        all[k] = wreq[k];
    for (k = 0; k < 3; ++k)
        all[4 + k] = oreq[k];
    for (k = 0; k < 7; ++k)
        E(MPI_Wait(&all[(k + mt_rank) % 7], MPI_STATUS_IGNORE));
    CHECK_INT("Iallreduce on WORLD before the idup", expected, sum1);
    CHECK_INT("Iallreduce on WORLD after the idup", expected, sum2);
    CHECK_INT("Iallreduce on the other communicator after its idup", expected, sum3);
    check_dup(MPI_COMM_WORLD, d1, "idup among WORLD's non-blocking collectives");
    check_dup(other, d2, "idup among other's non-blocking collectives");

    /* A non-blocking collective on the new communicator right away, with an
     * idup of it; completed with a Test loop. */
    {
        MPI_Comm d3;
        MPI_Request r[2];
        sum1 = -1;
        E(MPI_Iallreduce(&in, &sum1, 1, MPI_INT, MPI_SUM, d1, &r[0]));
        E(MPI_Comm_idup(d1, &d3, &r[1]));
        while (!flag)
            E(MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE));
        CHECK_INT("Iallreduce on a fresh idup'ed communicator", expected, sum1);
        check_dup(d1, d3, "idup of a fresh idup'ed communicator");
        E(MPI_Comm_free(&d3));
    }
    E(MPI_Comm_free(&d1));
    E(MPI_Comm_free(&d2));
    E(MPI_Comm_free(&other));
}

static void test_attributes(void)
{
    MPI_Comm base, dup;
    MPI_Request req;
    MPI_Errhandler eh;
    int key_copy, key_null, key_dupfn, flag = 0;
    void *val = NULL;
    static char anchor[4];

    E(MPI_Comm_dup(MPI_COMM_WORLD, &base));
    E(MPI_Comm_create_keyval(copy_plus_one, count_delete, &key_copy, NULL));
    E(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key_null, NULL));
    E(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key_dupfn, NULL));
    E(MPI_Comm_set_attr(base, key_copy, &anchor[0]));
    E(MPI_Comm_set_attr(base, key_null, &anchor[1]));
    E(MPI_Comm_set_attr(base, key_dupfn, &anchor[2]));
    E(MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN));
    copies = deletes = 0;

    E(MPI_Comm_idup(base, &dup, &req));
    E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_INT("copy callbacks run by one idup", 1, copies);
    E(MPI_Comm_get_attr(dup, key_copy, &val, &flag));
    CHECK(flag && val == (void *)&anchor[1], "attribute with a copy callback: flag %d, value %p (expected %p)",
          flag, val, (void *)&anchor[1]);
    flag = 1;
    E(MPI_Comm_get_attr(dup, key_null, &val, &flag));
    CHECK_INT("attribute with MPI_COMM_NULL_COPY_FN is not copied", 0, flag);
    E(MPI_Comm_get_attr(dup, key_dupfn, &val, &flag));
    CHECK(flag && val == (void *)&anchor[2], "attribute with MPI_COMM_DUP_FN: flag %d", flag);
    /* The parent's attribute is untouched. */
    E(MPI_Comm_get_attr(base, key_copy, &val, &flag));
    CHECK(flag && val == (void *)&anchor[0], "parent's attribute after idup");
    E(MPI_Comm_get_errhandler(dup, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "error handler of the idup'ed communicator, expected MPI_ERRORS_RETURN");
    if (eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL)
        E(MPI_Errhandler_free(&eh));
    check_dup(base, dup, "idup of a communicator with attributes");
    E(MPI_Comm_free(&dup));
    CHECK_INT("delete callbacks at free of the idup'ed communicator", 1, deletes);

    /* A Cartesian communicator keeps its topology. */
    {
        int dims[1] = {0}, periods[1] = {1}, status = -1, coords[1] = {-1};
        MPI_Comm cart, cdup;
        E(MPI_Dims_create(mt_size, 1, dims));
        E(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
        E(MPI_Comm_idup(cart, &cdup, &req));
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        E(MPI_Topo_test(cdup, &status));
        CHECK_INT("topology of an idup'ed Cartesian communicator", MPI_CART, status);
        E(MPI_Cart_coords(cdup, mt_rank, 1, coords));
        CHECK_INT("Cartesian coordinate on the idup'ed communicator", mt_rank, coords[0]);
        E(MPI_Comm_free(&cdup));
        E(MPI_Comm_free(&cart));
    }

    E(MPI_Comm_free(&base));
    E(MPI_Comm_free_keyval(&key_copy));
    E(MPI_Comm_free_keyval(&key_null));
    E(MPI_Comm_free_keyval(&key_dupfn));
}

#if HAVE_IDUP_WITH_INFO
static void check_hint(MPI_Comm c, const char *key, const char *expected, const char *what)
{
    MPI_Info used;
    char value[64] = "";
    int flag = 0;
    E(MPI_Comm_get_info(c, &used));
    E(MPI_Info_get(used, key, (int)sizeof value - 1, value, &flag));
    if (expected) {
        CHECK(flag, "%s: hint %s missing", what, key);
        if (flag)
            CHECK_STR(what, expected, value);
    } else {
        CHECK(!flag, "%s: hint %s present (\"%s\")", what, key, value);
    }
    E(MPI_Info_free(&used));
}

static void test_with_info(void)
{
    MPI_Comm c1, c2, n1, n2, n3;
    MPI_Request req[2];
    MPI_Info info;

    E(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &c1, &req[0]));
    E(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    check_dup(MPI_COMM_WORLD, c1, "idup_with_info(WORLD, MPI_INFO_NULL)");
    E(MPI_Comm_dup(MPI_COMM_WORLD, &c2));

    /* Reversed orders across ranks; the info is freed before completion. */
    E(MPI_Info_create(&info));
    E(MPI_Info_set(info, "gridmpi_test_key", "value one"));
    E(MPI_Info_set(info, "gridmpi_other_key", "2"));
    if (mt_rank % 2 == 0) {
        E(MPI_Comm_idup_with_info(c1, info, &n1, &req[0]));
        E(MPI_Comm_idup_with_info(c2, info, &n2, &req[1]));
    } else {
        E(MPI_Comm_idup_with_info(c2, info, &n2, &req[0]));
        E(MPI_Comm_idup_with_info(c1, info, &n1, &req[1]));
    }
    E(MPI_Info_free(&info));
    E(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    check_dup(c1, n1, "idup_with_info of dup 1");
    check_dup(c2, n2, "idup_with_info of dup 2");
    if (!MT_IS_OPENMPI && !MT_IS_MPICH) {
        /* Hints that no implementation knows are kept by gridmpi only. */
        check_hint(n1, "gridmpi_test_key", "value one", "hint given to idup_with_info");
        check_hint(n2, "gridmpi_other_key", "2", "second hint given to idup_with_info");
        /* The hints come from info, not from the parent. */
        E(MPI_Info_create(&info));
        E(MPI_Info_set(info, "gridmpi_parent_key", "p"));
        E(MPI_Comm_set_info(c1, info));
        E(MPI_Info_free(&info));
        E(MPI_Comm_idup_with_info(c1, MPI_INFO_NULL, &n3, &req[0]));
        E(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
        check_hint(n3, "gridmpi_parent_key", NULL, "idup_with_info(MPI_INFO_NULL) of a parent with hints");
        E(MPI_Comm_free(&n3));
        /* While plain idup keeps the parent's. */
        E(MPI_Comm_idup(c1, &n3, &req[0]));
        E(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
        check_hint(n3, "gridmpi_parent_key", "p", "idup of a parent with hints");
        E(MPI_Comm_free(&n3));
    }
    E(MPI_Comm_free(&n1));
    E(MPI_Comm_free(&n2));
    E(MPI_Comm_free(&c1));
    E(MPI_Comm_free(&c2));
}
#endif

static void test_intercomm(void)
{
    MPI_Comm local, inter, dup, dup2;
    MPI_Request req[2];
    if (mt_size < 2)
        return;
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &local));
    E(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, mt_rank % 2 == 0 ? 1 : 0, 99, &inter));
    E(MPI_Comm_idup(inter, &dup, &req[0]));
    E(MPI_Comm_idup(local, &dup2, &req[1]));
    E(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    check_dup(inter, dup, "idup of an intercommunicator");
    check_dup(local, dup2, "idup of the local communicator next to it");
    {
        int remote = -1, expected;
        E(MPI_Comm_remote_size(dup, &remote));
        expected = mt_rank % 2 == 0 ? mt_size / 2 : (mt_size + 1) / 2;
        CHECK_INT("remote size of the idup'ed intercommunicator", expected, remote);
    }
    E(MPI_Comm_free(&dup));
    E(MPI_Comm_free(&dup2));
    E(MPI_Comm_free(&inter));
    E(MPI_Comm_free(&local));
}

static void test_cycles(void)
{
    MPI_Comm dup;
    MPI_Request req;
    int i, sum = -1;
    /* More cycles than one process has context ids at a time (4096 pairs):
     * idup releases what MPI_Comm_free gives back. */
    for (i = 0; i < 4200; ++i) {
        E(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (i % 1000 == 0) {
            E(MPI_Allreduce(&mt_rank, &sum, 1, MPI_INT, MPI_SUM, dup));
            CHECK_INT("allreduce on a recycled idup", mt_size * (mt_size - 1) / 2, sum);
        }
        E(MPI_Comm_free(&dup));
    }
}

static int pending_handler_calls = 0;
static void pending_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    ++pending_handler_calls;
}

static void test_settings_before_completion(void)
{
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Request req;
    MPI_Errhandler eh, got = MPI_ERRHANDLER_NULL;
    MPI_Info info, used;
    MPI_Group g, wg;
    int keyval, *value = NULL, flag = 0, size = -1, rank = -1, inter = -1, len = 0, result = -1;
    static int payload = 42;
    char name[MPI_MAX_OBJECT_NAME], hint[16];

    /* Rank 0 enters the idup only after every other rank has made its
     * settings, so that theirs are made on a communicator whose idup
     * cannot have completed (at 1 rank it may have). */
    if (mt_rank == 0) {
        int i, token;
        for (i = 1; i < mt_size; ++i)
            E(MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, MT_TAG_SYNC + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    E(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
    E(MPI_Comm_create_errhandler(pending_handler, &eh));
    E(MPI_Comm_set_errhandler(dup, eh));
    E(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == eh, "Comm_get_errhandler on a pending idup communicator: not the handler just set");
    if (got != MPI_ERRHANDLER_NULL)
        E(MPI_Errhandler_free(&got));
    E(MPI_Comm_set_name(dup, "pending idup"));
    E(MPI_Comm_get_name(dup, name, &len));
    CHECK_STR("Comm_get_name on a pending idup communicator", "pending idup", name);
    E(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
    E(MPI_Comm_set_attr(dup, keyval, &payload));
    E(MPI_Comm_get_attr(dup, keyval, &value, &flag));
    CHECK(flag && value == &payload, "Comm_get_attr on a pending idup communicator: flag %d", flag);
    E(MPI_Info_create(&info));
    E(MPI_Info_set(info, "gridmpi_test_hint", "pending"));
    E(MPI_Comm_set_info(dup, info));
    E(MPI_Info_free(&info));
    E(MPI_Comm_size(dup, &size));
    E(MPI_Comm_rank(dup, &rank));
    E(MPI_Comm_test_inter(dup, &inter));
    CHECK(size == mt_size && rank == mt_rank && inter == 0, "pending idup: size %d rank %d inter %d", size, rank,
          inter);
    E(MPI_Comm_group(dup, &g));
    E(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    E(MPI_Group_compare(g, wg, &result));
    CHECK_INT("Group_compare(group of the pending idup, world group)", MPI_IDENT, result);
    E(MPI_Group_free(&g));
    E(MPI_Group_free(&wg));
    if (mt_rank != 0) {
        int token = mt_rank;
        E(MPI_Ssend(&token, 1, MPI_INT, 0, MT_TAG_SYNC + 1, MPI_COMM_WORLD));
    }
    E(MPI_Wait(&req, MPI_STATUS_IGNORE));

    /* Everything is still there after completion; the handler is the one
     * that errors on dup go to. */
    E(MPI_Comm_get_name(dup, name, &len));
    CHECK_STR("Comm_get_name after completion", "pending idup", name);
    value = NULL;
    E(MPI_Comm_get_attr(dup, keyval, &value, &flag));
    CHECK(flag && value == &payload, "Comm_get_attr after completion: flag %d", flag);
    E(MPI_Comm_get_info(dup, &used));
    flag = 0;
    hint[0] = '\0';
    E(MPI_Info_get(used, "gridmpi_test_hint", (int)sizeof hint - 1, hint, &flag));
    CHECK(flag && strcmp(hint, "pending") == 0, "Comm_get_info after completion: flag %d value \"%s\"", flag,
          hint);
    E(MPI_Info_free(&used));
    E(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
    CHECK_INT("calls of the handler set before completion", 1, pending_handler_calls);
    check_dup(MPI_COMM_WORLD, dup, "idup with settings before completion");
    E(MPI_Comm_free(&dup));
    E(MPI_Comm_free_keyval(&keyval));
    E(MPI_Errhandler_free(&eh));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    test_not_blocking();
    test_overlap();
    test_many_outstanding();
    test_interleaved();
    test_attributes();
#if HAVE_IDUP_WITH_INFO
    test_with_info();
#endif
    test_intercomm();
    test_settings_before_completion();
    if (argc < 2 || strcmp(argv[1], "--no-cycles") != 0)
        test_cycles();
    return mt_finish();
}
