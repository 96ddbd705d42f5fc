/*
 * acc_layouts: MPI_Accumulate and MPI_Get_accumulate whose origin, target and result
 * are each a derived datatype of many small pieces, all different (blocks of 3, 5 and
 * 4 elements; the result's blocks go down in memory), each rank to its right
 * neighbour. Over the network such a call travels in the layout form: the target's
 * layout as runs, the origin's elements packed, the old values packed back and
 * unpacked into the result's layout (engine/packed_layout.cpp).
 *
 *   ops:       every op allowed for MPI_INT, MPI_DOUBLE and MPI_UNSIGNED_CHAR, NO_OP
 *              and REPLACE included, in one message and in many, in fence, lock and
 *              request-based epochs: the target's elements are op(old, origin), the
 *              elements between them untouched, and the result holds the old values,
 *              its gaps untouched.
 *   atomicity: every rank adds 1 to the same elements of rank 0 with
 *              MPI_Get_accumulate, round after round: each element's fetched values,
 *              over all ranks and rounds, are 0, 1, ... each exactly once.
 *   pairs:     MAXLOC, MINLOC, REPLACE and NO_OP on every value/index pair type in the
 *              same layouts (their elements travel as whole C structs, the holes left
 *              out of the check): value and index of every element, and the gaps.
 *   large:     contiguous accumulates large enough for the rendezvous: every rank adds
 *              to the same ints of rank 0 at once (the sums are exact); then in one
 *              epoch without a flush, a REPLACE, a request-based SUM, a fetching SUM
 *              and fetches of the same ints each see the one before (the default
 *              accumulate_ordering).
 */
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* count elements in blocks of `block`, `stride` elements apart (negative: going down). */
typedef struct {
    int block, stride;
} layout;

static const layout kTarget = {3, 7}, kOrigin = {5, 6}, kResult = {4, -9};

/* Where the k-th element of a layout lies, in elements from its first block's start. */
static long place(layout l, long k)
{
    return k / l.block * l.stride + k % l.block;
}

/* Elements a buffer needs for n elements of l, and where in it the first block starts. */
static long span(layout l, long n)
{
    const long blocks = (n + l.block - 1) / l.block;
    return (blocks - 1) * labs(l.stride) + l.block;
}
static long start(layout l, long n)
{
    return l.stride < 0 ? span(l, n) - l.block : 0;
}

static MPI_Datatype make(layout l, long n, MPI_Datatype t)
{
    int size;
    MPI_Type_size(t, &size);
    MPI_Datatype v;
    MPI_Type_create_hvector((int)(n / l.block), l.block, (MPI_Aint)l.stride * size, t, &v);
    MPI_Type_commit(&v);
    return v;
}

typedef struct {
    const char *name;
    MPI_Datatype type;
    int size;
    int bitwise; /* the bitwise and logical ops apply */
} elem;

typedef struct {
    const char *name;
    MPI_Op op;
    int bitwise;
} opdef;

/* Values small enough that every op's result is exact in every type. */
static double value(uint32_t seed, long i)
{
    return (double)(pattern_byte(seed, (size_t)i) % 13);
}

static void store(const elem *e, void *buf, long i, double v)
{
    if (e->type == MPI_INT)
        ((int *)buf)[i] = (int)v;
    else if (e->type == MPI_DOUBLE)
        ((double *)buf)[i] = v;
    else
        ((unsigned char *)buf)[i] = (unsigned char)v;
}

static double load(const elem *e, const void *buf, long i)
{
    if (e->type == MPI_INT) return ((const int *)buf)[i];
    if (e->type == MPI_DOUBLE) return ((const double *)buf)[i];
    return ((const unsigned char *)buf)[i];
}

