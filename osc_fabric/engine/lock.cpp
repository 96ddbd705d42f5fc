// The passive-target lock protocol. Each window has one 64-bit lock word per process,
// in the target's WindowState, changed only with remote atomics, so a target never has
// to take part (beyond libfabric progress on providers with manual progress):
//
//   lock word = kExclusive * (exclusive holder ? 1 : 0) + (number of shared holders)
//
//   shared acquire:    old = fetch_add(+1); if old >= kExclusive: fetch_add(-1), back off, retry
//   exclusive acquire: old = compare_swap(expect 0, set kExclusive); if old != 0: back off, retry
//   release:           fetch_add(-1) or fetch_add(-kExclusive)
//
// Shared attempts that fail undo themselves, so a writer sees 0 once the readers left.
// A release is not waited for: the operations of the epoch are already complete, and
// nobody is owed an answer, so unlock costs no round trip of its own. Releases are
// counted on releases_ (under all_ops_), so freeing the window still waits for them; if
// a later acquire of ours overtakes one, it sees the lock taken and retries.
// As an active message over a provider that keeps send-after-send order, a release
// asks for no reply at all: our next message to that target arrives after it, and a
// reply would only queue in front of the next acquire's (measured on tcp;ofi_rxm:
// back-to-back lock + unlock took 2 round trips with the reply, 1 without). Window free
// then sends one kAmFlush to each target whose release went unanswered.
//
// On that same path a shared lock is a request the target queues (kAmLockShared): the
// target grants it (+1) when no exclusive holder has the word, and otherwise holds it,
// and every later message from that origin to that window, until a release lets it
// grant (am.cpp, redispatch). So the origin does not wait for the grant before issuing:
// what it sends to that target lands after the grant anyway. Only what bypasses the
// target's message handling, fabric RMA and native atomics, waits for it (await_grant).
// Lock + small put + unlock is then one round trip: the flush's reply follows the grant.
// And where the epoch still has a batch unsent at unlock, the release ends that batch
// (kAmReleaseShared/Exclusive): one message each way for the whole epoch, where a
// separate release costs both sides another system call on tcp;ofi_rxm.
// Exclusive locks still take the word with compare-and-swap from the origin.
// Every access to a lock word goes through the fabric, including our own: NIC (and
// libfabric software) atomics are not coherent with CPU atomics. Where the provider's
// atomics are not used (shm, see fabric.cpp), every access is an active message applied
// under the owner's engine lock instead, our own included.
#include <rdma/fi_atomic.h>

#include <chrono>

#include "atomic_types.h"
#include "window.h"

using namespace oscf;

namespace {
constexpr uint64_t kExclusive = uint64_t{1} << 32;
constexpr uint64_t kLockWordOffset = offsetof(WindowState, lock);
}  // namespace

int oscf_win::lock_word_atomic(Guard &lk, Peer &p, int op, uint64_t operand, uint64_t compare,
                               uint64_t *old) {
    ++stats.lock_attempts;
    // Lock words follow the path of 64-bit accumulates, so a provider whose atomics we
    // do not trust (fabric.cpp) never touches them.
    if (!eng_.caps.native(OSCF_TYPE_UINT64)) return lock_word_am(lk, p, op, operand, compare, old);
    OpCounter done;
    uint64_t addr = p.state_base + kLockWordOffset;
    int rc = progress().post("lock word atomic", [&]() -> ssize_t {
        if (op == FI_CSWAP)
            return fi_compare_atomic(fab().ep(), &operand, 1, nullptr, &compare, nullptr, old,
                                     nullptr, p.addr, addr, p.state_key, FI_UINT64, FI_CSWAP,
                                     &done);
        return fi_fetch_atomic(fab().ep(), &operand, 1, nullptr, old, nullptr, p.addr, addr,
                               p.state_key, FI_UINT64, static_cast<fi_op>(op), &done);
    });
    if (rc) return rc;
    done.on_post();
    rc = wait_idle(lk, done);
    return rc ? rc : done.take_error();
}

// The same update as an active message that the target's engine applies under its lock
// (or that we apply, under ours, to our own lock word).
int oscf_win::lock_word_am(Guard &lk, Peer &p, int op, uint64_t operand, uint64_t compare,
                           uint64_t *old) {
    const bool cas = op == FI_CSWAP;
    if (&p == &peers_[static_cast<size_t>(rank_)]) {
        uint64_t *word = &state_->lock;
        *old = *word;
        if (cas)
            apply_compare_swap(OSCF_TYPE_UINT64, word, &operand, &compare);
        else
            apply_reduction(OSCF_OP_SUM, OSCF_TYPE_UINT64, word, &operand, 1);
        return OSCF_OK;
    }
    OpCounter done;
    AmHeader h = am_request(p, cas ? kAmCompareSwap : kAmAccumulate, OSCF_TYPE_UINT64, OSCF_OP_SUM,
                            kAmFetch | kAmStateWord, 1, kLockWordOffset);
    h.token = eng_.am->new_request(&done, old, sizeof *old);
    done.on_post();
    int rc = eng_.am->send(p.addr, h, &operand, sizeof operand, cas ? &compare : nullptr,
                           cas ? sizeof compare : 0);
    if (rc) return rc;
    rc = wait_idle(lk, done);
    return rc ? rc : done.take_error();
}

