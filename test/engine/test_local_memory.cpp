// Descriptors of local buffers under FI_MR_LOCAL (local_memory.h): the rules without a
// fabric, then what an engine over a provider that returns FI_MR_LOCAL (the strict
// verbs-rxm profile) does with a put, a get and an atomic from user memory.
#include "catch_compat.h"

#include <cstring>
#include <vector>

#include "../../osc_fabric/engine/local_memory.h"
#include "two_ranks.h"

using namespace oscf;

namespace {
// A registrar that hands out numbered tokens and counts what is still held.
struct CountingRegistrar {
    int acquired = 0, released = 0;
    int fail = 0;  // the status the next acquire returns
    char descs[4];
    oscf_local_registrar table() {
        oscf_local_registrar r{};
        r.ctx = this;
        r.acquire = [](void *ctx, void *, size_t, void **desc, void **token) -> int {
            auto *self = static_cast<CountingRegistrar *>(ctx);
            if (self->fail) return self->fail;
            *desc = &self->descs[0];
            *token = &self->descs[1];
            ++self->acquired;
            return 0;
        };
        r.release = [](void *ctx, void *) { ++static_cast<CountingRegistrar *>(ctx)->released; };
        return r;
    }
};
}  // namespace

TEST_CASE("a buffer inside one of the engine's regions takes that region's descriptor", "[local]") {
    CountingRegistrar reg;
    LocalMemory local(true, reg.table());
    std::vector<char> window(4096);
    int desc_a, owner_a;
    local.add(window.data(), window.size(), &desc_a, &owner_a);
    LocalRefs refs;
    void *desc = nullptr;
    REQUIRE(local.describe(window.data() + 100, 200, refs, &desc) == 0);
    CHECK(desc == &desc_a);
    REQUIRE(local.describe(window.data(), window.size(), refs, &desc) == 0);
    CHECK(desc == &desc_a);
    CHECK(reg.acquired == 0);
    CHECK(refs.count == 0);
    CHECK(local.known_hits() == 2);
    // One byte past the region: the registrar serves, and the operation holds what it gave.
    REQUIRE(local.describe(window.data() + 1, window.size(), refs, &desc) == 0);
    CHECK(desc == &reg.descs[0]);
    CHECK(reg.acquired == 1);
    CHECK(refs.count == 1);
    refs.release();
    CHECK(reg.released == 1);
    CHECK(refs.count == 0);
    // A closed region describes nothing any more.
    local.remove(window.data(), &owner_a);
    REQUIRE(local.describe(window.data() + 100, 200, refs, &desc) == 0);
    CHECK(desc == &reg.descs[0]);
    refs.release();
}

TEST_CASE("the same memory in two regions: either descriptor serves, closing one leaves the other",
          "[local]") {
    CountingRegistrar reg;
    LocalMemory local(true, reg.table());
    std::vector<char> mem(8192);
    int desc_a, desc_b, owner_a, owner_b;
    local.add(mem.data(), mem.size(), &desc_a, &owner_a);
    local.add(mem.data() + 4096, 4096, &desc_b, &owner_b);
    LocalRefs refs;
    void *desc = nullptr;
    REQUIRE(local.describe(mem.data() + 5000, 10, refs, &desc) == 0);
    CHECK((desc == &desc_a || desc == &desc_b));
    local.remove(mem.data() + 4096, &owner_b);
    REQUIRE(local.describe(mem.data() + 5000, 10, refs, &desc) == 0);
    CHECK(desc == &desc_a);
    CHECK(reg.acquired == 0);
}

TEST_CASE("without FI_MR_LOCAL nothing is described and the registrar is never asked", "[local]") {
    CountingRegistrar reg;
    LocalMemory local(false, reg.table());
    char buf[64];
    LocalRefs refs;
    void *desc = &buf;
    REQUIRE(local.describe(buf, sizeof buf, refs, &desc) == 0);
    CHECK(desc == nullptr);
    CHECK(reg.acquired == 0);
    CHECK(refs.count == 0);
}

