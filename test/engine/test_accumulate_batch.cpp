// What one target's batch of emulated accumulates holds (accumulate_batch.h): records
// in the order appended, each readable the way the target's apply_batch reads it, and
// never more than one message's payload.
#include "catch_compat.h"

#include <cstring>
#include <vector>

#include "../../osc_fabric/engine/accumulate_batch.h"
#include "osc_fabric/engine.h"

using namespace oscf;

namespace {
AmRecord record(uint64_t offset, uint32_t count) {
    AmRecord r{};
    r.offset = offset;
    r.count = count;
    r.type = OSCF_TYPE_INT32;
    r.op = OSCF_OP_SUM;
    return r;
}

// The records of b as the target walks them: header, data, padding to 8 bytes.
struct Read {
    AmRecord r;
    std::vector<uint8_t> data;
    bool zero_padding;
};
std::vector<Read> walk(const AccumulateBatch &b, size_t element) {
    std::vector<Read> out;
    size_t at = 0;
    for (uint32_t i = 0; i < b.records(); ++i) {
        Read x{};
        std::memcpy(&x.r, b.data() + at, sizeof x.r);
        const size_t bytes = x.r.count * element;
        const uint8_t *d = b.data() + at + sizeof x.r;
        x.data.assign(d, d + bytes);
        x.zero_padding = true;
        for (size_t k = sizeof x.r + bytes; k < am_record_bytes(bytes); ++k)
            if (b.data()[at + k] != 0) x.zero_padding = false;
        out.push_back(x);
        at += am_record_bytes(bytes);
    }
    REQUIRE(at == b.bytes());
    return out;
}
}  // namespace

TEST_CASE("a batch keeps its records in order, each with its data and zeroed padding", "[accumulate_batch]") {
    AccumulateBatch b;
    CHECK(b.empty());
    const int32_t one[] = {7};
    const int32_t three[] = {1, 2, 3};
    b.append(record(40, 1), one, sizeof one);
    b.append(record(8, 3), three, sizeof three);
    CHECK_FALSE(b.empty());
    CHECK(b.records() == 2);
    const auto got = walk(b, sizeof(int32_t));
    REQUIRE(got.size() == 2);
    CHECK(got[0].r.offset == 40);
    CHECK(got[0].r.count == 1);
    CHECK(std::memcmp(got[0].data.data(), one, sizeof one) == 0);
    CHECK(got[1].r.offset == 8);
    CHECK(std::memcmp(got[1].data.data(), three, sizeof three) == 0);
    CHECK(got[0].zero_padding);  // 4 data bytes, 4 of padding
    CHECK(got[1].zero_padding);
}

TEST_CASE("a batch never grows past one message's payload", "[accumulate_batch]") {
    AccumulateBatch b;
    const std::vector<uint8_t> data(1000, 0xab);
    size_t appended = 0;
    while (b.fits(data.size())) {
        b.append(record(appended * 1000, 1000), data.data(), data.size());
        ++appended;
    }
    CHECK(appended == kAmMaxPayload / am_record_bytes(1000));
    CHECK(b.bytes() <= kAmMaxPayload);
    CHECK(b.bytes() + am_record_bytes(1000) > kAmMaxPayload);
    // A smaller record may still fit where this one does not.
    CHECK(b.fits(kAmMaxPayload - b.bytes() - sizeof(AmRecord)));
}

TEST_CASE("one record of elements_per_record elements fills an empty batch", "[accumulate_batch]") {
    for (size_t size : {1, 4, 8, 16, 32}) {
        AccumulateBatch b;
        const size_t n = AccumulateBatch::elements_per_record(size);
        CHECK(b.fits(n * size));
        CHECK_FALSE(b.fits((n + 1) * size));
    }
}

TEST_CASE("a sent batch is empty and takes new records from the start", "[accumulate_batch]") {
    AccumulateBatch b;
    const int32_t v[] = {1, 2};
    b.append(record(0, 2), v, sizeof v);
    b.clear();
    CHECK(b.empty());
    CHECK(b.bytes() == 0);
    const int32_t w[] = {9};
    b.append(record(16, 1), w, sizeof w);
    const auto got = walk(b, sizeof(int32_t));
    REQUIRE(got.size() == 1);
    CHECK(got[0].r.offset == 16);
    CHECK(got[0].data[0] == 9);
}

TEST_CASE("a batch is listed for sending once until unlisted", "[accumulate_batch]") {
    AccumulateBatch b;
    CHECK(b.list());
    CHECK_FALSE(b.list());
    b.unlist();
    CHECK(b.list());
}
