/* io_common.h — helpers of the MPI-IO tests (io_*.c): one private
 * directory per run under $TMPDIR (or /tmp), created by rank 0 and removed
 * with everything in it by io_cleanup(). */
#ifndef GRIDMPI_TESTS_IO_COMMON_H
#define GRIDMPI_TESTS_IO_COMMON_H

#include <dirent.h>
#include <errno.h>
#include <unistd.h>

#include "mpitest.h"

static char io_dir[1024];

static inline void io_setup(void)
{
    if (mt_rank == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(io_dir, sizeof io_dir, "%s/gridmpi-io-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(io_dir))
            MT_FATAL("mkdtemp %s: %s", io_dir, strerror(errno));
    }
    E(MPI_Bcast(io_dir, sizeof io_dir, MPI_CHAR, 0, MPI_COMM_WORLD));
}

/* The path of a test file in the run's directory (a static buffer per call
 * site is not needed: callers copy). */
static inline void io_path(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", io_dir, name);
}

static inline void io_cleanup(void)
{
    E(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        DIR *d = opendir(io_dir);
        struct dirent *e;
        char path[2048];
        if (d) {
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                snprintf(path, sizeof path, "%s/%s", io_dir, e->d_name);
                unlink(path);
            }
            closedir(d);
        }
        if (rmdir(io_dir) != 0)
            MT_FAIL("rmdir %s: %s", io_dir, strerror(errno));
    }
}

/* The error class of rc. */
static inline int io_class(int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

#endif
