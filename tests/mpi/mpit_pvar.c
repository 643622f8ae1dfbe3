/* MPI_T performance variables (MPI-3.1 14.3.7), C only.
 *  - every pvar: get_info (the (name, name_len) rule: length query,
 *    truncation), get_index back to it with its class, in exactly one
 *    category, the one of its name's prefix;
 *  - request.messages_received: a counter of MPI_UNSIGNED_LONG_LONG, bound to
 *    no object, not continuous, not atomic, resettable (readonly 0), found
 *    with its class and not with another; category "request" lists it;
 *  - a handle counts exactly the messages that arrive while it is started:
 *    stopped (new) it counts nothing, start/stop freeze and resume, a second
 *    start or stop changes nothing, reset zeroes it (also while started),
 *    handles of one session and of two sessions count independently,
 *    MPI_T_PVAR_ALL_HANDLES starts/stops/resets every handle of its session
 *    and none of another;
 *  - write -> MPI_T_ERR_PVAR_NO_WRITE, readreset -> MPI_T_ERR_PVAR_NO_ATOMIC,
 *    MPI_T_PVAR_ALL_HANDLES with read/write/readreset, a handle with another
 *    session, a null handle -> MPI_T_ERR_INVALID_HANDLE, a bad session ->
 *    MPI_T_ERR_INVALID_SESSION, a bad index -> MPI_T_ERR_INVALID_INDEX;
 *    handle_free sets MPI_T_PVAR_HANDLE_NULL; session_free with live
 *    handles frees them;
 *  - pvars listed before MPI_Init; a handle started before MPI_Init counts
 *    across it and is read after MPI_Finalize.
 *
 * The counted traffic: with one process, rank 0 sends messages to itself;
 * with two, rank 1 asks rank 0 (one "go" message carrying n) and receives n
 * messages from it.  Each process checks its handles only at a point where
 * nothing can arrive: rank 1 after its n messages (rank 0 sends nothing
 * before the next "go"), rank 0 after a "go" and before sending the n
 * messages it asks for (rank 1 waits for them).  So one round of n brings
 * exactly n messages to rank 1 (to rank 0 alone) and exactly one to rank 0
 * of two.  No collective runs between MPI_Init and MPI_Finalize, and a last
 * round of 0 keeps rank 0 out of MPI_Finalize until rank 1 has checked.
 * The request.messages_received checks are gridmpi's; other implementations
 * run the listing and session checks only. */
#include "mpitest.h"

#define IS_GRIDMPI (!MT_IS_OPENMPI && !MT_IS_MPICH)

#define TAG_GO 11
#define TAG_DATA 12
#define N 37

static int owed = 0; /* rank 0 of two: messages the last "go" asked for, not sent yet */

static void send_owed(void)
{
    int i;
    for (i = 0; i < owed; ++i)
        E(MPI_Send(&i, 1, MPI_INT, 1, TAG_DATA, MPI_COMM_WORLD));
    owed = 0;
}

