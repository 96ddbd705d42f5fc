// A dynamic window's region table read by an origin while the owner attaches and
// detaches regions in another thread, by cross-memory attach on the owner's node and
// through the fabric (dynamic.cpp): every copy the origin uses must be one whole
// generation of the table, and the origin must get one however busy the owner is, so a
// region attached the whole time is always found and its bytes move.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "two_ranks.h"
#include <unistd.h>

namespace {
// Two engines whose dynamic windows share a node segment, as the MPI layer makes one
// for processes on one node (osc_fabric_shared.c): the origin then reaches the owner
// by cross-memory attach.
struct NodeDynamicPair {
    oscf_engine *eng[2] = {nullptr, nullptr};
    oscf_win *win[2] = {nullptr, nullptr};

    NodeDynamicPair(const std::string &provider, bool cross_memory) {
        static int serial = 0;
        const std::string name =
            "/oscf_test_dyn_" + std::to_string(getpid()) + "_" + std::to_string(serial++);
        const size_t state = oscf_win_state_bytes(2), page = 4096;
        const size_t total = (2 * state + page - 1) / page * page;
        for (int r = 0; r < 2; ++r) {
            oscf_engine_config cfg{};
            cfg.provider_include = provider.c_str();
            cfg.job_is_node_local = provider == "shm";
            cfg.progress_thread = 1;
            cfg.accumulate_path = OSCF_ACC_AUTO;
            cfg.node_direct = 1;
            cfg.cross_memory = cross_memory;
            REQUIRE(oscf_engine_open(&cfg, &eng[r]) == OSCF_OK);
            oscf_win_params p{};
            p.flavor = OSCF_FLAVOR_DYNAMIC;
            p.disp_unit = 1;
            p.comm_rank = r;
            p.comm_size = 2;
            p.accumulate_ordering = OSCF_ORDER_DEFAULT;
            p.shared_name = name.c_str();
            p.shared_create = r == 0;
            p.shared_total = total;
            p.shared_offset = total;  // no window memory in the segment
            p.shared_state_offset = state * r;
            void *base = nullptr;
            REQUIRE(oscf_win_create(eng[r], &p, &win[r], &base) == OSCF_OK);
        }
        oscf_shared_unlink(name.c_str());
        connect_pair(win);
    }
    ~NodeDynamicPair() {
        free_pair(win);
        for (int r = 0; r < 2; ++r)
            if (eng[r]) oscf_engine_close(eng[r]);
    }
};
}  // namespace

TEST_CASE("an origin finds a region while the owner attaches and detaches others", "[dynamic][regions]") {
    const std::string prov = test_provider();
    const bool cross = GENERATE(true, false);
    INFO(prov << (cross ? ", cross-memory attach" : ", through the fabric"));
    NodeDynamicPair t(prov, cross);
    // Region A stays attached throughout; the owner attaches and detaches others around
    // it, so the table is rewritten, its entries move (they are kept sorted) and it
    // outgrows its capacity more than once.
    constexpr size_t kA = 4096, kOthers = 70, kOther = 256;
    std::vector<uint64_t> a(kA / 8);
    for (size_t i = 0; i < a.size(); ++i) a[i] = 0x5eed000000000000ull + i;
    std::vector<std::vector<char>> others(kOthers, std::vector<char>(kOther));
    REQUIRE(oscf_win_attach(t.win[1], a.data(), kA) == OSCF_OK);
    std::atomic<bool> stop{false};
    std::atomic<long> edits{0};
    std::atomic<int> owner_failed{OSCF_OK};  // Catch's assertions are for this thread only
    std::thread owner([&] {
        auto check = [&](int rc) {
            if (rc != OSCF_OK) owner_failed = rc;
            return rc == OSCF_OK;
        };
        while (!stop.load() && owner_failed == OSCF_OK) {
            for (auto &o : others)
                if (!check(oscf_win_attach(t.win[1], o.data(), o.size()))) return;
            for (auto &o : others)
                if (!check(oscf_win_detach(t.win[1], o.data()))) return;
            edits += 2 * kOthers;
            // Between rounds, as a scheduler would: valgrind runs one thread at a time
            // and otherwise leaves this one running for long stretches.
            std::this_thread::yield();
        }
    });
    const auto base = static_cast<int64_t>(reinterpret_cast<intptr_t>(a.data()));
    int failures = 0;
    long accesses = 0;
    // Each epoch is a new access epoch, so the origin compares the generation and, the
    // owner having edited, reads the table again.
    constexpr long kAccesses = 1000, kEdits = 20 * kOthers;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((accesses < kAccesses || edits.load() < kEdits) && failures == 0 && owner_failed == OSCF_OK &&
           std::chrono::steady_clock::now() < give_up) {
        REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
        const size_t i = static_cast<size_t>(accesses) % a.size();
        uint64_t got = 0;
        const int rc = oscf_win_get(t.win[0], 1, &got, 8, base, static_cast<int64_t>(8 * i), nullptr);
        REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
        if (rc != OSCF_OK || got != a[i]) {
            ++failures;
            INFO("access " << accesses << ": status " << rc << ", got 0x" << std::hex << got);
            CHECK(false);
        }
        ++accesses;
    }
    stop = true;
    owner.join();
    CHECK(owner_failed == OSCF_OK);
    CHECK(failures == 0);
    // The road under test.
    oscf_win_stats s{};
    oscf_win_get_stats(t.win[0], &s);
    if (cross)
        CHECK(s.cross_rma >= static_cast<uint64_t>(accesses));
    else
        CHECK(s.cross_rma == 0);
    // The origin gets through, and the owner edited all along: across the node the owner
    // takes no part; through the fabric each attach and detach serves the reads, and the
    // owner holds for a reader that asked. Before either, a few accesses went through,
    // then one gave up, or none came for as long as the owner kept editing.
    INFO(accesses << " accesses while the owner made " << edits.load() << " edits");
    CHECK(accesses >= kAccesses);
    CHECK(edits.load() >= kEdits);
    REQUIRE(oscf_win_detach(t.win[1], a.data()) == OSCF_OK);
}
