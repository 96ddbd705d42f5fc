// Which calls are allowed when. An origin may access a target inside a fence epoch
// (after a fence not asserting MPI_MODE_NOSUCCEED), inside an MPI_Win_start epoch whose
// group holds the target, under MPI_Win_lock of that target, or under MPI_Win_lock_all;
// request-based operations only under the last two. Anything else is MPI_ERR_RMA_SYNC.
// A fence epoch in which this process issued nothing may be ended by a lock call: the
// common "fence to set up, then lock" program does that, and nothing can be pending.
#include "window.h"

using namespace oscf;

int oscf_win::check_target(int target) const {
    if (target < 0 || target >= size_)
        return usage_error(OSCF_ERR_RANK, "target rank %d outside window group of %d", target, size_);
    return OSCF_OK;
}

int oscf_win::close_idle_fence(const char *what) {
    if (!fence_open_) return OSCF_OK;
    if (ops_since_fence_)
        return usage_error(OSCF_ERR_RMA_SYNC, "%s inside a fence epoch with operations pending", what);
    fence_open_ = false;
    return OSCF_OK;
}

// Whether the epoch allows operations to target (a valid rank): a fence epoch, a start
// group with target in it, a lock on it, or lock_all (which holds rank 0's gate, keeping
// every exclusive lock away, lock.cpp).
bool oscf_win::may_access(int target) const {
    if (fence_open_) return true;
    if (pscw_access_) return in_access_group_[static_cast<size_t>(target)] != 0;
    return in_passive_epoch(target);
}

int oscf_win::begin_access(Guard &, int target, const char *what) {
    int rc = check_target(target);
    if (rc) return rc;
    if (may_access(target)) {
        if (fence_open_) ops_since_fence_ = true;
        return OSCF_OK;
    }
    if (pscw_access_)
        return usage_error(OSCF_ERR_RMA_SYNC, "%s to rank %d, which is not in the MPI_Win_start group", what,
                           target);
    return usage_error(OSCF_ERR_RMA_SYNC, "%s to rank %d outside an access epoch", what, target);
}

bool oscf_win::in_passive_epoch(int target) const {
    if (lock_all_) return true;
    if (target < 0 || target >= size_) return false;
    return peer(target).lock.held();
}

// MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate: the standard allows them
// only in passive-target epochs (lock or lock_all).
int oscf_win::check_request_epoch(int target, const char *what) const {
    if (in_passive_epoch(target)) return OSCF_OK;
    return usage_error(OSCF_ERR_RMA_SYNC, "request-based %s to rank %d outside a passive-target epoch", what,
                       target);
}

int oscf_win::check_operation(int target, const oscf_notify *notify, const char *what) const {
    int rc = check_target(target);
    if (!rc && notify) rc = check_request_epoch(target, what);
    return rc;
}

int oscf_win::fence(Guard &lk, int assert_bits) {
    if (lock_all_ || locks_held_)
        return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_fence inside a passive-target epoch");
    if (pscw_access_ || pscw_exposure_)
        return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_fence inside a post/start epoch");
    // Complete everything this origin issued; the MPI layer's barrier then makes all
    // origins' operations complete before anyone leaves the fence. NOPRECEDE promises
    // there is nothing to complete: trust it unless we did issue something.
    int rc = OSCF_OK;
    if (!(assert_bits & OSCF_MODE_NOPRECEDE) || ops_since_fence_ || !all_ops_.idle()) {
        if (assert_bits & OSCF_MODE_NOPRECEDE)
            log(1, "MPI_Win_fence(MPI_MODE_NOPRECEDE) after RMA calls: completing them anyway");
        rc = wait_idle(lk, all_ops_);
        if (!rc) rc = take_window_error();
    } else {
        ++stats.fence_waits_skipped;
    }
    fence_open_ = (assert_bits & OSCF_MODE_NOSUCCEED) == 0;
    ++access_epoch_;
    ops_since_fence_ = false;
    return rc;
}
