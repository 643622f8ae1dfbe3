/* Graph and distributed graph topologies (MPI-3.1 7.5.3-7.5.5):
 * MPI_Graph_create (the standard's 4-node example wrapped over the ranks,
 * with fewer nodes than processes), MPI_Graphdims_get / Graph_get /
 * Graph_neighbors_count / Graph_neighbors / Graph_map; MPI_Dist_graph_create_
 * adjacent (weighted, MPI_UNWEIGHTED, a process with no edges,
 * MPI_WEIGHTS_EMPTY) and MPI_Dist_graph_create (edges named by other
 * processes than their ends, weights and MPI_UNWEIGHTED, a process with zero
 * edges), MPI_Dist_graph_neighbors_count / Dist_graph_neighbors, Topo_test,
 * the topology kept by MPI_Comm_dup. */
#include "mpitest.h"

/* ---- graph: node i of n has neighbours i-1 and i+1 (mod n) and node 0 is
 * also linked to every other node (a wheel). ------------------------------- */
static int wheel_neighbors(int n, int i, int *out)
{
    int k = 0, j;
    if (n == 1)
        return 0;
    out[k++] = (i + n - 1) % n;
    if (n > 2)
        out[k++] = (i + 1) % n;
    if (i == 0) {
        for (j = 2; j < n - 1; ++j)
            out[k++] = j;
    } else if (i != 1 && i != n - 1) {
        out[k++] = 0;
    }
    return k;
}

static void graph_case(int nnodes)
{
    int index[64], edges[4096], nb[64], got[64], i, k, nedges = 0, n, e, r, status;
    int g_index[64], g_edges[4096];
    MPI_Comm graph, dup;
    for (i = 0; i < nnodes; ++i) {
        nedges += wheel_neighbors(nnodes, i, edges + nedges);
        index[i] = nedges;
    }
    E(MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, edges, 0, &graph));
    E(MPI_Graph_map(MPI_COMM_WORLD, nnodes, index, edges, &r));
    /* Open MPI 4.1.4 returns the rank even beyond the graph. */
    if (!MT_IS_OPENMPI)
        CHECK_INT("MPI_Graph_map", mt_rank < nnodes ? mt_rank : MPI_UNDEFINED, r);
    if (mt_rank >= nnodes) {
        CHECK(graph == MPI_COMM_NULL, "MPI_Graph_create(%d nodes) at rank %d, expected MPI_COMM_NULL",
              nnodes, mt_rank);
        return;
    }
    E(MPI_Topo_test(graph, &status));
    CHECK_INT("MPI_Topo_test of a graph communicator", MPI_GRAPH, status);
    E(MPI_Graphdims_get(graph, &n, &e));
    CHECK_INT("MPI_Graphdims_get nnodes", nnodes, n);
    CHECK_INT("MPI_Graphdims_get nedges", nedges, e);
    E(MPI_Graph_get(graph, nnodes, nedges, g_index, g_edges));
    for (i = 0; i < nnodes; ++i)
        CHECK_INT("MPI_Graph_get index", index[i], g_index[i]);
    for (i = 0; i < nedges; ++i)
        CHECK_INT("MPI_Graph_get edges", edges[i], g_edges[i]);
    for (i = 0; i < nnodes; ++i) {
        int expected = wheel_neighbors(nnodes, i, nb);
        E(MPI_Graph_neighbors_count(graph, i, &n));
        CHECK_INT("MPI_Graph_neighbors_count", expected, n);
        E(MPI_Graph_neighbors(graph, i, 64, got));
        for (k = 0; k < expected; ++k)
            CHECK_INT("MPI_Graph_neighbors (in the order given)", nb[k], got[k]);
    }
    E(MPI_Comm_dup(graph, &dup));
    E(MPI_Topo_test(dup, &status));
    CHECK_INT("MPI_Comm_dup keeps a graph topology", MPI_GRAPH, status);
    E(MPI_Graphdims_get(dup, &n, &e));
    CHECK_INT("MPI_Graphdims_get of the dup", nedges, e);
    E(MPI_Comm_free(&dup));
    E(MPI_Comm_free(&graph));
}

