/*
 * Shared windows: MPI_Win_allocate_shared (contiguous by default, page-aligned slices
 * with alloc_shared_noncontig=true), MPI_Win_shared_query (including MPI_PROC_NULL
 * and a rank with no memory), load/store through the shared mapping, RMA on the same
 * window, and MPI_ERR_RMA_SHARED for shared_query on a window that is not shared.
 */
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

static void run(int noncontig)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Info info;
    MPI_Info_create(&info);
    if (noncontig) MPI_Info_set(info, "alloc_shared_noncontig", "true");
    /* Rank 1 exposes nothing; the others (rank + 1) * 24 bytes of longs. */
    const MPI_Aint mine = 1 == rank ? 0 : (MPI_Aint)((rank + 1) * 3 * sizeof(long));
    long *base;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate_shared(mine, sizeof(long), info, MPI_COMM_WORLD, &base, &win));
    MPI_Info_free(&info);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    MPI_Win_lock_all(0, win);
    for (MPI_Aint i = 0; i < mine / (MPI_Aint)sizeof(long); i++) base[i] = rank * 100 + i;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);

    char *prev_end = NULL;
    for (int r = 0; r < size; r++) {
        MPI_Aint sz = -1;
        int du = 0;
        long *p = NULL;
        CHECK_MPI(MPI_Win_shared_query(win, r, &sz, &du, &p));
        MPI_Aint want = 1 == r ? 0 : (MPI_Aint)((r + 1) * 3 * sizeof(long));
        CHECK(sz == want && du == (int)sizeof(long), "query of rank %d: size %ld unit %d", r, (long)sz, du);
        for (MPI_Aint i = 0; sz > 0 && i < sz / (MPI_Aint)sizeof(long); i++)
            CHECK(p[i] == r * 100 + i, "load of rank %d element %ld: %ld", r, (long)i, p[i]);
        if (sz > 0) {
            if (noncontig)
                CHECK(((uintptr_t)p & 4095) == 0, "noncontig slice of rank %d not page aligned", r);
            else if (prev_end)
                CHECK((char *)p == prev_end, "contiguous slices: rank %d does not follow its predecessor", r);
            prev_end = (char *)p + sz;
        }
    }
    MPI_Aint sz;
    int du;
    long *first;
    CHECK_MPI(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &first));
    CHECK(sz == (MPI_Aint)(3 * sizeof(long)) && first && first[0] == 0,
          "MPI_PROC_NULL query gives rank 0's slice");

    /* RMA into the same memory: every rank adds 1 to element 0 of every slice. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        if (1 == r) continue;
        long one = 1;
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, r, 0, 1, MPI_LONG, MPI_SUM, win));
    }
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    if (mine) CHECK(base[0] == rank * 100 + size, "after %d accumulates element 0 is %ld", size, base[0]);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    run(0);
    run(1);

    long *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Aint sz;
    int du;
    long *p;
    CHECK(check_error_class(MPI_Win_shared_query(win, 0, &sz, &du, &p)) == MPI_ERR_RMA_SHARED,
          "shared_query on an allocated window");
    MPI_Win_free(&win);
    return check_finish();
}
