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
// As an active message a release asks for no reply at all: the target serves our
// requests to the window in the order we sent them, whatever order the provider
// delivers them in (MessageStream, am.cpp), so our next one is served after it, and a
// reply would only queue in front of the next acquire's (on tcp;ofi_rxm it made
// back-to-back lock + unlock a round trip slower: perf/README.md). Window free
// then sends one kAmFlush to each target whose release went unanswered.
//
// On that same path a lock is a request the target queues (kAmLockShared,
// kAmLockExclusive): the target grants a shared one (+1) when no exclusive holder has
// the word and an exclusive one when nobody holds it, and otherwise holds it, and every
// later message from that origin to that window, until a release lets it grant (am.cpp,
// redispatch). So the origin does not wait for the grant before issuing: what it sends
// to that target lands after the grant anyway. Only what bypasses the target's message
// handling, fabric RMA and native atomics, waits for it (await_grant), and unlock does,
// as osc/pt2pt's does. Lock + small put + unlock is then one round trip: the flush's
// reply follows the grant. And where the epoch still has a batch unsent at unlock, the
// release ends that batch (kAmReleaseShared/Exclusive): one message each way for the
// whole epoch, where a separate release costs both sides another system call on
// tcp;ofi_rxm. An exclusive lock still enters the gate (below) first, and waits for it.
// Writers come first: while an exclusive request is held at the target, shared requests
// are held behind it, and so are the target's own shared locks on itself (grant_lock).
// Readers whose holds overlap would otherwise keep the word from ever being free. On-node
// peers that take the word with CPU atomics are not queued; they back off as before.
//
// Locks held together are taken in call order: a lock is not asked for before every
// lock this process asked for earlier is granted, so programs that lock in one global
// order (ascending rank, say) cannot deadlock. Only the latest lock can be ungranted
// (ungranted_), so the one-message lock stays one message for the last lock of a set,
// which is every lock of a single-target epoch. Our own lock word would be
// granted at once: without the rule, a lock on ourselves overtook an earlier request
// still travelling to another target, and two processes each held what the other
// waited for.
//
// lock_all takes no per-target lock. Taking them on first use, in whatever order the
// epoch touched its targets, broke the call order too (the epoch holds a high rank and
// waits for a low one that an exclusive holder keeps while it waits for the high one).
// Instead one word at rank 0 of the window, the gate, keeps lock_all epochs and
// exclusive locks apart, as osc/rdma's two-level locking does:
//
//   gate = kGateAll * (lock_all epochs) + (processes holding exclusive locks)
//
// lock_all adds kGateAll and waits for no exclusive holder; a process's first
// exclusive lock adds 1 and waits for no lock_all epoch; both undo and retry on
// conflict, and leave when the epoch or their last exclusive lock ends. Shared locks
// and lock_all do not conflict, so nothing else is needed.
//
// A lock of an on-node peer whose words are free (its lock word, and for an exclusive
// lock rank 0's gate, all CPU atomics), with no other epoch open and no earlier lock
// ungranted, and its unlock once the epoch left nothing in flight, are the same steps
// without the engine's call overhead: the MPI layer asks fast_lock and
// fast_unlock first (direct_view.h), and anything else takes lock() and unlock().
// They touch only their own peer's view entry (and the window's quiet mark), so the
// other targets of a multi-target epoch stay on the fast road. lock_all and unlock_all
// have the same shortcut when rank 0's gate is a CPU atomic (fast_lock_all).
//
#include <rdma/fi_atomic.h>

#include <algorithm>
#include <chrono>

#include "atomic_types.h"
#include "window.h"

using namespace oscf;

