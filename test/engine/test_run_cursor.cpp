// RunCursor: a target layout cut into messages, without a fabric.
#include "catch_compat.h"

#include <cstdint>
#include <vector>

#include "../../osc_fabric/engine/run_cursor.h"

using oscf::AmRun;
using oscf::kRunBytesMax;
using oscf::RunCursor;
using oscf::RunList;

namespace {

struct Piece {
    uint64_t offset;
    size_t len;
    bool operator==(const Piece &o) const { return offset == o.offset && len == o.len; }
};

// The pieces of runs in order, touching pieces merged: how the bytes land. Walked, not
// collected: the random layouts below describe millions of pieces.
template <class Run>
class PieceWalk {
public:
    explicit PieceWalk(const std::vector<Run> &runs) : runs_(&runs) { have_ = step(&pending_); }

    bool next(Piece *out) {
        if (!have_) return false;
        *out = pending_;
        while ((have_ = step(&pending_)) && out->offset + out->len == pending_.offset)
            out->len += pending_.len;
        return true;
    }

private:
    // The next non-empty piece as the runs give it, unmerged.
    bool step(Piece *p) {
        for (; run_ < runs_->size(); ++run_, j_ = 0) {
            const Run &r = (*runs_)[run_];
            if (r.len == 0 || j_ == r.count) continue;
            p->offset = static_cast<uint64_t>(r.offset) + static_cast<uint64_t>(r.stride) * j_++;
            p->len = r.len;
            return true;
        }
        return false;
    }

    const std::vector<Run> *runs_;
    size_t run_ = 0;
    uint64_t j_ = 0;
    Piece pending_{};
    bool have_ = false;
};

template <class A, class B>
bool same_pieces(const std::vector<A> &a, const std::vector<B> &b) {
    PieceWalk<A> wa(a);
    PieceWalk<B> wb(b);
    Piece pa, pb;
    for (;;) {
        const bool more_a = wa.next(&pa), more_b = wb.next(&pb);
        if (more_a != more_b) return false;
        if (!more_a) return true;
        if (!(pa == pb)) return false;
    }
}

// A message's runs as the target reads them, appended to out.
void decode_into(const RunList &l, std::vector<AmRun> &out) {
    oscf::RunReader reader(l.data(), l.bytes());
    const size_t before = out.size();
    AmRun r;
    while (reader.next(&r)) out.push_back(r);
    // Not CHECK: this runs for every one of millions of messages, and a passing CHECK costs.
    if (!reader.ok() || out.size() - before != l.count())
        FAIL_CHECK("runs do not decode: " << out.size() - before << " of " << l.count());
}

std::vector<AmRun> decode(const RunList &l) {
    std::vector<AmRun> out;
    decode_into(l, out);
    return out;
}

struct Cut {
    std::vector<std::vector<AmRun>> messages;
    std::vector<size_t> desc;  // each message's runs, in bytes of their wire form
    std::vector<size_t> bytes;
};

Cut cut(const std::vector<oscf_run> &runs, size_t room, bool shares, uint64_t delta = 0) {
    RunCursor c(runs.data(), runs.size(), delta);
    Cut out;
    RunList sub;
    while (!c.done()) {
        out.bytes.push_back(c.next(sub, shares ? RunCursor::shared(room) : RunCursor::split(room)));
        out.messages.push_back(decode(sub));
        out.desc.push_back(sub.pad());          // as it travels
        REQUIRE(out.messages.size() < 100000);  // the cursor always advances
    }
    return out;
}

size_t wire_of(const std::vector<oscf_run> &runs) {
    oscf::WireSize w;
    for (const oscf_run &r : runs)
        if (r.len && r.count) w.add(static_cast<uint64_t>(r.offset), r.stride, r.len, r.count);
    return w.bytes();
}

std::vector<AmRun> all_runs(const Cut &c) {
    std::vector<AmRun> all;
    for (const auto &m : c.messages) all.insert(all.end(), m.begin(), m.end());
    return all;
}

}  // namespace

TEST_CASE("the comparison of pieces merges touching ones and sees any difference", "[run_cursor]") {
    const std::vector<oscf_run> vec{{0, 8, 8, 4}, {100, 0, 0, 9}};  // 32 touching bytes, an empty run
    CHECK(same_pieces(vec, std::vector<oscf_run>{{0, 32, 32, 1}}));
    CHECK(same_pieces(vec, std::vector<oscf_run>{{0, 0, 16, 1}, {16, 4, 4, 4}}));
    CHECK_FALSE(same_pieces(vec, std::vector<oscf_run>{{0, 33, 33, 1}}));
    CHECK_FALSE(same_pieces(vec, std::vector<oscf_run>{{1, 32, 32, 1}}));
    CHECK_FALSE(same_pieces(vec, std::vector<oscf_run>{{0, 8, 8, 3}}));
    CHECK_FALSE(same_pieces(vec, std::vector<oscf_run>{{0, 9, 8, 4}}));
    CHECK_FALSE(same_pieces(vec, std::vector<oscf_run>{}));
}