/* ---- distributed graphs ---------------------------------------------------
 * Edges of the test graph: q -> (q+1)%p with weight 10*q+1, q -> (q+2)%p with
 * weight 10*q+2, and the self loop q -> q with weight 10*q+3, except that
 * the last rank (p > 1) has no edge at all, in or out.  Duplicates (small p)
 * are kept: the graph is a multigraph. */
static int edges_from(int q, int p, int *dst, int *w)
{
    int k = 0, j, cand[3], wt[3];
    if (p > 1 && q == p - 1)
        return 0;
    cand[0] = (q + 1) % p, wt[0] = 10 * q + 1;
    cand[1] = (q + 2) % p, wt[1] = 10 * q + 2;
    cand[2] = q, wt[2] = 10 * q + 3;
    for (j = 0; j < 3; ++j) {
        if (p > 1 && cand[j] == p - 1)
            continue;
        dst[k] = cand[j];
        w[k++] = wt[j];
    }
    return k;
}

/* Incoming edges of r: (source, weight), in source order then edge order. */
static int edges_to(int r, int p, int *src, int *w)
{
    int q, j, k = 0, d[3], wt[3], n;
    for (q = 0; q < p; ++q) {
        n = edges_from(q, p, d, wt);
        for (j = 0; j < n; ++j)
            if (d[j] == r)
                src[k] = q, w[k++] = wt[j];
    }
    return k;
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? x[0] - y[0] : x[1] - y[1];
}

/* The adjacency of a Dist_graph_create communicator is in an unspecified
 * order: compare (rank, weight) pairs as sorted lists. */
static void check_pairs(const char *what, int n, const int *ranks, const int *weights, int m,
                        const int *got_ranks, const int *got_weights)
{
    int a[64][2], b[64][2], i;
    CHECK_INT(what, n, m);
    if (n != m)
        return;
    for (i = 0; i < n; ++i) {
        a[i][0] = ranks[i], a[i][1] = weights ? weights[i] : 0;
        b[i][0] = got_ranks[i], b[i][1] = got_weights ? got_weights[i] : 0;
    }
    qsort(a, (size_t)n, sizeof a[0], cmp_pair);
    qsort(b, (size_t)n, sizeof b[0], cmp_pair);
    for (i = 0; i < n; ++i)
        if (a[i][0] != b[i][0] || a[i][1] != b[i][1])
            MT_FAIL("%s: edge %d, expected (%d, w %d) got (%d, w %d)", what, i, a[i][0], a[i][1],
                    b[i][0], b[i][1]);
}

/* MPICH 4.0.2 crashes in MPI_Dist_graph_neighbors when the process has no
 * incoming or no outgoing edge (it copies from a null pointer), weighted or
 * not. */
static int mpich_zero_degree_crash(int weighted, int indegree, int outdegree)
{
    (void)weighted;
    return MT_IS_MPICH && (indegree == 0 || outdegree == 0);
}

