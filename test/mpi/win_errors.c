/*
 * win_errors: erroneous RMA synchronization and out-of-range accesses must
 * fail with the right error class under MPI_ERRORS_RETURN, have no effect,
 * and leave the window fully usable.
 *
 * Each error is tried against the right neighbour and against self (one
 * target when there is one rank).  After every expected error a correct
 * put + get round trip to the same target must succeed and return the data
 * just written.  Runs once per window flavor (create, allocate).
 *
 * Known results with Open MPI 4.1.4's own components (not test bugs):
 *  - osc/rdma cannot create an MPI_Win_create window on a one-process
 *    communicator (MPI_ERR_WIN; open-mpi/ompi#7892, #10726).  One-process
 *    MPI_Win_allocate windows go to osc/sm, which checks neither epochs
 *    nor ranges; its unchecked out-of-range puts overrun the window's heap
 *    block, so np 1 aborts later in MPI_Win_free;
 *  - osc/rdma (np >= 2) grants a second shared MPI_Win_lock of a locked
 *    target (and leaks the extra count), and MPI_Win_free under a lock
 *    succeeds; everything else here passes.
 */
#include "check.h"

#include <stdlib.h>

#define SLOT_WORDS 4 /* int64 words per origin slot (disp_unit 8) */
#define TAIL_WORDS 1 /* last word of a window: range-edge accesses */
#define PAD_WORDS \
    4 /* user memory past an MPI_Win_create window: an
                        * implementation that misses a range error writes
                        * here instead of corrupting the heap */

enum flavor { FLAVOR_CREATE, FLAVOR_ALLOCATE, NFLAVORS };
static const char *const flavor_names[] = {"create", "allocate"};

static uint32_t next_round = 1;

/* Double-lock results seen on this rank: [0] shared, [1] exclusive. */
static int double_lock_class[2] = {-1, -1};

typedef struct {
    const char *flavor;
    MPI_Win win;
    int rank, n;
    int targets[2], ntargets; /* right neighbour, then self if different */
    int64_t *base;
    MPI_Aint words; /* window size in words */
    void *mem;
} etest;

static bool expect_class_at(int rc, int want, const char *file, int line, const char *what, int target)
{
    int cls = check_error_class(rc);
    return check_record(cls == want, file, line, "%s (target %d): got %s, expected %s", what, target,
                        check_class_name(cls), check_class_name(want));
}

/* EXPECT_CLASS(call, class, t): `call` must fail with exactly that class. */
#define EXPECT_CLASS(call, want, t) expect_class_at((call), (want), __FILE__, __LINE__, #call, (t))

/* An origin buffer this rank has never sent before. */
static void fresh_data(int64_t *buf, size_t words, int target)
{
    pattern_fill((unsigned char *)buf, words * sizeof *buf,
                 pattern_seed(next_round++, 0xe7, (uint32_t)check_world_rank(), (uint32_t)target));
}

/* Each origin writes only its own slot of a target window. */
static MPI_Aint slot_disp(int origin)
{
    return (MPI_Aint)origin * SLOT_WORDS;
}

/*
 * A correct put then get of fresh data to this rank's slot at target t:
 * must succeed and read back exactly what was written.  With in_epoch the
 * caller holds a lock or lock_all covering t; otherwise a shared lock is
 * taken here (the slot is ours alone, and a shared lock still works after
 * an implementation leaked a lock count).
 */
static void roundtrip_at(const etest *e, int t, bool in_epoch, const char *after, int line)
{
    int64_t out[SLOT_WORDS], in[SLOT_WORDS];
    fresh_data(out, SLOT_WORDS, t);
    memset(in, 0xEE, sizeof in);
    bool ok = true;
    if (!in_epoch) ok &= CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, e->win));
    ok &= CHECK_MPI(
        MPI_Put(out, SLOT_WORDS, MPI_INT64_T, t, slot_disp(e->rank), SLOT_WORDS, MPI_INT64_T, e->win));
    ok &= CHECK_MPI(MPI_Win_flush(t, e->win));
    ok &= CHECK_MPI(
        MPI_Get(in, SLOT_WORDS, MPI_INT64_T, t, slot_disp(e->rank), SLOT_WORDS, MPI_INT64_T, e->win));
    ok &= CHECK_MPI(MPI_Win_flush(t, e->win));
    if (!in_epoch) ok &= CHECK_MPI(MPI_Win_unlock(t, e->win));
    check_record(ok && memcmp(in, out, sizeof in) == 0, __FILE__, line,
                 "%s: round trip to %d after %s failed or returned wrong data", e->flavor, t, after);
}

