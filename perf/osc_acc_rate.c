/*
 * Accumulate message rate: rank 0 issues WINDOW back-to-back 8-byte MPI_Accumulate
 * (MPI_SUM on MPI_LONG) to rank 1, then one MPI_Win_flush; repeated ITERS times under
 * one lock. Run once per accumulate_ordering value, so the cost of ordering shows:
 * with the default (rar,raw,war,waw) an implementation may have to wait between
 * accumulates; with "none" they may overlap in flight.
 *   mpirun -np 2 osc_acc_rate [-n WINDOW] [-i ITERS] [-c]
 * -c checks the final sum at the target. Output: one line per ordering with the rate in
 * million accumulates per second and the time per accumulate.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double run(const char *ordering, int window, int iters, int check, int *bad)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", ordering);
    long *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &mem, &win);
    MPI_Info_free(&info);
    *mem = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = 0;
    if (0 == rank) {
        const long one = 1;
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (int w = 0; w < 2; w++) { /* warm-up */
            for (int i = 0; i < window; i++)
                MPI_Accumulate(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win);
            MPI_Win_flush(1, win);
        }
        double t0 = MPI_Wtime();
        for (int it = 0; it < iters; it++) {
            for (int i = 0; i < window; i++)
                MPI_Accumulate(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win);
            MPI_Win_flush(1, win);
        }
        t = MPI_Wtime() - t0;
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (check && 1 == rank) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        long want = (long)window * (iters + 2);
        if (*mem != want) {
            fprintf(stderr, "osc_acc_rate: ordering %s: sum %ld, want %ld\n", ordering, *mem, want);
            *bad = 1;
        }
        MPI_Win_unlock(1, win);
    }
    MPI_Win_free(&win);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, window = 1000, iters = 20, check = 0, opt;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "n:i:c")) != -1) {
        if ('n' == opt)
            window = atoi(optarg);
        else if ('i' == opt)
            iters = atoi(optarg);
        else if ('c' == opt)
            check = 1;
    }
    if (2 != size || window <= 0 || iters <= 0) {
        if (0 == rank) fprintf(stderr, "usage: mpirun -np 2 osc_acc_rate [-n WINDOW] [-i ITERS] [-c]\n");
        MPI_Finalize();
        return 1;
    }
    const char *orderings[] = {"rar,raw,war,waw", "none"};
    int bad = 0;
    if (0 == rank)
        printf(
            "# %d back-to-back 8-byte MPI_Accumulate(SUM, MPI_LONG) then one flush, %d times\n"
            "# ordering            Macc/s    us/acc\n",
            window, iters);
    for (int o = 0; o < 2; o++) {
        double t = run(orderings[o], window, iters, check, &bad);
        if (0 == rank) {
            double n = (double)window * iters;
            printf("%-18s %9.3f %9.3f\n", orderings[o], n / t / 1e6, t / n * 1e6);
        }
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (0 == rank && check) printf("# Check: %s\n", any ? "FAILED" : "passed");
    MPI_Finalize();
    return any ? 3 : 0;
}
