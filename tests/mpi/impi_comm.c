/* impi_comm.c — communicators of multi-client jobs: every constructor over
 * communicators that span IMPI clients (dup, idup, dup_with_info, split
 * across and inside clients, split_type, create with non-members,
 * create_group, intercomm_create between clients, intercomm_merge, dup and
 * split of an intercommunicator, Cart_create), context isolation between
 * them, collectives on each, 200 create/free cycles, and non-blocking
 * collectives interleaved with blocking ones on the same communicator
 * (their tags must never meet the IMPI collective tags: check_nonblocking_tags
 * catches a collision under 2,2 and 2,1,1 splits).
 *
 * Run with GRIDMPI_IMPI_FAKE_CLIENTS (impi.list); without it (or on another
 * MPI) the same checks run on one client.
 */
#include "mpitest.h"

/* This process's client: IMPI_CLIENT_COLOR where the MPI has it (gridmpi),
 * else everyone in client 0. */
static int client_color(int *nclients)
{
    *nclients = 1;
#ifdef IMPI_CLIENT_COLOR
    {
        int *v = NULL, flag = 0, color = 0;
        E(MPI_Comm_get_attr(MPI_COMM_WORLD, IMPI_CLIENT_SIZE, &v, &flag));
        if (flag)
            *nclients = *v;
        E(MPI_Comm_get_attr(MPI_COMM_WORLD, IMPI_CLIENT_COLOR, &v, &flag));
        if (flag)
            color = *v;
        return color;
    }
#else
    return 0;
#endif
}

/* Messages on a and b (same group, different contexts) sent in one order
 * and received in the other: each arrives on its own communicator. */
