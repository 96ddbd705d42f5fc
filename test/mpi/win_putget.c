/*
 * win_putget: contiguous MPI_Put / MPI_Get correctness under every
 * synchronization mode.
 *
 * For each window flavor (MPI_Win_create on malloc'd memory and
 * MPI_Win_allocate), each communicator (MPI_COMM_WORLD, a parity split of
 * it, MPI_COMM_SELF) and each disp_unit (1 and 8) one window is created and
 *   - its attributes and group are checked,
 *   - MPI_PROC_NULL puts/gets must succeed and touch nothing,
 *   - the classic ring (rank r puts to r+1, fence, check) runs,
 *   - local stores + MPI_Win_sync inside lock_all are seen by gets,
 *   - every rank puts to and gets from every rank (self included) each of
 *     the transfer sizes under fence, lock shared, lock exclusive and
 *     lock_all with flush / flush_all / flush_local / flush_local_all.
 * Data is checked byte for byte, with poisoned guard bytes on both sides,
 * right after the synchronization call that guarantees completion.
 * Then an exclusive-lock counter (get+flush+put) checks lock mutual
 * exclusion, and windows where odd ranks have size 0 are exercised.
 *
 * Known results with Open MPI 4.1.4's own components (not test bugs):
 *  - osc/rdma cannot create an MPI_Win_create window on a one-process
 *    communicator (MPI_ERR_WIN; open-mpi/ompi#7892, #10726): the
 *    create/self windows fail at every np, and create/world and
 *    create/parity where those have one rank;
 *  - osc/rdma names its shared-memory file after the communicator's CID,
 *    which disjoint communicators share (the two parity halves at np 4),
 *    so their windows can collide: creation fails or the run hangs, now
 *    and then (open-mpi/ompi#9492, fixed for 5.0 by #9495).
 */
#include "check.h"

#include <stdlib.h>

#define MAX_SIZE ((1 << 20) + 3)
#define GUARD 16 /* poisoned bytes checked around every transfer */
#define POISON 0xEE
#define RING_BYTES 1000  /* ring and Win_sync payloads */
#define COUNTER_ITERS 25 /* increments per rank in the counter test */
#define ZERO_SLOT 64     /* per-origin slot in the zero-size test */

static const int sizes[] = {0, 1, 8, 4095, 4096, 4097, 65536, MAX_SIZE};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

enum flavor { FLAVOR_CREATE, FLAVOR_ALLOCATE, NFLAVORS };
static const char *const flavor_names[] = {"create", "allocate"};

enum sync_mode {
    SYNC_FENCE,
    SYNC_LOCK_SHARED,
    SYNC_LOCK_EXCLUSIVE,
    SYNC_FLUSH,
    SYNC_FLUSH_ALL,
    SYNC_FLUSH_LOCAL,
    SYNC_FLUSH_LOCAL_ALL,
    NSYNC_MODES
};
static const char *const sync_names[] = {
    "fence",
    "lock-shared",
    "lock-exclusive",
    "lock_all+flush",
    "lock_all+flush_all",
    "lock_all+flush_local",
    "lock_all+flush_local_all",
};

/*
 * Every data pattern gets a fresh round number so stale data never matches.
 * Rounds are counted per test (window), starting from a base every rank of
 * its communicator agrees on: ranks that skipped other tests (say, a window
 * that could not be created on their communicator) still agree.
 */
static uint32_t test_round_base(int test_index)
{
    return (uint32_t)(test_index + 1) << 20;
}

/*
 * One window under test.  Window memory and the local origin/result
 * buffer both hold n slots of slot_bytes; slot s of the window is written
 * only by origin s, slot t of the local buffer is used for target t.  In a
 * slot the data starts at `lead` (unaligned for disp_unit 1) after `lead`
 * guard bytes and is followed by GUARD guard bytes.
 */
typedef struct {
    char label[64];
    uint32_t round; /* next pattern round, see test_round_base() */
    MPI_Comm comm;
    MPI_Win win;
    int rank, n, disp_unit, flavor;
    size_t slot_bytes, lead;
    unsigned char *base;  /* window memory */
    unsigned char *local; /* origin / result buffers */
    void *create_mem;     /* user memory given to MPI_Win_create */
} wtest;

