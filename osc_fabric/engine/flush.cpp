// Completion waits. Every operation is posted with FI_DELIVERY_COMPLETE (puts) or
// completes only when its data is here (gets, fetching atomics), so "counter idle"
// means complete at the target, which is what MPI_Win_flush promises.
#include <atomic>

#include "window.h"

using namespace oscf;

int oscf_win::wait_idle(Guard &lk, OpCounter &c) {
    // Queued accumulates are part of what any counter may be waiting for.
    if (!batched_.empty()) {
        int rc = send_batches();
        if (rc) return rc;
    }
    return progress().wait_until(lk, [&c] { return c.idle(); });
}

int oscf_win::take_window_error() {
    const int rc = all_ops_.take_error();
    if (rc == OSCF_OK) return rc;
    for (Peer &p : peers_) {
        p.ops.forget_errors();
        p.acc.forget_errors();
        p.streamed_ops.forget_errors();
        p.streamed_acc.forget_errors();
        p.lock.grant.forget_errors();
    }
    releases_.forget_errors();
    return rc;
}

int oscf_win::finish(Guard &lk, OpScope &scope, int rc) {
    return scope.finish(rc, [&](auto done) { progress().wait_until(lk, done); });
}

int oscf_win::flush(Guard &lk, int target) {
    if (target < 0) {
        if (!lock_all_ && !locks_held_)
            return usage_error(OSCF_ERR_RMA_SYNC, "flush outside a passive-target epoch");
        std::atomic_thread_fence(std::memory_order_seq_cst);
        int rc = wait_idle(lk, all_ops_);
        return rc ? rc : take_window_error();
    }
    int rc = check_target(target);
    if (rc) return rc;
    Peer &p = peer(target);
    if (!lock_all_ && !p.lock.held())
        return usage_error(OSCF_ERR_RMA_SYNC, "flush of rank %d, which is not locked", target);
    // Direct operations (route.cpp) are complete already; the fence orders their stores
    // before whatever tells the target to look.
    if (p.node.linked()) std::atomic_thread_fence(std::memory_order_seq_cst);
    rc = wait_done(lk, p.ops);
    if (!rc) offer_direct(target);
    return rc;
}

int oscf_win::sync(Guard &lk) {
    // Make remote updates that completed visible to local loads and our stores visible
    // to the fabric; a round of progress lets pending incoming RMA land first.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    int rc = progress().run_locked();
    std::atomic_thread_fence(std::memory_order_seq_cst);
    (void)lk;
    return rc < 0 ? rc : OSCF_OK;
}
