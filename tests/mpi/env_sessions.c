/* MPI-4.0 sessions.  MT_SESSION_MODE picks how the process uses MPI:
 *   only  (default) no MPI_Init at all: MPI_Initialized/Finalized stay 0
 *         while a session is open, two sessions overlap, and the process
 *         ends with its last MPI_Session_finalize;
 *   world MPI_Init first, a session inside, MPI_Finalize while the session
 *         is still open (its communicator keeps working), then
 *         MPI_Session_finalize.
 * In both: the process sets mpi://WORLD and mpi://SELF (names, lengths,
 * truncation, mpi_size, case-insensitive look-up), the session's info
 * (thread_level), communicators from groups (reduce and point-to-point on
 * them, the error handler given), an intercommunicator from two groups, a
 * session error handler (MPI_ERRORS_RETURN, then a user function) seeing a
 * bad process-set name. */
#include "mpitest.h"

#if defined(GRIDMPI_VERSION_STRING) || MPI_VERSION >= 4

static int handler_calls = 0;
static int handler_code = 0;

static void session_handler(MPI_Session *session, int *code, ...)
{
    (void)session;
    ++handler_calls;
    handler_code = *code;
}

/* mt_rank/mt_size from a communicator (there may be no MPI_COMM_WORLD). */
static void use_comm(MPI_Comm comm)
{
    E(MPI_Comm_rank(comm, &mt_rank));
    E(MPI_Comm_size(comm, &mt_size));
}

