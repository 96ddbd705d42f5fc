#include "rmw_types.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

/* Predefined datatypes the ops distinguish; every other named type is RMW_OTHER. */
static int lookup(MPI_Datatype dt, rmw_type *out)
{
    static const struct {
        MPI_Datatype dt;
        rmw_kind kind;
    } table[] = {
        {MPI_SIGNED_CHAR, RMW_SIGNED},
        {MPI_SHORT, RMW_SIGNED},
        {MPI_INT, RMW_SIGNED},
        {MPI_LONG, RMW_SIGNED},
        {MPI_LONG_LONG, RMW_SIGNED},
        {MPI_INT8_T, RMW_SIGNED},
        {MPI_INT16_T, RMW_SIGNED},
        {MPI_INT32_T, RMW_SIGNED},
        {MPI_INT64_T, RMW_SIGNED},
        {MPI_AINT, RMW_SIGNED},
        {MPI_OFFSET, RMW_SIGNED},
        {MPI_COUNT, RMW_SIGNED},
        {MPI_UNSIGNED_CHAR, RMW_UNSIGNED},
        {MPI_UNSIGNED_SHORT, RMW_UNSIGNED},
        {MPI_UNSIGNED, RMW_UNSIGNED},
        {MPI_UNSIGNED_LONG, RMW_UNSIGNED},
        {MPI_UNSIGNED_LONG_LONG, RMW_UNSIGNED},
        {MPI_UINT8_T, RMW_UNSIGNED},
        {MPI_UINT16_T, RMW_UNSIGNED},
        {MPI_UINT32_T, RMW_UNSIGNED},
        {MPI_UINT64_T, RMW_UNSIGNED},
        {MPI_FLOAT, RMW_FLOATING},
        {MPI_DOUBLE, RMW_FLOATING},
        {MPI_LONG_DOUBLE, RMW_LONG_DOUBLE},
        {MPI_C_FLOAT_COMPLEX, RMW_COMPLEX},
        {MPI_C_DOUBLE_COMPLEX, RMW_COMPLEX},
        {MPI_C_LONG_DOUBLE_COMPLEX, RMW_COMPLEX},
        {MPI_C_BOOL, RMW_LOGICAL},
        {MPI_BYTE, RMW_BYTE},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].dt == dt) {
            out->kind = table[i].kind;
            return 1;
        }
    return 0;
}

int rmw_type_of(MPI_Datatype dt, rmw_type *out)
{
    /* A program calls with one or two datatypes over and over: the last answer of this
     * thread is kept (a predefined datatype's handle never changes meaning). */
    static _Thread_local MPI_Datatype last_dt = MPI_DATATYPE_NULL;
    static _Thread_local rmw_type last;
    if (MPI_DATATYPE_NULL != dt && dt == last_dt) {
        *out = last;
        return MPI_SUCCESS;
    }
    int ni, na, nd, combiner, size;
    if (MPI_DATATYPE_NULL == dt || MPI_SUCCESS != MPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) ||
        MPI_COMBINER_NAMED != combiner)
        return MPI_ERR_TYPE;
    MPI_Type_size(dt, &size);
    out->size = (size_t)size;
    if (!lookup(dt, out)) out->kind = RMW_OTHER;
    last_dt = dt;
    last = *out;
    return MPI_SUCCESS;
}

static bool is_integer(const rmw_type *t)
{
    return RMW_SIGNED == t->kind || RMW_UNSIGNED == t->kind;
}

int rmw_op_check(int op, const rmw_type *t)
{
    const bool integer = is_integer(t);
    switch (op) {
    case MPIX_RMW_INC:
    case MPIX_RMW_SUM:
    case MPIX_RMW_PROD:
        return integer || RMW_FLOATING == t->kind || RMW_LONG_DOUBLE == t->kind || RMW_COMPLEX == t->kind
                   ? MPI_SUCCESS
                   : MPI_ERR_OP;
    case MPIX_RMW_LAND:
    case MPIX_RMW_LOR:
    case MPIX_RMW_LXOR: return integer || RMW_LOGICAL == t->kind ? MPI_SUCCESS : MPI_ERR_OP;
    case MPIX_RMW_BAND:
    case MPIX_RMW_BOR:
    case MPIX_RMW_BXOR: return integer || RMW_BYTE == t->kind ? MPI_SUCCESS : MPI_ERR_OP;
    case MPIX_RMW_SWAP: return MPI_SUCCESS;
    }
    return MPI_ERR_OP;
}

int rmw2_op_check(int op, const rmw_type *t)
{
    const bool number = is_integer(t) || RMW_FLOATING == t->kind;
    switch (op) {
    case MPIX_RMW2_MASK_SWAP: return is_integer(t) || RMW_BYTE == t->kind ? MPI_SUCCESS : MPI_ERR_OP;
    case MPIX_RMW2_COMP_SWAP_E:
    case MPIX_RMW2_COMP_SWAP_NE:
        return number || RMW_LOGICAL == t->kind || RMW_BYTE == t->kind ? MPI_SUCCESS : MPI_ERR_OP;
    case MPIX_RMW2_COMP_SWAP_LT:
    case MPIX_RMW2_COMP_SWAP_LE:
    case MPIX_RMW2_COMP_SWAP_GE:
    case MPIX_RMW2_COMP_SWAP_GT: return number ? MPI_SUCCESS : MPI_ERR_OP;
    }
    return MPI_ERR_OP;
}

