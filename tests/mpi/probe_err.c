#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stddef.h>
#include <wchar.h>

#include "probe.h"

/* probe_err: MPI_ERRORS_RETURN really returns the right error class for bad
 * arguments of many calls, user error handlers are invoked, error strings,
 * truncation errors in statuses, user-defined error classes. */

static int expect_class(int rc, int cls, const char *what, int line)
{
    int ec = -1;
    if (rc == MPI_SUCCESS) {
        printf("FAIL: [rank %d] probe_err.c:%d: %s returned MPI_SUCCESS, expected class %d\n", p_rank, line, what, cls);
        fflush(stdout);
        p_errs++;
        return 0;
    }
    MPI_Error_class(rc, &ec);
    if (ec != cls) {
        printf("FAIL: [rank %d] probe_err.c:%d: %s returned class %d, expected %d\n", p_rank, line, what, ec, cls);
        fflush(stdout);
        p_errs++;
    }
    char s[MPI_MAX_ERROR_STRING];
    int len = -1;
    int r2 = MPI_Error_string(rc, s, &len);
    CHECK(r2 == MPI_SUCCESS && len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(s) == len, "%s: Error_string rc %d len %d", what, r2, len);
    return 1;
}
#define EXPECT(call, cls) expect_class((call), (cls), #call, __LINE__)

