// Accumulates on memory that several processes of one node update directly (window
// memory in a node segment, shared.cpp): element-wise atomic with each other whoever
// applies them, an on-node origin with its own CPU or the owner's engine serving an
// active message from off the node.
//
// Every update holds an accumulate lock: the lock of the stripe its element starts in
// (window_blob.h: kAccStripes words after the owner's WindowState, one per
// kAccStripeBytes of window memory, wrapping), taken for the elements of one call that
// start in that stripe, which are then read and reduced with plain loads and stores.
// Not a CPU atomic per element: a lone update costs one atomic instruction either way
// (the lock's exchange instead of the element's add), but an update of many elements
// (a derived datatype's, a large array's) pays one per stripe instead of one per
// element, and floating point, long double, complex and pair types need no
// compare-exchange loop and no second road. perf/README.md ("Measurements behind
// design choices") has the figures.
//
// Where the fabric executes a type's atomics natively, these locks do not exclude
// them; route.cpp keeps such types off this path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "osc_fabric/engine.h"
#include "window_blob.h"

namespace oscf {

// One lock word: 0 when free.
class AccumulateLock {
public:
    explicit AccumulateLock(uint64_t *word) : word_(word) {}
    void lock() const {
        if (__atomic_exchange_n(word_, uint64_t{1}, __ATOMIC_ACQUIRE) != 0) wait();
    }
    void unlock() const { __atomic_store_n(word_, uint64_t{0}, __ATOMIC_RELEASE); }

private:
    void wait() const;  // taken: spin, then yield, until ours
    uint64_t *word_;
};

// A window's memory in a node segment as this process maps it, and its owner's stripe
// locks (kAccStripes words).
struct SharedWindow {
    char *mem;
    uint64_t *stripes;
    // The lock of the element whose first byte is at offset: window_blob.h's map, which
    // every process updating this memory follows.
    uint64_t *lock_of(uint64_t offset) const { return stripes + offset / kAccStripeBytes % kAccStripes; }
};

// The updates of one call, segment after segment: the stripe lock taken last stays
// held while the next segment starts in the same stripe, so a call of thousands of
// small pieces (a derived datatype's) takes a lock per stripe it enters, not one per
// piece. At most one lock is held at a time, so two calls never wait for each other in
// a cycle; none once finished.
class NodeUpdates {
public:
    NodeUpdates(const SharedWindow &w, oscf_type t);
    ~NodeUpdates() { finish(); }
    NodeUpdates(const NodeUpdates &) = delete;
    NodeUpdates &operator=(const NodeUpdates &) = delete;
    // count elements at byte offset of the memory become origin (op) target; result
    // (may be nullptr) receives the old values, origin may be nullptr for NO_OP.
    void accumulate(uint64_t offset, oscf_op op, const void *origin, void *result, size_t count);
    // Conditional swaps of count elements (oscf_win_swap's rule); result (may be
    // nullptr) receives the old values. Only the types swap_allowed() admits.
    void swap(uint64_t offset, oscf_swap s, const void *value, const void *compare, void *result,
              size_t count);
    void finish();  // releases the lock held

private:
    // f(at, skip, n) for the n elements at byte offset at that start in one stripe,
    // skip bytes into the call's operands, stripe after stripe, that stripe's lock held.
    template <class F>
    void each_stripe(uint64_t offset, size_t count, F f);
    SharedWindow w_;
    oscf_type t_;
    size_t size_;
    uint64_t *held_ = nullptr;
    uint64_t held_stripe_ = 0;  // which stripe held_ locks (stripes wrap onto words)
};

// One call's updates (NodeUpdates' rules).
void node_accumulate(const SharedWindow &w, uint64_t offset, oscf_op op, oscf_type t, const void *origin,
                     void *result, size_t count);
void node_swap(const SharedWindow &w, uint64_t offset, oscf_swap s, oscf_type t, const void *value,
               const void *compare, void *result, size_t count);

// The 64-bit state words (lock words, lock.cpp): fetch-and-add and compare-and-swap.
uint64_t word_fetch_add(uint64_t *word, uint64_t add);
uint64_t word_compare_swap(uint64_t *word, uint64_t compare, uint64_t swap);

}  // namespace oscf
