/*
 * win_corners: what programs nobody here wrote do and our other tests did not.
 *
 *   zero:     every RMA call with count 0, or with a datatype of size 0, in
 *             every synchronization mode, to every target and self, on
 *             MPI_COMM_WORLD and on a split communicator: it completes at once
 *             (requests too) and leaves window memory untouched. A zero-count
 *             accumulate whose (op, type) is refused for data (MPI_SUM on
 *             MPI_BYTE) succeeds; with data it stays MPI_ERR_OP.
 *   pairs:    MPI_Accumulate / MPI_Get_accumulate with MINLOC, MAXLOC, REPLACE
 *             and NO_OP where origin, target and result are vectors or indexed
 *             types of every value/index pair type.
 *   regions:  one put, accumulate and get_accumulate across two regions
 *             attached back to back on a dynamic window; bytes past a region
 *             that is not attached stay MPI_ERR_RMA_RANGE. The same from an
 *             origin whose datatype scatters the data to a contiguous target.
 *   shared0:  MPI_Win_shared_query of a process that contributed 0 bytes
 *             gives size 0 and a NULL base.
 *   reqerr:   request-based operations on a region the target has detached.
 *             During the origin's epoch: accumulates the target's engine applies
 *             fail with MPI_ERR_RMA_RANGE, reported by MPI_Wait through the
 *             window's error handler. Attached again at the same address, the
 *             region works (the origin's cached key is stale); detached since the
 *             origin's last epoch, a put and an accumulate are MPI_ERR_RMA_RANGE
 *             at the call.
 */
#include "check.h"

#include <stdlib.h>

static int rank, nranks;

/* ---- zero ---------------------------------------------------------------- */

enum sync { SYNC_FENCE, SYNC_PSCW, SYNC_LOCK, SYNC_LOCK_ALL, NSYNC };
static const char *const sync_names[] = {"fence", "pscw", "lock", "lock_all"};

#define ZWORDS 8
#define ZFILL 0x5a

static void zero_open(enum sync s, MPI_Win win, MPI_Comm comm, int target)
{
    MPI_Group all, g;
    switch (s) {
    case SYNC_FENCE: CHECK_MPI(MPI_Win_fence(0, win)); break;
    case SYNC_PSCW:
        MPI_Comm_group(comm, &all);
        /* Everyone is origin and target of everyone. */
        CHECK_MPI(MPI_Win_post(all, 0, win));
        CHECK_MPI(MPI_Win_start(all, 0, win));
        MPI_Group_free(&all);
        (void)g;
        break;
    case SYNC_LOCK: CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win)); break;
    case SYNC_LOCK_ALL: CHECK_MPI(MPI_Win_lock_all(0, win)); break;
    default: break;
    }
}

static void zero_close(enum sync s, MPI_Win win, int target)
{
    switch (s) {
    case SYNC_FENCE: CHECK_MPI(MPI_Win_fence(0, win)); break;
    case SYNC_PSCW:
        CHECK_MPI(MPI_Win_complete(win));
        CHECK_MPI(MPI_Win_wait(win));
        break;
    case SYNC_LOCK: CHECK_MPI(MPI_Win_unlock(target, win)); break;
    case SYNC_LOCK_ALL: CHECK_MPI(MPI_Win_unlock_all(win)); break;
    default: break;
    }
}

/* The zero-data calls of one epoch to `target`. Request-based ones only in
 * passive-target epochs, where the standard allows them. */