static double apply(const elem *e, MPI_Op op, double old, double o)
{
    const long a = (long)old, b = (long)o;
    const long mask = e->type == MPI_UNSIGNED_CHAR ? 0xff : -1;
    if (op == MPI_SUM) return e->type == MPI_DOUBLE ? old + o : (double)((a + b) & mask);
    if (op == MPI_PROD) return e->type == MPI_DOUBLE ? old * o : (double)((a * b) & mask);
    if (op == MPI_MAX) return old > o ? old : o;
    if (op == MPI_MIN) return old < o ? old : o;
    if (op == MPI_REPLACE) return o;
    if (op == MPI_NO_OP) return old;
    if (op == MPI_BAND) return (double)(a & b);
    if (op == MPI_BOR) return (double)(a | b);
    if (op == MPI_BXOR) return (double)(a ^ b);
    if (op == MPI_LAND) return (double)(a && b);
    if (op == MPI_LOR) return (double)(a || b);
    return (double)(!a != !b); /* MPI_LXOR */
}

enum { FILL = 99 };
enum sync { FENCE, LOCK, REQUEST, NSYNC };
static const char *const sync_names[NSYNC] = {"fence", "lock", "request"};

/* One (get_)accumulate of a whole layout to the right neighbour, in an epoch of the
 * sync mode's own, between barriers. */
static void one_call(MPI_Win win, enum sync sync, int fetch, const void *obase, MPI_Datatype ot, void *rbase,
                     MPI_Datatype rt, int right, MPI_Datatype tt, MPI_Op op)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (sync == FENCE)
        CHECK_MPI(MPI_Win_fence(0, win));
    else
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_Request req = MPI_REQUEST_NULL;
    if (sync == REQUEST && fetch)
        CHECK_MPI(MPI_Rget_accumulate(obase, 1, ot, rbase, 1, rt, right, 0, 1, tt, op, win, &req));
    else if (sync == REQUEST)
        CHECK_MPI(MPI_Raccumulate(obase, 1, ot, right, 0, 1, tt, op, win, &req));
    else if (fetch)
        CHECK_MPI(MPI_Get_accumulate(obase, 1, ot, rbase, 1, rt, right, 0, 1, tt, op, win));
    else
        CHECK_MPI(MPI_Accumulate(obase, 1, ot, right, 0, 1, tt, op, win));
    if (sync == REQUEST) CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (sync == FENCE)
        CHECK_MPI(MPI_Win_fence(0, win));
    else
        CHECK_MPI(MPI_Win_unlock(right, win));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void release_call(MPI_Datatype ot, MPI_Datatype tt, MPI_Datatype rt, char *origin, char *result)
{
    MPI_Type_free(&ot);
    MPI_Type_free(&tt);
    MPI_Type_free(&rt);
    free(origin);
    free(result);
}

