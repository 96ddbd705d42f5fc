/*
 * acc_atomicity: concurrent accumulates from every rank to one location
 * are atomic, for MPI_LONG, MPI_INT and MPI_UINT64_T.
 *
 *   1. MPI_Accumulate SUM: every rank adds (rank+1) K_ACC times to one
 *      counter at rank 0 under MPI_Win_lock_all (flush every FLUSH_EVERY),
 *      then K_LOCK times, each in its own MPI_Win_lock(SHARED) epoch, to a
 *      second counter; both must hold exactly K * n(n+1)/2.
 *   2. MPI_Fetch_and_op SUM 1: every rank K_FOP times (each flushed) on one
 *      counter at rank 0; the n*K_FOP fetched values, gathered at rank 0
 *      and sorted, are exactly 0 .. n*K_FOP-1, each origin's own sequence
 *      is strictly increasing, and the counter ends at n*K_FOP.
 *   3. MPI_Compare_and_swap race, CAS_ROUNDS rounds (target rotates over
 *      the ranks): every rank swaps in its own value (rank+1, plus high
 *      bits where the type has them) if the location holds 0.  Exactly one
 *      rank fetches 0 (the winner); every other rank fetches the winner's
 *      value; the location ends with the winner's value.
 *   4. Types no CPU instruction updates, and a misaligned element: every rank adds
 *      1 K_WIDE times to a long double, (1, 2) to a double complex and 1 to
 *      an int64_t at a displacement that is not a multiple of 8, and
 *      fetches-and-adds 1 K_WIDE times on a second long double. Sums are
 *      exact; the fetched values, gathered and sorted, are 0 .. n*K_WIDE-1.
 *      With on-node peers reached directly these take the target's
 *      accumulate lock, which its engine takes too for off-node origins.
 * Window memory is written and read by its owner only under a lock on
 * itself, separated from the RMA phases by barriers.
 */
#include "check.h"

#include <complex.h>
#include <stdlib.h>
#include <string.h>

#define K_ACC 100
#define FLUSH_EVERY 25
#define K_LOCK 50
#define K_FOP 64
#define CAS_ROUNDS 16

#define K_WIDE 64

enum {
    OFF_ACC = 0,
    OFF_LOCK = 8,
    OFF_FOP = 16,
    OFF_CAS = 24,
    OFF_LD = 32,
    OFF_CPLX = 48,
    OFF_MISALIGNED = 68,
    OFF_LD_FETCH = 80,
    WIN_BYTES = 128
};

struct itype {
    const char *name;
    MPI_Datatype dt;
    size_t size;
    bool is_signed;
};

static struct itype types[3];

static void init_types(void)
{
    types[0] = (struct itype){"MPI_LONG", MPI_LONG, sizeof(long), true};
    types[1] = (struct itype){"MPI_INT", MPI_INT, sizeof(int), true};
    types[2] = (struct itype){"MPI_UINT64_T", MPI_UINT64_T, sizeof(uint64_t), false};
}

/* Values travel as uint64_t: truncated to the type, sign-extended if signed. */
static uint64_t norm(const struct itype *t, uint64_t x)
{
    unsigned w = 8u * (unsigned)t->size;
    if (w >= 64) return x;
    uint64_t mask = ((uint64_t)1 << w) - 1;
    x &= mask;
    if (t->is_signed && (x >> (w - 1)) & 1) x |= ~mask;
    return x;
}

static uint64_t load(const struct itype *t, const void *p)
{
    switch (t->size) {
    case 4: {
        uint32_t x;
        memcpy(&x, p, 4);
        return norm(t, x);
    }
    default: {
        uint64_t x;
        memcpy(&x, p, 8);
        return norm(t, x);
    }
    }
}

static void store(const struct itype *t, void *p, uint64_t v)
{
    switch (t->size) {
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default: memcpy(p, &v, 8); break;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct ctx {
    int rank, n;
    MPI_Win win;
    unsigned char *base;
};

/* Owner-side access to its own window memory. */
static void local_set(const struct ctx *c, const struct itype *t, int off, uint64_t v)
{
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, c->win));
    store(t, c->base + off, v);
    CHECK_MPI(MPI_Win_unlock(c->rank, c->win));
}

