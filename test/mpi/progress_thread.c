/*
 * Passive target without the target: rank 0 computes outside MPI for BUSY seconds
 * while every other rank locks it, puts, gets, accumulates, fetches-and-adds,
 * compares-and-swaps and unlocks. The origins must finish well before rank 0 comes
 * back into MPI (each origin's epoch under half of BUSY), and the data must be right,
 *   - run with OMPI_MCA_osc_fabric_progress_thread=1, or
 *   - with "direct": on-node peers reached through the node segment need nobody's
 *     progress at all (engine/route.cpp).
 * With "create" the window is MPI_Win_create's (user memory, not in the node segment),
 * with "dynamic" MPI_Win_create_dynamic's with rank 0's memory attached: on-node puts
 * and gets then take cross-memory attach and still need no progress, but the
 * accumulates need the target's engine, so they run in a second epoch, untimed.
 * Without a thread or the direct road the same program shows the origins waiting.
 * Where the kernel refuses cross-memory attach (ptrace restrictions, seccomp) the
 * create and dynamic cases have no road that needs no progress: they say so and exit 77
 * (skipped).
 *   progress_thread [BUSY_SECONDS [direct [create|dynamic]]]   (default 2)
 */
#define _GNU_SOURCE /* process_vm_readv */
#include <mpi.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"

/* Whether every rank may read rank 0's memory with process_vm_readv, as the engine's
 * cross-memory road does (the same permission check as its writes). */
static int cross_memory_allowed(int rank)
{
    static const uint64_t word = 0x5eed5eed5eed5eedULL;
    uint64_t at = (uint64_t)(uintptr_t)&word, pid = (uint64_t)getpid(), got = 0;
    MPI_Bcast(&at, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(&pid, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    struct iovec local = {&got, sizeof got}, remote = {(void *)(uintptr_t)at, sizeof got};
    int ok = rank == 0 ||
             (process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof got && got == word),
        all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    int rank, size;
    check_init(&argc, &argv, 120, &rank, &size); /* MPI_Init, then a watchdog (check.h) */
    const double busy = argc > 1 ? atof(argv[1]) : 2.0;
    const char *thread = getenv("OMPI_MCA_osc_fabric_progress_thread");
    const int direct = argc > 2 && 0 == strcmp(argv[2], "direct");
    const int create = argc > 3 && 0 == strcmp(argv[3], "create");
    const int dynamic = argc > 3 && 0 == strcmp(argv[3], "dynamic");
    const int user_memory = create || dynamic; /* not in the node segment */
    const int expect_fast = (thread && atoi(thread) != 0) || direct;
    if (user_memory && direct && !cross_memory_allowed(rank)) {
        if (rank == 0) printf("cross-memory attach is refused here: nothing to check (skipped)\n");
        MPI_Finalize();
        return 77;
    }

    long *mem;
    MPI_Win win;
    /* A slot per origin, then a counter everyone adds to. */
    const MPI_Aint bytes = (MPI_Aint)((size + 1) * sizeof(long));
    MPI_Aint base = 0; /* a dynamic window's slots are at rank 0's addresses */
    int unit = sizeof(long);
    if (create) {
        mem = malloc((size_t)bytes);
        MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else if (dynamic) {
        mem = malloc((size_t)bytes);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        if (rank == 0) {
            CHECK_MPI(MPI_Win_attach(win, mem, bytes));
            MPI_Get_address(mem, &base);
        }
        MPI_Bcast(&base, 1, MPI_AINT, 0, MPI_COMM_WORLD);
        unit = 1;
    } else {
        MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    }
    for (int i = 0; i < size; i++) mem[i] = -1;
    mem[size] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    double epoch = 0;
    MPI_Comm origins;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0, rank, &origins);
    if (0 == rank) {
        /* Compute, touching no MPI and no memory the origins use. */
        volatile double x = 0;
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < busy) x += 1e-9;
    } else {
        long v = 1000 + rank, back = 0, one = 1, old = -1, swap = 2000 + rank, seen = 0;
        double t0 = MPI_Wtime();
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        const MPI_Aint mine = base + rank * (MPI_Aint)sizeof(long) / unit,
                       counter = base + size * (MPI_Aint)sizeof(long) / unit;
        MPI_Put(&v, 1, MPI_LONG, 0, mine, 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
        MPI_Get(&back, 1, MPI_LONG, 0, mine, 1, MPI_LONG, win);
        if (user_memory) {
            MPI_Win_unlock(0, win);
            epoch = MPI_Wtime() - t0;
            /* The atomics' epoch holds the lock until the target serves them: only once
             * every origin's timed epoch is over. */
            MPI_Barrier(origins);
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        }
        MPI_Accumulate(&one, 1, MPI_LONG, 0, counter, 1, MPI_LONG, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, counter, MPI_SUM, win);
        MPI_Compare_and_swap(&swap, &v, &seen, MPI_LONG, 0, mine, win);
        MPI_Win_unlock(0, win);
        if (!user_memory) epoch = MPI_Wtime() - t0;
        CHECK(back == v, "read back %ld, wrote %ld", back, v);
        CHECK(old >= 1 && old < 2 * size, "fetch-and-add fetched %ld", old);
        CHECK(seen == v, "compare-and-swap found %ld, expected %ld", seen, v);
        if (expect_fast)
            CHECK(epoch < busy / 2, "lock/put/get/unlock took %.3f s while the target computed %.1f s", epoch,
                  busy);
        printf("rank %d: epoch on a computing target took %.6f s (%s%s)\n", rank, epoch,
               direct        ? "on-node, direct"
               : expect_fast ? "progress thread"
                             : "no progress thread",
               create    ? ", MPI_Win_create: put and get only"
               : dynamic ? ", MPI_Win_create_dynamic: put and get only"
                         : "");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) {
        for (int o = 1; o < size; o++) CHECK(mem[o] == 2000 + o, "slot %d holds %ld", o, mem[o]);
        CHECK(mem[size] == 2L * (size - 1), "counter holds %ld, expected %ld", mem[size], 2L * (size - 1));
    }
    if (dynamic && rank == 0) CHECK_MPI(MPI_Win_detach(win, mem));
    MPI_Win_free(&win);
    MPI_Comm_free(&origins);
    if (user_memory) free(mem);
    return check_finish();
}
