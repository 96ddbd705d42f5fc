#include "node_atomics.h"

#include <sched.h>

#include <cstring>

#include "atomic_types.h"
#include "reduce_ops.h"

namespace oscf {
namespace {

constexpr int kSpinsBeforeYield = 64;  // the holder runs a few hundred instructions

bool aligned(const void *p, size_t size) { return reinterpret_cast<uintptr_t>(p) % size == 0; }

// The integer type whose bits hold one T.
template <size_t N> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = uint64_t; };

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
        if constexpr (Integer) nv = combine_integer(op, ov, o);
        else nv = combine_floating(op, ov, o);
        B nb;
        std::memcpy(&nb, &nv, sizeof nb);
        if (__atomic_compare_exchange_n(word, &old, nb, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            return ov;
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

// The CPU-atomic road for (t, target), or false where the element takes the lock.
bool cpu_update(oscf_op op, oscf_type t, void *target, const void *origin, void *result, size_t n) {
    if (!aligned(target, type_size(t))) return false;
    switch (t) {
    case OSCF_TYPE_INT8: update_all<int8_t, true>(op, target, origin, result, n); return true;
    case OSCF_TYPE_UINT8:
    case OSCF_TYPE_BOOL:
    case OSCF_TYPE_BYTE: update_all<uint8_t, true>(op, target, origin, result, n); return true;
    case OSCF_TYPE_INT16: update_all<int16_t, true>(op, target, origin, result, n); return true;
    case OSCF_TYPE_UINT16: update_all<uint16_t, true>(op, target, origin, result, n); return true;
    case OSCF_TYPE_INT32: update_all<int32_t, true>(op, target, origin, result, n); return true;
    case OSCF_TYPE_UINT32: update_all<uint32_t, true>(op, target, origin, result, n); return true;
    case OSCF_TYPE_INT64: update_all<int64_t, true>(op, target, origin, result, n); return true;
    case OSCF_TYPE_UINT64: update_all<uint64_t, true>(op, target, origin, result, n); return true;
    case OSCF_TYPE_FLOAT: update_all<float, false>(op, target, origin, result, n); return true;
    case OSCF_TYPE_DOUBLE: update_all<double, false>(op, target, origin, result, n); return true;
    default: return false;
    }
}

template <class B>
void compare_swap_bits(void *target, const void *origin, const void *compare, void *result) {
    B expect, swap;
    std::memcpy(&expect, compare, sizeof expect);
    std::memcpy(&swap, origin, sizeof swap);
    __atomic_compare_exchange_n(static_cast<B *>(target), &expect, swap, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
    std::memcpy(result, &expect, sizeof expect);  // the old value, equal or not
}

}  // namespace

void AccumulateLock::lock() {
    for (int spins = 0;; ++spins) {
        if (__atomic_load_n(word_, __ATOMIC_RELAXED) == 0 &&
            __atomic_exchange_n(word_, uint64_t{1}, __ATOMIC_ACQUIRE) == 0)
            return;
        // The holder may share our core (oversubscribed nodes): let it finish.
        if (spins >= kSpinsBeforeYield) sched_yield();
        else __builtin_ia32_pause();
    }
}

void AccumulateLock::unlock() { __atomic_store_n(word_, uint64_t{0}, __ATOMIC_RELEASE); }

void node_accumulate(oscf_op op, oscf_type t, void *target, const void *origin, void *result,
                     size_t count, AccumulateLock acc_lock) {
    if (cpu_update(op, t, target, origin, result, count)) return;
    acc_lock.lock();
    if (result) std::memmove(result, target, count * type_size(t));
    if (origin) apply_reduction(op, t, target, origin, count);
    acc_lock.unlock();
}

void node_compare_swap(oscf_type t, void *target, const void *origin, const void *compare,
                       void *result, AccumulateLock acc_lock) {
    const size_t size = type_size(t);
    // Integer, logical and byte types only (cas_allowed): the bits compare.
    if (aligned(target, size)) {
        switch (size) {
        case 1: return compare_swap_bits<uint8_t>(target, origin, compare, result);
        case 2: return compare_swap_bits<uint16_t>(target, origin, compare, result);
        case 4: return compare_swap_bits<uint32_t>(target, origin, compare, result);
        case 8: return compare_swap_bits<uint64_t>(target, origin, compare, result);
        default: break;
        }
    }
    acc_lock.lock();
    std::memmove(result, target, size);
    apply_compare_swap(t, target, origin, compare);
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