static void check_isolation(MPI_Comm a, MPI_Comm b, const char *what)
{
    int rank, size, to, from, va, vb;
    MPI_Request r[2];
    E(MPI_Comm_rank(a, &rank));
    E(MPI_Comm_size(a, &size));
    to = (rank + 1) % size;
    from = (rank + size - 1) % size;
    va = 1000 + rank;
    vb = 2000 + rank;
    E(MPI_Isend(&va, 1, MPI_INT, to, 5, a, &r[0]));
    E(MPI_Isend(&vb, 1, MPI_INT, to, 5, b, &r[1]));
    {
        int gb = -1, ga = -1;
        E(MPI_Recv(&gb, 1, MPI_INT, from, 5, b, MPI_STATUS_IGNORE));
        E(MPI_Recv(&ga, 1, MPI_INT, from, 5, a, MPI_STATUS_IGNORE));
        CHECK_INT(what, 2000 + from, gb);
        CHECK_INT(what, 1000 + from, ga);
    }
    E(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
}

/* Allreduce of the rank and a bcast from the last rank: the communicator works. */
static void check_works(MPI_Comm c, const char *what)
{
    int rank, size, sum = -1, v;
    E(MPI_Comm_rank(c, &rank));
    E(MPI_Comm_size(c, &size));
    E(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2, "%s: allreduce of ranks, expected %d got %d", what, size * (size - 1) / 2,
          sum);
    v = rank == size - 1 ? 4242 : -1;
    E(MPI_Bcast(&v, 1, MPI_INT, size - 1, c));
    CHECK_INT(what, 4242, v);
    E(MPI_Barrier(c));
}

/* Non-blocking collectives started before blocking ones on the same
 * communicator, completed after: 120 rounds of two walk a tag sequence that
 * starts at 64 through the range of the IMPI tags (110..230). */
static void check_nonblocking_mix(MPI_Comm c, const char *what, int rounds)
{
    int rank, size, i;
    E(MPI_Comm_rank(c, &rank));
    E(MPI_Comm_size(c, &size));
    for (i = 0; i < rounds; ++i) {
        int nb = rank == i % size ? i : -1, blocking = rank == (i + 1) % size ? -i : 1;
        int sum_in[2] = {rank, i}, sum_out[2] = {-1, -1}, red = -1;
        MPI_Request req[2];
        E(MPI_Ibcast(&nb, 1, MPI_INT, i % size, c, &req[0]));
        E(MPI_Iallreduce(sum_in, sum_out, 2, MPI_INT, MPI_SUM, c, &req[1]));
        E(MPI_Bcast(&blocking, 1, MPI_INT, (i + 1) % size, c));
        E(MPI_Reduce(&rank, &red, 1, MPI_INT, MPI_MAX, i % size, c));
        if (i % 7 == 0)
            E(MPI_Barrier(c));
        E(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        if (nb != i || blocking != -i || sum_out[0] != size * (size - 1) / 2 || sum_out[1] != size * i ||
            (rank == i % size && red != size - 1)) {
            MT_FAIL("%s: round %d: Ibcast %d (expected %d), Bcast %d (expected %d), Iallreduce %d,%d (expected "
                    "%d,%d), Reduce %d",
                    what, i, nb, i, blocking, -i, sum_out[0], sum_out[1], size * (size - 1) / 2, size * i, red);
            return;
        }
    }
}

/* Run on a communicator without earlier non-blocking collectives: round i
 * starts the i-th one, an Ibcast whose root comes late (so its children's
 * receives are posted long before it sends), then blocking Bcasts from
 * every root; the messages of the two must never be confused, whatever tag
 * the Ibcast gets (under a scheme that starts non-blocking tags at 64,
 * round 56 has the IMPI Bcast tag 120). */
static void check_nonblocking_tags(MPI_Comm c, const char *what)
{
    int rank, size, i, b, got[64];
    E(MPI_Comm_rank(c, &rank));
    E(MPI_Comm_size(c, &size));
    if (size > 64)
        return;
    for (i = 0; i < 120; ++i) {
        int nbroot = size - 1 - i % size, nb = rank == nbroot ? i : -1;
        MPI_Request req;
        if (rank == nbroot)
            mt_sleep_ms(2);
        E(MPI_Ibcast(&nb, 1, MPI_INT, nbroot, c, &req));
        for (b = 0; b < size; ++b) {
            got[b] = rank == b ? 1000 * b + i : -1;
            E(MPI_Bcast(&got[b], 1, MPI_INT, b, c));
        }
        E(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (nb != i) {
            MT_FAIL("%s: round %d: Ibcast from %d, expected %d got %d", what, i, nbroot, i, nb);
            return;
        }
        for (b = 0; b < size; ++b)
            if (got[b] != 1000 * b + i) {
                MT_FAIL("%s: round %d: Bcast from %d, expected %d got %d", what, i, b, 1000 * b + i, got[b]);
                return;
            }
    }
}

int main(int argc, char **argv)
{
    MPI_Comm dup, idup, dupinfo, across, inside, shared, created, cgroup, inter, merged, inter_dup, inter_split,
        cart;
    MPI_Group world_group, sub;
    MPI_Request req;
    MPI_Info info;
    int nclients, color, i;
    mt_init(&argc, &argv);
    color = client_color(&nclients);
#ifdef IMPI_CLIENT_SIZE
    {
        /* GRIDMPI_IMPI_FAKE_CLIENTS="a,b,...": the attributes follow it. */
        const char *fake = getenv("GRIDMPI_IMPI_FAKE_CLIENTS");
        if (fake && *fake) {
            int n = 1, c = 0, first = 0, k;
            const char *p = fake;
            for (; *p; ++p)
                n += *p == ',';
            CHECK_INT("IMPI_CLIENT_SIZE", n, nclients);
            for (p = fake, k = 0; k < n; ++k) {
                int count = atoi(p);
                if (mt_rank >= first && mt_rank < first + count)
                    c = k;
                first += count;
                p = strchr(p, ',');
                if (!p)
                    break;
                ++p;
            }
            CHECK_INT("IMPI_CLIENT_COLOR", c, color);
        }
    }
#endif

    check_works(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    check_nonblocking_tags(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    check_nonblocking_mix(MPI_COMM_WORLD, "MPI_COMM_WORLD", 120);

    E(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    check_isolation(MPI_COMM_WORLD, dup, "dup vs WORLD");
    check_works(dup, "dup");
    E(MPI_Comm_idup(dup, &idup, &req));
    E(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_isolation(dup, idup, "idup vs dup");
    check_works(idup, "idup");
    E(MPI_Info_create(&info));
    E(MPI_Info_set(info, "gridmpi_test_hint", "1"));
    E(MPI_Comm_dup_with_info(idup, info, &dupinfo));
    E(MPI_Info_free(&info));
    check_isolation(idup, dupinfo, "dup_with_info vs idup");
    check_works(dupinfo, "dup_with_info");
    check_nonblocking_mix(dupinfo, "dup_with_info", 30);

    /* Across clients (world rank parity, reversed) and inside each client. */
    E(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_size - mt_rank, &across));
    check_works(across, "split across clients");
    E(MPI_Comm_split(dup, color, mt_rank, &inside));
    check_works(inside, "split by client");
    check_nonblocking_mix(inside, "split by client", 30);
    E(MPI_Comm_split_type(across, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    check_works(shared, "split_type(SHARED) of the split");

    /* Comm_create without world rank 0 (non-members get MPI_COMM_NULL and
     * still take part), then Comm_create_group of the odd world ranks. */
    E(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    {
        int zero = 0;
        E(MPI_Group_excl(world_group, 1, &zero, &sub));
    }
    E(MPI_Comm_create(dup, sub, &created));
    if (mt_rank == 0) {
        CHECK(created == MPI_COMM_NULL, "Comm_create: expected MPI_COMM_NULL at a non-member");
    } else {
        CHECK(created != MPI_COMM_NULL, "Comm_create: expected a communicator at a member");
        if (created != MPI_COMM_NULL) {
            check_works(created, "Comm_create without rank 0");
        }
    }
    E(MPI_Group_free(&sub));
    {
        int nodd = mt_size / 2, *odd = (int *)mt_malloc(sizeof(int) * (size_t)(nodd + 1));
        for (i = 0; i < nodd; ++i)
            odd[i] = 2 * i + 1;
        E(MPI_Group_incl(world_group, nodd, odd, &sub));
        free(odd);
        cgroup = MPI_COMM_NULL;
        if (mt_rank % 2 == 1) {
            E(MPI_Comm_create_group(MPI_COMM_WORLD, sub, 77, &cgroup));
            check_works(cgroup, "Comm_create_group of the odd ranks");
        }
        E(MPI_Group_free(&sub));
    }
    E(MPI_Group_free(&world_group));

    /* Intercommunicator between client 0 and the other clients (halves of
     * WORLD when there is one client). */
    inter = merged = inter_dup = inter_split = MPI_COMM_NULL;
    if (mt_size > 1) {
        int side = nclients > 1 ? color != 0 : mt_rank >= mt_size / 2, remote_leader = -1, r;
        MPI_Comm half;
        /* the other side's lowest world rank */
        {
            int *sides = (int *)mt_malloc(sizeof(int) * (size_t)mt_size);
            E(MPI_Allgather(&side, 1, MPI_INT, sides, 1, MPI_INT, MPI_COMM_WORLD));
            for (r = 0; r < mt_size; ++r)
                if (sides[r] != side) {
                    remote_leader = r;
                    break;
                }
            free(sides);
        }
        E(MPI_Comm_split(MPI_COMM_WORLD, side, mt_rank, &half));
        E(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 99, &inter));
        {
            int rsize, lsize, sum = -1, lrank;
            E(MPI_Comm_remote_size(inter, &rsize));
            E(MPI_Comm_size(inter, &lsize));
            E(MPI_Comm_rank(inter, &lrank));
            E(MPI_Allreduce(&lrank, &sum, 1, MPI_INT, MPI_SUM, inter));
            CHECK(sum == rsize * (rsize - 1) / 2, "intercomm allreduce: expected %d got %d", rsize * (rsize - 1) / 2,
                  sum);
            E(MPI_Comm_dup(inter, &inter_dup));
            E(MPI_Comm_split(inter, lrank % 2, 0, &inter_split));
            E(MPI_Intercomm_merge(inter_dup, side, &merged));
            check_works(merged, "intercomm_merge");
            check_nonblocking_mix(merged, "intercomm_merge", 120);
            if (inter_split != MPI_COMM_NULL) {
                int rs2;
                E(MPI_Comm_remote_size(inter_split, &rs2));
                E(MPI_Allreduce(&lrank, &sum, 1, MPI_INT, MPI_MAX, inter_split));
                E(MPI_Comm_free(&inter_split));
            }
        }
        E(MPI_Comm_free(&half));
    }

    /* A Cartesian communicator over WORLD (its hidden comms go through the
     * same constructors). */
    {
        int dims[1] = {mt_size}, periods[1] = {1}, left, right, v = mt_rank, got = -1;
        E(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
        E(MPI_Cart_shift(cart, 0, 1, &left, &right));
        E(MPI_Sendrecv(&v, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, cart, MPI_STATUS_IGNORE));
        CHECK_INT("Cart_create shift", left, got);
        check_works(cart, "Cart_create");
    }

    /* 200 create/free cycles, with collectives on each. */
    for (i = 0; i < 200; ++i) {
        MPI_Comm t;
        int v = i, sum = -1;
        E(MPI_Comm_dup(i % 2 ? MPI_COMM_WORLD : across, &t));
        E(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_MAX, t));
        if (sum != i) {
            MT_FAIL("create/free cycle %d: allreduce expected %d got %d", i, i, sum);
            break;
        }
        E(MPI_Comm_free(&t));
    }
    check_isolation(MPI_COMM_WORLD, dup, "dup vs WORLD after the cycles");
    {
        int result;
        E(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
        CHECK_INT("Comm_compare(WORLD, dup) == MPI_CONGRUENT", MPI_CONGRUENT, result);
    }

    E(MPI_Comm_free(&cart));
    if (merged != MPI_COMM_NULL)
        E(MPI_Comm_free(&merged));
    if (inter_dup != MPI_COMM_NULL)
        E(MPI_Comm_free(&inter_dup));
    if (inter != MPI_COMM_NULL)
        E(MPI_Comm_free(&inter));
    if (cgroup != MPI_COMM_NULL)
        E(MPI_Comm_free(&cgroup));
    if (created != MPI_COMM_NULL)
        E(MPI_Comm_free(&created));
    E(MPI_Comm_free(&shared));
    E(MPI_Comm_free(&inside));
    E(MPI_Comm_free(&across));
    E(MPI_Comm_free(&dupinfo));
    E(MPI_Comm_free(&idup));
    E(MPI_Comm_free(&dup));
    return mt_finish();
}
