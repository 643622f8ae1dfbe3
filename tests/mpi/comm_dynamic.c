/* Process creation and management (MPI-3.1 chapter 10) where a library
 * does not support it: every function links and fails cleanly.
 * - MPI_Comm_get_parent gives MPI_COMM_NULL (not spawned);
 * - MPI_Comm_disconnect(MPI_COMM_NULL) is MPI_ERR_COMM (mpi4py's
 *   test_exceptions); on a dup it frees it (handle MPI_COMM_NULL) and
 *   communication pending on it completes;
 * - MPI_Comm_disconnect waits for the communication pending on the
 *   communicator (MPI-3.1 10.5.4), also of freed requests: a large message
 *   to the next rank whose send and matched receive were both freed has
 *   arrived whole when it returns, and the sender may reuse its buffer at
 *   once; a receive no message matches is not waited for (it stays pending
 *   and can be cancelled);
 * - gridmpi only (the peers implement them): Comm_spawn and
 *   Comm_spawn_multiple report MPI_ERR_SPAWN (every error code too, the
 *   intercommunicator MPI_COMM_NULL), Open_port and Comm_join
 *   MPI_ERR_UNSUPPORTED_OPERATION, Close_port / Comm_accept / Comm_connect
 *   MPI_ERR_PORT, Publish_name MPI_ERR_UNSUPPORTED_OPERATION, Unpublish_name
 *   MPI_ERR_SERVICE, Lookup_name MPI_ERR_NAME; a bad root is MPI_ERR_ROOT. */
#include "mpitest.h"

#define CHECK_CLASS(what, expected, rc) CHECK_INT(what, expected, mt_class(rc))

