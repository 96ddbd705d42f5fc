// General active-target synchronization (post/start/complete/wait/test) without any
// collective and without the target running code for its origins: each notification
// is one plain RMA write of a sequence number into the peer's WindowState (see
// window_blob.h), a word nobody else writes.
//
//   post(G) at t:      for o in G: post_seq[t] at o := ++posts_sent[o]
//   start(S) at o:     for t in S: wait until our post_seq[t] > posts_seen[t]; posts_seen[t]++
//   complete() at o:   flush every t in S, then complete_seq[o] at t := ++completes_sent[t];
//                      or, when what is in flight to t is only active messages that need
//                      nothing more of o, send kAmComplete behind them: t serves its
//                      origin's messages in order, so it sets the word once they are applied
//   wait()/test() at t: every o in G has complete_seq[o] >= completes_expected[o]
//
// The writes are posted and not waited for (notify). Counting instead of flags lets a
// target post its next epoch before the origin has even started the current one
// (pscw_counts.h keeps the counts). MPI_MODE_NOCHECK on both post and start skips the
// post notifications, as the standard allows when the user guarantees the order.

#include "window.h"

using namespace oscf;

volatile uint64_t &oscf_win::state_word(uint64_t offset) {
    return *reinterpret_cast<volatile uint64_t *>(reinterpret_cast<char *>(state_.get()) + offset);
}

// A notification (a post or a complete) for word `offset` of rank t's WindowState:
// posted, not waited for. Post and complete ask nothing of the peer's side, and a round
// trip per peer is what a small epoch over the network costs most. The next wait on our
// operations to t (a complete, a flush, MPI_Win_free) covers the write and reports its
// failure; `note`, in the Peer, holds the value until then. A later notification may
// overwrite it first: the counts only grow, so t then reads the later one twice.
int oscf_win::notify(int t, uint64_t offset, uint64_t value, uint64_t &note) {
    if (t == rank_) {
        state_word(offset) = value;
        return OSCF_OK;
    }
    Peer &p = peer(t);
    if (direct_words(p)) {  // on this node: a store it sees at its next poll
        direct_store_word(p, offset, value);
        return OSCF_OK;
    }
    note = value;
    const int rc = progress().post("fi_writemsg (pscw)", [&] {
        return fab().rma(true, &note, sizeof note, p.addr, p.state_base + offset, p.state_key, &p.ops,
                         nullptr);
    });
    if (!rc) p.ops.on_post();
    return rc;
}

// MPI_Win_complete's notification to network target t while packed puts and
// accumulates to it are still being applied: the standard asks complete for the origin's
// side only, and their bytes are already in our copies. Waits for everything else (RMA
// the target does not order behind its messages, gets whose bytes we still need), then
// sends kAmComplete behind the rest, or on t's batch when there is one.
int oscf_win::complete_in_stream(Guard &lk, int t, uint64_t value) {
    Peer &p = peer(t);
    // What is waited for is never in a batch (accumulate_batch.cpp), so t's batch stays
    // to carry the notification.
    int rc = progress().wait_until(
        lk, [&p] { return p.ops.in_flight() == p.streamed_ops.in_flight() + p.streamed_acc.in_flight(); });
    if (!rc) rc = p.ops.take_error();
    if (rc) return rc;
    if (!p.batch.empty()) return send_batch(p, value);
    // Unanswered: the target's reply would be a send on its way to its wait, and only
    // a malformed message fails there. The operations it follows answer for themselves.
    const AmHeader h = am_request(p, kAmComplete, OSCF_TYPE_UINT8, OSCF_OP_NO_OP, kAmNoReply, 0, value);
    return eng_.am->send(p.addr, h, nullptr, 0);
}

// kAmComplete: every earlier message of its origin is served (am.h), so what its epoch
// did here is applied. Counts only grow: a late or repeated message changes nothing.
int oscf_win::serve_complete(const AmHeader &h, size_t len) {
    return len == 0 ? note_complete(h.origin_rank, h.offset) : OSCF_ERR_ARG;
}

int oscf_win::note_complete(uint32_t origin, uint64_t value) {
    if (origin >= static_cast<uint32_t>(size_)) return OSCF_ERR_ARG;  // nobody's word
    volatile uint64_t &word = state_word(complete_seq_offset(static_cast<size_t>(size_), origin));
    if (word < value) word = value;
    return OSCF_OK;
}

