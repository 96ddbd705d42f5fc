/*
 * rma_random helpers: the deterministic random number generator every rank seeds
 * identically, the basic element types and reduction operations the tester uses, and
 * the element arithmetic the local model applies (the same arithmetic the MPI library
 * must perform at the target).
 */
#ifndef RMA_RANDOM_UTIL_H
#define RMA_RANDOM_UTIL_H

#include <mpi.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* xoshiro256** seeded through splitmix64: same sequence on every rank and every run. */
typedef struct {
    uint64_t s[4];
} rr_rng;

static inline uint64_t rr_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void rr_seed(rr_rng *r, uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9e3779b97f4a7c15ull + b * 0xd1b54a32d192ed03ull + 1;
    for (int i = 0; i < 4; i++) r->s[i] = rr_splitmix(&x);
}

static inline uint64_t rr_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t rr_next(rr_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rr_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rr_rotl(s[3], 45);
    return out;
}

/* Uniform in [0, n) (n == 0 gives 0); the modulo bias is irrelevant here. */
static inline long rr_below(rr_rng *r, long n)
{
    return n <= 0 ? 0 : (long)(rr_next(r) % (uint64_t)n);
}
static inline long rr_range(rr_rng *r, long lo, long hi)
{
    return lo + rr_below(r, hi - lo + 1);
}
static inline bool rr_pct(rr_rng *r, int percent)
{
    return rr_below(r, 100) < percent;
}

/* ---- basic element types ---- */
enum { BT_SHORT, BT_INT, BT_LONG, BT_ULONG, BT_DOUBLE, BT_BYTE, BT_N };

static const char *const bt_name[BT_N] = {"short", "int", "long", "unsigned long", "double", "byte"};
static const int bt_size[BT_N] = {sizeof(short),         sizeof(int),    sizeof(long),
                                  sizeof(unsigned long), sizeof(double), 1};

static inline MPI_Datatype bt_mpi(int bt)
{
    switch (bt) {
    case BT_SHORT: return MPI_SHORT;
    case BT_INT: return MPI_INT;
    case BT_LONG: return MPI_LONG;
    case BT_ULONG: return MPI_UNSIGNED_LONG;
    case BT_DOUBLE: return MPI_DOUBLE;
    default: return MPI_BYTE;
    }
}

static inline bool bt_integer(int bt)
{
    return bt <= BT_ULONG;
}

/* ---- reduction operations ---- */
enum { OP_SUM, OP_MAX, OP_MIN, OP_BOR, OP_BXOR, OP_BAND, OP_REPLACE, OP_NO_OP, OP_CAS, OP_N };

static const char *const op_name[OP_N] = {"SUM",  "MAX",     "MIN",   "BOR", "BXOR",
                                          "BAND", "REPLACE", "NO_OP", "CAS"};

static inline MPI_Op op_mpi(int op)
{
    switch (op) {
    case OP_SUM: return MPI_SUM;
    case OP_MAX: return MPI_MAX;
    case OP_MIN: return MPI_MIN;
    case OP_BOR: return MPI_BOR;
    case OP_BXOR: return MPI_BXOR;
    case OP_BAND: return MPI_BAND;
    case OP_NO_OP: return MPI_NO_OP;
    default: return MPI_REPLACE;
    }
}

/* Integer arithmetic goes through the unsigned type so wrap-around is defined here and
 * matches what the target computes on two's-complement machines. */
#define RR_INT_APPLY(T, UT, dst, src, op)                  \
    do {                                                   \
        T a_, b_;                                          \
        memcpy(&a_, dst, sizeof a_);                       \
        memcpy(&b_, src, sizeof b_);                       \
        switch (op) {                                      \
        case OP_SUM: a_ = (T)(UT)((UT)a_ + (UT)b_); break; \
        case OP_MAX: a_ = a_ > b_ ? a_ : b_; break;        \
        case OP_MIN: a_ = a_ < b_ ? a_ : b_; break;        \
        case OP_BOR: a_ = (T)(a_ | b_); break;             \
        case OP_BXOR: a_ = (T)(a_ ^ b_); break;            \
        case OP_BAND: a_ = (T)(a_ & b_); break;            \
        case OP_REPLACE: a_ = b_; break;                   \
        default: break;                                    \
        }                                                  \
        memcpy(dst, &a_, sizeof a_);                       \
    } while (0)

