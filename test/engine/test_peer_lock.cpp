// The rules of one target's lock state at the origin (peer_lock.h): which lock is
// held, whether a release is owed, and what rides on the epoch's batches.
#include "catch_compat.h"

#include "../../osc_fabric/engine/peer_lock.h"

using namespace oscf;

TEST_CASE("a lock is held from begin to end, and owes a release only when acquired", "[peer_lock]") {
    PeerLock l;
    CHECK_FALSE(l.held());
    l.begin(true, true);
    CHECK(l.held());
    CHECK(l.exclusive());
    CHECK(l.releases_alone());
    l.end();
    CHECK_FALSE(l.held());
    CHECK_FALSE(l.acquired());

    l.begin(false, false);  // MPI_MODE_NOCHECK
    CHECK(l.held());
    CHECK_FALSE(l.exclusive());
    CHECK_FALSE(l.releases_alone());
    l.fold_release(true, true);
    CHECK(l.release_flags() == 0);  // nothing to release, even with records waiting
}

TEST_CASE("a deferred shared request is counted until it is sent or cancelled", "[peer_lock]") {
    PeerLock l;
    l.defer_request(false);
    l.begin(false, true);
    CHECK(l.request_unsent());
    CHECK_FALSE(l.grant.idle());
    CHECK(l.take_unsent_request());
    CHECK_FALSE(l.take_unsent_request());  // it leaves once
    CHECK_FALSE(l.grant.idle());           // until its grant arrives
    l.grant.on_complete(OSCF_OK);
    CHECK(l.grant.idle());
}

TEST_CASE("an epoch that sent nothing cancels its request and owes no release", "[peer_lock]") {
    PeerLock l;
    l.defer_request(false);
    l.begin(false, true);
    CHECK(l.cancel_unsent_request(false));
    CHECK(l.grant.idle());
    CHECK(l.grant.take_error() == OSCF_OK);
    CHECK_FALSE(l.acquired());
    CHECK_FALSE(l.releases_alone());
    CHECK(l.held());  // still locked until MPI_Win_unlock ends it
}

TEST_CASE("an exclusive request is never cancelled, and says what it is", "[peer_lock]") {
    PeerLock l;
    l.defer_request(true);
    l.begin(true, true);
    CHECK(l.request_exclusive());
    CHECK_FALSE(l.cancel_unsent_request(false));  // unlock sends it and waits for its grant
    CHECK(l.request_unsent());
    CHECK_FALSE(l.grant.idle());
    CHECK(l.acquired());
    CHECK(l.releases_alone());
    CHECK(l.take_unsent_request());
    CHECK(l.request_exclusive());  // still, for the message that carries it
}

TEST_CASE("a request with records waiting is not cancelled", "[peer_lock]") {
    PeerLock l;
    l.defer_request(false);
    l.begin(false, true);
    CHECK_FALSE(l.cancel_unsent_request(true));
    CHECK(l.request_unsent());
    CHECK(l.acquired());
}

TEST_CASE("the release rides on the last batch only where lock words are messages", "[peer_lock]") {
    PeerLock l;
    l.begin(false, true);
    l.fold_release(true, true);
    CHECK(l.release_flags() == kAmReleaseShared);
    CHECK_FALSE(l.releases_alone());

    l.fold_release(false, true);  // no batch to ride on
    CHECK(l.release_flags() == 0);
    CHECK(l.releases_alone());

    l.fold_release(true, false);  // native atomics release it
    CHECK(l.release_flags() == 0);
    CHECK(l.releases_alone());
    l.end();

    l.begin(true, true);
    l.fold_release(true, true);
    CHECK(l.release_flags() == kAmReleaseExclusive);
    l.end();
    CHECK(l.release_flags() == 0);  // the next epoch starts clean
}

TEST_CASE("a silent release is confirmed once", "[peer_lock]") {
    PeerLock l;
    CHECK_FALSE(l.take_unanswered_release());
    l.release_went_silent();
    CHECK(l.take_unanswered_release());
    CHECK_FALSE(l.take_unanswered_release());
}
