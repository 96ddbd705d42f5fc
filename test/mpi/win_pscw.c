/*
 * General active target: MPI_Win_post/start/complete/wait/test with arbitrary and
 * overlapping groups, over many epochs so that a target may post its next epoch before
 * an origin started the current one. Also the synchronization errors of the standard.
 */
#include <mpi.h>
#include <stdlib.h>

#include "check.h"

static MPI_Group ranks_group(MPI_Group world, const int *ranks, int n)
{
    MPI_Group g;
    MPI_Group_incl(world, n, ranks, &g);
    return g;
}

int main(int argc, char **argv)
{
    int rank, size;
    check_init(&argc, &argv, 120, &rank, &size); /* MPI_Init, then a watchdog (check.h) */
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);

    long *mem;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(size * sizeof(long)), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                     &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int i = 0; i < size; i++) mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Errors first: nothing is open. */
    int flag = 0;
    CHECK(check_error_class(MPI_Win_complete(win)) == MPI_ERR_RMA_SYNC, "complete without start");
    CHECK(check_error_class(MPI_Win_wait(win)) == MPI_ERR_RMA_SYNC, "wait without post");
    CHECK(check_error_class(MPI_Win_test(win, &flag)) == MPI_ERR_RMA_SYNC, "test without post");

    /* Every rank exposes to everyone and accesses everyone (overlapping groups), for
     * many epochs; odd epochs use MPI_Win_test instead of MPI_Win_wait. */
    int *all = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) all[i] = i;
    MPI_Group everyone = ranks_group(world, all, size);
    const int epochs = 30;
    for (int e = 0; e < epochs; e++) {
        CHECK_MPI(MPI_Win_post(everyone, 0, win));
        CHECK_MPI(MPI_Win_start(everyone, 0, win));
        for (int t = 0; t < size; t++) {
            long v = (long)e * 1000 + rank;
            CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, t, rank, 1, MPI_LONG, win));
        }
        CHECK_MPI(MPI_Win_complete(win));
        if (e % 2) {
            flag = 0;
            for (long spin = 0; !flag && spin < 200000000L; spin++) CHECK_MPI(MPI_Win_test(win, &flag));
            CHECK(flag, "epoch %d: MPI_Win_test never reported completion", e);
        } else {
            CHECK_MPI(MPI_Win_wait(win));
        }
        for (int o = 0; o < size; o++)
            CHECK(mem[o] == (long)e * 1000 + o, "epoch %d: slot of rank %d holds %ld", e, o, mem[o]);
    }

    /* A ring with distinct groups: I expose to my left neighbour and access my right. */
    if (size > 1) {
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        MPI_Group lg = ranks_group(world, &left, 1), rg = ranks_group(world, &right, 1);
        for (int e = 0; e < epochs; e++) {
            CHECK_MPI(MPI_Win_post(lg, 0, win));
            CHECK_MPI(MPI_Win_start(rg, 0, win));
            long v = 5000 + e;
            CHECK_MPI(MPI_Put(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, win));
            /* Accessing a rank outside the start group is an error. */
            if (size > 2) {
                int other = (rank + 2) % size;
                CHECK(check_error_class(MPI_Put(&v, 1, MPI_LONG, other, 0, 1, MPI_LONG, win)) ==
                          MPI_ERR_RMA_SYNC,
                      "put to a rank outside the start group");
            }
            CHECK_MPI(MPI_Win_complete(win));
            CHECK_MPI(MPI_Win_wait(win));
            CHECK(mem[0] == 5000 + e, "ring epoch %d: got %ld", e, mem[0]);
        }
        MPI_Group_free(&lg);
        MPI_Group_free(&rg);
    }

    /* Mixing epochs is an error: lock inside start, fence inside post. */
    CHECK_MPI(MPI_Win_post(everyone, 0, win));
    CHECK_MPI(MPI_Win_start(everyone, 0, win));
    CHECK(check_error_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)) == MPI_ERR_RMA_SYNC,
          "lock inside start");
    CHECK(check_error_class(MPI_Win_start(everyone, 0, win)) == MPI_ERR_RMA_SYNC, "start inside start");
    CHECK(check_error_class(MPI_Win_post(everyone, 0, win)) == MPI_ERR_RMA_SYNC, "post inside post");
    CHECK_MPI(MPI_Win_complete(win));
    CHECK(check_error_class(MPI_Win_fence(0, win)) == MPI_ERR_RMA_SYNC, "fence inside an exposure epoch");
    CHECK_MPI(MPI_Win_wait(win));

    /* A fence that neither ends nor starts an epoch needs no synchronization. */
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
    CHECK(check_error_class(MPI_Put(&flag, 1, MPI_INT, 0, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC,
          "put after a fence with NOSUCCEED");

    MPI_Group_free(&everyone);
    MPI_Group_free(&world);
    free(all);
    MPI_Win_free(&win);
    return check_finish();
}
