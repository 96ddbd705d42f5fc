// On-node accumulates (node_atomics.h) on their own: threads stand in for the processes
// of a node updating one window's memory under its stripe locks.
#include "catch_compat.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "../../osc_fabric/engine/node_atomics.h"
#include "../../osc_fabric/engine/window_blob.h"

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

// Window memory of `bytes` and its stripe locks, as a node segment holds them.
struct Window {
    explicit Window(size_t bytes) : mem(bytes + 64), stripes(kAccStripes, 0) {}
    // 64-byte aligned, so offsets and alignment agree as in a segment.
    char *base() {
        return reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(mem.data()) + 63) / 64 * 64);
    }
    SharedWindow shared() { return {base(), stripes.data()}; }
    bool unlocked() const {
        return std::all_of(stripes.begin(), stripes.end(), [](uint64_t w) { return w == 0; });
    }
    std::vector<char> mem;
    std::vector<uint64_t> stripes;
};

// The old values fetch-and-adds of 1 saw, from every thread: each of 0, 1, 2, ... once
// when the adds were atomic. Returns how many are out of place.
template <class T>
size_t not_each_once(const std::vector<std::vector<T>> &seen) {
    std::vector<T> all;
    for (auto &v : seen) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    size_t wrong = 0;
    for (size_t i = 0; i < all.size(); ++i) wrong += all[i] != static_cast<T>(i);
    return wrong;
}
}  // namespace

TEST_CASE("fetch-and-add gives each old value once, aligned or not", "[node_atomics]") {
    // An element at an odd offset, or one that straddles two stripes, is still whole:
    // every update of it takes the lock of the stripe its first byte lies in.
    Window w(2 * kAccStripeBytes);
    const oscf_type type = GENERATE(OSCF_TYPE_INT64, OSCF_TYPE_LONG_DOUBLE, OSCF_TYPE_DOUBLE);
    const uint64_t offset = GENERATE(uint64_t{16}, uint64_t{19}, kAccStripeBytes - 3);
    std::vector<std::vector<double>> seen(kThreads);
    on_threads([&](int t) {
        for (int i = 0; i < kPerThread; ++i) {
            if (type == OSCF_TYPE_INT64) {
                int64_t one = 1, old = -1;
                node_accumulate(w.shared(), offset, OSCF_OP_SUM, type, &one, &old, 1);
                seen[t].push_back(static_cast<double>(old));
            } else if (type == OSCF_TYPE_DOUBLE) {
                double one = 1, old = -1;
                node_accumulate(w.shared(), offset, OSCF_OP_SUM, type, &one, &old, 1);
                seen[t].push_back(old);
            } else {
                long double one = 1, old = -1;
                node_accumulate(w.shared(), offset, OSCF_OP_SUM, type, &one, &old, 1);
                seen[t].push_back(static_cast<double>(old));
            }
        }
    });
    CHECK(not_each_once(seen) == 0);
    CHECK(w.unlocked());
}

TEST_CASE("many-element accumulates across stripes and lone updates lose nothing", "[node_atomics]") {
    // Two threads add 1 to every int of an array that spans several stripes (and wraps
    // around the stripe table) in one call each round, two others add 1 to single
    // elements at a time: every element ends at the total of both.
    const size_t ints = (kAccStripes + 3) * kAccStripeBytes / sizeof(int32_t);
    Window w(ints * sizeof(int32_t));
    const std::vector<int32_t> ones(ints, 1);
    constexpr int kRounds = 20;
    on_threads([&](int t) {
        if (t < 2) {
            for (int r = 0; r < kRounds; ++r)
                node_accumulate(w.shared(), 0, OSCF_OP_SUM, OSCF_TYPE_INT32, ones.data(), nullptr, ints);
            return;
        }
        for (int r = 0; r < kRounds; ++r)
            for (size_t i = static_cast<size_t>(t); i < ints; i += 97) {
                const int32_t one = 1;
                node_accumulate(w.shared(), i * sizeof(int32_t), OSCF_OP_SUM, OSCF_TYPE_INT32, &one, nullptr,
                                1);
            }
    });
    std::vector<int32_t> got(ints);
    std::memcpy(got.data(), w.base(), ints * sizeof(int32_t));
    size_t wrong = 0;
    for (size_t i = 0; i < ints; ++i) {
        const int lone = (i % 97 == 2 ? 1 : 0) + (i % 97 == 3 ? 1 : 0);
        wrong += got[i] != 2 * kRounds + lone * kRounds;
    }
    CHECK(wrong == 0);
    CHECK(w.unlocked());
}

