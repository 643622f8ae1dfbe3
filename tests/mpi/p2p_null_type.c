/* Point-to-point with MPI_DATATYPE_NULL and other odd arguments, to
 * MPI_PROC_NULL and to real ranks (MPICH's pt2pt/recvnull):
 * - count 0 with MPI_DATATYPE_NULL is an empty message on every send,
 *   receive, persistent and sendrecv call, from/to MPI_PROC_NULL and to
 *   self (MPICH accepts it, and this library follows; Open MPI refuses it
 *   with MPI_ERR_TYPE, so that part is skipped there);
 * - with count 1 it is MPI_ERR_TYPE, to MPI_PROC_NULL too; so are an
 *   uncommitted type, a negative count (MPI_ERR_COUNT) and a negative tag
 *   (MPI_ERR_TAG), as in both peers. */
#include "mpitest.h"

#define CHECK_CLASS(what, expected, rc) CHECK_INT(what, expected, mt_class(rc))

#if !MT_IS_OPENMPI
static void check_proc_null_status(const MPI_Status *st, const char *what)
{
    int count = -1;
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG, "%s: status source %d tag %d", what,
          st->MPI_SOURCE, st->MPI_TAG);
    E(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK_INT("Get_count after a receive from MPI_PROC_NULL", 0, count);
}

static void test_null_type_empty_messages(void)
{
    MPI_Request r = MPI_REQUEST_NULL, rr[2];
    MPI_Status st;
    int count = -1;
    char bsend_buffer[MPI_BSEND_OVERHEAD + 64];
    void *detached;
    int detached_size;

    E(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    E(MPI_Wait(&r, &st));
#if !MT_IS_MPICH /* MPICH 4.0.2 returns source 0, tag 0 here (right with a real type) */
    check_proc_null_status(&st, "Irecv(PROC_NULL, DATATYPE_NULL)");
#endif
    E(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    check_proc_null_status(&st, "Recv(PROC_NULL, DATATYPE_NULL)");
    E(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    E(MPI_Ssend(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    E(MPI_Rsend(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    E(MPI_Buffer_attach(bsend_buffer, (int)sizeof bsend_buffer));
    E(MPI_Bsend(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    E(MPI_Buffer_detach(&detached, &detached_size));
    E(MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    E(MPI_Wait(&r, MPI_STATUS_IGNORE));
    E(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0,
                   MPI_COMM_WORLD, &st));
    check_proc_null_status(&st, "Sendrecv(PROC_NULL, DATATYPE_NULL)");
    E(MPI_Sendrecv_replace(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    E(MPI_Send_init(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rr[0]));
    E(MPI_Recv_init(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rr[1]));
    E(MPI_Startall(2, rr));
    E(MPI_Waitall(2, rr, MPI_STATUSES_IGNORE));
    E(MPI_Request_free(&rr[0]));
    E(MPI_Request_free(&rr[1]));

    /* To self: an empty message that matches. */
    E(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, mt_rank, 5, MPI_COMM_WORLD, &r));
    E(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, mt_rank, 5, MPI_COMM_WORLD));
    E(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == mt_rank && st.MPI_TAG == 5, "empty message to self: source %d tag %d", st.MPI_SOURCE,
          st.MPI_TAG);
    E(MPI_Get_count(&st, MPI_INT, &count));
    CHECK_INT("Get_count of an empty message of MPI_DATATYPE_NULL", 0, count);
}
#endif

static void test_errors(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    MPI_Datatype uncommitted;
    int buf[4] = {0, 0, 0, 0};

    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_CLASS("Irecv(PROC_NULL, 1 of DATATYPE_NULL)", MPI_ERR_TYPE,
                MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    CHECK_CLASS("Send(PROC_NULL, 3 of DATATYPE_NULL)", MPI_ERR_TYPE,
                MPI_Send(buf, 3, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    CHECK_CLASS("Recv(self, 1 of DATATYPE_NULL)", MPI_ERR_TYPE,
                MPI_Recv(buf, 1, MPI_DATATYPE_NULL, mt_rank, 0, MPI_COMM_WORLD, &st));
    CHECK_CLASS("Recv(PROC_NULL, count -1)", MPI_ERR_COUNT,
                MPI_Recv(buf, -1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK_CLASS("Recv(PROC_NULL, tag -5)", MPI_ERR_TAG,
                MPI_Recv(buf, 1, MPI_INT, MPI_PROC_NULL, -5, MPI_COMM_WORLD, &st));
    CHECK_CLASS("Send(PROC_NULL, MPI_ANY_TAG)", MPI_ERR_TAG,
                MPI_Send(buf, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD));
    E(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
    CHECK_CLASS("Recv(PROC_NULL, uncommitted type)", MPI_ERR_TYPE,
                MPI_Recv(buf, 1, uncommitted, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK_CLASS("Send(PROC_NULL, uncommitted type)", MPI_ERR_TYPE,
                MPI_Send(buf, 1, uncommitted, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    E(MPI_Type_free(&uncommitted));
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
#if !MT_IS_OPENMPI
    test_null_type_empty_messages();
#endif
    test_errors();
    return mt_finish();
}
