/*
 * acc_ordering: accumulate ordering from one origin to one location.
 *
 *   1. Default window (accumulate_ordering = rar,raw,war,waw).  Every rank
 *      is the only origin of one location at its right neighbour.  For
 *      ITERS iterations, inside ONE passive epoch (MPI_Win_lock, shared on
 *      even iterations, exclusive on odd ones) and with no flush in
 *      between, it issues
 *          MPI_Get_accumulate NO_OP      -> must see the previous v2
 *          MPI_Accumulate REPLACE v1
 *          MPI_Get_accumulate NO_OP      -> must see v1 (raw)
 *          MPI_Accumulate REPLACE v2     -> must land after it (war, waw)
 *      and unlocks; afterwards the target checks it holds the last v2.
 *      Types: MPI_LONG, MPI_LONG_DOUBLE (no libfabric provider has it
 *      natively; the values need the full 64-bit mantissa) and
 *      MPI_C_DOUBLE_COMPLEX.  Values differ every iteration.
 *   2. Window with accumulate_ordering=none: every rank issues
 *      NONE_OPS back-to-back MPI_Accumulate SUM to one counter at rank 0,
 *      then one flush; only the final sum is checked, and it must be exact
 *      (MPI_LONG and MPI_LONG_DOUBLE, small integer addends).
 *   3. MPI_Win_get_info on a window created with accumulate_ordering=rar,waw
 *      reports that key with "rar" and "waw" in it (printed by rank 0).
 *   4. MPI-4.0's mpi_accumulate_granularity: accepted, reported as given ("0"
 *      when it was not), and a value that is not a count of bytes fails the
 *      window's creation.
 */
#include "check.h"

#include <stdlib.h>

#define ITERS 200
#define NONE_OPS 1000

enum vkind { V_LONG, V_LDOUBLE, V_DCOMPLEX };

struct vtype {
    const char *name;
    MPI_Datatype dt;
    enum vkind kind;
    size_t size;
};

static struct vtype vtypes[3];