static void zero_calls(enum sync s, MPI_Win win, int target, MPI_Datatype empty)
{
    unsigned char buf[ZWORDS * 8], res[ZWORDS * 8];
    memset(buf, 0xa5, sizeof buf);
    memset(res, 0xa5, sizeof res);
    CHECK_MPI(MPI_Put(buf, 0, MPI_INT, target, 0, 0, MPI_INT, win));
    CHECK_MPI(MPI_Get(res, 0, MPI_INT, target, 0, 0, MPI_INT, win));
    CHECK_MPI(MPI_Put(buf, 3, empty, target, 1, 3, empty, win));
    CHECK_MPI(MPI_Accumulate(buf, 0, MPI_INT, target, 0, 0, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Accumulate(buf, 5, empty, target, 0, 5, empty, MPI_SUM, win));
    CHECK_MPI(MPI_Get_accumulate(buf, 0, MPI_INT, res, 0, MPI_INT, target, 0, 0, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Get_accumulate(buf, 0, MPI_LONG_DOUBLE_INT, res, 0, MPI_LONG_DOUBLE_INT, target, 0, 0,
                                 MPI_LONG_DOUBLE_INT, MPI_MAXLOC, win));
    /* mpi4py's test: nothing to reduce, so the pair is never applied. */
    CHECK_MPI(MPI_Get_accumulate(buf, 0, MPI_BYTE, res, 0, MPI_BYTE, target, 0, 0, MPI_BYTE, MPI_SUM, win));
    CHECK_MPI(MPI_Accumulate(buf, 0, MPI_BYTE, target, 0, 0, MPI_BYTE, MPI_PROD, win));
    /* With data, the same pair is refused. */
    int rc = MPI_Accumulate(buf, 1, MPI_BYTE, target, 0, 1, MPI_BYTE, MPI_SUM, win);
    CHECK(check_error_class(rc) == MPI_ERR_OP, "%s: MPI_SUM on 1 MPI_BYTE gave class %d, expected MPI_ERR_OP",
          sync_names[s], check_error_class(rc));
    if (s == SYNC_LOCK || s == SYNC_LOCK_ALL) {
        MPI_Request req[6] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                              MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        CHECK_MPI(MPI_Rput(buf, 0, MPI_INT, target, 0, 0, MPI_INT, win, &req[0]));
        CHECK_MPI(MPI_Rget(res, 0, MPI_INT, target, 0, 0, MPI_INT, win, &req[1]));
        CHECK_MPI(MPI_Raccumulate(buf, 0, MPI_INT, target, 0, 0, MPI_INT, MPI_SUM, win, &req[2]));
        CHECK_MPI(MPI_Rget_accumulate(buf, 0, MPI_INT, res, 0, MPI_INT, target, 0, 0, MPI_INT, MPI_SUM, win,
                                      &req[3]));
        CHECK_MPI(MPI_Raccumulate(buf, 2, empty, target, 0, 2, empty, MPI_REPLACE, win, &req[4]));
        CHECK_MPI(MPI_Rget_accumulate(buf, 0, MPI_BYTE, res, 0, MPI_BYTE, target, 0, 0, MPI_BYTE, MPI_SUM,
                                      win, &req[5]));
        check_where("%s: MPI_Waitall on zero-count requests to %d", sync_names[s], target);
        CHECK_MPI(MPI_Waitall(6, req, MPI_STATUSES_IGNORE));
        /* The same, completed one by one with MPI_Test: complete at once. */
        CHECK_MPI(MPI_Raccumulate(buf, 0, MPI_INT, target, 0, 0, MPI_INT, MPI_SUM, win, &req[0]));
        int flag = 0;
        for (int i = 0; i < 1000 && !flag; i++) MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "%s: a zero-count MPI_Raccumulate to %d did not complete in 1000 MPI_Test calls",
              sync_names[s], target);
        if (!flag) MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    }
    CHECK(res[0] == 0xa5 && res[sizeof res - 1] == 0xa5, "%s: a zero-count fetch wrote the result buffer",
          sync_names[s]);
}

static void test_zero_on(MPI_Comm comm, const char *comm_name)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    for (int f = 0; f < 2; f++) {
        unsigned char *mem;
        MPI_Win win;
        if (f == 0) {
            MPI_Win_allocate(ZWORDS * 8, 1, MPI_INFO_NULL, comm, &mem, &win);
        } else {
            mem = malloc(ZWORDS * 8);
            MPI_Win_create(mem, ZWORDS * 8, 1, MPI_INFO_NULL, comm, &win);
        }
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win);
        memset(mem, ZFILL, ZWORDS * 8);
        MPI_Win_unlock(me, win);
        MPI_Barrier(comm);
        for (int s = 0; s < NSYNC; s++) {
            for (int d = 0; d < n; d++) {
                int target = (me + d) % n; /* d == 0: ourselves */
                check_where("zero: %s %s flavor %d target %d", comm_name, sync_names[s], f, target);
                zero_open((enum sync)s, win, comm, target);
                zero_calls((enum sync)s, win, target, empty);
                zero_close((enum sync)s, win, target);
            }
        }
        MPI_Barrier(comm);
        MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
        size_t bad = fill_mismatch(mem, ZWORDS * 8, ZFILL);
        MPI_Win_unlock(me, win);
        CHECK(bad == ZWORDS * 8, "zero: %s flavor %d: window byte %zu changed", comm_name, f, bad);
        MPI_Win_free(&win);
        if (f == 1) free(mem);
    }
    MPI_Type_free(&empty);
}