static unsigned char *win_slot(const wtest *w, int s)
{
    return w->base + (size_t)s * w->slot_bytes;
}

static unsigned char *local_slot(const wtest *w, int t)
{
    return w->local + (size_t)t * w->slot_bytes;
}

/* Target displacement (in disp units) of the data in slot s. */
static MPI_Aint slot_disp(const wtest *w, int s)
{
    return (MPI_Aint)(((size_t)s * w->slot_bytes + w->lead) / (size_t)w->disp_unit);
}

static uint32_t data_seed(uint32_t round, bool is_put, int size, int origin, int target)
{
    return pattern_seed(round, (uint32_t)size * 2u + is_put, (uint32_t)origin, (uint32_t)target);
}

/* Creates the window; returns false (after reporting) if that failed. */
static bool wtest_setup(wtest *w, int test_index, int flavor, MPI_Comm comm, const char *comm_name,
                        int disp_unit)
{
    memset(w, 0, sizeof *w);
    w->round = test_round_base(test_index);
    w->comm = comm;
    w->flavor = flavor;
    w->disp_unit = disp_unit;
    MPI_Comm_rank(comm, &w->rank);
    MPI_Comm_size(comm, &w->n);
    snprintf(w->label, sizeof w->label, "%s/%s/du%d", flavor_names[flavor], comm_name, disp_unit);
    w->lead = GUARD + (disp_unit == 1 ? 3 : 0);
    w->slot_bytes = (w->lead + MAX_SIZE + GUARD + 7) / 8 * 8;
    MPI_Aint win_bytes = (MPI_Aint)(w->slot_bytes * (size_t)w->n);
    w->local = malloc(w->slot_bytes * (size_t)w->n);

    int rc;
    if (flavor == FLAVOR_CREATE) {
        w->create_mem = malloc((size_t)win_bytes);
        w->base = w->create_mem;
        rc = MPI_Win_create(w->base, win_bytes, disp_unit, MPI_INFO_NULL, comm, &w->win);
    } else {
        rc = MPI_Win_allocate(win_bytes, disp_unit, MPI_INFO_NULL, comm, &w->base, &w->win);
    }
    if (!CHECK(rc == MPI_SUCCESS && w->local, "%s: window creation failed, class %s", w->label,
               check_class_name(check_error_class(rc)))) {
        free(w->create_mem);
        free(w->local);
        return false;
    }
    /* Report failures of the calls under test instead of aborting. */
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    return true;
}

static void wtest_teardown(wtest *w)
{
    CHECK_MPI(MPI_Win_free(&w->win));
    CHECK(w->win == MPI_WIN_NULL, "%s: MPI_Win_free left the handle set", w->label);
    free(w->create_mem);
    free(w->local);
}

/* Local access to the window memory, bracketed by a lock on self so it is
 * ordered with RMA from other ranks in either memory model. */
static void local_access_begin(const wtest *w, int lock_type)
{
    CHECK_MPI(MPI_Win_lock(lock_type, w->rank, 0, w->win));
}

static void local_access_end(const wtest *w)
{
    CHECK_MPI(MPI_Win_unlock(w->rank, w->win));
}

/* Checks a slot: guard, `size` bytes of pattern `seed`, guard. */
static void check_slot(const wtest *w, const unsigned char *slot, int size, uint32_t seed, const char *what)
{
    size_t n = (size_t)size;
    size_t bad = fill_mismatch(slot, w->lead, POISON);
    CHECK(bad == w->lead, "%s: guard byte %zu before the data is 0x%02x", what, bad, slot[bad]);
    bad = pattern_mismatch(slot + w->lead, n, seed);
    CHECK(bad == n, "%s: data byte %zu of %zu is 0x%02x, expected 0x%02x", what, bad, n,
          bad < n ? slot[w->lead + bad] : 0, pattern_byte(seed, bad));
    bad = fill_mismatch(slot + w->lead + n, GUARD, POISON);
    CHECK(bad == GUARD, "%s: guard byte %zu after the data is 0x%02x", what, bad,
          bad < GUARD ? slot[w->lead + n + bad] : 0);
}

