/*
 * misuse: the catalogue of erroneous RMA calls an implementation can detect
 * (MPI-3.1 chapter 11, plus the argument errors every MPI call has), one
 * table row each.  Under MPI_ERRORS_RETURN every row's misuse must fail with
 * exactly the error class in the row; afterwards the row's cleanup leaves the
 * state it entered and a correct put + get round trip (to the right
 * neighbour and to self, on the allocated and on the dynamic window) must
 * return the data just written.  The round trip starts with MPI_Win_lock,
 * which fails if a row left any access epoch open.
 *
 * Every rank runs every row, in table order, with a barrier in between, so
 * rows may use collectives (fence, window creation and free).  Rows that
 * need two ranks are not applicable on one: they are counted separately and
 * never as passed.  A few rows expect MPI_SUCCESS: they show that the checks
 * refuse only what is wrong (a valid info value, an allowed op/type pair).
 *
 * Where the standard leaves the class open, the row tests what README.md
 * promises: MPI_ERR_RMA_CONFLICT for locking a target twice, MPI_ERR_ARG when
 * origin and target describe different data.  Some classes come from Open
 * MPI's own argument checks before osc/fabric sees the call (invalid rank,
 * lock type, MPI_Info_set of an empty or over-long value); the row says so.
 */
#include "check.h"

#include <stdlib.h>

#define SLOT_WORDS 4 /* int64 words per origin slot */
#define TAIL_WORDS 1
#define REGION_PAD 64     /* bytes past the slots of a dynamic region */
#define PSCW_TIMEOUT 20.0 /* seconds before an exposure epoch is a hang */

typedef struct ctx {
    int rank, n, right;
    MPI_Win win; /* MPI_Win_allocate, disp_unit 8 */
    int64_t *base;
    MPI_Aint words; /* its size in words */
    MPI_Win dyn;    /* MPI_Win_create_dynamic, one region per rank */
    unsigned char *region;
    MPI_Aint region_bytes;
    MPI_Aint *region_addr; /* every rank's region, by rank */
    MPI_Win extra;         /* a row's own window */
    MPI_Group self_group;
    MPI_Op user_op;
    MPI_Datatype pair_type;  /* contiguous 2 x MPI_INT (not predefined) */
    MPI_Datatype mixed_type; /* struct of int and double */
    int64_t out[SLOT_WORDS * 2], in[SLOT_WORDS * 2], res[SLOT_WORDS * 2];
    bool shared_double_lock_granted;
} ctx;

typedef struct row row;
struct row {
    const char *name;
    int want; /* class the misuse must return */
    int min_ranks;
    bool (*setup)(ctx *);              /* enter the state the misuse needs */
    int (*misuse)(ctx *, const row *); /* the erroneous call; undoes it if granted */
    void (*cleanup)(ctx *);            /* leave that state again */
    MPI_Datatype dt;                   /* op/type rows */
    MPI_Op op;
    const char *key, *value, *canon; /* info rows: canon is what get_info must report */
    int flavor;                      /* info rows: which creation call */
};

static uint32_t next_round = 1;

static void fresh(int64_t *buf, size_t words, int target)
{
    pattern_fill((unsigned char *)buf, words * sizeof *buf,
                 pattern_seed(next_round++, 0x3a, (uint32_t)check_world_rank(), (uint32_t)target));
}

static MPI_Aint my_slot(const ctx *c)
{
    return (MPI_Aint)c->rank * SLOT_WORDS;
}
static MPI_Aint dyn_slot(const ctx *c, int t)
{
    return c->region_addr[t] + (MPI_Aint)c->rank * SLOT_WORDS * 8;
}

/* check_class_name() plus the classes only this test meets. */
static const char *class_name(int cls)
{
    switch (cls) {
    case MPI_ERR_OP: return "MPI_ERR_OP";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_RMA_FLAVOR: return "MPI_ERR_RMA_FLAVOR";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE";
    case MPI_ERR_LOCKTYPE: return "MPI_ERR_LOCKTYPE";
    case MPI_ERR_ASSERT: return "MPI_ERR_ASSERT";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    default: return check_class_name(cls);
    }
}

/* ---- "the process can continue" ---------------------------------------- */

static void roundtrip(MPI_Win w, int t, MPI_Aint disp, const char *win_name, const char *after)
{
    int64_t out[SLOT_WORDS], in[SLOT_WORDS];
    fresh(out, SLOT_WORDS, t);
    memset(in, 0xEE, sizeof in);
    bool ok = CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w));
    if (ok) {
        ok &= CHECK_MPI(MPI_Put(out, SLOT_WORDS, MPI_INT64_T, t, disp, SLOT_WORDS, MPI_INT64_T, w));
        ok &= CHECK_MPI(MPI_Win_flush(t, w));
        ok &= CHECK_MPI(MPI_Get(in, SLOT_WORDS, MPI_INT64_T, t, disp, SLOT_WORDS, MPI_INT64_T, w));
        ok &= CHECK_MPI(MPI_Win_unlock(t, w));
    }
    CHECK(ok && memcmp(in, out, sizeof in) == 0,
          "after \"%s\": round trip on the %s window to rank %d failed or read "
          "back wrong data",
          after, win_name, t);
}

static void can_continue(const ctx *c, const char *after)
{
    int targets[2] = {c->right, c->rank};
    for (int i = 0; i < (c->n > 1 ? 2 : 1); i++) {
        roundtrip(c->win, targets[i], my_slot(c), "allocated", after);
        roundtrip(c->dyn, targets[i], dyn_slot(c, targets[i]), "dynamic", after);
    }
}

/* ---- setups and cleanups ------------------------------------------------ */

static bool s_none(ctx *c)
{
    (void)c;
    return true;
}
static void c_none(ctx *c)
{
    (void)c;
}

static bool s_lock_all(ctx *c)
{
    return CHECK_MPI(MPI_Win_lock_all(0, c->win));
}
static void c_unlock_all(ctx *c)
{
    CHECK_MPI(MPI_Win_unlock_all(c->win));
}
static bool s_lock_right(ctx *c)
{
    return CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, c->right, 0, c->win));
}
static void c_unlock_right(ctx *c)
{
    CHECK_MPI(MPI_Win_unlock(c->right, c->win));
}

static bool s_fence(ctx *c)
{
    return CHECK_MPI(MPI_Win_fence(0, c->win));
}
static void c_fence(ctx *c)
{
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win));
}

static bool s_start_empty(ctx *c)
{
    return CHECK_MPI(MPI_Win_start(MPI_GROUP_EMPTY, 0, c->win));
}
static void c_complete(ctx *c)
{
    CHECK_MPI(MPI_Win_complete(c->win));
}

/* MPI_Win_wait that reports a hang instead of hanging. */
static void wait_exposure(MPI_Win w)
{
    double end = MPI_Wtime() + PSCW_TIMEOUT;
    int done = 0;
    while (!done && MPI_Wtime() < end)
        if (!CHECK_MPI(MPI_Win_test(w, &done))) return;
    CHECK(done, "exposure epoch did not end within %.0f s", PSCW_TIMEOUT);
}

/* Exposure and access epoch on ourselves alone. */
static bool s_post_self(ctx *c)
{
    return CHECK_MPI(MPI_Win_post(c->self_group, 0, c->win));
}
static bool s_pscw_self(ctx *c)
{
    return s_post_self(c) && CHECK_MPI(MPI_Win_start(c->self_group, 0, c->win));
}
static void c_pscw_self(ctx *c)
{
    CHECK_MPI(MPI_Win_complete(c->win));
    wait_exposure(c->win);
}
static void c_start_complete_wait(ctx *c)
{
    CHECK_MPI(MPI_Win_start(c->self_group, 0, c->win));
    c_pscw_self(c);
}

