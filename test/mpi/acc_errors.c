/*
 * acc_errors: erroneous accumulate-family calls return the right error
 * class under MPI_ERRORS_RETURN, and the window keeps working afterwards.
 *
 * Every rank targets its right neighbour.  Cases:
 *   sync   MPI_Accumulate / MPI_Get_accumulate / MPI_Fetch_and_op /
 *          MPI_Compare_and_swap outside any epoch, and (n >= 2) to a rank
 *          other than the one locked                     -> MPI_ERR_RMA_SYNC
 *   range  the same calls just past the end of the target's window, straddling
 *          its end, and a count that runs far past it    -> MPI_ERR_RMA_RANGE
 *   op     a user-defined op (MPI_Op_create) with MPI_Accumulate,
 *          MPI_Get_accumulate, MPI_Fetch_and_op          -> MPI_ERR_OP
 *   type   MPI_SUM on MPI_C_BOOL (and MPI_BAND on MPI_DOUBLE, MPI_MINLOC on
 *          MPI_INT, MPI_LAND on MPI_FLOAT): op not defined for the
 *          datatype                                      -> MPI_ERR_OP
 * After every erroneous call a correct MPI_Accumulate SUM of 1 to a counter
 * at the same target must succeed, and a MPI_Fetch_and_op NO_OP after a
 * flush must see the new count; at the end every rank's counter equals the
 * number of correct increments its left neighbour made.
 *
 * The window (MPI_Win_create) covers the first WIN_BYTES of a larger buffer,
 * so an implementation that misses a range error writes into slack memory
 * of the target's own buffer rather than into something else.
 */
#include "check.h"

#include <stdlib.h>

#define WIN_BYTES 64
#define BUF_BYTES 4096
#define OFF_COUNTER 0
#define OFF_SCRATCH 16 /* target of the erroneous calls */

struct ctx {
    int rank, n, right;
    MPI_Win win;
    unsigned char *buf;
    long increments; /* correct increments made at the right neighbour */
    bool allocated;  /* buf is MPI_Win_allocate memory */
};

static const char *class_name(int cls)
{
    switch (cls) {
    case MPI_ERR_OP: return "MPI_ERR_OP";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION";
    default: return check_class_name(cls);
    }
}

/* An erroneous call must fail with class `want`. */
static void expect_class(int rc, int want, const char *what)
{
    int cls = check_error_class(rc);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    CHECK(cls == want, "%s returned %s (%s), expected %s", what, class_name(cls),
          rc == MPI_SUCCESS ? "success" : msg, class_name(want));
}

/* A correct accumulate to the right neighbour, verified through a fetch.
 * Must be called inside an epoch that covers the right neighbour. */
static void correct_increment(struct ctx *c, const char *after)
{
    long one = 1, seen = -1;
    int rc = MPI_Accumulate(&one, 1, MPI_LONG, c->right, OFF_COUNTER, 1, MPI_LONG, MPI_SUM, c->win);
    if (!CHECK(rc == MPI_SUCCESS,
               "correct MPI_Accumulate after %s failed "
               "(class %s)",
               after, class_name(check_error_class(rc))))
        return;
    c->increments++;
    rc = MPI_Win_flush(c->right, c->win);
    CHECK(rc == MPI_SUCCESS, "MPI_Win_flush after %s failed (class %s)", after,
          class_name(check_error_class(rc)));
    rc = MPI_Fetch_and_op(&one, &seen, MPI_LONG, c->right, OFF_COUNTER, MPI_NO_OP, c->win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(c->right, c->win);
    CHECK(rc == MPI_SUCCESS && seen == c->increments,
          "after %s: counter at rank %d reads %ld (rc class %s), expected %ld", after, c->right, seen,
          class_name(check_error_class(rc)), c->increments);
}

/* The four accumulate-family calls at one (target, disp, count). */
enum call { C_ACC, C_GACC, C_FOP, C_CAS, NCALLS };
static const char *const call_names[NCALLS] = {"MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op",
                                               "MPI_Compare_and_swap"};

static int issue(const struct ctx *c, enum call call, int target, MPI_Aint disp, int count, MPI_Datatype dt,
                 MPI_Op op)
{
    static long origin[128], result[128], compare[1];
    switch (call) {
    case C_ACC: return MPI_Accumulate(origin, count, dt, target, disp, count, dt, op, c->win);
    case C_GACC:
        return MPI_Get_accumulate(origin, count, dt, result, count, dt, target, disp, count, dt, op, c->win);
    case C_FOP: return MPI_Fetch_and_op(origin, result, dt, target, disp, op, c->win);
    default: return MPI_Compare_and_swap(origin, compare, result, dt, target, disp, c->win);
    }
}

static void case_sync(struct ctx *c)
{
    char what[160];
    for (int call = 0; call < NCALLS; call++) {
        snprintf(what, sizeof what, "%s outside any epoch", call_names[call]);
        expect_class(issue(c, call, c->right, OFF_SCRATCH, 1, MPI_LONG, MPI_SUM), MPI_ERR_RMA_SYNC, what);
        CHECK_MPI(MPI_Win_lock_all(0, c->win));
        correct_increment(c, what);
        CHECK_MPI(MPI_Win_unlock_all(c->win));
    }
    MPI_Barrier(MPI_COMM_WORLD); /* nobody is inside an epoch any more */
    if (c->n < 2) return;
    /* locked the right neighbour, then target self: not in the epoch */
    for (int call = 0; call < NCALLS; call++) {
        snprintf(what, sizeof what, "%s to rank %d while only rank %d is locked", call_names[call], c->rank,
                 c->right);
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, c->right, 0, c->win));
        expect_class(issue(c, call, c->rank, OFF_SCRATCH, 1, MPI_LONG, MPI_SUM), MPI_ERR_RMA_SYNC, what);
        correct_increment(c, what);
        CHECK_MPI(MPI_Win_unlock(c->right, c->win));
    }
}

