/* Neighbourhood collectives (MPI-3.1 7.6, 7.7): MPI_Neighbor_allgather,
 * _allgatherv, _alltoall, _alltoallv, _alltoallw and their MPI_Ineighbor_
 * forms, on a periodic and a non-periodic 2-D torus, a 1-D ring on a dup of
 * a Cartesian communicator, a graph, and distributed graphs (adjacent, with
 * self loops and a process without edges; general), with derived datatypes
 * (strided vectors against contiguous ints), uneven counts and permuted
 * displacements; two non-blocking ones in flight at once.
 *
 * Block order: Cartesian -- for each dimension the -1 then the +1 shift
 * neighbour, MPI_PROC_NULL slots untouched; the block a process sends in one
 * direction arrives in the receiver's block of the opposite direction (also
 * when both directions reach the same process: a periodic dimension of
 * extent 1 or 2, the MPI-4.0 erratum to MPI-3.1).  Graphs: the k-th edge from
 * q to r meets the k-th edge to r from q. */
#include "mpitest.h"

#define MAXN 64
#define UNTOUCHED (-1)

typedef struct {
    const char *name;
    MPI_Comm comm;
    int kind;      /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int by_pair;   /* the sender's block order is not known: check by (sender, receiver) */
    int rank, indeg, outdeg;
    int src[MAXN], dst[MAXN];
} Hood;

/* ---- the test distributed graph: q -> q+1, q, q+3 (mod p), without the last
 * rank (p > 2), which has no edge at all.  Duplicates kept when p is small. */
static int dg_from(int q, int p, int *dst)
{
    int k = 0, j, cand[3];
    if (p > 2 && q == p - 1)
        return 0;
    cand[0] = (q + 1) % p, cand[1] = q, cand[2] = (q + 3) % p;
    for (j = 0; j < 3; ++j)
        if (!(p > 2 && cand[j] == p - 1))
            dst[k++] = cand[j];
    return k;
}

static int dg_to(int r, int p, int *src)
{
    int q, j, n, k = 0, d[3];
    for (q = 0; q < p; ++q) {
        n = dg_from(q, p, d);
        for (j = 0; j < n; ++j)
            if (d[j] == r)
                src[k++] = q;
    }
    return k;
}

/* Neighbours of any rank q of h's communicator, in the standard's order. */
static int destinations_of(const Hood *h, int q, int *out)
{
    int n = 0, d;
    if (h->kind == MPI_CART) {
        int ndims, dims[8], periods[8], coords[8], c[8], k;
        E(MPI_Cartdim_get(h->comm, &ndims));
        E(MPI_Cart_get(h->comm, ndims, dims, periods, c));
        E(MPI_Cart_coords(h->comm, q, ndims, coords));
        for (d = 0; d < ndims; ++d) {
            for (k = -1; k <= 1; k += 2) {
                int x = coords[d] + k;
                memcpy(c, coords, sizeof c);
                if (periods[d])
                    x = (x + dims[d]) % dims[d];
                if (x < 0 || x >= dims[d]) {
                    out[n++] = MPI_PROC_NULL;
                    continue;
                }
                c[d] = x;
                E(MPI_Cart_rank(h->comm, c, &out[n++]));
            }
        }
        return n;
    }
    if (h->kind == MPI_GRAPH) {
        E(MPI_Graph_neighbors_count(h->comm, q, &n));
        E(MPI_Graph_neighbors(h->comm, q, MAXN, out));
        return n;
    }
    return dg_from(q, mt_size, out);
}

static void fill_hood(Hood *h)
{
    int w, ignored[MAXN]; /* the graphs are unweighted: weights are not written */
    E(MPI_Comm_rank(h->comm, &h->rank));
    if (h->kind == MPI_DIST_GRAPH) {
        E(MPI_Dist_graph_neighbors_count(h->comm, &h->indeg, &h->outdeg, &w));
        /* MPICH 4.0.2 crashes here for a process without edges (the test
         * graphs have no process with edges one way only). */
        if (!(MT_IS_MPICH && (h->indeg == 0 || h->outdeg == 0)))
            E(MPI_Dist_graph_neighbors(h->comm, MAXN, h->src, ignored, MAXN, h->dst, ignored));
    } else {
        h->outdeg = h->indeg = destinations_of(h, h->rank, h->dst);
        memcpy(h->src, h->dst, sizeof h->src);
    }
}

