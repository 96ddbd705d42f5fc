/*
 * mpix_rmw: exact results of MPIX_Rmw, MPIX_Rmw2, MPIX_Rrmw and MPIX_Rrmw2
 * (include/mpix_fabric.h), under any osc component, with any number of ranks.
 *
 * 1. Every op x every type the header allows for it x count 1 and 5 x five
 *    ways to call (`modes`): inside MPI_Win_lock_all + MPI_Win_flush, inside
 *    MPI_Win_lock(EXCLUSIVE), MPIX_MODE_PASSIVE_EPOCH_IMPLICIT with no epoch,
 *    the same with MPI_MODE_NOCHECK, and MPIX_Rrmw / MPIX_Rrmw2 + MPI_Wait
 *    inside MPI_Win_lock_all.  Each rank targets its right neighbour, on
 *    slots no other rank touches, so every outcome is deterministic: the old
 *    values returned and the target's new values (read back with MPI_Get)
 *    must equal what plain C arithmetic here computes.  Values are small
 *    integers, negative ones too, so every result is exact; a count-5
 *    comparison mixes elements where the comparison holds and where it does
 *    not, and count 1 takes each of those elements alone.  Bytes after the
 *    elements (target and result buffer) must stay untouched.
 * 2. Contention on one location at rank 0: one COMP_SWAP_E winner per round,
 *    keep-min / keep-max with COMP_SWAP_LT / GT, MASK_SWAP on disjoint bits,
 *    a SUM / INC counter whose old values are each seen exactly once.
 * 3. Misuse: each call returns the documented error class and changes
 *    neither the target nor the result buffer (nor does a call to
 *    MPI_PROC_NULL, which succeeds).
 * The path taken (native or fallback) is printed; MPIX_EXPECT_NATIVE=0 or 1
 * in the environment makes it a check. MPIX_TEST_SKIP (comma-separated)
 * leaves out what a component cannot do through standard MPI, and says so:
 *   rmw2      every MPIX_Rmw2 call: for osc/rdma in Open MPI 4.1.4 with btl
 *             vader, whose own MPI_Compare_and_swap (the fallback's loop is
 *             made of it) crashes the target process;
 *   no-epoch  the call outside any epoch: osc/sm applies it and reports
 *             nothing, and the fallback's calls are osc/sm's.
 */
#include "check.h"
#include "mpix_fabric.h"
#include "test_values.h"

#include <math.h>
#include <stdlib.h>

#define MAX_CASES 96 /* (op, count, elements) rows per type */
#define SLOT 128     /* 5 elements of at most 16 bytes + guard */
#define POISON 0xA5
#define REGION_OFF 0 /* the left neighbour's slots */
#define MISUSE_OFF (MAX_CASES * SLOT)
#define CONT_OFF (MISUSE_OFF + 64) /* contention location, at rank 0 */
#define WIN_BYTES (CONT_OFF + 64)

/* ---------------------------------------------------------------- types */

/* The header's type classes (which ops allow a type)... */
enum tclass { T_INT = 1, T_BOOL = 2, T_BYTE = 4, T_FD = 8, T_LD = 16, T_CPLX = 32 };
#define T_ANY (T_INT | T_BOOL | T_BYTE | T_FD | T_LD | T_CPLX)
/* ...and how the test computes with one. */
enum kind { K_SINT, K_UINT, K_REAL, K_CPLX };

struct tdesc {
    const char *name;
    MPI_Datatype dt;
    unsigned cls;
    enum kind kind;
    size_t size;
    enum real real;
};

