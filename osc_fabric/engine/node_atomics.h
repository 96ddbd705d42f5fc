// Accumulates on memory that several processes of one node update directly (window
// memory in a node segment, shared.cpp): element-wise atomic with each other whoever
// applies them, an on-node origin with its own CPU or the target's engine serving an
// active message from off the node.
//
// One rule per (type, element address), so two updates of the same element always
// take the same road:
//   - integers, logicals and bytes of 1-8 bytes, float and double, naturally aligned:
//     CPU atomics (an instruction where x86 has one, else a compare-exchange loop over
//     the bits);
//   - everything else (long double, complex, pair types, a misaligned element): under
//     the target's accumulate lock, a word in its WindowState, held for one call.
// Where the fabric executes a type's atomics natively, CPU atomics are not atomic with
// them; route.h keeps such types off this path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "osc_fabric/engine.h"

namespace oscf {

// The target's accumulate lock: a word that is 0 when free.
class AccumulateLock {
public:
    explicit AccumulateLock(uint64_t *word) : word_(word) {}
    void lock();
    void unlock();

private:
    uint64_t *word_;
};

// result (may be nullptr) receives the old values; origin may be nullptr for NO_OP.
void node_accumulate(oscf_op op, oscf_type t, void *target, const void *origin, void *result, size_t count,
                     AccumulateLock acc_lock);
// Conditional swaps of count elements (oscf_win_swap's rule); result (may be nullptr)
// receives the old values. Only the types swap_allowed() admits, all of 1-8 bytes.
void node_swap(oscf_swap s, oscf_type t, void *target, const void *value, const void *compare, void *result,
               size_t count, AccumulateLock acc_lock);

// The 64-bit state words (lock words, lock.cpp): fetch-and-add and compare-and-swap.
uint64_t word_fetch_add(uint64_t *word, uint64_t add);
uint64_t word_compare_swap(uint64_t *word, uint64_t compare, uint64_t swap);

}  // namespace oscf
