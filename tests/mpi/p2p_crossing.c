/* p2p_crossing.c — waiting on one peer while another peer needs us.
 *
 * Every rank blocks in a receive from one neighbour while its own send to
 * the other neighbour can only finish if the rank keeps serving that
 * second connection (rendezvous data, clear-to-send, synchronous acks).
 * Split over two clusters with the first cluster on the vendor transport
 * (tests/mpi/CMakeLists.txt, label vendor), the ring 0 -> 1 -> 2 -> 3 -> 0
 * alternates vendor, IMPI, tcp and IMPI links: a rank that waited on one
 * transport without serving the others would deadlock (the problem of the
 * GridMPI/pSeries paper).  Also useful on one cluster: any transport mix.
 *
 * Patterns, each in both directions and repeated, over sizes from 8 B to
 * 4 MiB: Isend + Recv + Wait (standard), Issend + Recv + Wait
 * (synchronous), and ANY_SOURCE receives of a message from every rank (a tag per round:
 * a fast rank may already send the next round)
 * while sending to every rank.  Every byte is checked. */
#include "mpitest.h"

#define ROUNDS 6

static void fill(unsigned char *buf, size_t n, int from, int round)
{
    size_t i;
    for (i = 0; i < n; ++i)
        buf[i] = (unsigned char)(from * 31 + round * 7 + i * 13);
}

static int check(const unsigned char *buf, size_t n, int from, int round)
{
    size_t i;
    for (i = 0; i < n; ++i)
        if (buf[i] != (unsigned char)(from * 31 + round * 7 + i * 13))
            return (int)i;
    return -1;
}

static void ring(size_t n, int step, int synchronous)
{
    int next = (mt_rank + step + mt_size) % mt_size, prev = (mt_rank - step + mt_size) % mt_size;
    unsigned char *out = malloc(n ? n : 1), *in = malloc(n ? n : 1);
    int round;
    for (round = 0; round < ROUNDS; ++round) {
        MPI_Request req;
        MPI_Status st;
        int count, bad;
        fill(out, n, mt_rank, round);
        memset(in, 0, n);
        if (synchronous)
            E(MPI_Issend(out, (int)n, MPI_BYTE, next, 5, MPI_COMM_WORLD, &req));
        else
            E(MPI_Isend(out, (int)n, MPI_BYTE, next, 5, MPI_COMM_WORLD, &req));
        E(MPI_Recv(in, (int)n, MPI_BYTE, prev, 5, MPI_COMM_WORLD, &st));
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        E(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECK_INT("ring count", (long long)n, count);
        bad = check(in, n, prev, round);
        if (bad >= 0)
            MT_FAIL("ring of %zu bytes, step %d, %s, round %d: byte %d from rank %d is wrong", n, step,
                    synchronous ? "ssend" : "send", round, bad, prev);
    }
    free(out);
    free(in);
}

static void all_to_any(size_t n)
{
    unsigned char *out = malloc(n ? n : 1), *in = malloc((n ? n : 1) * (size_t)mt_size);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)mt_size);
    int *seen = calloc((size_t)mt_size, sizeof(int));
    int round, r, k;
    for (round = 0; round < ROUNDS; ++round) {
        fill(out, n, mt_rank, round);
        for (r = 0, k = 0; r < mt_size; ++r)
            if (r != mt_rank)
                E(MPI_Isend(out, (int)n, MPI_BYTE, r, 100 + round, MPI_COMM_WORLD, &reqs[k++]));
        memset(seen, 0, sizeof(int) * (size_t)mt_size);
        for (r = 0; r < mt_size - 1; ++r) {
            MPI_Status st;
            unsigned char *slot = in + (size_t)r * (n ? n : 1);
            int bad;
            E(MPI_Recv(slot, (int)n, MPI_BYTE, MPI_ANY_SOURCE, 100 + round, MPI_COMM_WORLD, &st));
            if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= mt_size || st.MPI_SOURCE == mt_rank) {
                MT_FAIL("ANY_SOURCE receive reports source %d", st.MPI_SOURCE);
                continue;
            }
            ++seen[st.MPI_SOURCE];
            bad = check(slot, n, st.MPI_SOURCE, round);
            if (bad >= 0)
                MT_FAIL("any-source of %zu bytes, round %d: byte %d from rank %d is wrong", n, round, bad,
                        st.MPI_SOURCE);
        }
        for (r = 0; r < mt_size; ++r)
            if (r != mt_rank && seen[r] != 1)
                MT_FAIL("round %d: %d messages of %zu bytes from rank %d, expected 1", round, seen[r], n, r);
        E(MPI_Waitall(mt_size - 1, reqs, MPI_STATUSES_IGNORE));
    }
    free(out);
    free(in);
    free(reqs);
    free(seen);
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {8, 4064, 65536, 1 << 20, 4 << 20};
    size_t i;
    mt_init(&argc, &argv);
    if (mt_size < 2)
        return mt_finish();
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        ring(sizes[i], 1, 0);
        ring(sizes[i], -1, 0);
        ring(sizes[i], 1, 1);
        ring(sizes[i], -1, 1);
        if (sizes[i] <= (1 << 20))
            all_to_any(sizes[i]);
        mt_barrier();
    }
    return mt_finish();
}
