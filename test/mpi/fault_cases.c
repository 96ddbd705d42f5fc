/*
 * Faults that must end in an error, not a hang or silent corruption. One case per run:
 *
 *   fault_cases peer_exit   rank 1 leaves (_exit, no MPI_Finalize) while rank 0 is in a
 *                           passive epoch doing put/get/flush against it. The job must
 *                           end with a non-zero status in bounded time (test/mpi/run-fault
 *                           times it).
 *   fault_cases stale_key   rank 1 detaches a region of a dynamic window and frees it;
 *                           rank 0, which cached the region, writes to it again (an
 *                           erroneous program). The put or its flush must return an MPI
 *                           error, not crash or hang: MPI_ERR_RMA_RANGE where the
 *                           target checks the address (small puts on tcp, any put on shm,
 *                           where the origin revalidates its cache each epoch), else the
 *                           provider's error with the libfabric reason logged.
 *                           tcp;ofi_rxm drops the connection after a remote access
 *                           error, so later calls may fail too; they must return.
 *   fault_cases flood N     N back-to-back 8-byte puts and N accumulates in one epoch,
 *                           then one flush: -FI_EAGAIN is absorbed by progress, every
 *                           value arrives, and resident memory grows by less than 128 MiB.
 *
 * Prints one "N passed, N failed" line (check.h) for the cases that return.
 */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static long resident_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
        fclose(f);
    }
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void peer_exit(int rank)
{
    long *mem;
    MPI_Win win;
    MPI_Win_allocate(1 << 16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        /* Let rank 0 get well into its epoch, then vanish. */
        usleep(200 * 1000);
        printf("fault_cases: rank 1 exits without MPI_Finalize\n");
        fflush(stdout);
        _exit(7);
    }
    if (rank == 0) {
        long v = 1, got = 0;
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        /* Runs until the runtime ends the job: a flush that hangs forever is the bug. */
        for (long i = 0;; i++) {
            if (MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win) != MPI_SUCCESS) break;
            if (MPI_Get(&got, 1, MPI_LONG, 1, 8, 1, MPI_LONG, win) != MPI_SUCCESS) break;
            if (MPI_Win_flush(1, win) != MPI_SUCCESS) break;
        }
        printf("fault_cases: rank 0 saw an error from the dead peer\n");
        fflush(stdout);
        _exit(8);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* ranks > 1: wait to be ended with the job */
}

static void stale_key(int rank)
{
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    const size_t len = 1 << 20;
    char *old_region = NULL;
    long *good = NULL;
    MPI_Aint addr[2] = {0, 0};
    if (rank == 1) {
        old_region = malloc(len);
        good = calloc(16, sizeof *good);
        MPI_Win_attach(win, old_region, len);
        MPI_Win_attach(win, good, 16 * sizeof *good);
        MPI_Get_address(old_region, &addr[0]);
        MPI_Get_address(good, &addr[1]);
    }
    MPI_Bcast(addr, 2, MPI_AINT, 1, MPI_COMM_WORLD);
    long v = 42;
    if (rank == 0) { /* caches rank 1's regions */
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, 1, addr[0], 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_unlock(1, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        CHECK_MPI(MPI_Win_detach(win, old_region));
        free(old_region);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        int rc = MPI_Put(&v, 1, MPI_LONG, 1, addr[0], 1, MPI_LONG, win);
        if (rc == MPI_SUCCESS) rc = MPI_Win_flush(1, win);
        int cls = check_error_class(rc);
        CHECK(rc != MPI_SUCCESS, "a put to a detached region returned MPI_SUCCESS");
        printf("fault_cases: 8-byte put to a detached region: %s\n", check_class_name(cls));
        /* A large put is an RMA write of its own on every provider (small ones may
         * travel in active messages the target checks): on tcp;ofi_rxm its stale key is
         * the provider's error, which must come back with its reason logged. That
         * provider also drops the connection over it, so the calls after it may fail. */
        static char big[65536];
        rc = MPI_Put(big, sizeof big, MPI_BYTE, 1, addr[0], sizeof big, MPI_BYTE, win);
        if (rc == MPI_SUCCESS) rc = MPI_Win_flush(1, win);
        cls = check_error_class(rc);
        CHECK(rc != MPI_SUCCESS, "a 64 KiB put to a detached region returned MPI_SUCCESS");
        printf("fault_cases: 64 KiB put to a detached region: %s\n", check_class_name(cls));
        /* What follows may fail as well (see above), but must return. */
        int urc = MPI_Win_unlock(1, win);
        printf("fault_cases: MPI_Win_unlock afterwards: %s\n", check_class_name(check_error_class(urc)));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) MPI_Win_detach(win, good);
    int frc = MPI_Win_free(&win);
    printf("fault_cases: rank %d: MPI_Win_free afterwards: %s\n", rank,
           check_class_name(check_error_class(frc)));
    free(good);
}

static void flood(int rank, long n)
{
    long *mem;
    MPI_Win win;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Win_allocate((MPI_Aint)(n + 1) * (MPI_Aint)sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &mem,
                     &win);
    MPI_Info_free(&info);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (long i = 0; i <= n; i++) mem[i] = -1;
    long *src = malloc((size_t)n * sizeof *src);
    for (long i = 0; i < n; i++) src[i] = i;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long before = resident_kib();
        long one = 1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        for (long i = 0; i < n; i++) {
            if (MPI_Put(&src[i], 1, MPI_LONG, 1, i, 1, MPI_LONG, win) != MPI_SUCCESS) {
                CHECK(0, "put %ld failed", i);
                break;
            }
        }
        CHECK_MPI(MPI_Win_flush(1, win));
        for (long i = 0; i < n; i++) {
            if (MPI_Accumulate(&one, 1, MPI_LONG, 1, n, 1, MPI_LONG, MPI_SUM, win) != MPI_SUCCESS) {
                CHECK(0, "accumulate %ld failed", i);
                break;
            }
        }
        CHECK_MPI(MPI_Win_unlock(1, win));
        long grew = resident_kib() - before;
        printf("fault_cases: %ld puts and %ld accumulates in flight: resident memory +%ld KiB\n", n, n, grew);
        CHECK(grew < 128 * 1024, "resident memory grew by %ld KiB", grew);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        long wrong = 0;
        for (long i = 0; i < n; i++) wrong += mem[i] != i;
        CHECK(wrong == 0, "%ld of %ld put values are wrong", wrong, n);
        /* The counter started at -1. */
        CHECK(mem[n] == n - 1, "accumulated counter is %ld, want %ld", mem[n], n - 1);
    }
    free(src);
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "fault_cases: needs at least 2 processes\n");
        MPI_Finalize();
        return 1;
    }
    if (!strcmp(mode, "peer_exit")) {
        peer_exit(rank);
    } else if (!strcmp(mode, "stale_key")) {
        stale_key(rank);
    } else if (!strcmp(mode, "flood")) {
        flood(rank, argc > 2 ? atol(argv[2]) : 1000000);
    } else {
        if (rank == 0) fprintf(stderr, "usage: fault_cases peer_exit|stale_key|flood [N]\n");
        MPI_Finalize();
        return 1;
    }
    return check_finish();
}
