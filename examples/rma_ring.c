/*
 * A small, ordinary MPI RMA program: nothing in it knows about osc/fabric. Each rank
 * puts its rank into its right neighbour's window under fence, then every rank adds
 * up the whole ring with gets under MPI_Win_lock_all, and checks the sum.
 *   mpirun -np 4 --mca osc fabric ./rma_ring
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int *slot;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &slot, &win);
    *slot = -1;

    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put(&rank, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    int ok = *slot == (rank + size - 1) % size;

    long sum = 0;
    int vals[size];
    MPI_Win_lock_all(0, win);
    for (int r = 0; r < size; r++) MPI_Get(&vals[r], 1, MPI_INT, r, 0, 1, MPI_INT, win);
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    for (int r = 0; r < size; r++) sum += vals[r];
    ok = ok && sum == (long)size * (size - 1) / 2;

    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (0 == rank) printf("rma_ring on %d ranks: %s (sum %ld)\n", size, all_ok ? "correct" : "WRONG", sum);
    MPI_Win_free(&win);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