namespace {
constexpr uint64_t kExclusive = uint64_t{1} << 32;
constexpr uint64_t kGateAll = uint64_t{1} << 32;
constexpr uint64_t kLockWordOffset = offsetof(WindowState, lock);
constexpr uint64_t kGateOffset = offsetof(WindowState, gate);
constexpr uint64_t kLowHalf = kGateAll - 1;

// How one kind of hold takes its word: compare-and-swap from 0, or an add that
// conflicts with what `conflict` selects of the old value and is undone if it does.
struct Claim {
    uint64_t offset;
    bool cas;
    uint64_t add, conflict;
};
constexpr Claim kClaims[] = {
    /* Hold::shared */ {kLockWordOffset, false, 1, ~kLowHalf},
    /* Hold::exclusive */ {kLockWordOffset, true, kExclusive, 0},
    /* Hold::gate_exclusive */ {kGateOffset, false, 1, ~kLowHalf},
    /* Hold::gate_all */ {kGateOffset, false, kGateAll, kLowHalf},
};
// What a release adds. Constant operands: the fabric may read them until the update
// completes.
const uint64_t kUndo[] = {~uint64_t{0}, uint64_t{0} - kExclusive, ~uint64_t{0}, uint64_t{0} - kGateAll};

// A hold on a word this process changes with CPU atomics (its own, or an on-node
// peer's): false, undone, on a conflict.
bool take_word(uint64_t *word, const Claim &c) {
    if (c.cas) return word_compare_swap(word, 0, c.add) == 0;
    if ((word_fetch_add(word, c.add) & c.conflict) == 0) return true;
    word_fetch_add(word, uint64_t{0} - c.add);
    return false;
}
}  // namespace

// Lock words take the provider's atomics where 64-bit accumulates do, so a provider whose
// atomics we do not trust (fabric.cpp) never touches them; but not where its software
// applies them in the target's progress (tcp;ofi_rxm, sockets, with accumulate_path=
// native): there our messages cost the same, and the target applies them under its
// engine lock, as it changes its own words, which acquire() serves first. With the
// provider's atomics a process polling its own window through back-to-back epochs sent
// its own attempts through the fabric too, its progress applied the others' while it
// held the lock, and a waiter starved (win_lock_self_poll, native runs).
bool oscf_win::lock_words_native() const {
    return eng_.caps.native(OSCF_TYPE_UINT64) && !fab().contract().atomics_in_software;
}

int oscf_win::lock_word_atomic(Guard &lk, Peer &p, uint64_t offset, int op, uint64_t operand,
                               uint64_t compare, uint64_t *old) {
    ++stats.lock_attempts;
    if (direct_words(p)) {  // on this node (route.cpp): no message, no help from p
        *old = direct_word(p, offset, op == FI_CSWAP, operand, compare);
        return OSCF_OK;
    }
    if (!lock_words_native()) return lock_word_am(lk, p, offset, op, operand, compare, old);
    OpCounter done;
    uint64_t addr = p.state_base + offset;
    int rc = progress().post("lock word atomic", [&]() -> ssize_t {
        if (op == FI_CSWAP)
            return fab().compare_atomic(&operand, 1, &compare, old, FI_UINT64, FI_CSWAP, p.addr, addr,
                                        p.state_key, &done);
        return fab().fetch_atomic(&operand, 1, old, FI_UINT64, static_cast<fi_op>(op), p.addr, addr,
                                  p.state_key, &done);
    });
    if (rc) return rc;
    done.on_post();
    return wait_done(lk, done);
}

// The same update as an active message that the target's engine applies under its lock
// (or that we apply, under ours, to our own lock word).
int oscf_win::lock_word_am(Guard &lk, Peer &p, uint64_t offset, int op, uint64_t operand, uint64_t compare,
                           uint64_t *old) {
    const bool cas = op == FI_CSWAP;
    if (is_self(p)) {
        uint64_t *word = own_word(offset);
        *old = cas ? word_compare_swap(word, compare, operand) : word_fetch_add(word, operand);
        return OSCF_OK;
    }
    OpCounter done;
    AmHeader h = am_request(p, cas ? kAmCompareSwap : kAmAccumulate, OSCF_TYPE_UINT64, OSCF_OP_SUM,
                            kAmFetch | kAmStateWord, 1, offset);
    h.token = eng_.am->new_request(&done, old, sizeof *old);
    done.on_post();
    int rc = eng_.am->send(p.addr, h, &operand, sizeof operand, cas ? &compare : nullptr,
                           cas ? sizeof compare : 0);
    if (rc) return rc;
    return wait_done(lk, done);
}

uint64_t *oscf_win::own_word(uint64_t offset) {
    return reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(state_.get()) + offset);
}

