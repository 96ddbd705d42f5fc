/*
 * win_lock_order: a process that holds several locks at once, itself among
 * its targets, must get them as if in the order it called MPI_Win_lock, so
 * that programs locking in one global order (ascending rank) never deadlock.
 *
 * Each rank's window holds a record (RECORD_WORDS int64 words that always
 * hold the same value, changed only under an exclusive lock by get, flush,
 * put of value+1 in two halves with a flush between) and one counter per
 * origin, incremented with MPI_Fetch_and_op under whatever lock the origin
 * holds.  At the end every record must equal the number of exclusive epochs
 * aimed at it and every counter the number of epochs its origin opened.
 *
 *   pair:     the two-rank case that deadlocked: rank 0 locks 0 then 1
 *             exclusively and writes both; rank 1 locks 0 then 1 shared,
 *             gets and fetch-and-ops rank 0, works on itself, flush_local(0).
 *   random:   every epoch each rank locks a random subset of the ranks, itself
 *             included, each shared or exclusive at random, in ascending order.
 *   lock_all: as random, but some epochs are MPI_Win_lock_all epochs that
 *             touch the targets in descending order.
 * Each runs on a window of every flavor.  A hang is reported by the watchdog
 * (check.h) with the step each rank was in.
 */
#include "check.h"

#include <stdlib.h>

#define RECORD_WORDS 8
#define HALF (RECORD_WORDS / 2)

enum flavor { FLAVOR_CREATE, FLAVOR_ALLOCATE, FLAVOR_DYNAMIC, NFLAVORS };
static const char *const flavor_names[] = {"create", "allocate", "dynamic"};

typedef struct {
    MPI_Win win;
    int64_t *mem;    /* RECORD_WORDS + n words */
    void *owned;     /* create/dynamic: our allocation */
    MPI_Aint *bases; /* dynamic: every rank's address of mem */
    int rank, n;
    const char *flavor;
    int64_t *excl_epochs; /* [target]: exclusive epochs this rank aimed at it */
    int64_t *epochs;      /* [target]: epochs of any mode this rank aimed at it */
    int64_t *fetched;     /* [target]: result of the epoch's fetch-and-op, valid
                               until the epoch ends */
} lockwin;

