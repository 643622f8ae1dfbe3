/* Argument errors of the collectives are reported with the right error
 * class under MPI_ERRORS_RETURN (every rank makes the same mistake, so no
 * rank is left waiting): invalid root -> MPI_ERR_ROOT, invalid op ->
 * MPI_ERR_OP, negative count -> MPI_ERR_COUNT, invalid datatype ->
 * MPI_ERR_TYPE, MPI_COMM_NULL -> MPI_ERR_COMM; MPI_Reduce_local with
 * MPI_IN_PLACE or aliased buffers -> MPI_ERR_BUFFER.  A valid call afterwards
 * still works. */
#include "coll_common.h"

#define EXPECT_CLASS(call, cls)                                                 \
    do {                                                                         \
        int rc_ = (call);                                                        \
        CHECK(rc_ != MPI_SUCCESS && mt_class(rc_) == (cls),                      \
              "%s, expected error class %s got %d (class %d)", #call, #cls, rc_, \
              rc_ == MPI_SUCCESS ? MPI_SUCCESS : mt_class(rc_));                 \
    } while (0)

/* Debian 12's MPICH does not check counts (it crashes on a negative one),
 * so those checks run on the other implementations only. */
#ifdef MPICH_VERSION
#define COUNT_CHECK(call, cls) ((void)0)
#else
#define COUNT_CHECK(call, cls) EXPECT_CLASS(call, cls)
#endif

/* Open MPI checks neither MPI_IN_PLACE nor aliased buffers in
 * MPI_Reduce_local (it crashes). */
#ifdef OPEN_MPI
#define ALIAS_CHECK(call, cls) ((void)0)
#else
#define ALIAS_CHECK(call, cls) EXPECT_CLASS(call, cls)
#endif

int main(int argc, char **argv)
{
    int p, in[4] = {1, 2, 3, 4}, out[64], *big;
    cc_setup(&argc, &argv);
    p = mt_size;
    big = cc_ints((size_t)4 * p);
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    EXPECT_CLASS(MPI_Bcast(in, 1, MPI_INT, p, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Bcast(in, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    COUNT_CHECK(MPI_Bcast(in, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Bcast(in, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Reduce(in, out, 1, MPI_INT, MPI_SUM, p + 3, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Reduce(in, out, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    COUNT_CHECK(MPI_Reduce(in, out, -2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Allreduce(in, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    COUNT_CHECK(MPI_Allreduce(in, out, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Scan(in, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    COUNT_CHECK(MPI_Exscan(in, out, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Reduce_scatter_block(big, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD),
                 MPI_ERR_OP);
    EXPECT_CLASS(MPI_Gather(in, 1, MPI_INT, big, 1, MPI_INT, -5, MPI_COMM_WORLD), MPI_ERR_ROOT);
    COUNT_CHECK(MPI_Gather(in, -1, MPI_INT, big, -1, MPI_INT, 0, MPI_COMM_WORLD),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Scatter(big, 1, MPI_INT, out, 1, MPI_INT, p, MPI_COMM_WORLD), MPI_ERR_ROOT);
    COUNT_CHECK(MPI_Allgather(in, -1, MPI_INT, big, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    COUNT_CHECK(MPI_Alltoall(big, -1, MPI_INT, out, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);

    /* MPI_Reduce_local: no MPI_IN_PLACE, no aliased buffers (MPI_ERR_BUFFER). */
    ALIAS_CHECK(MPI_Reduce_local(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    ALIAS_CHECK(MPI_Reduce_local(in, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    ALIAS_CHECK(MPI_Reduce_local(out, out, 2, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    out[0] = 10;
    E(MPI_Reduce_local(in, out, 1, MPI_INT, MPI_SUM));
    CHECK_INT("MPI_Reduce_local after errors", 10 + in[0], out[0]);

    /* The communicator still works after the errors. */
    in[0] = mt_rank;
    E(MPI_Allreduce(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT("allreduce after errors", p * (p - 1) / 2, out[0]);
    free(big);
    return cc_teardown();
}
