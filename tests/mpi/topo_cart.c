/* Cartesian topologies (MPI-3.1 7.5.1-7.5.6): MPI_Dims_create (the
 * standard's examples and erroneous cases), MPI_Cart_create in 1 to 3
 * dimensions, periodic and not, with fewer processes than the communicator,
 * MPI_Cart_get / Cartdim_get / Cart_rank / Cart_coords / Cart_shift with
 * displacements, MPI_Cart_sub, MPI_Cart_map, MPI_Topo_test, the topology kept
 * by MPI_Comm_dup / idup / dup_with_info and not by MPI_Comm_split, and
 * MPI_ERR_TOPOLOGY on a communicator without (or with another) topology
 * (also for a neighbourhood collective). */
#include "mpitest.h"

static void check_dims(int nnodes, int ndims, const int *in, const int *expected)
{
    int dims[8], i;
    memcpy(dims, in, (size_t)ndims * sizeof(int));
    E(MPI_Dims_create(nnodes, ndims, dims));
    for (i = 0; i < ndims; ++i)
        if (dims[i] != expected[i])
            MT_FAIL("MPI_Dims_create(%d, %d): dims[%d], expected %d got %d", nnodes, ndims, i,
                    expected[i], dims[i]);
}

static void dims_create_cases(void)
{
    int z2[2] = {0, 0}, z3[3] = {0, 0, 0}, f3[3] = {0, 3, 0}, dims[3], rc;
    check_dims(6, 2, z2, (int[]){3, 2});
    check_dims(7, 2, z2, (int[]){7, 1});
    check_dims(6, 3, f3, (int[]){2, 3, 1});
    check_dims(8, 3, z3, (int[]){2, 2, 2});
    check_dims(12, 3, z3, (int[]){3, 2, 2});
    check_dims(16, 3, z3, (int[]){4, 2, 2});
    check_dims(1, 3, z3, (int[]){1, 1, 1});
    check_dims(12, 3, (int[]){0, 2, 0}, (int[]){3, 2, 2});
    check_dims(6, 2, (int[]){2, 3}, (int[]){2, 3});
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    memcpy(dims, f3, sizeof dims);
    rc = MPI_Dims_create(7, 3, dims);
    CHECK_INT("MPI_Dims_create(7, 3, {0,3,0}) error class", MPI_ERR_DIMS, mt_class(rc));
    dims[0] = 4;
    dims[1] = 0;
    rc = MPI_Dims_create(6, 2, dims);
    CHECK_INT("MPI_Dims_create(6, 2, {4,0}) error class", MPI_ERR_DIMS, mt_class(rc));
    {   /* a grid larger than the communicator: an error, and no communicator */
        MPI_Comm cart = MPI_COMM_WORLD;
        int big[2] = {mt_size + 1, 1}, per[2] = {0, 0};
        rc = MPI_Cart_create(MPI_COMM_WORLD, 2, big, per, 0, &cart);
        CHECK(rc != MPI_SUCCESS, "MPI_Cart_create of a grid larger than the communicator succeeded");
#ifndef OPEN_MPI /* Open MPI leaves comm_cart unchanged */
        CHECK(cart == MPI_COMM_NULL, "MPI_Cart_create failed but did not set comm_cart to MPI_COMM_NULL");
#endif
    }
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Cart_get, Cart_rank/Cart_coords round trip, and shifts of every
 * displacement from -3 to 3 in every dimension, against row-major arithmetic. */
static void check_grid(MPI_Comm cart, int ndims, const int *dims, const int *periods)
{
    int rank, size, n = -1, d, g_dims[3], g_periods[3], coords[3], c2[3], r, disp, status;
    E(MPI_Comm_rank(cart, &rank));
    E(MPI_Comm_size(cart, &size));
    E(MPI_Topo_test(cart, &status));
    CHECK_INT("MPI_Topo_test of a Cartesian communicator", MPI_CART, status);
    E(MPI_Cartdim_get(cart, &n));
    CHECK_INT("MPI_Cartdim_get", ndims, n);
    E(MPI_Cart_get(cart, ndims, g_dims, g_periods, coords));
    for (d = 0, r = 0; d < ndims; ++d) {
        CHECK_INT("MPI_Cart_get dims", dims[d], g_dims[d]);
        CHECK_INT("MPI_Cart_get periods", !!periods[d], !!g_periods[d]);
        r = r * dims[d] + coords[d];
    }
    CHECK_INT("MPI_Cart_get coords are row-major coordinates of the rank", rank, r);
    for (r = 0; r < size; ++r) {
        int back = -1, rest = r;
        E(MPI_Cart_coords(cart, r, ndims, c2));
        for (d = ndims - 1; d >= 0; --d) {
            CHECK_INT("MPI_Cart_coords", rest % dims[d], c2[d]);
            rest /= dims[d];
        }
        E(MPI_Cart_rank(cart, c2, &back));
        CHECK_INT("MPI_Cart_rank(MPI_Cart_coords(r))", r, back);
    }
    for (d = 0; d < ndims; ++d) {
        for (disp = -3; disp <= 3; ++disp) {
            int src = -5, dst = -5, k, expect[2];
            E(MPI_Cart_shift(cart, d, disp, &src, &dst));
            for (k = 0; k < 2; ++k) {
                int c = coords[d] + (k == 0 ? -disp : disp);
                if (periods[d]) {
                    c = ((c % dims[d]) + dims[d]) % dims[d];
                } else if (c < 0 || c >= dims[d]) {
                    expect[k] = MPI_PROC_NULL;
                    continue;
                }
                memcpy(c2, coords, sizeof c2);
                c2[d] = c;
                E(MPI_Cart_rank(cart, c2, &expect[k]));
            }
            if (src != expect[0] || dst != expect[1])
                MT_FAIL("MPI_Cart_shift(dim %d, disp %d) at rank %d, expected (%d, %d) got (%d, %d)", d,
                        disp, rank, expect[0], expect[1], src, dst);
        }
    }
    /* A periodic coordinate out of range wraps. */
    for (d = 0; d < ndims; ++d) {
        if (!periods[d])
            continue;
        memcpy(c2, coords, sizeof c2);
        c2[d] = coords[d] + 2 * dims[d];
        E(MPI_Cart_rank(cart, c2, &r));
        CHECK_INT("MPI_Cart_rank of a wrapped periodic coordinate", rank, r);
        c2[d] = coords[d] - dims[d];
        E(MPI_Cart_rank(cart, c2, &r));
        CHECK_INT("MPI_Cart_rank of a negative periodic coordinate", rank, r);
    }
}

/* Make a grid of the given shape over the first ranks of MPI_COMM_WORLD. */
static void grid_case(int ndims, const int *dims, const int *periods)
{
    MPI_Comm cart;
    int d, n = 1, size;
    for (d = 0; d < ndims; ++d)
        n *= dims[d];
    E(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart));
    if (mt_rank >= n) {
        CHECK(cart == MPI_COMM_NULL, "MPI_Cart_create(%d procs) at rank %d, expected MPI_COMM_NULL",
              n, mt_rank);
        return;
    }
    if (cart == MPI_COMM_NULL)
        MT_FATAL("MPI_Cart_create at rank %d < %d gave MPI_COMM_NULL", mt_rank, n);
    E(MPI_Comm_size(cart, &size));
    CHECK_INT("size of the Cartesian communicator", n, size);
    check_grid(cart, ndims, dims, periods);
    E(MPI_Comm_free(&cart));
}

