// The view the MPI layer reads to reach on-node peers without entering the engine
// (include/osc_fabric/direct_view.h has the contract). Here: when an entry opens, and
// the accumulates and compare-and-swaps of the fast road, which are the direct road's
// own (route.cpp) without the checks an open entry has already answered.
#include <utility>

#include "atomic_types.h"
#include "window.h"

using namespace oscf;

static_assert(OSCF_OP_COUNT <= 32, "fast_ops_ has one bit per op");

// After connect: the entries exist from the start, all closed.
void oscf_win::init_direct_view() {
    view_on_ = has_direct_memory_ && flavor_ != OSCF_FLAVOR_DYNAMIC && progress().mutex().single_thread();
    view_peers_.assign(static_cast<size_t>(size_), oscf_direct_peer{});
    view_lock_words_.assign(static_cast<size_t>(size_), nullptr);
    for (int r = 0; r < size_; ++r) {
        Peer &p = peer(r);
        // Our own words, where others take them through our progress, only by acquire().
        if (view_on_ && direct_words(p) && !(r == rank_ && own_words_by_progress_))
            view_lock_words_[static_cast<size_t>(r)] = hold_word(p, Hold::shared);
        if (!direct_memory(p)) continue;
        view_peers_[static_cast<size_t>(r)] = {0, p.node.mem(), p.node.mem_size(), p.disp_unit};
        if (view_on_) view_direct_ranks_.push_back(r);
    }
    // Exclusive locks enter rank 0's gate: on the fast road when it too is a CPU atomic.
    view_gate_word_ = size_ > 0 && view_lock_words_[0] ? hold_word(peer(0), Hold::gate_exclusive) : nullptr;
    view_.owner = this;
    view_.epoch = 1;
    view_.peers = view_peers_.data();
    view_.npeers = size_;
    // The (op, type) pairs MPI allows whose updates this node applies (route.cpp).
    for (int t = 0; t < OSCF_TYPE_COUNT; ++t) {
        const auto type = static_cast<oscf_type>(t);
        const bool cpu = updated_on_node(type);
        fast_ops_[t] = 0;
        fast_cas_[t] = cpu && cas_allowed(type);
        for (int op = 0; op < OSCF_OP_COUNT; ++op)
            if (cpu && op_allowed(static_cast<oscf_op>(op), type)) fast_ops_[t] |= 1u << op;
    }
}

// At the end of every engine call. The entry of the peer this call reached directly
// opens when the fast road would do exactly what the engine does: the epoch allows
// access to it (checked here, where the call has ended, rather than trusted from
// where the road was taken), nothing to it is in flight or unreported (so a flush has
// nothing to wait for), and no batch anywhere waits for a flush to send it. The quiet
// mark asks the same of every target, for flush_all.
void oscf_win::settle_direct_view() {
    const int t = std::exchange(view_candidate_, -1);
    if (!view_on_) return;
    mark_quiet();
    if (t >= 0 && t < size_) open_direct_entry(t);
}

// The quiet mark: a passive-target epoch, and nothing in flight or waiting anywhere.
void oscf_win::mark_quiet() {
    if (view_.quiet != view_.epoch && (lock_all_ || locks_held_) && all_ops_.idle() && !all_ops_.failures &&
        all_ops_.error == OSCF_OK && batched_.empty())
        view_.quiet = view_.epoch;
}

void oscf_win::open_direct_entry(int t) {
    Peer &p = peer(t);
    if (!may_access(t) || !direct_memory(p) || !p.ops.idle() || p.ops.failures || p.ops.error != OSCF_OK ||
        !p.batch.empty() || !batched_.empty())
        return;
    view_peers_[static_cast<size_t>(t)].epoch = view_.epoch;
}

bool oscf_win::fast_accumulate(int target, int64_t disp, int64_t offset, const void *origin, void *result,
                               size_t count, oscf_type type, oscf_op op) {
    const oscf_direct_peer *e = oscf_direct_open(&view_, target);
    if (!e || !valid_type(type) || !valid_op(op) || !(fast_ops_[type] >> op & 1) ||
        (!origin && op != OSCF_OP_NO_OP) || count > e->size)
        return false;
    const size_t bytes = count * type_size(type);
    char *at = oscf_direct_at(e, disp, offset, bytes);
    if (!at) return false;
    node_accumulate(peer(target).node.shared(), static_cast<uint64_t>(at - e->base), op, type, origin, result,
                    count);
    ++view_.atomics;
    view_.bytes += bytes;
    return true;
}

bool oscf_win::fast_compare_and_swap(int target, int64_t disp, const void *value, const void *compare,
                                     void *result, oscf_type type) {
    const oscf_direct_peer *e = oscf_direct_open(&view_, target);
    if (!e || !valid_type(type) || !fast_cas_[type] || !value || !compare || !result) return false;
    char *at = oscf_direct_at(e, disp, 0, type_size(type));
    if (!at) return false;
    node_swap(peer(target).node.shared(), static_cast<uint64_t>(at - e->base), OSCF_SWAP_EQ, type, value,
              compare, result, 1);
    ++view_.atomics;
    view_.bytes += type_size(type);
    return true;
}

oscf_win_stats oscf_win::all_stats() const {
    oscf_win_stats s = stats;
    s.direct_rma += view_.rma;
    s.direct_atomics += view_.atomics;
    s.direct_bytes += view_.bytes;
    return s;
}

// The view is a member of its window, so the window is found from it.
static oscf_win *window_of(oscf_direct_view *v) {
    return v ? static_cast<oscf_win *>(v->owner) : nullptr;
}

oscf_direct_view *oscf_win_direct_view(oscf_win *win) {
    return win ? win->direct_view() : nullptr;
}

bool oscf_direct_accumulate(oscf_direct_view *v, int target, int64_t disp, int64_t offset, const void *origin,
                            void *result, size_t count, oscf_type type, oscf_op op) {
    oscf_win *w = window_of(v);
    return w && w->fast_accumulate(target, disp, offset, origin, result, count, type, op);
}

bool oscf_direct_compare_and_swap(oscf_direct_view *v, int target, int64_t disp, const void *value,
                                  const void *compare, void *result, oscf_type type) {
    oscf_win *w = window_of(v);
    return w && w->fast_compare_and_swap(target, disp, value, compare, result, type);
}

int oscf_direct_lock(oscf_direct_view *v, int target, int exclusive, int assert_bits) {
    oscf_win *w = window_of(v);
    return w && w->fast_lock(target, exclusive != 0, assert_bits) ? 1 : 0;
}

int oscf_direct_unlock(oscf_direct_view *v, int target) {
    oscf_win *w = window_of(v);
    return w ? w->fast_unlock(target) : 0;
}

int oscf_direct_lock_all(oscf_direct_view *v, int assert_bits) {
    oscf_win *w = window_of(v);
    return w && w->fast_lock_all(assert_bits) ? 1 : 0;
}

int oscf_direct_unlock_all(oscf_direct_view *v) {
    oscf_win *w = window_of(v);
    return w ? w->fast_unlock_all() : 0;
}
