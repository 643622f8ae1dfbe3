/* What is particular to non-blocking collectives (MPI-3.1 5.12): several
 * outstanding at once on two communicators, completed in another order than
 * started (Waitall in reverse, Test loops, Waitany, Testsome); one
 * overlapped with point-to-point traffic on the same communicator,
 * wildcards included; many in flight at once; MPI_Ibarrier not completing
 * anywhere before every rank has entered; a datatype and a user op freed
 * right after the call; Iallreduce, Ireduce, Iscan and Iexscan with a
 * non-commutative user op (reduced in rank order). */
#include "mpitest.h"

/* ---- a non-commutative op: composition of affine maps x -> a x + b ------ */
static MPI_Datatype pair_type;

static void affine(const unsigned *l, const unsigned *r, unsigned *out)
{
    unsigned a = l[0] * r[0], b = r[0] * l[1] + r[1];
    out[0] = a;
    out[1] = b;
}

static void affine_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    unsigned *a = (unsigned *)in, *b = (unsigned *)inout;
    int i;
    (void)type;
    for (i = 0; i < *len; ++i)
        affine(a + 2 * i, b + 2 * i, b + 2 * i);
}

static void affine_value(int rank, int i, unsigned *out)
{
    out[0] = 2u * (unsigned)(rank * 5 + i) + 3u;
    out[1] = (unsigned)(rank * 11 + i * 7 + 1);
}

/* Expected reduction of ranks [first, last] at element i. */
static void affine_expected(int first, int last, int i, unsigned *out)
{
    int r;
    affine_value(first, i, out);
    for (r = first + 1; r <= last; ++r) {
        unsigned v[2];
        affine_value(r, i, v);
        affine(out, v, out);
    }
}

