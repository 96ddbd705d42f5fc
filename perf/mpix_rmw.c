/*
 * mpix_rmw.c - what one implicit-epoch MPIX_Rmw / MPIX_Rmw2 (include/mpix_fabric.h)
 * costs next to the standard MPI way of doing the same, on one uint64 at rank 0.
 *
 *   -m implicit  (2+ ranks) every rank but 0 times a loop of
 *                  MPIX_Rmw2 COMP_SWAP_LT, implicit epoch (a lock, the op, an unlock);
 *                  MPIX_Rmw SUM, implicit epoch;
 *                  MPI_Fetch_and_op SUM + MPI_Win_flush inside one MPI_Win_lock(SHARED)
 *                  opened before the loop (the cheapest standard atomic);
 *                and prints the median per-op latency over those ranks and its ratio to
 *                the fetch-and-op one. Rank 0 only waits in MPI_Barrier (progress).
 *   -m keepmin   (all ranks, meant for 4) every rank offers -i candidates to keep the
 *                minimum, interleaved and decreasing so the ranks contend; every offer
 *                goes to the target (none is pruned on what a rank saw before):
 *                  A: MPIX_Rmw2 COMP_SWAP_LT, implicit epoch, one call per offer;
 *                  B: the best standard loop, inside MPI_Win_lock_all:
 *                     MPI_Compare_and_swap from the value last seen + flush, again
 *                     from the value it returns while the candidate is still better
 *                     (a stale value costs a call; a candidate already beaten, one);
 *                and prints the time (slowest rank) and offers/s of each, and B / A.
 * Each loop is checked (the final value); a wrong one prints FAIL and exits
 * BENCH_EXIT_CHECK, as every benchmark's check does. MPI errors and bad options: bench.h.
 *
 *   -i iterations (10000)  -w warmup iterations (1000)  -m implicit|keepmin (implicit)
 *
 * Under any osc component (elsewhere the MPIX calls fall back to standard MPI), so one
 * binary compares osc/fabric with osc/rdma or osc/pt2pt. Plain MPI-3 + C11.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "bench.h"
#include "mpix_fabric.h"

#define IMPLICIT MPIX_MODE_PASSIVE_EPOCH_IMPLICIT
#define BIG (UINT64_MAX - 1) /* below the initial value: every first offer wins */

enum mode { MODE_IMPLICIT, MODE_KEEPMIN, MODES };
static const char *const mode_names[MODES] = {"implicit", "keepmin"};

struct bench {
    int rank, n;
    long iters, warmup;
    enum mode mode;
    MPI_Win win;
    uint64_t *loc;    /* rank 0: the location */
    MPI_Comm origins; /* implicit mode: every rank but 0 */
    bool ok;
};

/* ------------------------------------------------------------------ helpers */

static void usage(FILE *f)
{
    fprintf(f, "usage: mpix_rmw [-i iterations] [-w warmup] [-m implicit|keepmin]\n");
}

/* As bench_parse: 0 to run, 1 after -h, -1 for a bad command line (said by rank 0). */
static int parse(int argc, char **argv, struct bench *b)
{
    int mode = MODE_IMPLICIT;
    b->iters = 10000, b->warmup = 1000;
    const struct bench_opt opts[] = {
        {'i', BENCH_LONG, &b->iters, 1, LONG_MAX, NULL, NULL},
        {'w', BENCH_LONG, &b->warmup, 0, LONG_MAX, NULL, NULL},
        {'m', BENCH_NAME, &mode, 0, MODES, mode_names, NULL},
    };
    int rc = bench_parse(argc, argv, opts, sizeof opts / sizeof opts[0], usage);
    b->mode = (enum mode)mode;
    if (rc) return rc;
    return bench_require(b->mode != MODE_IMPLICIT || b->n >= 2, usage, "-m implicit needs at least 2 ranks");
}

/* Rank 0 stores v at the location; everyone leaves after it. */
static void reset(const struct bench *b, uint64_t v)
{
    if (b->rank == 0) {
        MPI_CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, b->win));
        *b->loc = v;
        MPI_CK(MPI_Win_unlock(0, b->win));
    }
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
}

/* After the loops: the location must hold `want` (rank 0 looks, everyone learns). */
static void check_final(struct bench *b, uint64_t want, const char *what)
{
    int ok = 1;
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    if (b->rank == 0) {
        MPI_CK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, b->win));
        ok = *b->loc == want;
        if (!ok)
            printf("FAIL %s: final value %llu, expected %llu\n", what, (unsigned long long)*b->loc,
                   (unsigned long long)want);
        MPI_CK(MPI_Win_unlock(0, b->win));
    }
    MPI_CK(MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD));
    b->ok = b->ok && ok;
}

static const char *path_name(MPI_Win win)
{
    int native = 0;
    MPI_CK(MPIX_Rmw_native(win, &native));
    return native ? "native (osc/fabric)" : "fallback (standard MPI)";
}