static void check_psets(MPI_Session s, int world_size)
{
    int n = -1, i, len, flag = 0, got_world = 0, got_self = 0;
    char name[MPI_MAX_PSET_NAME_LEN], small[5], value[64];
    MPI_Info info = MPI_INFO_NULL;
    MPI_Group g = MPI_GROUP_NULL;

    E(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "MPI_Session_get_num_psets, expected >= 2 got %d", n);
    for (i = 0; i < n; ++i) {
        len = 0;
        E(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d: length %d", i, len);
        E(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK_INT("strlen(name) + 1", len, (int)strlen(name) + 1);
        /* A short buffer gets a truncated, terminated name and the full length. */
        len = (int)sizeof small;
        E(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, small));
        CHECK(strlen(small) == sizeof small - 1 && strncmp(small, name, sizeof small - 1) == 0,
              "truncated pset name, expected the first %d characters of %s got %s", (int)sizeof small - 1, name,
              small);
        /* MPI-4.0 11.3.2: pset_len is set to the length needed.  MPICH 4.0.2
         * leaves it as given. */
        if (!MT_IS_MPICH) CHECK_INT("length after truncation", (int)strlen(name) + 1, len);

        E(MPI_Session_get_pset_info(s, name, &info));
        E(MPI_Info_get(info, "mpi_size", (int)sizeof value - 1, value, &flag));
        CHECK(flag, "pset %s: no mpi_size", name);
        if (strcmp(name, "mpi://WORLD") == 0) {
            got_world = 1;
            CHECK_INT("mpi_size of mpi://WORLD", world_size, atoi(value));
        } else if (strcmp(name, "mpi://SELF") == 0) {
            got_self = 1;
            CHECK_INT("mpi_size of mpi://SELF", 1, atoi(value));
        }
        E(MPI_Info_free(&info));
    }
    CHECK(got_world && got_self, "psets: mpi://WORLD %d, mpi://SELF %d", got_world, got_self);

    /* Names match without regard to case. */
    E(MPI_Group_from_session_pset(s, "mpi://self", &g));
    E(MPI_Group_size(g, &n));
    CHECK_INT("size of mpi://self", 1, n);
    E(MPI_Group_free(&g));
}

static void check_errors(MPI_Session s)
{
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    int rc, cls = -1;

    E(MPI_Session_get_errhandler(s, &got));
    CHECK(got == MPI_ERRORS_RETURN, "MPI_Session_get_errhandler, expected MPI_ERRORS_RETURN got %d", MT_H(got));
    E(MPI_Errhandler_free(&got));
    rc = MPI_Group_from_session_pset(s, "mpi://NO_SUCH_SET", &g);
    MPI_Error_class(rc, &cls);
    CHECK_INT("error class of an unknown pset", MPI_ERR_ARG, cls);

    E(MPI_Session_create_errhandler(session_handler, &eh));
    E(MPI_Session_set_errhandler(s, eh));
    rc = MPI_Group_from_session_pset(s, "mpi://NO_SUCH_SET", &g);
    CHECK_INT("calls of the session's handler", 1, handler_calls);
    MPI_Error_class(handler_code, &cls);
    CHECK_INT("class seen by the session's handler", MPI_ERR_ARG, cls);
    E(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK_INT("calls after MPI_Session_call_errhandler", 2, handler_calls);
    CHECK_INT("code given by MPI_Session_call_errhandler", MPI_ERR_OTHER, handler_code);
    E(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    E(MPI_Errhandler_free(&eh));
}

/* A communicator over mpi://WORLD: reduce, a ring exchange, its error handler. */
static MPI_Comm world_comm(MPI_Session s, const char *tag)
{
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int rank, size, sum = -1, left = -1;

    E(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    E(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    E(MPI_Group_free(&g));
    if (c == MPI_COMM_NULL) MT_FATAL("MPI_Comm_create_from_group gave MPI_COMM_NULL");
    E(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "errhandler of the new communicator, expected MPI_ERRORS_RETURN got %d",
          MT_H(eh));
    E(MPI_Errhandler_free(&eh));
    E(MPI_Comm_rank(c, &rank));
    E(MPI_Comm_size(c, &size));
    E(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_INT("allreduce of ranks", size * (size - 1) / 2, sum);
    E(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 5, &left, 1, MPI_INT, (rank + size - 1) % size, 5, c,
                   MPI_STATUS_IGNORE));
    CHECK_INT("ring neighbour", (rank + size - 1) % size, left);
    return c;
}

/* Lower and upper halves of mpi://WORLD joined by an intercommunicator. */
static void check_intercomm(MPI_Session s, int rank, int size)
{
    MPI_Group world = MPI_GROUP_NULL, low = MPI_GROUP_NULL, high = MPI_GROUP_NULL;
    MPI_Comm inter = MPI_COMM_NULL;
    int range[1][3], remote = -1, flag = 0, mine, theirs = -1;
    int half = size / 2;

    if (size < 2) return;
    E(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    range[0][0] = 0, range[0][1] = half - 1, range[0][2] = 1;
    E(MPI_Group_range_incl(world, 1, range, &low));
    range[0][0] = half, range[0][1] = size - 1, range[0][2] = 1;
    E(MPI_Group_range_incl(world, 1, range, &high));
    if (rank < half)
        E(MPI_Intercomm_create_from_groups(low, 0, high, 0, "env_sessions inter", MPI_INFO_NULL,
                                           MPI_ERRORS_RETURN, &inter));
    else
        E(MPI_Intercomm_create_from_groups(high, 0, low, 0, "env_sessions inter", MPI_INFO_NULL,
                                           MPI_ERRORS_RETURN, &inter));
    E(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "MPI_Intercomm_create_from_groups: not an intercommunicator");
    E(MPI_Comm_remote_size(inter, &remote));
    CHECK_INT("remote size", rank < half ? size - half : half, remote);
    /* Local rank 0 of each side swaps world ranks with the other's rank 0. */
    mine = rank;
    E(MPI_Comm_rank(inter, &flag));
    if (flag == 0) {
        E(MPI_Sendrecv(&mine, 1, MPI_INT, 0, 9, &theirs, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE));
        CHECK_INT("the other side's leader", rank < half ? half : 0, theirs);
    }
    E(MPI_Comm_free(&inter));
    E(MPI_Group_free(&low));
    E(MPI_Group_free(&high));
    E(MPI_Group_free(&world));
}

static void check_thread_level(MPI_Session s, const char *expected)
{
    MPI_Info used = MPI_INFO_NULL;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    E(MPI_Session_get_info(s, &used));
    E(MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag, "session info has no thread_level");
    if (flag && expected) CHECK_STR("session thread_level", expected, value);
    E(MPI_Info_free(&used));
}

int main(int argc, char **argv)
{
    const char *mode = getenv("MT_SESSION_MODE");
    int world_model = mode && strcmp(mode, "world") == 0;
    MPI_Session s1 = MPI_SESSION_NULL, s2 = MPI_SESSION_NULL;
    MPI_Info hints = MPI_INFO_NULL;
    MPI_Comm c1 = MPI_COMM_NULL, c2 = MPI_COMM_NULL, self = MPI_COMM_NULL;
    MPI_Group g = MPI_GROUP_NULL;
    int flag = -1, provided = -1, world_size = -1, rank, size, v;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (world_model) {
        E(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
        E(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
    }
    E(MPI_Info_create(&hints));
    E(MPI_Info_set(hints, "thread_level", "MPI_THREAD_MULTIPLE"));
    E(MPI_Info_set(hints, "env_sessions.hint", "kept"));
    E(MPI_Session_init(hints, MPI_ERRORS_RETURN, &s1));
    E(MPI_Info_free(&hints));
    if (s1 == MPI_SESSION_NULL) {
        printf("FAIL: MPI_Session_init gave MPI_SESSION_NULL\n");
        return 1;
    }
    E(MPI_Initialized(&flag));
    CHECK_INT("MPI_Initialized with a session open", world_model, flag);
    check_thread_level(s1, world_model && provided != MPI_THREAD_MULTIPLE ? NULL : "MPI_THREAD_MULTIPLE");

    c1 = world_comm(s1, "env_sessions one");
    use_comm(c1);
    if (world_size >= 0) CHECK_INT("size of the mpi://WORLD communicator", world_size, mt_size);
    check_psets(s1, mt_size);
    /* MPICH 4.0.2 ignores a session's error handler (an unknown pset name
     * aborts the job under MPI_ERRORS_RETURN). */
    if (!MT_IS_MPICH) check_errors(s1);
    check_intercomm(s1, mt_rank, mt_size);

    /* A communicator over mpi://SELF. */
    E(MPI_Group_from_session_pset(s1, "mpi://SELF", &g));
    E(MPI_Comm_create_from_group(g, "env_sessions self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &self));
    E(MPI_Group_free(&g));
    E(MPI_Comm_size(self, &size));
    CHECK_INT("size of the mpi://SELF communicator", 1, size);
    E(MPI_Comm_free(&self));

    /* A second session overlapping the first, its communicator beside c1's. */
    E(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    c2 = world_comm(s2, "env_sessions two");
    E(MPI_Comm_rank(c2, &rank));
    CHECK_INT("rank in the second session's communicator", mt_rank, rank);

    if (world_model) {
        /* MPI_Finalize ends the world model only: the sessions go on. */
        E(MPI_Finalize());
        E(MPI_Finalized(&flag));
        CHECK_INT("MPI_Finalized after MPI_Finalize with sessions open", 1, flag);
    }
    E(MPI_Comm_free(&c2));
    E(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL, "MPI_Session_finalize did not set the handle to MPI_SESSION_NULL");

    /* The first session still works after the second ended. */
    v = mt_rank;
    E(MPI_Bcast(&v, 1, MPI_INT, mt_size - 1, c1));
    CHECK_INT("bcast after the second session ended", mt_size - 1, v);
    E(MPI_Allreduce(MPI_IN_PLACE, &mt_errors, 1, MPI_INT, MPI_SUM, c1));
    E(MPI_Comm_free(&c1));
    E(MPI_Finalized(&flag));
    CHECK_INT("MPI_Finalized before the last session ends", world_model, flag);
    if (mt_errors > 0) {
        printf("FAIL: [rank %d] failed check(s) (%d over all ranks)\n", mt_rank, mt_errors);
        return 1;
    }
    E(MPI_Session_finalize(&s1));
    return 0;
}
#else
int main(void)
{
    printf("MPI-%d.%d has no sessions; nothing tested\n", MPI_VERSION, MPI_SUBVERSION);
    return 0;
}
#endif