TEST_CASE("a vector's pieces fill messages whole and cover every byte once", "[run_cursor]") {
    const std::vector<oscf_run> runs{{0, 192, 64, 16384}};
    const size_t room = 16128;
    for (bool shares : {true, false}) {
        const Cut c = cut(runs, room, shares);
        size_t total = 0;
        for (size_t i = 0; i < c.messages.size(); ++i) {
            size_t data = 0;
            for (const AmRun &r : c.messages[i]) data += size_t{r.len} * r.count;
            CHECK(data == c.bytes[i]);
            const size_t desc = c.desc[i];
            CHECK(desc <= room);
            CHECK((shares ? desc + data : data) <= room);
            total += data;
        }
        CHECK(total == 64u * 16384);
        CHECK(same_pieces(all_runs(c), runs));
        // Few messages: each all but full.
        CHECK(c.messages.size() <= 64u * 16384 / (room - 3 * kRunBytesMax) + 1);
    }
}

TEST_CASE("a piece larger than a message is split across messages", "[run_cursor]") {
    const std::vector<oscf_run> runs{{100, 0, 1 << 20, 1}, {(1 << 20) + 200, 7, 3, 5}};
    const Cut c = cut(runs, 4096, true, 1000);
    std::vector<oscf_run> shifted = runs;
    for (auto &r : shifted) r.offset += 1000;
    CHECK(same_pieces(all_runs(c), shifted));
    for (size_t i = 0; i < c.messages.size(); ++i) {
        size_t data = 0;
        for (const AmRun &r : c.messages[i]) data += size_t{r.len} * r.count;
        CHECK(data + c.desc[i] <= 4096);
    }
}

TEST_CASE("negative strides, empty runs and descriptions that fill the room", "[run_cursor]") {
    std::vector<oscf_run> runs{{5000, -10, 4, 300}, {0, 0, 0, 9}, {7, 3, 1, 0}, {1, 2, 1, 2000}};
    for (int64_t i = 0; i < 40; ++i) runs.push_back(oscf_run{100000 + i * i * 37, 0, 3, 1});
    // A get: descriptions and bytes each have their own room; the smallest room that
    // takes any run (and its padding) makes the descriptions the limit.
    const size_t room = kRunBytesMax + oscf::kRunsAlign - 1;
    const Cut c = cut(runs, room, false);
    CHECK(same_pieces(all_runs(c), runs));
    CHECK(c.messages.size() > 2);
    for (size_t d : c.desc) CHECK(d <= room);
}

TEST_CASE("no runs, or only empty ones, is done at once", "[run_cursor]") {
    const std::vector<oscf_run> none{{0, 8, 0, 4}, {0, 8, 4, 0}};
    RunCursor c(none.data(), none.size(), 0);
    CHECK(c.done());
}

TEST_CASE("an element is never split between messages", "[run_cursor]") {
    // 12-byte pieces of 4-byte elements, a room no multiple of 12 or of 4 beyond the runs.
    const std::vector<oscf_run> runs{{0, 16, 12, 1000}, {100000, 0, 4000, 1}};
    RunCursor c(runs.data(), runs.size(), 0, 4);
    RunList sub;
    std::vector<AmRun> all;
    while (!c.done()) {
        const size_t data = c.next(sub, RunCursor::shared(1001));
        CHECK(data % 4 == 0);
        CHECK(data > 0);
        const size_t before = all.size();
        decode_into(sub, all);
        for (size_t i = before; i < all.size(); ++i) CHECK(all[i].len % 4 == 0);
    }
    CHECK(same_pieces(all, runs));
}