/* dst = dst (op) src for one element of type bt. */
static inline void elem_apply(int bt, int op, unsigned char *dst, const unsigned char *src)
{
    switch (bt) {
    case BT_SHORT: RR_INT_APPLY(short, unsigned short, dst, src, op); break;
    case BT_INT: RR_INT_APPLY(int, unsigned int, dst, src, op); break;
    case BT_LONG: RR_INT_APPLY(long, unsigned long, dst, src, op); break;
    case BT_ULONG: RR_INT_APPLY(unsigned long, unsigned long, dst, src, op); break;
    case BT_DOUBLE: {
        double a, b;
        memcpy(&a, dst, sizeof a);
        memcpy(&b, src, sizeof b);
        if (op == OP_SUM)
            a = a + b;
        else if (op == OP_MAX)
            a = a > b ? a : b;
        else if (op == OP_MIN)
            a = a < b ? a : b;
        else if (op == OP_REPLACE)
            a = b;
        memcpy(dst, &a, sizeof a);
        break;
    }
    default:
        if (op == OP_REPLACE) *dst = *src;
        break;
    }
}

/* Printable value of one element (plus its bytes, so bit-level damage shows). */
static inline void elem_str(int bt, const unsigned char *p, char *buf, size_t len)
{
    switch (bt) {
    case BT_SHORT: {
        short v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, len, "%d", v);
        break;
    }
    case BT_INT: {
        int v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, len, "%d", v);
        break;
    }
    case BT_LONG: {
        long v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, len, "%ld", v);
        break;
    }
    case BT_ULONG: {
        unsigned long v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, len, "%lu", v);
        break;
    }
    case BT_DOUBLE: {
        double v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, len, "%.17g", v);
        break;
    }
    default: snprintf(buf, len, "0x%02x", p[0]); break;
    }
}

/* A double the model can add exactly in any order: finite, integral, far below 2^53. */
static inline bool dbl_nice(const unsigned char *p)
{
    double d;
    memcpy(&d, p, sizeof d);
    return isfinite(d) && d == floor(d) && fabs(d) <= 0x1p41;
}

/* Kinds of generated values; each draws exactly one number from the generator, so the
 * schedule never depends on the values themselves. */
enum { V_ANY, V_SMALL, V_POS, V_WIDE };

static inline void gen_value(rr_rng *r, int bt, int kind, unsigned char *out)
{
    uint64_t x = rr_next(r);
    long small = (long)(x % 1000) - 499; /* [-499, 500] */
    if (small == 0) small = 500;
    long pos = (long)(x % 50) + 1;                  /* [1, 50] */
    long wide = (long)(x >> 20) - (long)(1l << 42); /* about +-2^42, integral */
    if (wide == 0) wide = 1;
    switch (bt) {
    case BT_SHORT: {
        short v = kind == V_SMALL ? (short)small : kind == V_POS ? (short)pos : (short)x;
        memcpy(out, &v, sizeof v);
        break;
    }
    case BT_INT: {
        int v = kind == V_SMALL ? (int)small : kind == V_POS ? (int)pos : (int)(uint32_t)x;
        memcpy(out, &v, sizeof v);
        break;
    }
    case BT_LONG: {
        long v = kind == V_SMALL ? small : kind == V_POS ? pos : (long)x;
        memcpy(out, &v, sizeof v);
        break;
    }
    case BT_ULONG: {
        unsigned long v = kind == V_SMALL ? (unsigned long)(small < 0 ? -small : small)
                          : kind == V_POS ? (unsigned long)pos
                                          : (unsigned long)x;
        memcpy(out, &v, sizeof v);
        break;
    }
    case BT_DOUBLE: {
        double v = kind == V_SMALL  ? (double)small
                   : kind == V_POS  ? (double)pos
                   : kind == V_WIDE ? (double)wide
                                    : (double)((long)(x >> 34) - (1l << 29));
        memcpy(out, &v, sizeof v);
        break;
    }
    default: *out = (unsigned char)x; break;
    }
}

/* A value guaranteed different from `start` and from every other tag: start XOR a
 * nonzero even mask (distinct tags give distinct masks).  For doubles, start + tag. */
static inline void gen_distinct(int bt, const unsigned char *start, long tag, unsigned char *out)
{
    memcpy(out, start, (size_t)bt_size[bt]);
    if (bt == BT_DOUBLE) {
        double d;
        memcpy(&d, start, sizeof d);
        d += (double)tag;
        memcpy(out, &d, sizeof d);
        return;
    }
    uint64_t mask = (uint64_t)tag << 1;
    for (int i = 0; i < bt_size[bt]; i++) out[i] ^= (unsigned char)(mask >> (8 * i));
}

#endif /* RMA_RANDOM_UTIL_H */