static const struct tdesc types[] = {
    {"MPI_INT8_T", MPI_INT8_T, T_INT, K_SINT, sizeof(int8_t), R_NONE},
    {"MPI_INT16_T", MPI_INT16_T, T_INT, K_SINT, sizeof(int16_t), R_NONE},
    {"MPI_INT32_T", MPI_INT32_T, T_INT, K_SINT, sizeof(int32_t), R_NONE},
    {"MPI_INT64_T", MPI_INT64_T, T_INT, K_SINT, sizeof(int64_t), R_NONE},
    {"MPI_UINT8_T", MPI_UINT8_T, T_INT, K_UINT, sizeof(uint8_t), R_NONE},
    {"MPI_UINT16_T", MPI_UINT16_T, T_INT, K_UINT, sizeof(uint16_t), R_NONE},
    {"MPI_UINT32_T", MPI_UINT32_T, T_INT, K_UINT, sizeof(uint32_t), R_NONE},
    {"MPI_UINT64_T", MPI_UINT64_T, T_INT, K_UINT, sizeof(uint64_t), R_NONE},
    {"MPI_INT", MPI_INT, T_INT, K_SINT, sizeof(int), R_NONE},
    {"MPI_LONG", MPI_LONG, T_INT, K_SINT, sizeof(long), R_NONE},
    {"MPI_UNSIGNED", MPI_UNSIGNED, T_INT, K_UINT, sizeof(unsigned), R_NONE},
    {"MPI_C_BOOL", MPI_C_BOOL, T_BOOL, K_UINT, sizeof(_Bool), R_NONE},
    {"MPI_BYTE", MPI_BYTE, T_BYTE, K_UINT, 1, R_NONE},
    {"MPI_FLOAT", MPI_FLOAT, T_FD, K_REAL, sizeof(float), R_FLOAT},
    {"MPI_DOUBLE", MPI_DOUBLE, T_FD, K_REAL, sizeof(double), R_DOUBLE},
    {"MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, T_LD, K_REAL, sizeof(long double), R_LDOUBLE},
    {"MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, T_CPLX, K_CPLX, 2 * sizeof(float), R_FLOAT},
    {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, T_CPLX, K_CPLX, 2 * sizeof(double), R_DOUBLE},
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

static const struct tdesc *tfind(MPI_Datatype dt)
{
    for (int i = 0; i < NTYPES; i++)
        if (types[i].dt == dt) return &types[i];
    return NULL;
}

/* ------------------------------------------------------------------ ops */

enum fam { F_RMW, F_RMW2 };
/* How a row's values are made (see make_elem). */
enum vals { V_ARITH, V_LOGIC, V_BITS, V_SWAP, V_CMP };

struct odesc {
    const char *name;
    enum fam fam;
    int op;
    unsigned types; /* the classes the header allows */
    enum vals vals;
    bool no_result_too; /* one more row with result_addr NULL */
};

#define ARITH_TYPES (T_INT | T_FD | T_LD | T_CPLX)
#define CMP_TYPES (T_INT | T_FD)
static const struct odesc ops[] = {
    {"MPIX_RMW_INC", F_RMW, MPIX_RMW_INC, ARITH_TYPES, V_ARITH, false},
    {"MPIX_RMW_SUM", F_RMW, MPIX_RMW_SUM, ARITH_TYPES, V_ARITH, true},
    {"MPIX_RMW_PROD", F_RMW, MPIX_RMW_PROD, ARITH_TYPES, V_ARITH, false},
    {"MPIX_RMW_LAND", F_RMW, MPIX_RMW_LAND, T_INT | T_BOOL, V_LOGIC, false},
    {"MPIX_RMW_LOR", F_RMW, MPIX_RMW_LOR, T_INT | T_BOOL, V_LOGIC, false},
    {"MPIX_RMW_LXOR", F_RMW, MPIX_RMW_LXOR, T_INT | T_BOOL, V_LOGIC, false},
    {"MPIX_RMW_BAND", F_RMW, MPIX_RMW_BAND, T_INT | T_BYTE, V_BITS, false},
    {"MPIX_RMW_BOR", F_RMW, MPIX_RMW_BOR, T_INT | T_BYTE, V_BITS, false},
    {"MPIX_RMW_BXOR", F_RMW, MPIX_RMW_BXOR, T_INT | T_BYTE, V_BITS, false},
    {"MPIX_RMW_SWAP", F_RMW, MPIX_RMW_SWAP, T_ANY, V_SWAP, true},
    {"MPIX_RMW2_MASK_SWAP", F_RMW2, MPIX_RMW2_MASK_SWAP, T_INT | T_BYTE, V_BITS, true},
    {"MPIX_RMW2_COMP_SWAP_LT", F_RMW2, MPIX_RMW2_COMP_SWAP_LT, CMP_TYPES, V_CMP, false},
    {"MPIX_RMW2_COMP_SWAP_LE", F_RMW2, MPIX_RMW2_COMP_SWAP_LE, CMP_TYPES, V_CMP, false},
    {"MPIX_RMW2_COMP_SWAP_E", F_RMW2, MPIX_RMW2_COMP_SWAP_E, T_INT | T_BOOL | T_BYTE | T_FD, V_CMP, false},
    {"MPIX_RMW2_COMP_SWAP_GE", F_RMW2, MPIX_RMW2_COMP_SWAP_GE, CMP_TYPES, V_CMP, false},
    {"MPIX_RMW2_COMP_SWAP_GT", F_RMW2, MPIX_RMW2_COMP_SWAP_GT, CMP_TYPES, V_CMP, false},
    {"MPIX_RMW2_COMP_SWAP_NE", F_RMW2, MPIX_RMW2_COMP_SWAP_NE, T_INT | T_BOOL | T_BYTE | T_FD, V_CMP, true},
};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

static const struct odesc *ofind(enum fam fam, int op)
{
    for (int i = 0; i < NOPS; i++)
        if (ops[i].fam == fam && ops[i].op == op) return &ops[i];
    return NULL;
}

/* ---------------------------------------------------------------- modes */

enum epoch { E_NONE, E_ALL, E_LOCK };

struct mode {
    const char *name;
    enum epoch epoch; /* E_LOCK: one MPI_Win_lock per call */
    int assert;
    bool request; /* MPIX_Rrmw / MPIX_Rrmw2 + MPI_Wait */
};

enum { M_LOCKALL, M_LOCK, M_IMPLICIT, M_NOCHECK, M_REQUEST, M_REQUEST_IMPLICIT, NMODES };
static const struct mode modes[NMODES] = {
    {"lock_all+flush", E_ALL, 0, false},
    {"lock(exclusive)", E_LOCK, 0, false},
    {"implicit", E_NONE, MPIX_MODE_PASSIVE_EPOCH_IMPLICIT, false},
    {"implicit|nocheck", E_NONE, MPIX_MODE_PASSIVE_EPOCH_IMPLICIT | MPI_MODE_NOCHECK, false},
    {"request in lock_all", E_ALL, 0, true},
    {"request, implicit", E_NONE, MPIX_MODE_PASSIVE_EPOCH_IMPLICIT, true},
};

/* Modes for locations several ranks use at once (NOCHECK would be a lie). */
static const int shared_modes[] = {M_IMPLICIT, M_LOCKALL, M_REQUEST, M_LOCK};
#define NSHARED ((int)(sizeof shared_modes / sizeof shared_modes[0]))

/* --------------------------------------------------------------- values */

/* One element of any type: integers in u (sign-extended for signed types),
 * floating point in re, complex in re and im. */
typedef struct {
    uint64_t u;
    long double re, im;
} val_t;

static uint64_t norm(const struct tdesc *t, uint64_t x)
{
    return sign_extend(x, 8u * (unsigned)t->size, t->kind == K_SINT);
}

static val_t load(const struct tdesc *t, const unsigned char *p)
{
    val_t v = {0, 0, 0};
    if (t->kind == K_REAL || t->kind == K_CPLX) {
        v.re = load_real(t->real, p);
        if (t->kind == K_CPLX) v.im = load_real(t->real, p + t->size / 2);
        return v;
    }
    switch (t->size) {
    case 1: {
        uint8_t x;
        memcpy(&x, p, 1);
        v.u = x;
        break;
    }
    case 2: {
        uint16_t x;
        memcpy(&x, p, 2);
        v.u = x;
        break;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, p, 4);
        v.u = x;
        break;
    }
    default: memcpy(&v.u, p, 8); break;
    }
    v.u = norm(t, v.u);
    return v;
}

static void store(const struct tdesc *t, unsigned char *p, val_t v)
{
    if (t->kind == K_REAL || t->kind == K_CPLX) {
        store_real(t->real, p, v.re);
        if (t->kind == K_CPLX) store_real(t->real, p + t->size / 2, v.im);
        return;
    }
    switch (t->size) {
    case 1: {
        uint8_t x = (uint8_t)v.u;
        memcpy(p, &x, 1);
        break;
    }
    case 2: {
        uint16_t x = (uint16_t)v.u;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v.u;
        memcpy(p, &x, 4);
        break;
    }
    default: memcpy(p, &v.u, 8); break;
    }
}

/* The value as the type holds it (rounded, truncated). */
static val_t fit(const struct tdesc *t, val_t v)
{
    unsigned char buf[32];
    store(t, buf, v);
    return load(t, buf);
}

static bool veq(const struct tdesc *t, val_t a, val_t b)
{
    if (t->kind == K_REAL || t->kind == K_CPLX) return a.re == b.re && a.im == b.im;
    return a.u == b.u;
}

static void vfmt(const struct tdesc *t, val_t v, char *buf, size_t len)
{
    switch (t->kind) {
    case K_SINT: snprintf(buf, len, "%lld", (long long)(int64_t)v.u); break;
    case K_UINT: snprintf(buf, len, "%llu (0x%llx)", (unsigned long long)v.u, (unsigned long long)v.u); break;
    case K_REAL: snprintf(buf, len, "%Lg", v.re); break;
    default: snprintf(buf, len, "(%Lg, %Lg)", v.re, v.im); break;
    }
}

/* A small integer s (and s2 for the imaginary part) as a value of the type;
 * MPI_C_BOOL takes the low bit, unsigned types wrap negatives to huge. */
static val_t from_small(const struct tdesc *t, int s, int s2)
{
    val_t v = {0, s, s2};
    if (t->kind == K_REAL)
        v.im = 0;
    else if (t->kind != K_CPLX)
        v = (val_t){t->cls == T_BOOL ? (uint64_t)(s & 1) : norm(t, (uint64_t)(int64_t)s), 0, 0};
    return v;
}

/* Sign of a - x in the type's order. */
static int vcmp(const struct tdesc *t, val_t a, val_t x)
{
    if (t->kind == K_REAL) return (a.re > x.re) - (a.re < x.re);
    if (t->kind == K_SINT) return ((int64_t)a.u > (int64_t)x.u) - ((int64_t)a.u < (int64_t)x.u);
    return (a.u > x.u) - (a.u < x.u);
}

/* COMP_SWAP_xx's condition: operand xx target. */
static bool holds(const struct tdesc *t, int op, val_t operand, val_t target)
{
    int c = vcmp(t, operand, target);
    switch (op) {
    case MPIX_RMW2_COMP_SWAP_LT: return c < 0;
    case MPIX_RMW2_COMP_SWAP_LE: return c <= 0;
    case MPIX_RMW2_COMP_SWAP_E: return c == 0;
    case MPIX_RMW2_COMP_SWAP_GE: return c >= 0;
    case MPIX_RMW2_COMP_SWAP_GT: return c > 0;
    default: return c != 0;
    }
}

/* The header's definition, element by element: the target's new value. */
static val_t apply(const struct tdesc *t, const struct odesc *o, val_t x, val_t a, val_t b)
{
    bool real = t->kind == K_REAL || t->kind == K_CPLX;
    val_t r = x;
    if (o->fam == F_RMW2) {
        if (o->op != MPIX_RMW2_MASK_SWAP) return holds(t, o->op, a, x) ? b : x;
        r.u = norm(t, (b.u & a.u) | (x.u & ~a.u));
        return r;
    }
    if (o->op == MPIX_RMW_INC) a = from_small(t, 1, 0);
    switch (o->op) {
    case MPIX_RMW_INC:
    case MPIX_RMW_SUM:
        if (real)
            r.re = x.re + a.re, r.im = x.im + a.im;
        else
            r.u = norm(t, x.u + a.u);
        break;
    case MPIX_RMW_PROD:
        if (real)
            r.re = x.re * a.re - x.im * a.im, r.im = x.re * a.im + x.im * a.re;
        else
            r.u = norm(t, x.u * a.u);
        break;
    case MPIX_RMW_LAND: r.u = x.u != 0 && a.u != 0; break;
    case MPIX_RMW_LOR: r.u = x.u != 0 || a.u != 0; break;
    case MPIX_RMW_LXOR: r.u = (x.u != 0) != (a.u != 0); break;
    case MPIX_RMW_BAND: r.u = norm(t, x.u & a.u); break;
    case MPIX_RMW_BOR: r.u = norm(t, x.u | a.u); break;
    case MPIX_RMW_BXOR: r.u = norm(t, x.u ^ a.u); break;
    default: r = a; break; /* SWAP */
    }
    return r;
}

/* ------------------------------------------------------- test rows */

/* (operand, target) of the comparisons as small integers: less, equal,
 * greater, and a negative against a positive both ways (huge for unsigned
 * types), so every comparison holds for some and fails for others. */
static const int cmp_pairs[5][2] = {{-2, 1}, {1, 1}, {2, -1}, {0, 3}, {3, 0}};

struct elem {
    val_t init, a, b;
}; /* target's initial value, operand, operand2 */

static int small(uint32_t id, int e, uint32_t role)
{
    return (int)(pattern_seed(id, (uint32_t)e, role, 7) % 7) - 3;
}

static val_t bits(const struct tdesc *t, uint32_t id, int e, uint32_t role)
{
    uint64_t h =
        (uint64_t)pattern_seed(id, (uint32_t)e, role, 1) << 32 | pattern_seed(id, (uint32_t)e, role, 2);
    return (val_t){norm(t, h), 0, 0};
}

/* Element e of the row of op o on type t (id: the pair). A swapped-in value
 * is always the old one + 5, odd, so it differs even as MPI_C_BOOL. */
static struct elem make_elem(const struct tdesc *t, const struct odesc *o, uint32_t id, int e)
{
    struct elem v;
    int s = small(id, e, 0), s2 = small(id, e, 1);
    switch (o->vals) {
    case V_ARITH:
        v.init = from_small(t, s, s2);
        v.a = from_small(t, small(id, e, 2), small(id, e, 3));
        v.b = v.a;
        break;
    case V_LOGIC: /* 0, 1 and 2: true is not only 1 */
        v.init = from_small(t, (s + 3) % 3, 0);
        v.a = from_small(t, (s2 + 3) % 3, 0);
        v.b = v.a;
        break;
    case V_BITS:
        v.init = bits(t, id, e, 0);
        v.a = bits(t, id, e, 1);
        v.b = bits(t, id, e, 2);
        break;
    case V_SWAP:
        v.init = from_small(t, s, s2);
        v.a = v.b = from_small(t, s + 5, s2 - 5);
        break;
    default: /* V_CMP */
        v.a = from_small(t, cmp_pairs[e % 5][0], 0);
        v.init = from_small(t, cmp_pairs[e % 5][1], 0);
        v.b = from_small(t, cmp_pairs[e % 5][1] + 5, 0);
        break;
    }
    return v;
}

struct row {
    int op; /* index into ops */
    int count;
    int first; /* elements first .. first + count - 1 */
    bool no_result;
};

static bool rmw2_on = true, no_epoch_on = true; /* MPIX_TEST_SKIP (above) */

/* Every row for type t: count 5, then some of its elements alone (every one
 * for a comparison, so each holds and fails in a call of its own). */
static int build_rows(const struct tdesc *t, struct row *rows)
{
    int n = 0;
    for (int o = 0; o < NOPS; o++) {
        if (!(ops[o].types & t->cls) || (ops[o].fam == F_RMW2 && !rmw2_on)) continue;
        rows[n++] = (struct row){o, 5, 0, false};
        bool cmp = ops[o].vals == V_CMP;
        for (int f = 0; f < (cmp ? 5 : 2); f++) rows[n++] = (struct row){o, 1, cmp ? f : 3 * f, false};
        if (ops[o].no_result_too) rows[n++] = (struct row){o, 5, 0, true};
    }
    return n;
}

/* ------------------------------------------------------------ MPI plumbing */

struct ctx {
    int rank, n, right;
    MPI_Win win;
    unsigned char *init, *opnd, *opnd2, *result, *after; /* MAX_CASES slots each */
};

static void open_epoch(enum epoch e, int target, MPI_Win win)
{
    if (e == E_ALL)
        CHECK_MPI(MPI_Win_lock_all(0, win));
    else if (e == E_LOCK)
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
}

static void close_epoch(enum epoch e, int target, MPI_Win win)
{
    if (e == E_ALL)
        CHECK_MPI(MPI_Win_unlock_all(win));
    else if (e == E_LOCK)
        CHECK_MPI(MPI_Win_unlock(target, win));
}

static void put_bytes(const struct ctx *c, int target, MPI_Aint disp, const void *buf, int len)
{
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, c->win));
    CHECK_MPI(MPI_Put(buf, len, MPI_BYTE, target, disp, len, MPI_BYTE, c->win));
    CHECK_MPI(MPI_Win_unlock(target, c->win));
}

