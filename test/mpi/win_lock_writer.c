/*
 * win_lock_writer: writers get their exclusive locks while readers poll under shared
 * ones. Rank 0's window holds two counters. Readers (rank 0 itself among them) poll
 * them in MPI_Win_lock(SHARED)/MPI_Get/MPI_Win_unlock rounds until the writers are
 * done; each writer, WRITES times, takes MPI_Win_lock(EXCLUSIVE), reads both counters,
 * and adds one to each with two separate puts.
 *
 * A reader's shared holds overlap the others', so a target that grants every shared
 * request as it arrives may never see its lock word free, and the writers wait for as
 * long as the readers poll: for ever, as the readers poll until the writers are done.
 * With more processes than cores over tcp that is what happened. Checked:
 *   - every writer finishes within DEADLINE seconds (it does in well under one);
 *   - a reader never sees the two counters differ (a writer's epoch is exclusive);
 *   - the counters only grow, and end at writers * WRITES (writers exclude each other).
 *
 *   win_lock_writer   (2 ranks or more)
 */
#include "check.h"

#define WRITES 16
#define DEADLINE 30.0

int main(int argc, char **argv)
{
    int rank, np;
    check_init(&argc, &argv, 60, &rank, &np);
    if (np < 2) {
        if (rank == 0) printf("win_lock_writer: needs 2 ranks or more; nothing to do\n");
        MPI_Finalize();
        return 0;
    }
    /* The last rank writes, and rank 1 too from 4 ranks on; the others read. */
    const int writers = np >= 4 ? 2 : 1;
    const int writer = rank == np - 1 || (np >= 4 && rank == 1);
    const long total = (long)writers * WRITES;

    long *base;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    base[0] = base[1] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    const double start = MPI_Wtime();

    if (writer) {
        for (int i = 0; i < WRITES; i++) {
            check_where("exclusive epoch %d of %d", i + 1, WRITES);
            long seen[2], next;
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            CHECK_MPI(MPI_Get(seen, 2, MPI_LONG, 0, 0, 2, MPI_LONG, win));
            CHECK_MPI(MPI_Win_flush(0, win));
            CHECK(seen[0] == seen[1], "writer %d, epoch %d: counters %ld and %ld differ", rank, i, seen[0],
                  seen[1]);
            next = seen[0] + 1;
            CHECK_MPI(MPI_Put(&next, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
            CHECK_MPI(MPI_Win_flush(0, win));
            next = seen[1] + 1;
            CHECK_MPI(MPI_Put(&next, 1, MPI_LONG, 0, 1, 1, MPI_LONG, win));
            CHECK_MPI(MPI_Win_unlock(0, win));
        }
        const double took = MPI_Wtime() - start;
        CHECK(took < DEADLINE, "writer %d: %d exclusive epochs took %.1f s behind the readers' shared locks",
              rank, WRITES, took);
    } else {
        long last = 0, rounds = 0;
        for (;;) {
            check_where("shared round %ld, counters at %ld of %ld", rounds, last, total);
            long seen[2];
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            CHECK_MPI(MPI_Get(seen, 2, MPI_LONG, 0, 0, 2, MPI_LONG, win));
            CHECK_MPI(MPI_Win_unlock(0, win));
            rounds++;
            if (!CHECK(seen[0] == seen[1], "reader %d: counters %ld and %ld differ under a shared lock", rank,
                       seen[0], seen[1]))
                break;
            if (!CHECK(seen[0] >= last && seen[0] <= total,
                       "reader %d: counter went from %ld to %ld (at most %ld)", rank, last, seen[0], total))
                break;
            last = seen[0];
            if (last == total) break;
            if (!CHECK(MPI_Wtime() - start < DEADLINE,
                       "reader %d: the writers' exclusive locks got nowhere in %.0f s of shared rounds (%ld "
                       "of %ld "
                       "writes, %ld rounds)",
                       rank, DEADLINE, last, total, rounds))
                break;
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        long end[2];
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_MPI(MPI_Get(end, 2, MPI_LONG, 0, 0, 2, MPI_LONG, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
        CHECK(end[0] == total && end[1] == total, "counters end at %ld and %ld, not %ld", end[0], end[1],
              total);
    }
    CHECK_MPI(MPI_Win_free(&win));
    return check_finish();
}
