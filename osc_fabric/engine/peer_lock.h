// What this process holds of one target's lock, from MPI_Win_lock to MPI_Win_unlock,
// and the two messages that may ride on an accumulate batch instead of going alone:
// a lock request that waits unsent for the epoch's first batch, and the release that
// ends its last one. lock.cpp runs the protocol (docs/PROTOCOLS.md); the rules of
// this one target's state are here.
#pragma once

#include <cstdint>

#include "am_proto.h"
#include "request.h"

namespace oscf {

class PeerLock {
public:
    enum class Mode : uint8_t { none, shared, exclusive };

    bool held() const { return mode_ != Mode::none; }
    bool exclusive() const { return mode_ == Mode::exclusive; }
    // False under MPI_MODE_NOCHECK, or when the request was never needed: nothing to release.
    bool acquired() const { return acquired_; }

    // MPI_Win_lock succeeded (the word is taken, or its request is on its way).
    void begin(bool exclusive, bool acquired) {
        mode_ = exclusive ? Mode::exclusive : Mode::shared;
        acquired_ = acquired;
    }
    // MPI_Win_unlock finished, released or not.
    void end() {
        mode_ = Mode::none;
        acquired_ = false;
        release_with_batch_ = false;
    }

    // The grant of our request, counted as one of the target's operations.
    OpCounter grant;

    // A request that leaves with the first message to the target.
    void defer_request(bool exclusive) {
        grant.on_post();
        request_unsent_ = true;
        request_exclusive_ = exclusive;
    }
    bool request_unsent() const { return request_unsent_; }
    bool request_exclusive() const { return request_exclusive_; }
    // The request is leaving now (alone, or with a batch): true if one was waiting.
    bool take_unsent_request() {
        const bool was = request_unsent_;
        request_unsent_ = false;
        return was;
    }
    // At unlock, before anything could send it: a shared epoch that sent nothing to the
    // target needs no lock, since nobody can tell it was not taken. False when the
    // request must still go: it travels with records, or it is exclusive. unlock waits
    // for an exclusive grant, as osc/pt2pt's does, so a program that orders something
    // else by the lock (a file, say) still finds its epochs one after another.
    bool cancel_unsent_request(bool records_waiting) {
        if (!request_unsent_ || records_waiting || request_exclusive_) return false;
        request_unsent_ = false;
        grant.on_complete(OSCF_OK);
        acquired_ = false;
        return true;
    }

    // At unlock, where lock words are updated by messages: the release rides on the
    // last batch when one is waiting, and the target applies it after the records.
    void fold_release(bool records_waiting, bool words_by_message) {
        release_with_batch_ = acquired_ && records_waiting && words_by_message;
    }
    // The release goes alone (release_flags() is empty): lock.cpp sends it.
    bool releases_alone() const { return acquired_ && !release_with_batch_; }
    // kAmBatch flags for the release a batch carries, or 0.
    uint8_t release_flags() const {
        if (!release_with_batch_) return 0;
        return mode_ == Mode::exclusive ? kAmReleaseExclusive : kAmReleaseShared;
    }

    // A release sent with kAmNoReply: before the window is freed, one answered message
    // must confirm the target applied it.
    void release_went_silent() { release_unanswered_ = true; }
    bool take_unanswered_release() {
        const bool was = release_unanswered_;
        release_unanswered_ = false;
        return was;
    }

private:
    Mode mode_ = Mode::none;
    bool acquired_ = false;
    bool request_unsent_ = false;
    bool request_exclusive_ = false;
    bool release_with_batch_ = false;
    bool release_unanswered_ = false;
};

}  // namespace oscf
