/* The tool information interface (MPI-3.1 chapter 14), C only.
 *  - every MPI_T function returns MPI_T_ERR_NOT_INITIALIZED outside
 *    MPI_T_init_thread / MPI_T_finalize; init nests and works before MPI_Init
 *    and after MPI_Finalize;
 *  - every control variable: get_info (the (name, name_len) rule: length
 *    query, truncation), a handle, a read of count elements;
 *  - "tcp.socbuf" found by name reads what GRIDMPI_TCP_SOCBUF says (the list
 *    sets it to 128k), before and after MPI_Init; writing it fails with
 *    MPI_T_ERR_CVAR_SET_NEVER;
 *  - categories hold every cvar exactly once; bad indices and names;
 *  - pvars exist (mpit_pvar.c checks them); a session can be created and
 *    freed; pvar calls with bad indices, null handles and freed sessions
 *    report the standard's codes;
 *  - two threads use MPI_T at once (its own lock, no big lock).
 * The gridmpi-specific checks (tcp.socbuf, codes of the pvar calls) are
 * skipped for other implementations. */
#include "mpitest.h"

#include <pthread.h>

#define IS_GRIDMPI (!MT_IS_OPENMPI && !MT_IS_MPICH)

static long long expected_socbuf(void)
{
    const char *v = getenv("GRIDMPI_TCP_SOCBUF");
    if (v == NULL)
        return 0; /* kernel autotuning */
    if (strcmp(v, "128k") == 0)
        return 131072;
    return strtoll(v, NULL, 10);
}