/* ----------------------------------------------------------- -m implicit */

/* One operation of a latency loop; i numbers the calls of this origin. */
typedef void (*op_fn)(const struct bench *b, long i);

/* Interleaved decreasing candidates: with several origins about half the offers win. */
static void cas_lt(const struct bench *b, long i, int assert)
{
    uint64_t c = BIG - ((uint64_t)i * (uint64_t)(b->n - 1) + (uint64_t)(b->rank - 1)), old;
    MPI_CK(MPIX_Rmw2(&c, 1, MPI_UINT64_T, &c, &old, 0, 0, assert, MPIX_RMW2_COMP_SWAP_LT, b->win));
}
static void op_cas_lt(const struct bench *b, long i)
{
    cas_lt(b, i, IMPLICIT);
}
/* Nobody here locks the window: MPI_MODE_NOCHECK is the truth, and no lock is taken. */
static void op_cas_lt_nocheck(const struct bench *b, long i)
{
    cas_lt(b, i, IMPLICIT | MPI_MODE_NOCHECK);
}

static void op_sum(const struct bench *b, long i)
{
    uint64_t one = 1, old;
    (void)i;
    MPI_CK(MPIX_Rmw(&one, 1, MPI_UINT64_T, &old, 0, 0, IMPLICIT, MPIX_RMW_SUM, b->win));
}

static void op_fop(const struct bench *b, long i)
{
    uint64_t one = 1, old;
    (void)i;
    MPI_CK(MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, 0, 0, MPI_SUM, b->win));
    MPI_CK(MPI_Win_flush(0, b->win));
}

/* Per-op latency in us of this origin (0 at rank 0, which only makes progress). */
static double time_origin(const struct bench *b, op_fn fn, bool lock_shared)
{
    double t = 0;
    if (b->rank != 0) {
        if (lock_shared) MPI_CK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, b->win));
        for (long i = 0; i < b->warmup; i++) fn(b, i);
        MPI_CK(MPI_Barrier(b->origins));
        double t0 = MPI_Wtime();
        for (long i = 0; i < b->iters; i++) fn(b, b->warmup + i);
        t = (MPI_Wtime() - t0) * 1e6 / (double)b->iters;
        if (lock_shared) MPI_CK(MPI_Win_unlock(0, b->win));
    }
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    return t;
}