static uint64_t local_get(const struct ctx *c, const struct itype *t, int off)
{
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, c->rank, 0, c->win));
    uint64_t v = load(t, c->base + off);
    CHECK_MPI(MPI_Win_unlock(c->rank, c->win));
    return v;
}

static void test_accumulate(const struct ctx *c, const struct itype *t)
{
    unsigned char one[8];
    store(t, one, (uint64_t)(c->rank + 1));
    if (c->rank == 0) {
        local_set(c, t, OFF_ACC, 0);
        local_set(c, t, OFF_LOCK, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    int bad = 0;
    for (int k = 0; k < K_ACC; k++) {
        if (MPI_Accumulate(one, 1, t->dt, 0, OFF_ACC, 1, t->dt, MPI_SUM, c->win) != MPI_SUCCESS) bad++;
        if ((k + 1) % FLUSH_EVERY == 0) CHECK_MPI(MPI_Win_flush(0, c->win));
    }
    CHECK(bad == 0, "%s: %d of %d MPI_Accumulate calls under lock_all failed", t->name, bad, K_ACC);
    CHECK_MPI(MPI_Win_flush(0, c->win));
    CHECK_MPI(MPI_Win_unlock_all(c->win));

    bad = 0;
    for (int k = 0; k < K_LOCK; k++) {
        int rc = MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, c->win);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Accumulate(one, 1, t->dt, 0, OFF_LOCK, 1, t->dt, MPI_SUM, c->win);
            int rc2 = MPI_Win_unlock(0, c->win);
            if (rc == MPI_SUCCESS) rc = rc2;
        }
        if (rc != MPI_SUCCESS) bad++;
    }
    CHECK(bad == 0, "%s: %d of %d lock shared/accumulate/unlock rounds failed", t->name, bad, K_LOCK);
    MPI_Barrier(MPI_COMM_WORLD);

    if (c->rank == 0) {
        uint64_t tri = (uint64_t)c->n * (uint64_t)(c->n + 1) / 2;
        uint64_t got = local_get(c, t, OFF_ACC);
        CHECK(got == norm(t, K_ACC * tri),
              "%s: counter after %d x MPI_Accumulate SUM (rank+1) per rank "
              "under lock_all is %lld, expected %lld",
              t->name, K_ACC, (long long)got, (long long)(K_ACC * tri));
        got = local_get(c, t, OFF_LOCK);
        CHECK(got == norm(t, K_LOCK * tri),
              "%s: counter after %d x lock shared + MPI_Accumulate SUM (rank+1) "
              "per rank is %lld, expected %lld",
              t->name, K_LOCK, (long long)got, (long long)(K_LOCK * tri));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_fetch_and_op(const struct ctx *c, const struct itype *t)
{
    unsigned char one[8], res[8];
    uint64_t mine[K_FOP];
    store(t, one, 1);
    if (c->rank == 0) local_set(c, t, OFF_FOP, 0);
    MPI_Barrier(MPI_COMM_WORLD);

    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    int bad = 0;
    for (int k = 0; k < K_FOP; k++) {
        memset(res, 0xEE, sizeof res);
        int rc = MPI_Fetch_and_op(one, res, t->dt, 0, OFF_FOP, MPI_SUM, c->win);
        if (rc == MPI_SUCCESS) rc = MPI_Win_flush(0, c->win);
        if (rc != MPI_SUCCESS) bad++;
        mine[k] = load(t, res);
    }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    CHECK(bad == 0, "%s: %d of %d MPI_Fetch_and_op+flush calls failed", t->name, bad, K_FOP);
    int order = -1;
    for (int k = 1; k < K_FOP && order < 0; k++)
        if (mine[k] <= mine[k - 1]) order = k;
    CHECK(order<0,
                "%s: rank %d's fetched values not increasing: "
                "#%d = %llu after #%d = %llu",
                t->name, c->rank, order, order> 0
              ? (unsigned long long)mine[order]
              : 0ULL,
          order - 1, order > 0 ? (unsigned long long)mine[order - 1] : 0ULL);

    uint64_t *all = NULL;
    if (c->rank == 0) all = malloc(sizeof *all * (size_t)K_FOP * (size_t)c->n);
    MPI_Gather(mine, K_FOP, MPI_UINT64_T, all, K_FOP, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0) {
        size_t total = (size_t)K_FOP * (size_t)c->n;
        qsort(all, total, sizeof *all, cmp_u64);
        size_t first_bad = total;
        for (size_t j = 0; j < total && first_bad == total; j++)
            if (all[j] != j) first_bad = j;
        CHECK(first_bad == total,
              "%s: sorted fetched values of %zu MPI_Fetch_and_op SUM 1 are not "
              "0..%zu: position %zu holds %llu",
              t->name, total, total - 1, first_bad,
              first_bad < total ? (unsigned long long)all[first_bad] : 0ULL);
        uint64_t got = local_get(c, t, OFF_FOP);
        CHECK(got == total, "%s: counter after %zu MPI_Fetch_and_op SUM 1 is %llu", t->name, total,
              (unsigned long long)got);
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static uint64_t cas_value(const struct itype *t, int rank)
{
    uint64_t high = t->size >= 8 ? 0x5a00000000000000ULL : 0x5a000000ULL;
    return norm(t, high + (uint64_t)rank + 1);
}

static void test_cas(const struct ctx *c, const struct itype *t)
{
    uint64_t *all = malloc(sizeof *all * (size_t)c->n);
    for (int round = 0; round < CAS_ROUNDS; round++) {
        int target = round % c->n;
        unsigned char mine[8], zero[8], res[8];
        store(t, mine, cas_value(t, c->rank));
        store(t, zero, 0);
        memset(res, 0xEE, sizeof res);
        if (c->rank == target) local_set(c, t, OFF_CAS, 0);
        MPI_Barrier(MPI_COMM_WORLD);

        CHECK_MPI(MPI_Win_lock_all(0, c->win));
        CHECK_MPI(MPI_Compare_and_swap(mine, zero, res, t->dt, target, OFF_CAS, c->win));
        CHECK_MPI(MPI_Win_flush(target, c->win));
        CHECK_MPI(MPI_Win_unlock_all(c->win));
        uint64_t fetched = load(t, res);
        MPI_Allgather(&fetched, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t final = 0;
        if (c->rank == target) final = local_get(c, t, OFF_CAS);
        MPI_Bcast(&final, 1, MPI_UINT64_T, target, MPI_COMM_WORLD);

        int winners = 0, winner = -1;
        for (int r = 0; r < c->n; r++)
            if (all[r] == 0) {
                winners++;
                winner = r;
            }
        /* every rank checks its own fetched value; rank 0 the whole race */
        if (winner >= 0 && c->rank != winner)
            CHECK(fetched == cas_value(t, winner),
                  "%s round %d: rank %d lost the CAS but fetched 0x%llx, not "
                  "winner %d's 0x%llx",
                  t->name, round, c->rank, (unsigned long long)fetched, winner,
                  (unsigned long long)cas_value(t, winner));
        if (c->rank == 0) {
            CHECK(winners == 1,
                  "%s round %d (target %d): %d ranks fetched 0 "
                  "from MPI_Compare_and_swap, expected exactly 1",
                  t->name, round, target, winners);
            if (winners >= 1)
                CHECK(final == cas_value(t, winner),
                      "%s round %d: location holds 0x%llx, expected winner "
                      "%d's 0x%llx",
                      t->name, round, (unsigned long long) final, winner,
                      (unsigned long long)cas_value(t, winner));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(all);
}

static int cmp_ld(const void *a, const void *b)
{
    long double x = *(const long double *)a, y = *(const long double *)b;
    return x < y ? -1 : x > y;
}

static void test_wide(const struct ctx *c)
{
    if (c->rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, c->win));
        memset(c->base + OFF_LD, 0, WIN_BYTES - OFF_LD);
        CHECK_MPI(MPI_Win_unlock(0, c->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const long double one = 1.0L;
    const double _Complex step = 1.0 + 2.0 * I;
    const int64_t one64 = 1;
    long double *fetched = malloc(sizeof(long double) * K_WIDE);
    CHECK_MPI(MPI_Win_lock_all(0, c->win));
    for (int k = 0; k < K_WIDE; k++) {
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG_DOUBLE, 0, OFF_LD, 1, MPI_LONG_DOUBLE, MPI_SUM, c->win));
        CHECK_MPI(MPI_Accumulate(&step, 1, MPI_C_DOUBLE_COMPLEX, 0, OFF_CPLX, 1, MPI_C_DOUBLE_COMPLEX,
                                 MPI_SUM, c->win));
        CHECK_MPI(MPI_Accumulate(&one64, 1, MPI_INT64_T, 0, OFF_MISALIGNED, 1, MPI_INT64_T, MPI_SUM, c->win));
        CHECK_MPI(MPI_Get_accumulate(&one, 1, MPI_LONG_DOUBLE, &fetched[k], 1, MPI_LONG_DOUBLE, 0,
                                     OFF_LD_FETCH, 1, MPI_LONG_DOUBLE, MPI_SUM, c->win));
        CHECK_MPI(MPI_Win_flush(0, c->win));
    }
    CHECK_MPI(MPI_Win_unlock_all(c->win));
    long double *all = c->rank == 0 ? malloc(sizeof(long double) * K_WIDE * (size_t)c->n) : NULL;
    MPI_Gather(fetched, K_WIDE, MPI_LONG_DOUBLE, all, K_WIDE, MPI_LONG_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0) {
        const int total = K_WIDE * c->n;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, c->win));
        long double ld, ldf;
        double _Complex cx;
        int64_t mis;
        memcpy(&ld, c->base + OFF_LD, sizeof ld);
        memcpy(&cx, c->base + OFF_CPLX, sizeof cx);
        memcpy(&mis, c->base + OFF_MISALIGNED, sizeof mis);
        memcpy(&ldf, c->base + OFF_LD_FETCH, sizeof ldf);
        CHECK_MPI(MPI_Win_unlock(0, c->win));
        CHECK(ld == (long double)total, "long double sum is %Lg, expected %d", ld, total);
        CHECK(creal(cx) == total && cimag(cx) == 2.0 * total,
              "double complex sum is (%g, %g), expected (%d, %d)", creal(cx), cimag(cx), total, 2 * total);
        CHECK(mis == total, "misaligned int64_t sum is %lld, expected %d", (long long)mis, total);
        CHECK(ldf == (long double)total, "long double fetch-and-add counter is %Lg, expected %d", ldf, total);
        qsort(all, (size_t)total, sizeof *all, cmp_ld);
        int wrong = 0;
        for (int i = 0; i < total; i++) wrong += all[i] != (long double)i;
        CHECK(wrong == 0, "%d of %d fetched long double values are not 0..%d once each", wrong, total,
              total - 1);
    }
    free(all);
    free(fetched);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    init_types();
    struct ctx c;
    memset(&c, 0, sizeof c);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.n);

    int rc = MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.base, &c.win);
    if (!CHECK(rc == MPI_SUCCESS, "MPI_Win_allocate failed")) return check_finish();
    MPI_Win_set_errhandler(c.win, MPI_ERRORS_RETURN);

    for (int i = 0; i < 3; i++) {
        test_accumulate(&c, &types[i]);
        test_fetch_and_op(&c, &types[i]);
        test_cas(&c, &types[i]);
    }
    test_wide(&c);

    CHECK_MPI(MPI_Win_free(&c.win));
    return check_finish();
}