static void cart_sub_case(void)
{
    /* 3-D grid p = a x b x c from Dims_create; keep dims {0,2} then {1}. */
    int dims[3] = {0, 0, 0}, periods[3] = {1, 0, 1}, coords[3], remain[3], sub_dims[2],
        sub_periods[2], sub_coords[2], n, rank, size, status;
    MPI_Comm cart, sub;
    E(MPI_Dims_create(mt_size, 3, dims));
    E(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart));
    E(MPI_Cart_coords(cart, mt_rank, 3, coords));

    remain[0] = 1, remain[1] = 0, remain[2] = 1;
    E(MPI_Cart_sub(cart, remain, &sub));
    E(MPI_Topo_test(sub, &status));
    CHECK_INT("MPI_Topo_test of a Cart_sub communicator", MPI_CART, status);
    E(MPI_Cartdim_get(sub, &n));
    CHECK_INT("MPI_Cart_sub ndims", 2, n);
    E(MPI_Cart_get(sub, 2, sub_dims, sub_periods, sub_coords));
    CHECK_INT("Cart_sub dims[0]", dims[0], sub_dims[0]);
    CHECK_INT("Cart_sub dims[1]", dims[2], sub_dims[1]);
    CHECK_INT("Cart_sub periods[0]", 1, !!sub_periods[0]);
    CHECK_INT("Cart_sub periods[1]", 1, !!sub_periods[1]);
    CHECK_INT("Cart_sub coords[0]", coords[0], sub_coords[0]);
    CHECK_INT("Cart_sub coords[1]", coords[2], sub_coords[1]);
    E(MPI_Comm_rank(sub, &rank));
    E(MPI_Comm_size(sub, &size));
    CHECK_INT("Cart_sub size", dims[0] * dims[2], size);
    CHECK_INT("Cart_sub rank", coords[0] * dims[2] + coords[2], rank);
    {
        /* The members of my sub-grid are the world ranks with my coords[1]. */
        int i, expected_world, c[3];
        MPI_Group wg, sg;
        E(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        E(MPI_Comm_group(sub, &sg));
        for (i = 0; i < size; ++i) {
            int got = -1;
            E(MPI_Group_translate_ranks(sg, 1, &i, wg, &got));
            c[0] = i / dims[2], c[1] = coords[1], c[2] = i % dims[2];
            E(MPI_Cart_rank(cart, c, &expected_world));
            CHECK_INT("Cart_sub member's world rank", expected_world, got);
        }
        E(MPI_Group_free(&wg));
        E(MPI_Group_free(&sg));
    }
    E(MPI_Comm_free(&sub));

    remain[0] = 0, remain[1] = 1, remain[2] = 0;
    E(MPI_Cart_sub(cart, remain, &sub));
    E(MPI_Cartdim_get(sub, &n));
    CHECK_INT("MPI_Cart_sub ndims (one kept)", 1, n);
    E(MPI_Comm_size(sub, &size));
    CHECK_INT("Cart_sub size (one kept)", dims[1], size);
    E(MPI_Comm_rank(sub, &rank));
    CHECK_INT("Cart_sub rank (one kept)", coords[1], rank);
    E(MPI_Cart_get(sub, 1, sub_dims, sub_periods, sub_coords));
    CHECK_INT("Cart_sub periods (non-periodic kept)", 0, !!sub_periods[0]);
    {
        int src, dst;
        E(MPI_Cart_shift(sub, 0, 1, &src, &dst));
        CHECK_INT("shift in Cart_sub: source", coords[1] == 0 ? MPI_PROC_NULL : coords[1] - 1, src);
        CHECK_INT("shift in Cart_sub: dest", coords[1] == dims[1] - 1 ? MPI_PROC_NULL : coords[1] + 1, dst);
    }
    E(MPI_Comm_free(&sub));
    E(MPI_Comm_free(&cart));
}