// Target side of a lock word update sent as an active message. On-node peers change
// the same word with CPU atomics (route.cpp), so this engine does too.
int oscf_win::serve_state_word(const AmHeader &h, const uint8_t *payload, size_t len, char *t,
                               uint8_t *old_out, size_t *old_len) {
    const bool cas = h.opcode == kAmCompareSwap;
    if (h.type != OSCF_TYPE_UINT64 || h.count != 1 || h.offset % 8 || len != (cas ? 16u : 8u) ||
        (!cas && h.op != OSCF_OP_SUM))
        return OSCF_ERR_ARG;
    uint64_t operand, compare = 0;
    std::memcpy(&operand, payload, 8);
    if (cas) std::memcpy(&compare, payload + 8, 8);
    auto *word = reinterpret_cast<uint64_t *>(t);
    const uint64_t old = cas ? word_compare_swap(word, compare, operand) : word_fetch_add(word, operand);
    if (h.flags & kAmFetch) {
        std::memcpy(old_out, &old, 8);
        *old_len = 8;
    }
    return OSCF_OK;
}

// One attempt at a hold: *taken says whether it was; a conflicting add is undone.
int oscf_win::try_hold(Guard &lk, Peer &p, Hold hold, bool *taken) {
    const Claim &c = kClaims[static_cast<int>(hold)];
    uint64_t old = 0;
    int rc = c.cas ? lock_word_atomic(lk, p, c.offset, FI_CSWAP, c.add, 0, &old)
                   : lock_word_atomic(lk, p, c.offset, FI_SUM, c.add, 0, &old);
    if (rc) return rc;
    *taken = c.cas ? old == 0 : (old & c.conflict) == 0;
    if (*taken || c.cas) return OSCF_OK;
    return lock_word_atomic(lk, p, c.offset, FI_SUM, uint64_t{0} - c.add, 0, &old);
}

int oscf_win::acquire(Guard &lk, Peer &p, Hold hold) {
    using clock = std::chrono::steady_clock;
    auto backoff = std::chrono::microseconds(1);
    clock::time_point start;  // read at the first conflict: a free word costs no clock read
    for (bool waited = false;; waited = true) {
        // Others' attempts on our own words may wait for our progress: it runs first, so
        // an attempt that arrived before ours is served before ours. Without it a process
        // polling itself through back-to-back epochs ran progress mostly while it held
        // the lock, and the others' attempts failed for ever. Still no queue: an attempt
        // served while we hold the word fails and backs off.
        if (is_self(p) && own_words_by_progress_) {
            const int prc = progress().serve_locked();
            if (prc < 0) return prc;
        }
        // A writer waiting at our own word (grant_lock) keeps our shared holds out too.
        const bool writer_first = hold == Hold::shared && is_self(p) && !writers_waiting_.empty();
        bool taken = false;
        int rc = writer_first ? OSCF_OK : try_hold(lk, p, hold, &taken);
        if (rc) return rc;
        if (taken) {
            if (waited) count_lock_wait(start);
            return OSCF_OK;
        }
        if (!waited) start = clock::now();
        // Back off while still serving our own incoming traffic: the holder may be
        // waiting for us.
        auto until = clock::now() + backoff;
        rc = progress().wait_until(lk, [until] { return clock::now() >= until; });
        if (rc) return rc;
        backoff = std::min(backoff * 2, std::chrono::microseconds(1000));
    }
}

int oscf_win::release(Peer &p, Hold hold) {
    const uint64_t offset = kClaims[static_cast<int>(hold)].offset;
    const uint64_t *delta = &kUndo[static_cast<int>(hold)];
    if (is_self(p) && !lock_words_native()) {
        drop_own(hold);
        eng_.am->redispatch(id_);  // shared requests held behind our exclusive hold
        return OSCF_OK;
    }
    if (direct_words(p)) {
        // p's engine holds shared requests behind an exclusive hold; it looks again at
        // its next progress round (ActiveMessages::retry_held).
        direct_word(p, offset, false, *delta, 0);
        return OSCF_OK;
    }
    ++stats.lock_attempts;
    if (!lock_words_native()) {
        AmHeader h =
            am_request(p, kAmAccumulate, OSCF_TYPE_UINT64, OSCF_OP_SUM, kAmStateWord | kAmNoReply, 1, offset);
        p.lock.release_went_silent();
        return eng_.am->send(p.addr, h, delta, sizeof *delta);
    }
    int rc =
        post_atomic_write(p, delta, 1, FI_UINT64, FI_SUM, p.state_base + offset, p.state_key, &releases_);
    if (rc == OSCF_OK) releases_.on_post();
    return rc;
}

