// Finding regions and taking copies of a peer's region table (region_cache.h), without
// a fabric: tables are built here as the owner lays them out (window_blob.h).
#include "catch_compat.h"

#include <cstring>
#include <vector>

#include "../../osc_fabric/engine/region_cache.h"

using namespace oscf;

namespace {
// A table of `capacity` entries holding `regions`, generation gen at the front and
// trailer at the back.
std::vector<char> table(const std::vector<Region> &regions, size_t capacity, uint64_t gen, uint64_t trailer) {
    std::vector<char> t(region_table_bytes(capacity));
    RegionTableHeader hdr{gen, regions.size()};
    std::memcpy(t.data(), &hdr, sizeof hdr);
    std::memcpy(t.data() + sizeof hdr, regions.data(), regions.size() * sizeof(Region));
    std::memcpy(t.data() + t.size() - sizeof trailer, &trailer, sizeof trailer);
    return t;
}
const std::vector<Region> kTwoBackToBack = {{0x1000, 0x100, 7}, {0x1100, 0x100, 8}, {0x4000, 0x10, 9}};
}  // namespace

TEST_CASE("an access may run across regions attached back to back, not across a gap", "[regions]") {
    size_t span = 0;
    const Region *r = first_of_run(kTwoBackToBack, 0x10f0, 0x20, &span);
    REQUIRE(r);
    CHECK(r->key == 7);
    CHECK(span == 0x10);  // the rest lies in the next region
    CHECK(first_of_run(kTwoBackToBack, 0x1100, 0x100, &span)->key == 8);
    CHECK(first_of_run(kTwoBackToBack, 0x11f0, 0x20, &span) == nullptr);  // runs into a gap
    CHECK(first_of_run(kTwoBackToBack, 0x2000, 1, &span) == nullptr);     // never attached
}

TEST_CASE("a consistent copy of a table is taken, a torn one leaves the cache as it was", "[regions]") {
    RegionCache c;
    size_t span = 0;
    auto good = table(kTwoBackToBack, 4, 6, 6);
    REQUIRE(c.load(good.data(), good.size(), 4, 6));
    CHECK(c.from_generation(6));
    CHECK(c.find(0x4008, 8, &span)->key == 9);
    const std::vector<std::vector<char>> torn = {
        table({{0x9000, 0x10, 1}}, 4, 7, 7),  // odd: the owner is editing it
        table({{0x9000, 0x10, 1}}, 4, 8, 6),  // front and back from different edits
    };
    for (const auto &t : torn) {
        CHECK_FALSE(c.load(t.data(), t.size(), 4, 0));
        CHECK(c.from_generation(6));
        CHECK(c.find(0x9000, 1, &span) == nullptr);
    }
    // A count beyond the capacity read (a header from a larger, newer table).
    auto too_many = table({kTwoBackToBack[0], kTwoBackToBack[1]}, 2, 8, 8);
    const RegionTableHeader grown{8, 3};
    std::memcpy(too_many.data(), &grown, sizeof grown);
    CHECK_FALSE(c.load(too_many.data(), too_many.size(), 2, 0));
    CHECK(c.from_generation(6));
    // Whole, but older than the generation the owner's state named: a table of the ring
    // before it grew.
    auto older = table({{0x9000, 0x10, 1}}, 4, 4, 4);
    CHECK_FALSE(c.load(older.data(), older.size(), 4, 6));
    CHECK(c.from_generation(6));
    // Newer is whole all the same: rewritten completely before the copy.
    auto newer = table({{0x9000, 0x10, 1}}, 4, 22, 22);
    CHECK(c.load(newer.data(), newer.size(), 4, 6));
    CHECK(c.from_generation(22));
}

TEST_CASE("the owner's generation is compared once per access epoch", "[regions]") {
    RegionCache c;
    CHECK_FALSE(c.checked_in(1));
    c.mark_checked(1);
    CHECK(c.checked_in(1));
    CHECK_FALSE(c.checked_in(2));
}

TEST_CASE("a ring's place is trusted once a whole table was read there", "[regions]") {
    RegionCache c;
    const uint64_t old_words[3] = {0x7000, 11, 16}, new_words[3] = {0x9000, 12, 34};
    const TablePlace old_ring = TablePlace::from_words(old_words),
                     new_ring = TablePlace::from_words(new_words);
    CHECK(old_ring.capacity == 16);
    CHECK(new_ring.key == 12);
    CHECK_FALSE(c.known_place(old_ring));  // nothing read yet: confirm it
    c.remember_place(old_ring);
    CHECK(c.known_place(old_ring));
    CHECK_FALSE(c.known_place(new_ring));
    // A state read across a growth: the old ring's address and key, the new capacity.
    const uint64_t torn_words[3] = {0x7000, 11, 34};
    CHECK_FALSE(c.known_place(TablePlace::from_words(torn_words)));
    // Equal places only: another ring at the same address (providers without virtual
    // addresses publish 0 there) differs in its key.
    const uint64_t same_addr[3] = {0x7000, 13, 16};
    CHECK_FALSE(c.known_place(TablePlace::from_words(same_addr)));
}