static void describe(char *buf, size_t len, const wtest *w, int mode, bool is_put, int size, int origin,
                     int target)
{
    snprintf(buf, len, "%s %s %s size %d origin %d target %d", w->label, sync_names[mode],
             is_put ? "put" : "get", size, origin, target);
}

/* Target side of a put phase: every origin's slot holds its data. */
static void check_put_arrivals(const wtest *w, int mode, int size, uint32_t round)
{
    char what[160];
    for (int o = 0; o < w->n; o++) {
        describe(what, sizeof what, w, mode, true, size, o, w->rank);
        check_slot(w, win_slot(w, o), size, data_seed(round, true, size, o, w->rank), what);
    }
}

/* Origin side of a get phase: every target's data landed in its slot. */
static void check_get_results(const wtest *w, int mode, int size, uint32_t round)
{
    char what[160];
    for (int t = 0; t < w->n; t++) {
        describe(what, sizeof what, w, mode, false, size, w->rank, t);
        check_slot(w, local_slot(w, t), size, data_seed(round, false, size, w->rank, t), what);
    }
}

/* Poisons [guard, data, guard] of a slot. */
static void poison_slot(const wtest *w, unsigned char *slot, int size)
{
    memset(slot, POISON, w->lead + (size_t)size + GUARD);
}

/* Sets up a phase: the side that will be written is poisoned, the side
 * that will be read holds the pattern. */
static void prepare_phase(const wtest *w, bool is_put, int size, uint32_t round)
{
    local_access_begin(w, MPI_LOCK_EXCLUSIVE);
    for (int s = 0; s < w->n; s++) {
        if (is_put) {
            poison_slot(w, win_slot(w, s), size);
            pattern_fill(local_slot(w, s) + w->lead, (size_t)size, data_seed(round, true, size, w->rank, s));
        } else {
            poison_slot(w, local_slot(w, s), size);
            pattern_fill(win_slot(w, s) + w->lead, (size_t)size, data_seed(round, false, size, s, w->rank));
        }
    }
    local_access_end(w);
}

static bool is_lock_mode(int mode)
{
    return mode == SYNC_LOCK_SHARED || mode == SYNC_LOCK_EXCLUSIVE;
}

static bool is_lock_all_mode(int mode)
{
    return mode >= SYNC_FLUSH;
}

/*
 * One phase: every rank puts `size` bytes to (or gets them from) every rank
 * of the window's communicator under synchronization `mode`, and the data
 * is checked as soon as the mode guarantees it:
 *   gets   - right after the completion call (flush*, unlock, fence), still
 *            inside the lock_all epoch;
 *   puts   - after flush / flush_all the targets check while the epoch is
 *            still open; after flush_local* the origin buffer is scribbled
 *            over (the data must already be captured); all put modes are
 *            checked again at the target once the epoch is closed.
 */
static void run_phase(wtest *w, int mode, bool is_put, int size)
{
    uint32_t round = w->round++;
    prepare_phase(w, is_put, size, round);
    CHECK_MPI(MPI_Barrier(w->comm));

    if (mode == SYNC_FENCE)
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win));
    else if (is_lock_all_mode(mode))
        CHECK_MPI(MPI_Win_lock_all(0, w->win));

    for (int k = 0; k < w->n; k++) {
        int t = (w->rank + k) % w->n; /* stagger targets, self first */
        if (is_lock_mode(mode))
            CHECK_MPI(
                MPI_Win_lock(mode == SYNC_LOCK_SHARED ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, t, 0, w->win));
        unsigned char *buf = local_slot(w, t) + w->lead;
        if (is_put)
            CHECK_MPI(MPI_Put(buf, size, MPI_BYTE, t, slot_disp(w, w->rank), size, MPI_BYTE, w->win));
        else
            CHECK_MPI(MPI_Get(buf, size, MPI_BYTE, t, slot_disp(w, w->rank), size, MPI_BYTE, w->win));
        if (mode == SYNC_FLUSH)
            CHECK_MPI(MPI_Win_flush(t, w->win));
        else if (mode == SYNC_FLUSH_LOCAL)
            CHECK_MPI(MPI_Win_flush_local(t, w->win));
        else if (is_lock_mode(mode))
            CHECK_MPI(MPI_Win_unlock(t, w->win));
    }
    if (mode == SYNC_FLUSH_ALL)
        CHECK_MPI(MPI_Win_flush_all(w->win));
    else if (mode == SYNC_FLUSH_LOCAL_ALL)
        CHECK_MPI(MPI_Win_flush_local_all(w->win));
    else if (mode == SYNC_FENCE)
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win));

    if (!is_put) {
        check_get_results(w, mode, size, round);
    } else if (mode == SYNC_FLUSH_LOCAL || mode == SYNC_FLUSH_LOCAL_ALL) {
        for (int t = 0; t < w->n; t++) memset(local_slot(w, t) + w->lead, POISON ^ 0xFF, (size_t)size);
    } else if (mode == SYNC_FLUSH || mode == SYNC_FLUSH_ALL) {
        /* flush means remotely complete: check before anyone unlocks. */
        CHECK_MPI(MPI_Barrier(w->comm));
        CHECK_MPI(MPI_Win_sync(w->win));
        check_put_arrivals(w, mode, size, round);
        CHECK_MPI(MPI_Barrier(w->comm));
    }

    if (is_lock_all_mode(mode)) CHECK_MPI(MPI_Win_unlock_all(w->win));
    CHECK_MPI(MPI_Barrier(w->comm));
    if (is_put) {
        local_access_begin(w, MPI_LOCK_SHARED);
        check_put_arrivals(w, mode, size, round);
        local_access_end(w);
    }
}