static bool s_dyn_lock_all(ctx *c)
{
    return CHECK_MPI(MPI_Win_lock_all(0, c->dyn));
}
static void c_dyn_unlock_all(ctx *c)
{
    CHECK_MPI(MPI_Win_unlock_all(c->dyn));
}

/* A row's own window, for MPI_Win_free misuse and shared windows. */
static bool new_extra(ctx *c, bool shared)
{
    void *base;
    int rc = shared ? MPI_Win_allocate_shared(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &c->extra)
                    : MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &c->extra);
    if (!CHECK_MPI(rc)) return false;
    MPI_Win_set_errhandler(c->extra, MPI_ERRORS_RETURN);
    return true;
}
static bool s_extra_shared(ctx *c)
{
    return new_extra(c, true);
}
static bool s_extra_locked(ctx *c)
{
    return new_extra(c, false) && CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, c->right, 0, c->extra));
}
static bool s_extra_lock_all(ctx *c)
{
    return new_extra(c, false) && CHECK_MPI(MPI_Win_lock_all(0, c->extra));
}
static bool s_extra_start(ctx *c)
{
    return new_extra(c, false) && CHECK_MPI(MPI_Win_start(MPI_GROUP_EMPTY, 0, c->extra));
}
static bool s_extra_post(ctx *c)
{
    return new_extra(c, false) && CHECK_MPI(MPI_Win_post(c->self_group, 0, c->extra));
}
/* A refused MPI_Win_free leaves the handle; a wrongly granted one clears it. */
static void free_extra(ctx *c)
{
    if (c->extra != MPI_WIN_NULL) CHECK_MPI(MPI_Win_free(&c->extra));
}
static void c_extra_free(ctx *c)
{
    free_extra(c);
}
static void c_extra_unlock(ctx *c)
{
    if (c->extra != MPI_WIN_NULL) CHECK_MPI(MPI_Win_unlock(c->right, c->extra));
    free_extra(c);
}
static void c_extra_unlock_all(ctx *c)
{
    if (c->extra != MPI_WIN_NULL) CHECK_MPI(MPI_Win_unlock_all(c->extra));
    free_extra(c);
}
static void c_extra_complete(ctx *c)
{
    if (c->extra != MPI_WIN_NULL) CHECK_MPI(MPI_Win_complete(c->extra));
    free_extra(c);
}
static void c_extra_start_complete_wait(ctx *c)
{
    if (c->extra != MPI_WIN_NULL) {
        CHECK_MPI(MPI_Win_start(c->self_group, 0, c->extra));
        CHECK_MPI(MPI_Win_complete(c->extra));
        wait_exposure(c->extra);
    }
    free_extra(c);
}

/* ---- misuses ------------------------------------------------------------ */

/* Request-based calls: a wrongly granted request is completed so that the
 * cleanup finds no operation pending. */
static int finish_request(int rc, MPI_Request *req)
{
    if (rc == MPI_SUCCESS) MPI_Wait(req, MPI_STATUS_IGNORE);
    return rc;
}

/* Data movement at (target, disp) on window w with `count` int64 words. */
static int do_put(ctx *c, MPI_Win w, int t, MPI_Aint disp, int count)
{
    return MPI_Put(c->out, count, MPI_INT64_T, t, disp, count, MPI_INT64_T, w);
}
static int do_get(ctx *c, MPI_Win w, int t, MPI_Aint disp, int count)
{
    return MPI_Get(c->in, count, MPI_INT64_T, t, disp, count, MPI_INT64_T, w);
}
static int do_acc(ctx *c, MPI_Win w, int t, MPI_Aint disp, int count)
{
    return MPI_Accumulate(c->out, count, MPI_INT64_T, t, disp, count, MPI_INT64_T, MPI_SUM, w);
}
static int do_gacc(ctx *c, MPI_Win w, int t, MPI_Aint disp, int count)
{
    return MPI_Get_accumulate(c->out, count, MPI_INT64_T, c->res, count, MPI_INT64_T, t, disp, count,
                              MPI_INT64_T, MPI_SUM, w);
}
static int do_fop(ctx *c, MPI_Win w, int t, MPI_Aint disp, int count)
{
    (void)count;
    return MPI_Fetch_and_op(c->out, c->res, MPI_INT64_T, t, disp, MPI_SUM, w);
}
static int do_cas(ctx *c, MPI_Win w, int t, MPI_Aint disp, int count)
{
    (void)count;
    return MPI_Compare_and_swap(c->out, c->in, c->res, MPI_INT64_T, t, disp, w);
}
static int do_rput(ctx *c, MPI_Win w, int t, MPI_Aint disp, int count)
{
    MPI_Request req;
    return finish_request(MPI_Rput(c->out, count, MPI_INT64_T, t, disp, count, MPI_INT64_T, w, &req), &req);
}
static int do_rget(ctx *c, MPI_Win w, int t, MPI_Aint disp, int count)
{
    MPI_Request req;
    return finish_request(MPI_Rget(c->in, count, MPI_INT64_T, t, disp, count, MPI_INT64_T, w, &req), &req);
}
static int do_racc(ctx *c, MPI_Win w, int t, MPI_Aint disp, int count)
{
    MPI_Request req;
    return finish_request(
        MPI_Raccumulate(c->out, count, MPI_INT64_T, t, disp, count, MPI_INT64_T, MPI_SUM, w, &req), &req);
}
static int do_rgacc(ctx *c, MPI_Win w, int t, MPI_Aint disp, int count)
{
    MPI_Request req;
    return finish_request(MPI_Rget_accumulate(c->out, count, MPI_INT64_T, c->res, count, MPI_INT64_T, t, disp,
                                              count, MPI_INT64_T, MPI_SUM, w, &req),
                          &req);
}

/* Each op to our own slot at the right neighbour (epoch errors). */
static int m_put(ctx *c, const row *r)
{
    (void)r;
    return do_put(c, c->win, c->right, my_slot(c), 1);
}
static int m_get(ctx *c, const row *r)
{
    (void)r;
    return do_get(c, c->win, c->right, my_slot(c), 1);
}
static int m_acc(ctx *c, const row *r)
{
    (void)r;
    return do_acc(c, c->win, c->right, my_slot(c), 1);
}
static int m_gacc(ctx *c, const row *r)
{
    (void)r;
    return do_gacc(c, c->win, c->right, my_slot(c), 1);
}
static int m_fop(ctx *c, const row *r)
{
    (void)r;
    return do_fop(c, c->win, c->right, my_slot(c), 1);
}
static int m_cas(ctx *c, const row *r)
{
    (void)r;
    return do_cas(c, c->win, c->right, my_slot(c), 1);
}
static int m_rput(ctx *c, const row *r)
{
    (void)r;
    return do_rput(c, c->win, c->right, my_slot(c), 1);
}
static int m_rget(ctx *c, const row *r)
{
    (void)r;
    return do_rget(c, c->win, c->right, my_slot(c), 1);
}
static int m_racc(ctx *c, const row *r)
{
    (void)r;
    return do_racc(c, c->win, c->right, my_slot(c), 1);
}
static int m_rgacc(ctx *c, const row *r)
{
    (void)r;
    return do_rgacc(c, c->win, c->right, my_slot(c), 1);
}
/* The same to ourselves (a target outside the epoch when only the right
 * neighbour is in it). */
static int m_put_self(ctx *c, const row *r)
{
    (void)r;
    return do_put(c, c->win, c->rank, my_slot(c), 1);
}
static int m_acc_self(ctx *c, const row *r)
{
    (void)r;
    return do_acc(c, c->win, c->rank, my_slot(c), 1);
}
static int m_get_self(ctx *c, const row *r)
{
    (void)r;
    return do_get(c, c->win, c->rank, my_slot(c), 1);
}
static int m_rput_self(ctx *c, const row *r)
{
    (void)r;
    return do_rput(c, c->win, c->rank, my_slot(c), 1);
}