static void test_ops(MPI_Win win, void *mem, long win_elems, int rank, int size, long n, const elem *e,
                     const opdef *o, enum sync sync, int fetch)
{
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const long ospan = span(kOrigin, n), rspan = span(kResult, n), tspan = span(kTarget, n);
    CHECK(tspan <= win_elems, "the target layout does not fit the window");
    char *origin = malloc((size_t)ospan * (size_t)e->size), *result = malloc((size_t)rspan * (size_t)e->size);
    CHECK(origin && result, "out of memory");
    const uint32_t mine = pattern_seed((uint32_t)n, (uint32_t)rank, 7, 0);
    const uint32_t theirs = pattern_seed((uint32_t)n, (uint32_t)left, 7, 0);
    const uint32_t window_seed = pattern_seed((uint32_t)n, 11, 0, 0); /* every rank's window alike */
    for (long i = 0; i < ospan; i++) store(e, origin, i, FILL);
    for (long k = 0; k < n; k++) store(e, origin, start(kOrigin, n) + place(kOrigin, k), value(mine, k));
    for (long i = 0; i < rspan; i++) store(e, result, i, FILL);
    for (long i = 0; i < win_elems; i++) store(e, mem, i, value(window_seed, i));
    MPI_Datatype ot = make(kOrigin, n, e->type), tt = make(kTarget, n, e->type),
                 rt = make(kResult, n, e->type);
    char *obase = origin + start(kOrigin, n) * e->size, *rbase = result + start(kResult, n) * e->size;

    check_where("%s %s of %ld %s, %s", fetch ? "get_accumulate" : "accumulate", o->name, n, e->name,
                sync_names[sync]);
    one_call(win, sync, fetch, obase, ot, rbase, rt, right, tt, o->op);

    /* Our window, as the left neighbour's call left it. */
    long wrong = 0, first = -1;
    char *touched = calloc((size_t)win_elems, 1);
    for (long k = 0; k < n; k++) {
        const long i = place(kTarget, k);
        touched[i] = 1;
        const double want = apply(e, o->op, value(window_seed, i), value(theirs, k));
        if (load(e, mem, i) != want && wrong++ == 0) first = i;
    }
    for (long i = 0; i < win_elems; i++)
        if (!touched[i] && load(e, mem, i) != value(window_seed, i) && wrong++ == 0) first = i;
    CHECK(wrong == 0, "%s %s of %ld %s, %s: %ld window elements wrong, the first at %ld",
          fetch ? "get_accumulate" : "accumulate", o->name, n, e->name, sync_names[sync], wrong, first);
    /* Our result: the right neighbour's old values, in our result's layout. */
    if (fetch) {
        wrong = 0;
        first = -1;
        char *hit = calloc((size_t)rspan, 1);
        for (long k = 0; k < n; k++) {
            const long i = start(kResult, n) + place(kResult, k);
            hit[i] = 1;
            if (load(e, result, i) != value(window_seed, place(kTarget, k)) && wrong++ == 0) first = k;
        }
        for (long i = 0; i < rspan; i++)
            if (!hit[i] && load(e, result, i) != FILL && wrong++ == 0) first = -i;
        CHECK(wrong == 0, "get_accumulate %s of %ld %s, %s: %ld result elements wrong (first %ld)", o->name,
              n, e->name, sync_names[sync], wrong, first);
        free(hit);
    }
    free(touched);
    release_call(ot, tt, rt, origin, result);
}

/* ---- value/index pairs ---- */
typedef struct {
    float v;
    int i;
} p_float_int;
typedef struct {
    double v;
    int i;
} p_double_int;
typedef struct {
    long v;
    int i;
} p_long_int;
typedef struct {
    int v;
    int i;
} p_2int;
typedef struct {
    short v;
    int i;
} p_short_int;
typedef struct {
    long double v;
    int i;
} p_long_double_int;

typedef struct {
    const char *name;
    MPI_Datatype type;
    int extent, value, index_at; /* the struct's size, its value's, where its index is */
} pair_elem;

#define PAIR(name, T)                                                              \
    {                                                                              \
#name, name, (int)sizeof(T), (int)sizeof(((T *)0)->v), (int)offsetof(T, i) \
    }
static const pair_elem kPairs[] = {
    PAIR(MPI_FLOAT_INT, p_float_int), PAIR(MPI_DOUBLE_INT, p_double_int),
    PAIR(MPI_LONG_INT, p_long_int),   PAIR(MPI_2INT, p_2int),
    PAIR(MPI_SHORT_INT, p_short_int), PAIR(MPI_LONG_DOUBLE_INT, p_long_double_int),
};
#undef PAIR

/* Padding (bytes of a struct outside its value and index: MPI_SHORT_INT's hole,
 * MPI_DOUBLE_INT's tail) may hold an application's own field, and MPI leaves it alone.
 * Every struct's padding is set to PAD before a call and checked after it. */
