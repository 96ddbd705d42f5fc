#include "node_atomics.h"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "atomic_types.h"
#include "reduce_ops.h"

namespace oscf {
namespace {

constexpr int kSpinsBeforeYield = 64;  // the holder runs a few hundred instructions

// Lone updates and short runs: one lock and one update or loop, no stripe walk and no
// call per step. The lone update (one element of at most 8 bytes) is the whole of a
// latency benchmark's fetch-and-op or compare-and-swap; a short run (a few such
// elements, all starting in one stripe) its 8-byte accumulate of two ints. Longer runs
// take NodeUpdates, whose reductions are vectorized.
constexpr size_t kShortRun = 8;

struct One {
    char *target;
    AccumulateLock lock;
};

template <class T>
T combined(oscf_op op, T t, T o) {
    if (op == OSCF_OP_REPLACE) return o;
    if constexpr (std::is_integral_v<T>)
        return combine_integer(op, t, o);
    else
        return combine_floating(op, t, o);
}

// Flattened: the reduction's switch inline, not a call per element.
template <class T>
[[gnu::flatten]] void update_run(const One &e, oscf_op op, const void *origin, void *result, size_t count) {
    auto *res = static_cast<char *>(result);
    auto *org = static_cast<const char *>(origin);
    const bool change = origin && op != OSCF_OP_NO_OP;
    e.lock.lock();
    for (size_t i = 0; i < count; ++i) {
        char *at = e.target + i * sizeof(T);
        T t, o;
        std::memcpy(&t, at, sizeof t);
        if (res) std::memcpy(res + i * sizeof t, &t, sizeof t);
        if (!change) continue;
        std::memcpy(&o, org + i * sizeof o, sizeof o);
        t = combined(op, t, o);
        std::memcpy(at, &t, sizeof t);
    }
    e.lock.unlock();
}

// The run of one, its loop folded away (flatten inlines update_run with count 1).
template <class T>
[[gnu::flatten]] void update_one(const One &e, oscf_op op, const void *origin, void *result) {
    update_run<T>(e, op, origin, result, 1);
}

template <class T>
void swap_one(const One &e, oscf_swap s, const void *value, const void *compare, void *result) {
    T t, v, c;
    std::memcpy(&v, value, sizeof v);
    std::memcpy(&c, compare, sizeof c);
    e.lock.lock();
    std::memcpy(&t, e.target, sizeof t);
    const T n = swap_element(s, t, v, c);
    std::memcpy(e.target, &n, sizeof n);
    e.lock.unlock();
    if (result) std::memcpy(result, &t, sizeof t);
}

// f(T*) with a null pointer of the C type of t when it is a number of 1-8 bytes;
// false (f not called) for the rest.
template <class F>
bool visit_number(oscf_type t, F f) {
    switch (t) {
    case OSCF_TYPE_INT8: f(static_cast<int8_t *>(nullptr)); return true;
    case OSCF_TYPE_UINT8:
    case OSCF_TYPE_BYTE:
    case OSCF_TYPE_BOOL: f(static_cast<uint8_t *>(nullptr)); return true;
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

One one_at(const SharedWindow &w, uint64_t offset) {
    return {w.mem + offset, AccumulateLock(w.lock_of(offset))};
}

}  // namespace

void AccumulateLock::wait() const {
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

NodeUpdates::NodeUpdates(const SharedWindow &w, oscf_type t) : w_(w), t_(t), size_(type_size(t)) {}

void NodeUpdates::finish() {
    if (held_) AccumulateLock(held_).unlock();
    held_ = nullptr;
}

template <class F>
void NodeUpdates::each_stripe(uint64_t offset, size_t count, F f) {
    // Most segments of a many-piece call start all their elements in the stripe held.
    if (held_ && count && offset / kAccStripeBytes == held_stripe_ &&
        (offset + (count - 1) * size_) / kAccStripeBytes == held_stripe_)
        return f(offset, size_t{0}, count);
    for (size_t first = 0; first < count;) {
        const uint64_t at = offset + first * size_;
        const uint64_t stripe = at / kAccStripeBytes;
        const uint64_t next = (stripe + 1) * kAccStripeBytes;
        const size_t n = std::min<size_t>(count - first, (next - at + size_ - 1) / size_);
        uint64_t *word = w_.lock_of(at);
        if (word != held_) {
            finish();
            AccumulateLock(word).lock();
            held_ = word;
        }
        held_stripe_ = stripe;
        f(at, first * size_, n);
        first += n;
    }
}

void NodeUpdates::accumulate(uint64_t offset, oscf_op op, const void *origin, void *result, size_t count) {
    each_stripe(offset, count, [&](uint64_t at, size_t skip, size_t n) {
        if (result) copy_elements(t_, static_cast<char *>(result) + skip, w_.mem + at, n);
        if (origin) apply_reduction(op, t_, w_.mem + at, static_cast<const char *>(origin) + skip, n);
    });
}

void NodeUpdates::swap(uint64_t offset, oscf_swap s, const void *value, const void *compare, void *result,
                       size_t count) {
    each_stripe(offset, count, [&](uint64_t at, size_t skip, size_t n) {
        apply_swap(s, t_, w_.mem + at, static_cast<const char *>(value) + skip,
                   static_cast<const char *>(compare) + skip,
                   result ? static_cast<char *>(result) + skip : nullptr, n);
    });
}

void node_accumulate(const SharedWindow &w, uint64_t offset, oscf_op op, oscf_type t, const void *origin,
                     void *result, size_t count) {
    if (count == 1 && visit_number(t, [&](auto *tag) {
            update_one<std::remove_pointer_t<decltype(tag)>>(one_at(w, offset), op, origin, result);
        }))
        return;
    if (count > 1 && count <= kShortRun &&
        offset / kAccStripeBytes == (offset + (count - 1) * type_size(t)) / kAccStripeBytes &&
        visit_number(t, [&](auto *tag) {
            update_run<std::remove_pointer_t<decltype(tag)>>(one_at(w, offset), op, origin, result, count);
        }))
        return;
    NodeUpdates(w, t).accumulate(offset, op, origin, result, count);
}

void node_swap(const SharedWindow &w, uint64_t offset, oscf_swap s, oscf_type t, const void *value,
               const void *compare, void *result, size_t count) {
    if (count == 1 && visit_number(t, [&](auto *tag) {
            swap_one<std::remove_pointer_t<decltype(tag)>>(one_at(w, offset), s, value, compare, result);
        }))
        return;
    NodeUpdates(w, t).swap(offset, s, value, compare, result, count);
}

uint64_t word_fetch_add(uint64_t *word, uint64_t add) {
    return __atomic_fetch_add(word, add, __ATOMIC_SEQ_CST);
}

uint64_t word_compare_swap(uint64_t *word, uint64_t compare, uint64_t swap) {
    __atomic_compare_exchange_n(word, &compare, swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;
}

}  // namespace oscf
