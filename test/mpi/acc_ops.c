/*
 * acc_ops: every (operation, predefined C datatype) pair the MPI standard
 * allows for MPI_Accumulate, MPI_Get_accumulate and MPI_Fetch_and_op.
 *
 * Table driven: `types` describes each datatype (size, how to load and
 * store one element, which reduction group it belongs to), `ops` lists the
 * operations, and allowed() is the standard's op/datatype rule (MPI-3.1
 * 5.9.2 plus REPLACE for every predefined type, and NO_OP for every
 * predefined type in the fetching calls only).
 *
 * One round per datatype.  Every allowed (op, call, count) combination gets
 * its own window slot, so one round issues all of them:
 *   region 0 (at rank 0): every rank applies its operand, concurrently;
 *   region 1 (at every rank): only the left neighbour applies its operand.
 * Operands and initial values are exactly representable and chosen so that
 * no order of application rounds or overflows (signed); unsigned sums wrap
 * on purpose.  Float values carry a low-order bit ("fine") that a type of
 * lower precision cannot hold, so a long double done in double is caught.
 *
 * Checks: every call returns MPI_SUCCESS; region 1 ends at
 * init (op) operand and a fetch from it returns init; region 0 at rank 0
 * ends at a value some serial order of the n operations produces, and the
 * n fetched old values are those of one such order (checked per element,
 * by search over the orders); for integer SUM with every rank adding 1 the
 * sorted fetched values are exactly init, init+1, ..., init+n-1; bytes
 * after the `count` elements (window and result buffers) are untouched and
 * region 0 at ranks other than 0 is untouched.  Counts 1 and 3 (fetch and
 * op: count 1).  Operations are issued under MPI_Win_lock_all, completed
 * with MPI_Win_flush, and the targets look after a barrier.
 */
#include "check.h"
#include "test_values.h"

#include <float.h>
#include <stdlib.h>

#define MAX_ELEM 32 /* largest element: long double complex */
#define MAX_COUNT 3
#define SLOT (MAX_ELEM * (MAX_COUNT + 1)) /* count elements + guard */
#define MAX_SLOTS 128
#define POISON 0xA5
#define MAX_DFS_RANKS 8 /* order search beyond this: final only */

/* ---------------------------------------------------------------- types */

enum kind { K_SINT, K_UINT, K_FLOAT, K_COMPLEX, K_PAIR };
enum group { G_CINT, G_MULTI, G_LOGICAL, G_BYTE, G_FLOAT, G_COMPLEX, G_PAIR, G_OTHER };
/* Scalar representation of a float / complex component / pair value. */

typedef struct {
    float v;
    int i;
} float_int;
typedef struct {
    double v;
    int i;
} double_int;
typedef struct {
    long v;
    int i;
} long_int;
typedef struct {
    int v;
    int i;
} int_int;
typedef struct {
    short v;
    int i;
} short_int;
typedef struct {
    long double v;
    int i;
} long_double_int;

struct tdesc {
    const char *name;
    MPI_Datatype dt;
    enum group group;
    enum kind kind;
    size_t size;    /* C size; must equal the MPI extent */
    enum real real; /* FLOAT / COMPLEX component, PAIR value */
    size_t idx_off; /* PAIR: offset of the int index */
};

#define INT_T(n, d, c, k, g)             \
    {                                    \
        n, d, g, k, sizeof(c), R_NONE, 0 \
    }
#define REAL_T(n, d, c, k, g, r)    \
    {                               \
        n, d, g, k, sizeof(c), r, 0 \
    }
#define PAIR_T(n, d, s, r)                                 \
    {                                                      \
        n, d, G_PAIR, K_PAIR, sizeof(s), r, offsetof(s, i) \
    }