static void open_window(lockwin *w, enum flavor f)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w->n);
    w->flavor = flavor_names[f];
    const MPI_Aint bytes = (MPI_Aint)(RECORD_WORDS + w->n) * (MPI_Aint)sizeof(int64_t);
    w->bases = NULL;
    w->owned = NULL;
    if (f == FLAVOR_ALLOCATE) {
        MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win);
    } else {
        w->owned = calloc(1, (size_t)bytes);
        w->mem = w->owned;
        if (f == FLAVOR_CREATE) {
            MPI_Win_create(w->mem, bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
        } else {
            /* disp_unit 1 on dynamic windows: displacements are addresses, so
             * disp() divides by the word size and the accesses scale back. */
            MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
            MPI_Win_attach(w->win, w->mem, bytes);
            w->bases = malloc(sizeof(MPI_Aint) * (size_t)w->n);
            MPI_Aint mine;
            MPI_Get_address(w->mem, &mine);
            MPI_Allgather(&mine, 1, MPI_AINT, w->bases, 1, MPI_AINT, MPI_COMM_WORLD);
        }
    }
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    /* Local initialisation inside an exclusive self-lock: the window may be
     * served by the fabric even for our own accesses. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, w->rank, 0, w->win);
    for (int i = 0; i < RECORD_WORDS + w->n; i++) w->mem[i] = 0;
    MPI_Win_unlock(w->rank, w->win);
    w->excl_epochs = calloc((size_t)w->n, sizeof(int64_t));
    w->epochs = calloc((size_t)w->n, sizeof(int64_t));
    w->fetched = calloc((size_t)w->n, sizeof(int64_t));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* On dynamic windows the address-based displacement needs disp_unit 1, so
 * the accesses use byte displacements there. */
static MPI_Aint at(const lockwin *w, int target, MPI_Aint word)
{
    if (w->bases) return w->bases[target] + word * (MPI_Aint)sizeof(int64_t);
    return word;
}

static void close_window(lockwin *w)
{
    MPI_Barrier(MPI_COMM_WORLD);
    /* Every record and counter has its exact expected value. */
    int64_t *excl = calloc((size_t)w->n, sizeof(int64_t));
    int64_t *all = calloc((size_t)w->n * (size_t)w->n, sizeof(int64_t));
    MPI_Allreduce(w->excl_epochs, excl, w->n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allgather(w->epochs, w->n, MPI_INT64_T, all, w->n, MPI_INT64_T, MPI_COMM_WORLD);
    int64_t mine[RECORD_WORDS + 64];
    int words = RECORD_WORDS + w->n;
    if (words > (int)(sizeof mine / sizeof mine[0])) words = (int)(sizeof mine / sizeof mine[0]);
    MPI_Win_lock(MPI_LOCK_SHARED, w->rank, 0, w->win);
    CHECK_MPI(MPI_Get(mine, words, MPI_INT64_T, w->rank, at(w, w->rank, 0), words, MPI_INT64_T, w->win));
    MPI_Win_unlock(w->rank, w->win);
    for (int i = 0; i < RECORD_WORDS; i++)
        CHECK(mine[i] == excl[w->rank], "%s: record word %d of rank %d is %lld, expected %lld", w->flavor, i,
              w->rank, (long long)mine[i], (long long)excl[w->rank]);
    for (int o = 0; o < w->n && RECORD_WORDS + o < words; o++)
        CHECK(mine[RECORD_WORDS + o] == all[(size_t)o * (size_t)w->n + (size_t)w->rank],
              "%s: counter of origin %d at rank %d is %lld, expected %lld", w->flavor, o, w->rank,
              (long long)mine[RECORD_WORDS + o], (long long)all[(size_t)o * (size_t)w->n + (size_t)w->rank]);
    free(excl);
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
    if (w->owned) {
        if (w->bases) MPI_Win_detach(w->win, w->mem);
        MPI_Win_free(&w->win);
        free(w->owned);
    } else {
        MPI_Win_free(&w->win);
    }
    free(w->bases);
    free(w->excl_epochs);
    free(w->epochs);
    free(w->fetched);
}

/* Counts this epoch on target t: one fetch-and-op on our counter there. */
static void count_epoch(lockwin *w, int t)
{
    static const int64_t one = 1;
    CHECK_MPI(MPI_Fetch_and_op(&one, &w->fetched[t], MPI_INT64_T, t, at(w, t, RECORD_WORDS + w->rank),
                               MPI_SUM, w->win));
    w->epochs[t]++;
}

/* Reads t's record and checks it is whole (no writer overlapped us). */
static void read_record(lockwin *w, int t, int64_t *rec)
{
    CHECK_MPI(MPI_Get(rec, RECORD_WORDS, MPI_INT64_T, t, at(w, t, 0), RECORD_WORDS, MPI_INT64_T, w->win));
    CHECK_MPI(MPI_Win_flush(t, w->win));
    for (int i = 1; i < RECORD_WORDS; i++)
        if (!CHECK(rec[i] == rec[0], "%s: record of rank %d torn: word %d is %lld, word 0 %lld", w->flavor, t,
                   i, (long long)rec[i], (long long)rec[0]))
            break;
}

/* Under an exclusive lock: record = record + 1, written in two halves. */
static void bump_record(lockwin *w, int t)
{
    int64_t rec[RECORD_WORDS], next[RECORD_WORDS];
    read_record(w, t, rec);
    for (int i = 0; i < RECORD_WORDS; i++) next[i] = rec[0] + 1;
    CHECK_MPI(MPI_Put(next, HALF, MPI_INT64_T, t, at(w, t, 0), HALF, MPI_INT64_T, w->win));
    CHECK_MPI(MPI_Win_flush(t, w->win));
    CHECK_MPI(MPI_Put(next + HALF, HALF, MPI_INT64_T, t, at(w, t, HALF), HALF, MPI_INT64_T, w->win));
    w->excl_epochs[t]++;
}

static void pair_case(lockwin *w, int epochs)
{
    if (w->n < 2 || w->rank > 1) return;
    for (int e = 0; e < epochs; e++) {
        check_where("pair %s epoch %d", w->flavor, e);
        if (w->rank == 0) {
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w->win));
            bump_record(w, 0);
            bump_record(w, 1);
            count_epoch(w, 0);
            count_epoch(w, 1);
            CHECK_MPI(MPI_Win_unlock(1, w->win));
            CHECK_MPI(MPI_Win_unlock(0, w->win));
        } else {
            int64_t early[RECORD_WORDS], rec[RECORD_WORDS];
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win));
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w->win));
            CHECK_MPI(
                MPI_Get(early, RECORD_WORDS, MPI_INT64_T, 0, at(w, 0, 0), RECORD_WORDS, MPI_INT64_T, w->win));
            count_epoch(w, 0);
            count_epoch(w, 1);
            read_record(w, 1, rec);
            CHECK_MPI(MPI_Win_flush_local(0, w->win));
            for (int i = 1; i < RECORD_WORDS; i++)
                if (!CHECK(early[i] == early[0], "%s: record of rank 0 torn", w->flavor)) break;
            read_record(w, 0, rec);
            CHECK_MPI(MPI_Win_unlock(0, w->win));
            CHECK_MPI(MPI_Win_unlock(1, w->win));
        }
    }
}

