/*
 * Request-based RMA: MPI_Rput, MPI_Rget, MPI_Raccumulate and MPI_Rget_accumulate are
 * real requests. Completing one with MPI_Wait/MPI_Test/MPI_Waitall is enough to reuse
 * the origin buffer (and, for the fetching forms, to read the result); freeing an
 * active request with MPI_Request_free is legal; outside a passive-target epoch each
 * call is MPI_ERR_RMA_SYNC.
 */
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

enum { N = 1024 };

int main(int argc, char **argv)
{
    int rank, size;
    check_init(&argc, &argv, 120, &rank, &size); /* MPI_Init, then a watchdog (check.h) */
    const int right = (rank + 1) % size;

    long *mem;
    MPI_Win win;
    MPI_Win_allocate(3 * N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int i = 0; i < 3 * N; i++) mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Outside any epoch. */
    long v = 1, res = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK(check_error_class(MPI_Rput(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, win, &r)) == MPI_ERR_RMA_SYNC,
          "MPI_Rput outside an epoch");
    CHECK(check_error_class(MPI_Rget(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, win, &r)) == MPI_ERR_RMA_SYNC,
          "MPI_Rget outside an epoch");
    CHECK(check_error_class(MPI_Raccumulate(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, MPI_SUM, win, &r)) ==
              MPI_ERR_RMA_SYNC,
          "MPI_Raccumulate outside an epoch");
    CHECK(check_error_class(MPI_Rget_accumulate(&v, 1, MPI_LONG, &res, 1, MPI_LONG, right, 0, 1, MPI_LONG,
                                                MPI_SUM, win, &r)) == MPI_ERR_RMA_SYNC,
          "MPI_Rget_accumulate outside an epoch");

    for (int round = 0; round < 20; round++) {
        long src[N], got[N], fetched[N], inc[N];
        for (int i = 0; i < N; i++) {
            src[i] = (long)rank * 1000000 + round * 1000 + i;
            inc[i] = 1;
        }
        MPI_Request reqs[3];
        MPI_Win_lock_all(0, win);
        CHECK_MPI(MPI_Rput(src, N, MPI_LONG, right, 0, N, MPI_LONG, win, &reqs[0]));
        CHECK_MPI(MPI_Raccumulate(inc, N, MPI_LONG, right, N, N, MPI_LONG, MPI_SUM, win, &reqs[1]));
        /* Free one active request: the operation must still happen. */
        MPI_Request freed;
        CHECK_MPI(MPI_Raccumulate(inc, N, MPI_LONG, right, 2 * N, N, MPI_LONG, MPI_SUM, win, &freed));
        CHECK_MPI(MPI_Request_free(&freed));
        CHECK(freed == MPI_REQUEST_NULL, "MPI_Request_free resets the handle");
        CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
        /* Wait completed the put at the target: a get through the same origin sees it. */
        CHECK_MPI(MPI_Rget(got, N, MPI_LONG, right, 0, N, MPI_LONG, win, &reqs[0]));
        int flag = 0;
        for (long spin = 0; !flag && spin < 100000000L; spin++)
            CHECK_MPI(MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "MPI_Test completes an MPI_Rget");
        CHECK(memcmp(got, src, sizeof src) == 0, "round %d: MPI_Rget after a waited MPI_Rput", round);
        CHECK_MPI(MPI_Rget_accumulate(NULL, 0, MPI_LONG, fetched, N, MPI_LONG, right, N, N, MPI_LONG,
                                      MPI_NO_OP, win, &reqs[2]));
        CHECK_MPI(MPI_Wait(&reqs[2], MPI_STATUS_IGNORE));
        /* Slot N started at -1 and got +1 per round before this read. */
        CHECK(fetched[0] == round && fetched[N - 1] == round, "round %d: MPI_Rget_accumulate read %ld %ld",
              round, fetched[0], fetched[N - 1]);
        /* MPI_PROC_NULL requests complete at once. */
        CHECK_MPI(MPI_Rput(src, N, MPI_LONG, MPI_PROC_NULL, 0, N, MPI_LONG, win, &reqs[0]));
        CHECK_MPI(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_sync(win);
    const int left = (rank + size - 1) % size;
    CHECK(mem[0] == (long)left * 1000000 + 19 * 1000, "last put from rank %d landed", left);
    CHECK(mem[N] == 19 && mem[2 * N] == 19 && mem[3 * N - 1] == 19,
          "every raccumulate applied, freed ones included (%ld %ld %ld)", mem[N], mem[2 * N], mem[3 * N - 1]);

    MPI_Win_free(&win);
    return check_finish();
}