TEST_CASE("short runs of fetch-and-add race whole, in one stripe or across two", "[node_atomics]") {
    // Thread t adds 1 to the 2 + 2t int64 at off and fetches their old values: runs of
    // different lengths overlap, in one stripe (one lock, one loop) or reaching into
    // the next (the stripe walk).
    const uint64_t off =
        GENERATE(uint64_t{64}, uint64_t{kAccStripeBytes - 8 * 8}, uint64_t{kAccStripeBytes - 3 * 8});
    constexpr size_t kLongest = 2 + 2 * (kThreads - 1);
    Window w(2 * kAccStripeBytes);
    std::vector<std::vector<int64_t>> first(kThreads);
    on_threads([&](int t) {
        const size_t n = 2 + 2 * static_cast<size_t>(t);
        const std::vector<int64_t> ones(n, 1);
        std::vector<int64_t> old(n, -1);
        for (int i = 0; i < kPerThread; ++i) {
            node_accumulate(w.shared(), off, OSCF_OP_SUM, OSCF_TYPE_INT64, ones.data(), old.data(), n);
            first[t].push_back(old[0]);
        }
    });
    CHECK(not_each_once(first) == 0);
    std::vector<int64_t> got(kLongest);
    std::memcpy(got.data(), w.base() + off, kLongest * sizeof(int64_t));
    for (size_t k = 0; k < kLongest; ++k) {
        int64_t covering = 0;
        for (size_t t = 0; t < kThreads; ++t) covering += 2 + 2 * t > k;
        CHECK(got[k] == covering * kPerThread);
    }
    CHECK(w.unlocked());
}

TEST_CASE("double complex sums and MAXLOC pairs stay whole", "[node_atomics]") {
    Window w(64);
    on_threads([&](int) {
        const std::complex<double> step{1, 2};
        for (int i = 0; i < kPerThread; ++i)
            node_accumulate(w.shared(), 0, OSCF_OP_SUM, OSCF_TYPE_DOUBLE_COMPLEX, &step, nullptr, 1);
    });
    std::complex<double> sum;
    std::memcpy(&sum, w.base(), sizeof sum);
    CHECK(sum.real() == kThreads * kPerThread);
    CHECK(sum.imag() == 2.0 * kThreads * kPerThread);
}

TEST_CASE("compare-and-swap races have one winner per round", "[node_atomics]") {
    const oscf_type type = GENERATE(OSCF_TYPE_INT32, OSCF_TYPE_UINT64, OSCF_TYPE_INT8);
    Window w(64);
    std::vector<int> wins(kThreads, 0);
    on_threads([&](int t) {
        uint64_t zero = 0, mine = static_cast<uint64_t>(t + 1), old = 0;
        node_swap(w.shared(), 8, OSCF_SWAP_EQ, type, &mine, &zero, &old, 1);
        if (old == 0) wins[t] = 1;
    });
    CHECK(std::count(wins.begin(), wins.end(), 1) == 1);
}

TEST_CASE("conditional swaps race to the minimum, the maximum and every masked bit", "[node_atomics]") {
    Window w(64);
    const int64_t max = INT64_MAX, min = INT64_MIN;
    const double big = 1e300;
    std::memcpy(w.base(), &max, 8);       // low
    std::memcpy(w.base() + 8, &min, 8);   // high
    std::memcpy(w.base() + 16, &big, 8);  // dlow; bits at 24 start at 0
    on_threads([&](int t) {
        for (int i = 0; i < kPerThread; ++i) {
            // Every thread offers values the others also beat: the winner is the extreme.
            const int64_t v = (i * 7919 + t * 104729) % 100003 - 50000;
            const double d = static_cast<double>(v) / 4;
            node_swap(w.shared(), 0, OSCF_SWAP_LT, OSCF_TYPE_INT64, &v, &v, nullptr, 1);
            node_swap(w.shared(), 8, OSCF_SWAP_GT, OSCF_TYPE_INT64, &v, &v, nullptr, 1);
            node_swap(w.shared(), 16, OSCF_SWAP_LT, OSCF_TYPE_DOUBLE, &d, &d, nullptr, 1);
        }
        const uint64_t mask = uint64_t{1} << t | uint64_t{1} << (t + 32), ones = ~uint64_t{0};
        node_swap(w.shared(), 24, OSCF_SWAP_MASK, OSCF_TYPE_UINT64, &ones, &mask, nullptr, 1);
    });
    int64_t want_low = INT64_MAX, want_high = INT64_MIN;
    for (int t = 0; t < kThreads; ++t)
        for (int i = 0; i < kPerThread; ++i) {
            const int64_t v = (i * 7919 + t * 104729) % 100003 - 50000;
            want_low = std::min(want_low, v);
            want_high = std::max(want_high, v);
        }
    int64_t low, high;
    double dlow;
    uint64_t bits;
    std::memcpy(&low, w.base(), 8);
    std::memcpy(&high, w.base() + 8, 8);
    std::memcpy(&dlow, w.base() + 16, 8);
    std::memcpy(&bits, w.base() + 24, 8);
    CHECK(low == want_low);
    CHECK(high == want_high);
    CHECK(dlow == static_cast<double>(want_low) / 4);
    uint64_t want_bits = 0;
    for (int t = 0; t < kThreads; ++t) want_bits |= uint64_t{1} << t | uint64_t{1} << (t + 32);
    CHECK(bits == want_bits);
    CHECK(w.unlocked());
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
