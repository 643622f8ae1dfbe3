#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "probe.h"

/* probe_p2p_order: sizes around protocol boundaries, head-to-head exchange,
 * wildcard matching order, non-overtaking, Ssend semantics, unexpected
 * message floods, zero-count / zero-size messages. */

static unsigned char pat(size_t i, int seed) { return (unsigned char)((i * 131u + (unsigned)seed * 7u + 3u) & 0xff); }

static void fill(unsigned char *b, size_t n, int seed) { for (size_t i = 0; i < n; i++) b[i] = pat(i, seed); }
static size_t first_bad(const unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) if (b[i] != pat(i, seed)) return i;
    return (size_t)-1;
}

static void test_sizes(int rank, int size)
{
    /* pairs (r, r^1) exchange head-to-head with Isend/Irecv; 64 MiB only 0<->1 */
    static const size_t sizes[] = {0, 1, 65535, 65536, 65537, 16383, 16384, 16385, 4u << 20, 64u << 20};
    int peer = rank ^ 1;
    if (peer >= size) peer = rank; /* self */
    for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        if (n == (64u << 20) && !(rank < 2)) continue;
        if (n == (64u << 20) && size == 1) continue;
        if (n == (64u << 20) && peer == rank) continue;
        unsigned char *s = malloc(n + 1), *r = malloc(n + 16);
        fill(s, n, rank + (int)k);
        memset(r, 0xEE, n + 16);
        MPI_Request rq[2];
        MPI_Status st[2];
        MPIOK(MPI_Irecv(r, (int)(n + 16), MPI_BYTE, peer, 10 + (int)k, MPI_COMM_WORLD, &rq[0]));
        MPIOK(MPI_Isend(s, (int)n, MPI_BYTE, peer, 10 + (int)k, MPI_COMM_WORLD, &rq[1]));
        MPIOK(MPI_Waitall(2, rq, st));
        int cnt = -1;
        MPI_Get_count(&st[0], MPI_BYTE, &cnt);
        CHECK(cnt == (int)n, "size %zu: Get_count expected %zu got %d", n, n, cnt);
        CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 10 + (int)k, "size %zu: status src %d tag %d", n, st[0].MPI_SOURCE, st[0].MPI_TAG);
        size_t bad = first_bad(r, n, peer + (int)k);
        CHECK(bad == (size_t)-1, "size %zu: byte %zu wrong", n, bad);
        int over = 0;
        for (size_t i = n; i < n + 16; i++) if (r[i] != 0xEE) over = 1;
        CHECK(!over, "size %zu: bytes written past the message", n);
        free(s); free(r);
    }
    /* blocking Sendrecv in both directions at once with large messages */
    size_t n = 1u << 20;
    unsigned char *s = malloc(n), *r = malloc(n);
    fill(s, n, rank * 3);
    MPI_Status st;
    MPIOK(MPI_Sendrecv(s, (int)n, MPI_BYTE, peer, 99, r, (int)n, MPI_BYTE, peer, 99, MPI_COMM_WORLD, &st));
    CHECK(first_bad(r, n, peer * 3) == (size_t)-1, "sendrecv 1MiB data wrong");
    free(s); free(r);
}