/* Index, in q's destination list, of the block that lands in my slot i. */
static int sender_block(const Hood *h, int i)
{
    int q = h->src[i], dq[MAXN], n, k = 0, j, seen = 0;
    if (h->kind == MPI_CART)
        return i ^ 1;
    if (h->by_pair)
        return 0;
    for (j = 0; j < i; ++j)
        if (h->src[j] == q)
            ++k;
    n = destinations_of(h, q, dq);
    for (j = 0; j < n; ++j)
        if (dq[j] == h->rank && seen++ == k)
            return j;
    MT_FAIL("%s: slot %d: no matching edge from %d", h->name, i, q);
    return -1;
}

/* Element e of the block that q sends as its block j to r. */
static int value(const Hood *h, int q, int j, int r, int e)
{
    return q * 100000 + (h->by_pair ? 0 : j) * 1000 + r * 10 + e;
}

/* Both sides of a pair agree on the number of elements of its blocks. */
static int pair_count(int q, int r) { return 1 + (q + 2 * r) % 3; }

static void wait_or_not(int nonblocking, MPI_Request *req)
{
    if (nonblocking)
        E(MPI_Wait(req, MPI_STATUS_IGNORE));
}

/* Slot i of a Cartesian neighbourhood whose two directions reach the same
 * process (periodic extent 1 or 2).  MPICH 4.0.2 (blocking and not) and
 * Open MPI 4.1.4 (non-blocking, libnbc; open-mpi/ompi#14430) pair the blocks
 * s -> s instead of the standard's s -> s^1 there (mpi-forum/mpi-issues#153). */
static int reference_bug(const Hood *h, int i, int nonblocking)
{
    int j, same = 0;
    if (h->src[i] == MPI_PROC_NULL)
        return 0;
    if (h->kind == MPI_CART)
        return h->src[i] == h->src[i ^ 1] && (MT_IS_MPICH || (MT_IS_OPENMPI && nonblocking));
    /* MPICH 4.0.2 also posts graph receives in reverse order, so repeated
     * edges between two processes pair the k-th with the k-th from the end. */
    for (j = 0; j < h->indeg; ++j)
        same += h->src[j] == h->src[i];
    return MT_IS_MPICH && same > 1;
}

static void check_block(const Hood *h, const char *op, int nonblocking, int i, const int *got,
                        int count, int blockvalue_q, int j, int pair_r)
{
    int e;
    if (reference_bug(h, i, nonblocking))
        return;
    for (e = 0; e < count; ++e) {
        int expected = h->src[i] == MPI_PROC_NULL ? UNTOUCHED : value(h, blockvalue_q, j, pair_r, e);
        if (got[e] != expected)
            MT_FAIL("%s %s%s: slot %d (from %d) element %d, expected %d got %d", h->name,
                    nonblocking ? "I" : "", op, i, h->src[i], e, expected, got[e]);
    }
}

static void test_allgather(const Hood *h, int nonblocking)
{
    int send[2] = {value(h, h->rank, 0, 0, 1), value(h, h->rank, 0, 0, 2)}, recv[2 * MAXN], i;
    MPI_Request req;
    for (i = 0; i < 2 * h->indeg; ++i)
        recv[i] = UNTOUCHED;
    if (nonblocking)
        E(MPI_Ineighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, h->comm, &req));
    else
        E(MPI_Neighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, h->comm));
    wait_or_not(nonblocking, &req);
    for (i = 0; i < h->indeg; ++i) {
        int q = h->src[i], e;
        for (e = 0; e < 2; ++e) {
            int expected = q == MPI_PROC_NULL ? UNTOUCHED : value(h, q, 0, 0, e + 1);
            if (recv[2 * i + e] != expected)
                MT_FAIL("%s %sneighbor_allgather: slot %d (from %d), expected %d got %d", h->name,
                        nonblocking ? "I" : "", i, q, expected, recv[2 * i + e]);
        }
    }
}

