#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "../../osc_fabric/engine/progress.h"
#include "two_ranks.h"

TEST_CASE("RMA outside any epoch is a synchronization error", "[sync][errors]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    char b[8] = {};
    CHECK(oscf_win_put(t.win[0], 1, b, 8, 0, 0, nullptr) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_get(t.win[0], 1, b, 8, 0, 0, nullptr) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_flush(t.win[0], 1) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_flush(t.win[0], -1) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_unlock(t.win[0], 1) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_unlock_all(t.win[0]) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_lock(t.win[0], 2, 0, 0) == OSCF_ERR_RANK);
    // Request-based operations only in passive-target epochs: not in a fence epoch.
    bool called = false;
    oscf_notify n{[](void *arg, int) { *static_cast<bool *>(arg) = true; }, &called};
    oscf_segment seg{b, 0, 8};
    REQUIRE(oscf_win_fence(t.win[0], 0) == OSCF_OK);
    CHECK(oscf_win_putv(t.win[0], 1, &seg, 1, 0, &n) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_getv(t.win[0], 1, &seg, 1, 0, &n) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_accumulate(t.win[0], 1, b, nullptr, 1, OSCF_TYPE_INT64, OSCF_OP_SUM, 0, 0, &n) ==
          OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_putv(t.win[0], 1, &seg, 1, 0, nullptr) == OSCF_OK);  // without: allowed
    REQUIRE(oscf_win_fence(t.win[0], OSCF_MODE_NOSUCCEED) == OSCF_OK);
    CHECK_FALSE(called);  // no callback after an error return
}

TEST_CASE("fence opens an epoch that NOSUCCEED closes", "[sync][fence]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    long v = 5;
    REQUIRE(oscf_win_fence(t.win[0], OSCF_MODE_NOPRECEDE) == OSCF_OK);
    CHECK(t.stats(0).fence_waits_skipped == 1);
    REQUIRE(oscf_win_put(t.win[0], 1, &v, sizeof v, 0, 0, nullptr) == OSCF_OK);
    // A lock cannot end a fence epoch with operations in it.
    CHECK(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_ERR_RMA_SYNC);
    REQUIRE(oscf_win_fence(t.win[0], OSCF_MODE_NOSUCCEED) == OSCF_OK);
    CHECK(*reinterpret_cast<long *>(t.mem(1)) == 5);
    CHECK(oscf_win_put(t.win[0], 1, &v, sizeof v, 0, 0, nullptr) == OSCF_ERR_RMA_SYNC);
    // An idle fence epoch gives way to a lock epoch.
    REQUIRE(oscf_win_fence(t.win[0], 0) == OSCF_OK);
    REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
    CHECK(oscf_win_fence(t.win[0], 0) == OSCF_ERR_RMA_SYNC);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
}

TEST_CASE("lock misuse gets the standard's error classes", "[sync][lock][errors]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    CHECK(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_ERR_RMA_CONFLICT);
    CHECK(oscf_win_lock_all(t.win[0], 0) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_free_begin(t.win[0]) == OSCF_ERR_RMA_SYNC);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    REQUIRE(oscf_win_lock_all(t.win[0], 0) == OSCF_OK);
    CHECK(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_lock_all(t.win[0], 0) == OSCF_ERR_RMA_SYNC);
    CHECK(oscf_win_free_begin(t.win[0]) == OSCF_ERR_RMA_SYNC);
    REQUIRE(oscf_win_unlock_all(t.win[0]) == OSCF_OK);
    CHECK(oscf_win_free_begin(t.win[0]) == OSCF_OK);
}

