#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

#include "probe.h"

/* probe_progress: progress must happen inside Test / Iprobe / Testall loops
 * (no Wait anywhere), large Bsend above the rendezvous size completed by
 * Buffer_detach, Ssend from every rank to an ANY_SOURCE receiver. */

static void spin_test(MPI_Request *r, MPI_Status *st)
{
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 20) MPI_Test(r, &flag, st);
    CHECK(flag, "request never completed by MPI_Test polling");
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p_rank = rank;
    int N = 1 << 20; /* 4 MiB of ints */
    int *big = malloc(sizeof(int) * N), *rbig = malloc(sizeof(int) * N);
    for (int i = 0; i < N; i++) big[i] = i ^ rank;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* 1: ring of large Isend/Irecv completed only by Test polling */
    MPI_Request rs, rr;
    MPI_Status st;
    MPI_Irecv(rbig, N, MPI_INT, left, 1, MPI_COMM_WORLD, &rr);
    MPI_Isend(big, N, MPI_INT, right, 1, MPI_COMM_WORLD, &rs);
    spin_test(&rs, MPI_STATUS_IGNORE);
    spin_test(&rr, &st);
    CHECK(rbig[N - 1] == ((N - 1) ^ left), "test-polled ring data");
    /* 2: sender's Isend progresses while it spins in Iprobe waiting for the reply */
    if (size >= 2 && rank < 2) {
        int other = 1 - rank;
        if (rank == 0) {
            MPI_Isend(big, N, MPI_INT, other, 2, MPI_COMM_WORLD, &rs);
            int flag = 0;
            double t0 = MPI_Wtime();
            while (!flag && MPI_Wtime() - t0 < 20) MPI_Iprobe(other, 3, MPI_COMM_WORLD, &flag, &st);
            CHECK(flag, "reply never seen by Iprobe: Isend made no progress inside Iprobe");
            int x;
            MPI_Recv(&x, 1, MPI_INT, other, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            spin_test(&rs, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbig, N, MPI_INT, other, 2, MPI_COMM_WORLD, &st);
            CHECK(rbig[N - 1] == ((N - 1) ^ other), "iprobe-progress data");
            int x = 1;
            MPI_Send(&x, 1, MPI_INT, other, 3, MPI_COMM_WORLD);
        }
    }
    /* 3: receiver discovers a large message with an Iprobe loop only */
    if (size >= 2 && rank < 2) {
        int other = 1 - rank;
        if (rank == 1) {
            MPI_Send(big, N, MPI_INT, other, 4, MPI_COMM_WORLD);
        } else {
            int flag = 0;
            double t0 = MPI_Wtime();
            while (!flag && MPI_Wtime() - t0 < 20) MPI_Iprobe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            CHECK(flag && st.MPI_TAG == 4, "Iprobe loop: flag %d tag %d", flag, st.MPI_TAG);
            int c = -1;
            MPI_Get_count(&st, MPI_INT, &c);
            CHECK(c == N, "Iprobe count %d", c);
            MPI_Recv(rbig, N, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(rbig[5] == (5 ^ 1), "iprobe-loop data");
        }
    }
    /* 4: large Bsend (above any eager limit), receive posted late; detach completes it */
    int psz;
    MPI_Pack_size(N / 4, MPI_INT, MPI_COMM_WORLD, &psz);
    int bsz = psz + MPI_BSEND_OVERHEAD;
    void *bb = malloc(bsz);
    MPI_Buffer_attach(bb, bsz);
    MPIOK(MPI_Bsend(big, N / 4, MPI_INT, right, 5, MPI_COMM_WORLD));
    for (int i = 0; i < N / 4; i++) big[i] = -1; /* must not affect the message */
    MPI_Recv(rbig, N / 4, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(rbig[0] == (0 ^ left) && rbig[N / 4 - 1] == ((N / 4 - 1) ^ left), "large Bsend data %d", rbig[0]);
    void *db;
    int ds;
    MPIOK(MPI_Buffer_detach(&db, &ds));
    free(bb);
    for (int i = 0; i < N; i++) big[i] = i ^ rank;
    /* 5: every rank Ssends to rank 0, which receives ANY_SOURCE with Testany polling */
    if (rank == 0) {
        int *v = malloc(sizeof(int) * size);
        MPI_Request *rq = malloc(sizeof(MPI_Request) * size);
        for (int q = 1; q < size; q++) MPI_Irecv(&v[q], 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &rq[q]);
        int seen = 0, mask = 0;
        double t0 = MPI_Wtime();
        while (seen < size - 1 && MPI_Wtime() - t0 < 20) {
            int idx, flag;
            MPI_Testany(size - 1, rq + 1, &idx, &flag, &st);
            if (flag && idx != MPI_UNDEFINED) {
                seen++;
                CHECK(v[idx + 1] == st.MPI_SOURCE * 11, "Ssend value %d from %d", v[idx + 1], st.MPI_SOURCE);
                mask |= 1 << st.MPI_SOURCE;
            }
        }
        CHECK(seen == size - 1 && mask == ((1 << size) - 2), "Ssend ANY_SOURCE: seen %d mask %x", seen, mask);
        free(v); free(rq);
    } else {
        int x = rank * 11;
        MPI_Ssend(&x, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
    }
    /* 6: Testall polling over many mixed-size requests in both directions */
    enum { K = 16 };
    MPI_Request rq[2 * K];
    int *sb = malloc(sizeof(int) * K * 4096), *rb = malloc(sizeof(int) * K * 4096);
    for (int k = 0; k < K; k++) {
        int cnt = (k % 2) ? 4096 : 3;
        for (int i = 0; i < cnt; i++) sb[k * 4096 + i] = rank * 7 + k + i;
        MPI_Irecv(rb + k * 4096, cnt, MPI_INT, left, 100 + k, MPI_COMM_WORLD, &rq[k]);
    }
    for (int k = 0; k < K; k++) {
        int j = K - 1 - k, cj = (j % 2) ? 4096 : 3;
        MPI_Isend(sb + j * 4096, cj, MPI_INT, right, 100 + j, MPI_COMM_WORLD, &rq[K + k]);
    }
    /* sends are posted in reverse tag order; sizes must match per tag */
    int done = 0;
    double t0 = MPI_Wtime();
    while (!done && MPI_Wtime() - t0 < 20) MPI_Testall(2 * K, rq, &done, MPI_STATUSES_IGNORE);
    CHECK(done, "Testall polling never completed");
    int badk = 0;
    for (int k = 0; k < K; k++) {
        int cnt = (k % 2) ? 4096 : 3;
        for (int i = 0; i < cnt; i++) if (rb[k * 4096 + i] != left * 7 + k + i) badk = 1;
    }
    CHECK(!badk, "Testall exchange data wrong");
    free(sb); free(rb);
    free(big); free(rbig);
    p_finish();
    return 0;
}