static void case_range(struct ctx *c)
{
    struct {
        MPI_Aint disp;
        int count;
        const char *desc;
    } spots[] = {
        {WIN_BYTES, 1, "just past the end"},
        {WIN_BYTES - 4, 1, "straddling the end"},
        {0, 100, "count 100 from the start"},
    };
    char what[160];
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    for (int s = 0; s < 3; s++)
        for (int call = 0; call < NCALLS; call++) {
            if (spots[s].count > 1 && (call == C_FOP || call == C_CAS)) continue; /* single-element calls */
            snprintf(what, sizeof what, "%s %s of a %d-byte window", call_names[call], spots[s].desc,
                     WIN_BYTES);
            expect_class(issue(c, call, c->right, spots[s].disp, spots[s].count, MPI_LONG, MPI_SUM),
                         MPI_ERR_RMA_RANGE, what);
            correct_increment(c, what);
        }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
}

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((long *)inout)[i] += ((long *)in)[i];
}

static void case_user_op(struct ctx *c)
{
    MPI_Op op;
    if (!CHECK_MPI(MPI_Op_create(user_fn, 1, &op))) return;
    char what[160];
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    for (int call = 0; call < C_CAS; call++) {
        snprintf(what, sizeof what, "%s with a user-defined op", call_names[call]);
        expect_class(issue(c, call, c->right, OFF_SCRATCH, 1, MPI_LONG, op), MPI_ERR_OP, what);
        correct_increment(c, what);
    }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    MPI_Op_free(&op);
}

static void case_type(struct ctx *c)
{
    struct {
        MPI_Datatype dt;
        MPI_Op op;
        const char *desc;
    } bad[] = {
        {MPI_C_BOOL, MPI_SUM, "MPI_SUM on MPI_C_BOOL"},
        {MPI_DOUBLE, MPI_BAND, "MPI_BAND on MPI_DOUBLE"},
        {MPI_INT, MPI_MINLOC, "MPI_MINLOC on MPI_INT"},
        {MPI_FLOAT, MPI_LAND, "MPI_LAND on MPI_FLOAT"},
    };
    char what[160];
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    for (int b = 0; b < 4; b++)
        for (int call = 0; call < C_CAS; call++) {
            snprintf(what, sizeof what, "%s with %s", call_names[call], bad[b].desc);
            expect_class(issue(c, call, c->right, OFF_SCRATCH, 1, bad[b].dt, bad[b].op), MPI_ERR_OP, what);
            correct_increment(c, what);
        }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    struct ctx c;
    memset(&c, 0, sizeof c);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.n);
    c.right = (c.rank + 1) % c.n;
    c.buf = calloc(1, BUF_BYTES);

    /* A window creation failure is reported, not fatal. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Win_create(c.buf, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.win);
    int all_ok = 0, local_ok = rc == MPI_SUCCESS;
    MPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_ok) {
        /* Keep testing the accumulate errors on an allocated window; its
         * memory is exactly WIN_BYTES, so missed range errors are riskier. */
        CHECK(rc == MPI_SUCCESS,
              "MPI_Win_create(%d bytes) failed (class %s); "
              "falling back to MPI_Win_allocate",
              WIN_BYTES, class_name(check_error_class(rc)));
        if (rc == MPI_SUCCESS) MPI_Win_free(&c.win);
        free(c.buf);
        rc = MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.buf, &c.win);
        c.allocated = true;
        if (!CHECK(rc == MPI_SUCCESS, "MPI_Win_allocate failed too (class %s)",
                   class_name(check_error_class(rc))))
            return check_finish();
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c.rank, 0, c.win));
        memset(c.buf, 0, WIN_BYTES);
        CHECK_MPI(MPI_Win_unlock(c.rank, c.win));
    }
    MPI_Win_set_errhandler(c.win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);

    case_sync(&c);
    MPI_Barrier(MPI_COMM_WORLD);
    case_range(&c);
    MPI_Barrier(MPI_COMM_WORLD);
    case_user_op(&c);
    MPI_Barrier(MPI_COMM_WORLD);
    case_type(&c);
    MPI_Barrier(MPI_COMM_WORLD);

    /* every rank's counter holds its left neighbour's correct increments */
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, c.rank, 0, c.win));
    long counter;
    memcpy(&counter, c.buf + OFF_COUNTER, sizeof counter);
    CHECK_MPI(MPI_Win_unlock(c.rank, c.win));
    long want = -1;
    MPI_Sendrecv(&c.increments, 1, MPI_LONG, c.right, 0, &want, 1, MPI_LONG, (c.rank + c.n - 1) % c.n, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(counter == want, "counter at rank %d is %ld, expected %ld", c.rank, counter, want);

    CHECK_MPI(MPI_Win_free(&c.win));
    if (!c.allocated) free(c.buf);
    return check_finish();
}
