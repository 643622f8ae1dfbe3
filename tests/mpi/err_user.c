/* User error classes, codes and strings and user error handlers (MPI-3.1
 * 8.3-8.5):
 *  - Add_error_class / Add_error_code give new values above MPI_ERR_LASTCODE,
 *    Error_class maps each code to its class, Error_string gives the string
 *    set by Add_error_string ("" before one is set), MPI_LASTUSEDCODE covers
 *    them; Add_error_code on a code that is not a class fails (MPI_ERR_ARG);
 *  - Comm_call_errhandler runs a user handler with the communicator and the
 *    exact code (built-in and user codes) and returns MPI_SUCCESS; with
 *    MPI_ERRORS_RETURN it returns MPI_SUCCESS without calling anything;
 *  - every communicator constructor inherits the parent's handler: dup,
 *    split, create, create_group, intercomm_create (from local_comm) and
 *    intercomm_merge; a handler freed while attached keeps working, also on
 *    a communicator created from it afterwards and after its parent is gone.
 * Any size. */
#include "mpitest.h"

static int calls, last_code;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void record(MPI_Comm *comm, int *code, ...)
{
    ++calls;
    last_code = *code;
    last_comm = *comm;
}

/* The handler of comm must be eh and must run for Comm_call_errhandler. */
static void expect_handler(const char *what, MPI_Comm comm, MPI_Errhandler eh, int code)
{
    MPI_Errhandler got;
    int rc, same = MPI_UNEQUAL;
    char w[200];

    E(MPI_Comm_get_errhandler(comm, &got));
    CHECK(got == eh, "%s: error handler, expected the parent's %d got %d", what, MT_H(eh), MT_H(got));
    if (got != MPI_ERRORS_ARE_FATAL && got != MPI_ERRORS_RETURN)
        E(MPI_Errhandler_free(&got));
    calls = 0;
    last_comm = MPI_COMM_NULL;
    rc = MPI_Comm_call_errhandler(comm, code);
    snprintf(w, sizeof w, "%s: MPI_Comm_call_errhandler returns", what);
    CHECK_INT(w, MPI_SUCCESS, rc);
    snprintf(w, sizeof w, "%s: handler calls", what);
    CHECK_INT(w, 1, calls);
    snprintf(w, sizeof w, "%s: code passed to the handler", what);
    CHECK_INT(w, code, last_code);
    if (calls == 1 && last_comm != MPI_COMM_NULL)
        E(MPI_Comm_compare(last_comm, comm, &same));
    snprintf(w, sizeof w, "%s: communicator passed to the handler", what);
    CHECK_INT(w, MPI_IDENT, same);
}