static struct tdesc types[] = {
    INT_T("MPI_INT8_T", MPI_INT8_T, int8_t, K_SINT, G_CINT),
    INT_T("MPI_INT16_T", MPI_INT16_T, int16_t, K_SINT, G_CINT),
    INT_T("MPI_INT32_T", MPI_INT32_T, int32_t, K_SINT, G_CINT),
    INT_T("MPI_INT64_T", MPI_INT64_T, int64_t, K_SINT, G_CINT),
    INT_T("MPI_UINT8_T", MPI_UINT8_T, uint8_t, K_UINT, G_CINT),
    INT_T("MPI_UINT16_T", MPI_UINT16_T, uint16_t, K_UINT, G_CINT),
    INT_T("MPI_UINT32_T", MPI_UINT32_T, uint32_t, K_UINT, G_CINT),
    INT_T("MPI_UINT64_T", MPI_UINT64_T, uint64_t, K_UINT, G_CINT),
    INT_T("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, signed char, K_SINT, G_CINT),
    INT_T("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, unsigned char, K_UINT, G_CINT),
    INT_T("MPI_SHORT", MPI_SHORT, short, K_SINT, G_CINT),
    INT_T("MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, unsigned short, K_UINT, G_CINT),
    INT_T("MPI_INT", MPI_INT, int, K_SINT, G_CINT),
    INT_T("MPI_UNSIGNED", MPI_UNSIGNED, unsigned, K_UINT, G_CINT),
    INT_T("MPI_LONG", MPI_LONG, long, K_SINT, G_CINT),
    INT_T("MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, unsigned long, K_UINT, G_CINT),
    INT_T("MPI_LONG_LONG", MPI_LONG_LONG, long long, K_SINT, G_CINT),
    INT_T("MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, unsigned long long, K_UINT, G_CINT),
    INT_T("MPI_AINT", MPI_AINT, MPI_Aint, K_SINT, G_MULTI),
    INT_T("MPI_OFFSET", MPI_OFFSET, MPI_Offset, K_SINT, G_MULTI),
    INT_T("MPI_COUNT", MPI_COUNT, MPI_Count, K_SINT, G_MULTI),
    INT_T("MPI_C_BOOL", MPI_C_BOOL, _Bool, K_UINT, G_LOGICAL),
    INT_T("MPI_BYTE", MPI_BYTE, unsigned char, K_UINT, G_BYTE),
    INT_T("MPI_CHAR", MPI_CHAR, char, K_UINT, G_OTHER),
    INT_T("MPI_WCHAR", MPI_WCHAR, wchar_t, K_UINT, G_OTHER),
    REAL_T("MPI_FLOAT", MPI_FLOAT, float, K_FLOAT, G_FLOAT, R_FLOAT),
    REAL_T("MPI_DOUBLE", MPI_DOUBLE, double, K_FLOAT, G_FLOAT, R_DOUBLE),
    REAL_T("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, long double, K_FLOAT, G_FLOAT, R_LDOUBLE),
    REAL_T("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, float[2], K_COMPLEX, G_COMPLEX, R_FLOAT),
    REAL_T("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, double[2], K_COMPLEX, G_COMPLEX, R_DOUBLE),
    REAL_T("MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, long double[2], K_COMPLEX, G_COMPLEX,
           R_LDOUBLE),
    PAIR_T("MPI_FLOAT_INT", MPI_FLOAT_INT, float_int, R_FLOAT),
    PAIR_T("MPI_DOUBLE_INT", MPI_DOUBLE_INT, double_int, R_DOUBLE),
    PAIR_T("MPI_LONG_INT", MPI_LONG_INT, long_int, R_LONG),
    PAIR_T("MPI_2INT", MPI_2INT, int_int, R_INT),
    PAIR_T("MPI_SHORT_INT", MPI_SHORT_INT, short_int, R_SHORT),
    PAIR_T("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, long_double_int, R_LDOUBLE),
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

/* ------------------------------------------------------------------ ops */

enum opid {
    O_SUM,
    O_PROD,
    O_MIN,
    O_MAX,
    O_LAND,
    O_LOR,
    O_LXOR,
    O_BAND,
    O_BOR,
    O_BXOR,
    O_REPLACE,
    O_NO_OP,
    O_MINLOC,
    O_MAXLOC,
    NOPS
};

static struct {
    const char *name;
    MPI_Op op;
} ops[NOPS];

static void init_ops(void)
{
    static const char *const names[NOPS] = {"MPI_SUM",     "MPI_PROD",  "MPI_MIN",    "MPI_MAX",   "MPI_LAND",
                                            "MPI_LOR",     "MPI_LXOR",  "MPI_BAND",   "MPI_BOR",   "MPI_BXOR",
                                            "MPI_REPLACE", "MPI_NO_OP", "MPI_MINLOC", "MPI_MAXLOC"};
    const MPI_Op handles[NOPS] = {MPI_SUM,     MPI_PROD,  MPI_MIN,    MPI_MAX,   MPI_LAND,
                                  MPI_LOR,     MPI_LXOR,  MPI_BAND,   MPI_BOR,   MPI_BXOR,
                                  MPI_REPLACE, MPI_NO_OP, MPI_MINLOC, MPI_MAXLOC};
    for (int o = 0; o < NOPS; o++) {
        ops[o].name = names[o];
        ops[o].op = handles[o];
    }
}

/* The calls under test.  GACC1 is MPI_Get_accumulate SUM where every rank
 * adds 1 (integer types), for the sorted-fetch check. */
enum mode { M_ACC, M_GACC, M_FOP, M_GACC1, NMODES };
static const char *const mode_names[NMODES] = {"MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op",
                                               "MPI_Get_accumulate(+1 each)"};

/* The standard's op / datatype rule. */
static bool allowed(int op, const struct tdesc *t, int mode)
{
    enum group g = t->group;
    bool integer = g == G_CINT || g == G_MULTI;
    if (mode == M_GACC1) return op == O_SUM && integer;
    switch (op) {
    case O_REPLACE: return true;
    case O_NO_OP: return mode != M_ACC; /* not defined for MPI_Accumulate */
    default: break;
    }
    switch (op) {
    case O_MIN:
    case O_MAX: return integer || g == G_FLOAT;
    case O_SUM:
    case O_PROD: return integer || g == G_FLOAT || g == G_COMPLEX;
    case O_LAND:
    case O_LOR:
    case O_LXOR: return g == G_CINT || g == G_LOGICAL;
    case O_BAND:
    case O_BOR:
    case O_BXOR: return integer || g == G_BYTE;
    case O_MINLOC:
    case O_MAXLOC: return g == G_PAIR;
    default: return false;
    }
}

/* --------------------------------------------------------------- values */

/* One element, whatever its type.  Integer kinds use `bits` (sign-extended
 * for signed types); float uses re; complex re, im; pairs re and idx. */
typedef struct {
    uint64_t bits;
    long double re, im;
    int idx;
} val_t;

static unsigned width_bits(const struct tdesc *t)
{
    return 8u * (unsigned)t->size;
}

/* Truncates to the type's width, sign-extending signed types. */
static uint64_t norm(const struct tdesc *t, uint64_t x)
{
    return sign_extend(x, width_bits(t), t->kind == K_SINT);
}

static uint64_t load_uint(const unsigned char *p, size_t w)
{
    switch (w) {
    case 1: {
        uint8_t x;
        memcpy(&x, p, 1);
        return x;
    }
    case 2: {
        uint16_t x;
        memcpy(&x, p, 2);
        return x;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, p, 4);
        return x;
    }
    default: {
        uint64_t x;
        memcpy(&x, p, 8);
        return x;
    }
    }
}

static void store_uint(unsigned char *p, size_t w, uint64_t v)
{
    switch (w) {
    case 1: {
        uint8_t x = (uint8_t)v;
        memcpy(p, &x, 1);
        break;
    }
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default: memcpy(p, &v, 8); break;
    }
}

static val_t load(const struct tdesc *t, const unsigned char *p)
{
    val_t v = {0, 0, 0, 0};
    switch (t->kind) {
    case K_SINT:
    case K_UINT: v.bits = norm(t, load_uint(p, t->size)); break;
    case K_FLOAT: v.re = load_real(t->real, p); break;
    case K_COMPLEX:
        v.re = load_real(t->real, p);
        v.im = load_real(t->real, p + real_size(t->real));
        break;
    case K_PAIR:
        v.re = load_real(t->real, p);
        memcpy(&v.idx, p + t->idx_off, sizeof v.idx);
        break;
    }
    return v;
}

static void store(const struct tdesc *t, unsigned char *p, val_t v)
{
    switch (t->kind) {
    case K_SINT:
    case K_UINT: store_uint(p, t->size, v.bits); break;
    case K_FLOAT: store_real(t->real, p, v.re); break;
    case K_COMPLEX:
        store_real(t->real, p, v.re);
        store_real(t->real, p + real_size(t->real), v.im);
        break;
    case K_PAIR:
        memset(p, 0, t->size);
        store_real(t->real, p, v.re);
        memcpy(p + t->idx_off, &v.idx, sizeof v.idx);
        break;
    }
}

static bool veq(const struct tdesc *t, val_t a, val_t b)
{
    switch (t->kind) {
    case K_SINT:
    case K_UINT: return a.bits == b.bits;
    case K_FLOAT: return a.re == b.re;
    case K_COMPLEX: return a.re == b.re && a.im == b.im;
    case K_PAIR: return a.re == b.re && a.idx == b.idx;
    }
    return false;
}

static void vfmt(const struct tdesc *t, val_t v, char *buf, size_t len)
{
    switch (t->kind) {
    case K_SINT: snprintf(buf, len, "%lld", (long long)v.bits); break;
    case K_UINT:
        snprintf(buf, len, "%llu(0x%llx)", (unsigned long long)v.bits, (unsigned long long)v.bits);
        break;
    case K_FLOAT: snprintf(buf, len, "%.21Lg", v.re); break;
    case K_COMPLEX: snprintf(buf, len, "(%.21Lg,%.21Lg)", v.re, v.im); break;
    case K_PAIR: snprintf(buf, len, "(%.21Lg,%d)", v.re, v.idx); break;
    }
}

/* a < b in the type's integer order */
static bool int_lt(const struct tdesc *t, uint64_t a, uint64_t b)
{
    return t->kind == K_SINT ? (int64_t)a < (int64_t)b : a < b;
}

/* The element result of `op` applied to target value a and origin value b. */
static val_t apply(const struct tdesc *t, int op, val_t a, val_t b)
{
    if (op == O_NO_OP) return a;
    if (op == O_REPLACE) return b;
    val_t r = a;
    switch (t->kind) {
    case K_SINT:
    case K_UINT: {
        uint64_t x = a.bits, y = b.bits, z = 0;
        switch (op) {
        case O_SUM: z = x + y; break;
        case O_PROD: z = x * y; break;
        case O_MIN: z = int_lt(t, y, x) ? y : x; break;
        case O_MAX: z = int_lt(t, x, y) ? y : x; break;
        case O_LAND: z = (x != 0) && (y != 0); break;
        case O_LOR: z = (x != 0) || (y != 0); break;
        case O_LXOR: z = (x != 0) != (y != 0); break;
        case O_BAND: z = x & y; break;
        case O_BOR: z = x | y; break;
        case O_BXOR: z = x ^ y; break;
        default: break;
        }
        r.bits = norm(t, z);
        break;
    }
    case K_FLOAT:
        switch (op) {
        case O_SUM: r.re = a.re + b.re; break;
        case O_PROD: r.re = a.re * b.re; break;
        case O_MIN: r.re = b.re < a.re ? b.re : a.re; break;
        case O_MAX: r.re = b.re > a.re ? b.re : a.re; break;
        default: break;
        }
        break;
    case K_COMPLEX:
        if (op == O_SUM) {
            r.re = a.re + b.re;
            r.im = a.im + b.im;
        } else if (op == O_PROD) {
            r.re = a.re * b.re - a.im * b.im;
            r.im = a.re * b.im + a.im * b.re;
        }
        break;
    case K_PAIR: {
        bool take_b;
        if (a.re == b.re) {
            r.idx = a.idx < b.idx ? a.idx : b.idx;
            break;
        }
        take_b = op == O_MINLOC ? b.re < a.re : b.re > a.re;
        if (take_b) r = b;
        break;
    }
    }
    return r;
}

/* 2^-(mantissa digits - 8): representable next to values up to 2^6 in the
 * type, but not in any narrower floating type. */
static long double fine_of(enum real r)
{
    int mant = r == R_FLOAT     ? FLT_MANT_DIG
               : r == R_DOUBLE  ? DBL_MANT_DIG
               : r == R_LDOUBLE ? LDBL_MANT_DIG
                                : 0;
    if (mant == 0) return 0;
    long double f = 1;
    for (int k = 0; k < mant - 8; k++) f /= 2;
    return f;
}

static uint64_t pow2(int e)
{
    return e <= 0 ? 1 : (uint64_t)1 << e;
}

static uint64_t random_bits(int tix, int op, int who, int i, int salt)
{
    uint32_t seed =
        pattern_seed((uint32_t)tix, (uint32_t)op * 8u + (uint32_t)salt, (uint32_t)(who + 1), (uint32_t)i);
    uint64_t x = 0;
    for (int b = 0; b < 8; b++) x |= (uint64_t)pattern_byte(seed, (size_t)b) << (8 * b);
    return x;
}

/* Integer-kind values.  who == -1: the initial target value. */
static val_t gen_int(const struct tdesc *t, int tix, int op, int mode, int who, int i, int n)
{
    (void)n;
    val_t v = {0, 0, 0, 0};
    int w = (int)width_bits(t);
    bool sgn = t->kind == K_SINT;
    bool init = who < 0;
    int rr = who % 4;
    int64_t x = 0;
    uint64_t u = 0;
    bool use_u = false;

    if (mode == M_GACC1) {
        op = O_SUM;
        if (!init) {
            v.bits = 1;
            return v;
        }
    }
    switch (op) {
    case O_SUM:
        if (sgn) {
            int64_t s = (int64_t)pow2(w - 8);
            if (init) {
                const int64_t iv[3] = {10, -2, 12 * s};
                x = iv[i];
            } else {
                x = ((rr + i) % 2 ? -1 : 1) * (int64_t)(rr * 3 + i + 1) * s + rr + 1;
            }
        } else {
            uint64_t s = pow2(w - 8);
            use_u = true;
            if (init) {
                const uint64_t iv[3] = {~(uint64_t)2, 5, pow2(w - 1)};
                u = iv[i];
            } else {
                u = (uint64_t)(rr * 3 + i + 1) * s + (uint64_t)rr + 1;
            }
        }
        break;
    case O_PROD: {
        int64_t base = w <= 8 ? 3 : (int64_t)3 << (w - 12);
        if (init) {
            x = i == 1 ? (sgn ? -base : base + 1) : base + i;
        } else if (who >= 4) {
            x = 1;
        } else {
            const int64_t sf[4] = {2, -1, 3, 1}, uf[4] = {2, 1, 3, 1};
            x = (sgn ? sf : uf)[(rr + i) % 4];
        }
        break;
    }
    case O_MIN:
    case O_MAX:
        if (sgn) {
            int64_t s = (int64_t)pow2(w - 5);
            x = init ? (2 - i) * s : ((who * 7 + i * 5) % 11 - 5) * s;
        } else {
            uint64_t s = pow2(w - 4);
            use_u = true;
            u = init ? (uint64_t)(4 + i) * s : (uint64_t)((who * 7 + i * 5) % 11) * s;
        }
        break;
    case O_LAND:
    case O_LOR:
    case O_LXOR: {
        /* non-zero values include one with only a high bit set */
        uint64_t hi = t->group == G_LOGICAL ? 1 : pow2(w - 2);
        use_u = true;
        if (init) {
            const uint64_t iv[3] = {hi, 1, 0};
            u = iv[i];
        } else {
            u = (who + i) % 3 == 2 ? 0 : ((who + i) % 2 ? 1 : hi);
        }
        break;
    }
    case O_BAND:
    case O_BOR:
    case O_BXOR: {
        uint64_t a = random_bits(tix, op, who, i, 0);
        uint64_t b = random_bits(tix, op, who, i, 1);
        use_u = true;
        u = init ? a : op == O_BAND ? (a | b) : op == O_BOR ? (a & b) : a;
        break;
    }
    case O_REPLACE:
        if (t->group == G_LOGICAL)
            x = init ? 0 : 1; /* only two values; only one origin per
                                   element can be told apart anyway */
        else
            x = init ? 100 + i : who * 10 + i + 1;
        break;
    case O_NO_OP: x = t->group == G_LOGICAL ? (i % 2 == 0) : init ? 42 + i : 7; break;
    default: break;
    }
    v.bits = norm(t, use_u ? u : (uint64_t)x);
    return v;
}

static val_t gen_float(const struct tdesc *t, int op, int who, int i, int n)
{
    val_t v = {0, 0, 0, 0};
    long double f = fine_of(t->real);
    bool init = who < 0;
    int rr = who % 4;
    bool cplx = t->kind == K_COMPLEX;
    bool pair = t->kind == K_PAIR;
    bool preal = t->real == R_FLOAT || t->real == R_DOUBLE || t->real == R_LDOUBLE;

    switch (op) {
    case O_SUM:
        if (init) {
            const long double re[3] = {1.25L + f, -3.5L, 7.75L};
            const long double im[3] = {0.5L, -1.0L, 2.0L + f};
            v.re = re[i];
            v.im = cplx ? im[i] : 0;
        } else {
            v.re = ((rr + i) % 2 ? -1 : 1) * (rr + 1) * 0.5L + ((rr + i) % 2 ? f : 0);
            v.im = cplx ? (rr - i) * 0.25L : 0;
        }
        break;
    case O_PROD:
        if (cplx) {
            if (init) {
                const long double re[3] = {1.25L + f, -1.0L, 3.0L};
                const long double im[3] = {0.5L, 2.0L, f};
                v.re = re[i];
                v.im = im[i];
            } else if (who >= 4) {
                v.re = 1;
            } else {
                const long double re[4] = {1, 2, 0, 0.5L};
                const long double im[4] = {1, 0, -1, -0.5L};
                v.re = re[(rr + i) % 4];
                v.im = im[(rr + i) % 4];
            }
        } else {
            const long double iv[3] = {1.25L + f, -0.75L, 2.0L + f};
            const long double fac[4] = {2, -0.5L, 1.5L, 3};
            v.re = init ? iv[i] : who >= 4 ? 1 : fac[(rr + i) % 4];
        }
        break;
    case O_MIN:
    case O_MAX: {
        const long double iv[3] = {0.125L, -1.0L + f, 0};
        v.re = init ? iv[i] : ((who * 7 + i * 5) % 11 - 5) * 0.25L + (who % 2 ? f : 0);
        break;
    }
    case O_MINLOC:
    case O_MAXLOC:
        /* values repeat across ranks (ties: smallest index wins); the index
         * falls with the rank so the tie rule is really exercised */
        if (init) {
            v.re = 1 + (preal ? 0.25L : 0);
            v.idx = i == 1 ? 0 : 100 + i;
        } else {
            int base = (who + 2 * i) % 3;
            v.re = base + (preal ? 0.25L + (base == 2 ? f : 0) : 0);
            v.idx = (n - who) * 10 + i;
        }
        break;
    case O_REPLACE:
        if (init) {
            v.re = -7 - i;
            v.im = cplx ? -i : 0;
            v.idx = -1;
        } else {
            v.re = who + 1 + (pair && !preal ? 0 : i * 0.5L + f);
            v.im = cplx ? -(i + 0.5L) : 0;
            v.idx = who * 10 + i;
        }
        break;
    case O_NO_OP:
        v.re = init ? 4 + i + (pair && !preal ? 0 : f) : 99;
        v.im = cplx ? i : 0;
        v.idx = init ? 7 + i : 1;
        break;
    default: break;
    }
    return v;
}

static val_t gen(int tix, int op, int mode, int who, int i, int n)
{
    const struct tdesc *t = &types[tix];
    if (t->kind == K_SINT || t->kind == K_UINT) return gen_int(t, tix, op, mode, who, i, n);
    return gen_float(t, op, who, i, n);
}

/* -------------------------------------------------------------- checking */

/*
 * Is there an order of the n origins such that applying their operands to
 * `cur` one after the other ends at `final`, with origin o seeing the value
 * fetched[o] just before its own operation (fetched may be NULL)?
 */
static bool serial_ok(const struct tdesc *t, int op, val_t cur, const val_t *opnd, const val_t *fetched,
                      int n, unsigned used, val_t final)
{
    if (used == (1u << n) - 1) return veq(t, cur, final);
    for (int o = 0; o < n; o++) {
        if (used & (1u << o)) continue;
        if (fetched && !veq(t, fetched[o], cur)) continue;
        if (serial_ok(t, op, apply(t, op, cur, opnd[o]), opnd, fetched, n, used | (1u << o), final))
            return true;
    }
    return false;
}

struct slot {
    int op, mode, count;
};

struct ctx {
    int rank, n, left, right;
    bool unified;
    MPI_Win win;
    unsigned char *base;        /* window memory */
    unsigned char *opbuf;       /* origin operands, per slot */
    unsigned char *res0, *res1; /* fetched from region 0 / region 1 */
    unsigned char *gathered;    /* rank 0: every rank's res0 */
};

static unsigned char *region(const struct ctx *c, int which, int k)
{
    return c->base + ((size_t)which * MAX_SLOTS + (size_t)k) * SLOT;
}

static MPI_Aint region_disp(int which, int k)
{
    return (MPI_Aint)(((size_t)which * MAX_SLOTS + (size_t)k) * SLOT);
}

static void slot_name(char *buf, size_t len, int tix, const struct slot *s)
{
    snprintf(buf, len, "%s %s %s count %d", mode_names[s->mode], ops[s->op].name, types[tix].name, s->count);
}

/* Writes initial values (and poison after them) into one region slot. */
static void fill_init(int tix, const struct slot *s, unsigned char *p, int n)
{
    const struct tdesc *t = &types[tix];
    memset(p, POISON, SLOT);
    for (int i = 0; i < s->count; i++) store(t, p + (size_t)i * t->size, gen(tix, s->op, s->mode, -1, i, n));
}

static bool guard_ok(const struct tdesc *t, const struct slot *s, const unsigned char *p, const char *what,
                     const char *name)
{
    size_t off = (size_t)s->count * t->size;
    size_t bad = fill_mismatch(p + off, SLOT - off, POISON);
    return CHECK(bad == SLOT - off, "%s: %s: byte %zu after the %d element(s) changed to 0x%02x", name, what,
                 bad, s->count, bad < SLOT - off ? p[off + bad] : 0);
}

static int build_slots(int tix, struct slot *sl)
{
    int ns = 0;
    for (int mode = 0; mode < NMODES; mode++)
        for (int op = 0; op < NOPS; op++) {
            if (!allowed(op, &types[tix], mode)) continue;
            for (int count = 1; count <= MAX_COUNT; count += 2) {
                if (mode == M_FOP && count > 1) continue;
                if (ns < MAX_SLOTS) sl[ns++] = (struct slot){op, mode, count};
            }
        }
    return ns;
}

static void issue(const struct ctx *c, int tix, const struct slot *s, int k)
{
    MPI_Datatype dt = types[tix].dt;
    MPI_Op op = ops[s->op].op;
    unsigned char *org = c->opbuf + (size_t)k * SLOT;
    const int targets[2] = {0, c->right};
    unsigned char *res[2] = {c->res0 + (size_t)k * SLOT, c->res1 + (size_t)k * SLOT};
    char name[160];
    slot_name(name, sizeof name, tix, s);

    for (int which = 0; which < 2; which++) {
        MPI_Aint disp = region_disp(which, k);
        int rc;
        switch (s->mode) {
        case M_ACC:
            rc = MPI_Accumulate(org, s->count, dt, targets[which], disp, s->count, dt, op, c->win);
            break;
        case M_FOP: rc = MPI_Fetch_and_op(org, res[which], dt, targets[which], disp, op, c->win); break;
        default:
            rc = MPI_Get_accumulate(org, s->count, dt, res[which], s->count, dt, targets[which], disp,
                                    s->count, dt, op, c->win);
            break;
        }
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING] = "";
            int len = 0;
            MPI_Error_string(rc, msg, &len);
            CHECK(false, "%s to rank %d region %d returned %s", name, targets[which], which, msg);
        }
    }
}

/* Origin side: the fetch from region 1 (only this origin touches it). */
static void check_origin(const struct ctx *c, int tix, const struct slot *s, int k)
{
    const struct tdesc *t = &types[tix];
    if (s->mode == M_ACC) return;
    char name[160], a[96], b[96];
    slot_name(name, sizeof name, tix, s);
    for (int which = 0; which < 2; which++) {
        const unsigned char *r = (which ? c->res1 : c->res0) + (size_t)k * SLOT;
        guard_ok(t, s, r, which ? "result buffer (neighbour)" : "result buffer (rank 0)", name);
        if (which == 0) continue;
        for (int i = 0; i < s->count; i++) {
            val_t got = load(t, r + (size_t)i * t->size);
            val_t want = gen(tix, s->op, s->mode, -1, i, c->n);
            if (!veq(t, got, want)) {
                vfmt(t, got, a, sizeof a);
                vfmt(t, want, b, sizeof b);
            }
            CHECK(veq(t, got, want),
                  "%s: fetched element %d from neighbour %d is %s, expected the "
                  "initial %s",
                  name, i, c->right, a, b);
        }
    }
}

/* Target side: region 1 got the left neighbour's operation; region 0 at
 * ranks other than 0 is untouched. */
static void check_target(const struct ctx *c, int tix, const struct slot *s, int k)
{
    const struct tdesc *t = &types[tix];
    char name[160], a[96], b[96];
    slot_name(name, sizeof name, tix, s);
    const unsigned char *p = region(c, 1, k);
    guard_ok(t, s, p, "window region (neighbour)", name);
    for (int i = 0; i < s->count; i++) {
        val_t init = gen(tix, s->op, s->mode, -1, i, c->n);
        val_t want = apply(t, s->op, init, gen(tix, s->op, s->mode, c->left, i, c->n));
        val_t got = load(t, p + (size_t)i * t->size);
        if (!veq(t, got, want)) {
            vfmt(t, got, a, sizeof a);
            vfmt(t, want, b, sizeof b);
        }
        CHECK(veq(t, got, want),
              "%s: element %d at rank %d from origin %d is %s, "
              "expected %s",
              name, i, c->rank, c->left, a, b);
    }
    if (c->rank != 0) {
        unsigned char expect[SLOT];
        fill_init(tix, s, expect, c->n);
        p = region(c, 0, k);
        bool same = true;
        for (int i = 0; i < s->count; i++)
            same = same && veq(t, load(t, p + (size_t)i * t->size), load(t, expect + (size_t)i * t->size));
        size_t off = (size_t)s->count * t->size;
        same = same && memcmp(p + off, expect + off, SLOT - off) == 0;
        CHECK(same, "%s: region meant for rank 0 changed at rank %d", name, c->rank);
    }
}

/* Rank 0: region 0 and all fetched values are those of a serial order. */
static void check_rank0(const struct ctx *c, int tix, const struct slot *s, int k, int nslots)
{
    const struct tdesc *t = &types[tix];
    int n = c->n;
    char name[160];
    slot_name(name, sizeof name, tix, s);
    const unsigned char *p = region(c, 0, k);
    guard_ok(t, s, p, "window region (rank 0)", name);

    for (int i = 0; i < s->count; i++) {
        val_t init = gen(tix, s->op, s->mode, -1, i, n);
        val_t final = load(t, p + (size_t)i * t->size);
        val_t opnd[MAX_DFS_RANKS], fetched[MAX_DFS_RANKS];
        bool fetches = s->mode != M_ACC;
        if (n > MAX_DFS_RANKS) {
            /* too many orders to search: commutative ops only, final value */
            val_t v = init;
            for (int o = 0; o < n; o++) v = apply(t, s->op, v, gen(tix, s->op, s->mode, o, i, n));
            if (s->op != O_REPLACE) CHECK(veq(t, v, final), "%s: element %d final value wrong", name, i);
            continue;
        }
        for (int o = 0; o < n; o++) {
            opnd[o] = gen(tix, s->op, s->mode, o, i, n);
            if (fetches)
                fetched[o] = load(
                    t, c->gathered + ((size_t)o * (size_t)nslots + (size_t)k) * SLOT + (size_t)i * t->size);
        }
        bool ok = serial_ok(t, s->op, init, opnd, fetches ? fetched : NULL, n, 0, final);
        if (!ok) {
            char line[1024], v[96];
            size_t len = 0;
            vfmt(t, init, v, sizeof v);
            len += (size_t)snprintf(line + len, sizeof line - len, "init %s", v);
            vfmt(t, final, v, sizeof v);
            len += (size_t)snprintf(line + len, sizeof line - len, " final %s;", v);
            for (int o = 0; o < n && len < sizeof line - 200; o++) {
                vfmt(t, opnd[o], v, sizeof v);
                len += (size_t)snprintf(line + len, sizeof line - len, " rank %d operand %s", o, v);
                if (fetches) {
                    vfmt(t, fetched[o], v, sizeof v);
                    len += (size_t)snprintf(line + len, sizeof line - len, " fetched %s", v);
                }
            }
            CHECK(false,
                  "%s: element %d at rank 0 matches no serial order of "
                  "the %d operations: %s",
                  name, i, n, line);
        } else {
            CHECK(true, "serial order");
        }
        if (s->mode == M_GACC1) {
            /* sorted fetched values are init, init+1, ..., init+n-1 */
            uint64_t f[MAX_DFS_RANKS];
            for (int o = 0; o < n; o++) f[o] = norm(t, fetched[o].bits - init.bits); /* offset */
            for (int a = 1; a < n; a++)
                for (int b = a; b > 0 && f[b - 1] > f[b]; b--) {
                    uint64_t tmp = f[b];
                    f[b] = f[b - 1];
                    f[b - 1] = tmp;
                }
            bool seq = true;
            for (int o = 0; o < n; o++) seq = seq && f[o] == norm(t, (uint64_t)o);
            CHECK(seq,
                  "%s: element %d: fetched values minus the initial are "
                  "not exactly 0..%d",
                  name, i, n - 1);
        }
    }
}

/* --------------------------------------------------------------- rounds */

static void run_type(struct ctx *c, int tix)
{
    const struct tdesc *t = &types[tix];
    struct slot sl[MAX_SLOTS];
    int ns = build_slots(tix, sl);

    if (t->dt == MPI_DATATYPE_NULL) {
        if (c->rank == 0) printf("note: %s is MPI_DATATYPE_NULL here, skipped\n", t->name);
        return;
    }
    MPI_Aint lb = -1, extent = -1;
    MPI_Type_get_extent(t->dt, &lb, &extent);
    if (!CHECK(lb == 0 && (size_t)extent == t->size, "%s: MPI lb %ld extent %ld, C size %zu; type skipped",
               t->name, (long)lb, (long)extent, t->size))
        return;

    /* operands and poisoned result buffers */
    for (int k = 0; k < ns; k++) {
        unsigned char *o = c->opbuf + (size_t)k * SLOT;
        memset(o, 0, SLOT);
        for (int i = 0; i < sl[k].count; i++)
            store(t, o + (size_t)i * t->size, gen(tix, sl[k].op, sl[k].mode, c->rank, i, c->n));
    }
    memset(c->res0, POISON, (size_t)ns * SLOT);
    memset(c->res1, POISON, (size_t)ns * SLOT);

    /* initial values in both regions of every slot */
    if (c->unified)
        MPI_Win_lock_all(0, c->win);
    else
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, c->rank, 0, c->win);
    for (int k = 0; k < ns; k++) {
        fill_init(tix, &sl[k], region(c, 0, k), c->n);
        fill_init(tix, &sl[k], region(c, 1, k), c->n);
    }
    if (c->unified) {
        MPI_Win_sync(c->win);
    } else {
        MPI_Win_unlock(c->rank, c->win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!c->unified) MPI_Win_lock_all(0, c->win);

    for (int k = 0; k < ns; k++) issue(c, tix, &sl[k], k);
    CHECK_MPI(MPI_Win_flush(0, c->win));
    if (c->right != 0) CHECK_MPI(MPI_Win_flush(c->right, c->win));

    for (int k = 0; k < ns; k++) check_origin(c, tix, &sl[k], k);

    if (c->unified) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(c->win);
    } else {
        MPI_Win_unlock_all(c->win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, c->rank, 0, c->win);
    }
    MPI_Gather(c->res0, ns * SLOT, MPI_BYTE, c->gathered, ns * SLOT, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (int k = 0; k < ns; k++) {
        check_target(c, tix, &sl[k], k);
        if (c->rank == 0) check_rank0(c, tix, &sl[k], k, ns);
    }
    if (c->unified)
        MPI_Win_unlock_all(c->win);
    else
        MPI_Win_unlock(c->rank, c->win);
    /* nobody re-initialises while a slower rank still reads */
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_watchdog(120); /* a stalled rank says where (check.h) */
    init_ops();

    struct ctx c;
    memset(&c, 0, sizeof c);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.n);
    c.left = (c.rank + c.n - 1) % c.n;
    c.right = (c.rank + 1) % c.n;

    size_t bytes = (size_t)2 * MAX_SLOTS * SLOT;
    int rc = MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c.base, &c.win);
    if (!CHECK(rc == MPI_SUCCESS, "MPI_Win_allocate failed")) return check_finish();
    MPI_Win_set_errhandler(c.win, MPI_ERRORS_RETURN);

    int *model = NULL, flag = 0;
    MPI_Win_get_attr(c.win, MPI_WIN_MODEL, &model, &flag);
    c.unified = flag && *model == MPI_WIN_UNIFIED;

    c.opbuf = malloc((size_t)MAX_SLOTS * SLOT);
    c.res0 = malloc((size_t)MAX_SLOTS * SLOT);
    c.res1 = malloc((size_t)MAX_SLOTS * SLOT);
    c.gathered = malloc((size_t)MAX_SLOTS * SLOT * (size_t)c.n);

    for (int tix = 0; tix < NTYPES; tix++) run_type(&c, tix);

    CHECK_MPI(MPI_Win_free(&c.win));
    free(c.opbuf);
    free(c.res0);
    free(c.res1);
    free(c.gathered);
    return check_finish();
}