#define ROUNDTRIP(e, t, in_epoch, after) roundtrip_at((e), (t), (in_epoch), (after), __LINE__)

static bool etest_setup(etest *e, int flavor)
{
    memset(e, 0, sizeof *e);
    e->flavor = flavor_names[flavor];
    MPI_Comm_rank(MPI_COMM_WORLD, &e->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &e->n);
    e->targets[e->ntargets++] = (e->rank + 1) % e->n;
    if (e->n > 1) e->targets[e->ntargets++] = e->rank;
    e->words = (MPI_Aint)e->n * SLOT_WORDS + TAIL_WORDS;
    MPI_Aint bytes = e->words * (MPI_Aint)sizeof(int64_t);
    int rc;
    if (flavor == FLAVOR_CREATE) {
        e->mem = calloc((size_t)(e->words + PAD_WORDS), sizeof(int64_t));
        e->base = e->mem;
        rc = MPI_Win_create(e->base, bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &e->win);
    } else {
        rc = MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &e->base, &e->win);
        if (rc == MPI_SUCCESS) memset(e->base, 0, (size_t)bytes);
    }
    if (!CHECK(rc == MPI_SUCCESS, "%s: window creation failed, class %s", e->flavor,
               check_class_name(check_error_class(rc)))) {
        free(e->mem);
        return false;
    }
    MPI_Win_set_errhandler(e->win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD); /* everyone's memory is zeroed */
    return true;
}

/* The rank whose accesses to its target t land in this rank's window:
 * the left neighbour when t is the right one, ourselves when t is self. */
static int mirror_origin(const etest *e, int t)
{
    return ((2 * e->rank - t) % e->n + e->n) % e->n;
}

static void read_slot(const etest *e, int origin, int64_t *out)
{
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, e->rank, 0, e->win));
    memcpy(out, e->base + slot_disp(origin), SLOT_WORDS * sizeof *out);
    CHECK_MPI(MPI_Win_unlock(e->rank, e->win));
}

/* The slot `origin` writes in our window must hold `want`. */
static void check_slot(const etest *e, int origin, const int64_t *want, const char *what)
{
    int64_t got[SLOT_WORDS];
    read_slot(e, origin, got);
    CHECK(memcmp(got, want, sizeof got) == 0, "%s: %s (slot of %d starts %016llx, expected %016llx)",
          e->flavor, what, origin, (unsigned long long)got[0], (unsigned long long)want[0]);
}

/*
 * On a fresh window (no synchronization call yet) and again after
 * MPI_Win_fence(MPI_MODE_NOSUCCEED), RMA and passive-target completion
 * calls are outside any epoch: MPI_ERR_RMA_SYNC.  The refused put must not
 * have written anything.
 */
