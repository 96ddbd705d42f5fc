/*
 * Accumulate message rate: rank 0 issues WINDOW back-to-back 8-byte MPI_Accumulate
 * (MPI_SUM on MPI_LONG) to rank 1, then one MPI_Win_flush; repeated ITERS times under
 * one lock. Run once per accumulate_ordering value, so the cost of ordering shows:
 * with the default (rar,raw,war,waw) an implementation may have to wait between
 * accumulates; with "none" they may overlap in flight.
 *   mpirun -np 2 osc_acc_rate [-n WINDOW] [-i ITERS] [-c]
 * -c checks the final sum at the target. Output: one line per ordering with the rate in
 * million accumulates per second and the time per accumulate.
 * Exit status as in bench.h (3: a sum was wrong).
 */
#include <mpi.h>

#include <limits.h>
#include <stdio.h>

#include "bench.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np 2 osc_acc_rate [-n WINDOW] [-i ITERS] [-c]\n");
}

static double run(const char *ordering, long window, long iters, int check, int *bad)
{
    const int rank = bench_rank();
    bench_context("accumulate_ordering %s", ordering);
    MPI_Info info;
    MPI_CK(MPI_Info_create(&info));
    MPI_CK(MPI_Info_set(info, "accumulate_ordering", ordering));
    long *mem;
    MPI_Win win;
    MPI_CK(MPI_Win_allocate(sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &mem, &win));
    MPI_CK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_CK(MPI_Info_free(&info));
    *mem = 0;
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    double t = 0;
    if (0 == rank) {
        const long one = 1;
        MPI_CK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        for (int w = 0; w < 2; w++) { /* warm-up */
            for (long i = 0; i < window; i++)
                MPI_CK(MPI_Accumulate(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win));
            MPI_CK(MPI_Win_flush(1, win));
        }
        double t0 = MPI_Wtime();
        for (long it = 0; it < iters; it++) {
            for (long i = 0; i < window; i++)
                MPI_CK(MPI_Accumulate(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win));
            MPI_CK(MPI_Win_flush(1, win));
        }
        t = MPI_Wtime() - t0;
        MPI_CK(MPI_Win_unlock(1, win));
    }
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    if (check && 1 == rank) {
        MPI_CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        long want = window * (iters + 2);
        if (*mem != want) {
            fprintf(stderr, "%s: ordering %s: sum %ld, want %ld\n", bench_prog(), ordering, *mem, want);
            *bad = 1;
        }
        MPI_CK(MPI_Win_unlock(1, win));
    }
    MPI_CK(MPI_Win_free(&win));
    return t;
}

int main(int argc, char **argv)
{
    int rank, check = 0;
    long window = 1000, iters = 20;
    const int nprocs = bench_start(&argc, &argv, "osc_acc_rate", &rank);
    const struct bench_opt opts[] = {
        {'n', BENCH_LONG, &window, 1, INT_MAX, NULL, NULL},
        {'i', BENCH_LONG, &iters, 1, INT_MAX, NULL, NULL},
        {'c', BENCH_FLAG, &check, 0, 0, NULL, NULL},
    };
    const int go =
        bench_proceed(bench_parse(argc, argv, opts, sizeof opts / sizeof opts[0], usage), nprocs, 2, "");
    if (go != BENCH_PROCEED) return go;

    const char *orderings[] = {"rar,raw,war,waw", "none"};
    int bad = 0;
    if (0 == rank)
        printf(
            "# %ld back-to-back 8-byte MPI_Accumulate(SUM, MPI_LONG) then one flush, %ld times\n"
            "# ordering            Macc/s    us/acc\n",
            window, iters);
    for (int o = 0; o < 2; o++) {
        double t = run(orderings[o], window, iters, check, &bad);
        if (0 == rank) {
            double n = (double)window * (double)iters;
            printf("%-18s %9.3f %9.3f\n", orderings[o], n / t / 1e6, t / n * 1e6);
        }
    }
    int any = 0;
    MPI_CK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (0 == rank && check) printf("# Check: %s\n", any ? "FAILED" : "passed");
    MPI_Finalize();
    return any ? BENCH_EXIT_CHECK : 0;
}
