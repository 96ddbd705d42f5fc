/*
 * Typed values in window memory for the self-checking tests that compute expected
 * results themselves (acc_ops.c, mpix_rmw.c, rma_random.c): floating-point and index parts of an
 * element loaded and stored as long double, and integers cut to a type's width.
 */
#ifndef OSC_FABRIC_TEST_VALUES_H
#define OSC_FABRIC_TEST_VALUES_H

#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The C type of a floating-point element (or a complex one's parts), or of a pair
 * type's index. */
enum real { R_NONE, R_FLOAT, R_DOUBLE, R_LDOUBLE, R_SHORT, R_INT, R_LONG };

static inline long double load_real(enum real r, const unsigned char *p)
{
    switch (r) {
    case R_FLOAT: {
        float x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    case R_DOUBLE: {
        double x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    case R_LDOUBLE: {
        long double x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    case R_SHORT: {
        short x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    case R_INT: {
        int x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    case R_LONG: {
        long x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    default: return 0;
    }
}

static inline void store_real(enum real r, unsigned char *p, long double v)
{
    switch (r) {
    case R_FLOAT: {
        float x = (float)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case R_DOUBLE: {
        double x = (double)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case R_LDOUBLE: {
        /* x87's long double is 10 value bytes in 16: the padding gets zeros, not the
         * stack's bytes (valgrind follows them into the reductions). */
        const long double x = v;
        const size_t value_bytes = LDBL_MANT_DIG == 64 ? 10 : sizeof x;
        memset(p, 0, sizeof x);
        memcpy(p, &x, value_bytes);
        break;
    }
    case R_SHORT: {
        short x = (short)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case R_INT: {
        int x = (int)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case R_LONG: {
        long x = (long)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    default: break;
    }
}

static inline size_t real_size(enum real r)
{
    switch (r) {
    case R_FLOAT: return sizeof(float);
    case R_DOUBLE: return sizeof(double);
    case R_LDOUBLE: return sizeof(long double);
    default: return 0;
    }
}

/* x cut to `width` bits, sign-extended when is_signed. */
static inline uint64_t sign_extend(uint64_t x, unsigned width, bool is_signed)
{
    if (width >= 64) return x;
    const uint64_t m = ((uint64_t)1 << width) - 1;
    x &= m;
    if (is_signed && (x >> (width - 1)) & 1) x |= ~m;
    return x;
}

#endif