/* Synchronization calls. */
static int m_flush(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_flush(c->right, c->win);
}
static int m_flush_self(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_flush(c->rank, c->win);
}
static int m_flush_all(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_flush_all(c->win);
}
static int m_flush_local(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_flush_local(c->right, c->win);
}
static int m_flush_local_all(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_flush_local_all(c->win);
}
static int m_unlock(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_unlock(c->right, c->win);
}
static int m_unlock_self(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_unlock(c->rank, c->win);
}
static int m_unlock_all(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_unlock_all(c->win);
}
static int m_complete(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_complete(c->win);
}
static int m_wait(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_wait(c->win);
}
static int m_test(ctx *c, const row *r)
{
    (void)r;
    int flag = 0;
    return MPI_Win_test(c->win, &flag);
}
/* Calls that open an epoch undo it when wrongly granted. */
static int m_start_self(ctx *c, const row *r)
{
    (void)r;
    int rc = MPI_Win_start(c->self_group, 0, c->win);
    if (rc == MPI_SUCCESS) MPI_Win_complete(c->win);
    return rc;
}
static int m_start_empty(ctx *c, const row *r)
{
    (void)r;
    int rc = MPI_Win_start(MPI_GROUP_EMPTY, 0, c->win);
    if (rc == MPI_SUCCESS) MPI_Win_complete(c->win);
    return rc;
}
static int m_post_self(ctx *c, const row *r)
{
    /* A second exposure epoch cannot be taken back: an implementation that
     * grants it leaves the cleanup's wait to time out. */
    (void)r;
    return MPI_Win_post(c->self_group, 0, c->win);
}
static int m_fence(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_fence(0, c->win);
}
static int lock_undo(ctx *c, int rc, int t)
{
    if (rc == MPI_SUCCESS) MPI_Win_unlock(t, c->win);
    return rc;
}
static int m_lock_shared(ctx *c, const row *r)
{
    (void)r;
    int rc = MPI_Win_lock(MPI_LOCK_SHARED, c->right, 0, c->win);
    c->shared_double_lock_granted = rc == MPI_SUCCESS;
    return lock_undo(c, rc, c->right);
}
static int m_lock_exclusive(ctx *c, const row *r)
{
    (void)r;
    /* Granting the shared double lock means this one would deadlock. */
    if (!CHECK(!c->shared_double_lock_granted, "exclusive double lock not tried: the shared one was granted"))
        return MPI_SUCCESS;
    return lock_undo(c, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->right, 0, c->win), c->right);
}
static int m_lock_all(ctx *c, const row *r)
{
    (void)r;
    int rc = MPI_Win_lock_all(0, c->win);
    if (rc == MPI_SUCCESS) MPI_Win_unlock_all(c->win);
    return rc;
}
static int m_lock_type(ctx *c, const row *r)
{
    (void)r;
    return lock_undo(c, MPI_Win_lock(MPI_LOCK_SHARED + MPI_LOCK_EXCLUSIVE + 12345, c->right, 0, c->win),
                     c->right);
}
static int m_free_extra(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_free(&c->extra);
}

/* Ranges on the allocated window (inside lock_all). */
static int m_put_past_end(ctx *c, const row *r)
{
    (void)r;
    return do_put(c, c->win, c->right, c->words, 1);
}
static int m_put_straddle(ctx *c, const row *r)
{
    (void)r;
    return do_put(c, c->win, c->right, c->words - 1, 2);
}
static int m_get_too_long(ctx *c, const row *r)
{
    (void)r;
    /* Count runs past the end from displacement 0. */
    int64_t *big = calloc((size_t)c->words + 1, sizeof *big);
    int rc =
        MPI_Get(big, (int)c->words + 1, MPI_INT64_T, c->right, 0, (int)c->words + 1, MPI_INT64_T, c->win);
    if (rc == MPI_SUCCESS) MPI_Win_flush(c->right, c->win);
    free(big);
    return rc;
}
static int m_put_negative(ctx *c, const row *r)
{
    (void)r;
    return do_put(c, c->win, c->right, -1, 1);
}
static int m_put_overflow(ctx *c, const row *r)
{
    /* disp * disp_unit wraps around to a small offset in 64 bits. */
    (void)r;
    MPI_Aint disp = (MPI_Aint)(((uint64_t)1 << 61) + (uint64_t)my_slot(c));
    return do_put(c, c->win, c->right, disp, 1);
}
static int m_acc_past_end(ctx *c, const row *r)
{
    (void)r;
    return do_acc(c, c->win, c->right, c->words, 1);
}
static int m_gacc_straddle(ctx *c, const row *r)
{
    (void)r;
    return do_gacc(c, c->win, c->right, c->words - 1, 2);
}
static int m_fop_past_end(ctx *c, const row *r)
{
    (void)r;
    return do_fop(c, c->win, c->right, c->words, 1);
}
static int m_cas_past_end(ctx *c, const row *r)
{
    (void)r;
    return do_cas(c, c->win, c->right, c->words, 1);
}
static int m_rput_past_end(ctx *c, const row *r)
{
    (void)r;
    return do_rput(c, c->win, c->right, c->words, 1);
}
static int m_rgacc_straddle(ctx *c, const row *r)
{
    (void)r;
    return do_rgacc(c, c->win, c->right, c->words - 1, 2);
}

/* Dynamic window. */
static int m_dyn_put_past_region(ctx *c, const row *r)
{
    (void)r;
    return do_put(c, c->dyn, c->right, c->region_addr[c->right] + c->region_bytes, 1);
}
static int m_dyn_get_straddle(ctx *c, const row *r)
{
    (void)r;
    return do_get(c, c->dyn, c->right, c->region_addr[c->right] + c->region_bytes - 8, 2);
}
static int m_dyn_acc_low(ctx *c, const row *r)
{
    (void)r;
    return do_acc(c, c->dyn, c->right, 64, 1); /* no region starts near address 0 */
}
static int m_attach_overlap(ctx *c, const row *r)
{
    (void)r;
    int rc = MPI_Win_attach(c->dyn, c->region + 8, 16);
    if (rc == MPI_SUCCESS) MPI_Win_detach(c->dyn, c->region + 8);
    return rc;
}
static int m_attach_again(ctx *c, const row *r)
{
    (void)r;
    int rc = MPI_Win_attach(c->dyn, c->region, c->region_bytes);
    if (rc == MPI_SUCCESS) MPI_Win_detach(c->dyn, c->region);
    return rc;
}
static int m_detach_unknown(ctx *c, const row *r)
{
    static int64_t never_attached[4];
    (void)r;
    return MPI_Win_detach(c->dyn, never_attached);
}
static int m_detach_interior(ctx *c, const row *r)
{
    (void)r;
    int rc = MPI_Win_detach(c->dyn, c->region + 8);
    if (rc == MPI_SUCCESS) /* it let go of our region: put it back */
        MPI_Win_attach(c->dyn, c->region, c->region_bytes);
    return rc;
}
static int m_attach_static(ctx *c, const row *r)
{
    static int64_t mem[4];
    (void)r;
    int rc = MPI_Win_attach(c->win, mem, sizeof mem);
    if (rc == MPI_SUCCESS) MPI_Win_detach(c->win, mem);
    return rc;
}
static int m_detach_static(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_detach(c->win, c->base);
}

/* Shared queries. */
static int shared_query(MPI_Win w, int rank)
{
    MPI_Aint size;
    int unit;
    void *base;
    return MPI_Win_shared_query(w, rank, &size, &unit, &base);
}
static int m_query_bad_rank(ctx *c, const row *r)
{
    (void)r;
    return shared_query(c->extra, c->n);
}

