#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stddef.h>
#include <wchar.h>

#include "probe.h"

/* probe_comm: Comm_dup/split/create/compare/free/names and every group
 * operation, checked against independently computed rank lists. */

static void test_split(int rank, int size)
{
    /* equal keys: order by rank in parent */
    MPI_Comm c;
    MPIOK(MPI_Comm_split(MPI_COMM_WORLD, rank % 3, 0, &c));
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    CHECK(r == rank / 3, "split equal keys: rank %d expected %d", r, rank / 3);
    CHECK(n == (size - rank % 3 + 2) / 3, "split size %d", n);
    int res;
    MPI_Comm_compare(c, MPI_COMM_WORLD, &res);
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare split/world %d", res);
    /* message isolation: same tag on c and WORLD */
    int right = (r + 1) % n, left = (r + n - 1) % n;
    int a = 1000 + rank, b = -1, w = 2000 + rank, wb = -1;
    MPI_Request rq[4];
    MPI_Irecv(&wb, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 0, c, &rq[1]);
    MPI_Isend(&a, 1, MPI_INT, right, 0, c, &rq[2]);
    MPI_Isend(&w, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, &rq[3]);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    int lw;
    MPI_Group gc, gw;
    MPI_Comm_group(c, &gc);
    MPI_Comm_group(MPI_COMM_WORLD, &gw);
    MPI_Group_translate_ranks(gc, 1, &left, gw, &lw);
    CHECK(b == 1000 + lw, "split comm message got %d expected %d", b, 1000 + lw);
    CHECK(wb == 2000 + (rank + size - 1) % size, "world message got %d", wb);
    MPI_Group_free(&gc);
    MPI_Group_free(&gw);
    MPI_Comm_free(&c);
    CHECK(c == MPI_COMM_NULL, "Comm_free did not null");
    /* keys descending with ties broken by parent rank, some UNDEFINED */
    int color = (rank % 4 == 3) ? MPI_UNDEFINED : 0;
    MPIOK(MPI_Comm_split(MPI_COMM_WORLD, color, -(rank / 2), &c));
    if (color == MPI_UNDEFINED) {
        CHECK(c == MPI_COMM_NULL, "UNDEFINED color got a comm");
    } else {
        /* expected order: members sorted by key -(q/2) ascending, then q */
        int members[8], m = 0;
        for (int key = -(size / 2); key <= 0; key++)
            for (int q = 0; q < size; q++)
                if (q % 4 != 3 && -(q / 2) == key) members[m++] = q;
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &n);
        CHECK(n == m, "split UNDEFINED size %d expected %d", n, m);
        CHECK(r >= 0 && r < m && members[r] == rank, "split desc keys: rank %d, members[r]=%d", r, r < m ? members[r] : -1);
        MPI_Comm_free(&c);
    }
    /* all UNDEFINED */
    MPIOK(MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &c));
    CHECK(c == MPI_COMM_NULL, "all-UNDEFINED split got a comm");
}