static void get_bytes(const struct ctx *c, int target, MPI_Aint disp, void *buf, int len)
{
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, c->win));
    CHECK_MPI(MPI_Get(buf, len, MPI_BYTE, target, disp, len, MPI_BYTE, c->win));
    CHECK_MPI(MPI_Win_unlock(target, c->win));
}

/* The call of o's family, by m's assert and request rule. */
static int call(const struct odesc *o, const struct mode *m, int assert, const void *a, int count,
                MPI_Datatype dt, const void *b, void *res, int target, MPI_Aint disp, MPI_Win win,
                MPI_Request *req)
{
    if (o->fam == F_RMW)
        return m->request ? MPIX_Rrmw(a, count, dt, res, target, disp, assert, o->op, win, req)
                          : MPIX_Rmw(a, count, dt, res, target, disp, assert, o->op, win);
    return m->request ? MPIX_Rrmw2(a, count, dt, b, res, target, disp, assert, o->op, win, req)
                      : MPIX_Rmw2(a, count, dt, b, res, target, disp, assert, o->op, win);
}

/* One complete operation by mode m: epoch, call, completion. */
static void one_op(const struct ctx *c, const struct mode *m, const struct odesc *o, const void *a,
                   MPI_Datatype dt, const void *b, void *res, int target, MPI_Aint disp)
{
    MPI_Request req = MPI_REQUEST_NULL;
    open_epoch(m->epoch, target, c->win);
    int rc = call(o, m, m->assert, a, 1, dt, b, res, target, disp, c->win, &req);
    if (check_rc_at(rc, o->name, __FILE__, __LINE__) && m->request)
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (m->epoch == E_ALL) CHECK_MPI(MPI_Win_flush(target, c->win));
    close_epoch(m->epoch, target, c->win);
}

