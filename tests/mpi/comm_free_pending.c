/* MPI_Comm_free while operations on the communicator are still pending
 * (MPI-3.1 6.4.3: they complete normally; the handle becomes
 * MPI_COMM_NULL at once): an Iallreduce on a dup, an Ibarrier on an
 * intercommunicator, and a point-to-point Irecv whose message is sent after
 * the free (it must still match it, and not a later communicator that may
 * reuse the context).  Also MPI_Request_free on a nonblocking collective
 * request, which is erroneous (MPI-3.1 5.12): MPI_ERR_REQUEST. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Comm dup, inter, again[4];
    MPI_Request req;
    int in, out = -1, expected, i, rc, cls;

    mt_init(&argc, &argv);

    /* 1. Iallreduce on a dup, free, then wait.  Parts 1 and 2 are skipped
     * for Open MPI 4.1.4: its libnbc dereferences the freed communicator
     * (segfault in mca_pml_ob1_isend). */
    if (MT_IS_OPENMPI)
        goto p2p;
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    in = mt_rank + 1;
    E(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, dup, &req));
    E(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "Comm_free sets the handle to MPI_COMM_NULL, got %d", MT_H(dup));
    E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    expected = mt_size * (mt_size + 1) / 2;
    CHECK_INT("Iallreduce on a communicator freed before the wait", expected, out);

    /* Several rounds, so that freed contexts get reused by new dups. */
    for (i = 0; i < 4; ++i) {
        E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        E(MPI_Ibarrier(dup, &req));
        E(MPI_Comm_free(&dup));
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }

    /* 2. Intercommunicator: even and odd world ranks. */
    if (mt_size >= 2) {
        MPI_Comm half;
        E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half));
        E(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, mt_rank % 2 ? 0 : 1, 7, &inter));
        E(MPI_Comm_free(&half));
        in = mt_rank + 1;
        out = -1;
        E(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, inter, &req));
        E(MPI_Comm_free(&inter));
        CHECK(inter == MPI_COMM_NULL, "Comm_free of an intercommunicator sets MPI_COMM_NULL, got %d", MT_H(inter));
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        /* The sum over the other side's world ranks + 1. */
        expected = 0;
        for (i = (mt_rank + 1) % 2; i < mt_size; i += 2)
            expected += i + 1;
        CHECK_INT("intercommunicator Iallreduce on a freed communicator", expected, out);
    }

p2p:
    /* 3. A pending receive on a freed communicator; the message is sent on
     * the same communicator (by the peer, before its own free) only after a
     * new communicator was created here, which must not steal it. */
    if (mt_size >= 2 && mt_rank < 2) {
        int peer = 1 - mt_rank, got = -1;
        MPI_Comm pair;
        MPI_Request oreq[4];
        int others[4] = {-1, -1, -1, -1}, k;
        E(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_rank, &pair));
        if (mt_rank == 0) {
            E(MPI_Irecv(&got, 1, MPI_INT, peer, 5, pair, &req));
            E(MPI_Comm_free(&pair));
            for (k = 0; k < 4; ++k) {
                E(MPI_Comm_dup(MPI_COMM_SELF, &again[k]));
                E(MPI_Irecv(&others[k], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, again[k], &oreq[k]));
            }
            /* Tell rank 1 to send now. */
            E(MPI_Send(&got, 0, MPI_INT, peer, 6, MPI_COMM_WORLD));
            E(MPI_Wait(&req, MPI_STATUS_IGNORE));
            CHECK_INT("Irecv on a freed communicator", 1234, got);
            for (k = 0; k < 4; ++k) {
                E(MPI_Cancel(&oreq[k]));
                E(MPI_Wait(&oreq[k], MPI_STATUS_IGNORE));
                CHECK_INT("a receive on a new communicator took nothing", -1, others[k]);
                E(MPI_Comm_free(&again[k]));
            }
        } else {
            int v = 1234;
            E(MPI_Recv(NULL, 0, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            E(MPI_Send(&v, 1, MPI_INT, peer, 5, pair));
            E(MPI_Comm_free(&pair));
        }
    } else {
        MPI_Comm pair;
        E(MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, mt_rank, &pair));
        CHECK(pair == MPI_COMM_NULL, "split with MPI_UNDEFINED, got %d", MT_H(pair));
    }

    /* 4. Request_free on a nonblocking collective request.  Skipped for
     * Open MPI 4.1.4, which frees it (and then crashes in later traffic);
     * MPICH 4.0.2 refuses it with MPI_ERR_OTHER. */
    if (!MT_IS_OPENMPI) {
        E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        E(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
        E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        E(MPI_Ibarrier(dup, &req));
        {
            MPI_Request copy = req;
            rc = MPI_Request_free(&copy);
            E(MPI_Error_class(rc, &cls));
            if (MT_IS_MPICH)
                CHECK(rc != MPI_SUCCESS, "Request_free of an Ibarrier request succeeded");
            else
                CHECK_INT("Request_free of an Ibarrier request: error class", MPI_ERR_REQUEST, cls);
        }
        if (rc != MPI_SUCCESS)
            E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        E(MPI_Comm_free(&dup));
    }

    return mt_finish();
}
