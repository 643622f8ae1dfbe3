/* mcast_bench: a master multicasting work to changing subsets of its workers,
 * in the style of the dynamic-multicast paper, with the ways a user has to
 * do it:
 *
 *     mcast_bench [--methods mcast,comm,isend] [--subsets 2,4,all] [--sizes LIST]
 *                 [--window 1,4] [--rounds N] [--seconds S]
 *
 *   mcast  gridmpi's GMPI_Imcast / GMPI_Mcast_recv (only when the MPI has
 *          GMPI_MCAST)
 *   comm   a communicator per subset: the master sends each target the
 *          subset (a waiting worker cannot know it), MPI_Comm_create_group
 *          over the master and the subset (collective over those alone),
 *          MPI_Bcast on it (MPI_Ibcast with rounds in flight), MPI_Comm_free
 *   isend  the master MPI_Isends to each target, the targets MPI_Recv
 *
 * Rank 0 is the master, every other rank a worker.  Each round the master
 * draws a subset of k workers (every rank draws the same pseudo-random
 * subsets, so a worker knows whether it is in one and the others go on to
 * the next round, as waiting workers would; only "comm" needs more than
 * that and is told the subset), sends it the message, and counts the round
 * done when a zero-byte acknowledgement came from each target (the same for
 * every method: the time is the multicast's until every target has it, plus
 * one short message).  --window W[,W...] (default 1): the master keeps up to W
 * rounds in flight, as a master handing out work does (the paper's
 * multicasts to different groups overlap): it starts round r once round
 * r - W is done; with 1 the rounds run one after the other.  Per (method,
 * k, size): 3 untimed rounds, from which the master sets the number of
 * timed rounds (--seconds worth, default 1, at most --rounds, default 200)
 * and tells everybody once; then the timed rounds run back to back with
 * nothing else between them.
 *
 * Output (rank 0), one line per (method, k, size):
 *     MC method=mcast np=8 k=4 bytes=65536 window=1 rounds=.. us=..
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

#define DATA_TAG 1
#define NOTE_TAG 3
#define ACK_TAG(round) (1000 + (round) % 30000)

/* The master's state of one round in flight. */
struct slot {
    MPI_Request *req;
    int nreq;
    int *ranks; /* comm: the master and the subset */
    MPI_Comm comm;
    MPI_Group group;
};

static int is_member(int rank, const int *subset, int k)
{
    int i;
    for (i = 0; i < k; ++i)
        if (subset[i] == rank)
            return 1;
    return 0;
}

/* The master starts a round: the message from sbuf to the subset, and the
 * receives of its acknowledgements. */
static void start_round(enum method m, struct slot *sl, const int *subset, int k, unsigned char *sbuf, long bytes,
                        int round, int window)
{
    int i;
    sl->nreq = 0;
    sl->comm = MPI_COMM_NULL;
    memset(sbuf, round & 0xff, 16 < bytes ? 16 : (size_t)bytes);
    if (m == MCAST) {
#ifdef GMPI_MCAST
        GMPI_Imcast(sbuf, (int)bytes, MPI_BYTE, subset, k, MPI_COMM_WORLD, &sl->req[sl->nreq++]);
#endif
    } else if (m == COMM) {
        MPI_Group world;
        sl->ranks[0] = 0;
        memcpy(sl->ranks + 1, subset, (size_t)k * sizeof(int));
        for (i = 0; i < k; ++i)
            MPI_Isend(sl->ranks + 1, k, MPI_INT, subset[i], NOTE_TAG, MPI_COMM_WORLD, &sl->req[sl->nreq++]);
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, k + 1, sl->ranks, &sl->group);
        MPI_Group_free(&world);
        MPI_Comm_create_group(MPI_COMM_WORLD, sl->group, round & 0x7fff, &sl->comm);
        /* One round at a time: what a user writes.  In flight: the
         * non-blocking form (which the targets must use as well). */
        if (window == 1)
            MPI_Bcast(sbuf, (int)bytes, MPI_BYTE, 0, sl->comm);
        else
            MPI_Ibcast(sbuf, (int)bytes, MPI_BYTE, 0, sl->comm, &sl->req[sl->nreq++]);
    } else {
        for (i = 0; i < k; ++i)
            MPI_Isend(sbuf, (int)bytes, MPI_BYTE, subset[i], DATA_TAG, MPI_COMM_WORLD, &sl->req[sl->nreq++]);
    }
    for (i = 0; i < k; ++i)
        MPI_Irecv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, ACK_TAG(round), MPI_COMM_WORLD, &sl->req[sl->nreq++]);
}

static void finish_round(struct slot *sl)
{
    MPI_Waitall(sl->nreq, sl->req, MPI_STATUSES_IGNORE);
    sl->nreq = 0;
    if (sl->comm != MPI_COMM_NULL) {
        MPI_Comm_free(&sl->comm);
        MPI_Group_free(&sl->group);
    }
}

