/* MPI-4.0 info functions: info objects made, changed and read before
 * MPI_Init and after MPI_Finalize; MPI_Info_get_string (buflen semantics:
 * size with the terminator in, size needed out, truncation, buflen 0, a
 * missing key); MPI_Info_create_env gives the same keys and values before
 * MPI_Init, after it and after MPI_Finalize, with the command and argv.
 * Open MPI 4.1 has no MPI-4 functions: the program only passes there. */
#include "mpitest.h"

#if MT_IS_OPENMPI
int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    return mt_finish();
}
#else

static const char *const env_keys[] = {"command", "argv", "maxprocs", "soft", "host",
                                       "arch", "wdir", "file", "thread_level"};
#define NKEYS (int)(sizeof env_keys / sizeof env_keys[0])

/* Every standard key of a and b: both absent or both with one value. */
static void same_env(const char *when, MPI_Info a, MPI_Info b)
{
    char va[MPI_MAX_INFO_VAL], vb[MPI_MAX_INFO_VAL];
    int i;
    for (i = 0; i < NKEYS; ++i) {
        int fa = 0, fb = 0, la = MPI_MAX_INFO_VAL, lb = MPI_MAX_INFO_VAL;
        E(MPI_Info_get_string(a, env_keys[i], &la, va, &fa));
        E(MPI_Info_get_string(b, env_keys[i], &lb, vb, &fb));
        CHECK(fa == fb, "%s: key '%s' present in one info only", when, env_keys[i]);
        if (fa && fb)
            CHECK(strcmp(va, vb) == 0, "%s: key '%s': '%s' vs '%s'", when, env_keys[i], va, vb);
    }
}

int main(int argc, char **argv)
{
    MPI_Info info, before, again;
    char value[64];
    int flag, buflen, nkeys, i;

    /* Before MPI_Init. */
    E(MPI_Info_create(&info));
    E(MPI_Info_set(info, "file", "runfile.txt"));
    E(MPI_Info_set(info, "host", "myhost.example.org"));
    E(MPI_Info_create_env(argc, argv, &before));

    mt_init(&argc, &argv);

    /* The values set before MPI_Init are there. */
    E(MPI_Info_get_nkeys(info, &nkeys));
    CHECK_INT("nkeys of the info made before MPI_Init", 2, nkeys);

    /* Info_get_string: a missing key leaves value and buflen alone. */
    buflen = 10;
    strcpy(value, "canary");
    E(MPI_Info_get_string(info, "nokey", &buflen, value, &flag));
    CHECK_INT("get_string of a missing key: flag", 0, flag);
    CHECK_INT("get_string of a missing key: buflen", 10, buflen);
    CHECK_STR("get_string of a missing key: value", "canary", value);
    /* buflen 0: only the size needed (with the terminator). */
    buflen = 0;
    E(MPI_Info_get_string(info, "file", &buflen, value, &flag));
    CHECK_INT("get_string, buflen 0: flag", 1, flag);
    CHECK_INT("get_string, buflen 0: buflen", 12, buflen);
    CHECK_STR("get_string, buflen 0: value untouched", "canary", value);
    /* Too small: cut, null-terminated. */
    buflen = 5;
    E(MPI_Info_get_string(info, "host", &buflen, value, &flag));
    CHECK_INT("get_string, buflen 5: buflen", 19, buflen);
    CHECK_STR("get_string, buflen 5: value", "myho", value);
    /* Large enough. */
    buflen = sizeof value;
    E(MPI_Info_get_string(info, "file", &buflen, value, &flag));
    CHECK_INT("get_string: buflen", 12, buflen);
    CHECK_STR("get_string: value", "runfile.txt", value);
    /* Exactly the size needed. */
    buflen = 12;
    E(MPI_Info_get_string(info, "file", &buflen, value, &flag));
    CHECK_STR("get_string, exact buflen: value", "runfile.txt", value);

    /* create_env: the same before and after MPI_Init; the command is argv[0]. */
    E(MPI_Info_create_env(argc, argv, &again));
    same_env("Info_create_env before vs after MPI_Init", before, again);
    buflen = MPI_MAX_INFO_VAL;
    {
        char command[MPI_MAX_INFO_VAL];
        E(MPI_Info_get_string(again, "command", &buflen, command, &flag));
        /* Every key is optional; MPICH 4.0.2 has no "command". */
        if (!MT_IS_MPICH)
            CHECK_INT("Info_create_env: command present", 1, flag);
        if (flag)
            CHECK_STR("Info_create_env: command", argv[0], command);
    }
    E(MPI_Info_free(&again));
    E(MPI_Info_set(info, "soft", "1:4"));

    if (mt_finish() != 0)
        return 1;

    /* After MPI_Finalize: change, read, dup, free, create_env. */
    mt_errors = 0;
    {
        MPI_Info copy;
        E(MPI_Info_delete(info, "host"));
        E(MPI_Info_dup(info, &copy));
        E(MPI_Info_get_nkeys(copy, &nkeys));
        CHECK_INT("nkeys after MPI_Finalize", 2, nkeys);
        for (i = 0; i < nkeys; ++i) {
            char key[MPI_MAX_INFO_KEY + 1];
            E(MPI_Info_get_nthkey(copy, i, key));
            CHECK_STR("nthkey after MPI_Finalize", i == 0 ? "file" : "soft", key);
        }
        buflen = sizeof value;
        E(MPI_Info_get_string(copy, "soft", &buflen, value, &flag));
        CHECK_STR("get_string after MPI_Finalize", "1:4", value);
        E(MPI_Info_free(&copy));
        E(MPI_Info_create_env(argc, argv, &again));
        same_env("Info_create_env before MPI_Init vs after MPI_Finalize", before, again);
        E(MPI_Info_free(&again));
        E(MPI_Info_free(&before));
        E(MPI_Info_free(&info));
    }
    if (mt_errors) {
        printf("FAIL: [rank %d] %d check(s) after MPI_Finalize failed\n", mt_rank, mt_errors);
        return 1;
    }
    return 0;
}
#endif
