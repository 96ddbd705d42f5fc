// Test fixture: two engines in one process play ranks 0 and 1 of a window, each with a
// progress thread so either can be a passive target while the test thread blocks in
// the other. Window memory of both ranks is in this process, so tests check it directly.
#pragma once

#include "catch_compat.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "../../osc_fabric/engine/engine_instance.h"
#include "osc_fabric/engine.h"

// An allocated window of `size` bytes, disp_unit 1, rank `rank` of `comm_size`.
inline oscf_win_params allocate_params(size_t size, int rank, int comm_size) {
    oscf_win_params p{};
    p.flavor = OSCF_FLAVOR_ALLOCATE;
    p.size = size;
    p.disp_unit = 1;
    p.comm_rank = rank;
    p.comm_size = comm_size;
    p.accumulate_ordering = OSCF_ORDER_DEFAULT;
    return p;
}

// Exchanges the two windows' blobs and connects them, as MPI_Win_create's allgather does.
inline void connect_pair(oscf_win *const win[2]) {
    const size_t bs = oscf_win_blob_size(win[0]);
    std::vector<char> blobs(2 * bs);
    for (int r = 0; r < 2; ++r) REQUIRE(oscf_win_local_blob(win[r], blobs.data() + r * bs) == OSCF_OK);
    for (int r = 0; r < 2; ++r) REQUIRE(oscf_win_connect(win[r], blobs.data()) == OSCF_OK);
}

// As MPI_Win_free does: every rank completes its side (free_begin) before any window
// goes away, since completing may need the peer to answer.
inline void free_pair(oscf_win *const win[2]) {
    for (int r = 0; r < 2; ++r)
        if (win[r]) oscf_win_free_begin(win[r]);
    for (int r = 0; r < 2; ++r)
        if (win[r]) oscf_win_destroy(win[r]);
}

struct TwoRanks {
    oscf_engine *eng[2] = {nullptr, nullptr};
    oscf_win *win[2] = {nullptr, nullptr};
    void *base[2] = {nullptr, nullptr};
    std::vector<char> created[2];  // memory of CREATE-flavor windows

    // sizes[r] bytes on rank r, disp_unit du.
    // threads[r]: whether rank r's engine runs a progress thread (default: both do).
    TwoRanks(const std::string &provider, oscf_win_flavor flavor, const size_t sizes[2], int du = 1,
             oscf_acc_choice path = OSCF_ACC_AUTO, unsigned ordering = OSCF_ORDER_DEFAULT,
             const bool threads[2] = nullptr) {
        for (int r = 0; r < 2; ++r) {
            oscf_engine_config cfg{
                provider.c_str(), provider == "shm", !threads || threads[r], path, 0, 0, 0, 0, 0};
            REQUIRE(oscf_engine_open(&cfg, &eng[r]) == OSCF_OK);
            oscf_win_params p{};
            p.flavor = flavor;
            p.size = sizes[r];
            p.disp_unit = du;
            p.comm_rank = r;
            p.comm_size = 2;
            p.accumulate_ordering = ordering;
            if (flavor == OSCF_FLAVOR_CREATE) {
                created[r].assign(sizes[r], 0);
                p.base = created[r].data();
            }
            REQUIRE(oscf_win_create(eng[r], &p, &win[r], &base[r]) == OSCF_OK);
        }
        connect_pair(win);
    }
    ~TwoRanks() {
        free_pair(win);
        for (int r = 0; r < 2; ++r)
            if (eng[r]) oscf_engine_close(eng[r]);
    }
    char *mem(int r) const { return static_cast<char *>(base[r]); }
    // What the provider promised (provider_contract.h): expectations that depend on it say so.
    const oscf::ProviderContract &contract() const { return eng[0]->fabric->contract(); }
    oscf_win_stats stats(int r) const {
        oscf_win_stats s{};
        oscf_win_get_stats(win[r], &s);
        return s;
    }
};

// The providers every engine test runs over: shm and tcp, or the comma-separated list in
// OSCF_TEST_PROVIDERS (the strict provider's profiles run the suite that way, meson.build
// in test/strict_provider).
inline std::vector<std::string> test_providers() {
    std::vector<std::string> out;
    const char *env = std::getenv("OSCF_TEST_PROVIDERS");
    std::string list = env && *env ? env : "shm,tcp";
    for (size_t at = 0; at <= list.size();) {
        const size_t end = std::min(list.find(',', at), list.size());
        if (end > at) out.push_back(list.substr(at, end - at));
        at = end + 1;
    }
    return out;
}
inline std::string test_provider() {
    return GENERATE(from_range(test_providers()));
}

// Accumulate-family tests run over both providers and both paths (AUTO picks active
// messages on every provider here, so NATIVE is what exercises the native path).
struct AccSetup {
    std::string provider;
    oscf_acc_choice path;
};
inline AccSetup acc_test_setup() {
    std::string prov = test_provider();
    oscf_acc_choice path = GENERATE(OSCF_ACC_NATIVE, OSCF_ACC_AM);
    return {prov, path};
}