static void outside_epoch_errors(const etest *e, const char *state)
{
    for (int i = 0; i < e->ntargets; i++) {
        int t = e->targets[i], src = mirror_origin(e, t);
        int64_t buf[SLOT_WORDS], before[SLOT_WORDS];
        char what[96];

        read_slot(e, src, before);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        fresh_data(buf, SLOT_WORDS, t);
        EXPECT_CLASS(
            MPI_Put(buf, SLOT_WORDS, MPI_INT64_T, t, slot_disp(e->rank), SLOT_WORDS, MPI_INT64_T, e->win),
            MPI_ERR_RMA_SYNC, t);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        snprintf(what, sizeof what, "put refused %s still changed the target", state);
        check_slot(e, src, before, what);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* checked before src rewrites it */
        ROUNDTRIP(e, t, false, "put outside an epoch");

        EXPECT_CLASS(
            MPI_Get(buf, SLOT_WORDS, MPI_INT64_T, t, slot_disp(e->rank), SLOT_WORDS, MPI_INT64_T, e->win),
            MPI_ERR_RMA_SYNC, t);
        ROUNDTRIP(e, t, false, "get outside an epoch");
        EXPECT_CLASS(MPI_Win_unlock(t, e->win), MPI_ERR_RMA_SYNC, t);
        ROUNDTRIP(e, t, false, "unlock of a target not locked");
        EXPECT_CLASS(MPI_Win_flush(t, e->win), MPI_ERR_RMA_SYNC, t);
        EXPECT_CLASS(MPI_Win_flush_local(t, e->win), MPI_ERR_RMA_SYNC, t);
        ROUNDTRIP(e, t, false, "flush outside a passive epoch");
    }
    EXPECT_CLASS(MPI_Win_unlock_all(e->win), MPI_ERR_RMA_SYNC, -1);
    EXPECT_CLASS(MPI_Win_flush_all(e->win), MPI_ERR_RMA_SYNC, -1);
    EXPECT_CLASS(MPI_Win_flush_local_all(e->win), MPI_ERR_RMA_SYNC, -1);
    ROUNDTRIP(e, e->targets[0], false, "unlock_all / flush_all outside an epoch");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/*
 * Inside a fence epoch a flush is not allowed either (it is not a passive
 * target epoch); the epoch must still complete correct puts.  The closing
 * fence uses MPI_MODE_NOSUCCEED so the window ends outside any epoch.
 */
static void fence_epoch_errors(const etest *e)
{
    int64_t out[2][SLOT_WORDS];
    CHECK_MPI(MPI_Win_fence(0, e->win));
    for (int i = 0; i < e->ntargets; i++) {
        int t = e->targets[i];
        EXPECT_CLASS(MPI_Win_flush(t, e->win), MPI_ERR_RMA_SYNC, t);
        fresh_data(out[i], SLOT_WORDS, t);
        CHECK_MPI(
            MPI_Put(out[i], SLOT_WORDS, MPI_INT64_T, t, slot_disp(e->rank), SLOT_WORDS, MPI_INT64_T, e->win));
    }
    EXPECT_CLASS(MPI_Win_flush_all(e->win), MPI_ERR_RMA_SYNC, -1);
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, e->win));

    /* Both puts must have landed; the left neighbour tells us what it sent. */
    int right = e->targets[0], left = mirror_origin(e, right);
    int64_t from_left[SLOT_WORDS];
    CHECK_MPI(MPI_Sendrecv(out[0], SLOT_WORDS, MPI_INT64_T, right, 0, from_left, SLOT_WORDS, MPI_INT64_T,
                           left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check_slot(e, left, from_left, "put in a fence epoch with refused flushes");
    if (e->ntargets > 1) check_slot(e, e->rank, out[1], "put to self in a fence epoch with refused flushes");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* A second MPI_Win_lock_all is refused; the first epoch keeps working. */
static void lock_all_errors(const etest *e)
{
    CHECK_MPI(MPI_Win_lock_all(0, e->win));
    EXPECT_CLASS(MPI_Win_lock_all(0, e->win), MPI_ERR_RMA_SYNC, -1);
    for (int i = 0; i < e->ntargets; i++) ROUNDTRIP(e, e->targets[i], true, "lock_all inside lock_all");
    CHECK_MPI(MPI_Win_unlock_all(e->win));
    EXPECT_CLASS(MPI_Win_unlock_all(e->win), MPI_ERR_RMA_SYNC, -1);
    ROUNDTRIP(e, e->targets[0], false, "a second unlock_all");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/*
 * Accesses reaching past the end of the target window (disp * disp_unit +
 * bytes > size) inside a lock epoch: MPI_ERR_RMA_RANGE, even when only the
 * last byte is outside.  An access ending exactly at the end is fine.
 * The window's last word is the edge; targets are done one after the other
 * (with a barrier) so only one origin touches any window's edge at a time.
 */
static void range_errors(const etest *e)
{
    MPI_Aint end = e->words; /* first displacement past the window */
    for (int i = 0; i < e->ntargets; i++) {
        int t = e->targets[i];
        int64_t out[2], in[2];
        fresh_data(out, 2, t);
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, e->win));
        EXPECT_CLASS(MPI_Put(out, 8, MPI_BYTE, t, end, 8, MPI_BYTE, e->win), MPI_ERR_RMA_RANGE, t);
        EXPECT_CLASS(MPI_Put(out, 9, MPI_BYTE, t, end - 1, 9, MPI_BYTE, e->win), MPI_ERR_RMA_RANGE, t);
        EXPECT_CLASS(MPI_Get(in, 9, MPI_BYTE, t, end - 1, 9, MPI_BYTE, e->win), MPI_ERR_RMA_RANGE, t);
        /* Derived datatypes whose second piece lies past the end (on-node, accumulates
         * walk the layouts as they apply them: the whole span is checked first). */
        MPI_Datatype strided;
        CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT64_T, &strided));
        CHECK_MPI(MPI_Type_commit(&strided));
        EXPECT_CLASS(MPI_Accumulate(out, 2, MPI_INT64_T, t, end - 1, 1, strided, MPI_SUM, e->win),
                     MPI_ERR_RMA_RANGE, t);
        EXPECT_CLASS(MPI_Get_accumulate(out, 2, MPI_INT64_T, in, 2, MPI_INT64_T, t, end - 1, 1, strided,
                                        MPI_SUM, e->win),
                     MPI_ERR_RMA_RANGE, t);
        EXPECT_CLASS(MPI_Put(out, 2, MPI_INT64_T, t, end - 1, 1, strided, e->win), MPI_ERR_RMA_RANGE, t);
        MPI_Type_free(&strided);
        /* A target datatype whose count copies span more bytes than an address holds. */
        MPI_Datatype vast;
        CHECK_MPI(MPI_Type_create_resized(MPI_INT64_T, 0, (MPI_Aint)1 << 61, &vast));
        CHECK_MPI(MPI_Type_commit(&vast));
        int64_t many[8] = {0};
        EXPECT_CLASS(MPI_Put(many, 8, MPI_INT64_T, t, 0, 8, vast, e->win), MPI_ERR_RMA_RANGE, t);
        EXPECT_CLASS(MPI_Get(many, 8, MPI_INT64_T, t, 0, 8, vast, e->win), MPI_ERR_RMA_RANGE, t);
        MPI_Type_free(&vast);
        ROUNDTRIP(e, t, true, "out-of-range accesses");

        memset(in, 0xEE, sizeof in);
        CHECK_MPI(MPI_Put(out, 8, MPI_BYTE, t, end - 1, 8, MPI_BYTE, e->win));
        CHECK_MPI(MPI_Win_flush(t, e->win));
        CHECK_MPI(MPI_Get(in, 8, MPI_BYTE, t, end - 1, 8, MPI_BYTE, e->win));
        CHECK_MPI(MPI_Win_unlock(t, e->win));
        CHECK(in[0] == out[0], "%s: last word of the window of %d read back wrong", e->flavor, t);
        ROUNDTRIP(e, t, false, "an epoch with out-of-range accesses");
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (e->mem) {
        static const int64_t zero[PAD_WORDS];
        CHECK(memcmp(e->base + e->words, zero, sizeof zero) == 0,
              "%s: out-of-range puts wrote past the end of the window", e->flavor);
    }
}