static void init_types(void)
{
    vtypes[0] = (struct vtype){"MPI_LONG", MPI_LONG, V_LONG, sizeof(long)};
    vtypes[1] = (struct vtype){"MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, V_LDOUBLE, sizeof(long double)};
    vtypes[2] = (struct vtype){"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, V_DCOMPLEX, 2 * sizeof(double)};
}

/* One value of any of the types: long in a, long double in a, complex
 * double as (a, b). */
typedef struct {
    long double a, b;
} val_t;

static void store(const struct vtype *t, void *p, val_t v)
{
    memset(p, 0, t->size);
    switch (t->kind) {
    case V_LONG: {
        long x = (long)v.a;
        memcpy(p, &x, sizeof x);
        break;
    }
    case V_LDOUBLE: {
        long double x = v.a;
        memcpy(p, &x, sizeof x);
        break;
    }
    case V_DCOMPLEX: {
        double x[2] = {(double)v.a, (double)v.b};
        memcpy(p, x, sizeof x);
        break;
    }
    }
}

static val_t load(const struct vtype *t, const void *p)
{
    val_t v = {0, 0};
    switch (t->kind) {
    case V_LONG: {
        long x;
        memcpy(&x, p, sizeof x);
        v.a = x;
        break;
    }
    case V_LDOUBLE: {
        long double x;
        memcpy(&x, p, sizeof x);
        v.a = x;
        break;
    }
    case V_DCOMPLEX: {
        double x[2];
        memcpy(x, p, sizeof x);
        v.a = x[0];
        v.b = x[1];
        break;
    }
    }
    return v;
}

static bool veq(val_t x, val_t y)
{
    return x.a == y.a && x.b == y.b;
}

static long double pow2neg(int e)
{
    long double f = 1;
    while (e-- > 0) f /= 2;
    return f;
}

/* v1 (which = 1) and v2 (which = 2) of an origin's iteration; iteration -1
 * is the initial value.  All exactly representable in the type. */
static val_t value(const struct vtype *t, int origin, int iter, int which)
{
    val_t v = {0, 0};
    long k = (long)iter + 2; /* >= 1 */
    switch (t->kind) {
    case V_LONG:
        /* high bits vary too; v2 is negative */
        v.a = (long double)(which == 1 ? k * 0x10001000001L + origin : -(k * 0x3000000003L) - origin);
        break;
    case V_LDOUBLE:
        /* needs 64 mantissa bits: not representable as a double */
        v.a = (which == 1 ? k : -k) + (origin + 1) * pow2neg(52) + pow2neg(55);
        break;
    case V_DCOMPLEX:
        v.a = which == 1 ? k + 0.5L : -k;
        v.b = which == 1 ? -(origin + 1) - k * 0.25L : origin + k * 0.125L;
        break;
    }
    return v;
}

struct ctx {
    int rank, n, left, right;
};

static void vfmt(const struct vtype *t, val_t v, char *buf, size_t len)
{
    if (t->kind == V_DCOMPLEX)
        snprintf(buf, len, "(%.17Lg,%.17Lg)", v.a, v.b);
    else
        snprintf(buf, len, "%.21Lg", v.a);
}

static void test_order(const struct ctx *c, MPI_Win win, unsigned char *base, const struct vtype *t, int slot)
{
    MPI_Aint disp = (MPI_Aint)slot * 32;
    unsigned char b1[32], b2[32], fprev[32], f1[32];
    char s1[96], s2[96];

    /* the target initialises the location only its left neighbour uses */
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, win));
    store(t, base + disp, value(t, c->left, -1, 2));
    CHECK_MPI(MPI_Win_unlock(c->rank, win));
    MPI_Barrier(MPI_COMM_WORLD);

    int bad_rc = 0, bad_prev = 0, bad_v1 = 0;
    for (int it = 0; it < ITERS; it++) {
        val_t v1 = value(t, c->rank, it, 1), v2 = value(t, c->rank, it, 2);
        val_t prev = value(t, c->rank, it - 1, 2);
        store(t, b1, v1);
        store(t, b2, v2);
        memset(fprev, 0xEE, sizeof fprev);
        memset(f1, 0xEE, sizeof f1);
        int lock = it % 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
        int rc[6];
        rc[0] = MPI_Win_lock(lock, c->right, 0, win);
        rc[1] = MPI_Get_accumulate(b1, 1, t->dt, fprev, 1, t->dt, c->right, disp, 1, t->dt, MPI_NO_OP, win);
        rc[2] = MPI_Accumulate(b1, 1, t->dt, c->right, disp, 1, t->dt, MPI_REPLACE, win);
        rc[3] = MPI_Get_accumulate(b2, 1, t->dt, f1, 1, t->dt, c->right, disp, 1, t->dt, MPI_NO_OP, win);
        rc[4] = MPI_Accumulate(b2, 1, t->dt, c->right, disp, 1, t->dt, MPI_REPLACE, win);
        rc[5] = MPI_Win_unlock(c->right, win);
        for (int j = 0; j < 6; j++)
            if (rc[j] != MPI_SUCCESS && bad_rc++ < 3)
                CHECK(false,
                      "%s iteration %d: call %d of lock/get_acc/acc/"
                      "get_acc/acc/unlock failed (class %d)",
                      t->name, it, j, check_error_class(rc[j]));
        val_t got = load(t, fprev);
        if (!veq(got, prev) && bad_prev++ < 3) {
            vfmt(t, got, s1, sizeof s1);
            vfmt(t, prev, s2, sizeof s2);
            CHECK(false,
                  "%s iteration %d: NO_OP fetch at the start of the "
                  "epoch saw %s, expected the previous epoch's last value %s",
                  t->name, it, s1, s2);
        }
        got = load(t, f1);
        if (!veq(got, v1) && bad_v1++ < 3) {
            vfmt(t, got, s1, sizeof s1);
            vfmt(t, v1, s2, sizeof s2);
            CHECK(false,
                  "%s iteration %d: NO_OP fetch between REPLACE v1 and "
                  "REPLACE v2 saw %s, expected v1 = %s",
                  t->name, it, s1, s2);
        }
    }
    CHECK(bad_rc == 0, "%s: %d calls failed", t->name, bad_rc);
    CHECK(bad_prev == 0, "%s: %d of %d epochs began with a stale value", t->name, bad_prev, ITERS);
    CHECK(bad_v1 == 0,
          "%s: %d of %d NO_OP fetches did not see v1 "
          "(read-after-write order broken)",
          t->name, bad_v1, ITERS);
    MPI_Barrier(MPI_COMM_WORLD);

    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, c->rank, 0, win));
    val_t got = load(t, base + disp), want = value(t, c->left, ITERS - 1, 2);
    CHECK_MPI(MPI_Win_unlock(c->rank, win));
    vfmt(t, got, s1, sizeof s1);
    vfmt(t, want, s2, sizeof s2);
    CHECK(veq(got, want),
          "%s: rank %d holds %s after origin %d's last epoch, "
          "expected its final REPLACE v2 = %s",
          t->name, c->rank, s1, c->left, s2);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_none(const struct ctx *c, MPI_Win win, unsigned char *base, const struct vtype *t)
{
    unsigned char *ops = malloc((size_t)NONE_OPS * t->size);
    for (int i = 0; i < NONE_OPS; i++) {
        long double add = (i % 7) + 1 + c->rank % 2;
        store(t, ops + (size_t)i * t->size, (val_t){add, 0});
    }
    long double total = 0;
    for (int r = 0; r < c->n; r++)
        for (int i = 0; i < NONE_OPS; i++) total += (i % 7) + 1 + r % 2;

    if (c->rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        store(t, base, (val_t){0, 0});
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    int bad = 0;
    for (int i = 0; i < NONE_OPS; i++)
        if (MPI_Accumulate(ops + (size_t)i * t->size, 1, t->dt, 0, 0, 1, t->dt, MPI_SUM, win) != MPI_SUCCESS)
            bad++;
    CHECK_MPI(MPI_Win_flush(0, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK(bad == 0, "accumulate_ordering=none %s: %d of %d accumulates failed", t->name, bad, NONE_OPS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        val_t got = load(t, base);
        CHECK_MPI(MPI_Win_unlock(0, win));
        CHECK(got.a == total,
              "accumulate_ordering=none %s: sum of %d x %d "
              "accumulates is %.21Lg, expected %.21Lg",
              t->name, c->n, NONE_OPS, got.a, total);
    }
    free(ops);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Value of accumulate_ordering as MPI_Win_get_info reports it ("" and
 * false if the key is absent). */
static bool reported_ordering(MPI_Win win, char *buf, int len)
{
    MPI_Info info = MPI_INFO_NULL;
    int flag = 0;
    buf[0] = '\0';
    if (!CHECK_MPI(MPI_Win_get_info(win, &info))) return false;
    MPI_Info_get(info, "accumulate_ordering", len - 1, buf, &flag);
    MPI_Info_free(&info);
    return flag != 0;
}

static MPI_Win make_window(const char *ordering, unsigned char **base)
{
    MPI_Info info = MPI_INFO_NULL;
    MPI_Win win = MPI_WIN_NULL;
    if (ordering) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "accumulate_ordering", ordering);
    }
    int rc = MPI_Win_allocate(256, 1, info, MPI_COMM_WORLD, base, &win);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    if (!CHECK(rc == MPI_SUCCESS,
               "MPI_Win_allocate(accumulate_ordering=%s) "
               "failed",
               ordering ? ordering : "default"))
        return MPI_WIN_NULL;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    return win;
}

/* The value MPI_Win_get_info reports for mpi_accumulate_granularity of a window
 * allocated with value (NULL: the key not given); "" if creation failed. */
static void reported_granularity(const char *value, char *buf, int len)
{
    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    if (value) MPI_Info_set(info, "mpi_accumulate_granularity", value);
    unsigned char *base;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Win_allocate(64, 1, info, MPI_COMM_WORLD, &base, &win);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Info_free(&info);
    buf[0] = '\0';
    if (MPI_SUCCESS != rc) return;
    int flag = 0;
    if (CHECK_MPI(MPI_Win_get_info(win, &info))) {
        MPI_Info_get(info, "mpi_accumulate_granularity", len - 1, buf, &flag);
        MPI_Info_free(&info);
    }
    if (!flag) snprintf(buf, (size_t)len, "(absent)");
    MPI_Win_free(&win);
}

static void granularity(void)
{
    char buf[64];
    reported_granularity(NULL, buf, sizeof buf);
    CHECK(0 == strcmp(buf, "0"), "mpi_accumulate_granularity not given: reported \"%s\"", buf);
    reported_granularity("64", buf, sizeof buf);
    CHECK(0 == strcmp(buf, "64"), "mpi_accumulate_granularity=64: reported \"%s\"", buf);
    reported_granularity("many", buf, sizeof buf);
    CHECK(0 == strcmp(buf, ""), "mpi_accumulate_granularity=many: the window was created (reports \"%s\")",
          buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    init_types();
    struct ctx c;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.n);
    c.left = (c.rank + c.n - 1) % c.n;
    c.right = (c.rank + 1) % c.n;
    char buf[MPI_MAX_INFO_VAL + 1];

    /* 1. default ordering */
    unsigned char *base = NULL;
    MPI_Win win = make_window(NULL, &base);
    if (win != MPI_WIN_NULL) {
        bool have = reported_ordering(win, buf, sizeof buf);
        if (c.rank == 0)
            printf("default window: accumulate_ordering %s%s%s\n", have ? "= \"" : "not reported",
                   have ? buf : "", have ? "\"" : "");
        for (int i = 0; i < 3; i++) test_order(&c, win, base, &vtypes[i], i);
        CHECK_MPI(MPI_Win_free(&win));
    }

    /* 2. accumulate_ordering=none: only the final sum counts */
    win = make_window("none", &base);
    if (win != MPI_WIN_NULL) {
        bool have = reported_ordering(win, buf, sizeof buf);
        if (c.rank == 0)
            printf("window created with accumulate_ordering=none reports %s%s%s\n", have ? "\"" : "no value",
                   have ? buf : "", have ? "\"" : "");
        test_none(&c, win, base, &vtypes[0]);
        test_none(&c, win, base, &vtypes[1]);
        CHECK_MPI(MPI_Win_free(&win));
    }

    /* 3. get_info reports what was asked for */
    win = make_window("rar,waw", &base);
    if (win != MPI_WIN_NULL) {
        bool have = reported_ordering(win, buf, sizeof buf);
        if (c.rank == 0)
            printf("window created with accumulate_ordering=rar,waw reports %s%s%s\n",
                   have ? "\"" : "no value", have ? buf : "", have ? "\"" : "");
        if (CHECK(have,
                  "MPI_Win_get_info has no accumulate_ordering key for a "
                  "window created with accumulate_ordering=rar,waw"))
            CHECK(strstr(buf, "rar") && strstr(buf, "waw"),
                  "MPI_Win_get_info reports accumulate_ordering=\"%s\" for a "
                  "window created with rar,waw",
                  buf);
        CHECK_MPI(MPI_Win_free(&win));
    }
    granularity();
    return check_finish();
}