TEST_CASE("an exclusive lock keeps every other locker out until unlock", "[lock]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    const bool second_exclusive = GENERATE(true, false);
    // MPI_Win_lock may return before the lock is held (it does on the active-message
    // path, lock.cpp); a flush returns only once it is.
    REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    std::atomic<bool> got{false};
    // Rank 1 locks its own window: it must wait for rank 0's exclusive lock.
    std::thread other([&] {
        REQUIRE(oscf_win_lock(t.win[1], 1, second_exclusive, 0) == OSCF_OK);
        got = true;
        REQUIRE(oscf_win_unlock(t.win[1], 1) == OSCF_OK);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(got.load());
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    other.join();
    CHECK(got.load());
}

TEST_CASE("an exclusive lock asked while a shared one is held waits, and its epoch with it", "[lock]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    auto *target = reinterpret_cast<volatile int64_t *>(t.mem(1));
    target[0] = 0;
    REQUIRE(oscf_win_lock(t.win[1], 1, 0, 0) == OSCF_OK);  // rank 1 holds its own word, shared
    // Where lock requests queue at the target this returns at once, and the put travels
    // with the request; elsewhere the lock waits in the thread.
    std::atomic<bool> unlocked{false};
    std::thread origin([&] {
        int64_t v = 7;
        REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
        REQUIRE(oscf_win_put(t.win[0], 1, &v, sizeof v, 0, 0, nullptr) == OSCF_OK);
        REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
        unlocked = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(unlocked.load());
    CHECK(target[0] == 0);  // nothing of the epoch applied while the shared hold lasts
    // A held request is tried again when the lock words change, not in every progress
    // round while the same shared holder keeps it out.
    oscf_win_stats st{};
    REQUIRE(oscf_win_get_stats(t.win[1], &st) == OSCF_OK);
    CHECK(st.lock_retries <= 2);
    REQUIRE(oscf_win_unlock(t.win[1], 1) == OSCF_OK);
    origin.join();
    CHECK(unlocked.load());
    CHECK(target[0] == 7);
}

TEST_CASE("shared locks are held together; an exclusive one waits for both", "[lock]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    // MPI_Win_lock may return before the lock is held (it does on the active-message
    // path, lock.cpp); a flush returns only once it is.
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    REQUIRE(oscf_win_lock(t.win[1], 1, 0, 0) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[1], 1) == OSCF_OK);  // would hang if shared excluded shared
    REQUIRE(oscf_win_unlock(t.win[1], 1) == OSCF_OK);
    std::atomic<bool> got{false};
    std::thread writer([&] {
        REQUIRE(oscf_win_lock(t.win[1], 1, 1, 0) == OSCF_OK);
        got = true;
        REQUIRE(oscf_win_unlock(t.win[1], 1) == OSCF_OK);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(got.load());
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    writer.join();
    CHECK(got.load());
}

TEST_CASE("a shared lock request waits at the target behind an exclusive holder, with what follows it",
          "[lock]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::memset(t.mem(1), 0, 64);
    REQUIRE(oscf_win_lock(t.win[1], 1, 1, 0) == OSCF_OK);  // rank 1 holds itself exclusively
    std::atomic<bool> done{false};
    long v = 7;
    std::thread origin([&] {
        REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
        REQUIRE(oscf_win_put(t.win[0], 1, &v, sizeof v, 0, 0, nullptr) == OSCF_OK);
        REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
        done = true;
        REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(done.load());
    long seen;
    std::memcpy(&seen, t.mem(1), sizeof seen);
    CHECK(seen == 0);  // the put did not overtake the exclusive holder
    REQUIRE(oscf_win_unlock(t.win[1], 1) == OSCF_OK);
    origin.join();
    std::memcpy(&seen, t.mem(1), sizeof seen);
    CHECK(seen == 7);
    // One request (no retries) and the release: the request waits at the target, on
    // every provider, opx's unordered messages included (MessageStream, am.cpp).
    CHECK(t.stats(0).lock_attempts == 2);
}

TEST_CASE("lock_all holds rank 0's gate, which keeps exclusive locks out; NOCHECK takes none", "[lock]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    long v = 1;
    // Rank 1's lock_all takes the gate at rank 0 once, whatever it then touches.
    REQUIRE(oscf_win_lock_all(t.win[1], 0) == OSCF_OK);
    CHECK(t.stats(1).lock_attempts == 1);
    REQUIRE(oscf_win_put(t.win[1], 0, &v, sizeof v, 0, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_put(t.win[1], 1, &v, sizeof v, 0, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[1], -1) == OSCF_OK);  // all targets
    CHECK(t.stats(1).lock_attempts == 1);
    // A shared lock does not conflict with it; an exclusive one waits for unlock_all.
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    std::atomic<bool> got{false};
    std::thread writer([&] {
        REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
        got = true;
        REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(got.load());
    REQUIRE(oscf_win_unlock_all(t.win[1]) == OSCF_OK);
    writer.join();
    CHECK(got.load());

    // NOCHECK: no gate, so an exclusive lock elsewhere is not held up.
    REQUIRE(oscf_win_lock_all(t.win[1], OSCF_MODE_NOCHECK) == OSCF_OK);
    REQUIRE(oscf_win_put(t.win[1], 0, &v, sizeof v, 0, 0, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    REQUIRE(oscf_win_unlock_all(t.win[1]) == OSCF_OK);
    CHECK(t.stats(1).lock_attempts == 2);  // the first epoch's gate and its release message
}

TEST_CASE("a lock is not granted before a lock asked for earlier, on ourselves too", "[lock]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    REQUIRE(oscf_win_lock(t.win[1], 1, 1, 0) == OSCF_OK);  // rank 1 holds itself exclusively
    const bool self_exclusive = GENERATE(true, false);
    std::atomic<bool> second{false};
    std::thread origin([&] {
        // MPI_Win_lock may return before the lock is held (the active-message path
        // queues the request at the target); the next lock may not.
        REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
        REQUIRE(oscf_win_lock(t.win[0], 0, self_exclusive, 0) == OSCF_OK);
        second = true;
        REQUIRE(oscf_win_unlock(t.win[0], 0) == OSCF_OK);
        REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(second.load());
    // Had rank 0 got its own lock first, an exclusive lock of rank 0 by rank 1 now
    // (ascending order from rank 1's view is 0 then 1, so this is the mirror case)
    // would wait for rank 0, which waits for rank 1.
    REQUIRE(oscf_win_unlock(t.win[1], 1) == OSCF_OK);
    origin.join();
    CHECK(second.load());
}

TEST_CASE("an unlock with accumulates still queued sends its release with them", "[lock]") {
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::memset(t.mem(1), 0, 64);
    const bool exclusive = GENERATE(true, false);
    const bool lock_all = !exclusive && GENERATE(true, false);
    const long one = 1;
    for (int epoch = 0; epoch < 3; ++epoch) {
        if (lock_all)
            REQUIRE(oscf_win_lock_all(t.win[0], 0) == OSCF_OK);
        else
            REQUIRE(oscf_win_lock(t.win[0], 1, exclusive, 0) == OSCF_OK);
        for (int i = 0; i < 5; ++i)
            REQUIRE(oscf_win_accumulate(t.win[0], 1, &one, nullptr, 1, OSCF_TYPE_INT64, OSCF_OP_SUM, 8, 0,
                                        nullptr) == OSCF_OK);
        REQUIRE((lock_all ? oscf_win_unlock_all(t.win[0]) : oscf_win_unlock(t.win[0], 1)) == OSCF_OK);
        // Back at the target: the unlock waited for the accumulates ...
        long v;
        std::memcpy(&v, t.mem(1) + 8, sizeof v);
        CHECK(v == 5 * (epoch + 1));
        // ... and the hold is gone, or this exclusive lock of rank 1 would never return.
        REQUIRE(oscf_win_lock(t.win[1], 1, 1, 0) == OSCF_OK);
        REQUIRE(oscf_win_unlock(t.win[1], 1) == OSCF_OK);
    }
    const oscf_win_stats st = t.stats(0);
    REQUIRE(st.native_atomics == 0);  // every provider here: lock words are active messages
    CHECK(st.am_batches == 3);        // one message per epoch: lock request, accumulates, release
    // Per epoch, and no release of its own: the shared request; or rank 0's gate (our
    // own word, so no message) and the exclusive acquire. lock_all takes only the gate,
    // retrying while rank 1's exclusive check still holds it, so its count varies.
    if (exclusive)
        CHECK(st.lock_attempts == 6);
    else if (!lock_all)
        CHECK(st.lock_attempts == 3);
}

TEST_CASE("ranks that chose different providers cannot share a window", "[window][errors]") {
    size_t sizes[2] = {64, 64};
    TwoRanks t("shm", OSCF_FLAVOR_ALLOCATE, sizes);
    oscf_engine *tcp = nullptr;
    oscf_engine_config cfg{"tcp", 0, 0, 0, 0, 0, 0, 0, 0};
    REQUIRE(oscf_engine_open(&cfg, &tcp) == OSCF_OK);
    const oscf_win_params p = allocate_params(64, 1, 2);
    oscf_win *w = nullptr;
    void *base = nullptr;
    REQUIRE(oscf_win_create(tcp, &p, &w, &base) == OSCF_OK);
    size_t bs = oscf_win_blob_size(w);
    std::vector<char> blobs(2 * bs);
    REQUIRE(oscf_win_local_blob(t.win[0], blobs.data()) == OSCF_OK);
    REQUIRE(oscf_win_local_blob(w, blobs.data() + bs) == OSCF_OK);
    CHECK(oscf_win_connect(w, blobs.data()) == OSCF_ERR_NO_PROVIDER);
    CHECK(oscf_engine_close(tcp) == OSCF_ERR_RMA_SYNC);  // window still open
    REQUIRE(oscf_win_destroy(w) == OSCF_OK);
    REQUIRE(oscf_engine_close(tcp) == OSCF_OK);
}

TEST_CASE("a failure reported by one target's flush is not reported again by the window", "[sync][errors]") {
    oscf::OpCounter window, a, b, a_acc;
    a.parent = &window;
    b.parent = &window;
    a_acc.parent = &a;
    for (oscf::OpCounter *c : {&a_acc, &b}) c->on_post();
    a_acc.on_complete(OSCF_ERR_RMA_RANGE);
    b.on_complete(OSCF_OK);
    REQUIRE(window.idle());
    // MPI_Win_flush(a) reports it; MPI_Win_flush_all afterwards has nothing to report.
    CHECK(a.take_error() == OSCF_ERR_RMA_RANGE);
    CHECK(window.take_error() == OSCF_OK);
    // Two targets fail; one is flushed: the window still reports the other's.
    a.on_post();
    b.on_post();
    a.on_complete(OSCF_ERR_FABRIC);
    b.on_complete(OSCF_ERR_RMA_RANGE);
    CHECK(b.take_error() == OSCF_ERR_RMA_RANGE);
    CHECK(window.take_error() != OSCF_OK);
    // A window-wide report covers its children: they forget (take_window_error does this).
    a.forget_errors();
    CHECK(a.take_error() == OSCF_OK);
    CHECK(window.take_error() == OSCF_OK);
}

TEST_CASE("a process whose calls never wait still serves the requests aimed at it", "[progress]") {
    // Rank 1 has no progress thread and only opens and closes epochs on itself, calls
    // that never wait (an MPI program polling its own memory through MPI): Open MPI
    // drives no opal_progress there, so the engine's own calls must serve rank 0.
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    const bool threads[2] = {true, false};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes, 1, OSCF_ACC_AM, OSCF_ORDER_DEFAULT, threads);
    int64_t swap = 7, compare = 0, old = -1;
    auto *word = reinterpret_cast<volatile int64_t *>(t.mem(1));
    *word = 0;
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, OSCF_MODE_NOCHECK) == OSCF_OK);
    REQUIRE(oscf_win_compare_and_swap(t.win[0], 1, &swap, &compare, &old, OSCF_TYPE_INT64, 0, 0) == OSCF_OK);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    long calls = 0;
    while (*word != 7 && std::chrono::steady_clock::now() < deadline) {
        REQUIRE(oscf_win_lock(t.win[1], 1, 0, 0) == OSCF_OK);
        REQUIRE(oscf_win_unlock(t.win[1], 1) == OSCF_OK);
        calls += 2;
    }
    CHECK(*word == 7);
    INFO("calls on rank 1 before the swap landed: " << calls);
    // Whatever happened, let rank 1 answer so the flush and teardown end.
    std::atomic<bool> done{false};
    std::thread serve([&] {
        while (!done) oscf_engine_progress(t.eng[1]);
    });
    CHECK(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    CHECK(old == 0);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    done = true;
    serve.join();
}