static void inheritance_and_errors(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0}, status, n, rc, r;
    MPI_Comm cart, dup, idup, dupi, split;
    MPI_Request req;
    E(MPI_Dims_create(mt_size, 2, dims));
    E(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));

    E(MPI_Comm_dup(cart, &dup));
    E(MPI_Topo_test(dup, &status));
    CHECK_INT("MPI_Comm_dup keeps the topology", MPI_CART, status);
    check_grid(dup, 2, dims, periods);
    E(MPI_Comm_idup(cart, &idup, &req));
    E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    E(MPI_Topo_test(idup, &status));
    CHECK_INT("MPI_Comm_idup keeps the topology", MPI_CART, status);
    E(MPI_Cartdim_get(idup, &n));
    CHECK_INT("MPI_Cartdim_get of an idup", 2, n);
    E(MPI_Comm_dup_with_info(cart, MPI_INFO_NULL, &dupi));
    E(MPI_Topo_test(dupi, &status));
    CHECK_INT("MPI_Comm_dup_with_info keeps the topology", MPI_CART, status);
    E(MPI_Comm_split(cart, 0, mt_rank, &split));
    E(MPI_Topo_test(split, &status));
    CHECK_INT("MPI_Comm_split drops the topology", MPI_UNDEFINED, status);
    E(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK_INT("MPI_Topo_test(MPI_COMM_WORLD)", MPI_UNDEFINED, status);

    E(MPI_Comm_set_errhandler(split, MPI_ERRORS_RETURN));
    rc = MPI_Cartdim_get(split, &n);
    CHECK_INT("MPI_Cartdim_get without a topology: error class", MPI_ERR_TOPOLOGY, mt_class(rc));
    rc = MPI_Cart_shift(split, 0, 1, &n, &r);
    CHECK_INT("MPI_Cart_shift without a topology: error class", MPI_ERR_TOPOLOGY, mt_class(rc));
    rc = MPI_Graphdims_get(split, &n, &r);
    CHECK_INT("MPI_Graphdims_get without a topology: error class", MPI_ERR_TOPOLOGY, mt_class(rc));
    if (!MT_IS_OPENMPI) { /* Open MPI 4.1.4 crashes instead of returning an error */
        rc = MPI_Neighbor_allgather(&n, 1, MPI_INT, &r, 1, MPI_INT, split);
        CHECK_INT("MPI_Neighbor_allgather without a topology: error class", MPI_ERR_TOPOLOGY, mt_class(rc));
    }
    E(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    rc = MPI_Graphdims_get(dup, &n, &r);
    CHECK_INT("MPI_Graphdims_get on a Cartesian communicator: error class", MPI_ERR_TOPOLOGY,
              mt_class(rc));

    /* The new communicator takes MPI_ERRORS_RETURN from its parent. */
    {
        MPI_Comm c2;
        MPI_Errhandler eh;
        E(MPI_Cart_create(split, 2, dims, periods, 0, &c2));
        E(MPI_Comm_get_errhandler(c2, &eh));
        CHECK(eh == MPI_ERRORS_RETURN, "Cart_create inherits the error handler, expected MPI_ERRORS_RETURN");
        E(MPI_Errhandler_free(&eh));
        E(MPI_Comm_free(&c2));
    }

    /* Cart_map: identity on the first ranks, MPI_UNDEFINED beyond. */
    {
        int one[1] = {mt_size > 1 ? mt_size - 1 : 1}, nope[1] = {0};
        E(MPI_Cart_map(MPI_COMM_WORLD, 1, one, nope, &r));
        /* Open MPI 4.1.4 returns the rank even beyond the grid. */
        if (!MT_IS_OPENMPI)
            CHECK_INT("MPI_Cart_map", mt_rank < one[0] ? mt_rank : MPI_UNDEFINED, r);
    }
    E(MPI_Comm_free(&split));
    E(MPI_Comm_free(&dupi));
    E(MPI_Comm_free(&idup));
    E(MPI_Comm_free(&dup));
    E(MPI_Comm_free(&cart));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    dims_create_cases();
    {
        int d1[1] = {mt_size}, p1[1] = {1};
        int d1n[1] = {mt_size > 1 ? mt_size - 1 : 1}, p1n[1] = {0};
        int d2[2] = {0, 0}, p2[2] = {1, 1}, p2n[2] = {0, 0}, p2m[2] = {0, 1};
        int d3[3] = {0, 0, 0}, p3[3] = {1, 0, 1};
        grid_case(1, d1, p1);
        grid_case(1, d1n, p1n);
        E(MPI_Dims_create(mt_size, 2, d2));
        grid_case(2, d2, p2);
        grid_case(2, d2, p2n);
        grid_case(2, d2, p2m);
        E(MPI_Dims_create(mt_size, 3, d3));
        grid_case(3, d3, p3);
    }
    cart_sub_case();
    inheritance_and_errors();
    return mt_finish();
}