int main(int argc, char **argv)
{
    int cls1 = -1, cls2 = -1, code1 = -1, code2 = -1, got = -1, len = -1, rc, flag = 0, *last;
    char str[MPI_MAX_ERROR_STRING];
    MPI_Errhandler eh;
    MPI_Comm dup, split, created, grouped, inter = MPI_COMM_NULL, merged = MPI_COMM_NULL, half, from_dup;
    MPI_Group world_group;

    mt_init(&argc, &argv);

    /* --- classes, codes, strings --- */
    E(MPI_Add_error_class(&cls1));
    E(MPI_Add_error_code(cls1, &code1));
    E(MPI_Add_error_class(&cls2));
    E(MPI_Add_error_code(cls2, &code2));
    CHECK(cls1 > MPI_ERR_LASTCODE && code1 > MPI_ERR_LASTCODE && cls2 > MPI_ERR_LASTCODE &&
              code2 > MPI_ERR_LASTCODE,
          "added classes/codes must be above MPI_ERR_LASTCODE (%d): got %d %d %d %d", MPI_ERR_LASTCODE, cls1, code1,
          cls2, code2);
    CHECK(cls1 != code1 && cls1 != cls2 && cls1 != code2 && code1 != cls2 && code1 != code2 && cls2 != code2,
          "added values must be distinct: %d %d %d %d", cls1, code1, cls2, code2);
    E(MPI_Error_class(code1, &got));
    CHECK_INT("MPI_Error_class of a code of the first added class", cls1, got);
    E(MPI_Error_class(code2, &got));
    CHECK_INT("MPI_Error_class of a code of the second added class", cls2, got);
    {
        /* A code in a predefined class. */
        int other = -1;
        E(MPI_Add_error_code(MPI_ERR_TRUNCATE, &other));
        E(MPI_Error_class(other, &got));
        CHECK_INT("MPI_Error_class of a code added to MPI_ERR_TRUNCATE", MPI_ERR_TRUNCATE, got);
    }
    str[0] = 'x';
    len = -1;
    E(MPI_Error_string(code2, str, &len));
    CHECK_INT("MPI_Error_string of a code with no string: length", 0, len);
    CHECK_STR("MPI_Error_string of a code with no string", "", str);
    E(MPI_Add_error_string(code2, "gridmpi: the second user code"));
    E(MPI_Error_string(code2, str, &len));
    CHECK_STR("MPI_Error_string of an added code", "gridmpi: the second user code", str);
    CHECK_INT("MPI_Error_string length of an added code", (int)strlen("gridmpi: the second user code"), len);
    E(MPI_Add_error_string(cls2, "gridmpi: the second user class"));
    E(MPI_Error_string(cls2, str, &len));
    CHECK_STR("MPI_Error_string of an added class", "gridmpi: the second user class", str);
    E(MPI_Error_string(code2, str, &len));
    CHECK_STR("the code's string is its own, not the class's", "gridmpi: the second user code", str);
    E(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK_INT("MPI_LASTUSEDCODE is set", 1, flag);
    /* MPICH 4.0.2 does not raise MPI_LASTUSEDCODE for added codes (bug). */
    if (flag && !MT_IS_MPICH)
        CHECK(*last >= code2 && *last >= cls2, "MPI_LASTUSEDCODE, expected >= %d got %d", code2, *last);

    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* Open MPI 4.1 and MPICH 4.0.2 accept a code as a class here. */
    if (!MT_IS_OPENMPI && !MT_IS_MPICH) {
        int bad = -1;
        rc = MPI_Add_error_code(code1, &bad);
        CHECK(rc != MPI_SUCCESS, "MPI_Add_error_code on a code that is not a class, expected an error got success");
    }
    rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, code1);
    CHECK_INT("MPI_Comm_call_errhandler with MPI_ERRORS_RETURN", MPI_SUCCESS, rc);

    /* --- a user handler, freed at once: it stays attached --- */
    E(MPI_Comm_create_errhandler(record, &eh));
    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    {
        MPI_Errhandler keep = eh;
        E(MPI_Errhandler_free(&eh));
        CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free sets MPI_ERRHANDLER_NULL, got %d", MT_H(eh));
        eh = keep; /* still the handle the communicators report */
    }
    expect_handler("MPI_COMM_WORLD, built-in code", MPI_COMM_WORLD, eh, MPI_ERR_OTHER);
    expect_handler("MPI_COMM_WORLD, user code", MPI_COMM_WORLD, eh, code2);
    expect_handler("MPI_COMM_WORLD, user class", MPI_COMM_WORLD, eh, cls1);
    calls = 0;
    rc = MPI_Send(NULL, 0, MPI_INT, mt_size, 0, MPI_COMM_WORLD);
    CHECK_INT("handler calls for an invalid rank", 1, calls);
    CHECK_INT("an invalid rank returns the code given to the handler", last_code, rc);

    /* --- inheritance by every constructor --- */
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    expect_handler("MPI_Comm_dup", dup, eh, code1);
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &split));
    expect_handler("MPI_Comm_split", split, eh, code1);
    E(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    E(MPI_Comm_create(MPI_COMM_WORLD, world_group, &created));
    /* MPICH 4.0.2 gives MPI_Comm_create's result MPI_ERRORS_ARE_FATAL. */
    if (!MT_IS_MPICH)
        expect_handler("MPI_Comm_create", created, eh, code1);
    E(MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 5, &grouped));
    if (!MT_IS_MPICH)
        expect_handler("MPI_Comm_create_group", grouped, eh, code1);
    E(MPI_Group_free(&world_group));
    /* A dup of a dup, made after the parent's handler was freed, and still
     * working after the parent is freed. */
    E(MPI_Comm_dup(dup, &from_dup));
    E(MPI_Comm_free(&dup));
    expect_handler("MPI_Comm_dup of a freed communicator's dup", from_dup, eh, code2);
    E(MPI_Comm_free(&from_dup));
    if (mt_size >= 2) {
        /* Two halves: even and odd world ranks; leaders are world ranks 0 and 1. */
        E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half));
        E(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, mt_rank % 2 ? 0 : 1, 7, &inter));
        expect_handler("MPI_Intercomm_create", inter, eh, code1);
        E(MPI_Intercomm_merge(inter, mt_rank % 2, &merged));
        if (!MT_IS_MPICH) /* MPICH 4.0.2: MPI_ERRORS_ARE_FATAL */
            expect_handler("MPI_Intercomm_merge", merged, eh, code1);
        E(MPI_Comm_free(&merged));
        E(MPI_Comm_free(&inter));
        E(MPI_Comm_free(&half));
    }
    E(MPI_Comm_free(&split));
    E(MPI_Comm_free(&created));
    E(MPI_Comm_free(&grouped));

    /* A handler set on a new communicator does not change the parent's. */
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    E(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    expect_handler("MPI_COMM_WORLD after its dup got another handler", MPI_COMM_WORLD, eh, code1);
    E(MPI_Comm_free(&dup));

    E(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    return mt_finish();
}
