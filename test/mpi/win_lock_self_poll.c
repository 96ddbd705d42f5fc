/*
 * win_lock_self_poll: a process that polls its own window through epochs on
 * itself must not keep the others out of its lock for ever.
 *
 * Rank 0 waits for a counter in its own window to reach its final value,
 * reading it with MPI_Get inside back-to-back epochs on itself: exclusive,
 * shared or MPI_Win_lock_all, one mode per pass. Every other rank adds 1 to
 * the counter ROUNDS times, each inside an exclusive epoch on rank 0 (get,
 * flush, put of value + 1: only the exclusive lock keeps two writers apart).
 * MPICH's linked_list_bench_lock_excl does this when the tail of its list is
 * on the rank that polls. Over the network path the writers' lock attempts
 * reach rank 0's lock word through rank 0's progress only; when that ran
 * while rank 0 held its own lock, every attempt failed and 4 ranks never
 * finished. Each pass runs on a window of every flavor; a writer that never
 * gets the lock is reported by the watchdog (check.h).
 */
#include "check.h"

#include <stdlib.h>

#define ROUNDS 40 /* increments per writer per pass */

enum flavor { FLAVOR_CREATE, FLAVOR_ALLOCATE, FLAVOR_DYNAMIC, NFLAVORS };
static const char *const flavor_names[] = {"create", "allocate", "dynamic"};

enum poll_mode { POLL_EXCLUSIVE, POLL_SHARED, POLL_LOCK_ALL, NMODES };
static const char *const mode_names[] = {"exclusive", "shared", "lock_all"};

typedef struct {
    MPI_Win win;
    int64_t *counter; /* rank 0's is the one that counts */
    void *owned;
    MPI_Aint disp; /* of rank 0's counter */
} pollwin;

static void open_window(pollwin *w, enum flavor f)
{
    w->owned = NULL;
    if (f == FLAVOR_ALLOCATE) {
        CHECK_MPI(MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                                   &w->counter, &w->win));
        w->disp = 0;
    } else {
        w->owned = calloc(1, sizeof(int64_t));
        w->counter = w->owned;
        if (f == FLAVOR_CREATE) {
            CHECK_MPI(MPI_Win_create(w->counter, sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                     MPI_COMM_WORLD, &w->win));
            w->disp = 0;
        } else {
            CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
            CHECK_MPI(MPI_Win_attach(w->win, w->counter, sizeof(int64_t)));
            CHECK_MPI(MPI_Get_address(w->counter, &w->disp));
            CHECK_MPI(MPI_Bcast(&w->disp, 1, MPI_AINT, 0, MPI_COMM_WORLD));
        }
    }
    *w->counter = 0;
    CHECK_MPI(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void close_window(pollwin *w, enum flavor f)
{
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (f == FLAVOR_DYNAMIC) CHECK_MPI(MPI_Win_detach(w->win, w->counter));
    CHECK_MPI(MPI_Win_free(&w->win));
    free(w->owned);
}

/* Rank 0: reads its own counter until it holds `want`; returns how many reads. */
static long poll_own(pollwin *w, enum poll_mode mode, int64_t want)
{
    int64_t seen = -1;
    long reads = 0;
    while (seen != want) {
        if (mode == POLL_LOCK_ALL)
            CHECK_MPI(MPI_Win_lock_all(0, w->win));
        else
            CHECK_MPI(
                MPI_Win_lock(mode == POLL_EXCLUSIVE ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, w->win));
        CHECK_MPI(MPI_Get(&seen, 1, MPI_INT64_T, 0, w->disp, 1, MPI_INT64_T, w->win));
        if (mode == POLL_LOCK_ALL)
            CHECK_MPI(MPI_Win_unlock_all(w->win));
        else
            CHECK_MPI(MPI_Win_unlock(0, w->win));
        reads++;
        if (seen > want) break;
    }
    return reads;
}

/* Everyone else: ROUNDS increments of rank 0's counter, each its own exclusive epoch. */
static void add_rounds(pollwin *w)
{
    for (int r = 0; r < ROUNDS; r++) {
        int64_t v = -1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
        CHECK_MPI(MPI_Get(&v, 1, MPI_INT64_T, 0, w->disp, 1, MPI_INT64_T, w->win));
        CHECK_MPI(MPI_Win_flush(0, w->win));
        v++;
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT64_T, 0, w->disp, 1, MPI_INT64_T, w->win));
        CHECK_MPI(MPI_Win_unlock(0, w->win));
    }
}

int main(int argc, char **argv)
{
    int rank, n;
    check_init(&argc, &argv, 60, &rank, &n); /* MPI_Init, then a watchdog (check.h) */
    const int64_t want = (int64_t)(n - 1) * ROUNDS;
    for (int f = 0; f < NFLAVORS; f++) {
        for (int m = 0; m < NMODES; m++) {
            check_where("%s window, rank 0 polling under %s epochs", flavor_names[f], mode_names[m]);
            pollwin w;
            open_window(&w, (enum flavor)f);
            if (rank == 0) {
                const long reads = poll_own(&w, (enum poll_mode)m, want);
                CHECK(*w.counter == want, "%s window, %s polling: counter %lld after %ld reads, want %lld",
                      flavor_names[f], mode_names[m], (long long)*w.counter, reads, (long long)want);
            } else {
                add_rounds(&w);
            }
            close_window(&w, (enum flavor)f);
        }
    }
    return check_finish();
}
