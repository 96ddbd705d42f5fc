// Conditional swaps and one-shot epochs (swap.cpp, implicit_epoch.cpp) between two
// engines, on both providers and both accumulate paths.
#include <cstring>
#include <thread>

#include "two_ranks.h"

namespace {
const int64_t kStart[4] = {10, 20, 30, 40};
}  // namespace

TEST_CASE("conditional swaps store where the comparison holds and fetch every old value", "[swap]") {
    AccSetup s = acc_test_setup();
    size_t sizes[2] = {64, 64};
    TwoRanks t(s.provider, OSCF_FLAVOR_ALLOCATE, sizes, 1, s.path);
    struct Row {
        oscf_swap swap;
        int64_t compare[4];
        int64_t want[4];
    };
    const int64_t value[4] = {-1, -2, -3, -4};
    const Row rows[] = {
        {OSCF_SWAP_LT, {5, 20, 31, 40}, {-1, 20, 30, 40}},
        {OSCF_SWAP_GE, {5, 20, 31, 40}, {10, -2, -3, -4}},
        {OSCF_SWAP_NE, {10, 0, 30, 0}, {10, -2, 30, -4}},
        {OSCF_SWAP_MASK, {0xf, 0, 0, -1}, {(10 & ~0xf) | (-1 & 0xf), 20, 30, -4}},
    };
    for (const Row &r : rows) {
        CAPTURE(r.swap);
        std::memcpy(t.mem(1), kStart, sizeof kStart);
        int64_t old[4] = {};
        REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
        REQUIRE(oscf_win_swap(t.win[0], 1, value, r.compare, old, 4, OSCF_TYPE_INT64, r.swap, 0, 0,
                              nullptr) == OSCF_OK);
        REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
        CHECK(std::memcmp(old, kStart, sizeof old) == 0);
        CHECK(std::memcmp(t.mem(1), r.want, sizeof r.want) == 0);
    }
}

TEST_CASE("a one-shot epoch needs no epoch of its own and completes when it returns", "[swap][implicit]") {
    AccSetup s = acc_test_setup();
    size_t sizes[2] = {64, 64};
    TwoRanks t(s.provider, OSCF_FLAVOR_ALLOCATE, sizes, 1, s.path);
    const int nocheck = GENERATE(0, OSCF_MODE_NOCHECK);
    std::memcpy(t.mem(1), kStart, sizeof kStart);
    const double candidate = 3.5;
    double old = 0;
    const double start = 1e9;
    std::memcpy(t.mem(1) + 32, &start, sizeof start);
    oscf_rmw keep_min{1, OSCF_OP_NO_OP, OSCF_SWAP_LT, OSCF_TYPE_DOUBLE, 1, &candidate, &candidate, &old, 32};
    oscf_engine_stats before{}, after{};
    REQUIRE(oscf_engine_get_stats(t.eng[0], &before) == OSCF_OK);
    REQUIRE(oscf_win_rmw_implicit(t.win[0], 1, &keep_min, nocheck) == OSCF_OK);
    REQUIRE(oscf_engine_get_stats(t.eng[0], &after) == OSCF_OK);
    if (s.path == OSCF_ACC_AM || s.provider == "shm") {
        // Lock, swap and release in one message of two doubles (the gate of exclusive
        // locks is at rank 0, this process: no message).
        CHECK(after.windows.am_requests == before.windows.am_requests + 1);
        CHECK(after.message_bytes == before.message_bytes + 2 * sizeof(double));
    }
    CHECK(old == start);
    double now;
    std::memcpy(&now, t.mem(1) + 32, sizeof now);
    CHECK(now == candidate);
    int64_t add = 5, was = 0;
    oscf_rmw fetch_add{0, OSCF_OP_SUM, OSCF_SWAP_EQ, OSCF_TYPE_INT64, 1, &add, nullptr, &was, 8};
    REQUIRE(oscf_win_rmw_implicit(t.win[0], 1, &fetch_add, nocheck) == OSCF_OK);
    CHECK(was == 20);
    CHECK(reinterpret_cast<const int64_t *>(t.mem(1))[1] == 25);
    // The same call inside an epoch to that target is erroneous, and changes nothing.
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    CHECK(oscf_win_rmw_implicit(t.win[0], 1, &fetch_add, nocheck) == OSCF_ERR_RMA_SYNC);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    CHECK(reinterpret_cast<const int64_t *>(t.mem(1))[1] == 25);
}

TEST_CASE("a one-shot epoch waits while another process holds the lock exclusively", "[swap][implicit]") {
    AccSetup s = acc_test_setup();
    size_t sizes[2] = {64, 64};
    TwoRanks t(s.provider, OSCF_FLAVOR_ALLOCATE, sizes, 1, s.path);
    const int target = GENERATE(0, 1);  // rank 0 also holds the gate of exclusive locks
    int64_t *word = reinterpret_cast<int64_t *>(t.mem(target));
    *word = 0;
    // Rank 1 stands in for a third process; rank 0 locks the target exclusively, and
    // while it holds the lock it writes 100 with a plain put, then releases.
    oscf_win *holder = t.win[target == 0 ? 0 : 1];
    oscf_win *origin = t.win[target == 0 ? 1 : 0];
    REQUIRE(oscf_win_lock(holder, target, 1, 0) == OSCF_OK);
    std::thread other([&] {
        int64_t one = 1, old = -1;
        oscf_rmw add{0, OSCF_OP_SUM, OSCF_SWAP_EQ, OSCF_TYPE_INT64, 1, &one, nullptr, &old, 0};
        CHECK(oscf_win_rmw_implicit(origin, target, &add, 0) == OSCF_OK);
        CHECK(old == 100);  // after the holder's epoch, never inside it
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const int64_t hundred = 100;
    REQUIRE(oscf_win_put(holder, target, &hundred, sizeof hundred, 0, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_flush(holder, target) == OSCF_OK);
    CHECK(*word == 100);
    REQUIRE(oscf_win_unlock(holder, target) == OSCF_OK);
    other.join();
    CHECK(*word == 101);
}