/* Attributes and group must describe exactly this window. */
static void check_attrs(const wtest *w)
{
    int flag = 0;
    void *base = NULL;
    MPI_Aint *size = NULL;
    int *disp_unit = NULL, *model = NULL, *flavor = NULL;

    CHECK_MPI(MPI_Win_get_attr(w->win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == w->base, "%s: MPI_WIN_BASE flag %d %p, expected %p", w->label, flag, base,
          (void *)w->base);
    CHECK_MPI(MPI_Win_get_attr(w->win, MPI_WIN_SIZE, &size, &flag));
    MPI_Aint want = (MPI_Aint)(w->slot_bytes * (size_t)w->n);
    CHECK(flag && size && *size == want, "%s: MPI_WIN_SIZE flag %d %ld, expected %ld", w->label, flag,
          size ? (long)*size : -1L, (long)want);
    CHECK_MPI(MPI_Win_get_attr(w->win, MPI_WIN_DISP_UNIT, &disp_unit, &flag));
    CHECK(flag && disp_unit && *disp_unit == w->disp_unit, "%s: MPI_WIN_DISP_UNIT flag %d %d", w->label, flag,
          disp_unit ? *disp_unit : -1);
    CHECK_MPI(MPI_Win_get_attr(w->win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && model && *model == MPI_WIN_UNIFIED,
          "%s: MPI_WIN_MODEL flag %d %d, expected MPI_WIN_UNIFIED (%d)", w->label, flag, model ? *model : -1,
          MPI_WIN_UNIFIED);
    CHECK_MPI(MPI_Win_get_attr(w->win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    int want_flavor = w->flavor == FLAVOR_CREATE ? MPI_WIN_FLAVOR_CREATE : MPI_WIN_FLAVOR_ALLOCATE;
    CHECK(flag && flavor && *flavor == want_flavor, "%s: MPI_WIN_CREATE_FLAVOR flag %d %d, expected %d",
          w->label, flag, flavor ? *flavor : -1, want_flavor);

    MPI_Group wgroup = MPI_GROUP_NULL, cgroup = MPI_GROUP_NULL;
    int cmp = MPI_UNEQUAL;
    CHECK_MPI(MPI_Win_get_group(w->win, &wgroup));
    MPI_Comm_group(w->comm, &cgroup);
    if (wgroup != MPI_GROUP_NULL) MPI_Group_compare(wgroup, cgroup, &cmp);
    CHECK(cmp == MPI_IDENT, "%s: window group compares %d to the communicator's", w->label, cmp);
    if (wgroup != MPI_GROUP_NULL) MPI_Group_free(&wgroup);
    MPI_Group_free(&cgroup);
}

/* MPI_PROC_NULL as target: succeeds, moves nothing (in both epoch kinds). */
static void proc_null_test(const wtest *w)
{
    unsigned char *src = local_slot(w, 0);
    unsigned char *dst = local_slot(w, 0) + RING_BYTES;
    local_access_begin(w, MPI_LOCK_EXCLUSIVE);
    poison_slot(w, win_slot(w, w->rank), RING_BYTES);
    local_access_end(w);
    memset(src, 0x5A, RING_BYTES);
    memset(dst, POISON, RING_BYTES);
    CHECK_MPI(MPI_Barrier(w->comm));

    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win));
    CHECK_MPI(MPI_Put(src, RING_BYTES, MPI_BYTE, MPI_PROC_NULL, 0, RING_BYTES, MPI_BYTE, w->win));
    CHECK_MPI(MPI_Get(dst, RING_BYTES, MPI_BYTE, MPI_PROC_NULL, 0, RING_BYTES, MPI_BYTE, w->win));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win));

    CHECK_MPI(MPI_Win_lock_all(0, w->win));
    CHECK_MPI(MPI_Put(src, RING_BYTES, MPI_BYTE, MPI_PROC_NULL, 0, RING_BYTES, MPI_BYTE, w->win));
    CHECK_MPI(MPI_Get(dst, RING_BYTES, MPI_BYTE, MPI_PROC_NULL, 0, RING_BYTES, MPI_BYTE, w->win));
    CHECK_MPI(MPI_Win_flush_all(w->win));
    CHECK_MPI(MPI_Win_unlock_all(w->win));
    CHECK_MPI(MPI_Barrier(w->comm));

    size_t bad = fill_mismatch(dst, RING_BYTES, POISON);
    CHECK(bad == RING_BYTES, "%s: MPI_PROC_NULL get wrote byte %zu", w->label, bad);
    local_access_begin(w, MPI_LOCK_SHARED);
    bad = fill_mismatch(win_slot(w, w->rank), w->lead + RING_BYTES + GUARD, POISON);
    CHECK(bad == w->lead + RING_BYTES + GUARD, "%s: MPI_PROC_NULL put changed window byte %zu", w->label,
          bad);
    local_access_end(w);
}

