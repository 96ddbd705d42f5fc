// General active-target synchronization (post/start/complete/wait/test) without any
// collective and without the target running code for its origins: each notification
// is one plain RMA write of a sequence number into the peer's WindowState (see
// window_blob.h), a word nobody else writes.
//
//   post(G) at t:      for o in G: post_seq[t] at o := ++posts_sent[o]
//   start(S) at o:     for t in S: wait until our post_seq[t] > posts_seen[t]; posts_seen[t]++
//   complete() at o:   flush every t in S, then complete_seq[o] at t := ++completes_sent[t]
//   wait()/test() at t: every o in G has complete_seq[o] >= completes_expected[o]
//
// Counting instead of flags lets a target post its next epoch before the origin has
// even started the current one (pscw_counts.h keeps the counts). MPI_MODE_NOCHECK on both post and start skips the
// post notifications, as the standard allows when the user guarantees the order.

#include "window.h"

using namespace oscf;

volatile uint64_t &oscf_win::state_word(uint64_t offset) {
    return *reinterpret_cast<volatile uint64_t *>(reinterpret_cast<char *>(state_.get()) + offset);
}

int oscf_win::write_seq(Guard &lk, int rank, uint64_t offset, uint64_t value) {
    if (rank == rank_) {
        state_word(offset) = value;
        return OSCF_OK;
    }
    Peer &p = peer(rank);
    if (direct_words(p)) {  // on this node: a store it sees at its next poll
        direct_store_word(p, offset, value);
        return OSCF_OK;
    }
    OpCounter done;
    int rc = progress().post("fi_writemsg (pscw)", [&] {
        return fab().rma(true, &value, sizeof value, p.addr, p.state_base + offset, p.state_key, &done,
                         nullptr);
    });
    if (rc) return rc;
    done.on_post();
    return wait_done(lk, done);
}

// MPI_Win_complete's notification to target t, after its operations are done: posted,
// not waited for. The standard asks complete for the origin's side only, and a round
// trip per target is what a small epoch over the network costs most. The next wait on
// the target's operations (the next complete, a flush, MPI_Win_free) covers the write,
// and reports its failure; its value lives in the Peer until then.
int oscf_win::notify_complete(Guard &lk, int t, uint64_t value) {
    const uint64_t offset = complete_seq_offset(static_cast<size_t>(size_), static_cast<size_t>(rank_));
    Peer &p = peer(t);
    if (t == rank_ || direct_words(p)) return write_seq(lk, t, offset, value);
    p.complete_note = value;
    const int rc = progress().post("fi_writemsg (pscw)", [&] {
        return fab().rma(true, &p.complete_note, sizeof p.complete_note, p.addr, p.state_base + offset,
                         p.state_key, &p.ops, nullptr);
    });
    if (!rc) p.ops.on_post();
    return rc;
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
        int wrc = wait_done(lk, p.ops);
        if (!wrc) wrc = notify_complete(lk, t, pscw_.next_complete(t));
        if (!rc) rc = wrc;
    }
    pscw_access_ = false;
    access_group_.clear();
    return rc;
}

int oscf_win::post(Guard &lk, const int *group, int n, int assert_bits) {
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
        if ((rc = write_seq(lk, o, post_seq_offset(static_cast<size_t>(rank_)), pscw_.next_post(o))))
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
