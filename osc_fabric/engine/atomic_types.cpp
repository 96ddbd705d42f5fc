#include "atomic_types.h"

#include "reduce_ops.h"

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <new>

namespace oscf {
namespace {

// Value/index pairs laid out like the structs MPI defines for MPI_FLOAT_INT & co.;
// Fortran's MPI_2REAL and MPI_2DOUBLE_PRECISION index with the value's type.
template <class V, class I = int>
struct Pair {
    V value;
    I index;
};
using ShortInt = Pair<short>;

enum class Class { integer, floating, complex, logical, byte, pair };

struct TypeInfo {
    size_t size;
    Class cls;
    int fi_type;  // -1: no libfabric datatype
};

// Indexed by oscf_type.
const TypeInfo kTypes[OSCF_TYPE_COUNT] = {
    {1, Class::integer, FI_INT8},
    {1, Class::integer, FI_UINT8},
    {2, Class::integer, FI_INT16},
    {2, Class::integer, FI_UINT16},
    {4, Class::integer, FI_INT32},
    {4, Class::integer, FI_UINT32},
    {8, Class::integer, FI_INT64},
    {8, Class::integer, FI_UINT64},
    {sizeof(float), Class::floating, FI_FLOAT},
    {sizeof(double), Class::floating, FI_DOUBLE},
    {sizeof(long double), Class::floating, FI_LONG_DOUBLE},
    {sizeof(std::complex<float>), Class::complex, FI_FLOAT_COMPLEX},
    {sizeof(std::complex<double>), Class::complex, FI_DOUBLE_COMPLEX},
    {sizeof(std::complex<long double>), Class::complex, FI_LONG_DOUBLE_COMPLEX},
    // C _Bool is one byte holding 0 or 1: libfabric's logical ops on uint8 agree.
    {1, Class::logical, FI_UINT8},
    {1, Class::byte, FI_UINT8},
    {sizeof(Pair<float>), Class::pair, -1},
    {sizeof(Pair<double>), Class::pair, -1},
    {sizeof(Pair<long>), Class::pair, -1},
    {sizeof(Pair<int>), Class::pair, -1},
    {sizeof(ShortInt), Class::pair, -1},
    {sizeof(Pair<long double>), Class::pair, -1},
    {sizeof(Pair<float, float>), Class::pair, -1},
    {sizeof(Pair<double, double>), Class::pair, -1},
};
static_assert(sizeof kTypes / sizeof kTypes[0] == OSCF_TYPE_COUNT, "one entry per oscf_type");

const int kFiOps[OSCF_OP_COUNT] = {
    FI_SUM,  FI_PROD, FI_MIN,  FI_MAX,          FI_LAND,        FI_LOR, FI_LXOR,
    FI_BAND, FI_BOR,  FI_BXOR, FI_ATOMIC_WRITE, FI_ATOMIC_READ, -1,     -1,
};

// Every element goes through a copy: the operands need not be aligned for T (records
// in a batch are 8-byte aligned, and a window's user may place a long double pair at
// any displacement), and vector loads of a misaligned pair fault. The copy is a byte
// buffer, not a T: a long double's padding then goes back to the target as it was,
// where a T local lets the compiler keep only the value and store stack bytes.
template <class T, class F>
void each_element(void *target, const void *origin, size_t n, F f) {
    auto *t = static_cast<char *>(target);
    const auto *o = static_cast<const char *>(origin);
    for (size_t i = 0; i < n; ++i, t += sizeof(T), o += sizeof(T)) {
        alignas(T) unsigned char tb[sizeof(T)], ob[sizeof(T)];
        std::memcpy(tb, t, sizeof tb);
        std::memcpy(ob, o, sizeof ob);
        f(*std::launder(reinterpret_cast<T *>(tb)), *std::launder(reinterpret_cast<const T *>(ob)));
        std::memcpy(t, tb, sizeof tb);
    }
}

// Calls f with op as a compile-time constant, so that element loops hold no switch: an
// accumulate of many elements (a derived datatype's, a large array's) is a plain loop.
template <class F>
void with_op(oscf_op op, F f) {
    switch (op) {
    case OSCF_OP_SUM: return f(std::integral_constant<oscf_op, OSCF_OP_SUM>{});
    case OSCF_OP_PROD: return f(std::integral_constant<oscf_op, OSCF_OP_PROD>{});
    case OSCF_OP_MIN: return f(std::integral_constant<oscf_op, OSCF_OP_MIN>{});
    case OSCF_OP_MAX: return f(std::integral_constant<oscf_op, OSCF_OP_MAX>{});
    case OSCF_OP_LAND: return f(std::integral_constant<oscf_op, OSCF_OP_LAND>{});
    case OSCF_OP_LOR: return f(std::integral_constant<oscf_op, OSCF_OP_LOR>{});
    case OSCF_OP_LXOR: return f(std::integral_constant<oscf_op, OSCF_OP_LXOR>{});
    case OSCF_OP_BAND: return f(std::integral_constant<oscf_op, OSCF_OP_BAND>{});
    case OSCF_OP_BOR: return f(std::integral_constant<oscf_op, OSCF_OP_BOR>{});
    case OSCF_OP_BXOR: return f(std::integral_constant<oscf_op, OSCF_OP_BXOR>{});
    default: return;  // REPLACE and NO_OP are apply_reduction's; the rest leave t alone
    }
}

// Integers, float and double with both sides aligned, the usual case, skip
// each_element's copies: a typed loop the compiler can vectorize.
template <class T, class F>
void each_number(void *target, const void *origin, size_t n, F f) {
    static_assert(std::is_integral_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double>);
    if (reinterpret_cast<uintptr_t>(target) % alignof(T) || reinterpret_cast<uintptr_t>(origin) % alignof(T))
        return each_element<T>(target, origin, n, f);
    // Distinct buffers (an origin inside the very elements it updates is erroneous in
    // MPI), which lets the compiler vectorize the loop without runtime overlap checks.
    T *__restrict t = static_cast<T *>(target);
    const T *__restrict o = static_cast<const T *>(origin);
    for (size_t i = 0; i < n; ++i) f(t[i], o[i]);
}

template <class T>
void reduce_integer(oscf_op op, void *target, const void *origin, size_t n) {
    with_op(op, [&](auto k) {
        each_number<T>(target, origin, n,
                       [](T &t, const T &o) { t = combine_integer(decltype(k)::value, t, o); });
    });
}

template <class T>
void reduce_floating(oscf_op op, void *target, const void *origin, size_t n) {
    with_op(op, [&](auto k) {
        if constexpr (std::is_same_v<T, long double>)  // x87 values: each_element's byte copies
            each_element<T>(target, origin, n,
                            [](T &t, const T &o) { t = combine_floating(decltype(k)::value, t, o); });
        else
            each_number<T>(target, origin, n,
                           [](T &t, const T &o) { t = combine_floating(decltype(k)::value, t, o); });
    });
}

template <class T>
void reduce_complex(oscf_op op, void *target, const void *origin, size_t n) {
    each_element<T>(target, origin, n, [op](T &t, const T &o) {
        if (op == OSCF_OP_SUM)
            t += o;
        else if (op == OSCF_OP_PROD)
            t *= o;
    });
}

// A pair's value and index, never the padding beside them (copy_elements). Bytes, as a
// long double's x87 load may change what it stores.
template <class P>
void take_pair(P &t, const P &o) {
    std::memcpy(&t.value, &o.value, sizeof t.value);
    t.index = o.index;
}

// MINLOC/MAXLOC keep the better value; on a tie, the smaller index (MPI's definition).
template <class P>
void reduce_pair(oscf_op op, void *target, const void *origin, size_t n) {
    each_element<P>(target, origin, n, [op](P &t, const P &o) {
        bool better = op == OSCF_OP_MINLOC ? o.value < t.value : o.value > t.value;
        if (better)
            take_pair(t, o);
        else if (o.value == t.value && o.index < t.index)
            t.index = o.index;
    });
}

template <class T>
void swap_all(oscf_swap s, void *target, const void *value, const void *compare, void *result, size_t n) {
    auto *t = static_cast<char *>(target);
    const auto *v = static_cast<const char *>(value);
    const auto *c = static_cast<const char *>(compare);
    auto *r = static_cast<char *>(result);
    for (size_t i = 0; i < n; ++i) {
        T tv, vv, cv;
        std::memcpy(&tv, t + i * sizeof(T), sizeof tv);
        std::memcpy(&vv, v + i * sizeof(T), sizeof vv);
        std::memcpy(&cv, c + i * sizeof(T), sizeof cv);
        if (r) std::memcpy(r + i * sizeof(T), &tv, sizeof tv);
        const T nv = swap_element(s, tv, vv, cv);
        std::memcpy(t + i * sizeof(T), &nv, sizeof nv);
    }
}

const int kFiSwaps[OSCF_SWAP_COUNT] = {FI_CSWAP,    FI_CSWAP_NE, FI_CSWAP_LT, FI_CSWAP_LE,
                                       FI_CSWAP_GT, FI_CSWAP_GE, FI_MSWAP};

}  // namespace

size_t type_size(oscf_type t) {
    return kTypes[t].size;
}
bool valid_type(int t) {
    return t >= 0 && t < OSCF_TYPE_COUNT;
}
bool valid_op(int op) {
    return op >= 0 && op < OSCF_OP_COUNT;
}
int fi_type_of(oscf_type t) {
    return kTypes[t].fi_type;
}
int fi_op_of(oscf_op op) {
    return kFiOps[op];
}
bool valid_swap(int s) {
    return s >= 0 && s < OSCF_SWAP_COUNT;
}
int fi_swap_of(oscf_swap s) {
    return kFiSwaps[s];
}

bool op_allowed(oscf_op op, oscf_type t) {
    if (op == OSCF_OP_REPLACE || op == OSCF_OP_NO_OP) return true;
    switch (kTypes[t].cls) {
    case Class::integer: return op <= OSCF_OP_BXOR;
    case Class::floating:
        return op == OSCF_OP_SUM || op == OSCF_OP_PROD || op == OSCF_OP_MIN || op == OSCF_OP_MAX;
    case Class::complex: return op == OSCF_OP_SUM || op == OSCF_OP_PROD;
    case Class::logical: return op == OSCF_OP_LAND || op == OSCF_OP_LOR || op == OSCF_OP_LXOR;
    case Class::byte: return op == OSCF_OP_BAND || op == OSCF_OP_BOR || op == OSCF_OP_BXOR;
    case Class::pair: return op == OSCF_OP_MINLOC || op == OSCF_OP_MAXLOC;
    }
    return false;
}

bool cas_allowed(oscf_type t) {
    Class c = kTypes[t].cls;
    return c == Class::integer || c == Class::logical || c == Class::byte;
}

// No long double: no CPU compares and swaps 16 bytes, so on-node peers could not do it
// atomically without a lock that native and emulated swaps elsewhere would not take.
bool swap_allowed(oscf_swap s, oscf_type t) {
    const Class c = kTypes[t].cls;
    const bool number = c == Class::integer || t == OSCF_TYPE_FLOAT || t == OSCF_TYPE_DOUBLE;
    if (s == OSCF_SWAP_MASK) return c == Class::integer || c == Class::byte;
    if (s == OSCF_SWAP_EQ || s == OSCF_SWAP_NE) return number || c == Class::logical || c == Class::byte;
    return valid_swap(s) && number;
}

void copy_elements(oscf_type t, void *dst, const void *src, size_t n) {
    auto pairs = [&](auto *tag) {
        using P = std::remove_pointer_t<decltype(tag)>;
        each_element<P>(dst, src, n, [](P &d, const P &s) { take_pair(d, s); });
    };
    switch (t) {
    case OSCF_TYPE_FLOAT_INT: return pairs(static_cast<Pair<float> *>(nullptr));
    case OSCF_TYPE_DOUBLE_INT: return pairs(static_cast<Pair<double> *>(nullptr));
    case OSCF_TYPE_LONG_INT: return pairs(static_cast<Pair<long> *>(nullptr));
    case OSCF_TYPE_2INT: return pairs(static_cast<Pair<int> *>(nullptr));
    case OSCF_TYPE_SHORT_INT: return pairs(static_cast<ShortInt *>(nullptr));
    case OSCF_TYPE_LONG_DOUBLE_INT: return pairs(static_cast<Pair<long double> *>(nullptr));
    case OSCF_TYPE_2FLOAT: return pairs(static_cast<Pair<float, float> *>(nullptr));
    case OSCF_TYPE_2DOUBLE: return pairs(static_cast<Pair<double, double> *>(nullptr));
    default: std::memmove(dst, src, n * type_size(t));
    }
}

void copy_element_bytes(oscf_type t, void *dst, const void *src, size_t bytes) {
    const size_t size = valid_type(t) ? type_size(t) : 0;
    if (size != 0 && bytes % size == 0)
        copy_elements(t, dst, src, bytes / size);
    else
        std::memcpy(dst, src, bytes);
}

void apply_reduction(oscf_op op, oscf_type t, void *target, const void *origin, size_t n) {
    if (op == OSCF_OP_NO_OP) return;
    // A copy, bytes as they are: element by element it was the slow part of packed
    // puts (byte records, packed.h), and an x87 load and store of a long double may
    // change what a bitwise copy keeps.
    if (op == OSCF_OP_REPLACE && valid_type(t)) return copy_elements(t, target, origin, n);
    switch (t) {
    case OSCF_TYPE_INT8: return reduce_integer<int8_t>(op, target, origin, n);
    case OSCF_TYPE_UINT8:
    case OSCF_TYPE_BYTE:
    case OSCF_TYPE_BOOL: return reduce_integer<uint8_t>(op, target, origin, n);
    case OSCF_TYPE_INT16: return reduce_integer<int16_t>(op, target, origin, n);
    case OSCF_TYPE_UINT16: return reduce_integer<uint16_t>(op, target, origin, n);
    case OSCF_TYPE_INT32: return reduce_integer<int32_t>(op, target, origin, n);
    case OSCF_TYPE_UINT32: return reduce_integer<uint32_t>(op, target, origin, n);
    case OSCF_TYPE_INT64: return reduce_integer<int64_t>(op, target, origin, n);
    case OSCF_TYPE_UINT64: return reduce_integer<uint64_t>(op, target, origin, n);
    case OSCF_TYPE_FLOAT: return reduce_floating<float>(op, target, origin, n);
    case OSCF_TYPE_DOUBLE: return reduce_floating<double>(op, target, origin, n);
    case OSCF_TYPE_LONG_DOUBLE: return reduce_floating<long double>(op, target, origin, n);
    case OSCF_TYPE_FLOAT_COMPLEX: return reduce_complex<std::complex<float>>(op, target, origin, n);
    case OSCF_TYPE_DOUBLE_COMPLEX: return reduce_complex<std::complex<double>>(op, target, origin, n);
    case OSCF_TYPE_LONG_DOUBLE_COMPLEX:
        return reduce_complex<std::complex<long double>>(op, target, origin, n);
    case OSCF_TYPE_FLOAT_INT: return reduce_pair<Pair<float>>(op, target, origin, n);
    case OSCF_TYPE_DOUBLE_INT: return reduce_pair<Pair<double>>(op, target, origin, n);
    case OSCF_TYPE_LONG_INT: return reduce_pair<Pair<long>>(op, target, origin, n);
    case OSCF_TYPE_2INT: return reduce_pair<Pair<int>>(op, target, origin, n);
    case OSCF_TYPE_SHORT_INT: return reduce_pair<ShortInt>(op, target, origin, n);
    case OSCF_TYPE_LONG_DOUBLE_INT: return reduce_pair<Pair<long double>>(op, target, origin, n);
    case OSCF_TYPE_2FLOAT: return reduce_pair<Pair<float, float>>(op, target, origin, n);
    case OSCF_TYPE_2DOUBLE: return reduce_pair<Pair<double, double>>(op, target, origin, n);
    case OSCF_TYPE_COUNT: return;
    }
}

void apply_swap(oscf_swap s, oscf_type t, void *target, const void *value, const void *compare, void *result,
                size_t n) {
    switch (t) {
    case OSCF_TYPE_INT8: return swap_all<int8_t>(s, target, value, compare, result, n);
    case OSCF_TYPE_UINT8:
    case OSCF_TYPE_BYTE:
    case OSCF_TYPE_BOOL: return swap_all<uint8_t>(s, target, value, compare, result, n);
    case OSCF_TYPE_INT16: return swap_all<int16_t>(s, target, value, compare, result, n);
    case OSCF_TYPE_UINT16: return swap_all<uint16_t>(s, target, value, compare, result, n);
    case OSCF_TYPE_INT32: return swap_all<int32_t>(s, target, value, compare, result, n);
    case OSCF_TYPE_UINT32: return swap_all<uint32_t>(s, target, value, compare, result, n);
    case OSCF_TYPE_INT64: return swap_all<int64_t>(s, target, value, compare, result, n);
    case OSCF_TYPE_UINT64: return swap_all<uint64_t>(s, target, value, compare, result, n);
    case OSCF_TYPE_FLOAT: return swap_all<float>(s, target, value, compare, result, n);
    case OSCF_TYPE_DOUBLE: return swap_all<double>(s, target, value, compare, result, n);
    default: return;  // swap_allowed() admits no other type
    }
}

}  // namespace oscf
