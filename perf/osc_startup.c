/*
 * osc_startup: what a short job pays for its windows. Times MPI_Init, then the job's
 * first MPI_Win_allocate (4 KiB) and its MPI_Win_free, then N more allocate + free pairs,
 * and prints, for the slowest rank, one line of milliseconds:
 *
 *   init_ms first_window_ms churn_ms_per_window
 *
 * Run it under each osc component (perf/startup repeats the launches and takes medians).
 *   mpirun -np 2 osc_startup [-n CHURN]     (default 100)
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void check(int rc, const char *what)
{
    if (MPI_SUCCESS != rc) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "osc_startup: %s failed: %s\n", what, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    const double t0 = now_ms();
    MPI_Init(&argc, &argv);
    const double t_init = now_ms() - t0;
    long churn = 100;
    for (int i = 1; i < argc; i++) {
        if (0 == strcmp(argv[i], "-n") && i + 1 < argc) {
            churn = atol(argv[++i]);
        } else {
            fprintf(stderr, "usage: osc_startup [-n CHURN]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);

    void *base;
    MPI_Win win;
    double t = now_ms();
    check(MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), "MPI_Win_allocate");
    check(MPI_Win_free(&win), "MPI_Win_free");
    const double t_first = now_ms() - t;

    MPI_Barrier(MPI_COMM_WORLD);
    t = now_ms();
    for (long i = 0; i < churn; i++) {
        check(MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), "MPI_Win_allocate");
        check(MPI_Win_free(&win), "MPI_Win_free");
    }
    const double t_churn = churn ? (now_ms() - t) / churn : 0;

    double mine[3] = {t_init, t_first, t_churn}, slowest[3];
    MPI_Reduce(mine, slowest, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (0 == rank) printf("%.3f %.3f %.4f\n", slowest[0], slowest[1], slowest[2]);
    MPI_Finalize();
    return 0;
}
