/*
 * osc_sync_cost.c - what synchronization itself costs, apart from data movement.
 *
 *   flush_empty      MPI_Win_flush with nothing outstanding (inside one lock epoch)
 *   flush_all_empty  MPI_Win_flush_all with nothing outstanding
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
 * Exit status: 0 success, 1 usage, 2 MPI error.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(int rc, const char *what)
{
    if (rc == MPI_SUCCESS) return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "osc_sync_cost: %s failed: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
}
#define CK(call) check((call), #call)

enum row { FLUSH_EMPTY, FLUSH_ALL_EMPTY, PUT_FLUSH, PUT_LOCK_ALL, PUT_LOCK, PUT_LOCK_EXCL, ROWS };
static const char *const row_names[ROWS] = {"flush_empty",  "flush_all_empty", "put_flush",
                                            "put_lock_all", "put_lock",        "put_lock_excl"};

/* One timed loop of `iters` repetitions of row r on the origin, after `warmup`. */
static double run_row(enum row r, MPI_Win win, int target, long *src, long iters, long warmup)
{
    double t0 = 0;
    int in_lock = r == FLUSH_EMPTY || r == FLUSH_ALL_EMPTY || r == PUT_FLUSH;
    if (in_lock) CK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup) t0 = MPI_Wtime();
        *src = i;
        switch (r) {
        case FLUSH_EMPTY: CK(MPI_Win_flush(target, win)); break;
        case FLUSH_ALL_EMPTY: CK(MPI_Win_flush_all(win)); break;
        case PUT_FLUSH:
            CK(MPI_Put(src, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
            CK(MPI_Win_flush(target, win));
            break;
        case PUT_LOCK_ALL:
            CK(MPI_Win_lock_all(0, win));
            CK(MPI_Put(src, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
            CK(MPI_Win_unlock_all(win));
            break;
        case PUT_LOCK:
        case PUT_LOCK_EXCL:
            CK(MPI_Win_lock(r == PUT_LOCK ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, target, 0, win));
            CK(MPI_Put(src, 1, MPI_LONG, target, 0, 1, MPI_LONG, win));
            CK(MPI_Win_unlock(target, win));
            break;
        default: break;
        }
    }
    double t = (MPI_Wtime() - t0) / (double)iters;
    if (in_lock) CK(MPI_Win_unlock(target, win));
    return t * 1e6;
}

int main(int argc, char **argv)
{
    long iters = 10000, warmup = 100;
    int origin = 0;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-x") && i + 1 < argc)
            warmup = atol(argv[++i]);
        else if (!strcmp(argv[i], "-R"))
            origin = 1;
        else {
            if (rank == 0) fprintf(stderr, "usage: osc_sync_cost [-i ITERS] [-x WARMUP] [-R]\n");
            MPI_Finalize();
            return 1;
        }
    }
    if (size != 2 || iters < 1 || warmup < 0) {
        if (rank == 0) fprintf(stderr, "osc_sync_cost: needs exactly 2 processes and -i >= 1\n");
        MPI_Finalize();
        return 1;
    }
    const int target = 1 - origin;
    long *mem = NULL;
    MPI_Win win;
    CK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    *mem = -1;
    long src = 0;
    double t[ROWS];
    for (int r = 0; r < ROWS; r++) {
        CK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == origin) t[r] = run_row((enum row)r, win, target, &src, iters, warmup);
        CK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* The last put wrote the last index: a cheap check that the puts landed. */
    int bad = 0;
    CK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CK(MPI_Win_unlock(target, win));
    CK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == target && *mem != warmup + iters - 1) {
        fprintf(stderr, "osc_sync_cost: target holds %ld, expected %ld\n", *mem, warmup + iters - 1);
        bad = 1;
    }
    CK(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    /* The origin's times, printed by rank 0. */
    if (origin != 0) {
        if (rank == origin)
            MPI_Send(t, ROWS, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
        else
            MPI_Recv(t, ROWS, MPI_DOUBLE, origin, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
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
    CK(MPI_Win_free(&win));
    MPI_Finalize();
    return bad ? 3 : 0;
}
