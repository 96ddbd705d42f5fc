// copy_layout: the bytes of one layout moved straight into another; LayoutStream: one
// layout packed into a stream or unpacked from it; copy_pieces, the loop under both.
// Without a fabric.
#include "catch_compat.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "../../osc_fabric/engine/layout_copy.h"
#include "../../osc_fabric/engine/piece_copy.h"
#include "list_source.h"

using oscf::copy_layout;
using oscf::copy_pieces;
using oscf::LayoutStream;

namespace {

// Every byte offset of the runs' pieces, in order: the model both sides are held to.
std::vector<int64_t> offsets_of(const std::vector<oscf_run> &runs) {
    std::vector<int64_t> out;
    for (const oscf_run &r : runs)
        for (size_t j = 0; j < r.count; ++j)
            for (size_t b = 0; b < r.len; ++b)
                out.push_back(r.offset + r.stride * static_cast<int64_t>(j) + static_cast<int64_t>(b));
    return out;
}

// A random layout of `bytes` bytes whose pieces never overlap: runs of random piece
// sizes (sizes the copy treats specially among them), strides and directions, in
// disjoint regions visited in random order, with empty runs between. Offsets count from
// the middle of a buffer of `span` bytes.
std::vector<oscf_run> random_layout(std::mt19937 &rng, size_t bytes, size_t *span) {
    static const size_t kLens[] = {1, 3, 4, 8, 12, 16, 24, 32, 64, 100, 4096};
    std::vector<oscf_run> runs;
    size_t left = bytes;
    while (left > 0) {
        const size_t len = std::min(left, kLens[rng() % std::size(kLens)]);
        const size_t count = std::min(left / len, size_t{1} + rng() % 40);
        const size_t gap = rng() % 3 == 0 ? 0 : rng() % 32;
        runs.push_back(oscf_run{0, static_cast<int64_t>(len + gap), len, count});
        if (rng() % 4 == 0)  // no pieces, or pieces of no bytes
            runs.push_back(rng() % 2 ? oscf_run{0, 8, 0, 3} : oscf_run{0, 8, 5, 0});
        left -= len * count;
    }
    // Regions one after another, then handed to the runs in a shuffled order.
    std::vector<size_t> order(runs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    int64_t at = 0;
    for (size_t i : order) {
        oscf_run &r = runs[i];
        const int64_t extent =
            r.count ? r.stride * static_cast<int64_t>(r.count - 1) + static_cast<int64_t>(r.len) : 0;
        if (rng() % 3 == 0 && r.count > 1) {  // walked backwards
            r.offset = at + extent - static_cast<int64_t>(r.len);
            r.stride = -r.stride;
        } else {
            r.offset = at;
        }
        at += extent + 1;
    }
    for (oscf_run &r : runs) r.offset -= at / 2;
    *span = static_cast<size_t>(at);
    return runs;
}

}  // namespace

TEST_CASE("copy_layout moves every byte from one random layout into another, in order", "[layout_copy]") {
    std::mt19937 rng(GENERATE(range(1u, 41u)));
    const size_t bytes = 1 + rng() % 20000;
    size_t src_span = 0, dst_span = 0;
    ListSource src{random_layout(rng, bytes, &src_span), 1 + rng() % 7};
    ListSource dst{random_layout(rng, bytes, &dst_span), 1 + rng() % 7};

    std::vector<uint8_t> from(src_span), to(dst_span, 0xEE), want(dst_span, 0xEE);
    for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<uint8_t>(rng());
    const int64_t src_mid = static_cast<int64_t>(src_span / 2), dst_mid = static_cast<int64_t>(dst_span / 2);
    const std::vector<int64_t> s = offsets_of(src.runs), d = offsets_of(dst.runs);
    REQUIRE(s.size() == bytes);
    REQUIRE(d.size() == bytes);
    for (size_t i = 0; i < bytes; ++i)
        want[static_cast<size_t>(dst_mid + d[i])] = from[static_cast<size_t>(src_mid + s[i])];

    const oscf_run_source ss = src.source(), ds = dst.source();
    bool moved = false;
    REQUIRE(copy_layout(to.data() + dst_mid, ds, from.data() + src_mid, ss, &moved) == OSCF_OK);
    REQUIRE(moved);     // a few runs a batch: never judged fragmented
    CHECK(to == want);  // every byte in place, and nothing between the pieces touched
}

namespace {

// Every loop that moves pieces of len bytes: copy_pieces's choice for this CPU, and each
// fixed-size loop it could choose on another (the AVX2 ones where this CPU has it).
std::vector<std::function<void(uint8_t *, int64_t, const uint8_t *, int64_t, size_t)>> movers(size_t len) {
    std::vector<std::function<void(uint8_t *, int64_t, const uint8_t *, int64_t, size_t)>> out{
        [len](uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss, size_t k) {
            copy_pieces(d, ds, s, ss, len, k);
        },
        [len](uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss, size_t k) {
            oscf::copy_pieces_uncached(d, ds, s, ss, len, k);
        }};
    switch (len) {
    case 4: out.emplace_back(oscf::copy_fixed<4>); break;
    case 8: out.emplace_back(oscf::copy_fixed<8>); break;
    case 16: out.emplace_back(oscf::copy_fixed<16>); break;
    case 32: out.emplace_back(oscf::copy_fixed<32>); break;
    }
#ifdef OSCF_PIECE_COPY_X86
    if (oscf::have_avx2()) {
        if (len == 32) out.emplace_back(oscf::copy_fixed_avx2<32>);
        if (len == 64) out.emplace_back(oscf::copy_fixed_avx2<64>);
        if (len == 128) out.emplace_back(oscf::copy_fixed_avx2<128>);
    }
#endif
    return out;
}

}  // namespace

TEST_CASE("copy_pieces moves each piece whole, with every loop it has", "[layout_copy]") {
    // The sizes with their own loops, a size beside each, and both stride signs; the
    // pieces start off any alignment.
    const size_t len = GENERATE(1, 3, 4, 8, 12, 16, 31, 32, 48, 64, 65, 128, 200);
    const int64_t sign = GENERATE(1, -1);
    const size_t count = 37, skew = 5;
    const int64_t ss = sign * static_cast<int64_t>(2 * len + 1),
                  ds = sign * static_cast<int64_t>(3 * len + 2);
    std::vector<uint8_t> from(skew + (2 * len + 1) * count);
    for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<uint8_t>(i * 11 + 3);
    std::vector<uint8_t> want(skew + (3 * len + 2) * count, 0);
    const size_t s0 = sign > 0 ? skew : from.size() - 2 * len - 1,
                 d0 = sign > 0 ? skew : want.size() - 3 * len - 2;
    for (size_t j = 0; j < count; ++j)
        std::copy_n(from.begin() + static_cast<long>(s0) + ss * static_cast<long>(j), len,
                    want.begin() + static_cast<long>(d0) + ds * static_cast<long>(j));
    for (const auto &move : movers(len)) {
        std::vector<uint8_t> to(want.size(), 0);
        move(to.data() + d0, ds, from.data() + s0, ss, count);
        CHECK(to == want);  // every piece in place, the gaps untouched

        // A piece moved onto itself shifted by a few bytes (a put to ourselves whose
        // buffers overlap): a move, as memmove's.
        std::vector<uint8_t> mem(len + 16), moved;
        for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<uint8_t>(i * 7 + 1);
        moved = mem;
        std::memmove(moved.data() + 3, moved.data(), len);
        move(mem.data() + 3, 0, mem.data(), 0, 1);
        CHECK(mem == moved);
        moved = mem;
        std::memmove(moved.data(), moved.data() + 5, len);
        move(mem.data(), 0, mem.data() + 5, 0, 1);
        CHECK(mem == moved);
    }
}

// A buffer of n bytes whose data() is on a 64-byte line, filled with `fill`.
struct LineBuffer {
    std::vector<uint8_t> mem;
    uint8_t *data;
    LineBuffer(size_t n, uint8_t fill) : mem(n + 64, fill) {
        data = mem.data() + (-reinterpret_cast<uintptr_t>(mem.data()) & 63);
    }
};

TEST_CASE("copy_pieces_uncached streams pieces of whole lines and copies the others", "[layout_copy]") {
    const size_t len = GENERATE(64, 128, 192, 4096);
    const int64_t sign = GENERATE(1, -1);
    const size_t count = 41;
    // The destination on lines with a line-multiple stride; the source off any alignment.
    const int64_t ds = sign * static_cast<int64_t>(len + 64), ss = sign * static_cast<int64_t>(2 * len + 5);
    const size_t dspan = (len + 64) * count, sspan = (2 * len + 5) * count;
    LineBuffer from(sspan, 0), want(dspan, 0xee);
    for (size_t i = 0; i < sspan; ++i) from.data[i] = static_cast<uint8_t>(i * 13 + 7);
    const size_t s0 = sign > 0 ? 0 : sspan - 2 * len - 5, d0 = sign > 0 ? 0 : dspan - len - 64;
    for (size_t j = 0; j < count; ++j)
        std::memcpy(want.data + d0 + ds * static_cast<int64_t>(j),
                    from.data + s0 + ss * static_cast<int64_t>(j), len);

    SECTION("whole lines: streamed where the CPU can") {
        LineBuffer to(dspan, 0xee);
#ifdef OSCF_PIECE_COPY_X86
        CHECK(oscf::streams_lines(to.data + d0, ds, from.data + s0, ss, len, count) == oscf::have_avx2());
#endif
        oscf::copy_pieces_uncached(to.data + d0, ds, from.data + s0, ss, len, count);
        CHECK(std::memcmp(to.data, want.data, dspan) == 0);  // every piece, and the gaps untouched
    }
    SECTION("a destination off its line, or pieces not whole lines: ordinary stores") {
        CHECK_FALSE(oscf::streams_lines(want.data + d0 + 8, ds, from.data + s0, ss, len, count));
        CHECK_FALSE(oscf::streams_lines(want.data + d0, ds + sign * 8, from.data + s0, ss, len, count));
        CHECK_FALSE(oscf::streams_lines(want.data + d0, ds, from.data + s0, ss, len - 8, count));
        LineBuffer to(dspan + 8, 0xee);
        LineBuffer shifted(dspan + 8, 0xee);
        std::memcpy(shifted.data + 8, want.data, dspan);
        oscf::copy_pieces_uncached(to.data + 8 + d0, ds, from.data + s0, ss, len, count);
        CHECK(std::memcmp(to.data, shifted.data, dspan + 8) == 0);
    }
    SECTION("pieces that share bytes with the source: moved, as copy_pieces does") {
        // The source is the destination's own pieces a line on or a line back: each
        // moves by a line, the copy running into bytes it has yet to read.
        const int64_t shift = GENERATE(64, -64);
        LineBuffer mem(dspan + 128, 0);
        uint8_t *base = mem.data + 64;
        for (size_t i = 0; i < dspan + 128; ++i) mem.data[i] = static_cast<uint8_t>(i * 5 + 1);
        std::vector<uint8_t> expect(mem.data, mem.data + dspan + 128);
        for (size_t j = 0; j < count; ++j) {
            const int64_t at = 64 + static_cast<int64_t>(d0) + ds * static_cast<int64_t>(j);
            std::memmove(expect.data() + at, expect.data() + at + shift, len);
        }
        CHECK_FALSE(oscf::streams_lines(base + d0, ds, base + d0 + shift, ds, len, count));
        oscf::copy_pieces_uncached(base + d0, ds, base + d0 + shift, ds, len, count);
        CHECK(std::memcmp(mem.data, expect.data(), dspan + 128) == 0);
    }
}

TEST_CASE("move_block moves a block past the cache at any alignment, as memmove", "[layout_copy]") {
    // Past OSCF_UNCACHED_COPY_BYTES the whole lines go round the cache and the partial
    // ones at either end take ordinary stores; overlapping blocks are moved as memmove.
    const size_t n = OSCF_UNCACHED_COPY_BYTES + GENERATE(size_t{0}, 63);
    const size_t d_off = GENERATE(0, 33);
    const int64_t shift = GENERATE(int64_t{1} << 22, 64, -64, -5);  // far apart, or overlapping
    LineBuffer mem(2 * n + 8192, 0);
    for (size_t i = 0; i < 2 * n + 8192; ++i) mem.data[i] = static_cast<uint8_t>(i * 13 + i / 4099);
    std::vector<uint8_t> want(mem.data, mem.data + 2 * n + 8192);
    const size_t d = 4096 + d_off, s = static_cast<size_t>(static_cast<int64_t>(d) + shift);
    std::memmove(want.data() + d, want.data() + s, n);
    oscf::move_block(mem.data + d, mem.data + s, n);
    CHECK(std::memcmp(mem.data, want.data(), 2 * n + 8192) == 0);
}

TEST_CASE("copy_layout of more bytes than the cache holds, pieces of whole lines", "[layout_copy]") {
    // Past copy_layout's threshold the pieces are streamed round the cache: every byte
    // still lands in order, and the gaps keep theirs.
    const size_t len = GENERATE(64, 256);
    const size_t count = (size_t{5} << 20) / len;
    ListSource src{{oscf_run{0, static_cast<int64_t>(2 * len), len, count}}};
    ListSource dst{{oscf_run{0, static_cast<int64_t>(3 * len), len, count}}};
    LineBuffer from(2 * len * count, 0), to(3 * len * count, 0x5a), want(3 * len * count, 0x5a);
    for (size_t i = 0; i < 2 * len * count; ++i) from.data[i] = static_cast<uint8_t>(i * 7 + i / 4099);
    for (size_t j = 0; j < count; ++j) std::memcpy(want.data + 3 * len * j, from.data + 2 * len * j, len);
    const oscf_run_source ss = src.source(), ds = dst.source();
    bool moved = false;
    REQUIRE(copy_layout(to.data, ds, from.data, ss, &moved) == OSCF_OK);
    REQUIRE(moved);
    CHECK(std::memcmp(to.data, want.data, 3 * len * count) == 0);
}

TEST_CASE("copy_layout of two vectors with pieces of one size", "[layout_copy]") {
    const size_t len = GENERATE(1, 4, 8, 16, 32, 64, 128, 1000);
    const size_t count = 257;
    ListSource src{{oscf_run{0, static_cast<int64_t>(2 * len), len, count}}};
    ListSource dst{
        {oscf_run{static_cast<int64_t>(3 * len * (count - 1)), -static_cast<int64_t>(3 * len), len, count}}};
    std::vector<uint8_t> from(2 * len * count), to(3 * len * count, 0), want(to);
    for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<uint8_t>(i * 7 + 1);
    for (size_t j = 0; j < count; ++j)
        std::copy_n(from.begin() + static_cast<long>(2 * len * j), len,
                    want.begin() + static_cast<long>(3 * len * (count - 1 - j)));
    const oscf_run_source ss = src.source(), ds = dst.source();
    bool moved = false;
    REQUIRE(copy_layout(to.data(), ds, from.data(), ss, &moved) == OSCF_OK);
    REQUIRE(moved);  // one run a side
    CHECK(to == want);
}

TEST_CASE("copy_layout leaves layouts of many tiny runs to the packer", "[layout_copy]") {
    // 1000 pieces of 4 bytes, each its own run (an indexed type of single ints), against
    // the same bytes as one vector, in either direction.
    ListSource tiny, vector{{oscf_run{0, 8, 4, 1000}}};
    for (int64_t j = 0; j < 1000; ++j) tiny.runs.push_back(oscf_run{(j * 7919) % 1000 * 8, 0, 4, 1});
    std::vector<uint8_t> from(8000, 1), to(8000, 0);
    const bool tiny_is_target = GENERATE(true, false);
    const oscf_run_source ts = tiny.source(), vs = vector.source();
    bool moved = true;
    CHECK(copy_layout(to.data(), tiny_is_target ? ts : vs, from.data(), tiny_is_target ? vs : ts, &moved) ==
          OSCF_OK);
    CHECK_FALSE(moved);
    CHECK(std::count(to.begin(), to.end(), 0) == 8000);  // nothing copied: the caller packs instead
}

TEST_CASE("copy_layout refuses layouts of different sizes and reports a source's failure", "[layout_copy]") {
    std::vector<uint8_t> from(256, 1), to(256, 0);
    bool moved = false;
    SECTION("different totals") {
        ListSource src{{oscf_run{0, 8, 8, 4}}}, dst{{oscf_run{0, 8, 8, 3}}};
        const oscf_run_source ss = src.source(), ds = dst.source();
        CHECK(copy_layout(to.data(), ds, from.data(), ss, &moved) == OSCF_ERR_ARG);
        CHECK(std::count(to.begin(), to.end(), 0) == 256);  // refused before any byte moved
    }
    SECTION("a source that says more bytes than its runs hold") {
        ListSource src{{oscf_run{0, 8, 8, 4}}}, dst{{oscf_run{0, 8, 8, 3}}};
        const oscf_run_source ss = src.source();
        oscf_run_source ds = dst.source();
        ds.bytes = ss.bytes;
        CHECK(copy_layout(to.data(), ds, from.data(), ss, &moved) == OSCF_ERR_ARG);
    }
    SECTION("a walk that fails part way") {
        ListSource src{{oscf_run{0, 8, 8, 4}, oscf_run{64, 8, 8, 4}}, 1};
        src.fail = OSCF_ERR_NO_MEM;
        src.fail_after = 1;
        ListSource dst{{oscf_run{0, 8, 8, 8}}};
        const oscf_run_source ss = src.source(), ds = dst.source();
        CHECK(copy_layout(to.data(), ds, from.data(), ss, &moved) == OSCF_ERR_NO_MEM);
    }
}

TEST_CASE("LayoutStream packs a random layout in order and unpacks it back, in any cuts", "[layout_copy]") {
    std::mt19937 rng(GENERATE(range(1u, 41u)));
    const size_t bytes = 1 + rng() % 20000;
    size_t span = 0;
    ListSource runs{random_layout(rng, bytes, &span), 1 + rng() % 7};
    std::vector<uint8_t> mem(span);
    for (uint8_t &b : mem) b = static_cast<uint8_t>(rng());
    const int64_t mid = static_cast<int64_t>(span / 2);
    const std::vector<int64_t> at = offsets_of(runs.runs);
    REQUIRE(at.size() == bytes);
    std::vector<uint8_t> want(bytes);
    for (size_t i = 0; i < bytes; ++i) want[i] = mem[static_cast<size_t>(mid + at[i])];
    // Cuts anywhere: inside a piece, across runs, one byte, many pieces.
    auto cuts = [&] {
        std::vector<size_t> out;
        for (size_t done = 0; done < bytes;) {
            const size_t n = std::min(bytes - done, rng() % 3 == 0 ? 1 + rng() % 7 : 1 + rng() % 3000);
            out.push_back(n);
            done += n;
        }
        return out;
    };

    const oscf_run_source src = runs.source();
    std::vector<uint8_t> packed(bytes, 0);
    {
        LayoutStream stream(mem.data() + mid, src);
        REQUIRE_FALSE(stream.fragmented());
        size_t done = 0;
        for (size_t n : cuts()) {
            REQUIRE(stream.pack(packed.data() + done, n) == OSCF_OK);
            done += n;
        }
        CHECK(stream.pack(packed.data(), 1) == OSCF_ERR_ARG);  // nothing left to pack
    }
    CHECK(packed == want);

    // Unpacked into a fresh buffer: the pieces get the stream, the gaps stay.
    std::vector<uint8_t> back(span, 0xEE), want_back(span, 0xEE);
    for (size_t i = 0; i < bytes; ++i) want_back[static_cast<size_t>(mid + at[i])] = want[i];
    runs.at = 0;
    const oscf_run_source again = runs.source();
    LayoutStream stream(back.data() + mid, again);
    size_t done = 0;
    for (size_t n : cuts()) {
        REQUIRE(stream.unpack(packed.data() + done, n) == OSCF_OK);
        done += n;
    }
    CHECK(back == want_back);
}

TEST_CASE("LayoutStream of a vector at each piece size", "[layout_copy]") {
    const size_t len = GENERATE(1, 4, 8, 16, 32, 64, 128, 1000);
    const size_t count = 300;
    ListSource runs{
        {oscf_run{static_cast<int64_t>(3 * len * (count - 1)), -static_cast<int64_t>(3 * len), len, count}}};
    std::vector<uint8_t> mem(3 * len * count);
    for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<uint8_t>(i * 13 + 5);
    std::vector<uint8_t> want;
    for (size_t j = 0; j < count; ++j) {
        const auto *piece = mem.data() + 3 * len * (count - 1 - j);
        want.insert(want.end(), piece, piece + len);
    }
    const oscf_run_source src = runs.source();
    LayoutStream stream(mem.data(), src);
    std::vector<uint8_t> packed(len * count);
    // Two cuts: one ends inside a piece unless pieces are a byte.
    const size_t first = len * count / 3 + (len > 1 ? 1 : 0);
    REQUIRE(stream.pack(packed.data(), first) == OSCF_OK);
    REQUIRE(stream.pack(packed.data() + first, packed.size() - first) == OSCF_OK);
    CHECK(packed == want);
}

TEST_CASE("LayoutStream says a layout of many tiny runs is fragmented and passes on a walk's failure",
          "[layout_copy]") {
    ListSource tiny;
    for (int64_t j = 0; j < 1000; ++j) tiny.runs.push_back(oscf_run{j * 8, 0, 4, 1});
    std::vector<uint8_t> mem(8000, 1), out(8000);
    const oscf_run_source ts = tiny.source();
    CHECK(LayoutStream(mem.data(), ts).fragmented());

    ListSource failing{{oscf_run{0, 8, 8, 4}, oscf_run{64, 8, 8, 4}}, 1};
    failing.fail = OSCF_ERR_NO_MEM;
    failing.fail_after = 1;
    const oscf_run_source fs = failing.source();
    LayoutStream stream(mem.data(), fs);
    CHECK_FALSE(stream.fragmented());
    CHECK(stream.pack(out.data(), 64) == OSCF_ERR_NO_MEM);  // the second run never came
}
