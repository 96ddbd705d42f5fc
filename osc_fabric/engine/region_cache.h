// Regions of dynamic windows (dynamic.cpp has the protocol): finding the region of an
// access among regions sorted by base, and an origin's copy of a peer's region table.
// No fabric here: dynamic.cpp reads the table, this file decides what a copy means, and
// test/engine/test_region_cache.cpp checks it alone.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "window_blob.h"

namespace oscf {

// The region holding addr, when [addr, addr + len) is covered by it and the regions
// attached right after it (back to back: MPI exposes every attached byte, however the
// user split the attaches). *span: the bytes of the access inside that first region;
// the caller moves them and resolves the rest again. The range must not wrap.
template <class R>
const R *first_of_run(const std::vector<R> &regions, uint64_t addr, size_t len, size_t *span) {
    auto it = std::find_if(regions.begin(), regions.end(),
                           [addr](const R &r) { return addr >= r.base && addr - r.base < r.size; });
    if (it == regions.end()) return nullptr;
    const uint64_t want = addr + len;
    uint64_t end = it->base + it->size;
    for (auto next = it + 1; end < want && next != regions.end() && next->base == end; ++next)
        end = next->base + next->size;
    if (end < want) return nullptr;
    *span = static_cast<size_t>(std::min<uint64_t>(want, it->base + it->size) - addr);
    return &*it;
}

// Where an owner's ring of region tables is, as its WindowState words say
// (kTableAddrWord, kTableKeyWord, kTableCapacityWord).
struct TablePlace {
    uint64_t addr = 0, key = 0, capacity = 0;
    static TablePlace from_words(const uint64_t *words) {
        return {words[kTableAddrWord], words[kTableKeyWord], words[kTableCapacityWord]};
    }
    bool operator==(const TablePlace &o) const {
        return addr == o.addr && key == o.key && capacity == o.capacity;
    }
    bool operator!=(const TablePlace &o) const { return !(*this == o); }
};

// An origin's copy of one peer's region table: the regions, the generation of the
// owner's table they came from, and the access epoch in which the origin last compared
// that generation with the owner's (once per epoch, so a region detached since is
// noticed at the call that uses it).
class RegionCache {
public:
    bool checked_in(uint64_t epoch) const { return checked_epoch_ == epoch; }
    void mark_checked(uint64_t epoch) { checked_epoch_ = epoch; }
    bool from_generation(uint64_t generation) const { return generation == generation_; }

    // Takes a copy of a whole table of `capacity` regions (region_table_bytes): true
    // when it is consistent (equal, even generations at both ends, a count that fits)
    // and of generation `at_least` or later, false for a copy torn by the owner's edit
    // or older than the owner said, which leaves the cache as it was.
    bool load(const char *table, size_t bytes, size_t capacity, uint64_t at_least) {
        if (bytes != region_table_bytes(capacity)) return false;
        RegionTableHeader hdr;
        uint64_t trailer;
        std::memcpy(&hdr, table, sizeof hdr);
        std::memcpy(&trailer, table + bytes - sizeof trailer, sizeof trailer);
        if (hdr.generation != trailer || (hdr.generation & 1) || hdr.count > capacity ||
            hdr.generation < at_least)
            return false;
        generation_ = hdr.generation;
        regions_.resize(hdr.count);
        std::memcpy(regions_.data(), table + sizeof hdr, hdr.count * sizeof(Region));
        return true;
    }
    // A read of the owner's state through the fabric copies its words while the owner
    // may be growing the ring, so its place can be partly the old ring's, partly the
    // new one's, and a table read there can fall outside both registrations. A place a
    // whole table was read from before is one the owner really had: its rings stay
    // registered, so reading any table of it is in bounds (and a generation it does not
    // hold is refused by load). Any other place is confirmed by reading it again
    // (dynamic.cpp, read_regions_once).
    bool known_place(const TablePlace &p) const { return p == place_; }
    void remember_place(const TablePlace &p) { place_ = p; }

    // The owner never attached anything.
    void clear() { regions_.clear(); }

    const Region *find(uint64_t addr, size_t len, size_t *span) const {
        return first_of_run(regions_, addr, len, span);
    }

private:
    std::vector<Region> regions_;
    TablePlace place_;
    uint64_t generation_ = 0;
    uint64_t checked_epoch_ = 0;
};

}  // namespace oscf