static void test_zero(void)
{
    test_zero_on(MPI_COMM_WORLD, "world");
    /* A communicator whose ranks differ from the world's: odd and even, reversed. */
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split);
    test_zero_on(split, "split");
    MPI_Comm_free(&split);
}

/* ---- pairs --------------------------------------------------------------- */

#define PN 12 /* elements in each rank's window */
#define PV 4  /* elements moved: a vector of PV blocks of 1, stride 2 */
/* The indexed type's displacements: 1 + these are odd, apart from the vector's. */
static const int pair_idx[PV] = {0, 2, 6, 8};

#define PAIR_TEST(NAME, VTYPE, ITYPE, MPITYPE)                                                             \
    typedef struct {                                                                                       \
        VTYPE v;                                                                                           \
        ITYPE i;                                                                                           \
    } pair_##NAME;                                                                                         \
    static void test_pair_##NAME(void)                                                                     \
    {                                                                                                      \
        MPI_Datatype vec, idx;                                                                             \
        MPI_Type_vector(PV, 1, 2, MPITYPE, &vec);                                                          \
        MPI_Type_commit(&vec);                                                                             \
        int lens[PV], disps[PV];                                                                           \
        for (int k = 0; k < PV; k++) {                                                                     \
            lens[k] = 1;                                                                                   \
            disps[k] = pair_idx[k];                                                                        \
        }                                                                                                  \
        MPI_Type_indexed(PV, lens, disps, MPITYPE, &idx);                                                  \
        MPI_Type_commit(&idx);                                                                             \
        pair_##NAME *mem;                                                                                  \
        MPI_Win win;                                                                                       \
        MPI_Win_allocate((MPI_Aint)(PN * sizeof(pair_##NAME)), sizeof(pair_##NAME), MPI_INFO_NULL,         \
                         MPI_COMM_WORLD, &mem, &win);                                                      \
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);                                                    \
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);                                                    \
        for (int k = 0; k < PN; k++) {                                                                     \
            mem[k].v = (VTYPE)(10 + k);                                                                    \
            mem[k].i = (ITYPE)-1;                                                                          \
        }                                                                                                  \
        MPI_Win_unlock(rank, win);                                                                         \
        MPI_Barrier(MPI_COMM_WORLD);                                                                       \
        /* Every rank offers (rank + 20 + k, rank) at the target's elements 0, 2, 4, 6:  \
         * MAXLOC leaves the largest rank's offer, index = that rank. */                 \
        const int target = (rank + 1) % nranks;                                                            \
        pair_##NAME offer[PV], got[3 * PV];                                                                \
        for (int k = 0; k < PV; k++) {                                                                     \
            offer[k].v = (VTYPE)(20 + 2 * k + rank);                                                       \
            offer[k].i = (ITYPE)rank;                                                                      \
        }                                                                                                  \
        check_where("pairs %s: MAXLOC", #NAME);                                                            \
        for (int t = 0; t < nranks; t++) {                                                                 \
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));                                           \
            CHECK_MPI(MPI_Accumulate(offer, PV, MPITYPE, t, 0, 1, vec, MPI_MAXLOC, win));                  \
            CHECK_MPI(MPI_Win_unlock(t, win));                                                             \
        }                                                                                                  \
        MPI_Barrier(MPI_COMM_WORLD);                                                                       \
        /* MINLOC through an indexed target (elements 1, 3, 7, 9) from a vector origin. */                 \
        pair_##NAME spread[2 * PV];                                                                        \
        for (int k = 0; k < 2 * PV; k++) {                                                                 \
            spread[k].v = (VTYPE)(5 + rank);                                                               \
            spread[k].i = (ITYPE)(100 + rank);                                                             \
        }                                                                                                  \
        check_where("pairs %s: MINLOC", #NAME);                                                            \
        for (int t = 0; t < nranks; t++) {                                                                 \
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));                                           \
            CHECK_MPI(MPI_Accumulate(spread, 1, vec, t, 1, 1, idx, MPI_MINLOC, win));                      \
            CHECK_MPI(MPI_Win_unlock(t, win));                                                             \
        }                                                                                                  \
        MPI_Barrier(MPI_COMM_WORLD);                                                                       \
        /* Fetch the vector with NO_OP into an indexed result, then REPLACE it. */                         \
        memset(got, 0, sizeof got);                                                                        \
        check_where("pairs %s: NO_OP and REPLACE", #NAME);                                                 \
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));                                       \
        CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPITYPE, got, 1, idx, target, 0, 1, vec, MPI_NO_OP, win));   \
        CHECK_MPI(MPI_Win_flush(target, win));                                                             \
        for (int k = 0; k < PV; k++) {                                                                     \
            const pair_##NAME *g = &got[pair_idx[k]];                                                      \
            CHECK(g->v == (VTYPE)(20 + 2 * k + nranks - 1) && g->i == (ITYPE)(nranks - 1),                 \
                  "pairs %s: MAXLOC element %d holds (%g, %ld), expected (%d, %d)", #NAME, 2 * k,          \
                  (double)g->v, (long)g->i, 20 + 2 * k + nranks - 1, nranks - 1);                          \
        }                                                                                                  \
        pair_##NAME repl[PV], old[PV];                                                                     \
        for (int k = 0; k < PV; k++) {                                                                     \
            repl[k].v = (VTYPE)(70 + k);                                                                   \
            repl[k].i = (ITYPE)(7 + k);                                                                    \
        }                                                                                                  \
        CHECK_MPI(                                                                                         \
            MPI_Get_accumulate(repl, PV, MPITYPE, old, PV, MPITYPE, target, 0, 1, vec, MPI_REPLACE, win)); \
        CHECK_MPI(MPI_Win_unlock(target, win));                                                            \
        for (int k = 0; k < PV; k++)                                                                       \
            CHECK(old[k].v == got[pair_idx[k]].v && old[k].i == got[pair_idx[k]].i,                        \
                  "pairs %s: REPLACE fetched (%g, %ld) at element %d", #NAME, (double)old[k].v,            \
                  (long)old[k].i, 2 * k);                                                                  \
        MPI_Barrier(MPI_COMM_WORLD);                                                                       \
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);                                                       \
        for (int k = 0; k < PN; k++) {                                                                     \
            VTYPE ev = (VTYPE)(10 + k);                                                                    \
            ITYPE ei = (ITYPE)-1;                                                                          \
            if (k % 2 == 0 && k < 2 * PV) {                                                                \
                ev = (VTYPE)(70 + k / 2);                                                                  \
                ei = (ITYPE)(7 + k / 2);                                                                   \
            } else if (k == 1 || k == 3 || k == 7 || k == 9) {                                             \
                ev = (VTYPE)5;                                                                             \
                ei = (ITYPE)100;                                                                           \
            }                                                                                              \
            CHECK(mem[k].v == ev && mem[k].i == ei,                                                        \
                  "pairs %s: rank %d element %d is (%g, %ld), expected (%g, %ld)", #NAME, rank, k,         \
                  (double)mem[k].v, (long)mem[k].i, (double)ev, (long)ei);                                 \
        }                                                                                                  \
        MPI_Win_unlock(rank, win);                                                                         \
        MPI_Barrier(MPI_COMM_WORLD);                                                                       \
        MPI_Win_free(&win);                                                                                \
        MPI_Type_free(&vec);                                                                               \
        MPI_Type_free(&idx);                                                                               \
    }

