// put_packed and get_packed: a target layout as runs, the origin's bytes from a packer.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "../../osc_fabric/engine/am_proto.h"
#include "../../osc_fabric/engine/run_codec.h"
#include "list_source.h"
#include "two_ranks.h"

namespace {

// The origin side as one contiguous buffer, handed out and taken back in order, as
// Open MPI's convertor does for a derived datatype. Counts its releases.
struct Packer {
    std::vector<char> bytes;
    size_t at = 0;
    int released = 0;
    oscf_packer api() {
        return oscf_packer{[](void *a, void *dst, size_t len) -> int {
                               auto *p = static_cast<Packer *>(a);
                               if (p->at + len > p->bytes.size()) return OSCF_ERR_INTERNAL;
                               std::memcpy(dst, p->bytes.data() + p->at, len);
                               p->at += len;
                               return OSCF_OK;
                           },
                           [](void *a, const void *src, size_t len) -> int {
                               auto *p = static_cast<Packer *>(a);
                               if (p->at + len > p->bytes.size()) return OSCF_ERR_INTERNAL;
                               std::memcpy(p->bytes.data() + p->at, src, len);
                               p->at += len;
                               return OSCF_OK;
                           },
                           [](void *a) { ++static_cast<Packer *>(a)->released; }, this};
    }
};

std::vector<char> pattern(size_t n, int seed) {
    std::vector<char> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 7 + seed) % 251 + 1);
    return v;
}

// Where the packed bytes of runs go in a window of `size` bytes (0 elsewhere).
std::vector<char> expected(const std::vector<oscf_run> &runs, const std::vector<char> &packed, size_t size) {
    std::vector<char> out(size, 0);
    size_t at = 0;
    for (const oscf_run &r : runs)
        for (size_t j = 0; j < r.count; ++j, at += r.len)
            std::memcpy(out.data() + r.offset + r.stride * static_cast<int64_t>(j), packed.data() + at,
                        r.len);
    return out;
}

size_t bytes_of(const std::vector<oscf_run> &runs) {
    size_t n = 0;
    for (const oscf_run &r : runs) n += r.len * r.count;
    return n;
}

}  // namespace

TEST_CASE("a layout's pieces travel in few messages and land in place, both ways", "[rma][packed_layout]") {
    std::string prov = test_provider();
    const int target = GENERATE(0, 1);  // ourselves: plain copies
    // A vector of 4-byte pieces, a run going backwards, and a piece larger than a message:
    // small enough for messages, or large enough for the rendezvous.
    const size_t scale = GENERATE(1, 10);
    const size_t kSize = 1 << 20;
    size_t sizes[2] = {kSize, kSize};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::memset(t.mem(target), 0, kSize);
    const std::vector<oscf_run> runs{
        {16, 12, 4, 2000 * scale}, {300000, -8, 8, 100 * scale}, {400000, 0, 4000 * scale, 1}};
    Packer put;
    put.bytes = pattern(bytes_of(runs), 5);
    bool put_done = false, get_done = false;
    auto set = [](void *arg, int status) { *static_cast<bool *>(arg) = status == OSCF_OK; };
    oscf_notify pn{set, &put_done}, gn{set, &get_done};
    REQUIRE(oscf_win_lock(t.win[0], target, 0, 0) == OSCF_OK);
    oscf_packer pk = put.api();
    REQUIRE(oscf_win_put_packed(t.win[0], target, runs.data(), runs.size(), 0, &pk, &pn) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], target) == OSCF_OK);
    CHECK(put_done);
    CHECK(put.released == 1);
    CHECK(std::memcmp(t.mem(target), expected(runs, put.bytes, kSize).data(), kSize) == 0);

    Packer get;
    get.bytes.assign(put.bytes.size(), 0);
    pk = get.api();
    REQUIRE(oscf_win_get_packed(t.win[0], target, runs.data(), runs.size(), 0, &pk, &gn) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], target) == OSCF_OK);
    CHECK(get_done);
    CHECK(get.released == 1);
    CHECK(get.bytes == put.bytes);
    CHECK(get.at == get.bytes.size());
    REQUIRE(oscf_win_unlock(t.win[0], target) == OSCF_OK);

    const oscf_win_stats st = t.stats(0);
    CHECK(st.puts == 0);
    CHECK(st.gets == 0);
    if (target == 1) {
        // Per direction: the bytes plus a few descriptions per message, not a message a piece.
        const size_t per_way = bytes_of(runs) / (oscf::kAmMaxPayload - 4 * oscf::kRunBytesMax) + 2;
        CHECK(st.layout_messages >= 2);
        CHECK(st.layout_messages <= 2 * per_way);
    } else {
        CHECK(st.layout_messages == 0);
    }
}