/*
 * The same errors right after correct accesses to the same target, which on-node
 * may have left the target reachable without a call into the engine
 * (osc_fabric/include/osc_fabric/direct_view.h): every access is still checked for
 * its range and its (op, type), and every epoch's end closes the road.  Each kind of
 * operation opens it first, then meets the error.
 */
static void errors_after_access(const etest *e)
{
    MPI_Aint end = e->words;
    int64_t one = 1, old = 0, cmp = 0;
    float f = 1.0f, fold = 0.0f, fcmp = 0.0f;
    for (int i = 0; i < e->ntargets; i++) {
        int t = e->targets[i];
        MPI_Aint mine = slot_disp(e->rank);
        CHECK_MPI(MPI_Win_lock_all(0, e->win));
        ROUNDTRIP(e, t, true, "lock_all");
        EXPECT_CLASS(MPI_Put(&one, 1, MPI_INT64_T, t, end, 1, MPI_INT64_T, e->win), MPI_ERR_RMA_RANGE, t);
        ROUNDTRIP(e, t, true, "a put past the end");
        EXPECT_CLASS(MPI_Get(&old, 1, MPI_INT64_T, t, end, 1, MPI_INT64_T, e->win), MPI_ERR_RMA_RANGE, t);
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, t, mine, 1, MPI_INT64_T, MPI_SUM, e->win));
        EXPECT_CLASS(MPI_Accumulate(&one, 1, MPI_INT64_T, t, end, 1, MPI_INT64_T, MPI_SUM, e->win),
                     MPI_ERR_RMA_RANGE, t);
        CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, mine, MPI_SUM, e->win));
        EXPECT_CLASS(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, end, MPI_SUM, e->win), MPI_ERR_RMA_RANGE,
                     t);
        CHECK_MPI(MPI_Compare_and_swap(&one, &cmp, &old, MPI_INT64_T, t, mine, e->win));
        EXPECT_CLASS(MPI_Compare_and_swap(&one, &cmp, &old, MPI_INT64_T, t, end, e->win), MPI_ERR_RMA_RANGE,
                     t);
        CHECK_MPI(MPI_Win_flush(t, e->win));
        EXPECT_CLASS(MPI_Accumulate(&one, 8, MPI_BYTE, t, mine, 8, MPI_BYTE, MPI_SUM, e->win), MPI_ERR_OP, t);
        EXPECT_CLASS(MPI_Fetch_and_op(&f, &fold, MPI_FLOAT, t, mine, MPI_BAND, e->win), MPI_ERR_OP, t);
        EXPECT_CLASS(MPI_Compare_and_swap(&f, &fcmp, &fold, MPI_FLOAT, t, mine, e->win), MPI_ERR_TYPE, t);
        ROUNDTRIP(e, t, true, "refused reductions");
        CHECK_MPI(MPI_Win_flush_all(e->win));
        CHECK_MPI(MPI_Win_flush_local_all(e->win));
        CHECK_MPI(MPI_Win_unlock_all(e->win));
        EXPECT_CLASS(MPI_Win_flush_all(e->win), MPI_ERR_RMA_SYNC, -1);
        EXPECT_CLASS(MPI_Win_flush_local_all(e->win), MPI_ERR_RMA_SYNC, -1);

        /* Every operation, and flush, right after the epoch that had it ended. */
        EXPECT_CLASS(MPI_Put(&one, 1, MPI_INT64_T, t, mine, 1, MPI_INT64_T, e->win), MPI_ERR_RMA_SYNC, t);
        EXPECT_CLASS(MPI_Get(&old, 1, MPI_INT64_T, t, mine, 1, MPI_INT64_T, e->win), MPI_ERR_RMA_SYNC, t);
        EXPECT_CLASS(MPI_Accumulate(&one, 1, MPI_INT64_T, t, mine, 1, MPI_INT64_T, MPI_SUM, e->win),
                     MPI_ERR_RMA_SYNC, t);
        EXPECT_CLASS(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, mine, MPI_SUM, e->win), MPI_ERR_RMA_SYNC,
                     t);
        EXPECT_CLASS(MPI_Compare_and_swap(&one, &cmp, &old, MPI_INT64_T, t, mine, e->win), MPI_ERR_RMA_SYNC,
                     t);
        EXPECT_CLASS(MPI_Win_flush(t, e->win), MPI_ERR_RMA_SYNC, t);
        EXPECT_CLASS(MPI_Win_flush_local(t, e->win), MPI_ERR_RMA_SYNC, t);

        /* A lock of t ended; a lock of another target is no epoch for t. */
        int other = e->targets[(i + 1) % e->ntargets];
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, e->win));
        ROUNDTRIP(e, t, true, "a lock");
        CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, mine, MPI_SUM, e->win));
        CHECK_MPI(MPI_Win_unlock(t, e->win));
        if (other != t) {
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, other, 0, e->win));
            EXPECT_CLASS(MPI_Put(&one, 1, MPI_INT64_T, t, mine, 1, MPI_INT64_T, e->win), MPI_ERR_RMA_SYNC, t);
            EXPECT_CLASS(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, mine, MPI_SUM, e->win),
                         MPI_ERR_RMA_SYNC, t);
            EXPECT_CLASS(MPI_Win_flush(t, e->win), MPI_ERR_RMA_SYNC, t);
            CHECK_MPI(MPI_Win_unlock(other, e->win));

            /* Two locks at once, both targets reached: unlocking one ends its epoch
             * only, and flush_all still has an epoch until the last unlock. */
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, e->win));
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, other, 0, e->win));
            CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, mine, MPI_SUM, e->win));
            CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, other, mine, MPI_SUM, e->win));
            CHECK_MPI(MPI_Win_flush_all(e->win));
            CHECK_MPI(MPI_Win_unlock(t, e->win));
            EXPECT_CLASS(MPI_Put(&one, 1, MPI_INT64_T, t, mine, 1, MPI_INT64_T, e->win), MPI_ERR_RMA_SYNC, t);
            EXPECT_CLASS(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, mine, MPI_SUM, e->win),
                         MPI_ERR_RMA_SYNC, t);
            EXPECT_CLASS(MPI_Win_flush(t, e->win), MPI_ERR_RMA_SYNC, t);
            CHECK_MPI(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, other, mine, MPI_SUM, e->win));
            CHECK_MPI(MPI_Win_flush_all(e->win));
            CHECK_MPI(MPI_Win_unlock(other, e->win));
            EXPECT_CLASS(MPI_Win_flush_all(e->win), MPI_ERR_RMA_SYNC, -1);
            EXPECT_CLASS(MPI_Put(&one, 1, MPI_INT64_T, other, mine, 1, MPI_INT64_T, e->win), MPI_ERR_RMA_SYNC,
                         other);
        }

        /* A fence epoch, then the window outside any. */
        CHECK_MPI(MPI_Win_fence(0, e->win));
        CHECK_MPI(MPI_Put(&one, 1, MPI_INT64_T, t, mine, 1, MPI_INT64_T, e->win));
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, t, mine, 1, MPI_INT64_T, MPI_SUM, e->win));
        CHECK_MPI(MPI_Compare_and_swap(&one, &cmp, &old, MPI_INT64_T, t, mine, e->win));
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, e->win));
        EXPECT_CLASS(MPI_Put(&one, 1, MPI_INT64_T, t, mine, 1, MPI_INT64_T, e->win), MPI_ERR_RMA_SYNC, t);
        EXPECT_CLASS(MPI_Accumulate(&one, 1, MPI_INT64_T, t, mine, 1, MPI_INT64_T, MPI_SUM, e->win),
                     MPI_ERR_RMA_SYNC, t);
        EXPECT_CLASS(MPI_Compare_and_swap(&one, &cmp, &old, MPI_INT64_T, t, mine, e->win), MPI_ERR_RMA_SYNC,
                     t);
        ROUNDTRIP(e, t, false, "operations after their epochs ended");
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
}

