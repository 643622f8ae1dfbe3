#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stddef.h>
#include <wchar.h>

#include "probe.h"

/* probe_coll: every blocking collective on communicators of size 1..8
 * (including 3, 5, 7 built by split with reversed keys), roots != 0,
 * MPI_IN_PLACE, every predefined op, MINLOC/MAXLOC ties, non-commutative
 * user ops checked for rank order, v-variants with zero counts, resized
 * types in collectives. */

#define PMOD 1000003LL
typedef long long ll;

static void matmul(const ll *a, const ll *b, ll *c) /* c = a*b */
{
    ll t[4];
    t[0] = (a[0] * b[0] + a[1] * b[2]) % PMOD;
    t[1] = (a[0] * b[1] + a[1] * b[3]) % PMOD;
    t[2] = (a[2] * b[0] + a[3] * b[2]) % PMOD;
    t[3] = (a[2] * b[1] + a[3] * b[3]) % PMOD;
    memcpy(c, t, sizeof t);
}

static void mat_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    ll *a = in, *b = inout;
    for (int k = 0; k < *len; k++) matmul(a + 4 * k, b + 4 * k, b + 4 * k); /* inout = in * inout */
}

static void mat_of(int r, int j, ll *m)
{
    m[0] = r + 2 + j; m[1] = 1 + j; m[2] = j; m[3] = r + 1;
}

struct pair_di { double d; int i; };
static void absmax_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    struct pair_di *a = in, *b = inout;
    for (int k = 0; k < *len; k++) {
        double x = a[k].d < 0 ? -a[k].d : a[k].d, y = b[k].d < 0 ? -b[k].d : b[k].d;
        if (x > y) b[k] = a[k];
        b[k].i += 0; /* keep */
    }
}

static MPI_Op op_mat, op_absmax;
static MPI_Datatype t_mat, t_pdi;
static const char *cname;

static int val(int r, int i) { return r * 1000 + i; }

