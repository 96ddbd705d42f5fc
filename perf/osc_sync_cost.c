/*
 * osc_sync_cost.c - what synchronization itself costs, apart from data movement.
 *
 *   flush_empty      MPI_Win_flush with nothing outstanding (inside one lock epoch)
 *   flush_all_empty  MPI_Win_flush_all with nothing outstanding
 *   lock_empty       MPI_Win_lock(shared) + MPI_Win_unlock with nothing between: the
 *                    epoch's own cost, which an on-node peer pays in CPU time only
 *   put_flush        8-byte MPI_Put + MPI_Win_flush: one round trip, the reference
 *   put_lock_all     MPI_Win_lock_all + 8-byte MPI_Put + MPI_Win_unlock_all
 *   put_lock         MPI_Win_lock(shared) + 8-byte MPI_Put + MPI_Win_unlock
 *   put_lock_excl    the same with MPI_LOCK_EXCLUSIVE
 *
 * and, for the epoch rows, what the epoch adds over put_flush in units of
 * put_flush (round trips). Two processes; rank 0 is the origin, rank 1 waits in
 * MPI_Barrier (so providers with manual progress progress). -R swaps them: a
 * component may keep window-wide lock state at rank 0 (osc/fabric's lock_all and
 * exclusive locks do), which only an origin other than rank 0 pays for.
 * Plain MPI-3 + C11.
 *
 *   mpirun -np 2 osc_sync_cost [-i ITERS] [-x WARMUP] [-R]
 * Exit status as in bench.h (3: the puts did not land).
 */
#include <mpi.h>

#include <limits.h>
#include <stdio.h>

#include "bench.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: osc_sync_cost [-i ITERS] [-x WARMUP] [-R]\n");
}

enum row { FLUSH_EMPTY, FLUSH_ALL_EMPTY, LOCK_EMPTY, PUT_FLUSH, PUT_LOCK_ALL, PUT_LOCK, PUT_LOCK_EXCL, ROWS };
static const char *const row_names[ROWS] = {"flush_empty",  "flush_all_empty", "lock_empty",   "put_flush",
                                            "put_lock_all", "put_lock",        "put_lock_excl"};

/* One timed loop of `iters` repetitions of row r on the origin, after `warmup`. */
static double run_row(enum row r, MPI_Win win, int target, long *src, long iters, long warmup)
{
    double t0 = 0;
    int in_lock = r == FLUSH_EMPTY || r == FLUSH_ALL_EMPTY || r == PUT_FLUSH;
    if (in_lock) MPI_CK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup) t0 = MPI_Wtime();
        *src = i;
        switch (r) {
        case FLUSH_EMPTY: MPI_CK(MPI_Win_flush(target, win)); break;
        case FLUSH_ALL_EMPTY: MPI_CK(MPI_Win_flush_all(win)); break;
        case LOCK_EMPTY:
            MPI_CK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
            MPI_CK(MPI_Win_unlock(target, win));
            break;
        case PUT_FLUSH:
            MPI_CK(MPI_Put(src, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
            MPI_CK(MPI_Win_flush(target, win));
            break;
        case PUT_LOCK_ALL:
            MPI_CK(MPI_Win_lock_all(0, win));
            MPI_CK(MPI_Put(src, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
            MPI_CK(MPI_Win_unlock_all(win));
            break;
        case PUT_LOCK:
        case PUT_LOCK_EXCL:
            MPI_CK(MPI_Win_lock(r == PUT_LOCK ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, target, 0, win));
            MPI_CK(MPI_Put(src, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
            MPI_CK(MPI_Win_unlock(target, win));
            break;
        default: break;
        }
    }
    double t = (MPI_Wtime() - t0) / (double)iters;
    if (in_lock) MPI_CK(MPI_Win_unlock(target, win));
    return t * 1e6;
}

int main(int argc, char **argv)
{
    long iters = 10000, warmup = 100;
    int rank, origin = 0;
    const int nprocs = bench_start(&argc, &argv, "osc_sync_cost", &rank);
    const struct bench_opt opts[] = {
        {'i', BENCH_LONG, &iters, 1, LONG_MAX, NULL, NULL},
        {'x', BENCH_LONG, &warmup, 0, LONG_MAX, NULL, NULL},
        {'R', BENCH_FLAG, &origin, 0, 0, NULL, NULL},
    };
    const int go = bench_proceed(bench_parse(argc, argv, opts, sizeof opts / sizeof opts[0], usage), nprocs,
                                 2, " (an origin and a target)");
    if (go != BENCH_PROCEED) return go;
    const int target = 1 - origin;
    long *mem = NULL;
    MPI_Win win;
    MPI_CK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_CK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    *mem = -1;
    long src = 0;
    double t[ROWS];
    for (int r = 0; r < ROWS; r++) {
        bench_context("%s, origin rank %d", row_names[r], origin);
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == origin) t[r] = run_row((enum row)r, win, target, &src, iters, warmup);
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* The last put wrote the last index: a cheap check that the puts landed. */
    int bad = 0;
    bench_context("the check of the last put");
    MPI_CK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    MPI_CK(MPI_Win_unlock(target, win));
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target && *mem != warmup + iters - 1) {
        fprintf(stderr, "%s: target holds %ld, expected %ld\n", bench_prog(), *mem, warmup + iters - 1);
        bad = 1;
    }
    MPI_CK(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    /* The origin's times, printed by rank 0. */
    if (origin != 0) {
        if (rank == origin)
            MPI_CK(MPI_Send(t, ROWS, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD));
        else
            MPI_CK(MPI_Recv(t, ROWS, MPI_DOUBLE, origin, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    if (rank == 0 && !bad) {
        printf("# osc_sync_cost: synchronization overhead, 2 processes, %ld iterations, origin rank %d\n",
               iters, origin);
        printf("# %-18s%14s%22s\n", "Measurement", "Time (us)", "Extra (round trips)");
        for (int r = 0; r < ROWS; r++) {
            if (r >= PUT_LOCK_ALL)
                printf("%-20s%14.3f%22.2f\n", row_names[r], t[r], (t[r] - t[PUT_FLUSH]) / t[PUT_FLUSH]);
            else
                printf("%-20s%14.3f%22s\n", row_names[r], t[r], "-");
        }
    }
    MPI_CK(MPI_Win_free(&win));
    MPI_Finalize();
    return bad ? BENCH_EXIT_CHECK : 0;
}
