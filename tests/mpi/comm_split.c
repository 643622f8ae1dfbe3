/* MPI_Comm_split: colours by rank % 3 with reversed keys (new rank order
 * follows the key), equal keys keep the old order, MPI_UNDEFINED colour
 * gives MPI_COMM_NULL, one colour with equal keys is CONGRUENT to the
 * parent and with reversed keys SIMILAR, splitting a split communicator,
 * communication inside each part isolated from the parent, and rank
 * translation back to MPI_COMM_WORLD, Comm_split_type(MPI_COMM_TYPE_SHARED),
 * and MPI-4.0's MPI_COMM_TYPE_HW_GUIDED / _HW_UNGUIDED with each rank bound
 * to one CPU (rank modulo the CPUs it may use). */
#define _GNU_SOURCE
#include <sched.h>

#include "mpitest.h"

#if defined(GRIDMPI_VERSION_STRING) || MPI_VERSION >= 4
/* Binds this process to the (rank mod n)th CPU it may run on; returns that
 * CPU, or -1 when the affinity cannot be read or set. */
static int bind_to_one_cpu(int rank)
{
    cpu_set_t set, one;
    int cpus[CPU_SETSIZE], n = 0, c;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    if (n == 0)
        return -1;
    CPU_ZERO(&one);
    CPU_SET(cpus[rank % n], &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return -1;
    return cpus[rank % n];
}

/* MPI_COMM_TYPE_HW_GUIDED and _HW_UNGUIDED; shared_size is the size of the
 * MPI_COMM_TYPE_SHARED communicator. */
static void check_hw_split(int shared_size)
{
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Info info;
    int size = -1, cpu, mine, i, same = 0, *all;
    char value[64] = "";
    int flag = 0;

    /* Without the key, or with a type no machine here has: MPI_COMM_NULL. */
    E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED without info, expected MPI_COMM_NULL got %d", MT_H(c));
    E(MPI_Info_create(&info));
    E(MPI_Info_set(info, "mpi_hw_resource_type", "gridmpi_no_such_resource"));
    E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED with an unknown type, expected MPI_COMM_NULL got %d", MT_H(c));
    /* "mpi_shared_memory" is MPI_COMM_TYPE_SHARED. */
    E(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c != MPI_COMM_NULL, "HW_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        E(MPI_Comm_size(c, &size));
        CHECK_INT("HW_GUIDED mpi_shared_memory: size", shared_size, size);
        E(MPI_Comm_free(&c));
    }

    /* Bound to one CPU each: the hardware threads group exactly the ranks on
     * the same CPU (this test's ranks run on one host). */
    cpu = bind_to_one_cpu(mt_rank);
    mine = cpu;
    all = mt_malloc(mt_size * sizeof(int));
    E(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (i = 0; i < mt_size; ++i)
        same += all[i] == cpu;
    /* The reference MPIs read the binding at start-up (MPICH 4.0.2 then
     * gives MPI_COMM_NULL), so this part is for gridmpi only. */
    if (cpu >= 0 && shared_size == mt_size && !MT_IS_MPICH && !MT_IS_OPENMPI) {
        E(MPI_Info_set(info, "mpi_hw_resource_type", "hwthread"));
        E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
        CHECK(c != MPI_COMM_NULL, "HW_GUIDED hwthread on a bound process gave MPI_COMM_NULL");
        if (c != MPI_COMM_NULL) {
            E(MPI_Comm_size(c, &size));
            CHECK_INT("HW_GUIDED hwthread: ranks on my CPU", same, size);
            E(MPI_Comm_free(&c));
        }
    }
    E(MPI_Info_free(&info));
    free(all);

    /* Unguided: MPI_COMM_NULL, or a communicator smaller than the parent
     * with the resource type named in the info. */
    E(MPI_Info_create(&info));
    E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c));
    if (c != MPI_COMM_NULL) {
        E(MPI_Comm_size(c, &size));
        CHECK(size < mt_size, "HW_UNGUIDED: size %d is not below the parent's %d", size, mt_size);
        E(MPI_Info_get(info, "mpi_hw_resource_type", (int)sizeof value - 1, value, &flag));
        CHECK(flag && value[0], "HW_UNGUIDED: no mpi_hw_resource_type in the info");
        E(MPI_Comm_free(&c));
    } else if (cpu >= 0 && mt_size > 1 && same < mt_size && !MT_IS_MPICH && !MT_IS_OPENMPI) {
        /* Ranks on distinct CPUs can always be told apart (by hardware
         * thread at least). */
        MT_FAIL("HW_UNGUIDED with ranks bound to distinct CPUs gave MPI_COMM_NULL");
    }
    E(MPI_Info_free(&info));
}
#else
static void check_hw_split(int shared_size) { (void)shared_size; } /* MPI-3.1: no such split types */
#endif