static void run_suite(MPI_Comm comm, int wrank)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    (void)wrank;
    int roots[3] = {n - 1, n / 2, 0};
    MPIOK(MPI_Barrier(comm));
    for (int ri = 0; ri < 3; ri++) {
        int root = roots[ri];
        if (ri == 1 && root == roots[0]) continue;
        if (ri == 2 && (root == roots[0] || root == roots[1])) continue;
        /* ---- Bcast ---- */
        {
            enum { B = 70001 };
            int *b = malloc(B * sizeof(int));
            for (int i = 0; i < B; i++) b[i] = (r == root) ? val(root, i) : -1;
            MPIOK(MPI_Bcast(b, B, MPI_INT, root, comm));
            int bad = 0;
            for (int i = 0; i < B; i++) if (b[i] != val(root, i)) bad++;
            CHECK(!bad, "%s n=%d root=%d Bcast: %d wrong", cname, n, root, bad);
            /* vector at root, contiguous elsewhere */
            MPI_Datatype v;
            MPI_Type_vector(10, 1, 2, MPI_INT, &v);
            MPI_Type_commit(&v);
            for (int i = 0; i < 20; i++) b[i] = (r == root) ? i : -1;
            if (r == root) MPIOK(MPI_Bcast(b, 1, v, root, comm));
            else MPIOK(MPI_Bcast(b, 10, MPI_INT, root, comm));
            bad = 0;
            if (r != root) for (int i = 0; i < 10; i++) if (b[i] != 2 * i) bad = 1;
            CHECK(!bad, "%s n=%d root=%d Bcast vector->contig", cname, n, root);
            MPI_Type_free(&v);
            free(b);
        }
        /* ---- Reduce: every predefined op on int ---- */
        {
            MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
            const char *on[] = {"SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR"};
            for (int o = 0; o < 10; o++) {
                int in[4], out[4] = {-7, -7, -7, -7}, exp[4];
                for (int i = 0; i < 4; i++) {
                    int x = (o == 1) ? ((r + i) % 3 == 0 ? 2 : 1) : (o >= 4 && o <= 6) ? ((r + i) % 2 == 0 || i == 3) * (i != 2) : (r * 37 + i * 11) % 64 + i;
                    in[i] = x;
                }
                for (int i = 0; i < 4; i++) {
                    int acc = 0;
                    for (int q = 0; q < n; q++) {
                        int x = (o == 1) ? ((q + i) % 3 == 0 ? 2 : 1) : (o >= 4 && o <= 6) ? ((q + i) % 2 == 0 || i == 3) * (i != 2) : (q * 37 + i * 11) % 64 + i;
                        if (q == 0) { acc = (o >= 4 && o <= 6) ? (x != 0) : x; continue; }
                        switch (o) {
                        case 0: acc += x; break;
                        case 1: acc *= x; break;
                        case 2: acc = x > acc ? x : acc; break;
                        case 3: acc = x < acc ? x : acc; break;
                        case 4: acc = acc && x; break;
                        case 5: acc = acc || x; break;
                        case 6: acc = (!acc) != (!x); break;
                        case 7: acc &= x; break;
                        case 8: acc |= x; break;
                        case 9: acc ^= x; break;
                        }
                    }
                    exp[i] = acc;
                }
                MPIOK(MPI_Reduce(in, out, 4, MPI_INT, ops[o], root, comm));
                if (r == root) {
                    int bad = 0;
                    for (int i = 0; i < 4; i++) {
                        if (o >= 4 && o <= 6) { if ((out[i] != 0) != (exp[i] != 0)) bad = 1; }
                        else if (out[i] != exp[i]) bad = 1;
                    }
                    CHECK(!bad, "%s n=%d root=%d Reduce %s: got %d %d %d %d expected %d %d %d %d", cname, n, root, on[o], out[0], out[1], out[2], out[3], exp[0], exp[1], exp[2], exp[3]);
                } else {
                    CHECK(out[0] == -7, "%s Reduce %s wrote recvbuf at non-root", cname, on[o]);
                }
                /* IN_PLACE at root */
                if (r == root) {
                    memcpy(out, in, sizeof in);
                    MPIOK(MPI_Reduce(MPI_IN_PLACE, out, 4, MPI_INT, ops[o], root, comm));
                    int bad = 0;
                    for (int i = 0; i < 4; i++) {
                        if (o >= 4 && o <= 6) { if ((out[i] != 0) != (exp[i] != 0)) bad = 1; }
                        else if (out[i] != exp[i]) bad = 1;
                    }
                    CHECK(!bad, "%s n=%d root=%d Reduce IN_PLACE %s", cname, n, root, on[o]);
                } else {
                    MPIOK(MPI_Reduce(in, NULL, 4, MPI_INT, ops[o], root, comm));
                }
            }
            /* double/float/unsigned char/long long sums */
            double dd = r + 0.5, ds = 0;
            MPIOK(MPI_Reduce(&dd, &ds, 1, MPI_DOUBLE, MPI_SUM, root, comm));
            if (r == root) CHECK(ds == n * (n - 1) / 2.0 + 0.5 * n, "%s Reduce double sum %g", cname, ds);
            unsigned char uc = (unsigned char)(1u << (r % 8)), ucr = 0;
            MPIOK(MPI_Reduce(&uc, &ucr, 1, MPI_UNSIGNED_CHAR, MPI_BOR, root, comm));
            unsigned char ucexp = 0;
            for (int q = 0; q < n; q++) ucexp |= (unsigned char)(1u << (q % 8));
            if (r == root) CHECK(ucr == ucexp, "%s Reduce uchar BOR %u expected %u", cname, ucr, ucexp);
            ll lv = (ll)r << 40, lr = 0;
            MPIOK(MPI_Reduce(&lv, &lr, 1, MPI_LONG_LONG, MPI_SUM, root, comm));
            if (r == root) CHECK(lr == ((ll)n * (n - 1) / 2) << 40, "%s Reduce long long sum", cname);
            _Bool bv = (r % 2) == 0, br = 0;
            MPIOK(MPI_Reduce(&bv, &br, 1, MPI_C_BOOL, MPI_LAND, root, comm));
            if (r == root) CHECK(br == (n == 1), "%s Reduce C_BOOL LAND %d", cname, (int)br);
        }
        /* ---- MINLOC / MAXLOC with ties ---- */
        {
            int in2[4], out2[4];
            int mv = (r % 3 == 1) ? 5 : 10 + r;
            int xv = (r >= n - 2) ? 100 : r;
            in2[0] = mv; in2[1] = r; in2[2] = 7; in2[3] = r; /* all tie on second element */
            int emin = 1 << 30, eminl = -1, emax = -1, emaxl = -1;
            for (int q = 0; q < n; q++) {
                int m = (q % 3 == 1) ? 5 : 10 + q, x = (q >= n - 2) ? 100 : q;
                if (m < emin) { emin = m; eminl = q; }
                if (x > emax) { emax = x; emaxl = q; }
            }
            MPIOK(MPI_Reduce(in2, out2, 2, MPI_2INT, MPI_MINLOC, root, comm));
            if (r == root) CHECK(out2[0] == emin && out2[1] == eminl && out2[2] == 7 && out2[3] == 0, "%s n=%d MINLOC 2INT got (%d,%d)(%d,%d) expected (%d,%d)(7,0)", cname, n, out2[0], out2[1], out2[2], out2[3], emin, eminl);
            in2[0] = xv;
            MPIOK(MPI_Allreduce(in2, out2, 2, MPI_2INT, MPI_MAXLOC, comm));
            CHECK(out2[0] == emax && out2[1] == emaxl && out2[2] == 7 && out2[3] == 0, "%s n=%d MAXLOC 2INT got (%d,%d)(%d,%d) expected (%d,%d)(7,0)", cname, n, out2[0], out2[1], out2[2], out2[3], emax, emaxl);
            struct pair_di pd = {(double)mv, r}, pr = {0, -1};
            MPIOK(MPI_Allreduce(&pd, &pr, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm));
            CHECK(pr.d == emin && pr.i == eminl, "%s DOUBLE_INT MINLOC (%g,%d)", cname, pr.d, pr.i);
            struct { float f; int i; } pf = {(float)xv, r}, pfr = {0, -1};
            MPIOK(MPI_Allreduce(&pf, &pfr, 1, MPI_FLOAT_INT, MPI_MAXLOC, comm));
            CHECK(pfr.f == emax && pfr.i == emaxl, "%s FLOAT_INT MAXLOC (%g,%d)", cname, pfr.f, pfr.i);
            struct { long l; int i; } pl = {-(long)mv, r}, plr = {0, -1};
            MPIOK(MPI_Allreduce(&pl, &plr, 1, MPI_LONG_INT, MPI_MAXLOC, comm));
            CHECK(plr.l == -emin && plr.i == eminl, "%s LONG_INT MAXLOC (%ld,%d)", cname, plr.l, plr.i);
            struct { short s; int i; } ps = {(short)mv, r}, psr = {0, -1};
            MPIOK(MPI_Allreduce(&ps, &psr, 1, MPI_SHORT_INT, MPI_MINLOC, comm));
            CHECK(psr.s == emin && psr.i == eminl, "%s SHORT_INT MINLOC (%d,%d)", cname, psr.s, psr.i);
            struct { long double v; int i; } pld = {(long double)xv, r}, pldr = {0, -1};
            MPIOK(MPI_Allreduce(&pld, &pldr, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, comm));
            CHECK(pldr.v == emax && pldr.i == emaxl, "%s LONG_DOUBLE_INT MAXLOC (%Lg,%d)", cname, pldr.v, pldr.i);
        }
        /* ---- non-commutative user op: Reduce to root, Allreduce, Scan, Exscan ---- */
        {
            enum { J = 3 };
            ll in[4 * J], out[4 * J], exp[4 * J], pre[4 * J], expre[4 * J];
            for (int j = 0; j < J; j++) mat_of(r, j, in + 4 * j);
            for (int j = 0; j < J; j++) {
                mat_of(0, j, exp + 4 * j);
                if (r == 0) memcpy(pre + 4 * j, exp + 4 * j, 4 * sizeof(ll));
                for (int q = 1; q < n; q++) {
                    ll m[4];
                    mat_of(q, j, m);
                    if (q == r) memcpy(expre + 4 * j, exp + 4 * j, 4 * sizeof(ll)); /* product of 0..r-1 */
                    matmul(exp + 4 * j, m, exp + 4 * j);
                    if (q == r) memcpy(pre + 4 * j, exp + 4 * j, 4 * sizeof(ll));
                }
            }
            memset(out, 0, sizeof out);
            MPIOK(MPI_Reduce(in, out, J, t_mat, op_mat, root, comm));
            if (r == root) CHECK(memcmp(out, exp, sizeof exp) == 0, "%s n=%d root=%d Reduce non-commutative: wrong order (got %lld %lld %lld %lld expected %lld %lld %lld %lld)", cname, n, root, out[0], out[1], out[2], out[3], exp[0], exp[1], exp[2], exp[3]);
            if (ri == 0) {
                memcpy(out, in, sizeof in);
                MPIOK(MPI_Allreduce(MPI_IN_PLACE, out, J, t_mat, op_mat, comm));
                CHECK(memcmp(out, exp, sizeof exp) == 0, "%s n=%d Allreduce IN_PLACE non-commutative wrong", cname, n);
                memset(out, 0, sizeof out);
                MPIOK(MPI_Scan(in, out, J, t_mat, op_mat, comm));
                CHECK(memcmp(out, pre, sizeof pre) == 0, "%s n=%d Scan non-commutative wrong at rank %d", cname, n, r);
                memset(out, 0, sizeof out);
                MPIOK(MPI_Exscan(in, out, J, t_mat, op_mat, comm));
                if (r > 0) CHECK(memcmp(out, expre, sizeof expre) == 0, "%s n=%d Exscan non-commutative wrong at rank %d", cname, n, r);
                memcpy(out, in, sizeof in);
                MPIOK(MPI_Scan(MPI_IN_PLACE, out, J, t_mat, op_mat, comm));
                CHECK(memcmp(out, pre, sizeof pre) == 0, "%s n=%d Scan IN_PLACE wrong at rank %d", cname, n, r);
                memcpy(out, in, sizeof in);
                MPIOK(MPI_Exscan(MPI_IN_PLACE, out, J, t_mat, op_mat, comm));
                if (r > 0) CHECK(memcmp(out, expre, sizeof expre) == 0, "%s n=%d Exscan IN_PLACE wrong at rank %d", cname, n, r);
                /* integer Scan/Exscan SUM */
                int s = r + 1, so = -1, eo = -1;
                MPIOK(MPI_Scan(&s, &so, 1, MPI_INT, MPI_SUM, comm));
                CHECK(so == (r + 1) * (r + 2) / 2, "%s Scan SUM %d", cname, so);
                MPIOK(MPI_Exscan(&s, &eo, 1, MPI_INT, MPI_SUM, comm));
                if (r > 0) CHECK(eo == r * (r + 1) / 2, "%s Exscan SUM %d", cname, eo);
                /* commutative user op on a pair type */
                struct pair_di pd = {(r % 2 ? -1.0 : 1.0) * (r == n / 2 ? 100.0 : r), r}, pr;
                MPIOK(MPI_Allreduce(&pd, &pr, 1, t_pdi, op_absmax, comm));
                CHECK((pr.d == 100.0 || pr.d == -100.0) && pr.i == n / 2, "%s user commutative op (%g,%d)", cname, pr.d, pr.i);
            }
        }
        /* ---- Gather / Gatherv / Scatter / Scatterv ---- */
        {
            int sb[3] = {val(r, 0), val(r, 1), val(r, 2)};
            int *rb = malloc(sizeof(int) * 3 * n + 64);
            for (int i = 0; i < 3 * n; i++) rb[i] = -1;
            MPIOK(MPI_Gather(sb, 3, MPI_INT, rb, 3, MPI_INT, root, comm));
            if (r == root) {
                int bad = 0;
                for (int q = 0; q < n; q++) for (int i = 0; i < 3; i++) if (rb[3 * q + i] != val(q, i)) bad = 1;
                CHECK(!bad, "%s n=%d root=%d Gather", cname, n, root);
                for (int i = 0; i < 3 * n; i++) rb[i] = (i / 3 == root) ? val(root, i % 3) : -1;
                MPIOK(MPI_Gather(MPI_IN_PLACE, 3, MPI_INT, rb, 3, MPI_INT, root, comm));
                bad = 0;
                for (int q = 0; q < n; q++) for (int i = 0; i < 3; i++) if (rb[3 * q + i] != val(q, i)) bad = 1;
                CHECK(!bad, "%s n=%d root=%d Gather IN_PLACE", cname, n, root);
            } else {
                MPIOK(MPI_Gather(sb, 3, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, comm));
            }
            /* Gather into a resized type: each contribution lands every 4 ints */
            MPI_Datatype c3, c3r;
            MPI_Type_contiguous(3, MPI_INT, &c3);
            MPI_Type_create_resized(c3, 0, 4 * sizeof(int), &c3r);
            MPI_Type_commit(&c3r);
            int *rb4 = malloc(sizeof(int) * 4 * n);
            for (int i = 0; i < 4 * n; i++) rb4[i] = -1;
            MPIOK(MPI_Gather(sb, 3, MPI_INT, rb4, 1, c3r, root, comm));
            if (r == root) {
                int bad = 0;
                for (int q = 0; q < n; q++) {
                    for (int i = 0; i < 3; i++) if (rb4[4 * q + i] != val(q, i)) bad = 1;
                    if (rb4[4 * q + 3] != -1) bad = 1;
                }
                CHECK(!bad, "%s n=%d root=%d Gather into resized type", cname, n, root);
            }
            /* Gatherv: rank q sends q%3 ints (zero allowed), placed in reverse order with gaps */
            int *cnts = malloc(sizeof(int) * n), *dsp = malloc(sizeof(int) * n);
            int tot = 0;
            for (int q = n - 1; q >= 0; q--) { cnts[q] = q % 3; dsp[q] = tot; tot += cnts[q] + 1; }
            int *gv = malloc(sizeof(int) * (tot + 1));
            for (int i = 0; i < tot; i++) gv[i] = -1;
            MPIOK(MPI_Gatherv(sb, r % 3, MPI_INT, gv, cnts, dsp, MPI_INT, root, comm));
            if (r == root) {
                int bad = 0;
                for (int q = 0; q < n; q++) {
                    for (int i = 0; i < cnts[q]; i++) if (gv[dsp[q] + i] != val(q, i)) bad = 1;
                    if (gv[dsp[q] + cnts[q]] != -1) bad = 1;
                }
                CHECK(!bad, "%s n=%d root=%d Gatherv zero counts/reverse displs", cname, n, root);
            }
            /* Scatter (+IN_PLACE) */
            int *src = malloc(sizeof(int) * 3 * n);
            for (int q = 0; q < n; q++) for (int i = 0; i < 3; i++) src[3 * q + i] = val(q, i) + 7;
            int rs[3] = {-1, -1, -1};
            MPIOK(MPI_Scatter(src, 3, MPI_INT, rs, 3, MPI_INT, root, comm));
            CHECK(rs[0] == val(r, 0) + 7 && rs[2] == val(r, 2) + 7, "%s n=%d root=%d Scatter got %d %d", cname, n, root, rs[0], rs[2]);
            if (r == root) {
                MPIOK(MPI_Scatter(src, 3, MPI_INT, MPI_IN_PLACE, 3, MPI_INT, root, comm));
                CHECK(src[3 * root] == val(root, 0) + 7, "%s Scatter IN_PLACE modified root data", cname);
            } else {
                rs[0] = -1;
                MPIOK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, rs, 3, MPI_INT, root, comm));
                CHECK(rs[0] == val(r, 0) + 7, "%s Scatter (2) got %d", cname, rs[0]);
            }
            /* Scatterv with zero counts */
            for (int i = 0; i < tot; i++) gv[i] = 5000 + i;
            rs[0] = rs[1] = rs[2] = -1;
            MPIOK(MPI_Scatterv(gv, cnts, dsp, MPI_INT, rs, r % 3, MPI_INT, root, comm));
            int bad = 0;
            for (int i = 0; i < 3; i++) if (rs[i] != (i < r % 3 ? 5000 + dsp[r] + i : -1)) bad = 1;
            CHECK(!bad, "%s n=%d root=%d Scatterv", cname, n, root);
            MPI_Type_free(&c3);
            MPI_Type_free(&c3r);
            free(rb); free(rb4); free(cnts); free(dsp); free(gv); free(src);
        }
    }
    /* ---- root-less collectives ---- */
    {
        int sb[2] = {val(r, 0), val(r, 1)};
        int *rb = malloc(sizeof(int) * 2 * n);
        MPIOK(MPI_Allgather(sb, 2, MPI_INT, rb, 2, MPI_INT, comm));
        int bad = 0;
        for (int q = 0; q < n; q++) if (rb[2 * q] != val(q, 0) || rb[2 * q + 1] != val(q, 1)) bad = 1;
        CHECK(!bad, "%s n=%d Allgather", cname, n);
        for (int i = 0; i < 2 * n; i++) rb[i] = (i / 2 == r) ? val(r, i % 2) : -1;
        MPIOK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, 2, MPI_INT, comm));
        bad = 0;
        for (int q = 0; q < n; q++) if (rb[2 * q] != val(q, 0) || rb[2 * q + 1] != val(q, 1)) bad = 1;
        CHECK(!bad, "%s n=%d Allgather IN_PLACE", cname, n);
        /* Allgatherv with zero counts, IN_PLACE */
        int *cnts = malloc(sizeof(int) * n), *dsp = malloc(sizeof(int) * n), tot = 0;
        for (int q = 0; q < n; q++) { cnts[q] = (q + 1) % 3; dsp[q] = tot; tot += cnts[q]; }
        int *av = malloc(sizeof(int) * (tot + 1));
        for (int i = 0; i < tot; i++) av[i] = -1;
        MPIOK(MPI_Allgatherv(sb, cnts[r], MPI_INT, av, cnts, dsp, MPI_INT, comm));
        bad = 0;
        for (int q = 0; q < n; q++) for (int i = 0; i < cnts[q]; i++) if (av[dsp[q] + i] != val(q, i)) bad = 1;
        CHECK(!bad, "%s n=%d Allgatherv", cname, n);
        for (int i = 0; i < tot; i++) av[i] = -1;
        for (int i = 0; i < cnts[r]; i++) av[dsp[r] + i] = val(r, i);
        MPIOK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, av, cnts, dsp, MPI_INT, comm));
        bad = 0;
        for (int q = 0; q < n; q++) for (int i = 0; i < cnts[q]; i++) if (av[dsp[q] + i] != val(q, i)) bad = 1;
        CHECK(!bad, "%s n=%d Allgatherv IN_PLACE", cname, n);
        /* Alltoall, IN_PLACE */
        int *a2 = malloc(sizeof(int) * 2 * n), *b2 = malloc(sizeof(int) * 2 * n);
        for (int q = 0; q < n; q++) { a2[2 * q] = r * 100 + q; a2[2 * q + 1] = -(r * 100 + q); }
        MPIOK(MPI_Alltoall(a2, 2, MPI_INT, b2, 2, MPI_INT, comm));
        bad = 0;
        for (int q = 0; q < n; q++) if (b2[2 * q] != q * 100 + r || b2[2 * q + 1] != -(q * 100 + r)) bad = 1;
        CHECK(!bad, "%s n=%d Alltoall", cname, n);
        MPIOK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a2, 2, MPI_INT, comm));
        bad = 0;
        for (int q = 0; q < n; q++) if (a2[2 * q] != q * 100 + r || a2[2 * q + 1] != -(q * 100 + r)) bad = 1;
        CHECK(!bad, "%s n=%d Alltoall IN_PLACE", cname, n);
        /* Alltoallv: r sends (r+q)%3 ints to q (zero counts), displacements reversed */
        int *sc = malloc(sizeof(int) * n), *sd = malloc(sizeof(int) * n), *rc = malloc(sizeof(int) * n), *rd = malloc(sizeof(int) * n);
        int st = 0, rt = 0;
        for (int q = n - 1; q >= 0; q--) { sc[q] = (r + q) % 3; sd[q] = st; st += sc[q]; }
        for (int q = 0; q < n; q++) { rc[q] = (r + q) % 3; rd[q] = rt; rt += rc[q] + 1; }
        int *sv = malloc(sizeof(int) * (st + 1)), *rv = malloc(sizeof(int) * (rt + 1));
        for (int q = 0; q < n; q++) for (int i = 0; i < sc[q]; i++) sv[sd[q] + i] = r * 10000 + q * 10 + i;
        for (int i = 0; i < rt; i++) rv[i] = -1;
        MPIOK(MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, comm));
        bad = 0;
        for (int q = 0; q < n; q++) {
            for (int i = 0; i < rc[q]; i++) if (rv[rd[q] + i] != q * 10000 + r * 10 + i) bad = 1;
            if (rv[rd[q] + rc[q]] != -1) bad = 1;
        }
        CHECK(!bad, "%s n=%d Alltoallv zero counts", cname, n);
        /* Alltoallw: ints to even peers, doubles to odd peers, byte displacements */
        int *wc = malloc(sizeof(int) * n), *wd = malloc(sizeof(int) * n);
        MPI_Datatype *wt = malloc(sizeof(MPI_Datatype) * n);
        double *ws = malloc(sizeof(double) * n), *wr = malloc(sizeof(double) * n);
        for (int q = 0; q < n; q++) {
            wc[q] = 1; wd[q] = q * (int)sizeof(double);
            wt[q] = (q % 2 == 0 && r % 2 == 0) ? MPI_INT : MPI_DOUBLE;
            if (wt[q] == MPI_INT) *(int *)&ws[q] = r * 10 + q; else ws[q] = r * 10 + q + 0.5;
        }
        /* type must match between pairs: r->q uses INT iff both even: symmetric */
        MPIOK(MPI_Alltoallw(ws, wc, wd, wt, wr, wc, wd, wt, comm));
        bad = 0;
        for (int q = 0; q < n; q++) {
            if (wt[q] == MPI_INT) { if (*(int *)&wr[q] != q * 10 + r) bad = 1; }
            else if (wr[q] != q * 10 + r + 0.5) bad = 1;
        }
        CHECK(!bad, "%s n=%d Alltoallw", cname, n);
        /* Reduce_scatter with uneven counts (including zero), and IN_PLACE */
        int *rcn = malloc(sizeof(int) * n), rtot = 0;
        for (int q = 0; q < n; q++) { rcn[q] = (q * 2 + 1) % 4; rtot += rcn[q]; }
        int *rsin = malloc(sizeof(int) * (rtot + 1)), rsout[4] = {-1, -1, -1, -1};
        for (int i = 0; i < rtot; i++) rsin[i] = r + i;
        MPIOK(MPI_Reduce_scatter(rsin, rsout, rcn, MPI_INT, MPI_SUM, comm));
        int off = 0;
        for (int q = 0; q < r; q++) off += rcn[q];
        bad = 0;
        for (int i = 0; i < rcn[r]; i++) if (rsout[i] != n * (n - 1) / 2 + n * (off + i)) bad = 1;
        if (rcn[r] < 4 && rsout[rcn[r]] != -1) bad = 1;
        CHECK(!bad, "%s n=%d Reduce_scatter uneven", cname, n);
        MPIOK(MPI_Reduce_scatter(MPI_IN_PLACE, rsin, rcn, MPI_INT, MPI_SUM, comm));
        bad = 0;
        for (int i = 0; i < rcn[r]; i++) if (rsin[i] != n * (n - 1) / 2 + n * (off + i)) bad = 1;
        CHECK(!bad, "%s n=%d Reduce_scatter IN_PLACE", cname, n);
        /* Reduce_scatter_block, non-commutative op */
        ll *mb = malloc(sizeof(ll) * 4 * n), mo[4];
        for (int q = 0; q < n; q++) mat_of(r, q, mb + 4 * q);
        MPIOK(MPI_Reduce_scatter_block(mb, mo, 1, t_mat, op_mat, comm));
        ll e[4];
        mat_of(0, r, e);
        for (int q = 1; q < n; q++) { ll m[4]; mat_of(q, r, m); matmul(e, m, e); }
        CHECK(memcmp(e, mo, sizeof e) == 0, "%s n=%d Reduce_scatter_block non-commutative wrong order", cname, n);
        for (int q = 0; q < n; q++) mat_of(r, q, mb + 4 * q);
        MPIOK(MPI_Reduce_scatter_block(MPI_IN_PLACE, mb, 1, t_mat, op_mat, comm));
        CHECK(memcmp(e, mb, sizeof e) == 0, "%s n=%d Reduce_scatter_block IN_PLACE wrong", cname, n);
        /* large Allreduce (crosses any segmenting) */
        int L = 100003;
        int *la = malloc(sizeof(int) * L), *lb = malloc(sizeof(int) * L);
        for (int i = 0; i < L; i++) la[i] = (i % 5) * (r + 1);
        MPIOK(MPI_Allreduce(la, lb, L, MPI_INT, MPI_SUM, comm));
        bad = 0;
        for (int i = 0; i < L; i++) if (lb[i] != (i % 5) * n * (n + 1) / 2) { bad = 1; break; }
        CHECK(!bad, "%s n=%d large Allreduce", cname, n);
        free(la); free(lb);
        free(rb); free(cnts); free(dsp); free(av); free(a2); free(b2); free(sc); free(sd); free(rc); free(rd); free(sv); free(rv);
        free(wc); free(wd); free(wt); free(ws); free(wr); free(rcn); free(rsin); free(mb);
    }
    MPIOK(MPI_Barrier(comm));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p_rank = rank;
    MPI_Type_contiguous(4, MPI_LONG_LONG, &t_mat);
    MPI_Type_commit(&t_mat);
    MPI_Op_create(mat_op, 0, &op_mat);
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {offsetof(struct pair_di, d), offsetof(struct pair_di, i)};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT}, tmp;
    MPI_Type_create_struct(2, bl, d, ty, &tmp);
    MPI_Type_create_resized(tmp, 0, sizeof(struct pair_di), &t_pdi);
    MPI_Type_commit(&t_pdi);
    MPI_Type_free(&tmp);
    MPI_Op_create(absmax_op, 1, &op_absmax);
    int commute = -1;
    MPI_Op_commutative(op_mat, &commute);
    CHECK(commute == 0, "Op_commutative of non-commutative op: %d", commute);
    MPI_Op_commutative(MPI_SUM, &commute);
    CHECK(commute == 1, "Op_commutative(MPI_SUM): %d", commute);

    cname = "WORLD";
    run_suite(MPI_COMM_WORLD, rank);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    cname = "SELF";
    run_suite(MPI_COMM_SELF, rank);
    int ks[3] = {3, 5, 7};
    for (int k = 0; k < 3; k++) {
        if (ks[k] > size) continue;
        MPI_Comm sub;
        /* reversed key order: sub rank = ks-1-world rank */
        MPIOK(MPI_Comm_split(dup, rank < ks[k] ? 1 : MPI_UNDEFINED, ks[k] - rank, &sub));
        if (rank < ks[k]) {
            int sr;
            MPI_Comm_rank(sub, &sr);
            CHECK(sr == ks[k] - 1 - rank, "split reversed key: rank %d expected %d", sr, ks[k] - 1 - rank);
            static char nm[32];
            snprintf(nm, sizeof nm, "SPLIT%d", ks[k]);
            cname = nm;
            run_suite(sub, rank);
            MPI_Comm_free(&sub);
        } else {
            CHECK(sub == MPI_COMM_NULL, "split MPI_UNDEFINED did not give COMM_NULL");
        }
    }
    /* odd/even halves run concurrently */
    MPI_Comm half;
    MPI_Comm_split(dup, rank % 2, -rank, &half);
    cname = "HALF";
    run_suite(half, rank);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    MPI_Op_free(&op_mat);
    MPI_Op_free(&op_absmax);
    CHECK(op_mat == MPI_OP_NULL, "Op_free did not set MPI_OP_NULL");
    MPI_Type_free(&t_mat);
    MPI_Type_free(&t_pdi);
    p_finish();
    return 0;
}