/* Allgatherv: q sends 1 + q%3 ints; blocks land in reverse slot order. */
static void test_allgatherv(const Hood *h, int nonblocking)
{
    int send[3], recv[3 * MAXN], counts[MAXN], displs[MAXN], i, e, off = 0;
    MPI_Request req;
    int mine = 1 + h->rank % 3;
    for (e = 0; e < mine; ++e)
        send[e] = value(h, h->rank, 0, 0, e);
    for (i = h->indeg - 1; i >= 0; --i) {
        counts[i] = h->src[i] == MPI_PROC_NULL ? 2 : 1 + h->src[i] % 3;
        displs[i] = off;
        off += counts[i] + 1; /* a gap after each block */
    }
    for (i = 0; i < off; ++i)
        recv[i] = UNTOUCHED;
    if (nonblocking)
        E(MPI_Ineighbor_allgatherv(send, mine, MPI_INT, recv, counts, displs, MPI_INT, h->comm, &req));
    else
        E(MPI_Neighbor_allgatherv(send, mine, MPI_INT, recv, counts, displs, MPI_INT, h->comm));
    wait_or_not(nonblocking, &req);
    for (i = 0; i < h->indeg; ++i) {
        check_block(h, "neighbor_allgatherv", nonblocking, i, recv + displs[i], counts[i], h->src[i], 0, 0);
        CHECK_INT("neighbor_allgatherv: the gap stays untouched", UNTOUCHED, recv[displs[i] + counts[i]]);
    }
}

static void test_alltoall(const Hood *h, int nonblocking)
{
    int send[3 * MAXN], recv[3 * MAXN], i, e;
    MPI_Request req;
    for (i = 0; i < h->outdeg; ++i)
        for (e = 0; e < 3; ++e)
            send[3 * i + e] = value(h, h->rank, i, h->dst[i], e);
    for (i = 0; i < 3 * h->indeg; ++i)
        recv[i] = UNTOUCHED;
    if (nonblocking)
        E(MPI_Ineighbor_alltoall(send, 3, MPI_INT, recv, 3, MPI_INT, h->comm, &req));
    else
        E(MPI_Neighbor_alltoall(send, 3, MPI_INT, recv, 3, MPI_INT, h->comm));
    wait_or_not(nonblocking, &req);
    for (i = 0; i < h->indeg; ++i)
        check_block(h, "neighbor_alltoall", nonblocking, i, recv + 3 * i, 3, h->src[i], sender_block(h, i),
                    h->rank);
}

/* Alltoallv: pair_count(q, r) ints per block, send blocks spaced out,
 * receive blocks in reverse order. */
static void test_alltoallv(const Hood *h, int nonblocking)
{
    int send[4 * MAXN], recv[4 * MAXN], sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN], i, e, off = 0;
    MPI_Request req;
    for (i = 0; i < h->outdeg; ++i) {
        sc[i] = h->dst[i] == MPI_PROC_NULL ? 1 : pair_count(h->rank, h->dst[i]);
        sd[i] = off;
        for (e = 0; e < sc[i]; ++e)
            send[off + e] = value(h, h->rank, i, h->dst[i], e);
        off += sc[i] + 1;
    }
    off = 0;
    for (i = h->indeg - 1; i >= 0; --i) {
        rc[i] = h->src[i] == MPI_PROC_NULL ? 1 : pair_count(h->src[i], h->rank);
        rd[i] = off;
        off += rc[i];
    }
    for (i = 0; i < off; ++i)
        recv[i] = UNTOUCHED;
    if (nonblocking)
        E(MPI_Ineighbor_alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, h->comm, &req));
    else
        E(MPI_Neighbor_alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, h->comm));
    wait_or_not(nonblocking, &req);
    for (i = 0; i < h->indeg; ++i)
        check_block(h, "neighbor_alltoallv", nonblocking, i, recv + rd[i], rc[i], h->src[i], sender_block(h, i),
                    h->rank);
}

