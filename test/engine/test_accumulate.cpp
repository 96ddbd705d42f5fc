#include <complex>
#include <cstring>

#include <rdma/fi_atomic.h>

#include "../../osc_fabric/engine/am.h"
#include "../../osc_fabric/engine/engine_instance.h"
#include "../../osc_fabric/engine/window_blob.h"
#include "two_ranks.h"

namespace {
// Native only where the provider itself, asked directly, does every reduction MPI allows
// on 64-bit integers, in both forms: otherwise a SUM on the NIC and a PROD in our
// software could meet on one element. shm's native atomics are never used
// (provider_contract.cpp); tcp;ofi_rxm has them all; cxi has no PROD.
oscf_acc_path expected_path(const AccSetup &s, fid_ep *ep) {
    if (s.path == OSCF_ACC_AM || s.provider == "shm") return OSCF_PATH_AM;
    const fi_op ops[] = {FI_MIN, FI_MAX,  FI_SUM,  FI_PROD, FI_LOR,         FI_LAND,
                         FI_BOR, FI_BAND, FI_LXOR, FI_BXOR, FI_ATOMIC_WRITE};
    size_t n = 0;
    for (fi_op op : ops)
        if (fi_atomicvalid(ep, FI_INT64, op, &n) || fi_fetch_atomicvalid(ep, FI_INT64, op, &n))
            return OSCF_PATH_AM;
    return OSCF_PATH_NATIVE;
}
}  // namespace

TEST_CASE("the path table: integers native on tcp, long double and pairs always emulated",
          "[accumulate][caps]") {
    AccSetup s = acc_test_setup();
    size_t sizes[2] = {64, 64};
    TwoRanks t(s.provider, OSCF_FLAVOR_ALLOCATE, sizes, 1, s.path);
    CHECK(oscf_engine_accumulate_path(t.eng[0], OSCF_TYPE_INT64) == expected_path(s, t.eng[0]->fabric->ep()));
    CHECK(oscf_engine_accumulate_path(t.eng[0], OSCF_TYPE_LONG_DOUBLE) == OSCF_PATH_AM);
    CHECK(oscf_engine_accumulate_path(t.eng[0], OSCF_TYPE_DOUBLE_COMPLEX) == OSCF_PATH_AM);
    CHECK(oscf_engine_accumulate_path(t.eng[0], OSCF_TYPE_2INT) == OSCF_PATH_AM);
}

TEST_CASE("auto sends accumulates as active messages where the provider's atomics are software",
          "[accumulate][caps]") {
    // shm, tcp;ofi_rxm: both apply atomics in the target's progress, as we would.
    std::string prov = test_provider();
    size_t sizes[2] = {64, 64};
    TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes, 1, OSCF_ACC_AUTO);
    CHECK(oscf_engine_accumulate_path(t.eng[0], OSCF_TYPE_INT64) == OSCF_PATH_AM);
    CHECK(oscf_engine_accumulate_path(t.eng[0], OSCF_TYPE_DOUBLE) == OSCF_PATH_AM);
}

TEST_CASE("accumulate and get_accumulate add into the target and fetch the old values", "[accumulate]") {
    AccSetup s = acc_test_setup();
    size_t sizes[2] = {64, 64};
    TwoRanks t(s.provider, OSCF_FLAVOR_ALLOCATE, sizes, 1, s.path);
    std::memset(t.mem(1), 0, 64);
    int64_t inc[3] = {1, 2, 3};
    REQUIRE(oscf_win_lock_all(t.win[0], 0) == OSCF_OK);
    for (int i = 0; i < 5; ++i)
        REQUIRE(oscf_win_accumulate(t.win[0], 1, inc, nullptr, 3, OSCF_TYPE_INT64, OSCF_OP_SUM, 0, 8,
                                    nullptr) == OSCF_OK);
    int64_t old[3] = {-1, -1, -1};
    REQUIRE(oscf_win_accumulate(t.win[0], 1, inc, old, 3, OSCF_TYPE_INT64, OSCF_OP_SUM, 8, 0, nullptr) ==
            OSCF_OK);
    REQUIRE(oscf_win_unlock_all(t.win[0]) == OSCF_OK);
    const int64_t *m = reinterpret_cast<const int64_t *>(t.mem(1) + 8);
    CHECK(old[0] == 5);
    CHECK(old[1] == 10);
    CHECK(old[2] == 15);
    CHECK(m[0] == 6);
    CHECK(m[1] == 12);
    CHECK(m[2] == 18);
    oscf_win_stats st = t.stats(0);
    if (expected_path(s, t.eng[0]->fabric->ep()) == OSCF_PATH_NATIVE) {
        CHECK(st.native_atomics == 6);
        CHECK(st.am_requests == 0);
    } else {
        CHECK(st.native_atomics == 0);
        CHECK(st.am_requests == 6);
        // The five plain ones left as one batch, sent ahead of the fetching one.
        CHECK(st.am_batches == 1);
    }
}