static void test_wildcard_order(int rank, int size)
{
    if (size < 2) return;
    /* rank 0 posts ANY/5, 1/5, ANY/ANY, 1/7; rank 1 then sends tag5:1, tag5:2, tag7:3, tag7:4 */
    if (rank == 0) {
        int v[4] = {-1, -1, -1, -1};
        MPI_Request rq[4];
        MPI_Status st[4];
        MPI_Irecv(&v[0], 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&v[1], 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq[1]);
        MPI_Irecv(&v[2], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[2]);
        MPI_Irecv(&v[3], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &rq[3]);
        int go = 1;
        MPI_Send(&go, 1, MPI_INT, 1, 1000, MPI_COMM_WORLD);
        MPIOK(MPI_Waitall(4, rq, st));
        CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 4, "posted-order matching: got %d %d %d %d expected 1 2 3 4", v[0], v[1], v[2], v[3]);
        CHECK(st[2].MPI_TAG == 7 && st[2].MPI_SOURCE == 1, "ANY/ANY status tag %d src %d", st[2].MPI_TAG, st[2].MPI_SOURCE);
    } else if (rank == 1) {
        int go;
        MPI_Recv(&go, 1, MPI_INT, 0, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int a = 1, b = 2, c = 3, d = 4;
        MPI_Send(&a, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        MPI_Send(&b, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        MPI_Send(&c, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        MPI_Send(&d, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    /* unexpected side: rank 1 sends first, rank 0 then receives with a mix of specific and wildcard */
    if (rank == 1) {
        int vals[6] = {10, 11, 12, 13, 14, 15};
        int tags[6] = {3, 4, 3, 4, 3, 4};
        MPI_Request rq[6];
        for (int i = 0; i < 6; i++) MPI_Isend(&vals[i], 1, MPI_INT, 0, tags[i], MPI_COMM_WORLD, &rq[i]);
        int done = 0;
        MPI_Send(&done, 1, MPI_INT, 0, 1001, MPI_COMM_WORLD);
        MPI_Waitall(6, rq, MPI_STATUSES_IGNORE);
    } else if (rank == 0) {
        int done, v;
        MPI_Status st;
        MPI_Recv(&done, 1, MPI_INT, 1, 1001, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* all six are now unexpected (or in flight, ordered) */
        MPI_Recv(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &st);
        CHECK(v == 11, "first tag4 expected 11 got %d", v);
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(v == 10 && st.MPI_TAG == 3, "ANY after specific: expected 10/tag3 got %d/tag%d", v, st.MPI_TAG);
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st);
        CHECK(v == 12, "ANY_SOURCE tag3 expected 12 got %d", v);
        MPI_Recv(&v, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(v == 13, "src1 ANY_TAG expected 13 got %d", v);
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st);
        CHECK(v == 15, "tag4 expected 15 got %d", v);
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(v == 14, "last expected 14 got %d", v);
    }
}

static void test_nonovertaking(int rank, int size)
{
    /* every rank != 0 sends 40 messages alternating 200 KiB / 4 B to rank 0, rank 0 receives ANY_SOURCE ANY_TAG */
    enum { N = 40, BIG = 200 * 1024 };
    if (size < 2) return;
    if (rank == 0) {
        int *next = calloc((size_t)size, sizeof(int));
        unsigned char *buf = malloc(BIG);
        int total = (size - 1) * N;
        for (int i = 0; i < total; i++) {
            MPI_Status st;
            MPIOK(MPI_Recv(buf, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE, cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            int seq = 0;
            memcpy(&seq, buf, sizeof seq);
            CHECK(src > 0 && src < size, "bad source %d", src);
            if (src <= 0 || src >= size) continue;
            CHECK(seq == next[src], "from %d: expected seq %d got %d (overtaking)", src, next[src], seq);
            CHECK(st.MPI_TAG == seq % 3, "from %d: tag %d seq %d", src, st.MPI_TAG, seq);
            CHECK(cnt == ((seq % 2) ? 4 : BIG), "from %d seq %d: count %d", src, seq, cnt);
            next[src] = seq + 1;
        }
        free(next); free(buf);
    } else {
        unsigned char *buf = calloc(BIG, 1);
        for (int s = 0; s < N; s++) {
            memcpy(buf, &s, sizeof s);
            MPI_Send(buf, (s % 2) ? 4 : BIG, MPI_BYTE, 0, s % 3, MPI_COMM_WORLD);
        }
        free(buf);
    }
}

static void test_ssend(int rank, int size)
{
    if (size < 2) return;
    if (rank == 1) {
        int v = 77, w = 88;
        MPI_Request rq;
        MPI_Issend(&v, 1, MPI_INT, 0, 20, MPI_COMM_WORLD, &rq);
        int flag = 0;
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.05) {
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
            if (flag) break;
        }
        CHECK(!flag, "Issend completed before the receive was posted");
        /* a standard send with another tag must get through while the Issend is pending */
        MPI_Send(&w, 1, MPI_INT, 0, 21, MPI_COMM_WORLD);
        MPIOK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        /* large Issend then small Send: receiver takes small first */
        size_t n = 1u << 20;
        unsigned char *b = malloc(n);
        fill(b, n, 5);
        MPI_Issend(b, (int)n, MPI_BYTE, 0, 22, MPI_COMM_WORLD, &rq);
        MPI_Send(&w, 1, MPI_INT, 0, 23, MPI_COMM_WORLD);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        /* blocking Ssend of zero bytes must also synchronise */
        MPI_Ssend(NULL, 0, MPI_BYTE, 0, 24, MPI_COMM_WORLD);
        free(b);
    } else if (rank == 0) {
        int v = 0, w = 0;
        MPI_Recv(&w, 1, MPI_INT, 1, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(w == 88, "tag21 got %d", w);
        MPI_Recv(&v, 1, MPI_INT, 1, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(v == 77, "ssend value got %d", v);
        size_t n = 1u << 20;
        unsigned char *b = malloc(n);
        MPI_Recv(&w, 1, MPI_INT, 1, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Status st;
        MPI_Recv(b, (int)n, MPI_BYTE, 1, 22, MPI_COMM_WORLD, &st);
        CHECK(first_bad(b, n, 5) == (size_t)-1, "large issend data wrong");
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 24, MPI_COMM_WORLD, &st);
        int c = -1;
        MPI_Get_count(&st, MPI_BYTE, &c);
        CHECK(c == 0, "zero Ssend count %d", c);
        free(b);
    }
}

static void test_flood(int rank, int size)
{
    /* rank size-1 sends 500 small messages then a 1 MiB one; rank 0 receives the big first */
    enum { NS = 500 };
    if (size < 2) return;
    int src = size - 1;
    size_t n = 1u << 20;
    if (rank == src) {
        static int vals[NS];
        static MPI_Request rq[NS];
        for (int i = 0; i < NS; i++) { vals[i] = i; MPI_Isend(&vals[i], 1, MPI_INT, 0, 30, MPI_COMM_WORLD, &rq[i]); }
        unsigned char *b = malloc(n);
        fill(b, n, 9);
        MPI_Send(b, (int)n, MPI_BYTE, 0, 31, MPI_COMM_WORLD);
        MPI_Waitall(NS, rq, MPI_STATUSES_IGNORE);
        free(b);
    } else if (rank == 0) {
        unsigned char *b = malloc(n);
        MPI_Status st;
        MPI_Recv(b, (int)n, MPI_BYTE, src, 31, MPI_COMM_WORLD, &st);
        CHECK(first_bad(b, n, 9) == (size_t)-1, "big after flood wrong");
        for (int i = 0; i < NS; i++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, src, 30, MPI_COMM_WORLD, &st);
            CHECK(v == i, "flood msg %d got %d", i, v);
            if (v != i) break;
        }
        free(b);
    }
}

static void test_zero(int rank, int size)
{
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Datatype z;
    MPI_Type_contiguous(0, MPI_INT, &z);
    MPI_Type_commit(&z);
    int sz = -1;
    MPI_Type_size(z, &sz);
    CHECK(sz == 0, "size of contiguous(0) is %d", sz);
    int buf[4] = {1, 2, 3, 4}, rb[4] = {9, 9, 9, 9};
    MPI_Status st;
    MPI_Request rq;
    MPI_Irecv(rb, 4, z, from, 40, MPI_COMM_WORLD, &rq);
    MPI_Send(buf, 4, z, peer, 40, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    CHECK(rb[0] == 9 && rb[3] == 9, "zero-size type wrote data");
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 40, "zero-size status src %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    int c = -1;
    MPI_Get_count(&st, MPI_BYTE, &c);
    CHECK(c == 0, "zero-size Get_count(BYTE) %d", c);
    /* count 0 with MPI_INT and NULL buffers */
    MPI_Irecv(NULL, 0, MPI_INT, from, 41, MPI_COMM_WORLD, &rq);
    MPI_Send(NULL, 0, MPI_INT, peer, 41, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    c = -1;
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK(c == 0, "zero count Get_count %d", c);
    c = -1;
    MPI_Get_elements(&st, MPI_INT, &c);
    CHECK(c == 0, "zero count Get_elements %d", c);
    /* zero-byte message into a non-zero buffer: buffer untouched */
    MPI_Irecv(rb, 4, MPI_INT, from, 42, MPI_COMM_WORLD, &rq);
    MPI_Send(buf, 0, MPI_INT, peer, 42, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    CHECK(rb[0] == 9, "zero message wrote the buffer");
    MPI_Type_free(&z);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p_rank = rank;
    test_sizes(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_wildcard_order(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_nonovertaking(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_ssend(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_flood(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    test_zero(rank, size);
    p_finish();
    return 0;
}