int oscf_win::acquire(Guard &lk, Peer &p, bool exclusive) {
    using clock = std::chrono::steady_clock;
    auto backoff = std::chrono::microseconds(1);
    for (;;) {
        uint64_t old = 0;
        int rc = exclusive ? lock_word_atomic(lk, p, FI_CSWAP, kExclusive, 0, &old)
                           : lock_word_atomic(lk, p, FI_SUM, 1, 0, &old);
        if (rc) return rc;
        if (exclusive ? old == 0 : old < kExclusive) return OSCF_OK;
        if (!exclusive && (rc = lock_word_atomic(lk, p, FI_SUM, ~uint64_t{0}, 0, &old))) return rc;
        // Back off while still serving our own incoming traffic: the holder may be
        // waiting for us.
        auto until = clock::now() + backoff;
        rc = progress().wait_until(lk, [until] { return clock::now() >= until; });
        if (rc) return rc;
        backoff = std::min(backoff * 2, std::chrono::microseconds(1000));
    }
}

int oscf_win::release(Peer &p) {
    // Constant operands: the fabric may read them until the update completes.
    static const uint64_t kUndoShared = ~uint64_t{0};
    static const uint64_t kUndoExclusive = uint64_t{0} - kExclusive;
    const uint64_t *delta = p.lock == LockMode::exclusive ? &kUndoExclusive : &kUndoShared;
    if (&p == &peers_[static_cast<size_t>(rank_)] && !eng_.caps.native(OSCF_TYPE_UINT64)) {
        apply_reduction(OSCF_OP_SUM, OSCF_TYPE_UINT64, &state_->lock, delta, 1);
        eng_.am->redispatch(id_);  // shared requests held behind our exclusive hold
        return OSCF_OK;
    }
    ++stats.lock_attempts;
    if (!eng_.caps.native(OSCF_TYPE_UINT64)) {
        const bool silent = fab().limits().send_after_send;
        AmHeader h = am_request(p, kAmAccumulate, OSCF_TYPE_UINT64, OSCF_OP_SUM,
                                kAmStateWord | (silent ? kAmNoReply : 0), 1, kLockWordOffset);
        if (silent) {
            p.release_unanswered = true;
            return eng_.am->send(p.addr, h, delta, sizeof *delta);
        }
        h.token = eng_.am->new_request(&releases_, nullptr, 0);
        releases_.on_post();
        int rc = eng_.am->send(p.addr, h, delta, sizeof *delta);
        if (rc) releases_.on_complete(rc);
        return rc;
    }
    int rc = post_atomic_write(p, delta, 1, FI_UINT64, FI_SUM, p.state_base + kLockWordOffset,
                               p.state_key, &releases_);
    if (rc == OSCF_OK) releases_.on_post();
    return rc;
}

bool oscf_win::lock_requests_queue() const {
    return !eng_.caps.native(OSCF_TYPE_UINT64) && fab().limits().send_after_send;
}

// The request leaves with the first batch to the target (kAmTakeShared), or alone
// before any other message to it or any wait (send_batch): on tcp;ofi_rxm every
// message costs a system call on both sides, and lock + put + unlock then sends one.
int oscf_win::request_shared(Peer &p) {
    ++stats.lock_attempts;
    p.lock_grant.on_post();
    p.lock_request_unsent = true;
    list_for_sending(p);
    return OSCF_OK;
}

int oscf_win::send_lock_request(Peer &p) {
    p.lock_request_unsent = false;
    AmHeader h = am_request(p, kAmLockShared, OSCF_TYPE_UINT64, OSCF_OP_NO_OP, kAmStateWord, 0,
                            kLockWordOffset);
    h.token = eng_.am->new_request(&p.lock_grant, nullptr, 0);
    return eng_.am->send(p.addr, h, nullptr, 0);  // a failed send fails the request
}

// An epoch that issued nothing to p never needs its lock: nobody can tell it was not
// taken. Called at unlock, before anything could send the request.
void oscf_win::cancel_unsent_lock(Peer &p) {
    if (!p.lock_request_unsent || p.batch_records) return;
    p.lock_request_unsent = false;
    p.lock_grant.on_complete(OSCF_OK);
    p.lock_acquired = false;
}