static void dist_graph_adjacent(int weighted)
{
    int src[8], sw[8], dst[8], dw[8], in, out, w, status, i;
    int g_src[8], g_sw[8], g_dst[8], g_dw[8];
    MPI_Comm dg, dup;
    int nin = edges_to(mt_rank, mt_size, src, sw);
    int nout = edges_from(mt_rank, mt_size, dst, dw);
    const int *sweights = weighted ? (nin ? sw : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED;
    const int *dweights = weighted ? (nout ? dw : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED;
    E(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, src, sweights, nout, dst, dweights,
                                     MPI_INFO_NULL, 0, &dg));
    E(MPI_Topo_test(dg, &status));
    CHECK_INT("MPI_Topo_test of a distributed graph", MPI_DIST_GRAPH, status);
    E(MPI_Comm_dup(dg, &dup));
    E(MPI_Dist_graph_neighbors_count(dup, &in, &out, &w));
    CHECK_INT("adjacent: indegree", nin, in);
    CHECK_INT("adjacent: outdegree", nout, out);
    CHECK_INT("adjacent: weighted", weighted, !!w);
    if (mpich_zero_degree_crash(weighted, nin, nout)) {
        E(MPI_Comm_free(&dup));
        E(MPI_Comm_free(&dg));
        return;
    }
    E(MPI_Dist_graph_neighbors(dup, 8, g_src, weighted ? g_sw : MPI_UNWEIGHTED, 8, g_dst,
                               weighted ? g_dw : MPI_UNWEIGHTED));
    /* The adjacent form keeps the order given. */
    for (i = 0; i < nin; ++i) {
        CHECK_INT("adjacent: sources[i]", src[i], g_src[i]);
        if (weighted)
            CHECK_INT("adjacent: sourceweights[i]", sw[i], g_sw[i]);
    }
    for (i = 0; i < nout; ++i) {
        CHECK_INT("adjacent: destinations[i]", dst[i], g_dst[i]);
        if (weighted)
            CHECK_INT("adjacent: destweights[i]", dw[i], g_dw[i]);
    }
    E(MPI_Comm_free(&dup));
    E(MPI_Comm_free(&dg));
}

/* Dist_graph_create where each edge is named by a process that is not
 * (necessarily) its source: the edges of q are given by rank (q+1)%p,
 * as two (source, degree) entries: q with all its destinations, and a second
 * entry of degree 0 (or, at rank 0, the edges of rank p-2, because rank p-1
 * names no edge at all). */
static void dist_graph_general(int weighted)
{
    int src[8], sw[8], dst[8], dw[8], in, out, w, status;
    int g_src[8], g_sw[8], g_dst[8], g_dw[8];
    int sources[2], degrees[2], destinations[8], weights[8], n, total;
    MPI_Comm dg;
    int q = (mt_rank + mt_size - 1) % mt_size; /* whose edges I name */
    int nin = edges_to(mt_rank, mt_size, src, sw);
    int nout = edges_from(mt_rank, mt_size, dst, dw);
    sources[0] = q;
    degrees[0] = edges_from(q, mt_size, destinations, weights);
    sources[1] = mt_rank;
    degrees[1] = 0;
    n = 2;
    if (mt_size > 2 && mt_rank == mt_size - 1)
        n = 0; /* names nothing: rank 0 names the edges of p-2 instead */
    if (mt_size > 2 && mt_rank == 0) {
        sources[1] = mt_size - 2;
        degrees[1] = edges_from(mt_size - 2, mt_size, destinations + degrees[0], weights + degrees[0]);
    }
    total = n ? degrees[0] + degrees[1] : 0;
    E(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, destinations,
                            weighted ? (total > 0 ? weights : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED,
                            MPI_INFO_NULL, 0, &dg));
    E(MPI_Topo_test(dg, &status));
    CHECK_INT("MPI_Topo_test of a general distributed graph", MPI_DIST_GRAPH, status);
    E(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w));
    CHECK_INT("general: weighted", weighted, !!w);
    if (mpich_zero_degree_crash(weighted, in, out)) {
        E(MPI_Comm_free(&dg));
        return;
    }
    E(MPI_Dist_graph_neighbors(dg, 8, g_src, weighted ? g_sw : MPI_UNWEIGHTED, 8, g_dst,
                               weighted ? g_dw : MPI_UNWEIGHTED));
    check_pairs("general: incoming edges", nin, src, weighted ? sw : NULL, in, g_src,
                weighted ? g_sw : NULL);
    check_pairs("general: outgoing edges", nout, dst, weighted ? dw : NULL, out, g_dst,
                weighted ? g_dw : NULL);
    E(MPI_Comm_free(&dg));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    graph_case(mt_size);
    if (mt_size > 1)
        graph_case(mt_size - 1);
    dist_graph_adjacent(1);
    dist_graph_adjacent(0);
    dist_graph_general(1);
    dist_graph_general(0);
    return mt_finish();
}
