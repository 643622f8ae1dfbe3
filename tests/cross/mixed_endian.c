/* mixed_endian.c — one mpirun job whose ranks are of both byte orders (x86-64
 * and s390x under qemu, chosen per rank by tests/cross/run_checks).  Inside
 * one cluster gridmpi converts no data, but every header (mpirun's control
 * protocol, the TCP hello, request/wire.hpp) has a fixed byte order, so the
 * job must start, match, run eager / synchronous / rendezvous messages and
 * finish.  Data arrives as the sender's bytes: an int from the other byte
 * order arrives byte-swapped, which is checked as such.
 */
#include "mpitest.h"

static int little_endian(void)
{
    unsigned one = 1;
    return *(unsigned char *)&one;
}

static unsigned swap32(unsigned v)
{
    return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

enum { BIG = 200000 }; /* above the eager limit: rendezvous */

int main(int argc, char **argv)
{
    static unsigned char big[BIG];
    int i, src;
    mt_init(&argc, &argv);
    if (mt_rank == 0) {
        for (src = 1; src < mt_size; ++src) {
            unsigned char order = 2;
            char text[64];
            unsigned value = 0;
            MPI_Status status;
            int count = -1, bad = 0;
            E(MPI_Recv(&order, 1, MPI_BYTE, src, 1, MPI_COMM_WORLD, &status));
            E(MPI_Recv(text, sizeof text, MPI_CHAR, src, 2, MPI_COMM_WORLD, &status));
            CHECK(strcmp(text, "rank says hello") == 0, "text from rank %d: '%.64s'", src, text);
            E(MPI_Recv(&value, 1, MPI_UNSIGNED, src, 3, MPI_COMM_WORLD, &status));
            CHECK(value == (order == little_endian() ? 0x01020304u : swap32(0x01020304u)),
                  "int from rank %d (%s-endian): 0x%08x", src, order ? "little" : "big", value);
            memset(big, 0, sizeof big);
            E(MPI_Recv(big, BIG, MPI_BYTE, MPI_ANY_SOURCE, 4 + src, MPI_COMM_WORLD, &status));
            E(MPI_Get_count(&status, MPI_BYTE, &count));
            CHECK_INT("rendezvous source", src, status.MPI_SOURCE);
            CHECK_INT("rendezvous count", BIG, count);
            for (i = 0; i < BIG; ++i)
                bad += big[i] != (unsigned char)(i * 7 + src);
            CHECK(bad == 0, "%d of %d rendezvous bytes from rank %d differ", bad, BIG, src);
            printf("rank 0 (%s-endian): rank %d (%s-endian) ok\n", little_endian() ? "little" : "big", src,
                   order ? "little" : "big");
        }
    } else {
        unsigned char order = (unsigned char)little_endian();
        char text[64] = "rank says hello";
        unsigned value = 0x01020304u;
        for (i = 0; i < BIG; ++i)
            big[i] = (unsigned char)(i * 7 + mt_rank);
        E(MPI_Send(&order, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD));
        E(MPI_Ssend(text, sizeof text, MPI_CHAR, 0, 2, MPI_COMM_WORLD));
        E(MPI_Send(&value, 1, MPI_UNSIGNED, 0, 3, MPI_COMM_WORLD));
        E(MPI_Send(big, BIG, MPI_BYTE, 0, 4 + mt_rank, MPI_COMM_WORLD));
    }
    /* Collectives over bytes: every rank gets rank 0's block. */
    {
        unsigned char block[1000];
        for (i = 0; i < 1000; ++i)
            block[i] = mt_rank == 0 ? (unsigned char)(i * 3) : 0;
        E(MPI_Bcast(block, 1000, MPI_BYTE, 0, MPI_COMM_WORLD));
        for (i = 0; i < 1000; ++i)
            if (block[i] != (unsigned char)(i * 3)) {
                MT_FAIL("bcast byte %d: %d", i, block[i]);
                break;
            }
        E(MPI_Barrier(MPI_COMM_WORLD));
    }
    return mt_finish();
}
