/* mcast_bench: a master multicasting work to changing subsets of its workers,
 * in the style of the dynamic-multicast paper, with the ways a user has to
 * do it:
 *
 *     mcast_bench [--methods mcast,comm,isend] [--subsets 2,4,all] [--sizes LIST]
 *                 [--rounds N] [--seconds S]
 *
 *   mcast  gridmpi's GMPI_Mcast / GMPI_Mcast_recv (only when the MPI has
 *          GMPI_MCAST)
 *   comm   a communicator per subset: the master sends each target the
 *          subset (a waiting worker cannot know it), MPI_Comm_create_group
 *          over the master and the subset (collective over those alone),
 *          MPI_Bcast on it, MPI_Comm_free
 *   isend  the master MPI_Isends to each target (MPI_Waitall), the targets
 *          MPI_Recv
 *
 * Rank 0 is the master, every other rank a worker.  Each round the master
 * draws a subset of k workers (every rank draws the same pseudo-random
 * subsets, so a worker knows whether it is in one and the others go on to
 * the next round, as waiting workers would; only "comm" needs more than
 * that and is told the subset), sends it the message, and waits
 * for a zero-byte acknowledgement from each target (the same for every
 * method: the time is the multicast's until every target has it, plus one
 * short message).  Per (method, k, size): 3 untimed rounds, from which the
 * master sets the number of timed rounds (--seconds worth, default 1, at
 * most --rounds, default 200) and tells everybody once; then the timed
 * rounds run back to back with nothing else between them (workers outside
 * a round's subset go on to the next).
 *
 * Output (rank 0), one line per (method, k, size):
 *     MC method=mcast np=8 k=4 bytes=65536 rounds=.. us=..
 * us = mean microseconds per round.  The data is checked; exit status 1
 * when a check failed.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"

enum method { MCAST, COMM, ISEND };
static const char *method_names[] = {"mcast", "comm", "isend"};

static unsigned long long rng;
static unsigned rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

/* k distinct workers (1..np-1), in increasing order. */
static void draw(int np, int k, int *subset)
{
    int *pool = (int *)malloc((size_t)np * sizeof(int)), n = np - 1, i;
    for (i = 0; i < n; ++i)
        pool[i] = i + 1;
    for (i = 0; i < k; ++i) { /* partial Fisher-Yates */
        int j = i + (int)(rnd() % (unsigned)(n - i)), t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
    }
    for (i = 0; i < k; ++i)
        subset[i] = pool[i];
    free(pool);
    for (i = 1; i < k; ++i) { /* sort */
        int v = subset[i], j = i - 1;
        while (j >= 0 && subset[j] > v) {
            subset[j + 1] = subset[j];
            --j;
        }
        subset[j + 1] = v;
    }
}

static int errors = 0;

