/* A master sending work to changing subsets of its workers with gridmpi's
 * dynamic multicast (docs/collectives.md): each round it picks the workers
 * whose turn it is, multicasts them the task, and collects one result from
 * each.  Nobody else takes part in a round, and no communicator is made.
 *
 *     mpicc -o master_worker docs/examples/master_worker.c
 *     mpirun -np 6 ./master_worker
 */
#include <mpi.h>
#include <stdio.h>

#define ROUNDS 8
#define TASK 4096

int main(int argc, char **argv)
{
    int rank, size, round, i;
    static double task[TASK];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifndef GMPI_MCAST
    if (rank == 0)
        printf("this MPI has no dynamic multicast (GMPI_MCAST)\n");
#else
    for (round = 0; round < ROUNDS; ++round) {
        /* The workers of this round: every worker whose number shares a bit
         * with the round (every process knows the rule, so each knows
         * whether to wait for this round's task). */
        int workers[64], n = 0, mine = 0;
        for (i = 1; i < size && n < 64; ++i) {
            if ((i & (round + 1)) != 0) {
                workers[n++] = i;
                mine |= i == rank;
            }
        }
        if (rank == 0) {
            double sum = 0, part;
            for (i = 0; i < TASK; ++i)
                task[i] = round + i * 1e-3;
            GMPI_Mcast(task, TASK, MPI_DOUBLE, workers, n, MPI_COMM_WORLD);
            for (i = 0; i < n; ++i) {
                MPI_Recv(&part, 1, MPI_DOUBLE, MPI_ANY_SOURCE, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                sum += part;
            }
            printf("round %d: %d workers, sum of results %.3f\n", round, n, sum);
        } else if (mine) {
            double part = 0;
            GMPI_Mcast_recv(task, TASK, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (i = rank - 1; i < TASK; i += size - 1)
                part += task[i];
            MPI_Send(&part, 1, MPI_DOUBLE, 0, round, MPI_COMM_WORLD);
        }
    }
#endif
    MPI_Finalize();
    return 0;
}