TEST_CASE("a registration that fails fails the post with its status; an empty buffer needs none", "[local]") {
    CountingRegistrar reg;
    LocalMemory local(true, reg.table());
    char buf[64];
    LocalRefs refs;
    void *desc = nullptr;
    reg.fail = -FI_ENOMEM;
    CHECK(local.describe(buf, sizeof buf, refs, &desc) == -FI_ENOMEM);
    CHECK(refs.count == 0);
    CHECK(local.describe(buf, 0, refs, &desc) == 0);
    CHECK(desc == nullptr);
}

TEST_CASE("an installed registrar serves until it is taken away again", "[local]") {
    CountingRegistrar fallback, installed;
    LocalMemory local(true, fallback.table());
    const oscf_local_registrar table = installed.table();
    local.set_registrar(&table);
    char buf[64];
    LocalRefs refs;
    void *desc = nullptr;
    REQUIRE(local.describe(buf, sizeof buf, refs, &desc) == 0);
    local.set_registrar(nullptr);
    REQUIRE(local.describe(buf, sizeof buf, refs, &desc) == 0);
    refs.release();
    CHECK(installed.acquired == 1);
    CHECK(installed.released == 1);  // released through the registrar that gave it
    CHECK(fallback.acquired == 1);
    CHECK(fallback.released == 1);
}

TEST_CASE("under FI_MR_LOCAL, user buffers of puts, gets and atomics are registered for their operation",
          "[local]") {
    std::string prov = test_provider();
    uint64_t regions_at_start = 0, bytes = 0, local_at_start = 0;
    REQUIRE(oscf_engine_registration_stats(&regions_at_start, &bytes) == OSCF_OK);
    REQUIRE(oscf_engine_local_registration_stats(&local_at_start, &bytes) == OSCF_OK);
    {
        size_t sizes[2] = {4096, 4096};
        TwoRanks t(prov, OSCF_FLAVOR_ALLOCATE, sizes, 8);
        std::memset(t.mem(1), 0, sizes[1]);
        oscf_engine_stats before{}, after{};
        REQUIRE(oscf_engine_get_stats(t.eng[0], &before) == OSCF_OK);

        std::vector<uint64_t> src(64, 7), dst(64, 0);
        uint64_t one = 1, old = 0;
        REQUIRE(oscf_win_lock(t.win[0], 1, 1, 0) == OSCF_OK);
        REQUIRE(oscf_win_put(t.win[0], 1, src.data(), src.size() * 8, 0, 0, nullptr) == OSCF_OK);
        REQUIRE(oscf_win_flush(t.win[0], 1) == OSCF_OK);
        REQUIRE(oscf_win_get(t.win[0], 1, dst.data(), dst.size() * 8, 0, 0, nullptr) == OSCF_OK);
        REQUIRE(oscf_win_accumulate(t.win[0], 1, &one, &old, 1, OSCF_TYPE_UINT64, OSCF_OP_SUM, 128, 0,
                                    nullptr) == OSCF_OK);
        REQUIRE(oscf_win_unlock(t.win[0], 1) == OSCF_OK);
        CHECK(dst == src);
        CHECK(old == 0);

        REQUIRE(oscf_engine_get_stats(t.eng[0], &after) == OSCF_OK);
        if (oscf_engine_local_descriptors(t.eng[0])) {
            // The engine's own registrar: one registration per buffer.
            CHECK(after.local_acquired > before.local_acquired);
            CHECK(after.local_registered - before.local_registered ==
                  after.local_acquired - before.local_acquired);
        } else {
            WARN("provider " << prov << " does not return FI_MR_LOCAL: nothing to describe [no-mr-local]");
            CHECK(after.local_acquired == before.local_acquired);
            CHECK(after.local_own_regions == before.local_own_regions);
        }
    }
    // Closed with their operations, or with the engines: receives still posted at the end
    // held some, which go back before the domain closes (~Fabric).
    uint64_t regions_at_end = 0, local_at_end = 0;
    REQUIRE(oscf_engine_registration_stats(&regions_at_end, &bytes) == OSCF_OK);
    REQUIRE(oscf_engine_local_registration_stats(&local_at_end, &bytes) == OSCF_OK);
    CHECK(regions_at_end == regions_at_start);
    CHECK(local_at_end == local_at_start);
}
