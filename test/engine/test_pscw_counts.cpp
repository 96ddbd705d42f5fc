// The counting rules of PSCW (pscw_counts.h) between two simulated processes, with the
// words each writes into the other's state as plain variables.
#include "catch_compat.h"

#include "../../osc_fabric/engine/pscw_counts.h"

using namespace oscf;

namespace {
// Rank 0 is the origin, rank 1 the target.
struct Pair {
    PscwCounts origin, target;
    uint64_t post_word = 0;      // in the origin's state, written by the target
    uint64_t complete_word = 0;  // in the target's state, written by the origin
    const std::vector<int> to_target{1}, from_origin{0};
    Pair() {
        origin.resize(2);
        target.resize(2);
    }
    void post() {
        target.expect_complete(0);
        post_word = target.next_post(0);
    }
    bool can_start() const {
        return origin.posts_arrived(to_target, [&](int) { return post_word; });
    }
    void complete() { complete_word = origin.next_complete(1); }
    bool can_finish() const {
        return target.completes_arrived(from_origin, [&](int) { return complete_word; });
    }
};
}  // namespace

TEST_CASE("an origin starts only after the target posted, once per post", "[pscw]") {
    Pair p;
    CHECK_FALSE(p.can_start());
    p.post();
    REQUIRE(p.can_start());
    p.origin.take_posts(p.to_target);
    CHECK_FALSE(p.can_start());  // the same post does not open a second epoch
}

TEST_CASE("a target's wait ends when every origin completed the epoch", "[pscw]") {
    Pair p;
    p.post();
    CHECK_FALSE(p.can_finish());
    p.origin.take_posts(p.to_target);
    p.complete();
    CHECK(p.can_finish());
}

TEST_CASE("a target may post its next epoch before the origin started this one", "[pscw]") {
    Pair p;
    p.post();
    p.post();  // the target ran ahead: two posts, before any start
    CHECK_FALSE(p.can_finish());
    for (int epoch = 0; epoch < 2; ++epoch) {
        REQUIRE(p.can_start());
        p.origin.take_posts(p.to_target);
        p.complete();
    }
    CHECK_FALSE(p.can_start());
    CHECK(p.can_finish());
}

TEST_CASE("a complete from an earlier epoch does not end a later wait", "[pscw]") {
    Pair p;
    p.post();
    p.origin.take_posts(p.to_target);
    p.complete();
    REQUIRE(p.can_finish());
    p.post();  // next exposure epoch: the old complete must not count
    CHECK_FALSE(p.can_finish());
}