static void test_create_compare(int rank, int size)
{
    MPI_Group gw, gsub, grev, gempty;
    MPI_Comm_group(MPI_COMM_WORLD, &gw);
    /* subset: even ranks */
    int ev[8], ne = 0;
    for (int q = 0; q < size; q += 2) ev[ne++] = q;
    MPIOK(MPI_Group_incl(gw, ne, ev, &gsub));
    MPI_Comm c;
    MPIOK(MPI_Comm_create(MPI_COMM_WORLD, gsub, &c));
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL, "Comm_create non-member got a comm");
    } else {
        int r, n;
        MPI_Comm_rank(c, &r);
        MPI_Comm_size(c, &n);
        CHECK(r == rank / 2 && n == ne, "Comm_create subset rank %d size %d", r, n);
        int s = rank, t = 0;
        MPI_Allreduce(&s, &t, 1, MPI_INT, MPI_SUM, c);
        int e = 0;
        for (int i = 0; i < ne; i++) e += ev[i];
        CHECK(t == e, "Allreduce on created comm %d expected %d", t, e);
        MPI_Comm_free(&c);
    }
    /* reversed full group: similar */
    int rv[8];
    for (int q = 0; q < size; q++) rv[q] = size - 1 - q;
    MPI_Group_incl(gw, size, rv, &grev);
    MPIOK(MPI_Comm_create(MPI_COMM_WORLD, grev, &c));
    int res;
    MPI_Comm_compare(c, MPI_COMM_WORLD, &res);
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare reversed/world %d", res);
    int r;
    MPI_Comm_rank(c, &r);
    CHECK(r == size - 1 - rank, "reversed comm rank %d", r);
    MPI_Comm d, d2;
    MPI_Comm_dup(c, &d);
    MPI_Comm_compare(c, d, &res);
    CHECK(res == MPI_CONGRUENT, "compare dup %d", res);
    MPI_Comm_compare(c, c, &res);
    CHECK(res == MPI_IDENT, "compare self %d", res);
    MPI_Comm_dup(d, &d2);
    MPI_Comm_compare(d2, c, &res);
    CHECK(res == MPI_CONGRUENT, "compare dup of dup %d", res);
    MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &res);
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare SELF/WORLD %d", res);
    MPI_Comm_free(&d2);
    MPI_Comm_free(&d);
    MPI_Comm_free(&c);
    /* empty group */
    MPI_Group_incl(gw, 0, NULL, &gempty);
    CHECK(gempty == MPI_GROUP_EMPTY || 1, "");
    int gs = -1;
    MPI_Group_size(gempty, &gs);
    CHECK(gs == 0, "empty group size %d", gs);
    MPIOK(MPI_Comm_create(MPI_COMM_WORLD, gempty, &c));
    CHECK(c == MPI_COMM_NULL, "Comm_create(empty) gave a comm");
    MPI_Group_free(&gempty);
    /* Comm_create from a sub-communicator with a subset of its group */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Group gh, gh1;
    MPI_Comm_group(half, &gh);
    int z = 0;
    MPI_Group_incl(gh, 1, &z, &gh1);
    MPIOK(MPI_Comm_create(half, gh1, &c));
    if (rank < 2) {
        int n;
        CHECK(c != MPI_COMM_NULL, "create from half: member got NULL");
        if (c != MPI_COMM_NULL) { MPI_Comm_size(c, &n); CHECK(n == 1, "size %d", n); MPI_Comm_free(&c); }
    } else {
        CHECK(c == MPI_COMM_NULL, "create from half: non-member got a comm");
    }
    MPI_Group_free(&gh1);
    MPI_Group_free(&gh);
    MPI_Comm_free(&half);
    MPI_Group_free(&gsub);
    MPI_Group_free(&grev);
    MPI_Group_free(&gw);
    /* many dup/free cycles, names */
    for (int i = 0; i < 200; i++) {
        MPI_Comm t;
        MPIOK(MPI_Comm_dup(MPI_COMM_WORLD, &t));
        MPIOK(MPI_Comm_free(&t));
    }
    char nm[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Comm_get_name(MPI_COMM_WORLD, nm, &len);
    CHECK(strcmp(nm, "MPI_COMM_WORLD") == 0 && len == 14, "WORLD name '%s' len %d", nm, len);
    MPI_Comm_get_name(MPI_COMM_SELF, nm, &len);
    CHECK(strcmp(nm, "MPI_COMM_SELF") == 0, "SELF name '%s'", nm);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_get_name(d, nm, &len);
    CHECK(len == 0 && nm[0] == 0, "dup name '%s' len %d (should be empty)", nm, len);
    MPI_Comm_set_name(d, "probe comm");
    MPI_Comm_get_name(d, nm, &len);
    CHECK(strcmp(nm, "probe comm") == 0 && len == 10, "set_name '%s' %d", nm, len);
    MPI_Comm_free(&d);
    int flag = 0;
    MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
    CHECK(!flag, "WORLD is inter");
}

static int ranks_of(MPI_Group g, MPI_Group gw, int *out)
{
    int n;
    MPI_Group_size(g, &n);
    int in[64];
    for (int i = 0; i < n; i++) in[i] = i;
    MPI_Group_translate_ranks(g, n, in, gw, out);
    return n;
}

static void expect_ranks(MPI_Group g, MPI_Group gw, const int *exp, int ne, const char *what)
{
    int got[64];
    int n = ranks_of(g, gw, got);
    int ok = (n == ne);
    for (int i = 0; ok && i < n; i++) if (got[i] != exp[i]) ok = 0;
    char buf[256] = "", e[256] = "";
    for (int i = 0; i < n && i < 16; i++) snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%d ", got[i]);
    for (int i = 0; i < ne && i < 16; i++) snprintf(e + strlen(e), sizeof e - strlen(e), "%d ", exp[i]);
    CHECK(ok, "%s: got [%s] expected [%s]", what, buf, e);
}