/*
 * The classic ring: rank r puts to (r+1)%n, fence, check what came from
 * (r-1)%n.  Three rounds chained by MPI_Win_fence(0), which closes one
 * epoch and opens the next; rounds alternate halves of slot 0 so a round's
 * puts never overwrite data still being checked.
 */
static void ring_test(wtest *w)
{
    int right = (w->rank + 1) % w->n, left = (w->rank + w->n - 1) % w->n;
    CHECK_MPI(MPI_Win_fence(0, w->win));
    for (int iter = 0; iter < 3; iter++) {
        uint32_t round = w->round++;
        size_t half = (size_t)(iter % 2) * (RING_BYTES + GUARD);
        pattern_fill(local_slot(w, 0) + half, RING_BYTES, data_seed(round, true, RING_BYTES, w->rank, right));
        CHECK_MPI(MPI_Put(local_slot(w, 0) + half, RING_BYTES, MPI_BYTE, right,
                          (MPI_Aint)(half / (size_t)w->disp_unit), RING_BYTES, MPI_BYTE, w->win));
        CHECK_MPI(MPI_Win_fence(0, w->win));
        uint32_t seed = data_seed(round, true, RING_BYTES, left, w->rank);
        size_t bad = pattern_mismatch(win_slot(w, 0) + half, RING_BYTES, seed);
        CHECK(bad == RING_BYTES, "%s: ring round %d from %d: byte %zu wrong", w->label, iter, left, bad);
    }
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win));
}

/*
 * Local stores to the window inside a lock_all epoch, made visible by
 * MPI_Win_sync, must be returned by a get from self right away, and by a
 * get from a neighbour once a barrier orders the two.
 */