PAIR_TEST(float_int, float, int, MPI_FLOAT_INT)
PAIR_TEST(double_int, double, int, MPI_DOUBLE_INT)
PAIR_TEST(long_int, long, int, MPI_LONG_INT)
PAIR_TEST(two_int, int, int, MPI_2INT)
PAIR_TEST(short_int, short, int, MPI_SHORT_INT)
PAIR_TEST(long_double_int, long double, int, MPI_LONG_DOUBLE_INT)

static void test_pairs(void)
{
    test_pair_float_int();
    test_pair_double_int();
    test_pair_long_int();
    test_pair_two_int();
    test_pair_short_int();
    test_pair_long_double_int();
}

/* ---- regions ------------------------------------------------------------- */

#define RINTS 8192  /* ints per attached region */
#define RSPAN 9216  /* ints in the accesses that cross from one region to the next */
#define RSTART 4096 /* where they start in the first region */

#define SINTS 32768 /* ints per region for the scattered origin's accesses */
#define SSPAN 24576 /* ints they move, from the middle of the first region on */
#define SBLOCK 16   /* the origin's blocks of ints, every other one skipped */

/* The same from an origin whose datatype scatters the ints to a target that is one
 * block, and large enough that the origin moves the block by RMA itself (a put, a get)
 * or in rendezvous chunks (an accumulate). */