/* Alltoallw: each send block is one strided vector (every other int), each
 * receive block pair_count contiguous ints, byte displacements. */
static void test_alltoallw(const Hood *h, int nonblocking)
{
    int send[8 * MAXN], recv[4 * MAXN], sc[MAXN], rc[MAXN], i, e, off = 0;
    MPI_Aint sd[MAXN], rd[MAXN];
    MPI_Datatype st[MAXN], rt[MAXN], vec[4];
    MPI_Request req;
    for (i = 1; i <= 3; ++i) {
        E(MPI_Type_vector(i, 1, 2, MPI_INT, &vec[i]));
        E(MPI_Type_commit(&vec[i]));
    }
    for (i = 0; i < 8 * MAXN; ++i)
        send[i] = -7;
    for (i = 0; i < h->outdeg; ++i) {
        int n = h->dst[i] == MPI_PROC_NULL ? 1 : pair_count(h->rank, h->dst[i]);
        sc[i] = 1;
        st[i] = vec[n];
        sd[i] = (MPI_Aint)(off * sizeof(int));
        for (e = 0; e < n; ++e)
            send[off + 2 * e] = value(h, h->rank, i, h->dst[i], e);
        off += 2 * n;
    }
    off = 0;
    for (i = 0; i < h->indeg; ++i) {
        rc[i] = h->src[i] == MPI_PROC_NULL ? 1 : pair_count(h->src[i], h->rank);
        rt[i] = MPI_INT;
        rd[i] = (MPI_Aint)(off * sizeof(int));
        off += rc[i];
    }
    for (i = 0; i < off; ++i)
        recv[i] = UNTOUCHED;
    if (nonblocking)
        E(MPI_Ineighbor_alltoallw(send, sc, sd, st, recv, rc, rd, rt, h->comm, &req));
    else
        E(MPI_Neighbor_alltoallw(send, sc, sd, st, recv, rc, rd, rt, h->comm));
    /* Freeing the types while the operation may be pending is allowed. */
    for (i = 1; i <= 3; ++i)
        E(MPI_Type_free(&vec[i]));
    wait_or_not(nonblocking, &req);
    for (i = 0; i < h->indeg; ++i) {
        int q = h->src[i], tmp[3 * MAXN];
        /* MPICH 4.0.2 sends only the first indegree blocks of a distributed
         * graph's Neighbor_alltoallw: skip senders with more out- than in-edges. */
        if (MT_IS_MPICH && h->kind == MPI_DIST_GRAPH && dg_to(q, mt_size, tmp) < dg_from(q, mt_size, tmp))
            continue;
        check_block(h, "neighbor_alltoallw", nonblocking, i, recv + rd[i] / (MPI_Aint)sizeof(int), rc[i], q,
                    sender_block(h, i), h->rank);
    }
}