/* Ops and datatypes (inside lock_all, to our own slot at the right). */
static int m_acc_user_op(ctx *c, const row *r)
{
    (void)r;
    return MPI_Accumulate(c->out, 1, MPI_INT64_T, c->right, my_slot(c), 1, MPI_INT64_T, c->user_op, c->win);
}
static int m_gacc_user_op(ctx *c, const row *r)
{
    (void)r;
    return MPI_Get_accumulate(c->out, 1, MPI_INT64_T, c->res, 1, MPI_INT64_T, c->right, my_slot(c), 1,
                              MPI_INT64_T, c->user_op, c->win);
}
static int m_fop_user_op(ctx *c, const row *r)
{
    (void)r;
    return MPI_Fetch_and_op(c->out, c->res, MPI_INT64_T, c->right, my_slot(c), c->user_op, c->win);
}
static int m_racc_user_op(ctx *c, const row *r)
{
    (void)r;
    MPI_Request req;
    return finish_request(MPI_Raccumulate(c->out, 1, MPI_INT64_T, c->right, my_slot(c), 1, MPI_INT64_T,
                                          c->user_op, c->win, &req),
                          &req);
}
/* row->op on one row->dt element (every pair type fits in a slot). */
static int m_acc_pair(ctx *c, const row *r)
{
    memset(c->out, 0, sizeof c->out);
    return MPI_Accumulate(c->out, 1, r->dt, c->right, my_slot(c), 1, r->dt, r->op, c->win);
}
static int m_gacc_pair(ctx *c, const row *r)
{
    memset(c->out, 0, sizeof c->out);
    return MPI_Get_accumulate(c->out, 1, r->dt, c->res, 1, r->dt, c->right, my_slot(c), 1, r->dt, r->op,
                              c->win);
}
static int m_fop_pair(ctx *c, const row *r)
{
    memset(c->out, 0, sizeof c->out);
    return MPI_Fetch_and_op(c->out, c->res, r->dt, c->right, my_slot(c), r->op, c->win);
}
static int m_cas_type(ctx *c, const row *r)
{
    memset(c->out, 0, sizeof c->out);
    memset(c->in, 0, sizeof c->in);
    return MPI_Compare_and_swap(c->out, c->in, c->res, r->dt, c->right, my_slot(c), c->win);
}
static int m_fop_derived(ctx *c, const row *r)
{
    (void)r;
    return MPI_Fetch_and_op(c->out, c->res, c->pair_type, c->right, my_slot(c), MPI_SUM, c->win);
}
static int m_acc_mixed(ctx *c, const row *r)
{
    (void)r;
    return MPI_Accumulate(c->out, 1, c->mixed_type, c->right, my_slot(c), 1, c->mixed_type, MPI_REPLACE,
                          c->win);
}
static int m_acc_two_types(ctx *c, const row *r)
{
    /* Same number of bytes, different basic types. */
    (void)r;
    return MPI_Accumulate(c->out, 2, MPI_INT32_T, c->right, my_slot(c), 1, MPI_INT64_T, MPI_SUM, c->win);
}

/* Origin and target describing different amounts of data. */
static int m_put_sig(ctx *c, const row *r)
{
    (void)r;
    return MPI_Put(c->out, 2, MPI_INT64_T, c->right, my_slot(c), 1, MPI_INT64_T, c->win);
}
static int m_get_sig(ctx *c, const row *r)
{
    (void)r;
    return MPI_Get(c->in, 1, MPI_INT64_T, c->right, my_slot(c), 2, MPI_INT64_T, c->win);
}
static int m_acc_sig(ctx *c, const row *r)
{
    (void)r;
    return MPI_Accumulate(c->out, 2, MPI_INT64_T, c->right, my_slot(c), 1, MPI_INT64_T, MPI_SUM, c->win);
}
static int m_gacc_sig(ctx *c, const row *r)
{
    (void)r;
    return MPI_Get_accumulate(c->out, 2, MPI_INT64_T, c->res, 1, MPI_INT64_T, c->right, my_slot(c), 2,
                              MPI_INT64_T, MPI_SUM, c->win);
}
static int m_rput_sig(ctx *c, const row *r)
{
    (void)r;
    MPI_Request req;
    return finish_request(
        MPI_Rput(c->out, 1, MPI_INT64_T, c->right, my_slot(c), 3, MPI_INT64_T, c->win, &req), &req);
}

/* Ranks outside the window's group. */
static int m_put_rank_n(ctx *c, const row *r)
{
    (void)r;
    return do_put(c, c->win, c->n, 0, 1);
}
static int m_get_rank_neg(ctx *c, const row *r)
{
    (void)r;
    return do_get(c, c->win, -7, 0, 1);
}
static int m_acc_rank_n(ctx *c, const row *r)
{
    (void)r;
    return do_acc(c, c->win, c->n, 0, 1);
}
static int m_fop_rank_n(ctx *c, const row *r)
{
    (void)r;
    return do_fop(c, c->win, c->n, 0, 1);
}
static int m_flush_rank_n(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_flush(c->n, c->win);
}
static int m_flush_local_rank_n(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_flush_local(c->n, c->win);
}
static int m_unlock_rank_n(ctx *c, const row *r)
{
    (void)r;
    return MPI_Win_unlock(c->n, c->win);
}
static int m_lock_rank_n(ctx *c, const row *r)
{
    (void)r;
    return lock_undo(c, MPI_Win_lock(MPI_LOCK_SHARED, c->n, 0, c->win), c->n);
}

/* Info values at window creation. */
enum { CREATE_ALLOCATE, CREATE_CREATE, CREATE_DYNAMIC, CREATE_SHARED };

static int create_with(int flavor, MPI_Info info, MPI_Win *w)
{
    static int64_t mem[8];
    void *base;
    switch (flavor) {
    case CREATE_CREATE: return MPI_Win_create(mem, sizeof mem, 8, info, MPI_COMM_WORLD, w);
    case CREATE_DYNAMIC: return MPI_Win_create_dynamic(info, MPI_COMM_WORLD, w);
    case CREATE_SHARED: return MPI_Win_allocate_shared(64, 8, info, MPI_COMM_WORLD, &base, w);
    default: return MPI_Win_allocate(64, 8, info, MPI_COMM_WORLD, &base, w);
    }
}

/* The value in force, as MPI_Win_get_info reports it: osc/fabric's canonical
 * spelling (osc_fabric_info.c) or the caller's own valid spelling of the same
 * thing; anything else (a default, a truncation) is a value not in force. */
static void check_reported(MPI_Win w, const row *r)
{
    MPI_Info got;
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    if (!CHECK_MPI(MPI_Win_get_info(w, &got))) return;
    CHECK_MPI(MPI_Info_get(got, r->key, MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag && (strcmp(value, r->canon) == 0 || strcmp(value, r->value) == 0),
          "%s=\"%.40s\": MPI_Win_get_info reports \"%.40s\", expected \"%s\" or the value "
          "given",
          r->key, r->value, flag ? value : "(not set)", r->canon);
    MPI_Info_free(&got);
}

static int m_info(ctx *c, const row *r)
{
    (void)c;
    MPI_Info info;
    MPI_Win w = MPI_WIN_NULL;
    if (!CHECK_MPI(MPI_Info_create(&info))) return MPI_ERR_OTHER;
    int rc = MPI_Info_set(info, r->key, r->value);
    if (rc == MPI_SUCCESS) rc = create_with(r->flavor, info, &w);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) {
        MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
        if (r->canon) check_reported(w, r);
        CHECK_MPI(MPI_Win_free(&w));
    }
    return rc;
}

/* Filled in main(). */
static char long_malformed[MPI_MAX_INFO_VAL - 5]; /* "rar,rar,...,rar,X" */
static char long_valid[MPI_MAX_INFO_VAL - 5];     /* "rar,raw,war,waw,...,waw" */
static char too_long[MPI_MAX_INFO_VAL + 40];      /* over MPI_MAX_INFO_VAL */