static void deliver(enum method m, int rank, const int *subset, int k, unsigned char *buf, long bytes,
                    int round)
{
    int i, member = rank == 0;
    for (i = 0; i < k && !member; ++i)
        member = subset[i] == rank;
    if (!member)
        return;
    if (rank == 0)
        memset(buf, round & 0xff, 16 < bytes ? 16 : (size_t)bytes);
    if (m == MCAST) {
#ifdef GMPI_MCAST
        if (rank == 0)
            GMPI_Mcast(buf, (int)bytes, MPI_BYTE, subset, k, MPI_COMM_WORLD);
        else
            GMPI_Mcast_recv(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#endif
    } else if (m == COMM) {
        /* A waiting worker does not know that it is a target, nor who else
         * is: the master tells each target the subset first (k short
         * messages), as a master-worker program must before its targets can
         * call MPI_Comm_create_group; the group is built from what came. */
        MPI_Group world, group;
        MPI_Comm comm;
        MPI_Request *req = NULL;
        int *ranks = (int *)malloc((size_t)(k + 1) * sizeof(int));
        ranks[0] = 0;
        if (rank == 0) {
            memcpy(ranks + 1, subset, (size_t)k * sizeof(int));
            req = (MPI_Request *)malloc((size_t)k * sizeof(MPI_Request));
            for (i = 0; i < k; ++i)
                MPI_Isend(ranks + 1, k, MPI_INT, subset[i], 3, MPI_COMM_WORLD, &req[i]);
        } else {
            MPI_Recv(ranks + 1, k, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, k + 1, ranks, &group);
        MPI_Comm_create_group(MPI_COMM_WORLD, group, round & 0x7fff, &comm);
        MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, comm);
        MPI_Comm_free(&comm);
        MPI_Group_free(&group);
        MPI_Group_free(&world);
        if (req) {
            MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
            free(req);
        }
        free(ranks);
    } else {
        if (rank == 0) {
            MPI_Request *req = (MPI_Request *)malloc((size_t)k * sizeof(MPI_Request));
            for (i = 0; i < k; ++i)
                MPI_Isend(buf, (int)bytes, MPI_BYTE, subset[i], 1, MPI_COMM_WORLD, &req[i]);
            MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
            free(req);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    /* acknowledgements */
    if (rank == 0) {
        for (i = 0; i < k; ++i)
            MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        if (bytes > 0 && buf[0] != (unsigned char)(round & 0xff)) {
            if (errors++ == 0)
                fprintf(stderr, "mcast_bench: rank %d round %d: wrong data (%d)\n", rank, round, buf[0]);
        }
        MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int rank, np, i, mi, ki, si;
    int methods[3], nmethods = 0, subsets[16], nsubsets = 0, max_rounds = 200;
    double seconds = 1.0;
    long sizes[MAX_SIZES];
    int nsizes = 0;
    const char *method_arg = "mcast,comm,isend", *subset_arg = "2,4,all", *size_arg = "1k,64k,1m";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--methods") && i + 1 < argc) method_arg = argv[++i];
        else if (!strcmp(argv[i], "--subsets") && i + 1 < argc) subset_arg = argv[++i];
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) size_arg = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) max_rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else {
            if (rank == 0)
                fprintf(stderr, "mcast_bench: unknown argument %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    {
        char copy[256], *tok;
        snprintf(copy, sizeof copy, "%s", method_arg);
        for (tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
            for (mi = 0; mi < 3 && strcmp(tok, method_names[mi]); ++mi) {
            }
#ifndef GMPI_MCAST
            if (mi == MCAST)
                continue; /* not this MPI's */
#endif
            if (mi < 3)
                methods[nmethods++] = mi;
        }
        snprintf(copy, sizeof copy, "%s", subset_arg);
        for (tok = strtok(copy, ","); tok && nsubsets < 16; tok = strtok(NULL, ",")) {
            int k = strcmp(tok, "all") ? atoi(tok) : np - 1;
            if (k >= 1 && k <= np - 1)
                subsets[nsubsets++] = k;
        }
        nsizes = parse_sizes(size_arg, sizes);
    }
    if (np < 2 || nsizes <= 0) {
        if (rank == 0)
            fprintf(stderr, "mcast_bench: needs 2 or more processes and sizes\n");
        MPI_Finalize();
        return 2;
    }
    {
        long max_bytes = 0;
        unsigned char *buf;
        int *subset = (int *)malloc((size_t)np * sizeof(int));
        for (si = 0; si < nsizes; ++si)
            if (sizes[si] > max_bytes)
                max_bytes = sizes[si];
        buf = (unsigned char *)malloc((size_t)max_bytes + 1);
        memset(buf, 0, (size_t)max_bytes + 1);
        for (mi = 0; mi < nmethods; ++mi) {
            for (ki = 0; ki < nsubsets; ++ki) {
                for (si = 0; si < nsizes; ++si) {
                    enum method m = (enum method)methods[mi];
                    int k = subsets[ki], round = 0, phase, rounds = 3;
                    double elapsed = 0;
                    rng = 88172645463325252ULL + (unsigned long long)(ki * 131 + si);
                    for (phase = 0; phase < 2; ++phase) {
                        double t0;
                        if (phase == 1) {
                            if (rank == 0) {
                                double per = elapsed / 3;
                                rounds = per > 0 ? (int)(seconds / per) : max_rounds;
                                rounds = rounds < 3 ? 3 : rounds > max_rounds ? max_rounds : rounds;
                            }
                            MPI_Bcast(&rounds, 1, MPI_INT, 0, MPI_COMM_WORLD);
                        }
                        MPI_Barrier(MPI_COMM_WORLD);
                        t0 = MPI_Wtime();
                        for (i = 0; i < rounds; ++i, ++round) {
                            draw(np, k, subset);
                            deliver(m, rank, subset, k, buf, sizes[si], round);
                        }
                        elapsed = MPI_Wtime() - t0;
                    }
                    if (rank == 0)
                        printf("MC method=%s np=%d k=%d bytes=%ld rounds=%d us=%.3f\n", method_names[m], np, k,
                               sizes[si], rounds, elapsed / rounds * 1e6);
                }
            }
        }
        free(buf);
        free(subset);
    }
    {
        int total = 0;
        MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Finalize();
        return total ? 1 : 0;
    }
}