static void win_sync_test(wtest *w)
{
    uint32_t round = w->round++;
    int right = (w->rank + 1) % w->n;
    unsigned char *mine = win_slot(w, 0) + w->lead;
    unsigned char *got = local_slot(w, 0);

    CHECK_MPI(MPI_Win_lock_all(0, w->win));
    pattern_fill(mine, RING_BYTES, data_seed(round, true, 0, w->rank, w->rank));
    CHECK_MPI(MPI_Win_sync(w->win));

    memset(got, POISON, RING_BYTES);
    CHECK_MPI(MPI_Get(got, RING_BYTES, MPI_BYTE, w->rank, slot_disp(w, 0), RING_BYTES, MPI_BYTE, w->win));
    CHECK_MPI(MPI_Win_flush(w->rank, w->win));
    size_t bad = pattern_mismatch(got, RING_BYTES, data_seed(round, true, 0, w->rank, w->rank));
    CHECK(bad == RING_BYTES, "%s: get from self after Win_sync: byte %zu wrong", w->label, bad);

    CHECK_MPI(MPI_Barrier(w->comm));
    memset(got, POISON, RING_BYTES);
    CHECK_MPI(MPI_Get(got, RING_BYTES, MPI_BYTE, right, slot_disp(w, 0), RING_BYTES, MPI_BYTE, w->win));
    CHECK_MPI(MPI_Win_flush(right, w->win));
    bad = pattern_mismatch(got, RING_BYTES, data_seed(round, true, 0, right, right));
    CHECK(bad == RING_BYTES, "%s: get from %d after its Win_sync: byte %zu wrong", w->label, right, bad);
    CHECK_MPI(MPI_Win_unlock_all(w->win));
    CHECK_MPI(MPI_Barrier(w->comm));
}

static void window_tests(int test_index, int flavor, MPI_Comm comm, const char *comm_name, int disp_unit)
{
    wtest w;
    if (!wtest_setup(&w, test_index, flavor, comm, comm_name, disp_unit)) return;
    check_attrs(&w);
    proc_null_test(&w);
    ring_test(&w);
    win_sync_test(&w);
    for (int mode = 0; mode < NSYNC_MODES; mode++)
        for (int s = 0; s < NSIZES; s++) {
            run_phase(&w, mode, true, sizes[s]);
            run_phase(&w, mode, false, sizes[s]);
        }
    wtest_teardown(&w);
}

/* Creates a window of `bytes` (disp_unit 8, zeroed) on MPI_COMM_WORLD;
 * returns false (after reporting) if that failed. */
static bool world_window(int flavor, MPI_Aint bytes, const char *what, MPI_Win *win, void **mem, void **base)
{
    int rc;
    *win = MPI_WIN_NULL;
    *mem = NULL;
    if (flavor == FLAVOR_CREATE) {
        *mem = bytes > 0 ? calloc(1, (size_t)bytes) : NULL;
        *base = *mem;
        rc = MPI_Win_create(*base, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win);
    } else {
        rc = MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, base, win);
        if (rc == MPI_SUCCESS && bytes > 0) memset(*base, 0, (size_t)bytes);
    }
    if (!CHECK(rc == MPI_SUCCESS, "%s %s: window creation failed, class %s", flavor_names[flavor], what,
               check_class_name(check_error_class(rc)))) {
        free(*mem);
        return false;
    }
    MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
    return true;
}

/*
 * Each rank increments a counter on rank 0 COUNTER_ITERS times with
 * get + flush + put under MPI_LOCK_EXCLUSIVE.  Without mutual exclusion
 * increments are lost and the total falls short of n*COUNTER_ITERS.
 */