static void check_not_initialized(const char *when)
{
    int n = -1, stamp = -1, idx = -1;
    MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
    CHECK_INT("MPI_T_cvar_get_num outside MPI_T", MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
    CHECK_INT("MPI_T_pvar_get_num outside MPI_T", MPI_T_ERR_NOT_INITIALIZED, MPI_T_pvar_get_num(&n));
    CHECK_INT("MPI_T_category_get_num outside MPI_T", MPI_T_ERR_NOT_INITIALIZED, MPI_T_category_get_num(&n));
    CHECK_INT("MPI_T_category_changed outside MPI_T", MPI_T_ERR_NOT_INITIALIZED, MPI_T_category_changed(&stamp));
    CHECK_INT("MPI_T_cvar_get_index outside MPI_T", MPI_T_ERR_NOT_INITIALIZED,
              MPI_T_cvar_get_index("tcp.socbuf", &idx));
    CHECK_INT("MPI_T_pvar_session_create outside MPI_T", MPI_T_ERR_NOT_INITIALIZED,
              MPI_T_pvar_session_create(&session));
    CHECK_INT("MPI_T_finalize outside MPI_T", MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
    (void)when;
}

/* Reads cvar i through a handle; returns its value as text in out. */
static void read_cvar(int i, char *out, size_t outlen)
{
    char name[256];
    int name_len = sizeof name, verbosity = -1, bind = -1, scope = -1, count = -1;
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_T_enum en;
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    E(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &en, NULL, NULL, &bind, &scope));
    E(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    CHECK(h != MPI_T_CVAR_HANDLE_NULL, "cvar %s: null handle", name);
    out[0] = '\0';
    if (dt == MPI_CHAR) {
        char *buf = mt_malloc((size_t)count + 1);
        memset(buf, 'x', (size_t)count + 1);
        E(MPI_T_cvar_read(h, buf));
        CHECK(count >= 1 && buf[count - 1] == '\0' && (int)strlen(buf) == count - 1,
              "cvar %s: string of count %d is \"%.*s\"", name, count, count, buf);
        snprintf(out, outlen, "%s", buf);
        free(buf);
    } else {
        CHECK_INT("count of a numeric cvar", 1, count);
        if (dt == MPI_INT) {
            int v = -12345;
            E(MPI_T_cvar_read(h, &v));
            if (IS_GRIDMPI)
                CHECK(v == 0 || v == 1, "boolean cvar %s reads %d", name, v);
            snprintf(out, outlen, "%d", v);
        } else if (dt == MPI_LONG_LONG) {
            long long v = 0;
            E(MPI_T_cvar_read(h, &v));
            snprintf(out, outlen, "%lld", v);
        } else if (dt == MPI_DOUBLE) {
            double v = 0;
            E(MPI_T_cvar_read(h, &v));
            snprintf(out, outlen, "%g", v);
        } else if (IS_GRIDMPI) {
            MT_FAIL("cvar %s: unexpected datatype %d", name, MT_H(dt));
        }
    }
    E(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "cvar %s: handle not MPI_T_CVAR_HANDLE_NULL after free", name);
}

static void check_cvars(int verbose)
{
    int num = -1, i;
    E(MPI_T_cvar_get_num(&num));
    if (IS_GRIDMPI)
        CHECK(num > 10, "MPI_T_cvar_get_num: %d cvars, expected every configuration parameter", num);
    for (i = 0; i < num; ++i) {
        char name[256], desc[1024], value[1024], shortname[3];
        int name_len = 0, desc_len = 0, verbosity = -1, bind = -1, scope = -1, shortlen = 3, back = -1;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum en;
        /* length query: NULL buffer */
        E(MPI_T_cvar_get_info(i, NULL, &name_len, NULL, NULL, NULL, NULL, &desc_len, NULL, NULL));
        CHECK(name_len > 1 && name_len <= (int)sizeof name, "cvar %d: name length %d", i, name_len);
        {
            int want_name = name_len, want_desc = desc_len;
            name_len = sizeof name;
            desc_len = sizeof desc;
            E(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &en, desc, &desc_len, &bind, &scope));
            CHECK_INT("cvar name_len after a full read", want_name, name_len);
            CHECK_INT("cvar name_len is strlen + 1", (int)strlen(name) + 1, name_len);
            if (want_desc <= (int)sizeof desc)
                CHECK_INT("cvar desc_len after a full read", want_desc, desc_len);
        }
        /* truncation: 2 characters and the terminator */
        E(MPI_T_cvar_get_info(i, shortname, &shortlen, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(shortlen == 3 && shortname[2] == '\0' && strncmp(shortname, name, 2) == 0,
              "cvar %s truncated to 3: \"%s\" len %d", name, shortname, shortlen);
        CHECK(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL,
              "cvar %s: verbosity %d", name, verbosity);
        if (IS_GRIDMPI) {
            CHECK(dt == MPI_INT || dt == MPI_LONG_LONG || dt == MPI_DOUBLE || dt == MPI_CHAR,
                  "cvar %s: datatype %d", name, MT_H(dt));
            CHECK_INT("cvar bind", MPI_T_BIND_NO_OBJECT, bind);
            CHECK_INT("cvar scope", MPI_T_SCOPE_READONLY, scope);
            CHECK(en == MPI_T_ENUM_NULL, "cvar %s: enumtype not MPI_T_ENUM_NULL", name);
            CHECK(desc_len > 1, "cvar %s: empty description", name);
        }
        E(MPI_T_cvar_get_index(name, &back));
        CHECK_INT("MPI_T_cvar_get_index of a listed name", i, back);
        read_cvar(i, value, sizeof value);
        if (verbose)
            printf("cvar %3d %-40s = %s\n", i, name, value);
    }
}

static void check_socbuf(void)
{
    int idx = -1, count = -1, name_len = 64, scope = -1;
    char name[64];
    long long v = -1, w = 1;
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    if (!IS_GRIDMPI)
        return;
    E(MPI_T_cvar_get_index("tcp.socbuf", &idx));
    E(MPI_T_cvar_get_info(idx, name, &name_len, NULL, &dt, NULL, NULL, NULL, NULL, &scope));
    CHECK_STR("name of the cvar found by MPI_T_cvar_get_index", "tcp.socbuf", name);
    CHECK(dt == MPI_LONG_LONG, "tcp.socbuf datatype %d, expected MPI_LONG_LONG", MT_H(dt));
    E(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    CHECK_INT("tcp.socbuf count", 1, count);
    E(MPI_T_cvar_read(h, &v));
    CHECK_INT("tcp.socbuf value (GRIDMPI_TCP_SOCBUF)", expected_socbuf(), v);
    CHECK_INT("MPI_T_cvar_write of a read-only cvar", MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(h, &w));
    E(MPI_T_cvar_read(h, &v));
    CHECK_INT("tcp.socbuf after a refused write", expected_socbuf(), v);
    E(MPI_T_cvar_handle_free(&h));
    CHECK_INT("MPI_T_cvar_read of a freed handle", MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read(h, &v));
    CHECK_INT("MPI_T_cvar_handle_free of a null handle", MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_handle_free(&h));
}

static void check_bad_indices(void)
{
    int num = 0, idx = -1, count = -1, name_len = 0;
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    E(MPI_T_cvar_get_num(&num));
    CHECK_INT("MPI_T_cvar_get_info(-1)", MPI_T_ERR_INVALID_INDEX,
              MPI_T_cvar_get_info(-1, NULL, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK_INT("MPI_T_cvar_get_info(num)", MPI_T_ERR_INVALID_INDEX,
              MPI_T_cvar_get_info(num, NULL, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK_INT("MPI_T_cvar_handle_alloc(num)", MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_handle_alloc(num, NULL, &h, &count));
    CHECK_INT("MPI_T_cvar_get_index of an unknown name", MPI_T_ERR_INVALID_NAME,
              MPI_T_cvar_get_index("no.such.parameter", &idx));
    E(MPI_T_category_get_num(&num));
    CHECK_INT("MPI_T_category_get_info(num)", MPI_T_ERR_INVALID_INDEX,
              MPI_T_category_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK_INT("MPI_T_category_get_cvars(-1)", MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_cvars(-1, 0, NULL));
    CHECK_INT("MPI_T_category_get_index of an unknown name", MPI_T_ERR_INVALID_NAME,
              MPI_T_category_get_index("no such category", &idx));
}

static void check_categories(void)
{
    int ncat = -1, ncvar = -1, npvar = -1, pvars_listed = 0, c, i, stamp1 = -1, stamp2 = -2;
    int *seen;
    E(MPI_T_cvar_get_num(&ncvar));
    E(MPI_T_pvar_get_num(&npvar));
    E(MPI_T_category_get_num(&ncat));
    E(MPI_T_category_changed(&stamp1));
    if (IS_GRIDMPI)
        CHECK(ncat > 1, "MPI_T_category_get_num: %d", ncat);
    seen = mt_malloc(sizeof(int) * (size_t)(ncvar + 1));
    memset(seen, 0, sizeof(int) * (size_t)(ncvar + 1));
    for (c = 0; c < ncat; ++c) {
        char cname[256];
        int cname_len = sizeof cname, nc = -1, np = -1, nk = -1, back = -1;
        int *idx;
        E(MPI_T_category_get_info(c, cname, &cname_len, NULL, NULL, &nc, &np, &nk));
        E(MPI_T_category_get_index(cname, &back));
        CHECK_INT("MPI_T_category_get_index of a listed category", c, back);
        if (IS_GRIDMPI)
            CHECK_INT("subcategories of a category", 0, nk);
        pvars_listed += np;
        if (nc <= 0)
            continue;
        idx = mt_malloc(sizeof(int) * (size_t)nc);
        E(MPI_T_category_get_cvars(c, nc, idx));
        for (i = 0; i < nc; ++i) {
            char name[256];
            int name_len = sizeof name;
            CHECK(idx[i] >= 0 && idx[i] < ncvar, "category %s: cvar index %d of %d", cname, idx[i], ncvar);
            if (idx[i] < 0 || idx[i] >= ncvar)
                continue;
            ++seen[idx[i]];
            E(MPI_T_cvar_get_info(idx[i], name, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
            if (IS_GRIDMPI)
                CHECK(strncmp(name, cname, strlen(cname)) == 0 && name[strlen(cname)] == '.',
                      "cvar %s in category %s", name, cname);
        }
        free(idx);
    }
    if (IS_GRIDMPI) {
        for (i = 0; i < ncvar; ++i)
            CHECK(seen[i] == 1, "cvar %d is in %d categories, expected exactly 1", i, seen[i]);
        CHECK_INT("pvars listed by the categories (each in one)", npvar, pvars_listed);
    }
    if (IS_GRIDMPI) {
        int tcp = -1;
        E(MPI_T_category_get_index("tcp", &tcp));
    }
    free(seen);
    E(MPI_T_category_changed(&stamp2));
    CHECK_INT("MPI_T_category_changed stamp without changes", stamp1, stamp2);
}

static void check_pvars(void)
{
    int num = -1, count = -1, idx = -1;
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL, s2 = MPI_T_PVAR_SESSION_NULL;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    long long buf = 0;
    E(MPI_T_pvar_get_num(&num));
    if (!IS_GRIDMPI)
        return;
    CHECK(num >= 1, "MPI_T_pvar_get_num: %d, expected request.messages_received at least", num);
    CHECK_INT("MPI_T_pvar_get_info(num)", MPI_T_ERR_INVALID_INDEX,
              MPI_T_pvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK_INT("MPI_T_pvar_get_index", MPI_T_ERR_INVALID_NAME,
              MPI_T_pvar_get_index("anything", MPI_T_PVAR_CLASS_COUNTER, &idx));
    E(MPI_T_pvar_session_create(&s));
    E(MPI_T_pvar_session_create(&s2));
    CHECK(s != MPI_T_PVAR_SESSION_NULL && s2 != MPI_T_PVAR_SESSION_NULL && s != s2, "two distinct sessions");
    CHECK_INT("MPI_T_pvar_handle_alloc(num)", MPI_T_ERR_INVALID_INDEX,
              MPI_T_pvar_handle_alloc(s, num, NULL, &h, &count));
    E(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    E(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    E(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK_INT("MPI_T_pvar_start of a null handle", MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_start(s, h));
    CHECK_INT("MPI_T_pvar_read of a null handle", MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, h, &buf));
    CHECK_INT("MPI_T_pvar_read of all handles", MPI_T_ERR_INVALID_HANDLE,
              MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &buf));
    CHECK_INT("MPI_T_pvar_readreset of a null handle", MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_readreset(s, h, &buf));
    CHECK_INT("MPI_T_pvar_write of a null handle", MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_write(s, h, &buf));
    CHECK_INT("MPI_T_pvar_handle_free of a null handle", MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_handle_free(s, &h));
    E(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not MPI_T_PVAR_SESSION_NULL after free");
    CHECK_INT("MPI_T_pvar_session_free of a freed session", MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_session_free(&s));
    CHECK_INT("MPI_T_pvar_start on a null session", MPI_T_ERR_INVALID_SESSION,
              MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    E(MPI_T_pvar_session_free(&s2));
}

/* Two threads init, read tcp.socbuf and finalize MPI_T concurrently. */
static void *thread_body(void *arg)
{
    int k, *bad = arg;
    for (k = 0; k < 200; ++k) {
        int provided = -1, idx = -1, count = 0;
        long long v = -1;
        MPI_T_cvar_handle h;
        if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
            ++*bad;
            continue;
        }
        if (IS_GRIDMPI) {
            if (MPI_T_cvar_get_index("tcp.socbuf", &idx) != MPI_SUCCESS ||
                MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
                ++*bad;
            else {
                if (MPI_T_cvar_read(h, &v) != MPI_SUCCESS || v != expected_socbuf())
                    ++*bad;
                if (MPI_T_cvar_handle_free(&h) != MPI_SUCCESS)
                    ++*bad;
            }
        }
        if (MPI_T_finalize() != MPI_SUCCESS)
            ++*bad;
    }
    return NULL;
}

static void check_threads(void)
{
    pthread_t t[2];
    int bad[2] = {0, 0}, k;
    for (k = 0; k < 2; ++k)
        if (pthread_create(&t[k], NULL, thread_body, &bad[k]) != 0)
            MT_FATAL("pthread_create failed");
    for (k = 0; k < 2; ++k) {
        pthread_join(t[k], NULL);
        CHECK_INT("failed MPI_T calls in a thread", 0, bad[k]);
    }
}

int main(int argc, char **argv)
{
    int provided = -1, provided2 = -1;
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* before MPI_Init and before MPI_T_init_thread */
    check_not_initialized("before MPI_T_init_thread");
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        printf("FAIL: MPI_T_init_thread before MPI_Init\n");
        return 1;
    }
    CHECK_INT("MPI_T_init_thread provided", MPI_THREAD_SINGLE, provided);
    E(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided2)); /* nested */
    check_cvars(0);
    check_socbuf();
    check_bad_indices();
    check_categories();
    check_pvars();
    E(MPI_T_finalize()); /* inner: still initialized */
    {
        int n = -1;
        E(MPI_T_cvar_get_num(&n));
    }

    mt_init(&argc, &argv);
    check_cvars(mt_rank == 0 && IS_GRIDMPI);
    check_socbuf();
    check_categories();
    check_pvars();
    check_threads();
    if (IS_GRIDMPI) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0, cls = -1;
        E(MPI_Error_class(MPI_T_ERR_CVAR_SET_NEVER, &cls));
        CHECK_INT("class of MPI_T_ERR_CVAR_SET_NEVER", MPI_T_ERR_CVAR_SET_NEVER, cls);
        E(MPI_Error_string(MPI_T_ERR_INVALID, text, &len));
        CHECK(len > 5, "MPI_Error_string(MPI_T_ERR_INVALID): \"%s\"", text);
        CHECK(MPI_T_ERR_INVALID <= MPI_ERR_LASTCODE && MPI_T_ERR_MEMORY <= MPI_ERR_LASTCODE,
              "MPI_T error codes above MPI_ERR_LASTCODE");
    }
    E(MPI_T_finalize()); /* outermost */
    check_not_initialized("after the outermost MPI_T_finalize");

    if (mt_errors > 0)
        return mt_finish();
    E(MPI_Finalize());

    /* after MPI_Finalize: MPI_T works again */
    if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        printf("FAIL: [rank %d] MPI_T_init_thread after MPI_Finalize\n", mt_rank);
        return 1;
    }
    check_socbuf();
    check_categories();
    check_pvars();
    E(MPI_T_finalize());
    check_not_initialized("after MPI_Finalize");
    if (mt_errors > 0) {
        printf("FAIL: [rank %d] %d failed check(s) after MPI_Finalize\n", mt_rank, mt_errors);
        return 1;
    }
    return 0;
}
