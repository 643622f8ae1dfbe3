/* Messages to self on MPI_COMM_WORLD and MPI_COMM_SELF, in the safe forms
 * (the receive is posted, or the send is non-blocking / buffered), from 0
 * bytes to 4 MiB: Isend+Recv, Irecv+Send, Sendrecv, Sendrecv_replace,
 * Bsend, Issend+Recv, Irecv+Rsend, persistent, Probe of a message to self. */
#include "mpitest.h"

static const int counts[] = {0, 1, 1000, 16384, 65536, 1 << 20};
#define NC (int)(sizeof counts / sizeof counts[0])

static void check(const char *what, const int *buf, int n, int seed)
{
    int i;
    for (i = 0; i < n; ++i)
        if (buf[i] != seed + i) {
            MT_FAIL("%s (%d ints): int %d, expected %d got %d", what, n, i, seed + i, buf[i]);
            return;
        }
}

int main(int argc, char **argv)
{
    int *s = NULL, *r = NULL, k, i, me, count;
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    MPI_Request req, req2;
    MPI_Status st;
    int c;

    mt_init(&argc, &argv);
    s = mt_malloc((1 << 20) * sizeof(int));
    r = mt_malloc((1 << 20) * sizeof(int));

    for (c = 0; c < 2; ++c) {
        MPI_Comm comm = comms[c];
        E(MPI_Comm_rank(comm, &me));
        for (k = 0; k < NC; ++k) {
            int n = counts[k];
            for (i = 0; i < n; ++i)
                s[i] = k * 10 + c + i;
            /* Isend then Recv. */
            memset(r, 0, n * sizeof(int));
            E(MPI_Isend(s, n, MPI_INT, me, k, comm, &req));
            E(MPI_Recv(r, n, MPI_INT, me, k, comm, &st));
            E(MPI_Wait(&req, MPI_STATUS_IGNORE));
            check("Isend+Recv to self", r, n, k * 10 + c);
            CHECK_INT("Isend+Recv to self: MPI_SOURCE", me, st.MPI_SOURCE);
            CHECK_INT("Isend+Recv to self: MPI_TAG", k, st.MPI_TAG);
            E(MPI_Get_count(&st, MPI_INT, &count));
            CHECK_INT("Isend+Recv to self: Get_count", n, count);
            /* Irecv then blocking Send. */
            memset(r, 0, n * sizeof(int));
            E(MPI_Irecv(r, n, MPI_INT, me, k, comm, &req));
            E(MPI_Send(s, n, MPI_INT, me, k, comm));
            E(MPI_Wait(&req, &st));
            check("Irecv+Send to self", r, n, k * 10 + c);
            /* Sendrecv. */
            memset(r, 0, n * sizeof(int));
            E(MPI_Sendrecv(s, n, MPI_INT, me, k, r, n, MPI_INT, me, k, comm, &st));
            check("Sendrecv with self", r, n, k * 10 + c);
            /* Sendrecv_replace. */
            memcpy(r, s, n * sizeof(int));
            E(MPI_Sendrecv_replace(r, n, MPI_INT, me, k, me, k, comm, &st));
            check("Sendrecv_replace with self", r, n, k * 10 + c);
            /* Issend completes once the receive is posted. */
            memset(r, 0, n * sizeof(int));
            E(MPI_Issend(s, n, MPI_INT, me, k, comm, &req));
            E(MPI_Recv(r, n, MPI_INT, me, k, comm, &st));
            E(MPI_Wait(&req, MPI_STATUS_IGNORE));
            check("Issend+Recv to self", r, n, k * 10 + c);
            /* Rsend with the receive posted. */
            memset(r, 0, n * sizeof(int));
            E(MPI_Irecv(r, n, MPI_INT, me, k, comm, &req));
            E(MPI_Rsend(s, n, MPI_INT, me, k, comm));
            E(MPI_Wait(&req, MPI_STATUS_IGNORE));
            check("Irecv+Rsend to self", r, n, k * 10 + c);
            /* Probe a message to self, then receive it. */
            memset(r, 0, n * sizeof(int));
            E(MPI_Isend(s, n, MPI_INT, me, 1000 + k, comm, &req));
            E(MPI_Probe(me, MPI_ANY_TAG, comm, &st));
            CHECK_INT("Probe of a message to self: MPI_TAG", 1000 + k, st.MPI_TAG);
            E(MPI_Get_count(&st, MPI_INT, &count));
            CHECK_INT("Probe of a message to self: Get_count", n, count);
            E(MPI_Recv(r, n, MPI_INT, me, 1000 + k, comm, MPI_STATUS_IGNORE));
            E(MPI_Wait(&req, MPI_STATUS_IGNORE));
            check("Probe+Recv to self", r, n, k * 10 + c);
            /* Persistent pair. */
            E(MPI_Send_init(s, n, MPI_INT, me, 2000 + k, comm, &req));
            E(MPI_Recv_init(r, n, MPI_INT, me, 2000 + k, comm, &req2));
            for (i = 0; i < 2; ++i) {
                MPI_Request both[2];
                memset(r, 0, n * sizeof(int));
                E(MPI_Start(&req2));
                E(MPI_Start(&req));
                both[0] = req;
                both[1] = req2;
                E(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
                check("persistent to self", r, n, k * 10 + c);
            }
            E(MPI_Request_free(&req));
            E(MPI_Request_free(&req2));
        }
        /* Bsend to self, received afterwards. */
        {
            int size;
            char *buf;
            void *p;
            E(MPI_Pack_size(1000, MPI_INT, comm, &size));
            size += MPI_BSEND_OVERHEAD;
            buf = mt_malloc(size);
            E(MPI_Buffer_attach(buf, size));
            for (i = 0; i < 1000; ++i)
                s[i] = 77 + i;
            E(MPI_Bsend(s, 1000, MPI_INT, me, 3000, comm));
            memset(s, 0, 1000 * sizeof(int));
            E(MPI_Recv(r, 1000, MPI_INT, me, 3000, comm, MPI_STATUS_IGNORE));
            check("Bsend to self", r, 1000, 77);
            E(MPI_Buffer_detach(&p, &size));
            free(buf);
        }
    }
    free(s);
    free(r);
    return mt_finish();
}