TEST_CASE("a get of several rendezvous chunks unpacks each once, in order", "[rma][packed_layout]") {
    // Chunks are unpacked as soon as they and those before them are answered, the rest
    // after the last: every byte lands where the packer's order says, exactly once.
    std::string prov = test_provider();
    const size_t kSize = 4 << 20;
    size_t sizes[2] = {kSize, kSize};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    const std::vector<oscf_run> runs{{0, 12, 8, 200000}, {kSize - 4096, -4096, 2048, 100}};
    REQUIRE(bytes_of(runs) > 3 * oscf::kRendezvousChunk);
    const std::vector<char> packed = pattern(bytes_of(runs), 9);
    const std::vector<char> want = expected(runs, packed, kSize);
    std::memcpy(t.mem(1), want.data(), kSize);
    Packer get;
    get.bytes.assign(packed.size(), 0);
    bool done = false;
    oscf_notify gn{[](void *arg, int status) { *static_cast<bool *>(arg) = status == OSCF_OK; }, &done};
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    oscf_packer pk = get.api();
    REQUIRE(oscf_win_get_packed(t.win[0], 1, runs.data(), runs.size(), 0, &pk, &gn) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    CHECK(done);
    CHECK(get.released == 1);
    CHECK(get.at == packed.size());
    CHECK(get.bytes == packed);
    CHECK(t.stats(0).layout_messages >= 4);
}

TEST_CASE("streamed puts and gets take their runs a batch at a time, every byte in place",
          "[rma][packed_layout]") {
    // Many irregular runs (a get's do not fit one request, so its requests carry them
    // cut as they come), to ourselves (drained first) and to the peer (cut into the
    // rendezvous), both ways, then a source that fails half-way.
    std::string prov = test_provider();
    const int target = GENERATE(0, 1);
    const size_t kSize = 4 << 20;
    size_t sizes[2] = {kSize, kSize};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::memset(t.mem(target), 0, kSize);
    std::vector<oscf_run> runs;
    for (int64_t at = 8; at + 128 < static_cast<int64_t>(kSize / 2);) {
        const size_t len = 4 + static_cast<size_t>(at * 7 % 29) * 4;  // 4-116 bytes
        runs.push_back(oscf_run{at, 0, len, 1});
        at += static_cast<int64_t>(len) + 4 + at % 3 * 8;
    }
    runs.push_back(oscf_run{static_cast<int64_t>(kSize / 2), 24, 16, 40000});  // a strided run
    REQUIRE(runs.size() > 15000);
    REQUIRE(bytes_of(runs) > 2 * oscf::kRendezvousChunk);
    const int64_t hi = static_cast<int64_t>(kSize / 2) + 24 * 40000;

    Packer put;
    put.bytes = pattern(bytes_of(runs), 3);
    ListSource put_runs{runs, 1000};
    oscf_run_source src = put_runs.source(8, hi);
    REQUIRE(oscf_win_lock(t.win[0], target, 0, 0) == OSCF_OK);
    oscf_packer pk = put.api();
    REQUIRE(oscf_win_put_streamed(t.win[0], target, &src, 0, &pk, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], target) == OSCF_OK);
    CHECK(put.released == 1);
    CHECK(std::memcmp(t.mem(target), expected(runs, put.bytes, kSize).data(), kSize) == 0);

    Packer get;
    get.bytes.assign(put.bytes.size(), 0);
    ListSource get_runs{runs, 777};
    src = get_runs.source(8, hi);
    pk = get.api();
    REQUIRE(oscf_win_get_streamed(t.win[0], target, &src, 0, &pk, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], target) == OSCF_OK);
    CHECK(get.released == 1);
    CHECK(get.at == get.bytes.size());
    const auto differ = std::mismatch(get.bytes.begin(), get.bytes.end(), put.bytes.begin());
    CHECK(differ.first - get.bytes.begin() == static_cast<std::ptrdiff_t>(get.bytes.size()));  // none
    if (target == 1) CHECK(t.stats(0).layout_messages >= 4);  // the runs did not fit one request

    // A source that fails half-way: a request's call waits for the chunks already out,
    // fails with the source's error and never notifies; the packer is released once.
    Packer broken;
    broken.bytes.assign(put.bytes.size(), 0);
    ListSource failing{runs, 500, 0, OSCF_ERR_NO_MEM, runs.size() / 2};
    src = failing.source(8, hi);
    pk = broken.api();
    bool notified = false;
    oscf_notify n{[](void *arg, int) { *static_cast<bool *>(arg) = true; }, &notified};
    CHECK(oscf_win_get_streamed(t.win[0], target, &src, 0, &pk, &n) == OSCF_ERR_NO_MEM);
    CHECK(broken.released == 1);
    CHECK_FALSE(notified);
    // To the peer, chunks had left: their failed operation is the epoch's too. To
    // ourselves the source failed before anything moved. Either way it is reported once.
    CHECK(oscf_win_unlock(t.win[0], target) == (target == 1 ? OSCF_ERR_NO_MEM : OSCF_OK));
    REQUIRE(oscf_win_lock(t.win[0], target, 0, 0) == OSCF_OK);
    CHECK(oscf_win_unlock(t.win[0], target) == OSCF_OK);
}

