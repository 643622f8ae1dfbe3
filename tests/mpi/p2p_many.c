/* Many outstanding messages: every rank has 1000 Isends to its right
 * neighbour in flight
 *  - unexpected: sent before the receiver posts anything, then received
 *    with receives posted in reverse tag order;
 *  - expected: the receiver pre-posts 1000 Irecvs (reverse order), then the
 *    sender sends;
 *  - 16 outstanding 128 KiB messages in both directions.
 * Completion with Waitall; every message checked. */
#include "mpitest.h"

#define NMSG 1000
#define NBIG 16
#define BIGN (32 * 1024) /* ints: 128 KiB */

int main(int argc, char **argv)
{
    int right, left, i, j;
    int *sv, *rv;
    MPI_Request *sreq, *rreq;
    MPI_Status *sts;

    mt_init(&argc, &argv);
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;
    sv = mt_malloc(NMSG * 2 * sizeof(int));
    rv = mt_malloc(NMSG * 2 * sizeof(int));
    sreq = mt_malloc(NMSG * sizeof(MPI_Request));
    rreq = mt_malloc(NMSG * sizeof(MPI_Request));
    sts = mt_malloc(NMSG * sizeof(MPI_Status));

    /* Unexpected messages. */
    for (i = 0; i < NMSG; ++i) {
        sv[2 * i] = mt_rank;
        sv[2 * i + 1] = i;
        E(MPI_Isend(&sv[2 * i], 2, MPI_INT, right, i, MPI_COMM_WORLD, &sreq[i]));
    }
    mt_sleep_ms(50);
    for (i = NMSG - 1; i >= 0; --i)
        E(MPI_Irecv(&rv[2 * i], 2, MPI_INT, left, i, MPI_COMM_WORLD, &rreq[i]));
    E(MPI_Waitall(NMSG, rreq, sts));
    E(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
    for (i = 0; i < NMSG; ++i) {
        if (rv[2 * i] != left || rv[2 * i + 1] != i || sts[i].MPI_TAG != i || sts[i].MPI_SOURCE != left) {
            MT_FAIL("unexpected message %d, expected (%d,%d) tag %d source %d got (%d,%d) tag %d source %d", i,
                    left, i, i, left, rv[2 * i], rv[2 * i + 1], sts[i].MPI_TAG, sts[i].MPI_SOURCE);
            break;
        }
    }

    /* Expected (pre-posted) messages. */
    memset(rv, 0, NMSG * 2 * sizeof(int));
    for (i = NMSG - 1; i >= 0; --i)
        E(MPI_Irecv(&rv[2 * i], 2, MPI_INT, left, 5000 + i, MPI_COMM_WORLD, &rreq[i]));
    E(MPI_Sendrecv(NULL, 0, MPI_BYTE, left, 4999, NULL, 0, MPI_BYTE, right, 4999, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE));
    for (i = 0; i < NMSG; ++i) {
        sv[2 * i + 1] = i + 5000;
        E(MPI_Isend(&sv[2 * i], 2, MPI_INT, right, 5000 + i, MPI_COMM_WORLD, &sreq[i]));
    }
    E(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
    E(MPI_Waitall(NMSG, rreq, sts));
    for (i = 0; i < NMSG; ++i) {
        if (rv[2 * i] != left || rv[2 * i + 1] != 5000 + i || sts[i].MPI_TAG != 5000 + i) {
            MT_FAIL("pre-posted message %d, expected (%d,%d) tag %d got (%d,%d) tag %d", i, left, 5000 + i,
                    5000 + i, rv[2 * i], rv[2 * i + 1], sts[i].MPI_TAG);
            break;
        }
    }

    /* Many large messages both ways. */
    {
        int *big_s = mt_malloc((size_t)NBIG * BIGN * sizeof(int));
        int *big_r = mt_malloc((size_t)NBIG * BIGN * sizeof(int) * 2);
        MPI_Request reqs[4 * NBIG];
        int n = 0;
        for (i = 0; i < NBIG; ++i)
            for (j = 0; j < BIGN; ++j)
                big_s[(size_t)i * BIGN + j] = mt_rank * 1000 + i + j;
        for (i = 0; i < NBIG; ++i) {
            E(MPI_Irecv(big_r + (size_t)i * BIGN, BIGN, MPI_INT, left, 9000 + i, MPI_COMM_WORLD, &reqs[n++]));
            E(MPI_Irecv(big_r + (size_t)(NBIG + i) * BIGN, BIGN, MPI_INT, right, 9500 + i, MPI_COMM_WORLD,
                        &reqs[n++]));
        }
        for (i = 0; i < NBIG; ++i) {
            E(MPI_Isend(big_s + (size_t)i * BIGN, BIGN, MPI_INT, right, 9000 + i, MPI_COMM_WORLD, &reqs[n++]));
            E(MPI_Isend(big_s + (size_t)i * BIGN, BIGN, MPI_INT, left, 9500 + i, MPI_COMM_WORLD, &reqs[n++]));
        }
        E(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
        for (i = 0; i < 2 * NBIG; ++i) {
            int from = i < NBIG ? left : right, m = i % NBIG;
            for (j = 0; j < BIGN; ++j)
                if (big_r[(size_t)i * BIGN + j] != from * 1000 + m + j) {
                    MT_FAIL("large message %d from %d: int %d, expected %d got %d", m, from, j, from * 1000 + m + j,
                            big_r[(size_t)i * BIGN + j]);
                    break;
                }
        }
        free(big_s);
        free(big_r);
    }
    free(sv);
    free(rv);
    free(sreq);
    free(rreq);
    free(sts);
    return mt_finish();
}
