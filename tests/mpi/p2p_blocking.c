/* Blocking MPI_Send/MPI_Recv over a sweep of sizes: 0 bytes, small, around
 * the 16 KiB and 64 KiB boundaries where implementations switch protocol,
 * and several MiB (rendezvous).  Ranks work in pairs (0-1, 2-3, ...); with an
 * odd size the last rank talks to itself with Isend/Recv/Wait.  Checks the
 * data, that bytes beyond the message are untouched, status SOURCE and TAG,
 * Get_count in bytes and in ints (MPI_UNDEFINED when not a whole number),
 * Get_elements. */
#include "mpitest.h"

static const size_t sizes[] = {0,     1,     7,     64,    1000,   16383,  16384,
                               16385, 65535, 65536, 65537, 262144, (4u << 20) + 3};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define SLACK 16

int main(int argc, char **argv)
{
    int partner, k;
    unsigned char *sbuf, *rbuf;
    size_t maxn = sizes[NSIZES - 1];

    mt_init(&argc, &argv);
    partner = mt_rank ^ 1;
    if (partner >= mt_size)
        partner = mt_rank;
    sbuf = mt_malloc(maxn);
    rbuf = mt_malloc(maxn + SLACK);

    for (k = 0; k < (int)NSIZES; ++k) {
        size_t n = sizes[k];
        MPI_Status st;
        int count = -1, i;
        char what[128];

        mt_fill(sbuf, n, mt_rank * 64 + k);
        memset(rbuf, 0xEE, n + SLACK);
        st.MPI_SOURCE = st.MPI_TAG = -77;
        if (partner == mt_rank) {
            MPI_Request req;
            E(MPI_Isend(sbuf, (int)n, MPI_BYTE, mt_rank, k, MPI_COMM_WORLD, &req));
            E(MPI_Recv(rbuf, (int)(n + SLACK), MPI_BYTE, mt_rank, k, MPI_COMM_WORLD, &st));
            E(MPI_Wait(&req, MPI_STATUS_IGNORE));
            CHECK(req == MPI_REQUEST_NULL, "request after MPI_Wait, expected MPI_REQUEST_NULL got %d", MT_H(req));
        } else if (mt_rank % 2 == 0) {
            E(MPI_Send(sbuf, (int)n, MPI_BYTE, partner, k, MPI_COMM_WORLD));
            E(MPI_Recv(rbuf, (int)(n + SLACK), MPI_BYTE, partner, k, MPI_COMM_WORLD, &st));
        } else {
            E(MPI_Recv(rbuf, (int)(n + SLACK), MPI_BYTE, partner, k, MPI_COMM_WORLD, &st));
            E(MPI_Send(sbuf, (int)n, MPI_BYTE, partner, k, MPI_COMM_WORLD));
        }
        snprintf(what, sizeof what, "data of %zu-byte message from rank %d", n, partner);
        CHECK_PATTERN(what, rbuf, n, partner * 64 + k);
        for (i = 0; i < SLACK; ++i) {
            if (rbuf[n + i] != 0xEE) {
                MT_FAIL("%zu-byte message: byte %zu past the end written, expected 238 got %d", n,
                        n + i, rbuf[n + i]);
                break;
            }
        }
        snprintf(what, sizeof what, "%zu-byte message: status.MPI_SOURCE", n);
        CHECK_INT(what, partner, st.MPI_SOURCE);
        snprintf(what, sizeof what, "%zu-byte message: status.MPI_TAG", n);
        CHECK_INT(what, k, st.MPI_TAG);
        E(MPI_Get_count(&st, MPI_BYTE, &count));
        snprintf(what, sizeof what, "%zu-byte message: MPI_Get_count(MPI_BYTE)", n);
        CHECK_INT(what, n, count);
        E(MPI_Get_count(&st, MPI_INT, &count));
        snprintf(what, sizeof what, "%zu-byte message: MPI_Get_count(MPI_INT)", n);
        CHECK_INT(what, n % sizeof(int) ? MPI_UNDEFINED : (int)(n / sizeof(int)), count);
        E(MPI_Get_elements(&st, MPI_BYTE, &count));
        snprintf(what, sizeof what, "%zu-byte message: MPI_Get_elements(MPI_BYTE)", n);
        CHECK_INT(what, n, count);
    }

    /* Typed transfer of ints in both directions at once with Sendrecv. */
    {
        int *a = mt_malloc(100000 * sizeof(int)), *b = mt_malloc(100000 * sizeof(int)), i, count;
        MPI_Status st;
        for (i = 0; i < 100000; ++i)
            a[i] = mt_rank * 1000003 + i;
        E(MPI_Sendrecv(a, 100000, MPI_INT, partner, 500, b, 100000, MPI_INT, partner, 500,
                       MPI_COMM_WORLD, &st));
        for (i = 0; i < 100000; ++i)
            if (b[i] != partner * 1000003 + i) {
                MT_FAIL("int %d from rank %d, expected %d got %d", i, partner, partner * 1000003 + i, b[i]);
                break;
            }
        E(MPI_Get_count(&st, MPI_INT, &count));
        CHECK_INT("MPI_Get_count(MPI_INT) of 100000 ints", 100000, count);
        free(a);
        free(b);
    }
    free(sbuf);
    free(rbuf);
    return mt_finish();
}