/*
 * Locking a target already locked by this rank is erroneous; MPI allows
 * MPI_ERR_RMA_SYNC or MPI_ERR_RMA_CONFLICT.  The first lock stays usable,
 * one unlock releases it and a second unlock is refused.
 */
static void double_lock_errors(const etest *e)
{
    bool shared_granted = false;
    for (int excl = 0; excl < 2; excl++) {
        int type = excl ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
        const char *name = excl ? "exclusive" : "shared";
        /* An implementation that grants a second shared lock would block
         * forever on a second exclusive one: report instead of hanging. */
        if (excl && !CHECK(!shared_granted,
                           "%s: exclusive double lock not tried, the shared "
                           "one was granted and this would self-deadlock",
                           e->flavor))
            break;
        for (int i = 0; i < e->ntargets; i++) {
            int t = e->targets[i];
            CHECK_MPI(MPI_Win_lock(type, t, 0, e->win));
            int cls = check_error_class(MPI_Win_lock(type, t, 0, e->win));
            CHECK(cls == MPI_ERR_RMA_SYNC || cls == MPI_ERR_RMA_CONFLICT,
                  "%s: second %s lock of %d: got %s, expected MPI_ERR_RMA_SYNC "
                  "or MPI_ERR_RMA_CONFLICT",
                  e->flavor, name, t, check_class_name(cls));
            double_lock_class[excl] = cls;
            shared_granted |= cls == MPI_SUCCESS;
            ROUNDTRIP(e, t, true, "locking a locked target again");
            if (cls == MPI_SUCCESS) /* wrongly granted: try to give it back */
                MPI_Win_unlock(t, e->win);
            CHECK_MPI(MPI_Win_unlock(t, e->win));
            EXPECT_CLASS(MPI_Win_unlock(t, e->win), MPI_ERR_RMA_SYNC, t);
            ROUNDTRIP(e, t, false, "unlocking an unlocked target");
            /* Our exclusive lock on self must not meet the left's on us. */
            CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
}

/*
 * MPI_Win_free while this rank still holds a lock (or lock_all) is refused
 * with MPI_ERR_RMA_SYNC and leaves the window intact; after unlocking, the
 * window frees normally.  Every rank does this, so the collective free is
 * either refused everywhere or attempted everywhere.
 */
static void free_errors(etest *e)
{
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, e->rank, 0, e->win));
    if (!EXPECT_CLASS(MPI_Win_free(&e->win), MPI_ERR_RMA_SYNC, e->rank) ||
        !CHECK(e->win != MPI_WIN_NULL, "%s: refused MPI_Win_free cleared the handle", e->flavor))
        return; /* the window is gone: nothing left to unlock */
    CHECK_MPI(MPI_Win_unlock(e->rank, e->win));
    ROUNDTRIP(e, e->targets[0], false, "MPI_Win_free under a lock");

    CHECK_MPI(MPI_Win_lock_all(0, e->win));
    if (!EXPECT_CLASS(MPI_Win_free(&e->win), MPI_ERR_RMA_SYNC, -1) || e->win == MPI_WIN_NULL) return;
    ROUNDTRIP(e, e->targets[0], true, "MPI_Win_free under lock_all");
    CHECK_MPI(MPI_Win_unlock_all(e->win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_free(&e->win));
    CHECK(e->win == MPI_WIN_NULL, "%s: MPI_Win_free left the handle set", e->flavor);
}

static const char *lock_class_name(int cls)
{
    return cls < 0 ? "(not tried)" : check_class_name(cls);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    /* A window that cannot be created is a reported failure, not an abort. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int f = 0; f < NFLAVORS; f++) {
        etest e;
        if (!etest_setup(&e, f)) continue;
        outside_epoch_errors(&e, "on a fresh window");
        fence_epoch_errors(&e);
        outside_epoch_errors(&e, "after a NOSUCCEED fence");
        lock_all_errors(&e);
        range_errors(&e);
        errors_after_access(&e);
        double_lock_errors(&e);
        free_errors(&e);
        free(e.mem);
    }
    /* Which of the two permitted classes this implementation uses. */
    if (check_world_rank() == 0)
        printf(
            "note: a second MPI_Win_lock of a locked target returns %s "
            "(shared), %s (exclusive)\n",
            lock_class_name(double_lock_class[0]), lock_class_name(double_lock_class[1]));
    return check_finish();
}