/* Median over ranks 1 .. n-1 (on rank 0). */
static double median_origins(const struct bench *b, double mine)
{
    double all[b->n], m = 0;
    MPI_CK(MPI_Gather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (b->rank == 0) m = bench_median(all + 1, b->n - 1);
    return m;
}

static void run_implicit(struct bench *b)
{
    static const struct {
        const char *name;
        op_fn fn;
        bool lock_shared, counts; /* counts: adds one to the location */
    } loops[] = {
        {"MPI_Fetch_and_op SUM + flush (lock shared)", op_fop, true, true},
        {"MPIX_Rmw2 COMP_SWAP_LT implicit", op_cas_lt, false, false},
        {"MPIX_Rmw2 COMP_SWAP_LT implicit|nocheck", op_cas_lt_nocheck, false, false},
        {"MPIX_Rmw SUM implicit", op_sum, false, true},
    };
    enum { NLOOPS = sizeof loops / sizeof loops[0] };
    uint64_t calls = (uint64_t)(b->n - 1) * (uint64_t)(b->warmup + b->iters);
    double lat[NLOOPS];
    for (int l = 0; l < NLOOPS; l++) {
        bench_context("-m implicit, %s", loops[l].name);
        reset(b, loops[l].counts ? 0 : UINT64_MAX);
        lat[l] = median_origins(b, time_origin(b, loops[l].fn, loops[l].lock_shared));
        check_final(b, loops[l].counts ? calls : BIG - (calls - 1), loops[l].name);
    }
    if (b->rank != 0) return;
    printf(
        "# MPIX_Rmw implicit-epoch latency: ranks 1..%d -> one uint64 at rank 0, "
        "path %s\n",
        b->n - 1, path_name(b->win));
    printf("# %ld iterations, %ld warmup; median over the %d origin ranks\n", b->iters, b->warmup, b->n - 1);
    printf("# %-46s %14s %18s\n", "Operation", "Latency (us)", "vs fetch_and_op");
    for (int l = 0; l < NLOOPS; l++) printf("%-48s %14.3f %18.3f\n", loops[l].name, lat[l], lat[l] / lat[0]);
}

/* ------------------------------------------------------------ -m keepmin */

/* B's offer: compare-and-swap from the value last seen (*seen) until it sticks or the
 * candidate is no longer better. Returns the compare-and-swap calls it took. */
static long offer_standard(MPI_Win win, uint64_t cand, uint64_t *seen)
{
    uint64_t cur = *seen > cand ? *seen : cand + 1, old; /* at least one call */
    long tries = 0;
    while (cand < cur) {
        MPI_CK(MPI_Compare_and_swap(&cand, &cur, &old, MPI_UINT64_T, 0, 0, win));
        MPI_CK(MPI_Win_flush(0, win));
        tries++;
        cur = old == cur ? cand : old;
    }
    *seen = cur;
    return tries;
}

/* count offers by every rank; returns this rank's seconds, adds its CAS calls. */
/* Variant v of run_keepmin's names: 1 is the standard loop, 0 and 2 MPIX_Rmw2. */
static double keepmin_run(const struct bench *b, int v, long count, long *cas)
{
    const bool standard = v == 1;
    const int assert = v == 2 ? IMPLICIT | MPI_MODE_NOCHECK : IMPLICIT;
    reset(b, UINT64_MAX);
    if (standard) MPI_CK(MPI_Win_lock_all(0, b->win));
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    uint64_t seen = UINT64_MAX; /* the location's first value */
    double t0 = MPI_Wtime();
    for (long i = 0; i < count; i++) {
        uint64_t c = BIG - ((uint64_t)i * (uint64_t)b->n + (uint64_t)b->rank), old;
        if (standard) {
            *cas += offer_standard(b->win, c, &seen);
            continue;
        }
        MPI_CK(MPIX_Rmw2(&c, 1, MPI_UINT64_T, &c, &old, 0, 0, assert, MPIX_RMW2_COMP_SWAP_LT, b->win));
        ++*cas;
    }
    double t = MPI_Wtime() - t0;
    if (standard) MPI_CK(MPI_Win_unlock_all(b->win));
    return t;
}

static void run_keepmin(struct bench *b)
{
    static const char *const names[3] = {
        "A: MPIX_Rmw2 COMP_SWAP_LT implicit",
        "B: lock_all, compare-and-swap loop",
        "C: MPIX_Rmw2 COMP_SWAP_LT implicit|nocheck",
    };
    double tmax[3];
    long cas[3] = {0, 0, 0}, all_cas[3] = {0, 0, 0}; /* calls that reached the target */
    uint64_t mine = BIG - ((uint64_t)(b->iters - 1) * (uint64_t)b->n + (uint64_t)b->rank), min;
    MPI_CK(MPI_Allreduce(&mine, &min, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD));
    for (int v = 0; v < 3; v++) {
        bench_context("-m keepmin, %s", names[v]);
        long unused = 0;
        keepmin_run(b, v, b->warmup, &unused);
        double t = keepmin_run(b, v, b->iters, &cas[v]);
        MPI_CK(MPI_Reduce(&t, &tmax[v], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
        MPI_CK(MPI_Reduce(&cas[v], &all_cas[v], 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
        check_final(b, min, names[v]);
    }
    if (b->rank != 0) return;
    double offers = (double)b->n * (double)b->iters;
    printf(
        "# MPIX_Rmw keep-min: %d ranks offer %ld decreasing candidates each to one "
        "uint64 at rank 0, path %s\n",
        b->n, b->iters, path_name(b->win));
    printf("# time: slowest rank; %ld warmup offers per rank before each variant\n", b->warmup);
    printf("# %-46s %12s %14s %12s\n", "Variant", "Time (s)", "Offers/s", "Calls/offer");
    for (int v = 0; v < 3; v++)
        printf("%-48s %12.6f %14.0f %12.3f\n", names[v], tmax[v], offers / tmax[v],
               (double)all_cas[v] / offers);
    printf("# ratio B/A (time): %.3f  B/C: %.3f\n", tmax[1] / tmax[0], tmax[1] / tmax[2]);
}

/* ------------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    struct bench b = {.ok = true};
    b.n = bench_start(&argc, &argv, "mpix_rmw", &b.rank);
    const int go = bench_proceed(parse(argc, argv, &b), b.n, 0, "");
    if (go != BENCH_PROCEED) return go;
    MPI_CK(MPI_Win_allocate(b.rank == 0 ? sizeof(uint64_t) : 0, sizeof(uint64_t), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &b.loc, &b.win));
    MPI_CK(MPI_Win_set_errhandler(b.win, MPI_ERRORS_RETURN));
    MPI_CK(MPI_Comm_split(MPI_COMM_WORLD, b.rank == 0 ? MPI_UNDEFINED : 1, b.rank, &b.origins));

    if (b.mode == MODE_IMPLICIT)
        run_implicit(&b);
    else
        run_keepmin(&b);

    if (b.origins != MPI_COMM_NULL) MPI_CK(MPI_Comm_free(&b.origins));
    MPI_CK(MPI_Win_free(&b.win));
    MPI_Finalize();
    return b.ok ? 0 : BENCH_EXIT_CHECK;
}