// The gate lives at rank 0 of the window; a process enters it once for all the
// exclusive locks it holds at a time.
int oscf_win::enter_exclusive_gate(Guard &lk) {
    if (exclusive_gated_ == 0) {
        int rc = acquire(lk, peer(0), Hold::gate_exclusive);
        if (rc) return rc;
    }
    ++exclusive_gated_;
    return OSCF_OK;
}

int oscf_win::leave_exclusive_gate() {
    if (--exclusive_gated_ != 0) return OSCF_OK;
    return release(peer(0), Hold::gate_exclusive);
}

// Call order: the latest lock asked for is granted before another is asked for. An
// unsent request leaves now (with its batch, if one is open) rather than at the next
// message, so the wait has something to wait for.
int oscf_win::await_earlier_lock(Guard &lk) {
    if (ungranted_ < 0) return OSCF_OK;
    Peer &q = peer(ungranted_);
    ungranted_ = -1;
    int rc = q.lock.request_unsent() ? send_batch(q) : OSCF_OK;
    return rc ? rc : await_grant(lk, q);
}

// Lock words as active messages: the target queues the request, and what we send after
// it is served after it (MessageStream), on any provider.
bool oscf_win::lock_requests_queue() const {
    return !lock_words_native();
}

// The request leaves with the first batch to the target (kAmTakeShared or
// kAmTakeExclusive), or alone before any other message to it or any wait (send_batch):
// on tcp;ofi_rxm every message costs a system call on both sides, and lock + put +
// unlock then sends one.
int oscf_win::request_lock(Peer &p, bool exclusive) {
    ++stats.lock_attempts;
    p.lock.defer_request(exclusive);
    list_for_sending(p);
    return OSCF_OK;
}

int oscf_win::send_lock_request(Peer &p) {
    p.lock.take_unsent_request();
    AmHeader h = am_request(p, p.lock.request_exclusive() ? kAmLockExclusive : kAmLockShared,
                            OSCF_TYPE_UINT64, OSCF_OP_NO_OP, kAmStateWord, 0, kLockWordOffset);
    h.token = eng_.am->new_request(&p.lock.grant, nullptr, 0);
    return eng_.am->send(p.addr, h, nullptr, 0);  // a failed send fails the request
}

// Our own lock word is changed directly under the engine lock, so there is nothing to
// queue behind: take it the blocking way, as words we reach with CPU atomics.
int oscf_win::take_lock(Guard &lk, Peer &p, bool exclusive) {
    if (lock_requests_queue() && !is_self(p) && !direct_words(p)) {
        ungranted_ = rank_of(p);
        return request_lock(p, exclusive);
    }
    return acquire(lk, p, exclusive ? Hold::exclusive : Hold::shared);
}

int oscf_win::await_grant(Guard &lk, Peer &p) {
    if (p.lock.grant.idle()) return OSCF_OK;
    const auto start = std::chrono::steady_clock::now();
    int rc = wait_idle(lk, p.lock.grant);
    count_lock_wait(start);
    return rc ? rc : p.lock.grant.take_error();
}

void oscf_win::count_lock_wait(std::chrono::steady_clock::time_point since) {
    ++stats.lock_waits;
    stats.lock_wait_ns += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since)
            .count());
}

// A hold on a word of our own WindowState, taken as acquire() takes one remotely but
// with a CPU atomic (on-node peers change these words that way too).
bool oscf_win::take_own(Hold hold) {
    const Claim &c = kClaims[static_cast<int>(hold)];
    return take_word(own_word(c.offset), c);
}

uint64_t *oscf_win::hold_word(Peer &p, Hold hold) {
    return p.node.word(kClaims[static_cast<int>(hold)].offset);
}

void oscf_win::drop_own(Hold hold) {
    word_fetch_add(own_word(kClaims[static_cast<int>(hold)].offset), kUndo[static_cast<int>(hold)]);
}

void oscf_win::drop_hold(bool exclusive) {
    drop_own(exclusive ? Hold::exclusive : Hold::shared);
}