TEST_CASE("types no provider has natively are emulated exactly", "[accumulate][am]") {
    AccSetup s = acc_test_setup();
    size_t sizes[2] = {256, 256};
    TwoRanks t(s.provider, OSCF_FLAVOR_ALLOCATE, sizes, 1, s.path);
    auto *ld = reinterpret_cast<long double *>(t.mem(1));
    auto *dc = reinterpret_cast<std::complex<double> *>(t.mem(1) + 64);
    struct DoubleInt {
        double v;
        int i;
    };
    auto *pairs = reinterpret_cast<DoubleInt *>(t.mem(1) + 128);
    ld[0] = 1.0L;
    dc[0] = {1, 1};
    pairs[0] = {5.0, 3};
    pairs[1] = {5.0, 3};
    // The padding of long double and DoubleInt travels too, so it is zeroed and only the
    // value bytes are written after: a whole-object store would let the optimizer drop
    // the memset (it did under LTO) and valgrind then sees uninitialised bytes sent.
    alignas(long double) unsigned char three[sizeof(long double)] = {};
    const long double three_value = 3.0L;
    std::memcpy(three, &three_value, 10);  // x87 extended: 10 value bytes
    std::complex<double> i2{0, 2};
    DoubleInt cand[2];
    std::memset(cand, 0, sizeof cand);
    cand[0].v = 5.0;  // tie with smaller index
    cand[0].i = 1;
    cand[1].v = 4.0;  // smaller value
    cand[1].i = 9;
    std::complex<double> old_dc;
    REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
    REQUIRE(oscf_win_accumulate(t.win[0], 1, three, nullptr, 1, OSCF_TYPE_LONG_DOUBLE, OSCF_OP_PROD, 0, 0,
                                nullptr) == OSCF_OK);
    REQUIRE(oscf_win_accumulate(t.win[0], 1, &i2, &old_dc, 1, OSCF_TYPE_DOUBLE_COMPLEX, OSCF_OP_PROD, 64, 0,
                                nullptr) == OSCF_OK);
    REQUIRE(oscf_win_accumulate(t.win[0], 1, cand, nullptr, 2, OSCF_TYPE_DOUBLE_INT, OSCF_OP_MINLOC, 128, 0,
                                nullptr) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    CHECK(ld[0] == 3.0L);
    CHECK(old_dc == std::complex<double>(1, 1));
    CHECK(dc[0] == std::complex<double>(-2, 2));
    CHECK(pairs[0].v == 5.0);
    CHECK(pairs[0].i == 1);
    CHECK(pairs[1].v == 4.0);
    CHECK(pairs[1].i == 9);
    CHECK(t.stats(0).am_requests == 3);
}

TEST_CASE("compare_and_swap swaps only on a match and returns the old value", "[accumulate][cas]") {
    AccSetup s = acc_test_setup();
    size_t sizes[2] = {64, 64};
    TwoRanks t(s.provider, OSCF_FLAVOR_ALLOCATE, sizes, 8, s.path);
    auto *m = reinterpret_cast<uint32_t *>(t.mem(1) + 16);
    m[0] = 7;
    uint32_t v = 9, wrong = 1, right = 7, old = 0, old2 = 0;
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    REQUIRE(oscf_win_compare_and_swap(t.win[0], 1, &v, &wrong, &old, OSCF_TYPE_UINT32, 2, 0) == OSCF_OK);
    REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
    CHECK(old == 7);
    CHECK(m[0] == 7);
    REQUIRE(oscf_win_compare_and_swap(t.win[0], 1, &v, &right, &old2, OSCF_TYPE_UINT32, 2, 0) == OSCF_OK);
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    CHECK(old2 == 7);
    CHECK(m[0] == 9);
    double d = 1;
    CHECK(oscf_win_compare_and_swap(t.win[0], 1, &d, &d, &d, OSCF_TYPE_DOUBLE, 0, 0) == OSCF_ERR_TYPE);
}

TEST_CASE("accumulate misuse gets the standard's error classes", "[accumulate][errors]") {
    AccSetup s = acc_test_setup();
    size_t sizes[2] = {64, 64};
    TwoRanks t(s.provider, OSCF_FLAVOR_ALLOCATE, sizes, 1, s.path);
    std::memset(t.mem(1), 0, 64);
    int64_t v = 1;
    CHECK(oscf_win_accumulate(t.win[0], 1, &v, nullptr, 1, OSCF_TYPE_INT64, OSCF_OP_SUM, 0, 0, nullptr) ==
          OSCF_ERR_RMA_SYNC);
    REQUIRE(oscf_win_lock_all(t.win[0], 0) == OSCF_OK);
    CHECK(oscf_win_accumulate(t.win[0], 1, &v, nullptr, 1, OSCF_TYPE_INT64, OSCF_OP_SUM, 57, 0, nullptr) ==
          OSCF_ERR_RMA_RANGE);
    CHECK(oscf_win_accumulate(t.win[0], 1, &v, nullptr, 1, OSCF_TYPE_BOOL, OSCF_OP_SUM, 0, 0, nullptr) ==
          OSCF_ERR_OP);
    CHECK(oscf_win_accumulate(t.win[0], 1, &v, nullptr, 1, OSCF_TYPE_DOUBLE, OSCF_OP_BAND, 0, 0, nullptr) ==
          OSCF_ERR_OP);
    CHECK(oscf_win_accumulate(t.win[0], 1, &v, nullptr, 1, OSCF_TYPE_INT64, OSCF_OP_MINLOC, 0, 0, nullptr) ==
          OSCF_ERR_OP);
    CHECK(oscf_win_accumulate(t.win[0], 1, &v, nullptr, 1, OSCF_TYPE_INT64, OSCF_OP_SUM, 56, 0, nullptr) ==
          OSCF_OK);
    REQUIRE(oscf_win_unlock_all(t.win[0]) == OSCF_OK);
    // Only the valid accumulate landed.
    CHECK(*reinterpret_cast<int64_t *>(t.mem(1) + 56) == 1);
}

TEST_CASE("default ordering: a read between two replaces sees the first; none lets them overlap",
          "[accumulate][ordering]") {
    AccSetup s = acc_test_setup();
    const unsigned ordering = GENERATE(unsigned{OSCF_ORDER_DEFAULT}, 0u);
    size_t sizes[2] = {64, 64};
    TwoRanks t(s.provider, OSCF_FLAVOR_ALLOCATE, sizes, 1, s.path, ordering);
    REQUIRE(oscf_win_lock(t.win[0], 1, 0, 0) == OSCF_OK);
    for (int64_t i = 1; i <= 50; ++i) {
        int64_t v1 = i, v2 = -i, seen = 0;
        REQUIRE(oscf_win_accumulate(t.win[0], 1, &v1, nullptr, 1, OSCF_TYPE_INT64, OSCF_OP_REPLACE, 0, 0,
                                    nullptr) == OSCF_OK);
        REQUIRE(oscf_win_accumulate(t.win[0], 1, nullptr, &seen, 1, OSCF_TYPE_INT64, OSCF_OP_NO_OP, 0, 0,
                                    nullptr) == OSCF_OK);
        REQUIRE(oscf_win_accumulate(t.win[0], 1, &v2, nullptr, 1, OSCF_TYPE_INT64, OSCF_OP_REPLACE, 0, 0,
                                    nullptr) == OSCF_OK);
        REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
        if (ordering) {
            CHECK(seen == i);
            CHECK(*reinterpret_cast<int64_t *>(t.mem(1)) == -i);
        }
    }
    REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
    // With "none" nothing waits; with the default, only paths the provider does not
    // order wait (tcp's native atomics do not promise WAR).
    if (!ordering) CHECK(t.stats(0).ordering_waits == 0);
}

TEST_CASE("accumulate_ordering values parse as the standard spells them", "[info]") {
    unsigned bits = 99;
    CHECK(oscf_parse_accumulate_ordering("none", &bits) == OSCF_OK);
    CHECK(bits == 0);
    CHECK(oscf_parse_accumulate_ordering("rar,raw,war,waw", &bits) == OSCF_OK);
    CHECK(bits == OSCF_ORDER_DEFAULT);
    CHECK(oscf_parse_accumulate_ordering(" waw , rar ", &bits) == OSCF_OK);
    CHECK(bits == (OSCF_ORDER_WAW | OSCF_ORDER_RAR));
    CHECK(oscf_parse_accumulate_ordering("rar,,waw", &bits) == OSCF_ERR_INFO);
    CHECK(oscf_parse_accumulate_ordering("RAR", &bits) == OSCF_ERR_INFO);
    CHECK(oscf_parse_accumulate_ordering("none,rar", &bits) == OSCF_ERR_INFO);
    CHECK(oscf_parse_accumulate_ordering("", &bits) == OSCF_ERR_INFO);
    char buf[32];
    oscf_format_accumulate_ordering(OSCF_ORDER_RAW | OSCF_ORDER_WAR, buf, sizeof buf);
    CHECK(std::string(buf) == "raw,war");
    oscf_format_accumulate_ordering(0, buf, sizeof buf);
    CHECK(std::string(buf) == "none");
}

TEST_CASE("mpi_accumulate_granularity is a count of bytes", "[info]") {
    unsigned n = 99;
    CHECK(oscf_parse_accumulate_granularity("0", &n) == OSCF_OK);
    CHECK(n == 0);
    CHECK(oscf_parse_accumulate_granularity(" 4096 ", &n) == OSCF_OK);
    CHECK(n == 4096);
    CHECK(oscf_parse_accumulate_granularity("4294967295", &n) == OSCF_OK);
    CHECK(n == 4294967295u);
    CHECK(oscf_parse_accumulate_granularity("4294967296", &n) == OSCF_ERR_INFO);
    CHECK(oscf_parse_accumulate_granularity("-8", &n) == OSCF_ERR_INFO);
    CHECK(oscf_parse_accumulate_granularity("8k", &n) == OSCF_ERR_INFO);
    CHECK(oscf_parse_accumulate_granularity("", &n) == OSCF_ERR_INFO);
    CHECK(oscf_parse_accumulate_granularity(nullptr, &n) == OSCF_ERR_ARG);
}

// tcp;ofi_rxm completes a message above its eager size after smaller ones sent behind
// it; the target must still serve an origin's requests in the order they were sent.
TEST_CASE("active-message requests that arrive out of order are served in the order sent",
          "[accumulate][am]") {
    size_t sizes[2] = {64, 64};
    TwoRanks t("shm", OSCF_FLAVOR_ALLOCATE, sizes);
    std::vector<char> blob(oscf_win_blob_size(t.win[1]));
    REQUIRE(oscf_win_local_blob(t.win[1], blob.data()) == OSCF_OK);
    const auto *b = reinterpret_cast<const oscf::WinBlob *>(blob.data());
    // Two REPLACEs of the same word from one stream (rank 1 to its own window: nothing
    // else in this test uses it): seq 0 writes 1, seq 1 writes 2.
    auto request = [&](uint32_t seq, uint64_t value) {
        oscf::AmHeader h{};
        h.version = oscf::kAmVersion;
        h.opcode = oscf::kAmAccumulate;
        h.type = OSCF_TYPE_UINT64;
        h.op = OSCF_OP_REPLACE;
        h.flags = oscf::kAmNoReply;
        h.count = 1;
        h.origin_rank = 1;
        h.seq = seq;
        h.window_id = b->am_window_id;
        std::vector<uint8_t> msg(sizeof h + sizeof value);
        std::memcpy(msg.data(), &h, sizeof h);
        std::memcpy(msg.data() + sizeof h, &value, sizeof value);
        return msg;
    };
    const std::vector<uint8_t> first = request(0, 1), second = request(1, 2);
    auto word = [&] { return *reinterpret_cast<volatile uint64_t *>(t.mem(1)); };
    std::memset(t.mem(1), 0, sizeof(uint64_t));  // allocated memory starts undefined
    {
        std::unique_lock<oscf::EngineLock> lk(t.eng[1]->progress->mutex());
        t.eng[1]->am->on_receive(second.data(), second.size());
        CHECK(word() == 0);  // waits for seq 0
        t.eng[1]->am->on_receive(first.data(), first.size());
    }
    CHECK(word() == 2);
}
