// The reductions the active-message path applies at the target, on their own: no
// fabric, just memory laid out the way a batch message or a user's window lays it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

#include "../../osc_fabric/engine/atomic_types.h"

using namespace oscf;

namespace {
struct LongDoubleInt {
    long double value;
    int index;
};
}  // namespace

// A batch record's data is only 8-byte aligned, and an MPI user may put a pair at any
// displacement: vector loads of a misaligned long double pair used to fault here.
TEST_CASE("MAXLOC on long double pairs at every alignment", "[reductions]") {
    const size_t shift = GENERATE(0, 1, 4, 8, 12);
    alignas(64) unsigned char target_mem[3 * sizeof(LongDoubleInt) + 16];
    alignas(64) unsigned char origin_mem[3 * sizeof(LongDoubleInt) + 16];
    std::memset(target_mem, 0, sizeof target_mem);
    std::memset(origin_mem, 0, sizeof origin_mem);
    const LongDoubleInt t[3] = {{1.0L, 5}, {2.0L, 5}, {3.0L, 5}};
    const LongDoubleInt o[3] = {{0.5L, 1}, {2.0L, 1}, {9.0L, 1}};
    std::memcpy(target_mem + shift, t, sizeof t);
    std::memcpy(origin_mem + 8 - shift % 8, o, sizeof o);  // the other side, its own shift
    apply_reduction(OSCF_OP_MAXLOC, OSCF_TYPE_LONG_DOUBLE_INT, target_mem + shift,
                    origin_mem + 8 - shift % 8, 3);
    LongDoubleInt r[3];
    std::memcpy(r, target_mem + shift, sizeof r);
    CHECK(r[0].value == 1.0L);  // origin smaller: target kept
    CHECK(r[0].index == 5);
    CHECK(r[1].value == 2.0L);  // tie: the smaller index wins
    CHECK(r[1].index == 1);
    CHECK(r[2].value == 9.0L);  // origin larger: taken whole
    CHECK(r[2].index == 1);
}

TEST_CASE("SUM on misaligned integers, floats and complex numbers", "[reductions]") {
    alignas(16) unsigned char t[64] = {}, o[64] = {};
    const int64_t ti[2] = {40, -7}, oi[2] = {2, 7};
    std::memcpy(t + 3, ti, sizeof ti);
    std::memcpy(o + 5, oi, sizeof oi);
    apply_reduction(OSCF_OP_SUM, OSCF_TYPE_INT64, t + 3, o + 5, 2);
    int64_t ri[2];
    std::memcpy(ri, t + 3, sizeof ri);
    CHECK(ri[0] == 42);
    CHECK(ri[1] == 0);

    const long double tc[2] = {1.5L, -2.0L}, oc[2] = {0.5L, 4.0L};  // one complex
    std::memcpy(t + 1, tc, sizeof tc);
    std::memcpy(o + 9, oc, sizeof oc);
    apply_reduction(OSCF_OP_SUM, OSCF_TYPE_LONG_DOUBLE_COMPLEX, t + 1, o + 9, 1);
    long double rc[2];
    std::memcpy(rc, t + 1, sizeof rc);
    CHECK(rc[0] == 2.0L);
    CHECK(rc[1] == 2.0L);
}