int oscf_win::start(Guard &lk, const int *group, int n, int assert_bits) {
    if (pscw_access_ || lock_all_ || locks_held_)
        return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_start inside another access epoch");
    int rc = close_idle_fence("MPI_Win_start");
    if (rc) return rc;
    for (int i = 0; i < n; ++i)
        if ((rc = check_target(group[i]))) return rc;
    access_group_.assign(group, group + n);
    in_access_group_.assign(static_cast<size_t>(size_), 0);
    for (int t : access_group_) in_access_group_[static_cast<size_t>(t)] = 1;
    if (!(assert_bits & OSCF_MODE_NOCHECK)) {
        // Wait for every target's post, serving our own incoming traffic meanwhile.
        rc = progress().wait_until(lk, [&] {
            return pscw_.posts_arrived(
                access_group_, [&](int t) { return state_word(post_seq_offset(static_cast<size_t>(t))); });
        });
        if (rc) return rc;
        pscw_.take_posts(access_group_);
    }
    pscw_access_ = true;
    ++access_epoch_;
    return OSCF_OK;
}

int oscf_win::complete(Guard &lk) {
    if (!pscw_access_) return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start");
    int rc = OSCF_OK;
    for (int t : access_group_) {
        Peer &p = peer(t);
        int wrc;
        // A batch not yet sent is streamed too (accumulate_batch.cpp).
        if (t != rank_ && !direct_words(p) &&
            (!p.batch.empty() || !p.streamed_ops.idle() || !p.streamed_acc.idle())) {
            wrc = complete_in_stream(lk, t, pscw_.next_complete(t));
        } else {
            wrc = wait_done(lk, p.ops);
            const uint64_t offset =
                complete_seq_offset(static_cast<size_t>(size_), static_cast<size_t>(rank_));
            if (!wrc) wrc = notify(t, offset, pscw_.next_complete(t), p.complete_note);
        }
        if (!rc) rc = wrc;
    }
    pscw_access_ = false;
    access_group_.clear();
    return rc;
}

int oscf_win::post(Guard &, const int *group, int n, int assert_bits) {
    if (pscw_exposure_) return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_post inside an exposure epoch");
    if (fence_open_ && ops_since_fence_)
        return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_post inside a fence epoch with operations pending");
    int rc;
    for (int i = 0; i < n; ++i)
        if ((rc = check_target(group[i]))) return rc;
    exposure_group_.assign(group, group + n);
    for (int o : exposure_group_) pscw_.expect_complete(o);
    pscw_exposure_ = true;
    if (assert_bits & OSCF_MODE_NOCHECK) return OSCF_OK;
    for (int o : exposure_group_) {
        if ((rc = notify(o, post_seq_offset(static_cast<size_t>(rank_)), pscw_.next_post(o),
                         peer(o).post_note)))
            return rc;
    }
    return OSCF_OK;
}

bool oscf_win::exposure_complete() {
    return pscw_.completes_arrived(exposure_group_, [&](int o) {
        return state_word(complete_seq_offset(static_cast<size_t>(size_), static_cast<size_t>(o)));
    });
}

int oscf_win::wait(Guard &lk) {
    if (!pscw_exposure_) return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_wait without MPI_Win_post");
    int rc = progress().wait_until(lk, [&] { return exposure_complete(); });
    if (rc) return rc;
    pscw_exposure_ = false;
    exposure_group_.clear();
    return OSCF_OK;
}

int oscf_win::test(Guard &lk, bool *done) {
    if (!pscw_exposure_) return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_test without MPI_Win_post");
    int rc = progress().run_locked();
    if (rc < 0) return rc;
    *done = exposure_complete();
    if (!*done && rc == 0) {
        // Callers spin on MPI_Win_test; without this, 4 ranks on 2 cores took 200
        // million calls (~7 s) to see completes that MPI_Win_wait saw at once.
        Progress::idle(lk);
        *done = exposure_complete();
    }
    if (*done) {
        pscw_exposure_ = false;
        exposure_group_.clear();
    }
    return OSCF_OK;
}
