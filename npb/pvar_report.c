/* pvar_report: a tool library (MPI_T + PMPI, nothing of gridmpi's own)
 * that prints an unchanged MPI program's performance variables at its end.
 *
 *     LD_PRELOAD=libpvar_report.so PVAR_REPORT_PREFIX=request. mpirun -np 4 ./app
 *
 * At MPI_Init it opens an MPI_T session and starts a handle on every pvar
 * whose name begins with PVAR_REPORT_PREFIX (default: all) and whose class
 * is a counter (MPI_UNSIGNED_LONG_LONG) or a timer (MPI_DOUBLE); at
 * MPI_Finalize it reads them, sums them over MPI_COMM_WORLD, and rank 0
 * prints one line:
 *
 *     PVARS np=4 request.messages_received=1283 request.predict.hits=491 ...
 *
 * npb/predict-bench reads that line.  The MPI_T calls follow MPI-3.1
 * chapter 14 only, so the library works with any MPI that has such pvars.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PVARS 64

static MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
static int count;
static MPI_T_pvar_handle handles[MAX_PVARS];
static char names[MAX_PVARS][128];
static int is_double[MAX_PVARS];

static void start(void) {
    int provided, num = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return;
    if (MPI_T_pvar_get_num(&num) != MPI_SUCCESS || num == 0 ||
        MPI_T_pvar_session_create(&session) != MPI_SUCCESS) {
        session = MPI_T_PVAR_SESSION_NULL;
        MPI_T_finalize();
        return;
    }
    const char *prefix = getenv("PVAR_REPORT_PREFIX");
    if (prefix == NULL) prefix = "";
    if (num > MAX_PVARS)
        fprintf(stderr, "pvar_report: %d pvars, the first %d of the prefix are read\n", num, MAX_PVARS);
    for (int i = 0; i < num && count < MAX_PVARS; ++i) {
        char name[128], desc[512];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, var_class, bind, readonly, continuous, atomic;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &enumtype, desc, &desc_len, &bind,
                                &readonly, &continuous, &atomic) != MPI_SUCCESS)
            continue;
        if (strncmp(name, prefix, strlen(prefix)) != 0 || bind != MPI_T_BIND_NO_OBJECT) continue;
        if (!(var_class == MPI_T_PVAR_CLASS_COUNTER && type == MPI_UNSIGNED_LONG_LONG) &&
            !(var_class == MPI_T_PVAR_CLASS_TIMER && type == MPI_DOUBLE))
            continue;
        int elements = 0;
        if (MPI_T_pvar_handle_alloc(session, i, NULL, &handles[count], &elements) != MPI_SUCCESS) continue;
        if (elements != 1 || (!continuous && MPI_T_pvar_start(session, handles[count]) != MPI_SUCCESS)) {
            MPI_T_pvar_handle_free(session, &handles[count]);
            continue;
        }
        snprintf(names[count], sizeof names[count], "%s", name);
        is_double[count] = type == MPI_DOUBLE;
        ++count;
    }
}

static void report(void) {
    /* Every rank takes part in the reductions, with or without pvars. */
    double values[MAX_PVARS], sums[MAX_PVARS];
    int lists[2] = {count, -count}, agree[2];
    for (int i = 0; i < count; ++i) {
        values[i] = -1; /* a read that fails shows as negative */
        if (is_double[i]) {
            MPI_T_pvar_read(session, handles[i], &values[i]);
        } else {
            unsigned long long v = 0;
            if (MPI_T_pvar_read(session, handles[i], &v) == MPI_SUCCESS) values[i] = (double)v;
        }
    }
    int rank, size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    /* The same list on every rank (one library): sum them; else say so. */
    PMPI_Allreduce(lists, agree, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (agree[0] != -agree[1]) {
        if (rank == 0) printf("PVARS np=%d: the ranks hold different pvar lists; nothing summed\n", size);
    } else if (count > 0) {
        PMPI_Reduce(values, sums, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    if (rank == 0 && agree[0] == -agree[1] && count > 0) {
        printf("PVARS np=%d", size);
        for (int i = 0; i < count; ++i) {
            if (is_double[i])
                printf(" %s=%.6f", names[i], sums[i]);
            else
                printf(" %s=%.0f", names[i], sums[i]);
        }
        printf("\n");
        fflush(stdout);
    }
    if (session != MPI_T_PVAR_SESSION_NULL) {
        MPI_T_pvar_session_free(&session);
        MPI_T_finalize();
    }
}

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) start();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) start();
    return rc;
}

int MPI_Finalize(void) {
    report();
    return PMPI_Finalize();
}
