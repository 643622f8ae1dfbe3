/* rma_dynamic.c — dynamic windows whose operations cross from one attached
 * region into the next: every rank attaches the two halves of one array
 * separately (adjacent regions), and its neighbour puts, accumulates,
 * get-accumulates and gets across the boundary, passive target, checking
 * every element.  Also an access that lies inside the second region only,
 * at an MPI_BOTTOM-relative displacement taken from MPI_Get_address. */
#include "mpitest.h"

#define HALF 1000
#define SPAN 1500 /* elements of one operation: 500 of them in the second half */

static int region[2 * HALF];
static int local[SPAN], fetched[SPAN], check[SPAN];

static void get_back(MPI_Win win, int target, MPI_Aint disp, int count)
{
    memset(check, 0, sizeof check);
    E(MPI_Get(check, count, MPI_INT, target, disp, count, MPI_INT, win));
    E(MPI_Win_flush(target, win));
}

int main(int argc, char **argv)
{
    MPI_Win win;
    MPI_Aint mine[2], *addresses;
    int i, round, target, origin;
    mt_init(&argc, &argv);
    target = (mt_rank + 1) % mt_size;
    origin = (mt_rank + mt_size - 1) % mt_size;
    addresses = malloc(2 * (size_t)mt_size * sizeof(MPI_Aint));
    E(MPI_Get_address(&region[0], &mine[0]));
    E(MPI_Get_address(&region[HALF], &mine[1]));
    E(MPI_Allgather(mine, 2, MPI_AINT, addresses, 2, MPI_AINT, MPI_COMM_WORLD));

    E(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    /* Attached in reverse order: the target must find the regions by address. */
    E(MPI_Win_attach(win, &region[HALF], HALF * sizeof(int)));
    E(MPI_Win_attach(win, &region[0], HALF * sizeof(int)));
    E(MPI_Barrier(MPI_COMM_WORLD));

    E(MPI_Win_lock_all(0, win));
    {
        /* Starts 200 elements into the first half, ends 700 into the second. */
        MPI_Aint disp = addresses[2 * target] + 200 * (MPI_Aint)sizeof(int);
        for (round = 0; round < 3; ++round) {
            for (i = 0; i < SPAN; ++i)
                local[i] = 1000 * round + i + mt_rank;
            E(MPI_Put(local, SPAN, MPI_INT, target, disp, SPAN, MPI_INT, win));
            E(MPI_Win_flush(target, win));
            get_back(win, target, disp, SPAN);
            for (i = 0; i < SPAN; ++i)
                if (check[i] != 1000 * round + i + mt_rank) {
                    MT_FAIL("put across regions, round %d: element %d expected %d got %d", round, i,
                            1000 * round + i + mt_rank, check[i]);
                    break;
                }

            E(MPI_Accumulate(local, SPAN, MPI_INT, target, disp, SPAN, MPI_INT, MPI_SUM, win));
            E(MPI_Win_flush(target, win));
            get_back(win, target, disp, SPAN);
            for (i = 0; i < SPAN; ++i)
                if (check[i] != 2 * (1000 * round + i + mt_rank)) {
                    MT_FAIL("accumulate across regions, round %d: element %d expected %d got %d", round, i,
                            2 * (1000 * round + i + mt_rank), check[i]);
                    break;
                }

            memset(fetched, 0, sizeof fetched);
            E(MPI_Get_accumulate(local, SPAN, MPI_INT, fetched, SPAN, MPI_INT, target, disp, SPAN, MPI_INT,
                                 MPI_REPLACE, win));
            E(MPI_Win_flush(target, win));
            for (i = 0; i < SPAN; ++i)
                if (fetched[i] != 2 * (1000 * round + i + mt_rank)) {
                    MT_FAIL("get_accumulate across regions (old values), round %d: element %d expected %d got %d",
                            round, i, 2 * (1000 * round + i + mt_rank), fetched[i]);
                    break;
                }
            get_back(win, target, disp, SPAN);
            for (i = 0; i < SPAN; ++i)
                if (check[i] != 1000 * round + i + mt_rank) {
                    MT_FAIL("get_accumulate across regions (new values), round %d: element %d expected %d got %d",
                            round, i, 1000 * round + i + mt_rank, check[i]);
                    break;
                }
        }
        /* The second region alone, by its own address. */
        for (i = 0; i < HALF; ++i)
            local[i] = -i;
        E(MPI_Put(local, HALF, MPI_INT, target, addresses[2 * target + 1], HALF, MPI_INT, win));
        E(MPI_Win_flush(target, win));
        get_back(win, target, addresses[2 * target + 1], HALF);
        for (i = 0; i < HALF; ++i)
            if (check[i] != -i) {
                MT_FAIL("put into the second region: element %d expected %d got %d", i, -i, check[i]);
                break;
            }
    }
    E(MPI_Win_unlock_all(win));
    E(MPI_Barrier(MPI_COMM_WORLD));

    /* What the origin left in this rank's memory. */
    for (i = 0; i < 2 * HALF; ++i) {
        int expected = 0;
        if (i >= HALF)
            expected = -(i - HALF);
        else if (i >= 200)
            expected = 2000 + (i - 200) + origin;
        if (region[i] != expected) {
            MT_FAIL("local memory after the epoch: element %d expected %d got %d", i, expected, region[i]);
            break;
        }
    }

    E(MPI_Win_detach(win, &region[0]));
    E(MPI_Win_detach(win, &region[HALF]));
    E(MPI_Win_free(&win));
    free(addresses);
    return mt_finish();
}