/* ---- the table ---------------------------------------------------------- */

#define ORD "accumulate_ordering"
#define OPS "accumulate_ops"

/* Rows by kind; designated initializers leave the other fields zero. */
#define ROW(nm, cls, np, su, mu, cu)                                                       \
    {                                                                                      \
        .name = nm, .want = cls, .min_ranks = np, .setup = su, .misuse = mu, .cleanup = cu \
    }
/* An accumulate-family call on a datatype and op, inside lock_all. */
#define TYPED(nm, cls, mu, type, o)                                                                          \
    {                                                                                                        \
        .name = nm, .want = cls, .min_ranks = 1, .setup = s_lock_all, .misuse = mu, .cleanup = c_unlock_all, \
        .dt = type, .op = o                                                                                  \
    }
/* Window creation with one info value. */
#define INFO(nm, cls, k, v, canonical, fl)                                                             \
    {                                                                                                  \
        .name = nm, .want = cls, .min_ranks = 1, .setup = s_none, .misuse = m_info, .cleanup = c_none, \
        .key = k, .value = v, .canon = canonical, .flavor = fl                                         \
    }

static const row table[] = {
    /* RMA calls outside any epoch (MPI-3.1 11.5) */
    ROW("MPI_Put outside any epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_put, c_none),
    ROW("MPI_Get outside any epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_get, c_none),
    ROW("MPI_Accumulate outside any epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_acc, c_none),
    ROW("MPI_Get_accumulate outside any epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_gacc, c_none),
    ROW("MPI_Fetch_and_op outside any epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_fop, c_none),
    ROW("MPI_Compare_and_swap outside any epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_cas, c_none),
    ROW("MPI_Rput outside any epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_rput, c_none),
    ROW("MPI_Rget outside any epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_rget, c_none),
    ROW("MPI_Raccumulate outside any epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_racc, c_none),
    ROW("MPI_Rget_accumulate outside any epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_rgacc, c_none),
    /* completion and closing calls without their epoch */
    ROW("MPI_Win_flush outside a passive epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_flush, c_none),
    ROW("MPI_Win_flush_all outside a passive epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_flush_all, c_none),
    ROW("MPI_Win_flush_local outside a passive epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_flush_local, c_none),
    ROW("MPI_Win_flush_local_all outside a passive epoch", MPI_ERR_RMA_SYNC, 1, s_none, m_flush_local_all,
        c_none),
    ROW("MPI_Win_unlock without MPI_Win_lock", MPI_ERR_RMA_SYNC, 1, s_none, m_unlock, c_none),
    ROW("MPI_Win_unlock_all without MPI_Win_lock_all", MPI_ERR_RMA_SYNC, 1, s_none, m_unlock_all, c_none),
    ROW("MPI_Win_complete without MPI_Win_start", MPI_ERR_RMA_SYNC, 1, s_none, m_complete, c_none),
    ROW("MPI_Win_wait without MPI_Win_post", MPI_ERR_RMA_SYNC, 1, s_none, m_wait, c_none),
    ROW("MPI_Win_test without MPI_Win_post", MPI_ERR_RMA_SYNC, 1, s_none, m_test, c_none),
    /* fence epoch: request-based RMA is for passive epochs only (11.3.5) */
    ROW("MPI_Rput in a fence epoch", MPI_ERR_RMA_SYNC, 1, s_fence, m_rput, c_fence),
    ROW("MPI_Rget in a fence epoch", MPI_ERR_RMA_SYNC, 1, s_fence, m_rget, c_fence),
    ROW("MPI_Raccumulate in a fence epoch", MPI_ERR_RMA_SYNC, 1, s_fence, m_racc, c_fence),
    ROW("MPI_Rget_accumulate in a fence epoch", MPI_ERR_RMA_SYNC, 1, s_fence, m_rgacc, c_fence),
    ROW("MPI_Win_flush in a fence epoch", MPI_ERR_RMA_SYNC, 1, s_fence, m_flush, c_fence),
    ROW("MPI_Win_flush_all in a fence epoch", MPI_ERR_RMA_SYNC, 1, s_fence, m_flush_all, c_fence),
    ROW("MPI_Win_unlock in a fence epoch", MPI_ERR_RMA_SYNC, 1, s_fence, m_unlock, c_fence),
    /* post/start/complete/wait */
    ROW("MPI_Win_start twice", MPI_ERR_RMA_SYNC, 1, s_pscw_self, m_start_self, c_pscw_self),
    ROW("MPI_Win_post twice", MPI_ERR_RMA_SYNC, 1, s_post_self, m_post_self, c_start_complete_wait),
    ROW("MPI_Put to a rank outside the (empty) start group", MPI_ERR_RMA_SYNC, 1, s_start_empty, m_put_self,
        c_complete),
    ROW("MPI_Put to a rank outside the start group", MPI_ERR_RMA_SYNC, 2, s_pscw_self, m_put, c_pscw_self),
    ROW("MPI_Get from a rank outside the start group", MPI_ERR_RMA_SYNC, 2, s_pscw_self, m_get, c_pscw_self),
    ROW("MPI_Accumulate to a rank outside the start group", MPI_ERR_RMA_SYNC, 2, s_pscw_self, m_acc,
        c_pscw_self),
    ROW("MPI_Rput in a start epoch", MPI_ERR_RMA_SYNC, 1, s_pscw_self, m_rput_self, c_pscw_self),
    ROW("MPI_Win_flush in a start epoch", MPI_ERR_RMA_SYNC, 1, s_pscw_self, m_flush_self, c_pscw_self),
    ROW("MPI_Win_fence in a start epoch", MPI_ERR_RMA_SYNC, 1, s_start_empty, m_fence, c_complete),
    ROW("MPI_Win_lock in a start epoch", MPI_ERR_RMA_SYNC, 1, s_start_empty, m_lock_shared, c_complete),
    ROW("MPI_Win_lock_all in a start epoch", MPI_ERR_RMA_SYNC, 1, s_start_empty, m_lock_all, c_complete),
    ROW("MPI_Win_start in a lock epoch", MPI_ERR_RMA_SYNC, 1, s_lock_right, m_start_empty, c_unlock_right),
    ROW("MPI_Win_start in a lock_all epoch", MPI_ERR_RMA_SYNC, 1, s_lock_all, m_start_empty, c_unlock_all),
    /* passive target */
    ROW("MPI_Win_lock (shared) of a target this process has locked", MPI_ERR_RMA_CONFLICT, 1, s_lock_right,
        m_lock_shared, c_unlock_right),
    ROW("MPI_Win_lock (exclusive) of a target this process has locked", MPI_ERR_RMA_CONFLICT, 1, s_lock_right,
        m_lock_exclusive, c_unlock_right),
    ROW("MPI_Win_lock in a lock_all epoch", MPI_ERR_RMA_SYNC, 1, s_lock_all, m_lock_shared, c_unlock_all),
    ROW("MPI_Win_lock_all in a lock epoch", MPI_ERR_RMA_SYNC, 1, s_lock_right, m_lock_all, c_unlock_right),
    ROW("MPI_Win_lock_all twice", MPI_ERR_RMA_SYNC, 1, s_lock_all, m_lock_all, c_unlock_all),
    ROW("MPI_Win_fence in a lock epoch", MPI_ERR_RMA_SYNC, 1, s_lock_right, m_fence, c_unlock_right),
    ROW("MPI_Win_fence in a lock_all epoch", MPI_ERR_RMA_SYNC, 1, s_lock_all, m_fence, c_unlock_all),
    ROW("MPI_Win_unlock in a lock_all epoch", MPI_ERR_RMA_SYNC, 1, s_lock_all, m_unlock, c_unlock_all),
    ROW("MPI_Win_unlock_all in a lock epoch", MPI_ERR_RMA_SYNC, 1, s_lock_right, m_unlock_all,
        c_unlock_right),
    ROW("MPI_Win_unlock of a target not locked (another is)", MPI_ERR_RMA_SYNC, 2, s_lock_right,
        m_unlock_self, c_unlock_right),
    ROW("MPI_Win_flush of a target not locked (another is)", MPI_ERR_RMA_SYNC, 2, s_lock_right, m_flush_self,
        c_unlock_right),
    ROW("MPI_Put to a target not locked (another is)", MPI_ERR_RMA_SYNC, 2, s_lock_right, m_put_self,
        c_unlock_right),
    ROW("MPI_Get from a target not locked (another is)", MPI_ERR_RMA_SYNC, 2, s_lock_right, m_get_self,
        c_unlock_right),
    ROW("MPI_Accumulate to a target not locked (another is)", MPI_ERR_RMA_SYNC, 2, s_lock_right, m_acc_self,
        c_unlock_right),
    /* Open MPI's argument check */
    ROW("MPI_Win_lock with an invalid lock type", MPI_ERR_LOCKTYPE, 1, s_none, m_lock_type, c_none),
    /* MPI_Win_free inside an epoch (11.2.5) */
    ROW("MPI_Win_free in a lock epoch", MPI_ERR_RMA_SYNC, 1, s_extra_locked, m_free_extra, c_extra_unlock),
    ROW("MPI_Win_free in a lock_all epoch", MPI_ERR_RMA_SYNC, 1, s_extra_lock_all, m_free_extra,
        c_extra_unlock_all),
    ROW("MPI_Win_free in a start epoch", MPI_ERR_RMA_SYNC, 1, s_extra_start, m_free_extra, c_extra_complete),
    ROW("MPI_Win_free in a post epoch", MPI_ERR_RMA_SYNC, 1, s_extra_post, m_free_extra,
        c_extra_start_complete_wait),
    /* outside the target's window (inside lock_all) */
    ROW("MPI_Put just past the end of the window", MPI_ERR_RMA_RANGE, 1, s_lock_all, m_put_past_end,
        c_unlock_all),
    ROW("MPI_Put straddling the end of the window", MPI_ERR_RMA_RANGE, 1, s_lock_all, m_put_straddle,
        c_unlock_all),
    ROW("MPI_Get whose count runs past the end", MPI_ERR_RMA_RANGE, 1, s_lock_all, m_get_too_long,
        c_unlock_all),
    /* Open MPI's argument check (negative displacement of a non-dynamic window) */
    ROW("MPI_Put at a negative displacement", MPI_ERR_DISP, 1, s_lock_all, m_put_negative, c_unlock_all),
    ROW("MPI_Put at a displacement whose byte offset overflows", MPI_ERR_RMA_RANGE, 1, s_lock_all,
        m_put_overflow, c_unlock_all),
    ROW("MPI_Accumulate just past the end", MPI_ERR_RMA_RANGE, 1, s_lock_all, m_acc_past_end, c_unlock_all),
    ROW("MPI_Get_accumulate straddling the end", MPI_ERR_RMA_RANGE, 1, s_lock_all, m_gacc_straddle,
        c_unlock_all),
    ROW("MPI_Fetch_and_op just past the end", MPI_ERR_RMA_RANGE, 1, s_lock_all, m_fop_past_end, c_unlock_all),
    ROW("MPI_Compare_and_swap just past the end", MPI_ERR_RMA_RANGE, 1, s_lock_all, m_cas_past_end,
        c_unlock_all),
    ROW("MPI_Rput just past the end", MPI_ERR_RMA_RANGE, 1, s_lock_all, m_rput_past_end, c_unlock_all),
    ROW("MPI_Rget_accumulate straddling the end", MPI_ERR_RMA_RANGE, 1, s_lock_all, m_rgacc_straddle,
        c_unlock_all),
    /* dynamic windows */
    ROW("MPI_Put just past an attached region", MPI_ERR_RMA_RANGE, 1, s_dyn_lock_all, m_dyn_put_past_region,
        c_dyn_unlock_all),
    ROW("MPI_Get straddling the end of an attached region", MPI_ERR_RMA_RANGE, 1, s_dyn_lock_all,
        m_dyn_get_straddle, c_dyn_unlock_all),
    ROW("MPI_Accumulate to an address never attached", MPI_ERR_RMA_RANGE, 1, s_dyn_lock_all, m_dyn_acc_low,
        c_dyn_unlock_all),
    ROW("MPI_Win_attach overlapping an attached region", MPI_ERR_RMA_ATTACH, 1, s_none, m_attach_overlap,
        c_none),
    ROW("MPI_Win_attach of an attached region again", MPI_ERR_RMA_ATTACH, 1, s_none, m_attach_again, c_none),
    ROW("MPI_Win_detach of an address never attached", MPI_ERR_RMA_ATTACH, 1, s_none, m_detach_unknown,
        c_none),
    ROW("MPI_Win_detach of an address inside a region", MPI_ERR_RMA_ATTACH, 1, s_none, m_detach_interior,
        c_none),
    ROW("MPI_Win_attach on an allocated window", MPI_ERR_RMA_FLAVOR, 1, s_none, m_attach_static, c_none),
    ROW("MPI_Win_detach on an allocated window", MPI_ERR_RMA_FLAVOR, 1, s_none, m_detach_static, c_none),
    /* shared memory */
    /* MPI_Win_shared_query on other flavors is no error since MPI-4.0: win_shared.c. */
    ROW("MPI_Win_shared_query of a rank outside the group", MPI_ERR_RANK, 1, s_extra_shared, m_query_bad_rank,
        c_extra_free),
    /* reductions (inside lock_all) */
    ROW("MPI_Accumulate with a user-defined op", MPI_ERR_OP, 1, s_lock_all, m_acc_user_op, c_unlock_all),
    ROW("MPI_Get_accumulate with a user-defined op", MPI_ERR_OP, 1, s_lock_all, m_gacc_user_op, c_unlock_all),
    ROW("MPI_Fetch_and_op with a user-defined op", MPI_ERR_OP, 1, s_lock_all, m_fop_user_op, c_unlock_all),
    ROW("MPI_Raccumulate with a user-defined op", MPI_ERR_OP, 1, s_lock_all, m_racc_user_op, c_unlock_all),
    TYPED("MPI_Accumulate with MPI_OP_NULL", MPI_ERR_OP, m_acc_pair, MPI_INT64_T, MPI_OP_NULL),
    /* op not defined for the type (MPI-3.1 5.9.2) */
    TYPED("MPI_BAND on MPI_DOUBLE", MPI_ERR_OP, m_acc_pair, MPI_DOUBLE, MPI_BAND),
    TYPED("MPI_BOR on MPI_FLOAT", MPI_ERR_OP, m_acc_pair, MPI_FLOAT, MPI_BOR),
    TYPED("MPI_BXOR on MPI_C_BOOL", MPI_ERR_OP, m_acc_pair, MPI_C_BOOL, MPI_BXOR),
    TYPED("MPI_MAX on MPI_C_DOUBLE_COMPLEX", MPI_ERR_OP, m_acc_pair, MPI_C_DOUBLE_COMPLEX, MPI_MAX),
    TYPED("MPI_MIN on MPI_C_FLOAT_COMPLEX", MPI_ERR_OP, m_acc_pair, MPI_C_FLOAT_COMPLEX, MPI_MIN),
    TYPED("MPI_SUM on MPI_2INT", MPI_ERR_OP, m_acc_pair, MPI_2INT, MPI_SUM),
    TYPED("MPI_PROD on MPI_DOUBLE_INT", MPI_ERR_OP, m_acc_pair, MPI_DOUBLE_INT, MPI_PROD),
    TYPED("MPI_LAND on MPI_DOUBLE", MPI_ERR_OP, m_acc_pair, MPI_DOUBLE, MPI_LAND),
    TYPED("MPI_LXOR on MPI_C_FLOAT_COMPLEX", MPI_ERR_OP, m_acc_pair, MPI_C_FLOAT_COMPLEX, MPI_LXOR),
    TYPED("MPI_SUM on MPI_C_BOOL", MPI_ERR_OP, m_acc_pair, MPI_C_BOOL, MPI_SUM),
    TYPED("MPI_MAX on MPI_C_BOOL", MPI_ERR_OP, m_acc_pair, MPI_C_BOOL, MPI_MAX),
    TYPED("MPI_MINLOC on MPI_INT", MPI_ERR_OP, m_acc_pair, MPI_INT, MPI_MINLOC),
    /* osc/fabric bug: arithmetic and logical ops on MPI_BYTE are accepted (only
     * MPI_BAND/BOR/BXOR are defined for it); the type is reduced as an 8-bit
     * integer. */
    TYPED("MPI_SUM on MPI_BYTE", MPI_ERR_OP, m_acc_pair, MPI_BYTE, MPI_SUM),
    TYPED("MPI_LOR on MPI_BYTE", MPI_ERR_OP, m_acc_pair, MPI_BYTE, MPI_LOR),
    TYPED("MPI_Get_accumulate MPI_MAXLOC on MPI_DOUBLE", MPI_ERR_OP, m_gacc_pair, MPI_DOUBLE, MPI_MAXLOC),
    TYPED("MPI_Fetch_and_op MPI_BAND on MPI_DOUBLE", MPI_ERR_OP, m_fop_pair, MPI_DOUBLE, MPI_BAND),
    TYPED("MPI_Fetch_and_op MPI_MAX on MPI_C_DOUBLE_COMPLEX", MPI_ERR_OP, m_fop_pair, MPI_C_DOUBLE_COMPLEX,
          MPI_MAX),
    /* pairs the standard allows: the checks must not refuse them */
    TYPED("allowed: MPI_BAND on MPI_BYTE", MPI_SUCCESS, m_acc_pair, MPI_BYTE, MPI_BAND),
    TYPED("allowed: MPI_LXOR on MPI_C_BOOL", MPI_SUCCESS, m_acc_pair, MPI_C_BOOL, MPI_LXOR),
    TYPED("allowed: MPI_MINLOC on MPI_2INT", MPI_SUCCESS, m_acc_pair, MPI_2INT, MPI_MINLOC),
    TYPED("allowed: MPI_REPLACE on MPI_DOUBLE_INT", MPI_SUCCESS, m_acc_pair, MPI_DOUBLE_INT, MPI_REPLACE),
    TYPED("allowed: MPI_Get_accumulate MPI_NO_OP on MPI_C_DOUBLE_COMPLEX", MPI_SUCCESS, m_gacc_pair,
          MPI_C_DOUBLE_COMPLEX, MPI_NO_OP),
    /* datatypes the accumulate family does not take (11.3.4) */
    /* osc/fabric bug: detected, but as MPI_ERR_OP; the datatype argument is
     * what is invalid (MPI_Compare_and_swap takes no op). */
    TYPED("MPI_Compare_and_swap on MPI_DOUBLE", MPI_ERR_TYPE, m_cas_type, MPI_DOUBLE, MPI_OP_NULL),
    TYPED("MPI_Compare_and_swap on MPI_C_DOUBLE_COMPLEX", MPI_ERR_TYPE, m_cas_type, MPI_C_DOUBLE_COMPLEX,
          MPI_OP_NULL),
    /* osc/fabric bug: accepted; the standard wants a predefined datatype. */
    ROW("MPI_Fetch_and_op on a derived datatype", MPI_ERR_TYPE, 1, s_lock_all, m_fop_derived, c_unlock_all),
    ROW("MPI_Accumulate of a struct of two basic types", MPI_ERR_TYPE, 1, s_lock_all, m_acc_mixed,
        c_unlock_all),
    /* origin and target describe different data (README: MPI_ERR_ARG) */
    ROW("MPI_Accumulate of MPI_INT32_T into MPI_INT64_T", MPI_ERR_ARG, 1, s_lock_all, m_acc_two_types,
        c_unlock_all),
    ROW("MPI_Put of 2 elements into 1", MPI_ERR_ARG, 1, s_lock_all, m_put_sig, c_unlock_all),
    ROW("MPI_Get of 2 elements into 1", MPI_ERR_ARG, 1, s_lock_all, m_get_sig, c_unlock_all),
    ROW("MPI_Accumulate of 2 elements into 1", MPI_ERR_ARG, 1, s_lock_all, m_acc_sig, c_unlock_all),
    ROW("MPI_Get_accumulate with a result buffer of 1 for 2", MPI_ERR_ARG, 1, s_lock_all, m_gacc_sig,
        c_unlock_all),
    ROW("MPI_Rput of 1 element into 3", MPI_ERR_ARG, 1, s_lock_all, m_rput_sig, c_unlock_all),
    /* ranks outside the window's group */
    ROW("MPI_Put to rank n", MPI_ERR_RANK, 1, s_lock_all, m_put_rank_n, c_unlock_all),
    ROW("MPI_Get from rank -7", MPI_ERR_RANK, 1, s_lock_all, m_get_rank_neg, c_unlock_all),
    ROW("MPI_Accumulate to rank n", MPI_ERR_RANK, 1, s_lock_all, m_acc_rank_n, c_unlock_all),
    ROW("MPI_Fetch_and_op to rank n", MPI_ERR_RANK, 1, s_lock_all, m_fop_rank_n, c_unlock_all),
    /* osc/fabric bug: flush and flush_local of a rank outside the group return
     * MPI_ERR_ARG (engine check_target() answers OSCF_ERR_ARG; Open MPI's core
     * checks the rank of RMA calls, lock and unlock, not of flushes). */
    ROW("MPI_Win_flush of rank n", MPI_ERR_RANK, 1, s_lock_all, m_flush_rank_n, c_unlock_all),
    ROW("MPI_Win_flush_local of rank n", MPI_ERR_RANK, 1, s_lock_all, m_flush_local_rank_n, c_unlock_all),
    ROW("MPI_Win_unlock of rank n", MPI_ERR_RANK, 1, s_lock_all, m_unlock_rank_n, c_unlock_all),
    ROW("MPI_Win_lock of rank n", MPI_ERR_RANK, 1, s_none, m_lock_rank_n, c_none),
    /* Malformed info values at window creation.  osc/fabric refuses them with
     * MPI_ERR_INFO_VALUE (README), but Open MPI 4.1's MPI_Win_allocate/create/
     * create_dynamic report every failed creation as MPI_ERR_WIN
     * (ompi/mpi/c/win_allocate.c), so that is what users see there;
     * MPI_Win_allocate_shared passes the component's class through.  The
     * "allowed" rows below show the same creations succeed with valid values.
     * Empty and over-long values never reach the window: MPI_Info_set refuses
     * them with MPI_ERR_INFO_VALUE. */
    INFO("accumulate_ordering=\"\" (refused by MPI_Info_set)", MPI_ERR_INFO_VALUE, ORD, "", NULL,
         CREATE_ALLOCATE),
    INFO("accumulate_ordering=\",\"", MPI_ERR_WIN, ORD, ",", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"rar,\"", MPI_ERR_WIN, ORD, "rar,", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\",rar\"", MPI_ERR_WIN, ORD, ",rar", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"rar,,waw\"", MPI_ERR_WIN, ORD, "rar,,waw", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"RAR\"", MPI_ERR_WIN, ORD, "RAR", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"None\"", MPI_ERR_WIN, ORD, "None", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"none,rar\"", MPI_ERR_WIN, ORD, "none,rar", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"rar,none\"", MPI_ERR_WIN, ORD, "rar,none", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"rar;waw\"", MPI_ERR_WIN, ORD, "rar;waw", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"rar waw\"", MPI_ERR_WIN, ORD, "rar waw", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"rarw\"", MPI_ERR_WIN, ORD, "rarw", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"ra\"", MPI_ERR_WIN, ORD, "ra", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"   \"", MPI_ERR_WIN, ORD, "   ", NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=<250 characters ending in a bad item>", MPI_ERR_WIN, ORD, long_malformed, NULL,
         CREATE_ALLOCATE),
    INFO("accumulate_ordering=<over MPI_MAX_INFO_VAL> (refused by MPI_Info_set)", MPI_ERR_INFO_VALUE, ORD,
         too_long, NULL, CREATE_ALLOCATE),
    INFO("accumulate_ordering=\"rar,\" on MPI_Win_create", MPI_ERR_WIN, ORD, "rar,", NULL, CREATE_CREATE),
    INFO("accumulate_ordering=\"RAW\" on MPI_Win_create_dynamic", MPI_ERR_WIN, ORD, "RAW", NULL,
         CREATE_DYNAMIC),
    INFO("accumulate_ordering=\"waw,\" on MPI_Win_allocate_shared", MPI_ERR_INFO_VALUE, ORD, "waw,", NULL,
         CREATE_SHARED),
    /* valid values: accepted and reported in canonical form */
    /* Malformed accumulate_ops values are refused by Open MPI itself before any osc
     * component runs, and its failure path then reads freed or uninitialised memory
     * (MALLOC_PERTURB_ makes it crash; osc/pt2pt crashes the same way), so no rows for
     * them here: test/fuzz covers our parser of that key. */
    INFO("allowed: accumulate_ordering=\" waw , rar \"", MPI_SUCCESS, ORD, " waw , rar ", "rar,waw",
         CREATE_ALLOCATE),
    INFO("allowed: accumulate_ordering=\"none\"", MPI_SUCCESS, ORD, "none", "none", CREATE_ALLOCATE),
    INFO("allowed: accumulate_ordering=\"raw,raw\"", MPI_SUCCESS, ORD, "raw,raw", "raw", CREATE_ALLOCATE),
    INFO("allowed: accumulate_ordering=<250 characters>", MPI_SUCCESS, ORD, long_valid, "rar,raw,war,waw",
         CREATE_ALLOCATE),
    INFO("allowed: accumulate_ops=\"same_op\"", MPI_SUCCESS, OPS, "same_op", "same_op", CREATE_ALLOCATE),
    INFO("allowed: accumulate_ordering=\"rar\" on MPI_Win_create", MPI_SUCCESS, ORD, "rar", "rar",
         CREATE_CREATE),
    INFO("allowed: accumulate_ordering=\"raw\" on MPI_Win_create_dynamic", MPI_SUCCESS, ORD, "raw", "raw",
         CREATE_DYNAMIC),
    INFO("allowed: accumulate_ordering=\"waw\" on MPI_Win_allocate_shared", MPI_SUCCESS, ORD, "waw", "waw",
         CREATE_SHARED),
    INFO("allowed: accumulate_ops=\"same_op_no_op\" on MPI_Win_create_dynamic", MPI_SUCCESS, OPS,
         "same_op_no_op", "same_op_no_op", CREATE_DYNAMIC),
};

#define NROWS ((int)(sizeof table / sizeof table[0]))

/* ---- driver ------------------------------------------------------------- */

static void fill_long_values(void)
{
    static const char *const items[] = {"rar,", "raw,", "war,", "waw,"};
    size_t len = 0;
    /* Whole items up to the limit, the last one without its comma. */
    for (int i = 0; len + 4 < sizeof long_valid - 1; i++, len += 4) memcpy(long_valid + len, items[i % 4], 4);
    long_valid[len - 1] = '\0';
    memcpy(long_malformed, long_valid, len);
    long_malformed[len - 2] = 'X'; /* last item "raX" */
    memset(too_long, 'r', sizeof too_long - 1);
    too_long[sizeof too_long - 1] = '\0';
}

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((int64_t *)inout)[i] += ((int64_t *)in)[i];
}

static bool ctx_init(ctx *c)
{
    memset(c, 0, sizeof *c);
    c->extra = MPI_WIN_NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->n);
    c->right = (c->rank + 1) % c->n;
    c->words = (MPI_Aint)c->n * SLOT_WORDS + TAIL_WORDS;
    if (!CHECK_MPI(MPI_Win_allocate(c->words * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &c->base, &c->win)))
        return false;
    MPI_Win_set_errhandler(c->win, MPI_ERRORS_RETURN);

    c->region_bytes = (MPI_Aint)c->n * SLOT_WORDS * 8 + REGION_PAD;
    c->region = calloc(1, (size_t)c->region_bytes);
    c->region_addr = calloc((size_t)c->n, sizeof *c->region_addr);
    if (!CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &c->dyn))) return false;
    MPI_Win_set_errhandler(c->dyn, MPI_ERRORS_RETURN);
    CHECK_MPI(MPI_Win_attach(c->dyn, c->region, c->region_bytes));
    MPI_Aint mine;
    MPI_Get_address(c->region, &mine);
    CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, c->region_addr, 1, MPI_AINT, MPI_COMM_WORLD));

    MPI_Group world;
    MPI_Win_get_group(c->win, &world);
    MPI_Group_incl(world, 1, &c->rank, &c->self_group);
    MPI_Group_free(&world);
    MPI_Op_create(user_fn, 1, &c->user_op);
    MPI_Type_contiguous(2, MPI_INT, &c->pair_type);
    MPI_Type_commit(&c->pair_type);
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, lens, disps, types, &c->mixed_type);
    MPI_Type_commit(&c->mixed_type);
    MPI_Barrier(MPI_COMM_WORLD);
    return true;
}

static void ctx_fini(ctx *c)
{
    CHECK_MPI(MPI_Win_detach(c->dyn, c->region));
    CHECK_MPI(MPI_Win_free(&c->dyn));
    CHECK_MPI(MPI_Win_free(&c->win));
    MPI_Type_free(&c->pair_type);
    MPI_Type_free(&c->mixed_type);
    MPI_Op_free(&c->user_op);
    MPI_Group_free(&c->self_group);
    free(c->region);
    free(c->region_addr);
}

static void run_row(ctx *c, const row *r)
{
    fresh(c->out, SLOT_WORDS * 2, c->right);
    if (r->setup(c)) {
        int rc = r->misuse(c, r);
        int cls = check_error_class(rc);
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
        CHECK(cls == r->want, "%s: returned %s (%s), expected %s", r->name, class_name(cls),
              rc == MPI_SUCCESS ? "success" : msg, class_name(r->want));
        r->cleanup(c);
    } else {
        CHECK(false, "%s: setup failed, misuse not tried", r->name);
    }
    /* Everyone has left the row's state before anyone checks the windows. */
    MPI_Barrier(MPI_COMM_WORLD);
    can_continue(c, r->name);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    /* Window creation errors are returned on the communicator. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    fill_long_values();
    ctx c;
    if (!ctx_init(&c)) return check_finish();
    const char *only = getenv("MISUSE_ONLY"); /* debugging: run rows containing this */
    int ran = 0, not_applicable = 0;
    for (int i = 0; i < NROWS; i++) {
        if (only && !strstr(table[i].name, only)) continue;
        if (c.n < table[i].min_ranks) {
            not_applicable++;
            continue;
        }
        run_row(&c, &table[i]);
        ran++;
    }
    ctx_fini(&c);
    if (c.rank == 0)
        printf("misuse: %d cases checked, %d not applicable with %d rank%s\n", ran, not_applicable, c.n,
               c.n == 1 ? "" : "s");
    return check_finish();
}