/* A worker's part of a round it is a target of. */
static void worker_round(enum method m, int rank, int k, unsigned char *buf, long bytes, int round, int window)
{
    if (m == MCAST) {
#ifdef GMPI_MCAST
        GMPI_Mcast_recv(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#endif
    } else if (m == COMM) {
        MPI_Group world, group;
        MPI_Comm comm;
        int *ranks = (int *)malloc((size_t)(k + 1) * sizeof(int));
        ranks[0] = 0;
        MPI_Recv(ranks + 1, k, MPI_INT, 0, NOTE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, k + 1, ranks, &group);
        MPI_Comm_create_group(MPI_COMM_WORLD, group, round & 0x7fff, &comm);
        if (window == 1) {
            MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, comm);
        } else { /* the master's is an MPI_Ibcast: a blocking MPI_Bcast would not match it */
            MPI_Request req;
            MPI_Ibcast(buf, (int)bytes, MPI_BYTE, 0, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        MPI_Comm_free(&comm);
        MPI_Group_free(&group);
        MPI_Group_free(&world);
        free(ranks);
    } else {
        MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, DATA_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (bytes > 0 && buf[0] != (unsigned char)(round & 0xff)) {
        if (errors++ == 0)
            fprintf(stderr, "mcast_bench: rank %d round %d: wrong data (%d)\n", rank, round, buf[0]);
    }
    MPI_Send(NULL, 0, MPI_BYTE, 0, ACK_TAG(round), MPI_COMM_WORLD);
}

/* Rounds [first, first + count) with up to window in flight; every rank
 * draws the same subsets. */
static void run_rounds(enum method m, int rank, int np, int k, unsigned char *buf, long bytes, int first, int count,
                       int window, struct slot *slots, int *subset)
{
    int i;
    for (i = 0; i < count; ++i) {
        int round = first + i;
        draw(np, k, subset);
        if (rank == 0) {
            struct slot *sl = &slots[i % window];
            if (i >= window)
                finish_round(sl);
            start_round(m, sl, subset, k, buf + (size_t)(i % window) * (size_t)bytes, bytes, round, window);
        } else if (is_member(rank, subset, k)) {
            worker_round(m, rank, k, buf, bytes, round, window);
        }
    }
    if (rank == 0) {
        int left = count < window ? count : window;
        for (i = count - left; i < count; ++i)
            finish_round(&slots[i % window]);
    }
}

int main(int argc, char **argv)
{
    int rank, np, i, mi, ki, si;
    int methods[3], nmethods = 0, subsets[16], nsubsets = 0, max_rounds = 200, windows[8], nwindows = 0, wi;
    int window = 1; /* the largest */
    double seconds = 1.0;
    long sizes[MAX_SIZES];
    int nsizes = 0;
    const char *method_arg = "mcast,comm,isend", *subset_arg = "2,4,all", *size_arg = "1k,64k,1m", *window_arg = "1";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--methods") && i + 1 < argc) method_arg = argv[++i];
        else if (!strcmp(argv[i], "--subsets") && i + 1 < argc) subset_arg = argv[++i];
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) size_arg = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) max_rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--window") && i + 1 < argc) window_arg = argv[++i];
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
        snprintf(copy, sizeof copy, "%s", window_arg);
        for (tok = strtok(copy, ","); tok && nwindows < 8; tok = strtok(NULL, ",")) {
            windows[nwindows] = atoi(tok);
            if (windows[nwindows] < 1 || windows[nwindows] > 64) {
                nwindows = 0;
                break;
            }
            if (windows[nwindows] > window)
                window = windows[nwindows];
            ++nwindows;
        }
    }
    if (np < 2 || nsizes <= 0 || nwindows == 0) {
        if (rank == 0)
            fprintf(stderr, "mcast_bench: needs 2 or more processes, sizes and a window of 1 to 64\n");
        MPI_Finalize();
        return 2;
    }
    {
        long max_bytes = 0;
        unsigned char *buf;
        size_t buf_bytes;
        int *subset = (int *)malloc((size_t)np * sizeof(int));
        struct slot *slots = (struct slot *)calloc((size_t)window, sizeof(struct slot));
        for (i = 0; i < window; ++i) { /* comm: k notes, the Ibcast, k acknowledgements */
            slots[i].req = (MPI_Request *)malloc((size_t)(2 * np + 1) * sizeof(MPI_Request));
            slots[i].ranks = (int *)malloc((size_t)(np + 1) * sizeof(int));
        }
        for (si = 0; si < nsizes; ++si)
            if (sizes[si] > max_bytes)
                max_bytes = sizes[si];
        /* the master: one buffer per round in flight */
        buf_bytes = (size_t)max_bytes * (size_t)(rank == 0 ? window : 1) + 1;
        buf = (unsigned char *)malloc(buf_bytes);
        memset(buf, 0, buf_bytes);
        for (wi = 0; wi < nwindows; ++wi) {
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
                            run_rounds(m, rank, np, k, buf, sizes[si], round, rounds, windows[wi], slots, subset);
                            round += rounds;
                            elapsed = MPI_Wtime() - t0;
                        }
                        if (rank == 0)
                            printf("MC method=%s np=%d k=%d bytes=%ld window=%d rounds=%d us=%.3f\n",
                                   method_names[m], np, k, sizes[si], windows[wi], rounds, elapsed / rounds * 1e6);
                    }
                }
            }
        }
        for (i = 0; i < window; ++i) {
            free(slots[i].req);
            free(slots[i].ranks);
        }
        free(slots);
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