static void test_parent_and_disconnect(void)
{
    MPI_Comm parent = MPI_COMM_WORLD, null = MPI_COMM_NULL, dup;
    MPI_Request r[2];
    int out = 1000 + mt_rank, in = -1, rc;

    E(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "Comm_get_parent of a process started by mpirun: not MPI_COMM_NULL");

    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Comm_disconnect(&null);
    CHECK_CLASS("Comm_disconnect(MPI_COMM_NULL)", MPI_ERR_COMM, rc);
    CHECK(null == MPI_COMM_NULL, "Comm_disconnect(MPI_COMM_NULL) changed the handle");
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    /* A message to the next rank on a dup, pending when it is disconnected. */
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    E(MPI_Irecv(&in, 1, MPI_INT, (mt_rank + mt_size - 1) % mt_size, 7, dup, &r[0]));
    E(MPI_Isend(&out, 1, MPI_INT, (mt_rank + 1) % mt_size, 7, dup, &r[1]));
    E(MPI_Comm_disconnect(&dup));
    CHECK(dup == MPI_COMM_NULL, "Comm_disconnect did not set the handle to MPI_COMM_NULL");
    E(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK_INT("message received on a disconnected dup", 1000 + (mt_rank + mt_size - 1) % mt_size, in);
}

/* Large enough for the rendezvous protocol on every transport: the data
 * moves only while both processes make progress. */
#define DISCONNECT_INTS (1 << 20)

static int disconnect_value(int sender, int i)
{
    return sender * 7919 + i;
}

#if !MT_IS_MPICH
static void test_disconnect_waits(void)
{
    MPI_Comm dup;
    MPI_Request s, r, unmatched;
    MPI_Status st;
    int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
    int *out = malloc(DISCONNECT_INTS * sizeof *out), *in = malloc(DISCONNECT_INTS * sizeof *in);
    int i, bad = 0, first_bad = -1, cancelled = 0, never = -1;

    if (!out || !in)
        MT_FATAL("out of memory");
    for (i = 0; i < DISCONNECT_INTS; ++i) {
        out[i] = disconnect_value(mt_rank, i);
        in[i] = -1;
    }
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
#if !MT_IS_OPENMPI
    /* gridmpi's choice, not the standard's (it requires every receive to be
     * matched first). */
    E(MPI_Irecv(&never, 1, MPI_INT, prev, 99, dup, &unmatched));
#endif
    E(MPI_Isend(out, DISCONNECT_INTS, MPI_INT, next, 8, dup, &s));
    E(MPI_Request_free(&s));
    /* The message is here (its envelope at least): the receive matches it. */
    E(MPI_Probe(prev, 8, dup, &st));
    E(MPI_Irecv(in, DISCONNECT_INTS, MPI_INT, prev, 8, dup, &r));
    E(MPI_Request_free(&r));
    E(MPI_Comm_disconnect(&dup));
    CHECK(dup == MPI_COMM_NULL, "Comm_disconnect did not set the handle to MPI_COMM_NULL");
    /* No MPI call since: everything must have happened inside it. */
    for (i = 0; i < DISCONNECT_INTS; ++i) {
        if (in[i] != disconnect_value(prev, i) && bad++ == 0) first_bad = i;
        out[i] = -2;  /* the send is complete: the buffer is the program's again */
    }
    CHECK(bad == 0, "after Comm_disconnect, %d of %d ints of a freed receive missing or wrong (first at %d: %d)",
          bad, DISCONNECT_INTS, first_bad, first_bad >= 0 ? in[first_bad] : 0);
    /* Everyone has checked before a sender's buffer could be read again. */
    mt_barrier();
#if !MT_IS_OPENMPI
    E(MPI_Cancel(&unmatched));
    E(MPI_Wait(&unmatched, &st));
    E(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled, "an unmatched receive on a disconnected communicator could not be cancelled");
    CHECK_INT("buffer of the cancelled receive", -1, never);
#else
    (void)unmatched;
    (void)cancelled;
    (void)never;
#endif
    free(out);
    free(in);
}
#endif

#if !MT_IS_OPENMPI && !MT_IS_MPICH
static void test_unsupported(void)
{
    MPI_Comm inter = MPI_COMM_WORLD, newcomm = MPI_COMM_WORLD;
    char port[MPI_MAX_PORT_NAME];
    char *commands[2] = {"true", "true"};
    int maxprocs[2] = {1, 2}, codes[3] = {0, 0, 0}, i, rc;
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};

    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Comm_spawn("true", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
    CHECK_CLASS("Comm_spawn", MPI_ERR_SPAWN, rc);
    CHECK(inter == MPI_COMM_NULL, "Comm_spawn: intercomm is not MPI_COMM_NULL");
    CHECK(codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN && codes[2] == 0,
          "Comm_spawn error codes %d %d %d", codes[0], codes[1], codes[2]);
    rc = MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, mt_size, MPI_COMM_WORLD, &inter,
                        MPI_ERRCODES_IGNORE);
    CHECK_CLASS("Comm_spawn with root = size", MPI_ERR_ROOT, rc);
    inter = MPI_COMM_WORLD;
    rc = MPI_Comm_spawn_multiple(2, commands, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, &inter, codes);
    CHECK_CLASS("Comm_spawn_multiple", MPI_ERR_SPAWN, rc);
    CHECK(inter == MPI_COMM_NULL, "Comm_spawn_multiple: intercomm is not MPI_COMM_NULL");
    for (i = 0; i < 3; ++i)
        CHECK_INT("Comm_spawn_multiple error code", MPI_ERR_SPAWN, codes[i]);

    port[0] = 'x';
    rc = MPI_Open_port(MPI_INFO_NULL, port);
    CHECK_CLASS("Open_port", MPI_ERR_UNSUPPORTED_OPERATION, rc);
    CHECK(port[0] == '\0', "Open_port left a port name");
    CHECK_CLASS("Close_port", MPI_ERR_PORT, MPI_Close_port("tcp://nowhere"));
    rc = MPI_Comm_accept("tcp://nowhere", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &newcomm);
    CHECK_CLASS("Comm_accept", MPI_ERR_PORT, rc);
    CHECK(newcomm == MPI_COMM_NULL, "Comm_accept: newcomm is not MPI_COMM_NULL");
    newcomm = MPI_COMM_WORLD;
    rc = MPI_Comm_connect("tcp://nowhere", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &newcomm);
    CHECK_CLASS("Comm_connect", MPI_ERR_PORT, rc);
    CHECK(newcomm == MPI_COMM_NULL, "Comm_connect: newcomm is not MPI_COMM_NULL");
    newcomm = MPI_COMM_WORLD;
    rc = MPI_Comm_join(-1, &newcomm);
    CHECK_CLASS("Comm_join", MPI_ERR_UNSUPPORTED_OPERATION, rc);
    CHECK(newcomm == MPI_COMM_NULL, "Comm_join: intercomm is not MPI_COMM_NULL");
    CHECK_CLASS("Publish_name", MPI_ERR_UNSUPPORTED_OPERATION, MPI_Publish_name("svc", MPI_INFO_NULL, "p"));
    CHECK_CLASS("Unpublish_name", MPI_ERR_SERVICE, MPI_Unpublish_name("svc", MPI_INFO_NULL, "p"));
    port[0] = 'x';
    CHECK_CLASS("Lookup_name", MPI_ERR_NAME, MPI_Lookup_name("svc", MPI_INFO_NULL, port));
    CHECK(port[0] == '\0', "Lookup_name left a port name");
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}
#endif

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    test_parent_and_disconnect();
#if !MT_IS_MPICH
    /* MPICH 4.0.2 returns from Comm_disconnect before freed requests have
     * completed (the receiver finds old data, or the sender's later writes). */
    test_disconnect_waits();
#endif
#if !MT_IS_OPENMPI && !MT_IS_MPICH
    test_unsupported();
#endif
    return mt_finish();
}
