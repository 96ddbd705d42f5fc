// The runs' wire form (run_codec.h): what the writer writes, the reader reads back, and
// the reader refuses what no writer wrote.
#include "catch_compat.h"

#include <cstdint>
#include <vector>

#include "../../osc_fabric/engine/run_codec.h"

using oscf::AmRun;
using oscf::kRunBytesMax;
using oscf::RunList;
using oscf::RunReader;

namespace {

bool same(const AmRun &a, const AmRun &b) {
    // A single piece has no stride: the reader gives it 0.
    return a.offset == b.offset && a.len == b.len && a.count == b.count &&
           (a.count == 1 || a.stride == b.stride);
}

std::vector<AmRun> read_all(const uint8_t *p, size_t len, bool *ok) {
    RunReader reader(p, len);
    std::vector<AmRun> out;
    AmRun r;
    while (reader.next(&r)) out.push_back(r);
    *ok = reader.ok();
    return out;
}

}  // namespace

TEST_CASE("runs of every shape come back as written, each within kRunBytesMax", "[run_codec]") {
    uint64_t s = 0x2545F4914F6CDD1DULL;
    auto next = [&s]() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    };
    for (int trial = 0; trial < 200; ++trial) {
        RunList list;
        std::vector<AmRun> runs;
        oscf::WireSize wire;
        for (int i = 0; i < 1 + trial * 5; ++i) {
            // Extremes as often as small values: offsets anywhere in 64 bits, negative and
            // huge strides, counts and lengths up to 32 bits.
            const int kind = static_cast<int>(next() % 4);
            AmRun r;
            r.offset = kind == 0 ? next() : (runs.empty() ? 0 : runs.back().offset) + next() % 256;
            r.len = static_cast<uint32_t>(kind == 1 ? 1 + next() % UINT32_MAX : 1 + next() % 100);
            r.count = static_cast<uint32_t>(kind == 2 ? 1 + next() % UINT32_MAX : 1 + next() % 3);
            r.stride = kind == 3 ? static_cast<int64_t>(next()) : static_cast<int64_t>(next() % 512) - 256;
            const size_t before = list.bytes(), wire_before = wire.bytes();
            list.add(r);
            wire.add(r.offset, r.stride, r.len, r.count);
            const size_t predicted = wire.bytes() - wire_before;  // run_codec::run_size
            CHECK(list.bytes() - before == predicted);
            CHECK(predicted <= kRunBytesMax);
            runs.push_back(r);
        }
        CHECK(wire.bytes() == list.bytes());
        bool ok = false;
        const std::vector<AmRun> back = read_all(list.data(), list.bytes(), &ok);
        CHECK(ok);
        REQUIRE(back.size() == runs.size());
        for (size_t i = 0; i < runs.size(); ++i) CHECK(same(back[i], runs[i]));
        CHECK(list.count() == runs.size());
    }
}

TEST_CASE("small pieces near each other take a few bytes a run", "[run_codec]") {
    // Pieces of 4 to 60 bytes with gaps under 60: what random layouts are made of.
    RunList list;
    uint64_t at = 1 << 20;
    for (uint32_t i = 0; i < 1000; ++i) {
        const uint32_t len = 4 + 4 * (i % 15);
        list.add(AmRun{at, 0, len, 1});
        at += len + (i % 60);
    }
    CHECK(list.bytes() <= 1000 * 2 + 4);  // the first gap is from 0
    // A vector of them is one run: its offset, shape, count and stride.
    RunList vector;
    vector.add(AmRun{4096, 192, 64, 16384});
    CHECK(vector.bytes() <= 10);
}

TEST_CASE("the reader refuses what no writer wrote", "[run_codec]") {
    RunList list;
    list.add(AmRun{1000, 24, 16, 300});
    list.add(AmRun{1 << 30, 0, 7, 1});
    bool ok = true;
    // Cut short anywhere: a malformed list, or one run fewer (each_piece checks the
    // count, AmHeader::count).
    for (size_t len = 1; len < list.bytes(); ++len) {
        const size_t runs = read_all(list.data(), len, &ok).size();
        CHECK((!ok || runs < 2));
    }
    read_all(list.data(), list.bytes(), &ok);
    CHECK(ok);

    // Padded for the data behind: zeros up to kRunsAlign, and nothing else.
    const uint32_t runs_written = list.count();
    const size_t unpadded = list.bytes();
    list.pad();
    CHECK(list.bytes() % oscf::kRunsAlign == 0);
    CHECK(list.bytes() - unpadded < oscf::kRunsAlign);
    {
        RunReader reader(list.data(), list.bytes());
        AmRun r;
        uint32_t seen = 0;
        while (seen < runs_written && reader.next(&r)) ++seen;
        CHECK(seen == runs_written);
        CHECK(reader.ok_padded());
    }
    std::vector<uint8_t> dirty(list.data(), list.data() + list.bytes());
    dirty.push_back(1);
    {
        RunReader reader(dirty.data(), dirty.size());
        AmRun r;
        for (uint32_t seen = 0; seen < runs_written; ++seen) reader.next(&r);
        CHECK_FALSE(reader.ok_padded());
    }

    // A varint that never ends.
    const std::vector<uint8_t> endless(12, 0xff);
    read_all(endless.data(), endless.size(), &ok);
    CHECK_FALSE(ok);
    // A count flag with a count below 2, and a length over 32 bits.
    const std::vector<uint8_t> count_one{0x00, 0x03, 0x01, 0x00};
    read_all(count_one.data(), count_one.size(), &ok);
    CHECK_FALSE(ok);
    const std::vector<uint8_t> long_len{0x00, 0x80, 0x80, 0x80, 0x80, 0x40};
    read_all(long_len.data(), long_len.size(), &ok);
    CHECK_FALSE(ok);
}