/* ----------------------------------------------- 1. every op, every type */

static void row_name(char *buf, size_t len, const struct mode *m, const struct tdesc *t, const struct row *r)
{
    snprintf(buf, len, "%s %s %s count %d from element %d%s", m->name, ops[r->op].name, t->name, r->count,
             r->first, r->no_result ? " (result NULL)" : "");
}

static uint32_t row_id(const struct tdesc *t, const struct row *r)
{
    return pattern_seed((uint32_t)(t - types), (uint32_t)r->op, 0, 0);
}

/* Target's initial values, operands, poisoned result buffer of slot k. */
static void prepare(struct ctx *c, const struct tdesc *t, const struct row *r, int k)
{
    size_t off = (size_t)k * SLOT;
    unsigned char *bufs[4] = {c->init + off, c->opnd + off, c->opnd2 + off, c->result + off};
    for (int i = 0; i < 4; i++) memset(bufs[i], POISON, SLOT);
    for (int i = 0; i < r->count; i++) {
        struct elem e = make_elem(t, &ops[r->op], row_id(t, r), r->first + i);
        store(t, bufs[0] + i * t->size, e.init);
        store(t, bufs[1] + i * t->size, e.a);
        store(t, bufs[2] + i * t->size, e.b);
    }
}

static void issue_rows(struct ctx *c, const struct mode *m, const struct tdesc *t, const struct row *rows,
                       int nr)
{
    MPI_Request reqs[MAX_CASES];
    if (m->epoch == E_ALL) open_epoch(E_ALL, c->right, c->win);
    for (int k = 0; k < nr; k++) {
        const struct odesc *o = &ops[rows[k].op];
        size_t off = (size_t)k * SLOT;
        char name[160];
        row_name(name, sizeof name, m, t, &rows[k]);
        reqs[k] = MPI_REQUEST_NULL;
        if (m->epoch == E_LOCK) open_epoch(E_LOCK, c->right, c->win);
        bool inc = o->fam == F_RMW && o->op == MPIX_RMW_INC; /* operand NULL */
        int rc = call(o, m, m->assert, inc ? NULL : c->opnd + off, rows[k].count, t->dt, c->opnd2 + off,
                      rows[k].no_result ? NULL : c->result + off, c->right, REGION_OFF + (MPI_Aint)off,
                      c->win, &reqs[k]);
        if (!check_rc_at(rc, name, __FILE__, __LINE__)) reqs[k] = MPI_REQUEST_NULL;
        if (m->epoch == E_LOCK) close_epoch(E_LOCK, c->right, c->win);
    }
    for (int k = 0; m->request && k < nr; k++) CHECK_MPI(MPI_Wait(&reqs[k], MPI_STATUS_IGNORE));
    if (m->epoch == E_ALL) {
        CHECK_MPI(MPI_Win_flush(c->right, c->win));
        close_epoch(E_ALL, c->right, c->win);
    }
}

