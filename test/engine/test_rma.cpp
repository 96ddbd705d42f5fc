#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <numeric>
#include <thread>

#include "../../osc_fabric/engine/am_proto.h"
#include "two_ranks.h"

namespace {
void fill(std::vector<char> &v, int seed) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<char>((i * 131 + seed) & 0xff);
}
}  // namespace

TEST_CASE("put under a lock is visible at the target after unlock, at every size", "[rma]") {
    std::string prov = test_provider();
    const size_t kWin = (1 << 20) + 64;
    size_t sizes[2] = {kWin, kWin};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::memset(t.mem(1), 0, kWin);
    // 0, 1, around shm's and tcp's inject sizes, and large enough to be chunked on
    // providers with a small max_msg_size.
    size_t len = GENERATE(as<size_t>{}, 0, 1, 64, 65, 4096, 4097, 1 << 20);
    std::vector<char> src(len);
    fill(src, static_cast<int>(len));
    REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);  // the lock's grant in: the target is idle
    REQUIRE(oscf_win_put(t.win[0], 1, src.data(), len, 32, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    CHECK(std::equal(src.begin(), src.end(), t.mem(1) + 32));
    CHECK(t.mem(1)[31] == 0);
    CHECK(t.mem(1)[32 + len] == 0);
    // A lone put is always a fabric write (rma.cpp batches only puts that find the
    // target busy).
    CHECK(t.stats(0).puts_batched == 0);
    CHECK(t.stats(0).puts == (len ? 1u : 0u));
}

TEST_CASE("a run of small puts leaves as few messages and lands whole at the flush", "[rma]") {
    std::string prov = test_provider();
    const size_t kPuts = 3000;
    size_t sizes[2] = {kPuts * 8, kPuts * 8};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::memset(t.mem(1), 0, kPuts * 8);
    std::vector<uint64_t> src(kPuts);
    std::iota(src.begin(), src.end(), uint64_t{1000});
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    for (size_t i = 0; i < kPuts; ++i)
        REQUIRE(oscf_win_put(t.win[0], 1, &src[i], 8, static_cast<int64_t>(i * 8), 0, nullptr) == OSCF_OK);
    src.assign(kPuts, 0);  // origin buffers are reusable as soon as the call returns
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    for (size_t i = 0; i < kPuts; ++i) {
        uint64_t v;
        std::memcpy(&v, t.mem(1) + i * 8, 8);
        if (v != 1000 + i) FAIL("put " << i << " landed as " << v);
    }
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    // The first finds the shared lock request unsent, so every put fills the batch until
    // it leaves full, carrying the request (no progress runs in between). Those after it
    // are batched while the grant or the batch is still unanswered; once answered (how
    // soon depends on scheduling), shm writes them and tcp batches only if busy.
    const oscf_win_stats st = t.stats(0);
    CHECK(st.puts + st.puts_batched == kPuts);
    CHECK(st.puts_batched >= oscf::kAmMaxPayload / 24);  // one full batch: 24 bytes a record
    // 5 messages at most for the batched ones, not one per put.
    CHECK(st.am_batches <= 6);
}

TEST_CASE("get under lock_all returns the target's bytes after flush", "[rma]") {
    std::string prov = test_provider();
    size_t sizes[2] = {4096, 1 << 16};
    TwoRanks t(prov, OSCF_FLAVOR_CREATE, sizes, 8);
    std::vector<char> want(1 << 16);
    fill(want, 7);
    std::memcpy(t.mem(1), want.data(), want.size());
    std::vector<char> got(1000, 0);
    REQUIRE(oscf_win_lock_all(t.win[0], 0) == OSCF_OK);
    // displacement 3 in units of 8 bytes, plus a 5-byte datatype offset
    REQUIRE(oscf_win_get(t.win[0], 1, got.data(), got.size(), 3, 5, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    CHECK(std::memcmp(got.data(), want.data() + 29, got.size()) == 0);
    REQUIRE(oscf_win_unlock_all(t.win[0]) == OSCF_OK);
    // shm reads cost a system call, so a get this small is an active message there.
    const bool as_message = prov == "shm";
    CHECK(t.stats(0).gets == (as_message ? 0u : 1u));
    CHECK(t.stats(0).gets_as_messages == (as_message ? 1u : 0u));
}

TEST_CASE("gets as active messages: every size up to the limit, and the one past it", "[rma]") {
    std::string prov = test_provider();
    size_t sizes[2] = {4096, 4096};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::vector<char> want(4096);
    fill(want, 3);
    std::memcpy(t.mem(1), want.data(), want.size());
    REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
    const size_t lens[] = {1, 7, 8, 1023, 1024, 1025, 3000};
    std::vector<std::vector<char>> got;
    for (size_t len : lens) {
        got.emplace_back(len + 2, 0);
        // At offset 11: unaligned on both sides.
        REQUIRE(oscf_win_get(t.win[0], 1, got.back().data() + 1, len, 0, 11, nullptr) == OSCF_OK);
    }
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    for (size_t i = 0; i < got.size(); ++i) {
        CHECK(std::memcmp(got[i].data() + 1, want.data() + 11, lens[i]) == 0);
        CHECK(got[i].front() == 0);  // nothing written around the result
        CHECK(got[i].back() == 0);
    }
    const oscf_win_stats st = t.stats(0);
    if (prov == "shm") {
        CHECK(st.gets_as_messages == 5);  // up to 1024 bytes
        CHECK(st.gets == 2);
    } else {
        CHECK(st.gets_as_messages == 0);
        CHECK(st.gets == 7);
    }
}

TEST_CASE("a lone small put is injected, a larger one is written from the origin buffer", "[rma]") {
    std::string prov = test_provider();
    size_t sizes[2] = {8192, 8192};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    char buf[8192] = {1};
    // The lock's grant in before the first put, so the target is idle then.
    REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    REQUIRE(oscf_win_put(t.win[0], 1, buf, 8, 0, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_put(t.win[0], 1, buf, 8192, 0, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    // The first finds the target idle and is written (injected); the second is too large
    // to batch even on tcp.
    CHECK(t.stats(0).puts == 2);
    CHECK(t.stats(0).puts_batched == 0);
    CHECK(t.stats(0).injected == 1u + (t.contract().inject_size >= 8192));  // verbs;ofi_rxm's is 16 KiB
}

// verbs;ofi_rxm completes writes at transmit (provider_contract.cpp): there a read behind
// them proves them delivered (delivery_proof.h), one read for a burst. The strict
// provider's verbs-rxm profile over tcp;ofi_rxm completes writes that early too, so that
// run is where the proof is seen; elsewhere no read is posted at all.
TEST_CASE("a flush returns once the writes are at the target, even where they complete at transmit",
          "[rma][delivery]") {
    std::string prov = test_provider();
    const size_t kPiece = 32 * 1024, kPieces = 8, kRounds = 20;
    size_t sizes[2] = {kPiece * kPieces, kPiece * kPieces};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::vector<char> src(kPiece * kPieces);
    const uint64_t reads_before = t.eng[0]->fabric->proof_reads();
    size_t wrong = 0;
    for (size_t round = 0; round < kRounds; ++round) {
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7 + round * 13);
        REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
        for (size_t k = 0; k < kPieces; ++k)
            REQUIRE(oscf_win_put(t.win[0], 1, src.data() + k * kPiece, kPiece, k * kPiece, 0, nullptr) ==
                    OSCF_OK);
        REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
        wrong += std::memcmp(t.mem(1), src.data(), src.size()) != 0;
        REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    }
    CHECK(wrong == 0);
    const uint64_t reads = t.eng[0]->fabric->proof_reads() - reads_before;
    if (t.contract().writes_delivered) {
        CHECK(reads == 0);
    } else {
        CHECK(reads >= kRounds);            // every flush waited for one
        CHECK(reads <= kRounds * kPieces);  // never more than one a write
    }
}

TEST_CASE("accesses to ourselves are served locally", "[rma]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    long v = 42, back = 0;
    REQUIRE(oscf_win_lock(t.win[0], 0, 1, 0) == OSCF_OK);
    REQUIRE(oscf_win_put(t.win[0], 0, &v, sizeof v, 8, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_get(t.win[0], 0, &back, sizeof back, 8, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[0], 0) == OSCF_OK);
    CHECK(back == 42);
    CHECK(t.stats(0).puts == 0);
}

TEST_CASE("out-of-window accesses are range errors and nothing is sent", "[rma][errors]") {
    std::string prov = test_provider();
    size_t sizes[2] = {128, 0};  // rank 1 exposes nothing
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes, 4);
    char buf[256] = {};
    REQUIRE(oscf_win_lock_all(t.win[1], 0) == OSCF_OK);
    CHECK(oscf_win_put(t.win[1], 0, buf, 8, 31, 0, nullptr) == OSCF_ERR_RMA_RANGE);  // 124 + 8 > 128
    CHECK(oscf_win_put(t.win[1], 0, buf, 4, 31, 0, nullptr) == OSCF_OK);             // last 4 bytes
    CHECK(oscf_win_get(t.win[1], 0, buf, 1, -1, 0, nullptr) == OSCF_ERR_RMA_RANGE);
    CHECK(oscf_win_get(t.win[1], 0, buf, 129, 0, 0, nullptr) == OSCF_ERR_RMA_RANGE);
    CHECK(oscf_win_put(t.win[1], 0, buf, 1, INT64_MAX / 2, 0, nullptr) == OSCF_ERR_RMA_RANGE);
    REQUIRE(oscf_win_unlock_all(t.win[1]) == OSCF_OK);
    REQUIRE(oscf_win_lock_all(t.win[0], 0) == OSCF_OK);
    CHECK(oscf_win_put(t.win[0], 1, buf, 1, 0, 0, nullptr) == OSCF_ERR_RMA_RANGE);  // zero-size window
    CHECK(oscf_win_put(t.win[0], 1, buf, 0, 0, 0, nullptr) == OSCF_OK);             // empty access is fine
    REQUIRE(oscf_win_unlock_all(t.win[0]) == OSCF_OK);
    CHECK(t.stats(1).puts + t.stats(1).puts_batched == 1);  // only the valid one moved
    CHECK(t.stats(0).puts + t.stats(0).puts_batched == 0);
}

namespace {
struct Done {
    int calls = 0;
    int status = 1;
    static void fn(void *arg, int status) {
        auto *d = static_cast<Done *>(arg);
        ++d->calls;
        d->status = status;
    }
};
}  // namespace

TEST_CASE("a request's callback runs once, after its data arrived, and never after an error",
          "[rma][request]") {
    std::string prov = test_provider();
    const size_t kWin = 1 << 20;
    size_t sizes[2] = {kWin, kWin};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::vector<char> src(kWin), back(kWin);
    fill(src, 3);
    Done put_done, get_done, acc_done, bad;
    oscf_notify np{Done::fn, &put_done}, ng{Done::fn, &get_done}, na{Done::fn, &acc_done}, nb{Done::fn, &bad};
    REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
    REQUIRE(oscf_win_put(t.win[0], 1, src.data(), kWin, 0, 0, &np) == OSCF_OK);
    // Waiting on the request alone (no flush) must be enough to see the data.
    while (put_done.calls == 0) oscf_engine_progress(t.eng[0]);
    CHECK(std::memcmp(t.mem(1), src.data(), kWin) == 0);
    REQUIRE(oscf_win_get(t.win[0], 1, back.data(), kWin, 0, 0, &ng) == OSCF_OK);
    int64_t one = 1, old = -7;
    REQUIRE(oscf_win_accumulate(t.win[0], 1, &one, &old, 1, OSCF_TYPE_INT64, OSCF_OP_SUM, 0, 0, &na) ==
            OSCF_OK);
    CHECK(oscf_win_put(t.win[0], 1, src.data(), 8, kWin, 0, &nb) == OSCF_ERR_RMA_RANGE);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    CHECK(put_done.calls == 1);
    CHECK(put_done.status == OSCF_OK);
    CHECK(get_done.calls == 1);
    CHECK(std::memcmp(back.data(), src.data(), kWin) == 0);
    CHECK(acc_done.calls == 1);
    int64_t first;
    std::memcpy(&first, src.data(), 8);
    CHECK(old == first);
    CHECK(bad.calls == 0);
}

TEST_CASE("two ranks flooding each other with small gets both finish", "[rma]") {
    // Thousands of requests each way in flight: every receive buffer of both ranks is
    // used up while their sends wait for the other to drain (progress.h, post_unordered).
    std::string prov = test_provider();
    size_t sizes[2] = {4096, 4096};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    for (int r = 0; r < 2; ++r)
        for (int i = 0; i < 512; ++i) {
            const long v = i * 2 + r;
            std::memcpy(t.mem(r) + 8 * i, &v, sizeof v);
        }
    constexpr int kGets = 5000;
    std::vector<long> got[2] = {std::vector<long>(kGets, -1), std::vector<long>(kGets, -1)};
    // Catch's assertions are not for other threads (a failed REQUIRE there terminates the
    // process): each rank records its first failure, checked once both are done.
    struct Failure {
        const char *call = nullptr;
        int rc = OSCF_OK, at = -1;
    } failed[2];
    auto flood = [&](int r) {
        const int target = 1 - r;
        auto ok = [&](const char *call, int rc, int at) {
            if (rc != OSCF_OK && failed[r].rc == OSCF_OK) failed[r] = {call, rc, at};
            return rc == OSCF_OK;
        };
        if (!ok("lock_all", oscf_win_lock_all(t.win[r], 0), -1)) return;
        for (int i = 0; i < kGets; ++i)
            if (!ok("get", oscf_win_get(t.win[r], target, &got[r][i], 8, 0, 8 * (i % 512), nullptr), i))
                break;
        ok("unlock_all", oscf_win_unlock_all(t.win[r]), -1);
    };
    std::thread other(flood, 1);
    flood(0);
    other.join();
    for (int r = 0; r < 2; ++r) {
        INFO("rank " << r << ": " << (failed[r].call ? failed[r].call : "-") << " #" << failed[r].at
                     << " returned " << failed[r].rc << " (" << oscf_status_str(failed[r].rc) << ")");
        CHECK(failed[r].rc == OSCF_OK);
    }
    int wrong = 0;
    for (int r = 0; r < 2; ++r)
        for (int i = 0; i < kGets; ++i) wrong += got[r][i] != (i % 512) * 2 + (1 - r);
    CHECK(wrong == 0);
}

TEST_CASE("the many small pieces of one put or get travel packed and land in place", "[rma][packed]") {
    // A vector of 4-byte blocks: every piece goes in a few messages (packed.h), not one
    // fabric operation each, and each lands at its own place on both sides.
    std::string prov = test_provider();
    const size_t kPieces = 5000, kLen = 4;
    size_t sizes[2] = {kPieces * 3 * kLen, kPieces * 3 * kLen};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::memset(t.mem(1), 0, sizes[1]);
    std::vector<char> src(kPieces * 2 * kLen), back(kPieces * 2 * kLen, 0);
    fill(src, 3);
    std::vector<oscf_segment> put(kPieces), get(kPieces);
    for (size_t i = 0; i < kPieces; ++i) {  // origin stride 2, target stride 3
        put[i] = oscf_segment{src.data() + i * 2 * kLen, static_cast<int64_t>(i * 3 * kLen), kLen};
        get[i] = oscf_segment{back.data() + i * 2 * kLen, static_cast<int64_t>(i * 3 * kLen), kLen};
    }
    // Both as requests, so their own completions must cover every message.
    bool put_done = false, done = false;
    auto set = [](void *arg, int status) { *static_cast<bool *>(arg) = status == OSCF_OK; };
    oscf_notify pn{set, &put_done}, n{set, &done};
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    REQUIRE(oscf_win_putv(t.win[0], 1, put.data(), kPieces, 0, &pn) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    CHECK(put_done);
    size_t wrong = 0;
    for (size_t i = 0; i < kPieces * 3 * kLen; ++i) {
        const size_t piece = i / (3 * kLen), in = i % (3 * kLen);
        const char want = in < kLen ? src[piece * 2 * kLen + in] : 0;
        wrong += t.mem(1)[i] != want;
    }
    CHECK(wrong == 0);
    REQUIRE(oscf_win_getv(t.win[0], 1, get.data(), kPieces, 0, &n) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    CHECK(done);
    wrong = 0;
    for (size_t i = 0; i < kPieces; ++i)
        wrong += std::memcmp(back.data() + i * 2 * kLen, src.data() + i * 2 * kLen, kLen) != 0;
    CHECK(wrong == 0);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    const oscf_win_stats st = t.stats(0);
    CHECK(st.puts == 0);
    CHECK(st.gets == 0);
    CHECK(st.puts_batched == kPieces);
    CHECK(st.gets_as_messages == kPieces);
    // 24 bytes a put record and 4 a gathered piece (16 a gather record): a few
    // messages each, not thousands.
    CHECK(st.am_batches <= kPieces * 24 / oscf::kAmMaxPayload + 2);
    CHECK(st.gather_messages >= 1);
    CHECK(st.gather_messages <= kPieces * 16 / oscf::kAmMaxPayload + 2);
}

TEST_CASE("packed pieces that follow each other at the target share one record", "[rma][packed]") {
    // A strided origin and a contiguous target: only the target's layout costs records,
    // so 5000 pieces of 4 bytes are 20000 bytes in two batches and two gathers.
    std::string prov = test_provider();
    const size_t kPieces = 5000, kLen = 4;
    size_t sizes[2] = {kPieces * kLen, kPieces * kLen};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::memset(t.mem(1), 0, sizes[1]);
    std::vector<char> src(kPieces * 2 * kLen), back(kPieces * 2 * kLen, 0);
    fill(src, 5);
    std::vector<oscf_segment> put(kPieces), get(kPieces);
    for (size_t i = 0; i < kPieces; ++i) {
        put[i] = oscf_segment{src.data() + i * 2 * kLen, static_cast<int64_t>(i * kLen), kLen};
        get[i] = oscf_segment{back.data() + i * 2 * kLen, static_cast<int64_t>(i * kLen), kLen};
    }
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    REQUIRE(oscf_win_putv(t.win[0], 1, put.data(), kPieces, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    size_t wrong = 0;
    for (size_t i = 0; i < kPieces; ++i)
        wrong += std::memcmp(t.mem(1) + i * kLen, src.data() + i * 2 * kLen, kLen) != 0;
    CHECK(wrong == 0);
    REQUIRE(oscf_win_getv(t.win[0], 1, get.data(), kPieces, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    wrong = 0;
    for (size_t i = 0; i < kPieces; ++i) {
        wrong += std::memcmp(back.data() + i * 2 * kLen, src.data() + i * 2 * kLen, kLen) != 0;
        wrong += back[i * 2 * kLen + kLen] != 0;  // the gaps here stay untouched
    }
    CHECK(wrong == 0);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    const oscf_win_stats st = t.stats(0);
    CHECK(st.puts_batched == kPieces);
    CHECK(st.am_batches <= 2);
    CHECK(st.gather_messages <= 2);
}

TEST_CASE("MPI_Win_post and MPI_Win_complete return without the peer's progress", "[rma][pscw]") {
    // Their notifications are writes posted and not waited for: rank 0, with no progress
    // thread, has served nothing when rank 1's post returns; its start then sees the post.
    // Over tcp a write's completion waits for the target's provider to take it.
    size_t sizes[2] = {4096, 4096};
    const bool threads[2] = {false, true};
    TwoRanks t("tcp", OSCF_FLAVOR_ALLOCATE, sizes, 1, OSCF_ACC_AUTO, OSCF_ORDER_DEFAULT, threads);
    const int origin = 0, target = 1;
    // First the connection: tcp;ofi_rxm sets it up on first use, with both sides' progress.
    std::atomic<bool> connected{false};
    std::thread drive([&] {
        while (!connected) oscf_engine_progress(t.eng[0]);
    });
    const int64_t zero = 0;
    REQUIRE(oscf_win_lock(t.win[1], 0, 0, 0) == OSCF_OK);
    REQUIRE(oscf_win_put(t.win[1], 0, &zero, sizeof zero, 0, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[1], 0) == OSCF_OK);
    connected = true;
    drive.join();
    for (int epoch = 0; epoch < 3; ++epoch) {
        INFO("epoch " << epoch);
        auto post = std::async(std::launch::async, [&] { return oscf_win_post(t.win[1], &origin, 1, 0); });
        CHECK(post.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
        REQUIRE(oscf_win_start(t.win[0], &target, 1, 0) == OSCF_OK);
        CHECK(post.get() == OSCF_OK);
        const int64_t v = 1000 + epoch;
        REQUIRE(oscf_win_put(t.win[0], 1, &v, sizeof v, 0, 0, nullptr) == OSCF_OK);
        REQUIRE(oscf_win_complete(t.win[0]) == OSCF_OK);
        REQUIRE(oscf_win_wait(t.win[1]) == OSCF_OK);
        int64_t got = 0;
        std::memcpy(&got, t.mem(1), sizeof got);
        CHECK(got == v);
    }
}