// Our own lock word is changed directly under the engine lock, so there is nothing to
// queue behind: take it the blocking way.
int oscf_win::take_shared(Guard &lk, Peer &p) {
    if (lock_requests_queue() && &p != &peers_[static_cast<size_t>(rank_)]) return request_shared(p);
    return acquire(lk, p, false);
}

int oscf_win::await_grant(Guard &lk, Peer &p) {
    if (p.lock_grant.idle()) return OSCF_OK;
    int rc = wait_idle(lk, p.lock_grant);
    return rc ? rc : p.lock_grant.take_error();
}

// Called at unlock before the wait that sends the batches. Only where lock words are
// active messages: the target's engine applies the release after the records.
void oscf_win::fold_release_into_batch(Peer &p) {
    p.release_with_batch =
        p.lock_acquired && p.batch_records != 0 && !eng_.caps.native(OSCF_TYPE_UINT64);
}

void oscf_win::drop_hold(bool exclusive) {
    state_->lock -= exclusive ? kExclusive : 1;
}

int oscf_win::grant_shared() {
    if (state_->lock >= kExclusive) return kAmDeferred;
    state_->lock += 1;
    return OSCF_OK;
}

int oscf_win::confirm_releases() {
    for (Peer &p : peers_) {
        if (!p.release_unanswered) continue;
        p.release_unanswered = false;
        AmHeader h = am_request(p, kAmFlush, OSCF_TYPE_UINT8, OSCF_OP_NO_OP, 0, 0, 0);
        h.token = eng_.am->new_request(&releases_, nullptr, 0);
        releases_.on_post();
        int rc = eng_.am->send(p.addr, h, nullptr, 0);
        if (rc) return rc;  // send() already failed the request
    }
    return OSCF_OK;
}

int oscf_win::lock(Guard &lk, int target, bool exclusive, int assert_bits) {
    int rc = check_target(target);
    if (rc) return rc;
    if (lock_all_) return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_lock inside MPI_Win_lock_all");
    if (pscw_access_) return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_lock inside an MPI_Win_start epoch");
    if ((rc = close_idle_fence("MPI_Win_lock"))) return rc;
    Peer &p = peers_[static_cast<size_t>(target)];
    if (p.lock != LockMode::none)
        return usage_error(OSCF_ERR_RMA_CONFLICT, "rank %d is already locked by this process", target);
    bool nocheck = (assert_bits & OSCF_MODE_NOCHECK) != 0;
    if (!nocheck && (rc = exclusive ? acquire(lk, p, true) : take_shared(lk, p))) return rc;
    p.lock = exclusive ? LockMode::exclusive : LockMode::shared;
    p.lock_acquired = !nocheck;
    ++locks_held_;
    ++access_epoch_;
    return OSCF_OK;
}

int oscf_win::unlock(Guard &lk, int target) {
    int rc = check_target(target);
    if (rc) return rc;
    Peer &p = peers_[static_cast<size_t>(target)];
    if (lock_all_ || p.lock == LockMode::none)
        return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_unlock of rank %d, which is not locked", target);
    cancel_unsent_lock(p);
    fold_release_into_batch(p);
    // Operations must be complete at the target before others may take the lock.
    rc = wait_idle(lk, p.ops);
    int op_err = p.ops.take_error();
    if (!rc && p.lock_acquired && !p.release_with_batch) rc = release(p);
    p.release_with_batch = false;
    p.lock = LockMode::none;
    p.lock_acquired = false;
    --locks_held_;
    return rc ? rc : op_err;
}

int oscf_win::lock_all(Guard &, int assert_bits) {
    if (lock_all_ || locks_held_ || pscw_access_)
        return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_lock_all inside another access epoch");
    int rc = close_idle_fence("MPI_Win_lock_all");
    if (rc) return rc;
    lock_all_ = true;
    ++access_epoch_;
    lock_all_nocheck_ = (assert_bits & OSCF_MODE_NOCHECK) != 0;
    lock_all_acquired_.clear();
    return OSCF_OK;
}

int oscf_win::unlock_all(Guard &lk) {
    if (!lock_all_) return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_unlock_all without MPI_Win_lock_all");
    for (int t : lock_all_acquired_) {
        Peer &p = peers_[static_cast<size_t>(t)];
        cancel_unsent_lock(p);
        fold_release_into_batch(p);
    }
    int rc = wait_idle(lk, all_ops_);
    int op_err = take_window_error();
    for (int t : lock_all_acquired_) {
        Peer &p = peers_[static_cast<size_t>(t)];
        if (!rc && p.lock_acquired && !p.release_with_batch) rc = release(p);
        p.release_with_batch = false;
        p.lock = LockMode::none;
        p.lock_acquired = false;
    }
    lock_all_acquired_.clear();
    lock_all_ = false;
    return rc ? rc : op_err;
}