/* Two non-blocking neighbourhood collectives in flight, completed in reverse. */
static void test_two_in_flight(const Hood *h)
{
    int a_send[MAXN], a_recv[MAXN], g_send = value(h, h->rank, 0, 0, 5), g_recv[MAXN], i;
    MPI_Request req[2];
    for (i = 0; i < h->outdeg; ++i)
        a_send[i] = value(h, h->rank, i, h->dst[i], 0);
    for (i = 0; i < h->indeg; ++i)
        a_recv[i] = g_recv[i] = UNTOUCHED;
    E(MPI_Ineighbor_alltoall(a_send, 1, MPI_INT, a_recv, 1, MPI_INT, h->comm, &req[0]));
    E(MPI_Ineighbor_allgather(&g_send, 1, MPI_INT, g_recv, 1, MPI_INT, h->comm, &req[1]));
    E(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    E(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    for (i = 0; i < h->indeg; ++i) {
        int q = h->src[i];
        check_block(h, "neighbor_alltoall (two in flight)", 1, i, a_recv + i, 1, q, sender_block(h, i),
                    h->rank);
        CHECK_INT("Ineighbor_allgather (two in flight)", q == MPI_PROC_NULL ? UNTOUCHED : value(h, q, 0, 0, 5),
                  g_recv[i]);
    }
}

static void run_all(Hood *h)
{
    int nb;
    fill_hood(h);
    for (nb = 0; nb <= 1; ++nb) {
        test_allgather(h, nb);
        test_allgatherv(h, nb);
        test_alltoall(h, nb);
        test_alltoallv(h, nb);
        test_alltoallw(h, nb);
    }
    test_two_in_flight(h);
}

static void cart_case(const char *name, int ndims, const int *periods, int via_dup)
{
    int dims[3] = {0, 0, 0};
    MPI_Comm cart;
    Hood h;
    memset(&h, 0, sizeof h);
    E(MPI_Dims_create(mt_size, ndims, dims));
    E(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart));
    h.name = name;
    h.kind = MPI_CART;
    if (via_dup)
        E(MPI_Comm_dup(cart, &h.comm));
    else
        h.comm = cart;
    run_all(&h);
    if (via_dup)
        E(MPI_Comm_free(&h.comm));
    E(MPI_Comm_free(&cart));
}

static void graph_case(void)
{
    /* Undirected ring with a doubled edge to the right neighbour and a self
     * loop at rank 0 (p > 1): neighbours of i: i-1, i+1, i+1 [, 0 at 0]. */
    int index[MAXN], edges[4 * MAXN], i, n = 0;
    Hood h;
    memset(&h, 0, sizeof h);
    for (i = 0; i < mt_size; ++i) {
        edges[n++] = (i + mt_size - 1) % mt_size;
        edges[n++] = (i + 1) % mt_size;
        edges[n++] = (i + 1) % mt_size;
        edges[n++] = (i + mt_size - 1) % mt_size; /* the doubled edge seen from the other end */
        if (i == 0)
            edges[n++] = 0;
        index[i] = n;
    }
    E(MPI_Graph_create(MPI_COMM_WORLD, mt_size, index, edges, 0, &h.comm));
    h.name = "graph";
    h.kind = MPI_GRAPH;
    run_all(&h);
    E(MPI_Comm_free(&h.comm));
}

static void dist_graph_cases(void)
{
    int src[3 * MAXN], dst[3];
    int nin = dg_to(mt_rank, mt_size, src), nout = dg_from(mt_rank, mt_size, dst);
    Hood h;
    memset(&h, 0, sizeof h);
    E(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, src, MPI_UNWEIGHTED, nout, dst, MPI_UNWEIGHTED,
                                     MPI_INFO_NULL, 0, &h.comm));
    h.name = "dist graph (adjacent)";
    h.kind = MPI_DIST_GRAPH;
    run_all(&h);
    E(MPI_Comm_free(&h.comm));

    /* General form, edges of rank r named by rank r+1; the order of the
     * adjacency lists is the implementation's, so check by pair, which needs
     * distinct edges: q+1, q, q+3 differ mod p for p >= 4. */
    if (mt_size >= 4) {
        int q = (mt_rank + mt_size - 1) % mt_size, d[3];
        int deg = dg_from(q, mt_size, d);
        memset(&h, 0, sizeof h);
        E(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &q, &deg, d, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &h.comm));
        h.name = "dist graph (general)";
        h.kind = MPI_DIST_GRAPH;
        h.by_pair = 1;
        run_all(&h);
        E(MPI_Comm_free(&h.comm));
    }
}

int main(int argc, char **argv)
{
    int periodic[2] = {1, 1}, open[2] = {0, 0}, ring[1] = {1};
    mt_init(&argc, &argv);
    if (mt_size > MAXN / 4)
        MT_FATAL("size, expected <= %d got %d", MAXN / 4, mt_size);
    cart_case("periodic 2-D torus", 2, periodic, 0);
    cart_case("non-periodic 2-D grid", 2, open, 0);
    cart_case("1-D ring (dup of the Cartesian communicator)", 1, ring, 1);
    graph_case();
    dist_graph_cases();
    return mt_finish();
}