// Writers first: while an exclusive request waits here, shared requests wait behind it.
// Granting each shared request as it came let readers whose holds overlapped keep the
// word from ever reaching 0, and a writer waited for as long as they kept polling
// (win_lock_writer: more processes than cores, over tcp).
int oscf_win::grant_lock(bool exclusive, uint32_t origin) {
    if (exclusive) return writer_takes(origin, take_own(Hold::exclusive)) ? OSCF_OK : kAmDeferred;
    return writers_waiting_.empty() && take_own(Hold::shared) ? OSCF_OK : kAmDeferred;
}

// Notes whether origin's exclusive request is still waiting (grant_lock); returns taken.
bool oscf_win::writer_takes(uint32_t origin, bool taken) {
    auto it = std::find(writers_waiting_.begin(), writers_waiting_.end(), origin);
    if (taken && it != writers_waiting_.end()) writers_waiting_.erase(it);
    if (!taken && it == writers_waiting_.end()) writers_waiting_.push_back(origin);
    return taken;
}

// A one-shot epoch's request from an origin whose lock word updates travel as messages
// (implicit_epoch.cpp): lock, operation and release in one, served here. The holds are
// those of lock(): the gate first (only at rank 0, kAmImplicitGate), then our word. Both
// are taken and dropped inside one handler, under the engine lock.
int oscf_win::take_implicit_hold(uint8_t flags, uint32_t origin) {
    if (!(flags & kAmImplicitEpoch)) return OSCF_OK;
    const bool gate = (flags & kAmImplicitGate) != 0;
    if (gate && rank_ != 0) return OSCF_ERR_ARG;
    if (gate && !take_own(Hold::gate_exclusive)) return kAmDeferred;  // a lock_all epoch has it
    if (writer_takes(origin, take_own(Hold::exclusive))) return OSCF_OK;
    if (gate) drop_own(Hold::gate_exclusive);
    return kAmDeferred;
}

void oscf_win::drop_implicit_hold(uint8_t flags) {
    if (!(flags & kAmImplicitEpoch)) return;
    drop_own(Hold::exclusive);
    if (flags & kAmImplicitGate) drop_own(Hold::gate_exclusive);
}

oscf_win::LockWords oscf_win::lock_words() const {
    return LockWords{__atomic_load_n(&state_->lock, __ATOMIC_ACQUIRE),
                     __atomic_load_n(&state_->gate, __ATOMIC_ACQUIRE)};
}

void oscf_win::note_held(const LockWords &before) {
    // Requests that failed against different words: each may be grantable against the
    // other's, so the next round tries them all.
    if (held_noted_ && held_words_ != before) held_mixed_ = true;
    held_words_ = before;
    held_noted_ = true;
}

bool oscf_win::held_may_grant() const {
    return !held_noted_ || held_mixed_ || lock_words() != held_words_;
}