TEST_CASE("what messages take never exceeds shared_bound, nor a get chunk its rooms", "[run_cursor]") {
    // Layouts of every kind the cut meets: tiny irregular pieces (more runs than bytes),
    // long runs cut mid-run, pieces larger than a message, empty runs; elements of 1 to
    // 32 bytes; rooms from a few runs to a rendezvous chunk.
    uint64_t s = 0x9E3779B97F4A7C15ULL;
    auto next = [&s](uint64_t n) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s % n;
    };
    std::vector<AmRun> all;  // every message's runs; kept across trials for its capacity
    for (int trial = 0; trial < 300; ++trial) {
        const size_t unit = size_t{1} << next(6);
        const size_t room = trial % 3 == 0 ? 256 * 1024 : 8 * kRunBytesMax + 32 + next(4096);
        std::vector<oscf_run> runs;
        size_t bytes = 0;
        const size_t n = 1 + next(trial % 5 == 0 ? 20000 : 200);
        // Only tiny single pieces: a get's runs fill their room long before its bytes do.
        const bool tiny = trial % 7 == 0;
        for (size_t i = 0; i < n && tiny; ++i) {
            runs.push_back(oscf_run{static_cast<int64_t>(i * 3 * unit + next(unit)), 0, unit, 1});
            bytes += unit;
        }
        for (size_t i = 0; i < n && !tiny; ++i) {
            const size_t kind = next(4);
            const size_t len = unit * (kind == 0   ? 1 + next(3)
                                       : kind == 1 ? 1 + next(100)
                                                   : 1 + next(40000 / unit));
            const size_t count = kind == 3 ? 0 : 1 + next(kind == 2 ? 3 : 500);
            runs.push_back(oscf_run{static_cast<int64_t>(next(1 << 20)), static_cast<int64_t>(len + next(64)),
                                    len, count});
            bytes += len * count;
        }
        // As the engine does: the wire size without the delta, which moves only the first
        // run's gap.
        const uint64_t delta = trial % 2 ? 0 : next(uint64_t{1} << 62);
        RunCursor c(runs.data(), runs.size(), delta, unit);
        RunList sub;
        size_t taken = 0;
        all.clear();
        while (!c.done()) {
            const size_t data = c.next(sub, RunCursor::shared(room));
            decode_into(sub, all);
            taken += sub.pad() + data;
        }
        INFO("trial " << trial << ": " << n << " runs, " << bytes << " bytes, unit " << unit << ", room "
                      << room << ", delta " << delta);
        std::vector<oscf_run> shifted = runs;
        for (auto &r : shifted) r.offset += static_cast<int64_t>(delta);
        CHECK(same_pieces(all, shifted));
        const size_t bound = RunCursor::shared_bound(wire_of(runs) + kRunBytesMax, bytes, unit, room);
        CHECK(taken <= bound);
        // The staging it sizes stays close to what is used, at a rendezvous chunk's room.
        if (room == 256 * 1024) CHECK(bound - taken <= taken / 1000 + room);

        // A get's chunks: runs (in the request) and bytes (in the origin's buffer, which
        // holds the bytes only) each within their own room, and every byte in one chunk.
        const size_t desc_room = 8 * kRunBytesMax + 32 + next(12 * 1024);
        RunCursor g(runs.data(), runs.size(), delta, unit);
        size_t get_bytes = 0;
        all.clear();
        while (!g.done()) {
            const size_t data = g.next(sub, RunCursor::Room{desc_room, room, SIZE_MAX});
            decode_into(sub, all);
            if (sub.pad() > desc_room || data > room || data == 0)
                FAIL_CHECK("a get chunk of " << sub.pad() << " bytes of runs and " << data << " of data");
            get_bytes += data;
        }
        INFO("desc room " << desc_room);
        CHECK(same_pieces(all, shifted));
        CHECK(get_bytes == bytes);
    }
}

namespace {

// A source that hands out `runs` a few at a time (batch), then fails with `fail` if it is
// not OSCF_OK instead of ending.
struct Feed {
    const std::vector<oscf_run> *runs;
    size_t batch, at = 0;
    int fail = OSCF_OK;
    static long next(void *arg, oscf_run *out, size_t max) {
        auto *f = static_cast<Feed *>(arg);
        if (f->at == f->runs->size()) return f->fail;
        const size_t n = std::min({f->batch, max, f->runs->size() - f->at});
        std::copy(f->runs->begin() + static_cast<long>(f->at),
                  f->runs->begin() + static_cast<long>(f->at + n), out);
        f->at += n;
        return static_cast<long>(n);
    }
};

}  // namespace

TEST_CASE("runs from a source a batch at a time are cut as the same runs given at once", "[run_cursor]") {
    std::vector<oscf_run> runs;
    for (int64_t i = 0; i < 5000; ++i)  // empty runs at batch edges included
        runs.push_back(oscf_run{i * 1000, i % 3 ? 24 : 0, static_cast<size_t>(i % 7 == 0 ? 0 : 1 + i % 13),
                                static_cast<size_t>(1 + i % 5)});
    const size_t room = 16128;
    const Cut whole = cut(runs, room, true, 77);
    for (size_t batch : {size_t{1}, size_t{3}, size_t{1000}, size_t{5000}}) {
        Feed feed{&runs, batch};
        const oscf_run_source src{Feed::next, &feed, 0, 0, 0};
        RunCursor c(src, 77);
        std::vector<AmRun> all;
        RunList sub;
        size_t bytes = 0;
        while (!c.done()) {
            bytes += c.next(sub, RunCursor::shared(room));
            decode_into(sub, all);
            REQUIRE(all.size() < 100000);
        }
        CHECK(c.status() == OSCF_OK);
        CHECK(same_pieces(all, all_runs(whole)));
        size_t whole_bytes = 0;
        for (size_t b : whole.bytes) whole_bytes += b;
        CHECK(bytes == whole_bytes);
    }
}

TEST_CASE("a source's failure ends the runs and is kept", "[run_cursor]") {
    const std::vector<oscf_run> runs{{0, 8, 4, 10}, {100, 0, 4, 1}};
    Feed feed{&runs, 1, 0, OSCF_ERR_NO_MEM};
    const oscf_run_source src{Feed::next, &feed, 0, 0, 0};
    RunCursor c(src, 0);
    RunList sub;
    size_t bytes = 0;
    while (!c.done()) bytes += c.next(sub, RunCursor::shared(4096));
    CHECK(bytes == 44);  // what came before the failure
    CHECK(c.status() == OSCF_ERR_NO_MEM);
}