#define PAD 0xa5
static int is_padding(const pair_elem *e, int b)
{
    return b >= e->value && (b < e->index_at || b >= e->index_at + (int)sizeof(int));
}
static void pad_fill(const pair_elem *e, void *buf, long n)
{
    for (long k = 0; k < n; k++)
        for (int b = 0; b < e->extent; b++)
            if (is_padding(e, b)) ((unsigned char *)buf)[k * e->extent + b] = PAD;
}
static long pad_changed(const pair_elem *e, const void *buf, long n)
{
    long bad = 0;
    for (long k = 0; k < n; k++)
        for (int b = 0; b < e->extent; b++)
            if (is_padding(e, b) && ((const unsigned char *)buf)[k * e->extent + b] != PAD) {
                bad++;
                break;
            }
    return bad;
}

static void pair_store(const pair_elem *e, void *buf, long k, double v, int i)
{
    char *at = (char *)buf + k * e->extent;
#define PAIR_STORE(T, VT)         \
    do {                          \
        T x;                      \
        memcpy(&x, at, sizeof x); \
        x.v = (VT)v;              \
        x.i = i;                  \
        memcpy(at, &x, sizeof x); \
    } while (0)
    if (e->type == MPI_FLOAT_INT)
        PAIR_STORE(p_float_int, float);
    else if (e->type == MPI_DOUBLE_INT)
        PAIR_STORE(p_double_int, double);
    else if (e->type == MPI_LONG_INT)
        PAIR_STORE(p_long_int, long);
    else if (e->type == MPI_2INT)
        PAIR_STORE(p_2int, int);
    else if (e->type == MPI_SHORT_INT)
        PAIR_STORE(p_short_int, short);
    else
        PAIR_STORE(p_long_double_int, long double);
#undef PAIR_STORE
}

static void pair_load(const pair_elem *e, const void *buf, long k, double *v, int *i)
{
    const char *at = (const char *)buf + k * e->extent;
#define PAIR_LOAD(T)              \
    do {                          \
        T x;                      \
        memcpy(&x, at, sizeof x); \
        *v = (double)x.v;         \
        *i = x.i;                 \
    } while (0)
    if (e->type == MPI_FLOAT_INT)
        PAIR_LOAD(p_float_int);
    else if (e->type == MPI_DOUBLE_INT)
        PAIR_LOAD(p_double_int);
    else if (e->type == MPI_LONG_INT)
        PAIR_LOAD(p_long_int);
    else if (e->type == MPI_2INT)
        PAIR_LOAD(p_2int);
    else if (e->type == MPI_SHORT_INT)
        PAIR_LOAD(p_short_int);
    else
        PAIR_LOAD(p_long_double_int);
#undef PAIR_LOAD
}

/* The layout l of n pair elements, strides in elements of the struct's extent. */
static MPI_Datatype make_pairs(layout l, long n, const pair_elem *e)
{
    MPI_Datatype v;
    MPI_Type_create_hvector((int)(n / l.block), l.block, (MPI_Aint)l.stride * e->extent, e->type, &v);
    MPI_Type_commit(&v);
    return v;
}

/* Element k's (value, index) from a seed: values repeat often, so ties test the index. */
static void pair_value(uint32_t seed, long k, double *v, int *i)
{
    *v = (double)(pattern_byte(seed, (size_t)k) % 5);
    *i = (int)(pattern_byte(seed, (size_t)k + 1000003u) % 7);
}

static void pair_apply(MPI_Op op, double ov, int oi, double v, int i, double *rv, int *ri)
{
    *rv = ov;
    *ri = oi;
    if (op == MPI_REPLACE || (op == MPI_MAXLOC && v > ov) || (op == MPI_MINLOC && v < ov)) {
        *rv = v;
        *ri = i;
    } else if ((op == MPI_MAXLOC || op == MPI_MINLOC) && v == ov && i < oi) {
        *ri = i;
    }
}