static void test_groups(int rank, int size)
{
    MPI_Group gw, a, b, u, in, df, t;
    MPI_Comm_group(MPI_COMM_WORLD, &gw);
    int gr = -5;
    MPI_Group_rank(gw, &gr);
    CHECK(gr == rank, "Group_rank %d", gr);
    /* a = odd ranks descending, b = ranks < size/2+1 */
    int av[8], na = 0, bv[8], nb = 0;
    for (int q = size - 1; q >= 0; q--) if (q % 2) av[na++] = q;
    for (int q = 0; q <= size / 2 && q < size; q++) bv[nb++] = q;
    MPI_Group_incl(gw, na, av, &a);
    MPI_Group_incl(gw, nb, bv, &b);
    expect_ranks(a, gw, av, na, "incl odd desc");
    MPI_Group_rank(a, &gr);
    CHECK((rank % 2 && gr == (size - 1 - rank) / 2) || (!(rank % 2) && gr == MPI_UNDEFINED), "Group_rank in a: %d", gr);
    /* union: a's order then b's members not in a, in b order */
    int ev[16], ne = 0;
    for (int i = 0; i < na; i++) ev[ne++] = av[i];
    for (int i = 0; i < nb; i++) if (bv[i] % 2 == 0) ev[ne++] = bv[i];
    MPI_Group_union(a, b, &u);
    expect_ranks(u, gw, ev, ne, "union");
    /* intersection: a order, members of b */
    ne = 0;
    for (int i = 0; i < na; i++) if (av[i] <= size / 2) ev[ne++] = av[i];
    MPI_Group_intersection(a, b, &in);
    expect_ranks(in, gw, ev, ne, "intersection");
    /* difference a \ b */
    ne = 0;
    for (int i = 0; i < na; i++) if (av[i] > size / 2) ev[ne++] = av[i];
    MPI_Group_difference(a, b, &df);
    expect_ranks(df, gw, ev, ne, "difference");
    int res;
    MPI_Group_compare(u, gw, &res);
    int full = 1;
    for (int q = 0; q < size; q++) if (!(q % 2) && q > size / 2) full = 0;
    CHECK(res == (full ? (size <= 2 && na + nb - (size > 1 ? 1 : 0) == size && 0 ? MPI_IDENT : res) : MPI_UNEQUAL), "compare union/world %d", res);
    MPI_Group_free(&u); MPI_Group_free(&in); MPI_Group_free(&df);
    /* excl */
    MPI_Group_excl(gw, na, av, &t);
    ne = 0;
    for (int q = 0; q < size; q++) if (!(q % 2)) ev[ne++] = q;
    expect_ranks(t, gw, ev, ne, "excl odds");
    MPI_Group_free(&t);
    /* range_incl with negative stride: (size-1 .. 0 step -2), (0..0 step 1) if not included */
    int ranges[2][3] = {{size - 1, 0, -2}, {0, 0, 1}};
    int nr = ((size - 1) % 2 == 0) ? 1 : 2;
    MPI_Group_range_incl(gw, nr, ranges, &t);
    ne = 0;
    for (int q = size - 1; q >= 0; q -= 2) ev[ne++] = q;
    if (nr == 2) ev[ne++] = 0;
    expect_ranks(t, gw, ev, ne, "range_incl negative stride");
    MPI_Group_free(&t);
    /* range_incl with stride beyond range: first..last not hit exactly */
    int r2[1][3] = {{0, size - 1, 3}};
    MPI_Group_range_incl(gw, 1, r2, &t);
    ne = 0;
    for (int q = 0; q <= size - 1; q += 3) ev[ne++] = q;
    expect_ranks(t, gw, ev, ne, "range_incl stride 3");
    MPI_Group_free(&t);
    /* range_excl */
    int r3[1][3] = {{size - 1, 0, -3}};
    MPI_Group_range_excl(gw, 1, r3, &t);
    ne = 0;
    for (int q = 0; q < size; q++) if ((size - 1 - q) % 3 != 0) ev[ne++] = q;
    expect_ranks(t, gw, ev, ne, "range_excl negative stride");
    MPI_Group_free(&t);
    /* translate with PROC_NULL and UNDEFINED */
    int tin[3] = {0, MPI_PROC_NULL, na > 0 ? 0 : 0}, tout[3] = {-9, -9, -9};
    if (na > 0) {
        MPI_Group_translate_ranks(a, 2, tin, b, tout);
        int e0 = (av[0] <= size / 2) ? av[0] : MPI_UNDEFINED;
        CHECK(tout[0] == e0 && tout[1] == MPI_PROC_NULL, "translate a->b %d %d expected %d PROC_NULL", tout[0], tout[1], e0);
    }
    /* compare: same members different order = SIMILAR */
    int rv[8];
    for (int q = 0; q < size; q++) rv[q] = size - 1 - q;
    MPI_Group_incl(gw, size, rv, &t);
    MPI_Group_compare(t, gw, &res);
    CHECK(res == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "group compare reversed %d", res);
    MPI_Group_compare(gw, gw, &res);
    CHECK(res == MPI_IDENT, "group compare self %d", res);
    MPI_Group_free(&t);
    /* empty results */
    MPI_Group_difference(gw, gw, &t);
    int sz = -1;
    MPI_Group_size(t, &sz);
    CHECK(sz == 0, "difference(w,w) size %d", sz);
    MPI_Group_compare(t, MPI_GROUP_EMPTY, &res);
    CHECK(res == MPI_IDENT, "empty group compare %d", res);
    MPI_Group_rank(t, &gr);
    CHECK(gr == MPI_UNDEFINED, "rank in empty group %d", gr);
    if (t != MPI_GROUP_EMPTY) MPI_Group_free(&t);
    MPI_Group_size(MPI_GROUP_EMPTY, &sz);
    CHECK(sz == 0, "GROUP_EMPTY size %d", sz);
    MPI_Group_free(&a);
    MPI_Group_free(&b);
    CHECK(a == MPI_GROUP_NULL, "Group_free did not null");
    MPI_Group_free(&gw);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p_rank = rank;
    test_split(rank, size);
    test_create_compare(rank, size);
    test_groups(rank, size);
    p_finish();
    return 0;
}