static void test_noncommutative(MPI_Op op)
{
    enum { N = 5 };
    unsigned send[2 * N], all[2 * N], inplace[2 * N], red[2 * N], scan[2 * N], exscan[2 * N], e[2];
    MPI_Request rq[5];
    int i;
    for (i = 0; i < N; ++i) {
        affine_value(mt_rank, i, send + 2 * i);
        affine_value(mt_rank, i, inplace + 2 * i);
    }
    memset(exscan, 0xee, sizeof exscan);
    E(MPI_Iallreduce(send, all, N, pair_type, op, MPI_COMM_WORLD, &rq[0]));
    E(MPI_Iallreduce(MPI_IN_PLACE, inplace, N, pair_type, op, MPI_COMM_WORLD, &rq[1]));
    E(MPI_Ireduce(send, red, N, pair_type, op, mt_size - 1, MPI_COMM_WORLD, &rq[2]));
    E(MPI_Iscan(send, scan, N, pair_type, op, MPI_COMM_WORLD, &rq[3]));
    E(MPI_Iexscan(send, exscan, N, pair_type, op, MPI_COMM_WORLD, &rq[4]));
    E(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
    for (i = 0; i < N; ++i) {
        affine_expected(0, mt_size - 1, i, e);
        CHECK(all[2 * i] == e[0] && all[2 * i + 1] == e[1], "iallreduce non-commutative elem %d", i);
        CHECK(inplace[2 * i] == e[0] && inplace[2 * i + 1] == e[1],
              "iallreduce in place non-commutative elem %d", i);
        if (mt_rank == mt_size - 1)
            CHECK(red[2 * i] == e[0] && red[2 * i + 1] == e[1], "ireduce non-commutative elem %d", i);
        affine_expected(0, mt_rank, i, e);
        CHECK(scan[2 * i] == e[0] && scan[2 * i + 1] == e[1], "iscan non-commutative elem %d", i);
        if (mt_rank > 0) {
            affine_expected(0, mt_rank - 1, i, e);
            CHECK(exscan[2 * i] == e[0] && exscan[2 * i + 1] == e[1],
                  "iexscan non-commutative elem %d", i);
        }
    }
}

/* ---- several outstanding on two communicators ---------------------------- */
static void test_two_comms(MPI_Comm dup, int order)
{
    enum { N = 3 };
    int p = mt_size, r = mt_rank, i, j;
    int sum_in[N], sum_out[N], bval[N], gath[N * 64], a2a_in[64], a2a_out[64], red_out[N];
    MPI_Request rq[5];
    int done[5] = {0, 0, 0, 0, 0}, ndone = 0;
    for (i = 0; i < N; ++i) {
        sum_in[i] = r * 10 + i;
        bval[i] = r == p - 1 ? 1000 + i : -1;
    }
    for (j = 0; j < p; ++j)
        a2a_in[j] = r * 100 + j;
    E(MPI_Iallreduce(sum_in, sum_out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
    E(MPI_Ibcast(bval, N, MPI_INT, p - 1, dup, &rq[1]));
    E(MPI_Iallgather(sum_in, N, MPI_INT, gath, N, MPI_INT, MPI_COMM_WORLD, &rq[2]));
    E(MPI_Ialltoall(a2a_in, 1, MPI_INT, a2a_out, 1, MPI_INT, dup, &rq[3]));
    E(MPI_Ireduce(sum_in, red_out, N, MPI_INT, MPI_MAX, 0, dup, &rq[4]));
    if (order == 0) { /* Wait, one by one, in reverse */
        for (i = 4; i >= 0; --i)
            E(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
    } else if (order == 1) { /* Waitany */
        for (i = 0; i < 5; ++i) {
            int index = -1;
            E(MPI_Waitany(5, rq, &index, MPI_STATUS_IGNORE));
            CHECK(index >= 0 && index < 5 && !done[index], "waitany index %d", index);
            if (index >= 0 && index < 5)
                done[index] = 1;
        }
    } else if (order == 2) { /* Testsome loop */
        while (ndone < 5) {
            int outcount = 0, indices[5];
            E(MPI_Testsome(5, rq, &outcount, indices, MPI_STATUSES_IGNORE));
            if (outcount != MPI_UNDEFINED)
                ndone += outcount;
        }
    } else { /* Test on the last one first, then Testall */
        int flag = 0;
        while (!flag)
            E(MPI_Test(&rq[4], &flag, MPI_STATUS_IGNORE));
        flag = 0;
        while (!flag)
            E(MPI_Testall(5, rq, &flag, MPI_STATUSES_IGNORE));
    }
    for (i = 0; i < 5; ++i)
        CHECK_INT("request is MPI_REQUEST_NULL after completion", (long long)(intptr_t)MPI_REQUEST_NULL,
                  (long long)(intptr_t)rq[i]);
    for (i = 0; i < N; ++i) {
        CHECK_INT("iallreduce", 10 * p * (p - 1) / 2 + p * i, sum_out[i]);
        CHECK_INT("ibcast", 1000 + i, bval[i]);
        if (r == 0)
            CHECK_INT("ireduce max", (p - 1) * 10 + i, red_out[i]);
        for (j = 0; j < p; ++j)
            CHECK_INT("iallgather", j * 10 + i, gath[j * N + i]);
    }
    for (j = 0; j < p; ++j)
        CHECK_INT("ialltoall", j * 100 + r, a2a_out[j]);
}

/* ---- overlap with point-to-point on the same communicator --------------- */
static void test_p2p_overlap(void)
{
    enum { N = 1000 };
    int p = mt_size, r = mt_rank, i, k;
    int *in = (int *)mt_malloc(N * sizeof(int)), *out = (int *)mt_malloc(N * sizeof(int));
    MPI_Request coll;
    for (i = 0; i < N; ++i)
        in[i] = r + i;
    E(MPI_Iallreduce(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &coll));
    /* A ring of messages with wildcard receives: none may match collective traffic. */
    for (k = 0; k < 3; ++k) {
        int token = r * 1000 + k, got = -1;
        MPI_Status status;
        MPI_Request send;
        E(MPI_Isend(&token, 1, MPI_INT, (r + 1) % p, 7 + k, MPI_COMM_WORLD, &send));
        E(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
        E(MPI_Wait(&send, MPI_STATUS_IGNORE));
        CHECK_INT("p2p token during iallreduce", ((r - 1 + p) % p) * 1000 + k, got);
        CHECK_INT("p2p tag during iallreduce", 7 + k, status.MPI_TAG);
        CHECK_INT("p2p source during iallreduce", (r - 1 + p) % p, status.MPI_SOURCE);
    }
    E(MPI_Wait(&coll, MPI_STATUS_IGNORE));
    for (i = 0; i < N; ++i) {
        if (out[i] != p * (p - 1) / 2 + p * i) {
            CHECK_INT("iallreduce overlapped with p2p", p * (p - 1) / 2 + p * i, out[i]);
            break;
        }
    }
    free(in);
    free(out);
}

/* ---- many in flight ------------------------------------------------------ */
static void test_many(void)
{
    enum { M = 40 };
    int values[M], results[M], i;
    MPI_Request rq[M];
    for (i = 0; i < M; ++i) {
        values[i] = mt_rank * M + i;
        E(MPI_Iallreduce(&values[i], &results[i], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[i]));
    }
    E(MPI_Waitall(M, rq, MPI_STATUSES_IGNORE));
    for (i = 0; i < M; ++i)
        CHECK_INT("one of many iallreduce", M * mt_size * (mt_size - 1) / 2 + mt_size * i, results[i]);
}

/* ---- Ibarrier: nobody completes before the last rank has entered -------- */
static void test_ibarrier(int last)
{
    MPI_Request rq;
    int i, flag = 0, ok = 1;
    if (mt_rank != last) {
        double until;
        E(MPI_Ibarrier(MPI_COMM_WORLD, &rq));
        until = MPI_Wtime() + 0.2;
        while (MPI_Wtime() < until) {
            E(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
            if (flag) {
                MT_FAIL("ibarrier completed before rank %d entered it", last);
                ok = 0;
                break;
            }
            mt_sleep_ms(1);
        }
        E(MPI_Send(&ok, 1, MPI_INT, last, MT_TAG_SYNC, MPI_COMM_WORLD));
        if (!flag)
            E(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        for (i = 0; i < mt_size - 1; ++i)
            E(MPI_Recv(&ok, 1, MPI_INT, MPI_ANY_SOURCE, MT_TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        E(MPI_Ibarrier(MPI_COMM_WORLD, &rq));
        E(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
}

/* ---- handles freed while the operation runs ------------------------------ */
static void test_freed_handles(void)
{
    enum { N = 4 };
    MPI_Datatype vec;
    MPI_Op op;
    unsigned send[2 * N], recv[2 * N], e[2];
    int data[3 * N], bcast[3 * N], i;
    MPI_Request rq[2];
    E(MPI_Type_vector(N, 1, 3, MPI_INT, &vec));
    E(MPI_Type_commit(&vec));
    E(MPI_Op_create(affine_op, 0, &op));
    for (i = 0; i < 3 * N; ++i) {
        data[i] = 5000 + i;
        bcast[i] = mt_rank == 0 ? 5000 + i : -1;
    }
    for (i = 0; i < N; ++i)
        affine_value(mt_rank, i, send + 2 * i);
    E(MPI_Ibcast(bcast, 1, vec, 0, MPI_COMM_WORLD, &rq[0]));
    E(MPI_Iallreduce(send, recv, N, pair_type, op, MPI_COMM_WORLD, &rq[1]));
    E(MPI_Type_free(&vec));
    E(MPI_Op_free(&op));
    E(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (i = 0; i < 3 * N; ++i)
        CHECK_INT("ibcast with a freed vector type", i % 3 == 0 ? data[i] : (mt_rank == 0 ? data[i] : -1),
                  bcast[i]);
    for (i = 0; i < N; ++i) {
        affine_expected(0, mt_size - 1, i, e);
        CHECK(recv[2 * i] == e[0] && recv[2 * i + 1] == e[1], "iallreduce with a freed op elem %d", i);
    }
}

int main(int argc, char **argv)
{
    MPI_Comm dup;
    MPI_Op op;
    int order;
    mt_init(&argc, &argv);
    E(MPI_Type_contiguous(2, MPI_UNSIGNED, &pair_type));
    E(MPI_Type_commit(&pair_type));
    E(MPI_Op_create(affine_op, 0, &op));
    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));

    test_noncommutative(op);
    for (order = 0; order < 4; ++order)
        test_two_comms(dup, (order + mt_rank) % 4); /* each rank completes in its own way */
    test_p2p_overlap();
    test_many();
    test_ibarrier(0);
    test_ibarrier(mt_size - 1);
    test_freed_handles();

    E(MPI_Comm_free(&dup));
    E(MPI_Op_free(&op));
    E(MPI_Type_free(&pair_type));
    return mt_finish();
}