int oscf_win::confirm_releases() {
    for (Peer &p : peers_) {
        if (!p.lock.take_unanswered_release()) continue;
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
    Peer &p = peer(target);
    if (p.lock.held())
        return usage_error(OSCF_ERR_RMA_CONFLICT, "rank %d is already locked by this process", target);
    bool nocheck = (assert_bits & OSCF_MODE_NOCHECK) != 0;
    if (!nocheck && (rc = await_earlier_lock(lk))) return rc;
    // An exclusive lock enters the gate first, and waits for it: its request must not
    // be granted while a lock_all epoch may still reach the target.
    if (!nocheck && exclusive && (rc = enter_exclusive_gate(lk))) return rc;
    if (!nocheck && (rc = take_lock(lk, p, exclusive))) {
        int leave = exclusive ? leave_exclusive_gate() : OSCF_OK;
        return leave ? leave : rc;
    }
    begin_lock(p, exclusive, !nocheck);
    return OSCF_OK;
}

void oscf_win::begin_lock(Peer &p, bool exclusive, bool acquired) {
    p.lock.begin(exclusive, acquired);
    ++locks_held_;
    ++access_epoch_;
    // An epoch's first operation to an on-node peer need not enter the engine either:
    // the view opens the peer now if the lock is held already (direct_view.cpp).
    offer_direct(rank_of(p));
}

// MPI_Win_lock from the direct view (direct_view.h): lock()'s steps when none of its
// checks can fail and the words it takes (the peer's lock word; for an exclusive lock
// rank 0's gate too) are CPU atomics and free, without the engine's call overhead.
// False: nothing changed, call lock(). Other peers' view entries stay open: a lock
// taken here sends nothing and leaves nothing in flight, which is all an open entry
// promises.
bool oscf_win::fast_lock(int target, bool exclusive, int assert_bits) {
    // Not counted among the view's sync calls (view_call_due): its unlock is, so a loop
    // of epochs still enters the engine now and then, at half the cost per epoch.
    if (static_cast<unsigned>(target) >= static_cast<unsigned>(size_) || !view_on_) return false;
    const bool nocheck = (assert_bits & OSCF_MODE_NOCHECK) != 0;
    uint64_t *word = view_lock_words_[static_cast<size_t>(target)];
    Peer &p = peer(target);
    if (lock_all_ || pscw_access_ || fence_open_ || p.lock.held() ||
        (!nocheck && (ungranted_ >= 0 || !word || (exclusive && !view_gate_word_))))
        return false;
    if (!nocheck && !take_direct(word, exclusive)) return false;  // lock() waits for it
    begin_lock(p, exclusive, !nocheck);
    settle_direct_view();
    return true;
}

// lock()'s holds, each one attempt with a CPU atomic: an exclusive lock enters rank 0's
// gate first (once for all the exclusive locks held), as lock() does. False: nothing is
// held.
bool oscf_win::take_direct(uint64_t *word, bool exclusive) {
    ++stats.lock_attempts;
    ++stats.direct_words;
    if (!exclusive) return take_word(word, kClaims[static_cast<int>(Hold::shared)]);
    const bool enter = exclusive_gated_ == 0;
    if (enter) {
        ++stats.lock_attempts;
        ++stats.direct_words;
        if (!take_word(view_gate_word_, kClaims[static_cast<int>(Hold::gate_exclusive)])) return false;
    }
    if (take_word(word, kClaims[static_cast<int>(Hold::exclusive)])) {
        ++exclusive_gated_;
        return true;
    }
    if (enter) release_direct(peer(0), Hold::gate_exclusive, view_gate_word_);
    return false;
}

// A hold on a word the view reaches with CPU atomics, released from the fast road: our
// own through release() under the engine lock (it serves what the hold kept waiting),
// a peer's with the CPU atomic release() itself would use. Inlined: as a call it added
// 30 instructions to every fast unlock (callgrind).
[[gnu::always_inline]] inline int oscf_win::release_direct(Peer &p, Hold hold, uint64_t *word) {
    if (is_self(p)) {
        Guard lk(progress().mutex());
        return release(p, hold);
    }
    ++stats.direct_words;  // release()'s direct_words road
    word_fetch_add(word, kUndo[static_cast<int>(hold)]);
    return OSCF_OK;
}

// MPI_Win_unlock of a lock whose peer's view entry is open: nothing to it is in flight
// or unreported, no request unsent, no batch to carry the release, so unlock() comes
// down to the releases, CPU atomics here. 0: call unlock(); 1: done; < 0: done, and a
// release failed. Only this peer's entry closes; the quiet mark goes with the last
// lock.
int oscf_win::fast_unlock(int target) {
    if (!oscf_direct_open(&view_, target) || !view_call_due()) return 0;
    Peer &p = peer(target);
    uint64_t *word = view_lock_words_[static_cast<size_t>(target)];
    if (lock_all_ || !p.lock.held() || !word || (p.lock.exclusive() && !view_gate_word_)) return 0;
    view_peers_[static_cast<size_t>(target)].epoch = 0;
    if (ungranted_ == target) ungranted_ = -1;
    int rc = OSCF_OK;
    if (p.lock.acquired() && p.lock.exclusive()) {
        // The gate is left after the target, as unlock() does.
        Guard lk(progress().mutex());
        rc = release(p, Hold::exclusive);
        const int grc = leave_exclusive_gate();
        if (!rc) rc = grc;
    } else if (p.lock.acquired()) {
        rc = release_direct(p, Hold::shared, word);
    }
    end_lock(p);
    if (!locks_held_) view_.quiet = 0;
    return rc ? rc : 1;
}

void oscf_win::end_lock(Peer &p) {
    p.lock.end();
    --locks_held_;
}

int oscf_win::unlock(Guard &lk, int target) {
    int rc = check_target(target);
    if (rc) return rc;
    Peer &p = peer(target);
    if (lock_all_ || !p.lock.held())
        return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_unlock of rank %d, which is not locked", target);
    if (ungranted_ == target) ungranted_ = -1;
    // Before the wait that sends the batches: a request nothing went with is dropped,
    // and a release rides on the last batch where lock words are messages.
    p.lock.cancel_unsent_request(!p.batch.empty());
    p.lock.fold_release(!p.batch.empty(), !lock_words_native());
    // Operations must be complete at the target before others may take the lock. Our
    // request's grant is one of them (Peer::lock).
    rc = wait_idle(lk, p.ops);
    int op_err = p.ops.take_error();
    const bool exclusive = p.lock.exclusive();
    if (!rc && p.lock.releases_alone()) rc = release(p, exclusive ? Hold::exclusive : Hold::shared);
    // The gate after the target: our operations there are complete already.
    if (p.lock.acquired() && exclusive) {
        int grc = leave_exclusive_gate();
        if (!rc) rc = grc;
    }
    end_lock(p);
    return rc ? rc : op_err;
}

// MPI_Win_lock_all from the direct view: lock_all()'s steps when no other epoch is open
// and rank 0's gate (unless NOCHECK) is a free CPU atomic. The entries of the peers we
// map open at once, as after any engine call that left nothing in flight. False:
// nothing changed, call lock_all().
bool oscf_win::fast_lock_all(int assert_bits) {
    if (!view_on_ || lock_all_ || locks_held_ || pscw_access_ || fence_open_ || ungranted_ >= 0) return false;
    const bool gated = (assert_bits & OSCF_MODE_NOCHECK) == 0;
    if (gated) {
        if (!view_gate_word_) return false;
        ++stats.lock_attempts;
        ++stats.direct_words;
        if (!take_word(view_gate_word_, kClaims[static_cast<int>(Hold::gate_all)]))
            return false;  // waits there
    }
    lock_all_gated_ = gated;
    lock_all_ = true;
    ++access_epoch_;
    for (int r : view_direct_ranks_) open_direct_entry(r);
    mark_quiet();
    return true;
}

// MPI_Win_unlock_all when the quiet mark says nothing is in flight or unreported
// anywhere (what unlock_all() waits for): the gate's release, a CPU atomic, and every
// entry closes. 0: call unlock_all(); 1: done; < 0: done, and the release failed.
int oscf_win::fast_unlock_all() {
    // A gate taken by the engine's road may be a fabric atomic's: released there too.
    if (!lock_all_ || view_.quiet != view_.epoch || (lock_all_gated_ && !view_gate_word_) || !view_call_due())
        return 0;
    const int rc = lock_all_gated_ ? release_direct(peer(0), Hold::gate_all, view_gate_word_) : OSCF_OK;
    lock_all_gated_ = false;
    lock_all_ = false;
    close_direct_view();
    return rc ? rc : 1;
}

int oscf_win::lock_all(Guard &lk, int assert_bits) {
    if (lock_all_ || locks_held_ || pscw_access_)
        return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_lock_all inside another access epoch");
    int rc = close_idle_fence("MPI_Win_lock_all");
    if (rc) return rc;
    lock_all_gated_ = (assert_bits & OSCF_MODE_NOCHECK) == 0;
    if (lock_all_gated_ && (rc = acquire(lk, peer(0), Hold::gate_all))) {
        lock_all_gated_ = false;
        return rc;
    }
    lock_all_ = true;
    ++access_epoch_;
    return OSCF_OK;
}

int oscf_win::unlock_all(Guard &lk) {
    if (!lock_all_) return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_unlock_all without MPI_Win_lock_all");
    int rc = wait_idle(lk, all_ops_);
    int op_err = take_window_error();
    if (lock_all_gated_) {
        int grc = release(peer(0), Hold::gate_all);
        if (!rc) rc = grc;
        lock_all_gated_ = false;
    }
    lock_all_ = false;
    return rc ? rc : op_err;
}