static bool check_val(const struct tdesc *t, val_t got, val_t want, const char *name, const char *what, int i)
{
    char g[96] = "", w[96] = "";
    bool ok = veq(t, got, want);
    if (!ok) {
        vfmt(t, got, g, sizeof g);
        vfmt(t, want, w, sizeof w);
    }
    return CHECK(ok, "%s: %s element %d is %s, expected %s", name, what, i, g, w);
}

static void check_guard(const unsigned char *p, size_t from, const char *name, const char *what)
{
    size_t bad = fill_mismatch(p + from, SLOT - from, POISON);
    CHECK(bad == SLOT - from, "%s: %s byte %zu (after the elements) changed", name, what, from + bad);
}

static void verify_row(const struct ctx *c, const struct mode *m, const struct tdesc *t, const struct row *r,
                       int k)
{
    const struct odesc *o = &ops[r->op];
    const unsigned char *got = c->after + (size_t)k * SLOT, *res = c->result + (size_t)k * SLOT;
    char name[160];
    row_name(name, sizeof name, m, t, r);
    for (int i = 0; i < r->count; i++) {
        struct elem e = make_elem(t, o, row_id(t, r), r->first + i);
        check_val(t, load(t, got + i * t->size), fit(t, apply(t, o, e.init, e.a, e.b)), name, "target", i);
        if (!r->no_result) check_val(t, load(t, res + i * t->size), fit(t, e.init), name, "result", i);
    }
    size_t used = (size_t)r->count * t->size;
    check_guard(got, used, name, "target");
    check_guard(res, r->no_result ? 0 : used, name, "result buffer");
}

/* reset the slots at the target -> barrier -> operations -> barrier -> read
 * back and verify.  The barriers keep every rank in the same mode, which
 * MPI_MODE_NOCHECK's promise needs. */
static void run_type(struct ctx *c, const struct mode *m, const struct tdesc *t)
{
    struct row rows[MAX_CASES];
    int nr = build_rows(t, rows);
    check_where("%s %s", m->name, t->name);
    for (int k = 0; k < nr; k++) prepare(c, t, &rows[k], k);
    put_bytes(c, c->right, REGION_OFF, c->init, nr * SLOT);
    MPI_Barrier(MPI_COMM_WORLD);
    issue_rows(c, m, t, rows, nr);
    MPI_Barrier(MPI_COMM_WORLD);
    get_bytes(c, c->right, REGION_OFF, c->after, nr * SLOT);
    for (int k = 0; k < nr; k++) verify_row(c, m, t, &rows[k], k);
}

/* ------------------------------------------ 2. contention at rank 0 */