static void test_pair(MPI_Win win, void *mem, long win_elems, int rank, int size, long n, const pair_elem *e,
                      MPI_Op op, const char *op_name, enum sync sync, int fetch)
{
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const long ospan = span(kOrigin, n), rspan = span(kResult, n);
    CHECK(span(kTarget, n) <= win_elems, "the target layout does not fit the window");
    char *origin = calloc((size_t)ospan, (size_t)e->extent),
         *result = calloc((size_t)rspan, (size_t)e->extent);
    CHECK(origin && result, "out of memory");
    const uint32_t mine = pattern_seed((uint32_t)n, (uint32_t)rank, 13, 0);
    const uint32_t theirs = pattern_seed((uint32_t)n, (uint32_t)left, 13, 0);
    const uint32_t window_seed = pattern_seed((uint32_t)n, 17, 0, 0);
    double v;
    int i;
    for (long k = 0; k < ospan; k++) pair_store(e, origin, k, FILL, -1);
    for (long k = 0; k < n; k++) {
        pair_value(mine, k, &v, &i);
        pair_store(e, origin, start(kOrigin, n) + place(kOrigin, k), v, i);
    }
    for (long k = 0; k < rspan; k++) pair_store(e, result, k, FILL, -1);
    memset(mem, 0, (size_t)win_elems * (size_t)e->extent);
    for (long k = 0; k < win_elems; k++) {
        pair_value(window_seed, k, &v, &i);
        pair_store(e, mem, k, v, i);
    }
    pad_fill(e, origin, ospan); /* an origin's padding is no data either: it must not travel */
    pad_fill(e, result, rspan);
    pad_fill(e, mem, win_elems);
    MPI_Datatype ot = make_pairs(kOrigin, n, e), tt = make_pairs(kTarget, n, e),
                 rt = make_pairs(kResult, n, e);
    char *obase = origin + start(kOrigin, n) * e->extent, *rbase = result + start(kResult, n) * e->extent;
    check_where("%s %s of %ld %s, %s", fetch ? "get_accumulate" : "accumulate", op_name, n, e->name,
                sync_names[sync]);
    one_call(win, sync, fetch, obase, ot, rbase, rt, right, tt, op);

    long wrong = 0, first = -1;
    char *touched = calloc((size_t)win_elems, 1);
    for (long k = 0; k < n; k++) {
        const long at = place(kTarget, k);
        touched[at] = 1;
        double ov, tv, want_v, got_v;
        int oi, ti, want_i, got_i;
        pair_value(window_seed, at, &ov, &oi);
        pair_value(theirs, k, &tv, &ti);
        pair_apply(op, ov, oi, tv, ti, &want_v, &want_i);
        pair_load(e, mem, at, &got_v, &got_i);
        if ((got_v != want_v || got_i != want_i) && wrong++ == 0) first = at;
    }
    for (long k = 0; k < win_elems; k++) {
        double got_v, want_v;
        int got_i, want_i;
        pair_value(window_seed, k, &want_v, &want_i);
        pair_load(e, mem, k, &got_v, &got_i);
        if (!touched[k] && (got_v != want_v || got_i != want_i) && wrong++ == 0) first = k;
    }
    CHECK(wrong == 0, "%s %s of %ld %s, %s: %ld window elements wrong, the first at %ld",
          fetch ? "get_accumulate" : "accumulate", op_name, n, e->name, sync_names[sync], wrong, first);
    wrong = pad_changed(e, mem, win_elems);
    CHECK(wrong == 0, "%s %s of %ld %s, %s: the padding of %ld window structs changed",
          fetch ? "get_accumulate" : "accumulate", op_name, n, e->name, sync_names[sync], wrong);
    if (fetch) {
        wrong = 0;
        first = -1;
        char *hit = calloc((size_t)rspan, 1);
        for (long k = 0; k < n; k++) {
            const long at = start(kResult, n) + place(kResult, k);
            double want_v, got_v;
            int want_i, got_i;
            hit[at] = 1;
            pair_value(window_seed, place(kTarget, k), &want_v, &want_i);
            pair_load(e, result, at, &got_v, &got_i);
            if ((got_v != want_v || got_i != want_i) && wrong++ == 0) first = k;
        }
        for (long k = 0; k < rspan; k++) {
            double got_v;
            int got_i;
            pair_load(e, result, k, &got_v, &got_i);
            if (!hit[k] && (got_v != FILL || got_i != -1) && wrong++ == 0) first = -k;
        }
        CHECK(wrong == 0, "get_accumulate %s of %ld %s, %s: %ld result elements wrong (first %ld)", op_name,
              n, e->name, sync_names[sync], wrong, first);
        wrong = pad_changed(e, result, rspan);
        CHECK(wrong == 0, "get_accumulate %s of %ld %s, %s: the padding of %ld result structs changed",
              op_name, n, e->name, sync_names[sync], wrong);
        free(hit);
    }
    free(touched);
    release_call(ot, tt, rt, origin, result);
}