/* One round of n messages; returns at this process's quiet point. */
static void traffic(int n)
{
    int i, v = -1;
    if (mt_size == 1) {
        for (i = 0; i < n; ++i) {
            E(MPI_Sendrecv(&i, 1, MPI_INT, 0, TAG_DATA, &v, 1, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
            CHECK_INT("message to self", i, v);
        }
    } else if (mt_rank == 1) {
        E(MPI_Send(&n, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD));
        for (i = 0; i < n; ++i) {
            E(MPI_Recv(&v, 1, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_INT("message of a round", i, v);
        }
    } else if (mt_rank == 0) {
        send_owed();
        E(MPI_Recv(&owed, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

/* Messages one round of n brings to this process. */
static long long arrivals(int n)
{
    if (mt_size == 1 || mt_rank == 1)
        return n;
    return mt_rank == 0 ? 1 : 0;
}

static unsigned long long value(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 12345678;
    E(MPI_T_pvar_read(s, h, &v));
    return v;
}

/* Every pvar: its description, index and category. */
static void check_listing(void)
{
    int num = -1, ncat = -1, i, c;
    int *seen;
    E(MPI_T_pvar_get_num(&num));
    if (IS_GRIDMPI)
        CHECK(num >= 1, "MPI_T_pvar_get_num: %d, expected request.messages_received at least", num);
    for (i = 0; i < num; ++i) {
        char name[256], desc[1024], shortname[3];
        int name_len = 0, desc_len = 0, verbosity = -1, var_class = -1, bind = -1, readonly = -1;
        int continuous = -1, atomic = -1, shortlen = 3, back = -1;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum en;
        /* length query: NULL buffers (the other outputs NULL too: gridmpi
         * allows it, the reference implementations do not all) */
        if (IS_GRIDMPI)
            E(MPI_T_pvar_get_info(i, NULL, &name_len, NULL, NULL, NULL, NULL, NULL, &desc_len, NULL, NULL, NULL,
                                  NULL));
        else if (MPI_T_pvar_get_info(i, NULL, &name_len, &verbosity, &var_class, &dt, &en, NULL, &desc_len, &bind,
                                     &readonly, &continuous, &atomic) != MPI_SUCCESS)
            continue; /* Open MPI: the variables of components not loaded (yet) answer MPI_T_ERR_INVALID */
        CHECK(name_len > 1 && name_len <= (int)sizeof name, "pvar %d: name length %d", i, name_len);
        if (name_len <= 1 || name_len > (int)sizeof name)
            continue;
        {
            int want_name = name_len, want_desc = desc_len;
            name_len = sizeof name;
            desc_len = sizeof desc;
            E(MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &dt, &en, desc, &desc_len, &bind,
                                  &readonly, &continuous, &atomic));
            CHECK_INT("pvar name_len after a full read", want_name, name_len);
            CHECK_INT("pvar name_len is strlen + 1", (int)strlen(name) + 1, name_len);
            if (want_desc <= (int)sizeof desc)
                CHECK_INT("pvar desc_len after a full read", want_desc, desc_len);
        }
        {
            int v2, c2, b2, r2, n2, a2, dl2 = 0;
            MPI_Datatype d2;
            MPI_T_enum e2;
            E(MPI_T_pvar_get_info(i, shortname, &shortlen, &v2, &c2, &d2, &e2, NULL, &dl2, &b2, &r2, &n2, &a2));
        }
        CHECK(shortlen == 3 && shortname[2] == '\0' && strncmp(shortname, name, 2) == 0,
              "pvar %s truncated to 3: \"%s\" len %d", name, shortname, shortlen);
        CHECK(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL,
              "pvar %s: verbosity %d", name, verbosity);
        E(MPI_T_pvar_get_index(name, var_class, &back));
        CHECK_INT("MPI_T_pvar_get_index of a listed name and its class", i, back);
        if (IS_GRIDMPI) {
            CHECK(var_class == MPI_T_PVAR_CLASS_COUNTER || var_class == MPI_T_PVAR_CLASS_TIMER,
                  "pvar %s: class %d", name, var_class);
            CHECK(dt == (var_class == MPI_T_PVAR_CLASS_COUNTER ? MPI_UNSIGNED_LONG_LONG : MPI_DOUBLE),
                  "pvar %s: datatype %d for class %d", name, MT_H(dt), var_class);
            CHECK(en == MPI_T_ENUM_NULL, "pvar %s: enumtype not MPI_T_ENUM_NULL", name);
            CHECK_INT("pvar bind", MPI_T_BIND_NO_OBJECT, bind);
            CHECK_INT("pvar readonly (resettable)", 0, readonly);
            CHECK_INT("pvar continuous", 0, continuous);
            CHECK_INT("pvar atomic", 0, atomic);
            CHECK(desc_len > 1, "pvar %s: empty description", name);
        }
    }
    /* bad indices (Open MPI answers MPI_T_ERR_INVALID_ITEM, MPI-3.0's code) */
    if (!IS_GRIDMPI)
        return; /* and categories: gridmpi's are flat, one per name prefix */
    CHECK_INT("MPI_T_pvar_get_info(num)", MPI_T_ERR_INVALID_INDEX,
              MPI_T_pvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK_INT("MPI_T_pvar_get_info(-1)", MPI_T_ERR_INVALID_INDEX,
              MPI_T_pvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));

    /* every pvar in exactly one category, named by its prefix */
    E(MPI_T_category_get_num(&ncat));
    seen = mt_malloc(sizeof(int) * (size_t)(num + 1));
    memset(seen, 0, sizeof(int) * (size_t)(num + 1));
    for (c = 0; c < ncat; ++c) {
        char cname[256];
        int cname_len = sizeof cname, np = -1;
        int *idx;
        E(MPI_T_category_get_info(c, cname, &cname_len, NULL, NULL, NULL, &np, NULL));
        CHECK(np >= 0 && np <= num, "category %s: %d pvars of %d", cname, np, num);
        if (np <= 0 || np > num)
            continue;
        idx = mt_malloc(sizeof(int) * (size_t)(np + 1));
        idx[np] = -7;
        E(MPI_T_category_get_pvars(c, np, idx));
        CHECK_INT("MPI_T_category_get_pvars wrote past len", -7, idx[np]);
        for (i = 0; i < np; ++i) {
            char name[256];
            int name_len = sizeof name;
            CHECK(idx[i] >= 0 && idx[i] < num, "category %s: pvar index %d of %d", cname, idx[i], num);
            if (idx[i] < 0 || idx[i] >= num)
                continue;
            ++seen[idx[i]];
            E(MPI_T_pvar_get_info(idx[i], name, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL));
            CHECK(strncmp(name, cname, strlen(cname)) == 0 && name[strlen(cname)] == '.',
                  "pvar %s in category %s", name, cname);
        }
        /* a shorter len: only that many */
        idx[0] = -5;
        E(MPI_T_category_get_pvars(c, 0, idx));
        CHECK_INT("MPI_T_category_get_pvars with len 0 wrote", -5, idx[0]);
        if (np > 1) {
            idx[1] = -6;
            E(MPI_T_category_get_pvars(c, 1, idx));
            CHECK_INT("MPI_T_category_get_pvars with len 1 wrote the second entry", -6, idx[1]);
        }
        free(idx);
    }
    for (i = 0; i < num; ++i)
        CHECK(seen[i] == 1, "pvar %d is in %d categories, expected exactly 1", i, seen[i]);
    free(seen);
}

/* request.messages_received: its index (or -1), after checking its description. */
static int find_messages_received(void)
{
    int idx = -1, other = -1, cat = -1, np = -1, i, listed = 0;
    char name[64];
    int name_len = sizeof name, var_class = -1, bind = -1, readonly = -1, continuous = -1, atomic = -1;
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    int *idx_list;
    E(MPI_T_pvar_get_index("request.messages_received", MPI_T_PVAR_CLASS_COUNTER, &idx));
    if (idx < 0)
        MT_FATAL("request.messages_received not found");
    E(MPI_T_pvar_get_info(idx, name, &name_len, NULL, &var_class, &dt, NULL, NULL, NULL, &bind, &readonly,
                          &continuous, &atomic));
    CHECK_STR("name of the pvar found by MPI_T_pvar_get_index", "request.messages_received", name);
    CHECK_INT("request.messages_received class", MPI_T_PVAR_CLASS_COUNTER, var_class);
    CHECK(dt == MPI_UNSIGNED_LONG_LONG, "request.messages_received datatype %d, expected MPI_UNSIGNED_LONG_LONG",
          MT_H(dt));
    CHECK_INT("request.messages_received bind", MPI_T_BIND_NO_OBJECT, bind);
    CHECK_INT("request.messages_received readonly", 0, readonly);
    CHECK_INT("request.messages_received continuous", 0, continuous);
    CHECK_INT("request.messages_received atomic", 0, atomic);
    CHECK_INT("MPI_T_pvar_get_index with the timer class", MPI_T_ERR_INVALID_NAME,
              MPI_T_pvar_get_index("request.messages_received", MPI_T_PVAR_CLASS_TIMER, &other));
    CHECK_INT("MPI_T_pvar_get_index of a prefix of the name", MPI_T_ERR_INVALID_NAME,
              MPI_T_pvar_get_index("request.messages_receive", MPI_T_PVAR_CLASS_COUNTER, &other));
    CHECK_INT("MPI_T_pvar_get_index of an unknown name", MPI_T_ERR_INVALID_NAME,
              MPI_T_pvar_get_index("no.such.pvar", MPI_T_PVAR_CLASS_COUNTER, &other));
    CHECK_INT("MPI_T_pvar_get_index(NULL)", MPI_T_ERR_INVALID,
              MPI_T_pvar_get_index(NULL, MPI_T_PVAR_CLASS_COUNTER, &other));
    E(MPI_T_category_get_index("request", &cat));
    E(MPI_T_category_get_info(cat, NULL, NULL, NULL, NULL, NULL, &np, NULL));
    CHECK(np >= 1, "category request: %d pvars", np);
    if (np >= 1) {
        idx_list = mt_malloc(sizeof(int) * (size_t)np);
        E(MPI_T_category_get_pvars(cat, np, idx_list));
        for (i = 0; i < np; ++i)
            listed += idx_list[i] == idx;
        free(idx_list);
    }
    CHECK_INT("request.messages_received listed in category request", 1, listed);
    return idx;
}

static void check_counting(int idx)
{
    MPI_T_pvar_session s1 = MPI_T_PVAR_SESSION_NULL, s2 = MPI_T_PVAR_SESSION_NULL, s1_copy;
    MPI_T_pvar_handle h1 = MPI_T_PVAR_HANDLE_NULL, idle = MPI_T_PVAR_HANDLE_NULL, h2 = MPI_T_PVAR_HANDLE_NULL;
    MPI_T_pvar_handle h1_copy;
    int count = -1, num = -1, obj = 0;
    unsigned long long v = 0;
    long long a4, a7, a2, a3;

    E(MPI_T_pvar_session_create(&s1));
    E(MPI_T_pvar_session_create(&s2));
    CHECK(s1 != MPI_T_PVAR_SESSION_NULL && s2 != MPI_T_PVAR_SESSION_NULL && s1 != s2, "two distinct sessions");
    E(MPI_T_pvar_handle_alloc(s1, idx, &obj, &h1, &count)); /* obj_handle is ignored */
    CHECK_INT("count of request.messages_received", 1, count);
    count = -1;
    E(MPI_T_pvar_handle_alloc(s1, idx, NULL, &idle, &count));
    CHECK_INT("count of a second handle", 1, count);
    CHECK(h1 != MPI_T_PVAR_HANDLE_NULL && idle != MPI_T_PVAR_HANDLE_NULL && h1 != idle, "two distinct handles");
    CHECK_INT("a new handle", 0, value(s1, h1));

    /* stopped: nothing counts */
    traffic(N);
    CHECK_INT("a new (stopped) handle after a round of 37", 0, value(s1, h1));
    CHECK_INT("a never started handle after a round of 37", 0, value(s1, idle));

    /* started: exactly the round */
    E(MPI_T_pvar_start(s1, h1));
    CHECK_INT("a handle just started", 0, value(s1, h1));
    traffic(N);
    CHECK_INT("a started handle after a round of 37", arrivals(N), value(s1, h1));
    CHECK_INT("read twice", arrivals(N), value(s1, h1));
    E(MPI_T_pvar_start(s1, h1)); /* started already: nothing changes */
    CHECK_INT("after a second start", arrivals(N), value(s1, h1));
    CHECK_INT("the other handle of the session, never started", 0, value(s1, idle));

    /* stopped: frozen; started again: goes on from there */
    E(MPI_T_pvar_stop(s1, h1));
    traffic(N);
    CHECK_INT("a stopped handle after another round of 37", arrivals(N), value(s1, h1));
    E(MPI_T_pvar_stop(s1, h1)); /* stopped already */
    CHECK_INT("after a second stop", arrivals(N), value(s1, h1));
    E(MPI_T_pvar_start(s1, h1));
    traffic(5);
    CHECK_INT("started again, after a round of 5", arrivals(N) + arrivals(5), value(s1, h1));

    /* reset while started: zero, and counting on */
    E(MPI_T_pvar_reset(s1, h1));
    CHECK_INT("reset while started", 0, value(s1, h1));
    traffic(3);
    CHECK_INT("reset while started, then a round of 3", arrivals(3), value(s1, h1));
    /* reset while stopped: zero and stays so */
    E(MPI_T_pvar_stop(s1, h1));
    E(MPI_T_pvar_reset(s1, h1));
    traffic(2);
    CHECK_INT("reset while stopped, then a round of 2", 0, value(s1, h1));

    /* two sessions */
    E(MPI_T_pvar_handle_alloc(s2, idx, NULL, &h2, &count));
    E(MPI_T_pvar_start(s2, h2));
    E(MPI_T_pvar_start(s1, h1));
    traffic(4);
    a4 = arrivals(4);
    E(MPI_T_pvar_stop(s1, h1));
    traffic(6);
    CHECK_INT("session 1 handle, stopped after a round of 4", a4, value(s1, h1));
    CHECK_INT("session 2 handle, started over rounds of 4 and 6", a4 + arrivals(6), value(s2, h2));
    E(MPI_T_pvar_reset(s2, h2));
    CHECK_INT("session 2 handle reset", 0, value(s2, h2));
    CHECK_INT("session 1 handle after session 2's reset", a4, value(s1, h1));

    /* MPI_T_PVAR_ALL_HANDLES: every handle of its session, no other */
    E(MPI_T_pvar_start(s1, MPI_T_PVAR_ALL_HANDLES));
    traffic(7);
    a7 = arrivals(7);
    CHECK_INT("h1 after start(ALL_HANDLES) and a round of 7", a4 + a7, value(s1, h1));
    CHECK_INT("idle handle after start(ALL_HANDLES) and a round of 7", a7, value(s1, idle));
    CHECK_INT("session 2 handle over the round of 7", a7, value(s2, h2));
    E(MPI_T_pvar_start(s1, MPI_T_PVAR_ALL_HANDLES)); /* all started already */
    E(MPI_T_pvar_stop(s1, MPI_T_PVAR_ALL_HANDLES));
    traffic(2);
    a2 = arrivals(2);
    CHECK_INT("h1 after stop(ALL_HANDLES) and a round of 2", a4 + a7, value(s1, h1));
    CHECK_INT("idle handle after stop(ALL_HANDLES) and a round of 2", a7, value(s1, idle));
    CHECK_INT("session 2 handle, not stopped by session 1's ALL_HANDLES", a7 + a2, value(s2, h2));
    E(MPI_T_pvar_stop(s1, MPI_T_PVAR_ALL_HANDLES)); /* all stopped already */
    E(MPI_T_pvar_reset(s1, MPI_T_PVAR_ALL_HANDLES));
    CHECK_INT("h1 after reset(ALL_HANDLES)", 0, value(s1, h1));
    CHECK_INT("idle handle after reset(ALL_HANDLES)", 0, value(s1, idle));
    CHECK_INT("session 2 handle, not reset by session 1's ALL_HANDLES", a7 + a2, value(s2, h2));

    /* what a pvar handle refuses */
    v = 99;
    CHECK_INT("MPI_T_pvar_write", MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_write(s2, h2, &v));
    CHECK_INT("after a refused write", a7 + a2, value(s2, h2));
    CHECK_INT("MPI_T_pvar_readreset (not atomic)", MPI_T_ERR_PVAR_NO_ATOMIC, MPI_T_pvar_readreset(s2, h2, &v));
    CHECK_INT("after a refused readreset", a7 + a2, value(s2, h2));
    CHECK_INT("MPI_T_pvar_read of ALL_HANDLES", MPI_T_ERR_INVALID_HANDLE,
              MPI_T_pvar_read(s1, MPI_T_PVAR_ALL_HANDLES, &v));
    CHECK_INT("MPI_T_pvar_write of ALL_HANDLES", MPI_T_ERR_INVALID_HANDLE,
              MPI_T_pvar_write(s1, MPI_T_PVAR_ALL_HANDLES, &v));
    CHECK_INT("MPI_T_pvar_readreset of ALL_HANDLES", MPI_T_ERR_INVALID_HANDLE,
              MPI_T_pvar_readreset(s1, MPI_T_PVAR_ALL_HANDLES, &v));
    CHECK_INT("MPI_T_pvar_read(NULL buffer)", MPI_T_ERR_INVALID, MPI_T_pvar_read(s1, h1, NULL));
    /* a handle belongs to its session */
    CHECK_INT("MPI_T_pvar_read with another session", MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s2, h1, &v));
    CHECK_INT("MPI_T_pvar_start with another session", MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_start(s2, h1));
    CHECK_INT("MPI_T_pvar_stop with another session", MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_stop(s1, h2));
    CHECK_INT("MPI_T_pvar_reset with another session", MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_reset(s1, h2));
    CHECK_INT("MPI_T_pvar_write with another session", MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_write(s2, h1, &v));
    h1_copy = h1;
    CHECK_INT("MPI_T_pvar_handle_free with another session", MPI_T_ERR_INVALID_HANDLE,
              MPI_T_pvar_handle_free(s2, &h1));
    CHECK(h1 == h1_copy, "a refused MPI_T_pvar_handle_free changed the handle");
    CHECK_INT("session 2 handle after the refused calls", a7 + a2, value(s2, h2));
    /* null handle, bad sessions, bad indices */
    CHECK_INT("MPI_T_pvar_start of a null handle", MPI_T_ERR_INVALID_HANDLE,
              MPI_T_pvar_start(s1, MPI_T_PVAR_HANDLE_NULL));
    CHECK_INT("MPI_T_pvar_read on a null session", MPI_T_ERR_INVALID_SESSION,
              MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, h1, &v));
    CHECK_INT("MPI_T_pvar_start(ALL_HANDLES) on a null session", MPI_T_ERR_INVALID_SESSION,
              MPI_T_pvar_start(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES));
    CHECK_INT("MPI_T_pvar_handle_alloc on a null session", MPI_T_ERR_INVALID_SESSION,
              MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, idx, NULL, &h2, &count));
    E(MPI_T_pvar_get_num(&num));
    CHECK_INT("MPI_T_pvar_handle_alloc(num)", MPI_T_ERR_INVALID_INDEX,
              MPI_T_pvar_handle_alloc(s1, num, NULL, &h2, &count));
    CHECK_INT("MPI_T_pvar_handle_alloc(-1)", MPI_T_ERR_INVALID_INDEX,
              MPI_T_pvar_handle_alloc(s1, -1, NULL, &h2, &count));

    /* handle_free: NULL, and the handle is gone */
    {
        MPI_T_pvar_handle idle_copy = idle;
        E(MPI_T_pvar_handle_free(s1, &idle));
        CHECK(idle == MPI_T_PVAR_HANDLE_NULL, "handle not MPI_T_PVAR_HANDLE_NULL after MPI_T_pvar_handle_free");
        CHECK_INT("MPI_T_pvar_read of a freed handle", MPI_T_ERR_INVALID_HANDLE,
                  MPI_T_pvar_read(s1, idle_copy, &v));
        CHECK_INT("MPI_T_pvar_handle_free of a null handle", MPI_T_ERR_INVALID_HANDLE,
                  MPI_T_pvar_handle_free(s1, &idle));
        CHECK_INT("h1 after freeing the other handle", 0, value(s1, h1));
    }

    /* session_free with a live (started) handle frees it; the other session goes on */
    E(MPI_T_pvar_start(s1, h1));
    s1_copy = s1;
    E(MPI_T_pvar_session_free(&s1));
    CHECK(s1 == MPI_T_PVAR_SESSION_NULL, "session not MPI_T_PVAR_SESSION_NULL after free");
    CHECK_INT("MPI_T_pvar_read on a freed session", MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_read(s1_copy, h1, &v));
    CHECK_INT("MPI_T_pvar_session_free of a freed session", MPI_T_ERR_INVALID_SESSION,
              MPI_T_pvar_session_free(&s1_copy));
    CHECK_INT("a handle of a freed session with another session", MPI_T_ERR_INVALID_HANDLE,
              MPI_T_pvar_read(s2, h1, &v));
    traffic(3);
    a3 = arrivals(3);
    CHECK_INT("session 2 handle after session 1 was freed and a round of 3", a7 + a2 + a3, value(s2, h2));
    E(MPI_T_pvar_session_free(&s2));
}

int main(int argc, char **argv)
{
    int provided = -1, idx = -1;
    MPI_T_pvar_session life = MPI_T_PVAR_SESSION_NULL;
    MPI_T_pvar_handle whole = MPI_T_PVAR_HANDLE_NULL;
    unsigned long long before_finalize = 0, after_finalize = 0, total = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* before MPI_Init: listed, and a handle starts */
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        printf("FAIL: MPI_T_init_thread before MPI_Init\n");
        return 1;
    }
    check_listing();
    if (IS_GRIDMPI) {
        int count = -1;
        idx = find_messages_received();
        E(MPI_T_pvar_session_create(&life));
        E(MPI_T_pvar_handle_alloc(life, idx, NULL, &whole, &count));
        E(MPI_T_pvar_start(life, whole));
        CHECK_INT("before MPI_Init: a handle just started", 0, value(life, whole));
    }

    mt_init(&argc, &argv);
    check_listing();
    if (IS_GRIDMPI) {
        idx = find_messages_received();
        traffic(1); /* connections made, nothing late from MPI_Init at the checks */
        check_counting(idx);
        total = (unsigned long long)(arrivals(1) + 3 * arrivals(N) + arrivals(5) + arrivals(3) + arrivals(2) +
                                     arrivals(4) + arrivals(6) + arrivals(7) + arrivals(2) + arrivals(3));
        before_finalize = value(life, whole);
        CHECK(before_finalize >= total, "a handle started before MPI_Init: %llu, expected at least the %llu "
              "messages of the test", before_finalize, total);
    } else {
        MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
        E(MPI_T_pvar_session_create(&s));
        E(MPI_T_pvar_session_free(&s));
        CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not MPI_T_PVAR_SESSION_NULL after free");
    }
    /* Rank 0 of two sends the last round's messages and waits for rank 1 to
     * be done with its checks (MPI_Finalize sends messages). */
    traffic(0);
    if (mt_errors > 0)
        return mt_finish();
    E(MPI_Finalize());

    /* after MPI_Finalize: MPI_T still initialized, the handle still reads */
    if (IS_GRIDMPI) {
        after_finalize = value(life, whole);
        CHECK(after_finalize >= before_finalize, "after MPI_Finalize: %llu, before %llu", after_finalize,
              before_finalize);
        E(MPI_T_pvar_stop(life, whole));
        E(MPI_T_pvar_reset(life, whole));
        CHECK_INT("after MPI_Finalize: stopped and reset", 0, value(life, whole));
        E(MPI_T_pvar_session_free(&life));
    }
    check_listing();
    /* Open MPI 4.1.4 crashes in the MPI_T_finalize that follows MPI_Finalize
     * when MPI_T was initialized before MPI_Init. */
    if (!MT_IS_OPENMPI)
        E(MPI_T_finalize());
    if (mt_errors > 0) {
        printf("FAIL: [rank %d] %d failed check(s) after MPI_Finalize\n", mt_rank, mt_errors);
        return 1;
    }
    return 0;
}
