#include "node_atomics.h"

#include <sched.h>

#include <cstring>
#include <type_traits>

#include "atomic_types.h"
#include "reduce_ops.h"

namespace oscf {
namespace {

constexpr int kSpinsBeforeYield = 64;  // the holder runs a few hundred instructions

bool aligned(const void *p, size_t size) {
    return reinterpret_cast<uintptr_t>(p) % size == 0;
}

// The integer type whose bits hold one T.
template <size_t N>
struct Bits;
template <>
struct Bits<1> {
    using type = uint8_t;
};
template <>
struct Bits<2> {
    using type = uint16_t;
};
template <>
struct Bits<4> {
    using type = uint32_t;
};
template <>
struct Bits<8> {
    using type = uint64_t;
};

// One element of T at t, atomically: the old value. Add and the bitwise ops of
// unsigned-wrapping integers have an instruction; the rest loop on compare-exchange.
template <class T, bool Integer>
T update(oscf_op op, T *t, T o) {
    using B = typename Bits<sizeof(T)>::type;
    auto *word = reinterpret_cast<B *>(t);
    B ob;
    std::memcpy(&ob, &o, sizeof ob);
    if constexpr (Integer) {
        switch (op) {
        case OSCF_OP_SUM: return static_cast<T>(__atomic_fetch_add(word, ob, __ATOMIC_SEQ_CST));
        case OSCF_OP_BAND: return static_cast<T>(__atomic_fetch_and(word, ob, __ATOMIC_SEQ_CST));
        case OSCF_OP_BOR: return static_cast<T>(__atomic_fetch_or(word, ob, __ATOMIC_SEQ_CST));
        case OSCF_OP_BXOR: return static_cast<T>(__atomic_fetch_xor(word, ob, __ATOMIC_SEQ_CST));
        default: break;
        }
    }
    if (op == OSCF_OP_REPLACE) {
        B old = __atomic_exchange_n(word, ob, __ATOMIC_SEQ_CST);
        T r;
        std::memcpy(&r, &old, sizeof r);
        return r;
    }
    B old = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    for (;;) {
        T ov;
        std::memcpy(&ov, &old, sizeof ov);
        if (op == OSCF_OP_NO_OP) return ov;
        T nv;
        if constexpr (Integer)
            nv = combine_integer(op, ov, o);
        else
            nv = combine_floating(op, ov, o);
        B nb;
        std::memcpy(&nb, &nv, sizeof nb);
        if (__atomic_compare_exchange_n(word, &old, nb, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return ov;
    }
}

template <class T, bool Integer>
void update_all(oscf_op op, void *target, const void *origin, void *result, size_t n) {
    auto *t = static_cast<T *>(target);
    const auto *o = static_cast<const char *>(origin);
    auto *r = static_cast<char *>(result);
    for (size_t i = 0; i < n; ++i) {
        T ov{};
        if (o) std::memcpy(&ov, o + i * sizeof(T), sizeof ov);
        T old = update<T, Integer>(op, t + i, ov);
        if (r) std::memcpy(r + i * sizeof(T), &old, sizeof old);
    }
}

// Calls f with a null T* for the C type that holds one element of t on the CPU-atomic
// road, or returns false where t takes the accumulate lock (long double, complex, pairs).
template <class F>
bool visit_cpu_type(oscf_type t, F &&f) {
    switch (t) {
    case OSCF_TYPE_INT8: f(static_cast<int8_t *>(nullptr)); return true;
    case OSCF_TYPE_UINT8:
    case OSCF_TYPE_BOOL:
    case OSCF_TYPE_BYTE: f(static_cast<uint8_t *>(nullptr)); return true;
    case OSCF_TYPE_INT16: f(static_cast<int16_t *>(nullptr)); return true;
    case OSCF_TYPE_UINT16: f(static_cast<uint16_t *>(nullptr)); return true;
    case OSCF_TYPE_INT32: f(static_cast<int32_t *>(nullptr)); return true;
    case OSCF_TYPE_UINT32: f(static_cast<uint32_t *>(nullptr)); return true;
    case OSCF_TYPE_INT64: f(static_cast<int64_t *>(nullptr)); return true;
    case OSCF_TYPE_UINT64: f(static_cast<uint64_t *>(nullptr)); return true;
    case OSCF_TYPE_FLOAT: f(static_cast<float *>(nullptr)); return true;
    case OSCF_TYPE_DOUBLE: f(static_cast<double *>(nullptr)); return true;
    default: return false;
    }
}

// The CPU-atomic road for (t, target), or false where the element takes the lock.
bool cpu_update(oscf_op op, oscf_type t, void *target, const void *origin, void *result, size_t n) {
    if (!aligned(target, type_size(t))) return false;
    return visit_cpu_type(t, [&](auto *tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        update_all<T, std::is_integral_v<T>>(op, target, origin, result, n);
    });
}

// One element of a conditional swap: an instruction for integer equality, else a
// compare-exchange loop that stores only when the element changes. The old value.
template <class T>
T swap_one(oscf_swap s, T *t, T v, T c) {
    using B = typename Bits<sizeof(T)>::type;
    auto *word = reinterpret_cast<B *>(t);
    B old;
    if constexpr (std::is_integral_v<T>) {
        if (s == OSCF_SWAP_EQ) {
            std::memcpy(&old, &c, sizeof old);
            B swap;
            std::memcpy(&swap, &v, sizeof swap);
            __atomic_compare_exchange_n(word, &old, swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            return static_cast<T>(old);
        }
    }
    old = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    for (;;) {
        T ov;
        std::memcpy(&ov, &old, sizeof ov);
        const T nv = swap_element(s, ov, v, c);
        B nb;
        std::memcpy(&nb, &nv, sizeof nb);
        if (nb == old ||
            __atomic_compare_exchange_n(word, &old, nb, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            return ov;
    }
}

bool cpu_swap(oscf_swap s, oscf_type t, void *target, const void *value, const void *compare, void *result,
              size_t n) {
    if (!aligned(target, type_size(t))) return false;
    return visit_cpu_type(t, [&](auto *tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        for (size_t i = 0; i < n; ++i) {
            T v, c;
            std::memcpy(&v, static_cast<const char *>(value) + i * sizeof(T), sizeof v);
            std::memcpy(&c, static_cast<const char *>(compare) + i * sizeof(T), sizeof c);
            const T old = swap_one<T>(s, static_cast<T *>(target) + i, v, c);
            if (result) std::memcpy(static_cast<char *>(result) + i * sizeof(T), &old, sizeof old);
        }
    });
}

}  // namespace

void AccumulateLock::lock() {
    for (int spins = 0;; ++spins) {
        if (__atomic_load_n(word_, __ATOMIC_RELAXED) == 0 &&
            __atomic_exchange_n(word_, uint64_t{1}, __ATOMIC_ACQUIRE) == 0)
            return;
        // The holder may share our core (oversubscribed nodes): let it finish.
        if (spins >= kSpinsBeforeYield)
            sched_yield();
        else
            __builtin_ia32_pause();
    }
}

void AccumulateLock::unlock() {
    __atomic_store_n(word_, uint64_t{0}, __ATOMIC_RELEASE);
}

void node_accumulate(oscf_op op, oscf_type t, void *target, const void *origin, void *result, size_t count,
                     AccumulateLock acc_lock) {
    if (cpu_update(op, t, target, origin, result, count)) return;
    acc_lock.lock();
    if (result) std::memmove(result, target, count * type_size(t));
    if (origin) apply_reduction(op, t, target, origin, count);
    acc_lock.unlock();
}

void node_swap(oscf_swap s, oscf_type t, void *target, const void *value, const void *compare, void *result,
               size_t count, AccumulateLock acc_lock) {
    if (cpu_swap(s, t, target, value, compare, result, count)) return;
    acc_lock.lock();
    apply_swap(s, t, target, value, compare, result, count);
    acc_lock.unlock();
}

uint64_t word_fetch_add(uint64_t *word, uint64_t add) {
    return __atomic_fetch_add(word, add, __ATOMIC_SEQ_CST);
}

uint64_t word_compare_swap(uint64_t *word, uint64_t compare, uint64_t swap) {
    __atomic_compare_exchange_n(word, &compare, swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;
}

}  // namespace oscf