/* Expected rank of world rank r in a split where members are the ranks with
 * colour c, ordered by key = -rank (descending rank). */
static int members_with_colour(int c, int ncol, int *list)
{
    int n = 0, r;
    for (r = mt_size - 1; r >= 0; --r)
        if (r % ncol == c)
            list[n++] = r;
    return n;
}

int main(int argc, char **argv)
{
    MPI_Comm part, whole, rev, undef, sub;
    int size, rank, result, i, n, list[1024];

    mt_init(&argc, &argv);
    if (mt_size > 1024)
        MT_FATAL("size, expected <= 1024 got %d", mt_size);

    /* 1. colour rank % 3, key -rank. */
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 3, -mt_rank, &part));
    n = members_with_colour(mt_rank % 3, 3, list);
    E(MPI_Comm_size(part, &size));
    E(MPI_Comm_rank(part, &rank));
    CHECK_INT("split by rank%3: size", n, size);
    for (i = 0; i < n; ++i)
        if (list[i] == mt_rank)
            CHECK_INT("split by rank%3 with key -rank: new rank", i, rank);
    /* Ring inside the part: neighbours' world ranks as predicted. */
    {
        int right = (rank + 1) % size, left = (rank + size - 1) % size, w = -1;
        MPI_Status st;
        E(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 4, &w, 1, MPI_INT, left, 4, part, &st));
        CHECK_INT("ring in the split communicator: world rank of the left neighbour", list[left], w);
        CHECK_INT("ring in the split communicator: status.MPI_SOURCE (rank in part)", left, st.MPI_SOURCE);
    }
    /* Rank translation part -> world. */
    {
        MPI_Group gp, gw;
        int *in = mt_malloc(n * sizeof(int)), *out = mt_malloc(n * sizeof(int));
        E(MPI_Comm_group(part, &gp));
        E(MPI_Comm_group(MPI_COMM_WORLD, &gw));
        for (i = 0; i < n; ++i)
            in[i] = i;
        E(MPI_Group_translate_ranks(gp, n, in, gw, out));
        for (i = 0; i < n; ++i)
            CHECK_INT("translate rank of split part to WORLD", list[i], out[i]);
        E(MPI_Group_free(&gp));
        E(MPI_Group_free(&gw));
        free(in);
        free(out);
    }

    /* 2. One colour, equal keys: same order as the parent -> CONGRUENT. */
    E(MPI_Comm_split(MPI_COMM_WORLD, 5, 0, &whole));
    E(MPI_Comm_rank(whole, &rank));
    CHECK_INT("split with one colour and equal keys: rank", mt_rank, rank);
    E(MPI_Comm_compare(MPI_COMM_WORLD, whole, &result));
    CHECK_INT("Comm_compare(WORLD, split with one colour, equal keys)", MPI_CONGRUENT, result);

    /* 3. One colour, reversed keys -> SIMILAR (or CONGRUENT for one rank). */
    E(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_size - mt_rank, &rev));
    E(MPI_Comm_rank(rev, &rank));
    CHECK_INT("split with reversed keys: rank", mt_size - 1 - mt_rank, rank);
    E(MPI_Comm_compare(MPI_COMM_WORLD, rev, &result));
    CHECK_INT("Comm_compare(WORLD, split with reversed keys)", mt_size == 1 ? MPI_CONGRUENT : MPI_SIMILAR, result);

    /* 4. MPI_UNDEFINED for the last rank; keys in pairs (ties broken by
     * the old rank). */
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank == mt_size - 1 ? MPI_UNDEFINED : 1, mt_rank / 2, &undef));
    if (mt_rank == mt_size - 1) {
        CHECK(undef == MPI_COMM_NULL, "split with MPI_UNDEFINED colour, expected MPI_COMM_NULL got %d", MT_H(undef));
    } else {
        E(MPI_Comm_size(undef, &size));
        E(MPI_Comm_rank(undef, &rank));
        CHECK_INT("split without the last rank: size", mt_size - 1, size);
        CHECK_INT("split with tied keys: rank", mt_rank, rank);
        {
            int right = (rank + 1) % size, left = (rank + size - 1) % size, w = -1;
            E(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 4, &w, 1, MPI_INT, left, 4, undef, MPI_STATUS_IGNORE));
            CHECK_INT("ring in the split without the last rank", left, w);
        }
    }

    /* 5. Split of a split: the reversed communicator by parity of its rank. */
    E(MPI_Comm_rank(rev, &rank));
    E(MPI_Comm_split(rev, rank % 2, rank, &sub));
    {
        int subsize, subrank, expect_size;
        E(MPI_Comm_size(sub, &subsize));
        E(MPI_Comm_rank(sub, &subrank));
        expect_size = (mt_size + (rank % 2 ? 0 : 1)) / 2;
        CHECK_INT("split of a split: size", expect_size, subsize);
        CHECK_INT("split of a split: rank", rank / 2, subrank);
    }

    /* 6. Isolation: same tag, same peers, on WORLD, whole and part. */
    {
        int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
        int a = 1, b = 2, ra = -1, rb = -1;
        MPI_Request r[2];
        E(MPI_Isend(&a, 1, MPI_INT, right, 9, whole, &r[0]));
        E(MPI_Isend(&b, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &r[1]));
        E(MPI_Recv(&rb, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        E(MPI_Recv(&ra, 1, MPI_INT, left, 9, whole, MPI_STATUS_IGNORE));
        E(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK_INT("message on WORLD (not the split's)", 2, rb);
        CHECK_INT("message on the split (not WORLD's)", 1, ra);
    }

    /* 7. Comm_split_type: processes that can share memory (all of them on
     * one host); members ordered by the key, ties by the old rank. */
    {
        MPI_Comm shm, none;
        MPI_Group gs, gw;
        int ssize = -1, srank, *in, *out;
        E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
        CHECK(shm != MPI_COMM_NULL, "Comm_split_type(MPI_COMM_TYPE_SHARED), expected a communicator got MPI_COMM_NULL");
        if (shm != MPI_COMM_NULL) {
            E(MPI_Comm_size(shm, &ssize));
            E(MPI_Comm_rank(shm, &srank));
            CHECK(ssize >= 1 && ssize <= mt_size, "Comm_split_type(SHARED) size, expected 1..%d got %d", mt_size, ssize);
            E(MPI_Comm_group(shm, &gs));
            E(MPI_Comm_group(MPI_COMM_WORLD, &gw));
            in = mt_malloc(ssize * sizeof(int));
            out = mt_malloc(ssize * sizeof(int));
            for (i = 0; i < ssize; ++i)
                in[i] = i;
            E(MPI_Group_translate_ranks(gs, ssize, in, gw, out));
            CHECK_INT("Comm_split_type(SHARED): my own world rank at my rank", mt_rank, out[srank]);
            for (i = 1; i < ssize; ++i)
                CHECK(out[i] > out[i - 1], "Comm_split_type(SHARED) with equal keys keeps the old order, expected "
                      "increasing world ranks got %d then %d", out[i - 1], out[i]);
            {
                int right = (srank + 1) % ssize, left = (srank + ssize - 1) % ssize, w = -1;
                E(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 4, &w, 1, MPI_INT, left, 4, shm, MPI_STATUS_IGNORE));
                CHECK_INT("ring in the shared-memory communicator", out[left], w);
            }
            free(in);
            free(out);
            E(MPI_Group_free(&gs));
            E(MPI_Group_free(&gw));
            E(MPI_Comm_free(&shm));
        }
        E(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none));
        CHECK(none == MPI_COMM_NULL, "Comm_split_type(MPI_UNDEFINED), expected MPI_COMM_NULL got %d", MT_H(none));
        /* 8. The hardware-guided splits. */
        check_hw_split(ssize);
    }

    E(MPI_Comm_free(&sub));
    if (undef != MPI_COMM_NULL)
        E(MPI_Comm_free(&undef));
    E(MPI_Comm_free(&rev));
    E(MPI_Comm_free(&whole));
    E(MPI_Comm_free(&part));
    return mt_finish();
}