MPI_Op rmw_mpi_op(MPIX_Rmw_op op)
{
    switch (op) {
    case MPIX_RMW_INC:
    case MPIX_RMW_SUM: return MPI_SUM;
    case MPIX_RMW_PROD: return MPI_PROD;
    case MPIX_RMW_LAND: return MPI_LAND;
    case MPIX_RMW_LOR: return MPI_LOR;
    case MPIX_RMW_LXOR: return MPI_LXOR;
    case MPIX_RMW_BAND: return MPI_BAND;
    case MPIX_RMW_BOR: return MPI_BOR;
    case MPIX_RMW_BXOR: return MPI_BXOR;
    case MPIX_RMW_SWAP: return MPI_REPLACE;
    }
    return MPI_OP_NULL;
}

static void fill_ones(const rmw_type *t, void *dst, int count)
{
    unsigned char one[32] = {0}; /* an element; a complex one is (1, 0) */
    const size_t part = RMW_COMPLEX == t->kind ? t->size / 2 : t->size;
    if (RMW_FLOATING == t->kind || RMW_LONG_DOUBLE == t->kind || RMW_COMPLEX == t->kind) {
        const float f = 1;
        const double d = 1;
        const long double ld = 1;
        if (sizeof f == part)
            memcpy(one, &f, sizeof f);
        else if (sizeof d == part)
            memcpy(one, &d, sizeof d);
        else
            memcpy(one, &ld, sizeof ld);
    } else {
        const uint64_t v = 1;
        const uint16_t probe = 1;
        const bool little = *(const unsigned char *)&probe;
        memcpy(one, (const unsigned char *)&v + (little ? 0 : sizeof v - t->size), t->size);
    }
    for (int i = 0; i < count; i++) memcpy((char *)dst + (size_t)i * t->size, one, t->size);
}

const void *rmw_ones(const rmw_type *t, int count)
{
    /* Per (kind, size): the latest buffer and its capacity; earlier ones live on in
     * `retired` for calls still in flight. */
    static struct ones {
        rmw_kind kind;
        size_t size;
        void *buf;
        int cap;
    } cache[16];
    static struct retired {
        struct retired *next;
    } * retired;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    struct ones *slot = NULL;
    for (size_t i = 0; i < sizeof cache / sizeof cache[0] && !slot; i++)
        if (!cache[i].buf || (cache[i].kind == t->kind && cache[i].size == t->size)) slot = &cache[i];
    const void *out = NULL;
    if (slot && slot->buf && slot->cap >= count) {
        out = slot->buf;
    } else if (slot) {
        const int cap = slot->cap * 2 > count ? slot->cap * 2 : count;
        struct retired *b = malloc(sizeof *b + (size_t)cap * t->size);
        if (b) {
            b->next = retired;
            retired = b;
            fill_ones(t, b + 1, cap);
            *slot = (struct ones){t->kind, t->size, b + 1, cap};
            out = slot->buf;
        }
    }
    pthread_mutex_unlock(&lock);
    return out;
}

MPI_Datatype rmw_bits_type(const rmw_type *t)
{
    switch (t->size) {
    case 1: return MPI_UINT8_T;
    case 2: return MPI_UINT16_T;
    case 4: return MPI_UINT32_T;
    case 8: return MPI_UINT64_T;
    default: return MPI_DATATYPE_NULL;
    }
}

/* -1, 0, 1 as the comperand c is below, equal to or above the target t; 2 when they do
 * not compare (a NaN). */
#define COMPARE(T)                                            \
    do {                                                      \
        T tv, cv;                                             \
        memcpy(&tv, target, sizeof tv);                       \
        memcpy(&cv, compare, sizeof cv);                      \
        return cv < tv ? -1 : cv > tv ? 1 : cv == tv ? 0 : 2; \
    } while (0)

static int compare_values(const rmw_type *t, const void *target, const void *compare)
{
    if (RMW_FLOATING == t->kind && sizeof(float) == t->size) COMPARE(float);
    if (RMW_FLOATING == t->kind) COMPARE(double);
    if (RMW_SIGNED == t->kind) {
        switch (t->size) {
        case 1: COMPARE(int8_t);
        case 2: COMPARE(int16_t);
        case 4: COMPARE(int32_t);
        default: COMPARE(int64_t);
        }
    }
    switch (t->size) { /* unsigned, logical, byte */
    case 1: COMPARE(uint8_t);
    case 2: COMPARE(uint16_t);
    case 4: COMPARE(uint32_t);
    default: COMPARE(uint64_t);
    }
}

void rmw2_element(MPIX_Rmw2_op op, const rmw_type *t, const void *target, const void *value,
                  const void *compare, void *out)
{
    if (MPIX_RMW2_MASK_SWAP == op) {
        const unsigned char *tb = target, *vb = value, *mb = compare;
        unsigned char *ob = out;
        for (size_t i = 0; i < t->size; i++) ob[i] = (unsigned char)((vb[i] & mb[i]) | (tb[i] & ~mb[i]));
        return;
    }
    const int c = compare_values(t, target, compare);
    bool store = false;
    switch (op) {
    case MPIX_RMW2_COMP_SWAP_LT: store = -1 == c; break;
    case MPIX_RMW2_COMP_SWAP_LE: store = -1 == c || 0 == c; break;
    case MPIX_RMW2_COMP_SWAP_E: store = 0 == c; break;
    case MPIX_RMW2_COMP_SWAP_GE: store = 1 == c || 0 == c; break;
    case MPIX_RMW2_COMP_SWAP_GT: store = 1 == c; break;
    case MPIX_RMW2_COMP_SWAP_NE: store = 0 != c; break;
    default: break;
    }
    memmove(out, store ? value : target, t->size);
}