/* One epoch on a random subset of targets, locked in ascending order. */
static void random_lock_epoch(lockwin *w, uint32_t seed)
{
    char *mode = calloc((size_t)w->n, 1); /* 0 none, 1 shared, 2 exclusive */
    int locked = 0;
    for (int t = 0; t < w->n; t++) {
        uint32_t r = pattern_seed(seed, (uint32_t)t, 0x10c, 0);
        mode[t] = (char)(r % 3);
        locked += mode[t] != 0;
    }
    if (!locked) mode[seed % (uint32_t)w->n] = 2;
    for (int t = 0; t < w->n; t++)
        if (mode[t])
            CHECK_MPI(MPI_Win_lock(mode[t] == 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, 0, w->win));
    /* Work on the targets in a scrambled order, self included. */
    uint32_t start = pattern_seed(seed, 0x5ca, 0, 0) % (uint32_t)w->n;
    for (int k = 0; k < w->n; k++) {
        int t = (int)((start + (uint32_t)k) % (uint32_t)w->n);
        if (!mode[t]) continue;
        count_epoch(w, t);
        if (mode[t] == 2) {
            bump_record(w, t);
        } else {
            int64_t rec[RECORD_WORDS];
            read_record(w, t, rec);
        }
    }
    uint32_t order = pattern_seed(seed, 0xdead, 0, 0);
    for (int k = 0; k < w->n; k++) {
        int t = (order & 1) ? k : w->n - 1 - k;
        if (mode[t]) CHECK_MPI(MPI_Win_unlock(t, w->win));
    }
    free(mode);
}

/* A lock_all epoch touching every target from the highest rank down. */
static void lock_all_epoch(lockwin *w)
{
    CHECK_MPI(MPI_Win_lock_all(0, w->win));
    for (int t = w->n - 1; t >= 0; t--) {
        int64_t rec[RECORD_WORDS];
        count_epoch(w, t);
        read_record(w, t, rec);
    }
    CHECK_MPI(MPI_Win_unlock_all(w->win));
}

static void random_case(lockwin *w, int epochs, bool with_lock_all, uint32_t base)
{
    for (int e = 0; e < epochs; e++) {
        check_where("%s %s epoch %d", with_lock_all ? "lock_all" : "random", w->flavor, e);
        uint32_t seed = pattern_seed(base, (uint32_t)w->rank, (uint32_t)e, with_lock_all);
        if (with_lock_all && seed % 3 == 0)
            lock_all_epoch(w);
        else
            random_lock_epoch(w, seed);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int epochs = argc > 1 ? atoi(argv[1]) : 200;
    uint32_t base = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 1;
    check_watchdog(60);
    for (int f = 0; f < NFLAVORS; f++) {
        lockwin w;
        open_window(&w, (enum flavor)f);
        pair_case(&w, epochs);
        random_case(&w, epochs, false, base);
        random_case(&w, epochs / 2, true, base);
        close_window(&w);
    }
    return check_finish();
}