static void reset_location(const struct ctx *c, const void *v, int len)
{
    if (c->rank == 0) put_bytes(c, 0, CONT_OFF, v, len);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* (a) Every rank tries to replace the round's start value with its rank + 1:
 * exactly one succeeds, and every loser sees the winner's value. */
static void one_winner(const struct ctx *c)
{
    const struct odesc *o = ofind(F_RMW2, MPIX_RMW2_COMP_SWAP_E);
    check_where("contention: one COMP_SWAP_E winner per round");
    for (int r = 0; r < 40; r++) {
        const struct mode *m = &modes[shared_modes[r % NSHARED]];
        int64_t start = 1000 + r, mine = c->rank + 1, old = -1, final = -1, best = -1;
        reset_location(c, &start, sizeof start);
        one_op(c, m, o, &start, MPI_INT64_T, &mine, &old, 0, CONT_OFF);
        MPI_Barrier(MPI_COMM_WORLD);
        get_bytes(c, 0, CONT_OFF, &final, sizeof final);
        /* the collectives also keep rank 0's next reset after every read */
        int won = old == start, winners = 0;
        int64_t claim = won ? mine : 0;
        MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&claim, &best, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
        CHECK(winners == 1, "round %d (%s): %d ranks saw the comperand", r, m->name, winners);
        CHECK(final == best, "round %d (%s): final %lld, winner's value %lld", r, m->name, (long long) final,
              (long long)best);
        if (!won)
            CHECK(old == best, "round %d (%s): a loser saw %lld, not the winner's %lld", r, m->name,
                  (long long)old, (long long)best);
    }
}

struct extreme {
    MPI_Datatype dt;
    int op;
    MPI_Op mpi;
};

/* The value every candidate beats: the type's maximum for LT, minimum for GT. */
static val_t worst(const struct tdesc *t, int op)
{
    bool lt = op == MPIX_RMW2_COMP_SWAP_LT;
    unsigned w = 8u * (unsigned)t->size;
    val_t v = {0, lt ? (long double)INFINITY : -(long double)INFINITY, 0};
    if (t->kind == K_SINT)
        v.u = norm(t, lt ? ((uint64_t)1 << (w - 1)) - 1 : (uint64_t)1 << (w - 1));
    else if (t->kind == K_UINT)
        v.u = lt ? norm(t, ~(uint64_t)0) : 0;
    return v;
}

static val_t candidate(const struct tdesc *t, int rank, int i)
{
    val_t v = bits(t, (uint32_t)rank, i, 99);
    if (t->kind == K_REAL) v = (val_t){0, (long double)(int32_t)(uint32_t)v.u, 0};
    return v;
}

/* (b) Every rank offers pseudo-random candidates with operand == operand2:
 * the location ends at the global best, and the old values one rank sees
 * never get worse than what it already knows was there. */
static void keep_best(const struct ctx *c, const struct extreme *x)
{
    const struct tdesc *t = tfind(x->dt);
    const struct odesc *o = ofind(F_RMW2, x->op);
    const struct mode *m = &modes[M_IMPLICIT];
    unsigned char buf[16], old[16], best[16], global[16];
    char name[96];
    snprintf(name, sizeof name, "%s %s (%s)", o->name, t->name, m->name);
    check_where("contention: %s", name);
    val_t bound = worst(t, x->op), mine = bound;
    store(t, buf, bound);
    reset_location(c, buf, (int)t->size);
    long regress = 0;
    for (int i = 0; i < 300; i++) {
        val_t cand = candidate(t, c->rank, i);
        store(t, buf, cand);
        one_op(c, m, o, buf, t->dt, buf, old, 0, CONT_OFF);
        val_t was = load(t, old);
        regress += holds(t, x->op, bound, was); /* bound better than what was there */
        bound = holds(t, x->op, cand, was) ? cand : was;
        mine = holds(t, x->op, cand, mine) ? cand : mine;
    }
    CHECK(regress == 0, "%s: %ld old values were worse than one seen before", name, regress);
    MPI_Barrier(MPI_COMM_WORLD);
    get_bytes(c, 0, CONT_OFF, buf, (int)t->size);
    store(t, best, mine);
    MPI_Allreduce(best, global, 1, t->dt, x->mpi, MPI_COMM_WORLD);
    check_val(t, load(t, buf), load(t, global), name, "final value (global best)", 0);
    MPI_Barrier(MPI_COMM_WORLD); /* reads done before the next reset */
}

/* (c) Rank r owns bits r and r + 16 and flips them many times: every old
 * value has this rank's bits as it last left them, and at the end every
 * rank's bits are set (no update of another rank's bits was lost). */
static void disjoint_masks(const struct ctx *c)
{
    const struct odesc *o = ofind(F_RMW2, MPIX_RMW2_MASK_SWAP);
    int nr = c->n < 16 ? c->n : 16;
    uint64_t zero = 0, mask = 0, want = 0, last = 0, final = 0;
    check_where("contention: disjoint MASK_SWAP");
    for (int r = 0; r < nr; r++) want |= (uint64_t)1 << r | (uint64_t)1 << (r + 16);
    if (c->rank < nr) mask = (uint64_t)1 << c->rank | (uint64_t)1 << (c->rank + 16);
    reset_location(c, &zero, sizeof zero);
    long bad = 0;
    for (int k = 0; k < 101 && mask; k++) { /* odd count: the last one sets */
        uint64_t val = k % 2 == 0 ? ~(uint64_t)0 : 0, old = 0;
        one_op(c, &modes[shared_modes[k % NSHARED]], o, &mask, MPI_UINT64_T, &val, &old, 0, CONT_OFF);
        bad += (old & mask) != last;
        last = val & mask;
    }
    CHECK(bad == 0, "MASK_SWAP: %ld old values had this rank's bits wrong", bad);
    MPI_Barrier(MPI_COMM_WORLD);
    get_bytes(c, 0, CONT_OFF, &final, sizeof final);
    CHECK(final == want, "MASK_SWAP: final 0x%llx, expected 0x%llx", (unsigned long long) final,
          (unsigned long long)want);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* (d) A counter: SUM 1 and INC alternately from every rank; the old values
 * seen over all ranks are 0 .. total - 1, each exactly once. */
static void counter(const struct ctx *c)
{
    enum { K = 200 };
    uint64_t zero = 0, one = 1, final = 0, olds[K];
    check_where("contention: SUM / INC counter");
    reset_location(c, &zero, sizeof zero);
    long bad = 0;
    for (int k = 0; k < K; k++) {
        const struct odesc *o = ofind(F_RMW, k % 2 ? MPIX_RMW_INC : MPIX_RMW_SUM);
        one_op(c, &modes[shared_modes[k % NSHARED]], o, k % 2 ? NULL : &one, MPI_UINT64_T, NULL, &olds[k], 0,
               CONT_OFF);
        bad += k > 0 && olds[k] <= olds[k - 1];
    }
    CHECK(bad == 0, "counter: %ld old values not above this rank's previous one", bad);
    MPI_Barrier(MPI_COMM_WORLD);
    get_bytes(c, 0, CONT_OFF, &final, sizeof final);
    uint64_t total = (uint64_t)c->n * K;
    CHECK(final == total, "counter: final %llu, expected %llu", (unsigned long long) final,
          (unsigned long long)total);
    uint64_t *all = c->rank == 0 ? malloc(sizeof(uint64_t) * total) : NULL;
    unsigned char *seen = c->rank == 0 ? calloc(total, 1) : NULL;
    MPI_Gather(olds, K, MPI_UINT64_T, all, K, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    long dup = 0;
    for (uint64_t i = 0; c->rank == 0 && i < total; i++) dup += all[i] >= total || seen[all[i]]++;
    if (c->rank == 0) CHECK(dup == 0, "counter: %ld old values out of range or seen twice", dup);
    free(all);
    free(seen);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ----------------------------------------------------------- 3. misuse */

enum whom { W_RIGHT, W_SIZE, W_PROC_NULL }; /* the target rank passed */

struct misuse {
    const char *what;
    enum fam fam;
    int op;
    MPI_Datatype dt;
    bool derived; /* instead of dt: MPI_Type_contiguous(2, MPI_INT) */
    int count;
    bool null_operand;
    int assert;
    enum epoch epoch;
    enum whom whom;
    int want; /* error class */
    int also; /* another class the standard leaves room for, or 0 */
};

#define IMPLICIT MPIX_MODE_PASSIVE_EPOCH_IMPLICIT
static const struct misuse misuses[] = {
    {"derived datatype", F_RMW, MPIX_RMW_SUM, MPI_INT, true, 1, false, 0, E_ALL, W_RIGHT, MPI_ERR_TYPE, 0},
    {"MPI_DATATYPE_NULL", F_RMW2, MPIX_RMW2_COMP_SWAP_NE, MPI_DATATYPE_NULL, false, 1, false, 0, E_ALL,
     W_RIGHT, MPI_ERR_TYPE, 0},
    {"MPI_BYTE with SUM", F_RMW, MPIX_RMW_SUM, MPI_BYTE, false, 1, false, 0, E_ALL, W_RIGHT, MPI_ERR_OP, 0},
    {"MPI_DOUBLE with MASK_SWAP", F_RMW2, MPIX_RMW2_MASK_SWAP, MPI_DOUBLE, false, 1, false, 0, E_ALL, W_RIGHT,
     MPI_ERR_OP, 0},
    {"MPI_C_DOUBLE_COMPLEX with COMP_SWAP_LT", F_RMW2, MPIX_RMW2_COMP_SWAP_LT, MPI_C_DOUBLE_COMPLEX, false, 1,
     false, 0, E_ALL, W_RIGHT, MPI_ERR_OP, 0},
    {"MPIX_Rmw op 999", F_RMW, 999, MPI_INT, false, 1, false, 0, E_ALL, W_RIGHT, MPI_ERR_OP, 0},
    {"MPIX_Rmw2 op 999", F_RMW2, 999, MPI_INT, false, 1, false, 0, E_ALL, W_RIGHT, MPI_ERR_OP, 0},
    {"count -1", F_RMW, MPIX_RMW_SUM, MPI_INT, false, -1, false, 0, E_ALL, W_RIGHT, MPI_ERR_COUNT, 0},
    {"operand NULL for SUM", F_RMW, MPIX_RMW_SUM, MPI_INT, false, 1, true, 0, E_ALL, W_RIGHT, MPI_ERR_BUFFER,
     0},
    {"unknown assert bit 0x40000", F_RMW, MPIX_RMW_SUM, MPI_INT, false, 1, false, 0x40000, E_ALL, W_RIGHT,
     MPI_ERR_ASSERT, 0},
    {"no epoch, not implicit", F_RMW, MPIX_RMW_SUM, MPI_INT, false, 1, false, 0, E_NONE, W_RIGHT,
     MPI_ERR_RMA_SYNC, 0},
    /* The fallback's second MPI_Win_lock: osc/pt2pt calls it a conflict. */
    {"implicit while holding MPI_Win_lock", F_RMW2, MPIX_RMW2_COMP_SWAP_NE, MPI_INT, false, 1, false,
     IMPLICIT, E_LOCK, W_RIGHT, MPI_ERR_RMA_SYNC, MPI_ERR_RMA_CONFLICT},
    {"MPI_LONG_DOUBLE with COMP_SWAP_LT", F_RMW2, MPIX_RMW2_COMP_SWAP_LT, MPI_LONG_DOUBLE, false, 1, false, 0,
     E_ALL, W_RIGHT, MPI_ERR_OP, 0},
    {"implicit inside MPI_Win_lock_all", F_RMW, MPIX_RMW_SUM, MPI_INT, false, 1, false, IMPLICIT, E_ALL,
     W_RIGHT, MPI_ERR_RMA_SYNC, 0},
    {"target rank = size", F_RMW, MPIX_RMW_SUM, MPI_INT, false, 1, false, 0, E_ALL, W_SIZE, MPI_ERR_RANK, 0},
    /* not misuse: docs/MPIX.md makes it a no-op that succeeds */
    {"target MPI_PROC_NULL", F_RMW, MPIX_RMW_SUM, MPI_INT, false, 1, false, 0, E_ALL, W_PROC_NULL,
     MPI_SUCCESS, 0},
};
#define NMISUSE ((int)(sizeof misuses / sizeof misuses[0]))

static const char *class_name(int cls)
{
    switch (cls) {
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_OP: return "MPI_ERR_OP";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER";
    case MPI_ERR_ASSERT: return "MPI_ERR_ASSERT";
    default: return check_class_name(cls);
    }
}

static void run_misuse(const struct ctx *c, const struct misuse *u, MPI_Datatype pair)
{
    if ((u->fam == F_RMW2 && !rmw2_on) || (u->epoch == E_NONE && !u->assert && !no_epoch_on)) return;
    int init[4] = {11, -12, 13, -14}, a[2] = {5, 6}, b[2] = {7, 8}, res[4], after[4];
    memset(res, POISON, sizeof res);
    check_where("misuse: %s", u->what);
    put_bytes(c, c->right, MISUSE_OFF, init, sizeof init);
    MPI_Datatype dt = u->derived ? pair : u->dt;
    int target = u->whom == W_RIGHT ? c->right : u->whom == W_SIZE ? c->n : MPI_PROC_NULL;
    open_epoch(u->epoch, c->right, c->win);
    const void *op1 = u->null_operand ? NULL : a;
    int rc = u->fam == F_RMW
                 ? MPIX_Rmw(op1, u->count, dt, res, target, MISUSE_OFF, u->assert, u->op, c->win)
                 : MPIX_Rmw2(op1, u->count, dt, b, res, target, MISUSE_OFF, u->assert, u->op, c->win);
    close_epoch(u->epoch, c->right, c->win);
    int cls = check_error_class(rc);
    CHECK(cls == u->want || (u->also && cls == u->also), "%s: returned class %s (%d), expected %s (%d)",
          u->what, class_name(cls), cls, class_name(u->want), u->want);
    get_bytes(c, c->right, MISUSE_OFF, after, sizeof after);
    CHECK(memcmp(after, init, sizeof init) == 0, "%s: the target changed", u->what);
    CHECK(fill_mismatch((unsigned char *)res, sizeof res, POISON) == sizeof res,
          "%s: the result buffer changed", u->what);
}

static void misuse_all(const struct ctx *c)
{
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < NMISUSE; i++) run_misuse(c, &misuses[i], pair);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&pair);
}

/* ------------------------------------------------------------------ main */

static void report_path(const struct ctx *c)
{
    int flag = -1;
    CHECK_MPI(MPIX_Rmw_native(c->win, &flag));
    if (c->rank == 0) {
        printf("MPIX_Rmw path: %s\n", flag == 1 ? "native" : flag == 0 ? "fallback" : "?");
        fflush(stdout);
    }
    const char *want = getenv("MPIX_EXPECT_NATIVE");
    if (want && (strcmp(want, "0") == 0 || strcmp(want, "1") == 0))
        CHECK(flag == atoi(want), "MPIX_Rmw_native says %d, MPIX_EXPECT_NATIVE=%s", flag, want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120);
    struct ctx c = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.n);
    c.right = (c.rank + 1) % c.n;
    void *base = NULL;
    if (!CHECK(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &c.win) == MPI_SUCCESS,
               "MPI_Win_allocate failed"))
        return check_finish();
    MPI_Win_set_errhandler(c.win, MPI_ERRORS_RETURN);
    unsigned char **bufs[5] = {&c.init, &c.opnd, &c.opnd2, &c.result, &c.after};
    for (int i = 0; i < 5; i++) *bufs[i] = malloc(MAX_CASES * SLOT);

    report_path(&c);
    const char *skip = getenv("MPIX_TEST_SKIP");
    rmw2_on = !skip || !strstr(skip, "rmw2");
    no_epoch_on = !skip || !strstr(skip, "no-epoch");
    if (skip && c.rank == 0) printf("not tested here: %s (MPIX_TEST_SKIP)\n", skip);
    for (int m = 0; m < NMODES; m++)
        for (int t = 0; t < NTYPES; t++) run_type(&c, &modes[m], &types[t]);

    static const struct extreme extremes[] = {
        {MPI_INT64_T, MPIX_RMW2_COMP_SWAP_LT, MPI_MIN},
        {MPI_INT64_T, MPIX_RMW2_COMP_SWAP_GT, MPI_MAX},
        {MPI_UINT32_T, MPIX_RMW2_COMP_SWAP_GT, MPI_MAX},
        {MPI_DOUBLE, MPIX_RMW2_COMP_SWAP_LT, MPI_MIN},
    };
    if (rmw2_on) {
        one_winner(&c);
        for (size_t i = 0; i < sizeof extremes / sizeof extremes[0]; i++) keep_best(&c, &extremes[i]);
        disjoint_masks(&c);
    }
    counter(&c);
    misuse_all(&c);

    CHECK_MPI(MPI_Win_free(&c.win));
    for (int i = 0; i < 5; i++) free(*bufs[i]);
    return check_finish();
}
