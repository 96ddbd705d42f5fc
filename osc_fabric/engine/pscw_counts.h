// The counting rules of general active target (pscw.cpp has the protocol): what this
// process sent to and saw from each peer. Counts instead of flags let a target post its
// next exposure epoch before an origin started the current one; each side only ever
// compares a word the other wrote with its own count. The words themselves live in the
// peers' WindowState; callers read them through a function, so these rules need no
// fabric and are tested alone (test/engine/test_pscw_counts.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace oscf {

class PscwCounts {
public:
    void resize(size_t ranks) {
        posts_seen_.assign(ranks, 0);
        posts_sent_.assign(ranks, 0);
        completes_expected_.assign(ranks, 0);
        completes_sent_.assign(ranks, 0);
    }

    // Target side. post(): the value to write into origin's post word for us.
    uint64_t next_post(int origin) { return ++posts_sent_[at(origin)]; }
    // post(): one more complete is due from origin.
    void expect_complete(int origin) { ++completes_expected_[at(origin)]; }
    // wait()/test(): every origin of group wrote the completes due. complete_word(o) reads
    // the word o writes in our state.
    template <class Read>
    bool completes_arrived(const std::vector<int> &group, Read complete_word) const {
        for (int o : group)
            if (complete_word(o) < completes_expected_[at(o)]) return false;
        return true;
    }

    // Origin side. start(): every target of group posted since we last took its post.
    // post_word(t) reads the word t writes in our state.
    template <class Read>
    bool posts_arrived(const std::vector<int> &group, Read post_word) const {
        for (int t : group)
            if (post_word(t) <= posts_seen_[at(t)]) return false;
        return true;
    }
    // start(), once they arrived (or under MPI_MODE_NOCHECK, never): one post taken.
    void take_posts(const std::vector<int> &group) {
        for (int t : group) ++posts_seen_[at(t)];
    }
    // complete(): the value to write into target's complete word for us.
    uint64_t next_complete(int target) { return ++completes_sent_[at(target)]; }

private:
    static size_t at(int rank) { return static_cast<size_t>(rank); }
    std::vector<uint64_t> posts_seen_;          // posts taken from each target
    std::vector<uint64_t> posts_sent_;          // posts sent to each origin
    std::vector<uint64_t> completes_expected_;  // completes due from each origin
    std::vector<uint64_t> completes_sent_;      // completes sent to each target
};

}  // namespace oscf