static void test_pairs(int rank, int size)
{
    const long counts[] = {240, 24000};
    const long win_elems = span(kTarget, counts[1]);
    void *mem;
    MPI_Win win;
    MPI_Win_allocate(win_elems * (MPI_Aint)sizeof(p_long_double_int), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                     &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    const MPI_Op ops[] = {MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
    const char *const op_names[] = {"MPI_MAXLOC", "MPI_MINLOC", "MPI_REPLACE", "MPI_NO_OP"};
    int step = 0;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t t = 0; t < sizeof kPairs / sizeof kPairs[0]; t++)
            for (int o = 0; o < 4; o++)
                for (int fetch = 0; fetch < 2; fetch++) {
                    if (!fetch && ops[o] == MPI_NO_OP) continue;
                    test_pair(win, mem, win_elems, rank, size, counts[c], &kPairs[t], ops[o], op_names[o],
                              (enum sync)(step++ % NSYNC), fetch);
                }
    MPI_Win_free(&win);
}

/* Arrays of the predefined pair type (each side one piece of structs, not a layout) and
 * MPI_Fetch_and_op on one struct: the window's and the result's padding stay as they
 * were, MAXLOC and REPLACE, small and large (a rendezvous) arrays. */
static void test_pair_arrays(int rank, int size)
{
    const long counts[] = {64, 24000};
    const MPI_Op ops[] = {MPI_MAXLOC, MPI_REPLACE};
    const int right = (rank + 1) % size;
    for (size_t t = 0; t < sizeof kPairs / sizeof kPairs[0]; t++) {
        const pair_elem *e = &kPairs[t];
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
            for (int o = 0; o < 2; o++) {
                const long n = counts[c];
                char *mem, *origin = calloc((size_t)n, (size_t)e->extent),
                           *result = calloc((size_t)n + 1, (size_t)e->extent);
                CHECK(origin && result, "out of memory");
                MPI_Win win;
                MPI_Win_allocate(n * e->extent, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
                for (long k = 0; k < n; k++) {
                    pair_store(e, mem, k, 1.0, 5);
                    pair_store(e, origin, k, 3.0, (int)(k % 7));
                }
                pad_fill(e, mem, n);
                pad_fill(e, origin, n);
                pad_fill(e, result, n + 1);
                check_where("arrays of %ld %s, op %d", n, e->name, o);
                MPI_Barrier(MPI_COMM_WORLD);
                CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
                CHECK_MPI(MPI_Get_accumulate(origin, (int)n, e->type, result, (int)n, e->type, right, 0,
                                             (int)n, e->type, ops[o], win));
                CHECK_MPI(MPI_Win_flush(right, win));
                CHECK_MPI(MPI_Fetch_and_op(origin, result + n * e->extent, e->type, right, 0, ops[o], win));
                CHECK_MPI(MPI_Win_unlock(right, win));
                MPI_Barrier(MPI_COMM_WORLD);
                long wrong = 0;
                for (long k = 0; k < n; k++) {
                    double v;
                    int i;
                    pair_load(e, mem, k, &v, &i);
                    wrong += v != 3.0 || i != (int)(k % 7);
                    pair_load(e, result, k, &v, &i);
                    wrong += v != 1.0 || i != 5;
                }
                CHECK(wrong == 0, "arrays of %ld %s: %ld values wrong", n, e->name, wrong);
                CHECK(pad_changed(e, mem, n) == 0, "arrays of %ld %s, %s: window padding changed", n, e->name,
                      o ? "MPI_REPLACE" : "MPI_MAXLOC");
                CHECK(pad_changed(e, result, n + 1) == 0, "arrays of %ld %s, %s: result padding changed", n,
                      e->name, o ? "MPI_REPLACE" : "MPI_MAXLOC");
                MPI_Win_free(&win);
                free(origin);
                free(result);
            }
    }
}

/* Every rank fetches-and-adds 1 to the same n elements of rank 0, rounds times. */
static void test_atomicity(int rank, int size)
{
    enum { N = 3000, ROUNDS = 6 };
    const long tspan = span(kTarget, N), rspan = span(kResult, N);
    int *mem;
    MPI_Win win;
    MPI_Win_allocate(tspan * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, (size_t)tspan * sizeof(int));
    MPI_Datatype tt = make(kTarget, N, MPI_INT), rt = make(kResult, N, MPI_INT),
                 ot = make(kOrigin, N, MPI_INT);
    int *ones = malloc((size_t)span(kOrigin, N) * sizeof(int)), *res = malloc((size_t)rspan * sizeof(int));
    int *fetched = malloc((size_t)ROUNDS * N * sizeof(int));
    for (long i = 0; i < span(kOrigin, N); i++) ones[i] = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    check_where("atomicity: get_accumulate rounds");
    for (int r = 0; r < ROUNDS; r++) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_MPI(MPI_Get_accumulate(ones, 1, ot, res + start(kResult, N), 1, rt, 0, 0, 1, tt, MPI_SUM, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
        for (long k = 0; k < N; k++) fetched[r * N + k] = res[start(kResult, N) + place(kResult, k)];
    }
    int *all = rank == 0 ? malloc((size_t)size * ROUNDS * N * sizeof(int)) : NULL;
    MPI_Gather(fetched, ROUNDS * N, MPI_INT, all, ROUNDS * N, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        const int total = size * ROUNDS;
        char *seen = malloc((size_t)total);
        long bad = 0;
        for (long k = 0; k < N; k++) {
            memset(seen, 0, (size_t)total);
            for (int p = 0; p < size; p++)
                for (int r = 0; r < ROUNDS; r++) {
                    const int v = all[((long)p * ROUNDS + r) * N + k];
                    if (v < 0 || v >= total || seen[v]++) bad++;
                }
            if (mem[place(kTarget, k)] != total) bad++;
        }
        CHECK(bad == 0, "atomicity: %ld fetched values repeated or out of range, or final sums wrong", bad);
        free(seen);
        free(all);
    }
    MPI_Type_free(&tt);
    MPI_Type_free(&rt);
    MPI_Type_free(&ot);
    free(ones);
    free(res);
    free(fetched);
    MPI_Win_free(&win);
}

static void test_large(int rank, int size)
{
    enum { N = 300000, ROUNDS = 4 };
    int *mem;
    MPI_Win win;
    MPI_Win_allocate(N * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, N * sizeof(int));
    int *mine = malloc(N * sizeof(int)), *got = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) mine[i] = (rank + 1) * (i % 7 + 1);
    MPI_Barrier(MPI_COMM_WORLD);
    check_where("large: concurrent contiguous accumulates");
    for (int r = 0; r < ROUNDS; r++) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_MPI(MPI_Accumulate(mine, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long wrong = 0;
        for (int i = 0; i < N; i++) wrong += mem[i] != ROUNDS * size * (size + 1) / 2 * (i % 7 + 1);
        CHECK(wrong == 0, "large: %ld of %d sums wrong after concurrent accumulates", wrong, N);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Each rank to its right neighbour: replace, add, fetch, in order. */
    const int right = (rank + 1) % size;
    check_where("large: ordered contiguous accumulates");
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    CHECK_MPI(MPI_Accumulate(mine, N, MPI_INT, right, 0, N, MPI_INT, MPI_REPLACE, win));
    CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_INT, got, N, MPI_INT, right, 0, N, MPI_INT, MPI_NO_OP, win));
    long wrong = 0;
    CHECK_MPI(MPI_Win_flush_local(right, win));
    for (int i = 0; i < N; i++) wrong += got[i] != mine[i];
    CHECK(wrong == 0, "large: %ld ints fetched after a REPLACE do not hold it", wrong);
    MPI_Request req;
    CHECK_MPI(MPI_Raccumulate(mine, N, MPI_INT, right, 0, N, MPI_INT, MPI_SUM, win, &req));
    CHECK_MPI(MPI_Get_accumulate(mine, N, MPI_INT, got, N, MPI_INT, right, 0, N, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_flush_local(right, win));
    wrong = 0;
    for (int i = 0; i < N; i++) wrong += got[i] != 2 * mine[i];
    CHECK(wrong == 0, "large: %ld ints fetched by a SUM after a request-based SUM do not hold it", wrong);
    CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_INT, got, N, MPI_INT, right, 0, N, MPI_INT, MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_unlock(right, win));
    wrong = 0;
    for (int i = 0; i < N; i++) wrong += got[i] != 3 * mine[i];
    CHECK(wrong == 0, "large: %ld ints fetched after a fetching SUM do not hold it", wrong);
    MPI_Barrier(MPI_COMM_WORLD);
    free(mine);
    free(got);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    int rank, size;
    check_init(&argc, &argv, 150, &rank, &size); /* MPI_Init, then a watchdog (check.h) */

    const elem elems[] = {
        {"MPI_INT", MPI_INT, (int)sizeof(int), 1},
        {"MPI_DOUBLE", MPI_DOUBLE, (int)sizeof(double), 0},
        {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, 1, 1},
    };
    const opdef ops[] = {
        {"MPI_SUM", MPI_SUM, 0},   {"MPI_PROD", MPI_PROD, 0},       {"MPI_MAX", MPI_MAX, 0},
        {"MPI_MIN", MPI_MIN, 0},   {"MPI_REPLACE", MPI_REPLACE, 0}, {"MPI_NO_OP", MPI_NO_OP, 0},
        {"MPI_BAND", MPI_BAND, 1}, {"MPI_BOR", MPI_BOR, 1},         {"MPI_BXOR", MPI_BXOR, 1},
        {"MPI_LAND", MPI_LAND, 1}, {"MPI_LOR", MPI_LOR, 1},         {"MPI_LXOR", MPI_LXOR, 1},
    };
    /* One message's worth, and many (the largest in elements of the smallest type). */
    const long counts[] = {240, 90000};
    const long win_elems = span(kTarget, counts[1]);
    void *mem;
    MPI_Win win;
    MPI_Win_allocate(win_elems * (MPI_Aint)sizeof(double), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int step = 0;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t t = 0; t < sizeof elems / sizeof elems[0]; t++)
            for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
                if (ops[o].bitwise && !elems[t].bitwise) continue;
                for (int fetch = 0; fetch < 2; fetch++) {
                    if (!fetch && ops[o].op == MPI_NO_OP) continue;
                    test_ops(win, mem, win_elems, rank, size, counts[c], &elems[t], &ops[o],
                             (enum sync)(step++ % NSYNC), fetch);
                }
            }
    MPI_Win_free(&win);
    test_pairs(rank, size);
    test_pair_arrays(rank, size);
    test_atomicity(rank, size);
    test_large(rank, size);
    return check_finish();
}
