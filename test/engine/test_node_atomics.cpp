// On-node accumulates (node_atomics.h) on their own: threads stand in for the processes
// of a node hammering one location, on both roads (CPU atomics, the accumulate lock).
#include <catch2/catch.hpp>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "../../osc_fabric/engine/node_atomics.h"

using namespace oscf;

namespace {
constexpr int kThreads = 4;
constexpr int kPerThread = 5000;

template <class F>
void on_threads(F f) {
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t) ts.emplace_back(f, t);
    for (auto &t : ts) t.join();
}
}  // namespace

TEST_CASE("fetch-and-add on every road gives each old value once", "[node_atomics]") {
    // int64 aligned: an instruction; long double: the lock; int64 at an odd address:
    // the lock as well, since a misaligned element has no CPU atomic.
    alignas(64) unsigned char mem[64] = {};
    uint64_t acc_lock = 0;
    const oscf_type type = GENERATE(OSCF_TYPE_INT64, OSCF_TYPE_LONG_DOUBLE, OSCF_TYPE_DOUBLE);
    const size_t shift = GENERATE(0, 3);
    void *target = mem + 16 + shift;
    std::vector<std::vector<double>> seen(kThreads);
    on_threads([&](int t) {
        for (int i = 0; i < kPerThread; ++i) {
            if (type == OSCF_TYPE_INT64) {
                int64_t one = 1, old = -1;
                node_accumulate(OSCF_OP_SUM, type, target, &one, &old, 1, AccumulateLock(&acc_lock));
                seen[t].push_back(static_cast<double>(old));
            } else if (type == OSCF_TYPE_DOUBLE) {
                double one = 1, old = -1;
                node_accumulate(OSCF_OP_SUM, type, target, &one, &old, 1, AccumulateLock(&acc_lock));
                seen[t].push_back(old);
            } else {
                long double one = 1, old = -1;
                node_accumulate(OSCF_OP_SUM, type, target, &one, &old, 1, AccumulateLock(&acc_lock));
                seen[t].push_back(static_cast<double>(old));
            }
        }
    });
    std::vector<double> all;
    for (auto &v : seen) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    size_t wrong = 0;
    for (size_t i = 0; i < all.size(); ++i) wrong += all[i] != static_cast<double>(i);
    CHECK(wrong == 0);
    CHECK(acc_lock == 0);
}

TEST_CASE("double complex sums and MAXLOC pairs stay whole under the lock", "[node_atomics]") {
    alignas(64) std::complex<double> sum{0, 0};
    uint64_t acc_lock = 0;
    on_threads([&](int) {
        const std::complex<double> step{1, 2};
        for (int i = 0; i < kPerThread; ++i)
            node_accumulate(OSCF_OP_SUM, OSCF_TYPE_DOUBLE_COMPLEX, &sum, &step, nullptr, 1,
                            AccumulateLock(&acc_lock));
    });
    CHECK(sum.real() == kThreads * kPerThread);
    CHECK(sum.imag() == 2.0 * kThreads * kPerThread);
}

TEST_CASE("compare-and-swap races have one winner per round", "[node_atomics]") {
    const oscf_type type = GENERATE(OSCF_TYPE_INT32, OSCF_TYPE_UINT64, OSCF_TYPE_INT8);
    alignas(8) unsigned char word[8] = {};
    uint64_t acc_lock = 0;
    std::vector<int> wins(kThreads, 0);
    on_threads([&](int t) {
        uint64_t zero = 0, mine = static_cast<uint64_t>(t + 1), old = 0;
        node_swap(OSCF_SWAP_EQ, type, word, &mine, &zero, &old, 1, AccumulateLock(&acc_lock));
        if (old == 0) wins[t] = 1;
    });
    CHECK(std::count(wins.begin(), wins.end(), 1) == 1);
}

TEST_CASE("conditional swaps race to the minimum, the maximum and every masked bit", "[node_atomics]") {
    alignas(8) int64_t low = INT64_MAX, high = INT64_MIN;
    alignas(8) double dlow = 1e300;
    alignas(8) uint64_t bits = 0;
    uint64_t acc_lock = 0;
    on_threads([&](int t) {
        for (int i = 0; i < kPerThread; ++i) {
            // Every thread offers values the others also beat: the winner is the extreme.
            const int64_t v = (i * 7919 + t * 104729) % 100003 - 50000;
            const double d = static_cast<double>(v) / 4;
            node_swap(OSCF_SWAP_LT, OSCF_TYPE_INT64, &low, &v, &v, nullptr, 1, AccumulateLock(&acc_lock));
            node_swap(OSCF_SWAP_GT, OSCF_TYPE_INT64, &high, &v, &v, nullptr, 1, AccumulateLock(&acc_lock));
            node_swap(OSCF_SWAP_LT, OSCF_TYPE_DOUBLE, &dlow, &d, &d, nullptr, 1, AccumulateLock(&acc_lock));
        }
        const uint64_t mask = uint64_t{1} << t | uint64_t{1} << (t + 32), ones = ~uint64_t{0};
        node_swap(OSCF_SWAP_MASK, OSCF_TYPE_UINT64, &bits, &ones, &mask, nullptr, 1,
                  AccumulateLock(&acc_lock));
    });
    int64_t want_low = INT64_MAX, want_high = INT64_MIN;
    for (int t = 0; t < kThreads; ++t)
        for (int i = 0; i < kPerThread; ++i) {
            const int64_t v = (i * 7919 + t * 104729) % 100003 - 50000;
            want_low = std::min(want_low, v);
            want_high = std::max(want_high, v);
        }
    CHECK(low == want_low);
    CHECK(high == want_high);
    CHECK(dlow == static_cast<double>(want_low) / 4);
    uint64_t want_bits = 0;
    for (int t = 0; t < kThreads; ++t) want_bits |= uint64_t{1} << t | uint64_t{1} << (t + 32);
    CHECK(bits == want_bits);
    CHECK(acc_lock == 0);
}

TEST_CASE("lock words: shared attempts undo themselves, exclusive takes 0 only", "[node_atomics]") {
    uint64_t word = 0;
    CHECK(word_fetch_add(&word, 1) == 0);
    CHECK(word_compare_swap(&word, 0, uint64_t{1} << 32) == 1);  // a reader holds it
    CHECK(word == 1);
    CHECK(word_fetch_add(&word, ~uint64_t{0}) == 1);
    CHECK(word_compare_swap(&word, 0, uint64_t{1} << 32) == 0);
    CHECK(word == uint64_t{1} << 32);
}