static int handler_calls = 0, handler_code = 0;
static MPI_Comm handler_comm = MPI_COMM_NULL;
static void my_handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p_rank = rank;
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default error handler is not ERRORS_ARE_FATAL");
    MPI_Errhandler_free(&eh);
    MPIOK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int buf[16] = {0};
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    void *v;
    int flag, tag_ub = 32767;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
    if (flag) tag_ub = *(int *)v;
    MPI_Request rq;
    /* point to point */
    EXPECT(MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(buf, 1, MPI_INT, -3, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(buf, 1, MPI_INT, right, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Send(buf, 1, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    if (tag_ub < 2147483647) EXPECT(MPI_Send(buf, 1, MPI_INT, right, tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Send(buf, -1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Send(buf, 1, MPI_DATATYPE_NULL, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Recv(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    EXPECT(MPI_Recv(buf, 1, MPI_INT, left, -2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TAG);
    EXPECT(MPI_Irecv(buf, -5, MPI_INT, left, 0, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    EXPECT(MPI_Isend(buf, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    EXPECT(MPI_Ssend(buf, 1, MPI_INT, right, -7, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Send_init(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    EXPECT(MPI_Iprobe(size, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    EXPECT(MPI_Sendrecv(buf, 1, MPI_INT, right, 0, buf + 1, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    EXPECT(MPI_Send(buf, 1, uncommitted, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Type_free(&uncommitted);
    /* collectives */
    EXPECT(MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Bcast(buf, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Reduce(buf, buf + 4, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(buf, buf + 4, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Gather(buf, 1, MPI_INT, buf + 4, 1, MPI_INT, size + 1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    /* groups / comms / types */
    MPI_Group gw, g;
    MPI_Comm_group(MPI_COMM_WORLD, &gw);
    int bad = size;
    EXPECT(MPI_Group_incl(gw, 1, &bad, &g), MPI_ERR_RANK);
    MPI_Group_free(&gw);
    MPI_Comm c;
    EXPECT(MPI_Comm_dup(MPI_COMM_NULL, &c), MPI_ERR_COMM);
    EXPECT(MPI_Type_commit(&(MPI_Datatype){MPI_DATATYPE_NULL}), MPI_ERR_TYPE);
    MPI_Datatype nt;
    EXPECT(MPI_Type_contiguous(-1, MPI_INT, &nt), MPI_ERR_COUNT);
    if (size > 1) {
    /* truncation: Recv, Wait, Waitall with ERR_IN_STATUS */
    int big[8] = {1, 2, 3, 4, 5, 6, 7, 8}, small[8];
    for (int i = 0; i < 8; i++) small[i] = -1;
    MPI_Request r2[3];
    MPI_Status st[3];
    MPI_Irecv(small, 2, MPI_INT, left, 5, MPI_COMM_WORLD, &r2[0]);
    MPI_Isend(big, 8, MPI_INT, right, 5, MPI_COMM_WORLD, &r2[1]);
    MPI_Wait(&r2[1], MPI_STATUS_IGNORE);
    int rc = MPI_Wait(&r2[0], &st[0]);
    EXPECT(rc, MPI_ERR_TRUNCATE);
    CHECK(small[2] == -1, "truncated receive wrote past the buffer");
    int x = 0, y = 0;
    MPI_Irecv(&x, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &r2[0]);
    MPI_Irecv(small, 2, MPI_INT, left, 7, MPI_COMM_WORLD, &r2[1]);
    MPI_Request s2[2];
    MPI_Isend(&y, 1, MPI_INT, right, 6, MPI_COMM_WORLD, &s2[0]);
    MPI_Isend(big, 8, MPI_INT, right, 7, MPI_COMM_WORLD, &s2[1]);
    st[0].MPI_ERROR = -999; st[1].MPI_ERROR = -999;
    rc = MPI_Waitall(2, r2, st);
    CHECK(rc == MPI_ERR_IN_STATUS, "Waitall with truncation returned %d expected MPI_ERR_IN_STATUS", rc);
    int c1 = -1;
    MPI_Error_class(st[1].MPI_ERROR, &c1);
    CHECK(st[0].MPI_ERROR == MPI_SUCCESS && c1 == MPI_ERR_TRUNCATE, "Waitall statuses errors %d %d", st[0].MPI_ERROR, st[1].MPI_ERROR);
    MPI_Waitall(2, s2, MPI_STATUSES_IGNORE);
    rc = MPI_Sendrecv(big, 8, MPI_INT, right, 8, small, 3, MPI_INT, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT(rc, MPI_ERR_TRUNCATE);
    }
    /* communication still works after errors */
    int x = -1, y = 4321;
    MPIOK(MPI_Sendrecv(&y, 1, MPI_INT, right, 9, &x, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(x == 4321, "after errors got %d", x);

    /* user handler on a dup: called with the dup and the code; ERRORS_RETURN on world unaffected */
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_get_errhandler(d, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "dup did not inherit ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    MPI_Errhandler mine;
    MPIOK(MPI_Comm_create_errhandler(my_handler, &mine));
    MPIOK(MPI_Comm_set_errhandler(d, mine));
    MPIOK(MPI_Errhandler_free(&mine));
    CHECK(mine == MPI_ERRHANDLER_NULL, "Errhandler_free did not null");
    (void)MPI_Send(buf, 1, MPI_INT, size + 2, 0, d);
    CHECK(handler_calls == 1, "user handler called %d times", handler_calls);
    int hc = -1;
    MPI_Error_class(handler_code, &hc);
    CHECK(hc == MPI_ERR_RANK, "user handler code class %d", hc);
    int cmp = -1;
    if (handler_calls) MPI_Comm_compare(handler_comm, d, &cmp);
    CHECK(cmp == MPI_IDENT, "user handler got another comm (%d)", cmp);
    MPI_Comm d2;
    MPI_Comm_dup(d, &d2);
    MPI_Recv(buf, 1, MPI_INT, 0, -9, d2, MPI_STATUS_IGNORE);
    CHECK(handler_calls == 2, "user handler on dup-of-dup called %d times", handler_calls);
    MPI_Comm_call_errhandler(d2, MPI_ERR_OTHER);
    CHECK(handler_calls == 3 && handler_code == MPI_ERR_OTHER, "Comm_call_errhandler: calls %d code %d", handler_calls, handler_code);
    MPI_Comm_free(&d2);
    MPI_Comm_free(&d);
    /* error class/string of every predefined class */
    int last = 0;
    void *lv;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lv, &flag);
    CHECK(flag, "MPI_LASTUSEDCODE not set");
    if (flag) last = *(int *)lv;
    CHECK(last >= MPI_ERR_LASTCODE, "LASTUSEDCODE %d < ERR_LASTCODE %d", last, MPI_ERR_LASTCODE);
    int classes[] = {MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG, MPI_ERR_COMM, MPI_ERR_RANK,
                     MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP, MPI_ERR_TOPOLOGY, MPI_ERR_DIMS, MPI_ERR_ARG,
                     MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN, MPI_ERR_IN_STATUS, MPI_ERR_PENDING,
                     MPI_ERR_KEYVAL, MPI_ERR_NO_MEM, MPI_ERR_BASE, MPI_ERR_INFO_KEY, MPI_ERR_INFO_VALUE, MPI_ERR_INFO_NOKEY,
                     MPI_ERR_SPAWN, MPI_ERR_PORT, MPI_ERR_SERVICE, MPI_ERR_NAME, MPI_ERR_WIN, MPI_ERR_SIZE, MPI_ERR_DISP,
                     MPI_ERR_INFO, MPI_ERR_LOCKTYPE, MPI_ERR_ASSERT, MPI_ERR_RMA_CONFLICT, MPI_ERR_RMA_SYNC, MPI_ERR_FILE,
                     MPI_ERR_NOT_SAME, MPI_ERR_AMODE, MPI_ERR_UNSUPPORTED_DATAREP, MPI_ERR_UNSUPPORTED_OPERATION,
                     MPI_ERR_NO_SUCH_FILE, MPI_ERR_FILE_EXISTS, MPI_ERR_BAD_FILE, MPI_ERR_ACCESS, MPI_ERR_NO_SPACE,
                     MPI_ERR_QUOTA, MPI_ERR_READ_ONLY, MPI_ERR_FILE_IN_USE, MPI_ERR_DUP_DATAREP, MPI_ERR_CONVERSION,
                     MPI_ERR_IO, MPI_ERR_RMA_RANGE, MPI_ERR_RMA_ATTACH, MPI_ERR_RMA_SHARED, MPI_ERR_RMA_FLAVOR};
    for (unsigned k = 0; k < sizeof classes / sizeof classes[0]; k++) {
        int e = classes[k];
        char s[MPI_MAX_ERROR_STRING];
        int len = -1, cl = -1;
        s[0] = 0;
        CHECK(e >= 0 && e <= MPI_ERR_LASTCODE, "class %d outside [0, MPI_ERR_LASTCODE]", e);
        int r1 = MPI_Error_string(e, s, &len);
        int r3 = MPI_Error_class(e, &cl);
        CHECK(r1 == MPI_SUCCESS && len > 0 && (int)strlen(s) == len, "Error_string(%d) rc %d len %d", e, r1, len);
        CHECK(r3 == MPI_SUCCESS && cl == e, "Error_class(%d) = %d", e, cl);
    }
    /* user error classes and codes */
    int ncls, ncode;
    MPIOK(MPI_Add_error_class(&ncls));
    MPIOK(MPI_Add_error_code(ncls, &ncode));
    MPIOK(MPI_Add_error_string(ncode, "probe user code"));
    CHECK(ncls > MPI_ERR_LASTCODE && ncode > MPI_ERR_LASTCODE, "new class %d code %d", ncls, ncode);
    int cl = -1;
    MPI_Error_class(ncode, &cl);
    CHECK(cl == ncls, "class of new code %d expected %d", cl, ncls);
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(ncode, s, &len);
    CHECK(strcmp(s, "probe user code") == 0, "new code string '%s'", s);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lv, &flag);
    CHECK(flag && *(int *)lv >= ncode, "LASTUSEDCODE not updated");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    p_finish();
    return 0;
}
