/*
 * Dynamic windows: MPI_Win_create_dynamic, MPI_Win_attach and MPI_Win_detach with many
 * regions (more than fit the owner's first region table), found by origins without a
 * collective; put, get and accumulate into them; regions attached after an origin
 * cached the table; and the standard's errors: access outside any attached region
 * (MPI_ERR_RMA_RANGE), overlapping attach and detach of an unknown address
 * (MPI_ERR_RMA_ATTACH), attach on a window that is not dynamic (MPI_ERR_RMA_FLAVOR),
 * access to a detached region (MPI_ERR_RMA_RANGE in the next epoch).
 * With "node" (every peer on this node, reached by cross-memory attach): a region
 * detached within an epoch that already used it is MPI_ERR_RMA_RANGE at once, as no
 * registration key would refuse the copy.
 *   win_dynamic [node]
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { REGIONS = 40, LEN = 16 };

int main(int argc, char **argv)
{
    int rank, size;
    check_init(&argc, &argv, 120, &rank, &size); /* MPI_Init, then a watchdog (check.h) */
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    long *region[REGIONS];
    MPI_Aint addr[REGIONS], theirs[REGIONS];
    for (int r = 0; r < REGIONS; r++) {
        region[r] = malloc(LEN * sizeof(long));
        for (int i = 0; i < LEN; i++) region[r][i] = -1;
        CHECK_MPI(MPI_Win_attach(win, region[r], LEN * sizeof(long)));
        MPI_Get_address(region[r], &addr[r]);
    }
    /* Errors of attach/detach. */
    CHECK(check_error_class(MPI_Win_attach(win, region[0] + 2, 4 * sizeof(long))) == MPI_ERR_RMA_ATTACH,
          "overlapping attach");
    long unknown;
    CHECK(check_error_class(MPI_Win_detach(win, &unknown)) == MPI_ERR_RMA_ATTACH,
          "detach of an unknown address");
    /* An empty region exposes nothing, but is attached: its detach succeeds, once. */
    CHECK_MPI(MPI_Win_attach(win, &unknown, 0));
    CHECK_MPI(MPI_Win_detach(win, &unknown));
    CHECK(check_error_class(MPI_Win_detach(win, &unknown)) == MPI_ERR_RMA_ATTACH,
          "a second detach of an empty region");

    /* Addresses travel by ordinary messages: the window needs no collective for them. */
    MPI_Sendrecv(addr, REGIONS, MPI_AINT, left, 0, theirs, REGIONS, MPI_AINT, right, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock_all(0, win);
    for (int r = 0; r < REGIONS; r++) {
        long v[LEN], one = 1;
        for (int i = 0; i < LEN; i++) v[i] = rank * 1000 + r * 10 + i;
        CHECK_MPI(MPI_Put(v, LEN - 1, MPI_LONG, right, theirs[r], LEN - 1, MPI_LONG, win));
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, right, theirs[r] + (LEN - 1) * sizeof(long), 1, MPI_LONG,
                                 MPI_SUM, win));
    }
    CHECK_MPI(MPI_Win_flush(right, win));
    for (int r = 0; r < REGIONS; r += 7) {
        long back[LEN];
        CHECK_MPI(MPI_Get(back, LEN, MPI_LONG, right, theirs[r], LEN, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(right, win));
        CHECK(back[3] == rank * 1000 + r * 10 + 3 && back[LEN - 1] == 0, "region %d read back %ld %ld", r,
              back[3], back[LEN - 1]);
    }
    /* One long past the end of a region, and an address never attached. */
    long x = 5;
    CHECK(check_error_class(MPI_Put(&x, 2, MPI_LONG, right, theirs[0] + (LEN - 1) * sizeof(long), 2, MPI_LONG,
                                    win)) == MPI_ERR_RMA_RANGE,
          "put across the end of a region");
    CHECK(check_error_class(MPI_Get(&x, 1, MPI_LONG, right, 8, 1, MPI_LONG, win)) == MPI_ERR_RMA_RANGE,
          "get from an address that is not attached");
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < REGIONS; r++) {
        CHECK(region[r][0] == left * 1000 + r * 10 && region[r][LEN - 1] == 0, "region %d holds %ld .. %ld",
              r, region[r][0], region[r][LEN - 1]);
    }

    /* Detach one region and attach a new one after origins cached the table. */
    CHECK_MPI(MPI_Win_detach(win, region[5]));
    long *fresh = calloc(LEN, sizeof(long));
    CHECK_MPI(MPI_Win_attach(win, fresh, LEN * sizeof(long)));
    MPI_Aint fresh_addr, their_fresh;
    MPI_Get_address(fresh, &fresh_addr);
    MPI_Sendrecv(&fresh_addr, 1, MPI_AINT, left, 1, &their_fresh, 1, MPI_AINT, right, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    long y = 4242;
    CHECK_MPI(MPI_Put(&y, 1, MPI_LONG, right, their_fresh, 1, MPI_LONG, win));
    CHECK(
        check_error_class(MPI_Put(&y, 1, MPI_LONG, right, theirs[5], 1, MPI_LONG, win)) == MPI_ERR_RMA_RANGE,
        "put to a region detached before the epoch");
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    CHECK(fresh[0] == 4242, "newly attached region got %ld", fresh[0]);
    MPI_Win_unlock(rank, win);

    if (argc > 1 && 0 == strcmp(argv[1], "node")) {
        /* Detached while the origin's epoch, which already used it, goes on. */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, win);
        CHECK_MPI(MPI_Put(&y, 1, MPI_LONG, right, their_fresh, 1, MPI_LONG, win));
        CHECK_MPI(MPI_Win_flush(right, win));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(MPI_Win_detach(win, fresh));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(check_error_class(MPI_Put(&y, 1, MPI_LONG, right, their_fresh, 1, MPI_LONG, win)) ==
                  MPI_ERR_RMA_RANGE,
              "put to a region detached within the epoch");
        MPI_Win_unlock_all(win);
    } else {
        CHECK_MPI(MPI_Win_detach(win, fresh));
    }
    for (int r = 0; r < REGIONS; r++)
        if (r != 5) CHECK_MPI(MPI_Win_detach(win, region[r]));
    MPI_Win_free(&win);

    /* Attach on a window that is not dynamic. */
    long *mem;
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK(check_error_class(MPI_Win_attach(win, &unknown, sizeof unknown)) == MPI_ERR_RMA_FLAVOR,
          "attach on an allocated window");
    MPI_Win_free(&win);

    for (int r = 0; r < REGIONS; r++) free(region[r]);
    free(fresh);
    return check_finish();
}