TEST_CASE("a layout reaching past the window fails at the call and changes nothing", "[rma][packed_layout]") {
    std::string prov = test_provider();
    size_t sizes[2] = {4096, 4096};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes);
    std::memset(t.mem(1), 0, 4096);
    const std::vector<oscf_run> runs{{0, 100, 4, 41}};  // the last piece at 4000..4004: inside
    const std::vector<oscf_run> past{{0, 100, 4, 42}};  // the last at 4100: outside
    Packer a, b;
    a.bytes = pattern(bytes_of(past), 1);
    b.bytes = a.bytes;
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    oscf_packer pk = a.api();
    CHECK(oscf_win_put_packed(t.win[0], 1, past.data(), past.size(), 0, &pk, nullptr) == OSCF_ERR_RMA_RANGE);
    CHECK(a.released == 1);
    pk = b.api();
    CHECK(oscf_win_get_packed(t.win[0], 1, runs.data(), runs.size(), 100, &pk, nullptr) ==
          OSCF_ERR_RMA_RANGE);
    CHECK(b.released == 1);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    CHECK(std::vector<char>(t.mem(1), t.mem(1) + 4096) == std::vector<char>(4096, 0));
    // A packer without the function its direction needs is refused, and still released.
    oscf_packer none{nullptr, nullptr, [](void *a) { ++static_cast<Packer *>(a)->released; }, &a};
    CHECK(oscf_win_put_packed(t.win[0], 1, runs.data(), runs.size(), 0, &none, nullptr) == OSCF_ERR_ARG);
    CHECK(a.released == 2);
}