static void regions_scattered(void)
{
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int *mem = calloc(2 * SINTS, sizeof(int));
    CHECK_MPI(MPI_Win_attach(win, mem, SINTS * sizeof(int)));
    CHECK_MPI(MPI_Win_attach(win, mem + SINTS, SINTS * sizeof(int)));
    MPI_Aint mine, *bases = malloc(sizeof(MPI_Aint) * (size_t)nranks);
    MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    const int target = (rank + 1) % nranks;
    MPI_Datatype scattered;
    MPI_Type_vector(SSPAN / SBLOCK, SBLOCK, 2 * SBLOCK, MPI_INT, &scattered);
    MPI_Type_commit(&scattered);
    int *src = malloc(2 * SSPAN * sizeof(int)), *back = malloc(2 * SSPAN * sizeof(int));
    /* Each int of the origin's blocks holds its place in the packed order, plus one. */
    for (int k = 0; k < 2 * SSPAN; k++)
        src[k] = k % (2 * SBLOCK) < SBLOCK ? k / (2 * SBLOCK) * SBLOCK + k % (2 * SBLOCK) + 1 : -1;
    for (int k = 0; k < 2 * SSPAN; k++) back[k] = -7;
    const MPI_Aint at = bases[target] + SINTS / 2 * (MPI_Aint)sizeof(int);

    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    check_where("regions: put from a scattered origin across two regions");
    CHECK_MPI(MPI_Put(src, 1, scattered, target, at, SSPAN, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush(target, win));
    check_where("regions: accumulate from a scattered origin across two regions");
    CHECK_MPI(MPI_Accumulate(src, 1, scattered, target, at, SSPAN, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush(target, win));
    check_where("regions: get into a scattered origin across two regions");
    CHECK_MPI(MPI_Get(back, 1, scattered, target, at, SSPAN, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    size_t wrong = 0;
    for (int k = 0; k < 2 * SSPAN; k++) wrong += back[k] != (src[k] < 0 ? -7 : 2 * src[k]);
    CHECK(wrong == 0, "regions: %zu ints of the scattered get are wrong", wrong);
    MPI_Barrier(MPI_COMM_WORLD);

    size_t bad = 0;
    for (int k = 0; k < 2 * SINTS; k++) {
        const int expect = k >= SINTS / 2 && k < SINTS / 2 + SSPAN ? 2 * (k - SINTS / 2 + 1) : 0;
        if (mem[k] != expect && bad++ < 4)
            CHECK(0, "regions: scattered origin: int %d is %d, expected %d", k, mem[k], expect);
    }
    CHECK(bad == 0, "regions: scattered origin: %zu ints wrong", bad);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, mem);
    MPI_Win_detach(win, mem + SINTS);
    MPI_Win_free(&win);
    MPI_Type_free(&scattered);
    free(mem);
    free(bases);
    free(src);
    free(back);
}

static void test_regions(void)
{
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    /* Two regions back to back, then a third after a gap of 1024 ints. */
    int *mem = calloc(3 * RINTS + 1024, sizeof(int));
    CHECK_MPI(MPI_Win_attach(win, mem, RINTS * sizeof(int)));
    CHECK_MPI(MPI_Win_attach(win, mem + RINTS, RINTS * sizeof(int)));
    CHECK_MPI(MPI_Win_attach(win, mem + 2 * RINTS + 1024, RINTS * sizeof(int)));
    MPI_Aint mine, *bases = malloc(sizeof(MPI_Aint) * (size_t)nranks);
    MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    const int target = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks;
    int *src = malloc(RSPAN * sizeof(int)), *res = malloc(RSPAN * sizeof(int));
    for (int k = 0; k < RSPAN; k++) src[k] = k + 1;
    const MPI_Aint at = bases[target] + RSTART * (MPI_Aint)sizeof(int);

    check_where("regions: put across two regions");
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    CHECK_MPI(MPI_Put(src, RSPAN, MPI_INT, target, at, RSPAN, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush(target, win));
    check_where("regions: accumulate across two regions");
    CHECK_MPI(MPI_Accumulate(src, RSPAN, MPI_INT, target, at, RSPAN, MPI_INT, MPI_SUM, win));
    check_where("regions: get_accumulate across two regions");
    CHECK_MPI(MPI_Get_accumulate(src, RSPAN, MPI_INT, res, RSPAN, MPI_INT, target, at, RSPAN, MPI_INT,
                                 MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    size_t wrong = 0;
    for (int k = 0; k < RSPAN; k++) wrong += res[k] != 2 * (k + 1);
    CHECK(wrong == 0, "regions: get_accumulate fetched %zu wrong values", wrong);

    /* Into the gap after the second region: not attached anywhere. */
    const MPI_Aint gap_at = bases[target] + (2 * RINTS - 16) * (MPI_Aint)sizeof(int);
    check_where("regions: put into the gap");
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    int rc = MPI_Put(src, 32, MPI_INT, target, gap_at, 32, MPI_INT, win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(target, win);
    CHECK(check_error_class(rc) == MPI_ERR_RMA_RANGE, "regions: put into the gap gave %s",
          check_class_name(check_error_class(rc)));
    rc = MPI_Accumulate(src, 32, MPI_INT, target, gap_at, 32, MPI_INT, MPI_SUM, win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(target, win);
    CHECK(check_error_class(rc) == MPI_ERR_RMA_RANGE, "regions: accumulate into the gap gave %s",
          check_class_name(check_error_class(rc)));
    CHECK_MPI(MPI_Win_unlock(target, win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* What `from` wrote here: 3 * (k + 1) after put, sum and get_accumulate's sum,
     * nothing in the gap, nothing around. */
    (void)from;
    size_t bad = 0;
    for (int k = 0; k < 3 * RINTS + 1024; k++) {
        int expect = k >= RSTART && k < RSTART + RSPAN ? 3 * (k - RSTART + 1) : 0;
        if (mem[k] != expect && bad++ < 4) CHECK(0, "regions: int %d is %d, expected %d", k, mem[k], expect);
    }
    CHECK(bad == 0, "regions: %zu ints wrong", bad);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, mem);
    MPI_Win_detach(win, mem + RINTS);
    MPI_Win_detach(win, mem + 2 * RINTS + 1024);
    MPI_Win_free(&win);
    free(mem);
    free(bases);
    free(src);
    free(res);
    regions_scattered();
}

/* ---- shared0 ------------------------------------------------------------- */

static void test_shared_zero(void)
{
    /* Shared windows live on one node: each node's processes, odd ones with nothing. */
    MPI_Comm node;
    int me, n;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &me);
    MPI_Comm_size(node, &n);
    const MPI_Aint mine = me % 2 ? 0 : 64;
    int *base = NULL;
    MPI_Win win;
    MPI_Win_allocate_shared(mine, sizeof(int), MPI_INFO_NULL, node, &base, &win);
    for (int r = 0; r < n; r++) {
        MPI_Aint size = -1;
        int unit = 0;
        void *ptr = (void *)&size;
        CHECK_MPI(MPI_Win_shared_query(win, r, &size, &unit, &ptr));
        if (r % 2) {
            CHECK(size == 0 && ptr == NULL,
                  "shared0: rank %d contributed 0 bytes, query gave size %ld, base %p", r, (long)size, ptr);
        } else {
            CHECK(size == 64 && ptr != NULL, "shared0: rank %d gave size %ld, base %p", r, (long)size, ptr);
        }
    }
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

/* ---- reqerr -------------------------------------------------------------- */

/* rc from the call, or when it started a request, from MPI_Wait on it. */
static int call_then_wait(int rc, MPI_Request *req)
{
    if (rc != MPI_SUCCESS) return rc;
    MPI_Status st;
    return MPI_Wait(req, &st);
}

/* The origin reads target's region (so it has looked at it), then every process
 * detaches its own; with keep_epoch the origin's lock on target stays held. */
static void get_then_detach(MPI_Win win, int target, MPI_Aint at, int *mem, bool keep_epoch)
{
    int one = 0;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MPI_Get(&one, 1, MPI_INT, target, at, 1, MPI_INT, win));
    CHECK_MPI(keep_epoch ? MPI_Win_flush(target, win) : MPI_Win_unlock(target, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_detach(win, mem));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_request_errors(void)
{
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int *mem = calloc(64, sizeof(int)), src[4] = {1, 2, 3, 4};
    CHECK_MPI(MPI_Win_attach(win, mem, 64 * sizeof(int)));
    MPI_Aint mine, *bases = malloc(sizeof(MPI_Aint) * (size_t)nranks);
    MPI_Get_address(mem, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD);
    const int target = (rank + 1) % nranks;
    MPI_Request req;

    /* Detached inside the origin's epoch: only the target can tell, so the error
     * arrives with the request's completion. MAXLOC on MPI_2INT is an active message
     * on every path (no fabric has pair atomics): the target's engine checks the
     * address, and no stale key reaches the fabric. */
    check_where("reqerr: a get in the epoch, then the target detaches");
    get_then_detach(win, target, bases[target], mem, true);
    check_where("reqerr: MPI_Raccumulate detached during the epoch");
    int rc = call_then_wait(
        MPI_Raccumulate(src, 2, MPI_2INT, target, bases[target], 2, MPI_2INT, MPI_MAXLOC, win, &req), &req);
    CHECK(check_error_class(rc) == MPI_ERR_RMA_RANGE, "reqerr: MPI_Raccumulate in the epoch gave %s",
          check_class_name(check_error_class(rc)));
    int res[4];
    rc = call_then_wait(MPI_Rget_accumulate(src, 2, MPI_2INT, res, 2, MPI_2INT, target, bases[target], 2,
                                            MPI_2INT, MPI_MAXLOC, win, &req),
                        &req);
    CHECK(check_error_class(rc) == MPI_ERR_RMA_RANGE, "reqerr: MPI_Rget_accumulate in the epoch gave %s",
          check_class_name(check_error_class(rc)));
    (void)MPI_Win_unlock(target, win); /* may repeat the error; must not hang */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 64; k++) CHECK(mem[k] == 0, "reqerr: detached memory changed at %d", k);

    /* Attached again at the same address (a new registration, a new key): the
     * origin's cached copy of the region must not be trusted in a new epoch. Then
     * detached since the origin's last epoch: the origin finds out at the call. */
    CHECK_MPI(MPI_Win_attach(win, mem, 64 * sizeof(int)));
    MPI_Barrier(MPI_COMM_WORLD);
    check_where("reqerr: a get while the region is attached");
    get_then_detach(win, target, bases[target], mem, false);
    check_where("reqerr: MPI_Rput to a detached region");
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    rc = call_then_wait(MPI_Rput(src, 4, MPI_INT, target, bases[target], 4, MPI_INT, win, &req), &req);
    CHECK(check_error_class(rc) == MPI_ERR_RMA_RANGE, "reqerr: MPI_Rput gave %s",
          check_class_name(check_error_class(rc)));
    check_where("reqerr: MPI_Raccumulate to a detached region");
    rc = call_then_wait(
        MPI_Raccumulate(src, 4, MPI_INT, target, bases[target], 4, MPI_INT, MPI_SUM, win, &req), &req);
    CHECK(check_error_class(rc) == MPI_ERR_RMA_RANGE, "reqerr: MPI_Raccumulate gave %s",
          check_class_name(check_error_class(rc)));
    (void)MPI_Win_unlock(target, win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 64; k++) CHECK(mem[k] == 0, "reqerr: detached memory changed at %d", k);
    CHECK_MPI(MPI_Win_free(&win));
    free(mem);
    free(bases);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    check_watchdog(20); /* a stalled rank says where (check.h) */
    const char *only = argc > 1 ? argv[1] : NULL;
    if (!only || !strcmp(only, "zero")) test_zero();
    if (!only || !strcmp(only, "pairs")) test_pairs();
    if (!only || !strcmp(only, "regions")) test_regions();
    if (!only || !strcmp(only, "shared0")) test_shared_zero();
    if (!only || !strcmp(only, "reqerr")) test_request_errors();
    return check_finish();
}
