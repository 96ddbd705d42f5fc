// The reductions the active-message path applies at the target, on their own: no
// fabric, just memory laid out the way a batch message or a user's window lays it.
#include "catch_compat.h"

#include <cmath>
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
    apply_reduction(OSCF_OP_MAXLOC, OSCF_TYPE_LONG_DOUBLE_INT, target_mem + shift, origin_mem + 8 - shift % 8,
                    3);
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

TEST_CASE("conditional swaps: the comperand against the target, values not bits", "[reductions]") {
    struct Row {
        oscf_swap swap;
        int32_t comperand, target;
        bool stores;
    };
    const Row rows[] = {
        {OSCF_SWAP_EQ, 5, 5, true},  {OSCF_SWAP_EQ, 5, 6, false}, {OSCF_SWAP_NE, 5, 6, true},
        {OSCF_SWAP_NE, 5, 5, false}, {OSCF_SWAP_LT, -3, 2, true}, {OSCF_SWAP_LT, 2, 2, false},
        {OSCF_SWAP_LE, 2, 2, true},  {OSCF_SWAP_LE, 3, 2, false}, {OSCF_SWAP_GT, 3, -2, true},
        {OSCF_SWAP_GT, 2, 2, false}, {OSCF_SWAP_GE, 2, 2, true},  {OSCF_SWAP_GE, -9, 2, false},
    };
    for (const Row &r : rows) {
        int32_t target = r.target, old = 0;
        const int32_t value = 77;
        apply_swap(r.swap, OSCF_TYPE_INT32, &target, &value, &r.comperand, &old, 1);
        CAPTURE(r.swap, r.comperand, r.target);
        CHECK(old == r.target);
        CHECK(target == (r.stores ? value : r.target));
    }
    // Unsigned: the largest value is not below zero.
    uint64_t big = ~uint64_t{0}, zero = 0, one = 1;
    apply_swap(OSCF_SWAP_LT, OSCF_TYPE_UINT64, &big, &one, &zero, nullptr, 1);
    CHECK(big == 1);
    // Floating point compares values: -0 equals 0, NaN equals nothing.
    double t = 0.0, neg_zero = -0.0, nan = std::nan(""), v = 1.5;
    apply_swap(OSCF_SWAP_EQ, OSCF_TYPE_DOUBLE, &t, &v, &neg_zero, nullptr, 1);
    CHECK(t == 1.5);
    apply_swap(OSCF_SWAP_EQ, OSCF_TYPE_DOUBLE, &t, &v, &nan, nullptr, 1);
    apply_swap(OSCF_SWAP_NE, OSCF_TYPE_DOUBLE, &t, &neg_zero, &nan, nullptr, 1);
    CHECK(t == 0.0);
    // A mask's set bits take the value's bits, the rest stay.
    uint16_t word = 0x00ff, mask = 0x0ff0, bits = 0xaaaa;
    apply_swap(OSCF_SWAP_MASK, OSCF_TYPE_UINT16, &word, &bits, &mask, nullptr, 1);
    CHECK(word == 0x0aaf);
}

TEST_CASE("which conditional swaps each type allows", "[reductions]") {
    CHECK(oscf_swap_allowed(OSCF_SWAP_LT, OSCF_TYPE_DOUBLE));
    CHECK(oscf_swap_allowed(OSCF_SWAP_EQ, OSCF_TYPE_BOOL));
    CHECK(oscf_swap_allowed(OSCF_SWAP_MASK, OSCF_TYPE_BYTE));
    CHECK_FALSE(oscf_swap_allowed(OSCF_SWAP_MASK, OSCF_TYPE_DOUBLE));
    CHECK_FALSE(oscf_swap_allowed(OSCF_SWAP_LT, OSCF_TYPE_BOOL));
    CHECK_FALSE(oscf_swap_allowed(OSCF_SWAP_LT, OSCF_TYPE_BYTE));
    CHECK_FALSE(oscf_swap_allowed(OSCF_SWAP_EQ, OSCF_TYPE_LONG_DOUBLE));
    CHECK_FALSE(oscf_swap_allowed(OSCF_SWAP_EQ, OSCF_TYPE_DOUBLE_COMPLEX));
    CHECK_FALSE(oscf_swap_allowed(OSCF_SWAP_GE, OSCF_TYPE_2INT));
    CHECK_FALSE(oscf_swap_allowed(OSCF_SWAP_COUNT, OSCF_TYPE_INT32));
}

// Fortran's MPI_2REAL and MPI_2DOUBLE_PRECISION: the index is a real too, compared as
// one on a tie.
TEST_CASE("MINLOC and MAXLOC on pairs of reals", "[reductions]") {
    float t[3][2] = {{1, 5}, {2, 5}, {3, 5}};
    const float o[3][2] = {{0.5f, 1}, {2, 1}, {9, 1}};
    REQUIRE(op_allowed(OSCF_OP_MAXLOC, OSCF_TYPE_2FLOAT));
    CHECK(type_size(OSCF_TYPE_2FLOAT) == sizeof t[0]);
    apply_reduction(OSCF_OP_MAXLOC, OSCF_TYPE_2FLOAT, t, o, 3);
    CHECK((t[0][0] == 1 && t[0][1] == 5));  // origin smaller: target kept
    CHECK((t[1][0] == 2 && t[1][1] == 1));  // tie: the smaller index wins
    CHECK((t[2][0] == 9 && t[2][1] == 1));  // origin larger: taken whole

    double d[2][2] = {{1, 7}, {-4, 7}};
    const double e[2][2] = {{0.25, 2}, {-4, 9}};
    REQUIRE(op_allowed(OSCF_OP_MINLOC, OSCF_TYPE_2DOUBLE));
    CHECK(type_size(OSCF_TYPE_2DOUBLE) == sizeof d[0]);
    apply_reduction(OSCF_OP_MINLOC, OSCF_TYPE_2DOUBLE, d, e, 2);
    CHECK((d[0][0] == 0.25 && d[0][1] == 2));  // origin smaller: taken
    CHECK((d[1][0] == -4 && d[1][1] == 7));    // tie: the target's smaller index stays
    CHECK_FALSE(op_allowed(OSCF_OP_SUM, OSCF_TYPE_2DOUBLE));
}