TEST_CASE("a dynamic window's layout may skip the gaps between its regions", "[rma][packed_layout]") {
    std::string prov = test_provider();
    size_t sizes[2] = {0, 0};
    TwoRanks t(prov, OSCF_FLAVOR_DYNAMIC, sizes);
    // Two regions with a gap between them; the pieces lie in both, none in the gap.
    std::vector<char> mem(3 * 4096, 0);
    REQUIRE(oscf_win_attach(t.win[1], mem.data(), 4096) == OSCF_OK);
    REQUIRE(oscf_win_attach(t.win[1], mem.data() + 2 * 4096, 4096) == OSCF_OK);
    const auto base = static_cast<int64_t>(reinterpret_cast<intptr_t>(mem.data()));
    const std::vector<oscf_run> runs{{0, 64, 16, 64}, {2 * 4096, 64, 16, 64}};
    Packer put;
    put.bytes = pattern(bytes_of(runs), 9);
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    oscf_packer pk = put.api();
    REQUIRE(oscf_win_put_packed(t.win[0], 1, runs.data(), runs.size(), base, &pk, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    CHECK(mem == expected(runs, put.bytes, mem.size()));
    // One piece in the gap: the whole call is refused.
    const std::vector<oscf_run> gap{{0, 64, 16, 64}, {4096 + 64, 0, 16, 1}};
    Packer bad;
    bad.bytes = pattern(bytes_of(gap), 2);
    pk = bad.api();
    CHECK(oscf_win_put_packed(t.win[0], 1, gap.data(), gap.size(), base, &pk, nullptr) == OSCF_ERR_RMA_RANGE);
    CHECK(bad.released == 1);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    CHECK(mem == expected(runs, put.bytes, mem.size()));
    REQUIRE(oscf_win_detach(t.win[1], mem.data()) == OSCF_OK);
    REQUIRE(oscf_win_detach(t.win[1], mem.data() + 2 * 4096) == OSCF_OK);
}

TEST_CASE("an exclusive lock never sees part of a rendezvous put's epoch", "[rma][packed_layout]") {
    // Rank 0 puts a large layout inside a shared lock, adds an accumulate (batched, so the
    // unlock's release travels with it) and unlocks; rank 1 takes its own window
    // exclusively meanwhile. The chunks are served over time (kAmLater), so the release
    // travelling behind them must wait until the last is in.
    // A put's chunks are read ahead of each other (kAmChunkFollows), a few at most: two
    // chunks, and more than that few.
    std::string prov = test_provider();
    const size_t kSize = GENERATE(size_t{1} << 20, size_t{4} << 20);
    size_t sizes[2] = {kSize, kSize};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes, 1, OSCF_ACC_AM);
    std::memset(t.mem(1), 0, kSize);
    const std::vector<oscf_run> runs{{0, 12, 8, (kSize - 16) / 12}};
    REQUIRE(bytes_of(runs) > oscf::kRendezvousChunk);  // chunks
    Packer put;
    put.bytes = pattern(bytes_of(runs), 4);
    const std::vector<char> want = expected(runs, put.bytes, kSize);
    std::atomic<bool> done{false};
    int partial = 0, seen_all = 0;
    std::thread watcher([&] {
        while (!done.load()) {
            REQUIRE(oscf_win_lock(t.win[1], 1, 1, 0) == OSCF_OK);
            const bool none = std::all_of(t.mem(1), t.mem(1) + kSize - 4, [](char c) { return c == 0; });
            const bool all = std::memcmp(t.mem(1), want.data(), kSize - 4) == 0;
            partial += !none && !all;
            seen_all += all;
            REQUIRE(oscf_win_unlock(t.win[1], 1) == OSCF_OK);
        }
    });
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    oscf_packer pk = put.api();
    REQUIRE(oscf_win_put_packed(t.win[0], 1, runs.data(), runs.size(), 0, &pk, nullptr) == OSCF_OK);
    const int32_t one = 1;
    REQUIRE(oscf_win_accumulate(t.win[0], 1, &one, nullptr, 1, OSCF_TYPE_INT32, OSCF_OP_SUM, 0, kSize - 4,
                                nullptr) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    done = true;
    watcher.join();
    CHECK(partial == 0);
    CHECK(std::memcmp(t.mem(1), want.data(), kSize - 4) == 0);
    int32_t sum;
    std::memcpy(&sum, t.mem(1) + kSize - 4, 4);
    CHECK(sum == 1);
    CHECK(t.stats(0).layout_messages >= 2);
}

TEST_CASE("an accumulate's layout adds every element once, never split", "[rma][packed_layout]") {
    std::string prov = test_provider();
    const size_t scale = GENERATE(1, 10);  // messages, or the rendezvous
    const size_t kSize = 1 << 20;
    size_t sizes[2] = {kSize, kSize};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes, 1, OSCF_ACC_AM);
    // Pieces of 3 ints (12 bytes): a message's room is no multiple of them, so a piece
    // split between messages must be split between elements.
    const std::vector<oscf_run> runs{{0, 20, 12, 1500 * scale}, {600000, 4, 4, 1000}};
    std::vector<int32_t> base(kSize / 4);
    for (size_t i = 0; i < base.size(); ++i) base[i] = static_cast<int32_t>(i % 1000);
    std::memcpy(t.mem(1), base.data(), kSize);
    Packer add;
    add.bytes.resize(bytes_of(runs));
    for (size_t i = 0; i < add.bytes.size() / 4; ++i) {
        const int32_t v = static_cast<int32_t>(i * 7 + 1);
        std::memcpy(add.bytes.data() + 4 * i, &v, 4);
    }
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    oscf_packer pk = add.api();
    REQUIRE(oscf_win_accumulate_packed(t.win[0], 1, runs.data(), runs.size(), OSCF_TYPE_INT32, OSCF_OP_SUM, 0,
                                       &pk, nullptr) == OSCF_OK);
    pk = add.api();
    add.at = 0;  // the same elements again
    REQUIRE(oscf_win_accumulate_packed(t.win[0], 1, runs.data(), runs.size(), OSCF_TYPE_INT32, OSCF_OP_SUM, 0,
                                       &pk, nullptr) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    CHECK(add.released == 2);
    std::vector<int32_t> want = base;
    size_t k = 0;
    for (const oscf_run &r : runs)
        for (size_t j = 0; j < r.count; ++j)
            for (size_t e = 0; e < r.len / 4; ++e, ++k)
                want[(r.offset + r.stride * static_cast<int64_t>(j)) / 4 + e] +=
                    2 * static_cast<int32_t>(k * 7 + 1);
    CHECK(std::memcmp(t.mem(1), want.data(), kSize) == 0);
    CHECK(t.stats(0).layout_messages >= 1);

    // The question the MPI layer asks first: yes for the peer (active messages forced),
    // no for ourselves or a rank outside the window.
    CHECK(oscf_win_engine_applies(t.win[0], 1, OSCF_TYPE_INT32) == 1);
    CHECK(oscf_win_engine_applies(t.win[0], 0, OSCF_TYPE_INT32) == 0);
    CHECK(oscf_win_engine_applies(t.win[0], 2, OSCF_TYPE_INT32) == 0);
    // Ourselves: the engine declines, and releases the packer.
    Packer self;
    self.bytes = add.bytes;
    pk = self.api();
    REQUIRE(oscf_win_lock(t.win[0], 0, 0, 0) == OSCF_OK);
    CHECK(oscf_win_accumulate_packed(t.win[0], 0, runs.data(), runs.size(), OSCF_TYPE_INT32, OSCF_OP_SUM, 0,
                                     &pk, nullptr) == OSCF_ERR_UNSUPPORTED);
    REQUIRE(oscf_win_unlock(t.win[0], 0) == OSCF_OK);
    CHECK(self.released == 1);
}

TEST_CASE("MPI_Win_complete of packed puts and accumulates leaves them to the target",
          "[rma][packed_layout][pscw]") {
    // Over the network, a packed put's or accumulate's bytes are in the origin's copy once
    // the call returns (a small accumulate's in its batch's message), so complete sends its notification behind them and returns: rank
    // 1, with no progress thread, serves nothing until its wait, and its wait ends only
    // once they are applied. A get in the epoch is different: complete waits for its bytes.
    const size_t kSize = 2 << 20, kAccAt = 1 << 20, kGetAt = kAccAt + 65536;
    size_t sizes[2] = {kSize, kSize};
    const bool threads[2] = {true, false};
    // rxm named in full: libfabric 2's native tcp, which "tcp" names there, writes small
    // puts with fi_write, which complete only once the idle target's progress delivers them.
    TwoRanks t("tcp;ofi_rxm", OSCF_FLAVOR_ALLOCATE, sizes, 1, OSCF_ACC_AM, OSCF_ORDER_DEFAULT, threads);
    const std::vector<oscf_run> put_runs{{0, 12, 8, 80000}};  // rendezvous chunks
    const std::vector<oscf_run> acc_runs{{kAccAt, 8, 4, 1000}};
    const std::vector<oscf_run> get_runs{{kGetAt, 16, 8, 20000}};
    REQUIRE(bytes_of(put_runs) > oscf::kRendezvousChunk);
    const size_t put_span = 80000 * 12;
    // Rank 1: zeros where the put and the accumulate go, what the get reads behind them.
    std::memset(t.mem(1), 0, kSize);
    const std::vector<char> source = pattern(kSize - kGetAt, 3);
    std::memcpy(t.mem(1) + kGetAt, source.data(), source.size());
    std::vector<char> get_want;
    for (size_t j = 0; j < 20000; ++j) get_want.insert(get_want.end(), &source[16 * j], &source[16 * j + 8]);

    Packer put, add, get;
    put.bytes = pattern(bytes_of(put_runs), 5);
    add.bytes.resize(bytes_of(acc_runs));
    for (size_t i = 0; i < add.bytes.size() / 4; ++i) {
        const int32_t v = static_cast<int32_t>(i + 1);
        std::memcpy(add.bytes.data() + 4 * i, &v, 4);
    }
    const std::vector<char> want = expected(put_runs, put.bytes, put_span);
    const int origin = 0, target = 1;

    // Epochs: packed and small; small alone (its batch not yet sent at complete); all
    // that and a get. A small put over tcp joins the batch in such an epoch (rma.cpp).
    enum { kPacked, kSmallOnly, kWithGet };
    int32_t adds = 0, smalls = 0;  // what rank 1 holds after each epoch
    for (int epoch : {kPacked, kSmallOnly, kWithGet}) {
        INFO("epoch " << epoch);
        const bool packed = epoch != kSmallOnly, with_get = epoch == kWithGet;
        REQUIRE(oscf_win_post(t.win[1], &origin, 1, 0) == OSCF_OK);
        REQUIRE(oscf_win_start(t.win[0], &target, 1, 0) == OSCF_OK);
        put.at = add.at = 0;
        oscf_packer pk = put.api();
        if (packed) {
            REQUIRE(oscf_win_put_packed(t.win[0], 1, put_runs.data(), put_runs.size(), 0, &pk, nullptr) ==
                    OSCF_OK);
            pk = add.api();
            REQUIRE(oscf_win_accumulate_packed(t.win[0], 1, acc_runs.data(), acc_runs.size(), OSCF_TYPE_INT32,
                                               OSCF_OP_SUM, 0, &pk, nullptr) == OSCF_OK);
            ++adds;
        }
        // A small accumulate and a small put: batched, their bytes in the batch's message.
        const int32_t one = 1;
        REQUIRE(oscf_win_accumulate(t.win[0], 1, &one, nullptr, 1, OSCF_TYPE_INT32, OSCF_OP_SUM, 0,
                                    kAccAt - 4, nullptr) == OSCF_OK);
        ++smalls;
        const int32_t mark = 100 + smalls;
        REQUIRE(oscf_win_put(t.win[0], 1, &mark, sizeof mark, 0, kAccAt - 8, nullptr) == OSCF_OK);
        get.bytes.assign(get_want.size(), 0);
        get.at = 0;
        if (with_get) {
            pk = get.api();
            REQUIRE(oscf_win_get_packed(t.win[0], 1, get_runs.data(), get_runs.size(), 0, &pk, nullptr) ==
                    OSCF_OK);
        }
        std::vector<char> got_at_complete;
        int32_t small_at_complete = -1;
        auto complete = std::async(std::launch::async, [&] {
            const int rc = oscf_win_complete(t.win[0]);
            got_at_complete = get.bytes;  // what complete promised the origin
            std::memcpy(&small_at_complete, t.mem(1) + kAccAt - 4, 4);
            return rc;
        });
        if (!with_get) {
            // It returns while rank 1 has served nothing.
            CHECK(complete.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
            CHECK(small_at_complete == smalls - 1);
            if (epoch == kPacked)
                CHECK(std::all_of(t.mem(1), t.mem(1) + put_span, [](char c) { return c == 0; }));
        }
        REQUIRE(oscf_win_wait(t.win[1]) == OSCF_OK);
        CHECK(complete.get() == OSCF_OK);
        CHECK(std::memcmp(t.mem(1), want.data(), put_span) == 0);
        int32_t first = 0, last = 0, small = 0;
        std::memcpy(&first, t.mem(1) + kAccAt, 4);
        std::memcpy(&last, t.mem(1) + kAccAt + 8 * 999, 4);
        std::memcpy(&small, t.mem(1) + kAccAt - 4, 4);
        CHECK(first == adds);  // each epoch adds once
        CHECK(last == 1000 * adds);
        CHECK(small == smalls);
        int32_t put_mark = 0;
        std::memcpy(&put_mark, t.mem(1) + kAccAt - 8, 4);
        CHECK(put_mark == 100 + smalls);
        if (with_get) CHECK(got_at_complete == get_want);
    }
}

TEST_CASE("the rendezvous's kept buffers belong to the engine, shared by its windows",
          "[rma][packed_layout]") {
    // A large put's registered copy (and a streamed put's slots) outlive the operation
    // for the next one: kept per window, a program with many windows would keep, and
    // pin where registration pins, a set of them per window.
    const size_t kSize = 4 << 20;
    size_t sizes[2] = {kSize, kSize};
    TwoRanks t("tcp", OSCF_FLAVOR_ALLOCATE, sizes);
    const std::vector<oscf_run> runs{{0, 12, 8, 200000}};
    REQUIRE(bytes_of(runs) > 3 * oscf::kRendezvousChunk);
    auto put = [&](oscf_win *w) {
        Packer p;
        p.bytes = pattern(bytes_of(runs), 3);
        oscf_packer pk = p.api();
        REQUIRE(oscf_win_lock(w, 1, 0, 0) == OSCF_OK);
        REQUIRE(oscf_win_put_packed(w, 1, runs.data(), runs.size(), 0, &pk, nullptr) == OSCF_OK);
        REQUIRE(oscf_win_unlock(w, 1) == OSCF_OK);
        CHECK(p.released == 1);
    };
    put(t.win[0]);

    // A second window on the same engines.
    oscf_win *w2[2] = {nullptr, nullptr};
    void *b2[2] = {nullptr, nullptr};
    for (int r = 0; r < 2; ++r) {
        oscf_win_params p = allocate_params(kSize, r, 2);
        REQUIRE(oscf_win_create(t.eng[r], &p, &w2[r], &b2[r]) == OSCF_OK);
    }
    connect_pair(w2);
    std::memset(b2[1], 0, kSize);

    uint64_t before = 0, after = 0, bytes = 0;
    REQUIRE(oscf_engine_registration_stats(&before, &bytes) == OSCF_OK);
    put(w2[0]);
    REQUIRE(oscf_engine_registration_stats(&after, &bytes) == OSCF_OK);
    CHECK(after == before);  // the first window's kept copy served the second's put
    CHECK(std::memcmp(b2[1], expected(runs, pattern(bytes_of(runs), 3), kSize).data(), kSize) == 0);

    free_pair(w2);
}