static void counter_test(int flavor)
{
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    void *mem, *base;
    MPI_Win win;
    if (!world_window(flavor, sizeof(int64_t), "counter", &win, &mem, &base)) return;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* counter zeroed everywhere */

    int64_t last = -1;
    for (int i = 0; i < COUNTER_ITERS; i++) {
        int64_t seen = -1, next;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_MPI(MPI_Get(&seen, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_flush(0, win));
        next = seen + 1;
        CHECK_MPI(MPI_Put(&next, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
        /* Our own previous increment must be visible: strictly increasing. */
        CHECK(seen > last && seen < (int64_t)n * COUNTER_ITERS,
              "%s counter: read %lld after previously reading %lld", flavor_names[flavor], (long long)seen,
              (long long)last);
        last = seen;
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    int64_t final = -1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_MPI(MPI_Get(&final, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
    CHECK(final == (int64_t)n * COUNTER_ITERS, "%s counter: final value %lld, expected %lld",
          flavor_names[flavor], (long long) final, (long long)n * COUNTER_ITERS);
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
}

/*
 * Odd ranks expose size 0 (MPI_Win_create with base NULL); nobody targets
 * them, but they still take part as origins.  Every rank puts a slot to
 * each even rank and reads it back, once with fences, once under lock_all.
 */
static void zero_size_test(int test_index, int flavor)
{
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Aint bytes = rank % 2 ? 0 : (MPI_Aint)n * ZERO_SLOT;
    void *mem, *base;
    MPI_Win win;
    if (!world_window(flavor, bytes, "zero-size", &win, &mem, &base)) return;
    const char *fl = flavor_names[flavor];

    int flag = 0;
    MPI_Aint *size = NULL;
    void *attr_base = NULL;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag && size && *size == bytes, "%s zero-size: MPI_WIN_SIZE %ld, expected %ld", fl,
          size ? (long)*size : -1L, (long)bytes);
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &attr_base, &flag));
    CHECK(flag && attr_base == base, "%s zero-size: MPI_WIN_BASE %p, expected %p", fl, attr_base, base);

    /* Slot t of out/in is this rank's data for / from target t. */
    unsigned char *out = malloc((size_t)n * ZERO_SLOT);
    unsigned char *in = malloc((size_t)n * ZERO_SLOT);
    MPI_Aint my_disp = (MPI_Aint)rank * ZERO_SLOT / 8;
    for (int pass = 0; pass < 2; pass++) {
        bool passive = pass == 1;
        const char *how = passive ? "lock_all" : "fence";
        uint32_t round = test_round_base(test_index) + (uint32_t)pass;

        if (passive)
            CHECK_MPI(MPI_Win_lock_all(0, win));
        else
            CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        for (int t = 0; t < n; t += 2) {
            pattern_fill(out + t * ZERO_SLOT, ZERO_SLOT, data_seed(round, true, 0, rank, t));
            CHECK_MPI(
                MPI_Put(out + t * ZERO_SLOT, ZERO_SLOT, MPI_BYTE, t, my_disp, ZERO_SLOT, MPI_BYTE, win));
        }
        if (passive) {
            CHECK_MPI(MPI_Win_flush_all(win));
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
            CHECK_MPI(MPI_Win_sync(win));
        } else {
            CHECK_MPI(MPI_Win_fence(0, win));
        }
        for (int o = 0; rank % 2 == 0 && o < n; o++) {
            size_t bad = pattern_mismatch((unsigned char *)base + o * ZERO_SLOT, ZERO_SLOT,
                                          data_seed(round, true, 0, o, rank));
            CHECK(bad == ZERO_SLOT, "%s zero-size %s: slot of origin %d byte %zu wrong", fl, how, o, bad);
        }

        memset(in, POISON, (size_t)n * ZERO_SLOT);
        for (int t = 0; t < n; t += 2)
            CHECK_MPI(MPI_Get(in + t * ZERO_SLOT, ZERO_SLOT, MPI_BYTE, t, my_disp, ZERO_SLOT, MPI_BYTE, win));
        if (passive)
            CHECK_MPI(MPI_Win_flush_all(win));
        else
            CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        for (int t = 0; t < n; t += 2) {
            size_t bad = pattern_mismatch(in + t * ZERO_SLOT, ZERO_SLOT, data_seed(round, true, 0, rank, t));
            CHECK(bad == ZERO_SLOT, "%s zero-size %s: get from %d byte %zu wrong", fl, how, t, bad);
        }
        if (passive) CHECK_MPI(MPI_Win_unlock_all(win));
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(out);
    free(in);
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm parity;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
    /* A window that cannot be created is a reported failure, not an abort. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(parity, MPI_ERRORS_RETURN);

    const struct {
        MPI_Comm comm;
        const char *name;
    } comms[] = {
        {MPI_COMM_WORLD, "world"},
        {parity, "parity"},
        {MPI_COMM_SELF, "self"},
    };
    int test_index = 0;
    for (int f = 0; f < NFLAVORS; f++)
        for (int c = 0; c < 3; c++)
            for (int du = 1; du <= 8; du += 7)
                window_tests(test_index++, f, comms[c].comm, comms[c].name, du);
    for (int f = 0; f < NFLAVORS; f++) {
        counter_test(f);
        zero_size_test(test_index++, f);
    }
    MPI_Comm_free(&parity);
    return check_finish();
}
