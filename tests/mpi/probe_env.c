#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include "probe.h"

/* probe_env: Init_thread/Initialized/Finalized, version, processor name,
 * Wtime/Wtick, Alloc_mem, predefined attributes, attribute callbacks,
 * send with tag == MPI_TAG_UB. */

static int copies = 0, deletes = 0;
static int copy_fn(MPI_Comm o, int k, void *extra, void *in, void *out, int *flag)
{
    (void)o; (void)k; (void)extra;
    copies++;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int k, void *v, void *extra)
{
    (void)c; (void)k; (void)v; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int flag = -1, provided = -1, rank, size;
    MPI_Initialized(&flag);
    if (flag) { printf("FAIL: Initialized true before Init\n"); return 1; }
    MPI_Finalized(&flag);
    if (flag) { printf("FAIL: Finalized true before Init\n"); return 1; }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p_rank = rank;
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED || provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED && MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE, "thread level constants not ordered");
    int q = -1;
    MPI_Query_thread(&q);
    CHECK(q == provided, "Query_thread %d provided %d", q, provided);
    MPI_Is_thread_main(&flag);
    CHECK(flag, "Is_thread_main false");
    MPI_Initialized(&flag);
    CHECK(flag, "Initialized false after Init");
    int ver = 0, sub = 0;
    MPI_Get_version(&ver, &sub);
    CHECK(ver == MPI_VERSION && sub == MPI_SUBVERSION && ver >= 3, "version %d.%d", ver, sub);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    MPIOK(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(lib) >= len - 1 && (int)strlen(lib) <= len, "library version len %d", len);
    char pn[MPI_MAX_PROCESSOR_NAME];
    len = -1;
    MPIOK(MPI_Get_processor_name(pn, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(pn) == len, "processor name len %d", len);
    /* Wtime monotonic, Wtick sane */
    double t0 = MPI_Wtime(), prev = t0, tick = MPI_Wtick();
    CHECK(tick > 0 && tick < 1, "Wtick %g", tick);
    int back = 0;
    for (int i = 0; i < 200000; i++) { double t = MPI_Wtime(); if (t < prev) back++; prev = t; }
    CHECK(!back, "Wtime went backwards %d times", back);
    double s0 = MPI_Wtime();
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double el = MPI_Wtime() - s0;
    CHECK(el > 0.045 && el < 1.0, "50 ms sleep measured as %g s", el);
    /* Alloc_mem */
    void *m = NULL;
    MPIOK(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &m));
    CHECK(m != NULL, "Alloc_mem NULL");
    if (m) { memset(m, 0xab, 1 << 20); MPIOK(MPI_Free_mem(m)); }
    MPIOK(MPI_Alloc_mem(0, MPI_INFO_NULL, &m));
    MPIOK(MPI_Free_mem(m));
    /* predefined attributes */
    void *v;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
    int tag_ub = flag ? *(int *)v : -1;
    CHECK(flag && tag_ub >= 32767, "TAG_UB flag %d value %d", flag, tag_ub);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag);
    CHECK(flag && (*(int *)v == MPI_PROC_NULL || (*(int *)v >= 0 && *(int *)v < size)), "MPI_HOST flag %d", flag);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag);
    CHECK(flag && (*(int *)v == MPI_ANY_SOURCE || *(int *)v == MPI_PROC_NULL || (*(int *)v >= 0 && *(int *)v < size)), "MPI_IO flag %d", flag);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag);
    CHECK(!flag || *(int *)v == 0 || *(int *)v == 1, "WTIME_IS_GLOBAL value");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag);
    CHECK(!flag || *(int *)v == 0, "APPNUM %d", flag ? *(int *)v : 0);
    /* tag == TAG_UB works, including with ANY_TAG receive */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, x = -1, y = 77 + rank;
    MPI_Status st;
    MPIOK(MPI_Sendrecv(&y, 1, MPI_INT, right, tag_ub, &x, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(x == 77 + left && st.MPI_TAG == tag_ub, "TAG_UB message got %d tag %d", x, st.MPI_TAG);
    /* user attribute with copy/delete callbacks */
    int key;
    MPIOK(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, NULL));
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPIOK(MPI_Comm_set_attr(d, key, (void *)(intptr_t)41));
    MPI_Comm d2;
    MPI_Comm_dup(d, &d2);
    CHECK(copies == 1, "copy callback called %d times", copies);
    MPI_Comm_get_attr(d2, key, &v, &flag);
    CHECK(flag && (intptr_t)v == 42, "copied attribute %ld", (long)(intptr_t)v);
    MPIOK(MPI_Comm_set_attr(d, key, (void *)(intptr_t)50)); /* replaces: delete called on old value */
    CHECK(deletes == 1, "delete on replace: %d", deletes);
    MPI_Comm_delete_attr(d, key);
    CHECK(deletes == 2, "delete_attr: %d", deletes);
    MPI_Comm_get_attr(d, key, &v, &flag);
    CHECK(!flag, "deleted attribute still present");
    MPI_Comm_free(&d2);
    CHECK(deletes == 3, "Comm_free deletes: %d", deletes);
    MPI_Comm_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "free_keyval did not invalidate");
    MPI_Comm_free(&d);
    /* keyval with null callbacks: not copied */
    int k2;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, k2, &k2);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_get_attr(d, k2, &v, &flag);
    CHECK(!flag, "NULL_COPY_FN attribute copied");
    MPI_Comm_free(&d);
    int k3;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k3, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, k3, &k3);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_get_attr(d, k3, &v, &flag);
    CHECK(flag && v == &k3, "DUP_FN attribute not copied");
    MPI_Comm_free(&d);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, k2);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, k3);
    MPI_Comm_free_keyval(&k2);
    MPI_Comm_free_keyval(&k3);
    if (p_errs) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Finalize();
    MPI_Finalized(&flag);
    if (!flag) { printf("FAIL: [rank %d] Finalized false after Finalize\n", rank); return 1; }
    MPI_Initialized(&flag);
    if (!flag) { printf("FAIL: [rank %d] Initialized false after Finalize\n", rank); return 1; }
    return 0;
}
