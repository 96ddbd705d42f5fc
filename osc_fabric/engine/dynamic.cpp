// Dynamic windows. Each attached region has its own registration; the owner keeps a
// table of them in registered memory and publishes where it is in its WindowState.
// An origin finds the region of an address by reading that table with fi_read (no
// collective, no help from the owner) and caches it; a miss re-reads once, and an
// address outside every region after that is MPI_ERR_RMA_RANGE. The table grows by
// doubling; an outgrown table stays registered until the window is freed, so an origin
// reading an old location still reads a consistent (if stale) copy and retries.
//
// The owner publishes into a ring of kTableRing tables (one allocation, one
// registration), the next one each time; the generation says which is current
// (table_slot). A reader's copy is torn only if the owner rewrote that very table
// meanwhile, kTableRing publishes later. With one table rewritten in place, an owner
// attaching and detaching back to back tore most copies a reader took, and the reader
// gave up (test_dynamic_publish). And a reader whose copies take longer than the
// owner's kTableRing publishes (through the fabric, or descheduled) asks the owner to
// hold its publishes (WindowState::table_readers, a counter changed as lock words are)
// until it has read a whole table; the owner waits at most kHoldFor each time, serving
// progress, which such a reader through the fabric needs.
//
// A cached region may have been detached since (an erroneous access in MPI terms). No
// provider here makes a stale key a plain error: with libfabric 1.17 shm's write to a
// detached, unmapped region never completes, and tcp;ofi_rxm fails it by dropping the
// connection, failing everything else in flight to that peer. So an origin checks the
// owner's table generation, one 8-byte read, the first time it uses its cache in each
// access epoch, and a stale entry becomes MPI_ERR_RMA_RANGE at the call.
//
// An origin on the owner's node that reaches it by cross-memory attach (route.cpp) needs
// no fabric, and so none of the owner's progress, for any of this: the generation and
// the table's place are in the owner's WindowState, which our node segment maps, and
// the table is read with process_vm_readv.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <rdma/fi_atomic.h>

#include "region_cache.h"
#include "window.h"

using namespace oscf;

namespace {
constexpr size_t kInitialRegions = 16;
constexpr size_t kTableRing = 8;
constexpr int kQuietAttempts = 4;                        // torn copies before a reader asks the owner to hold
constexpr auto kGiveUpAfter = std::chrono::seconds(10);  // of torn copies while it holds
constexpr auto kHoldFor = std::chrono::milliseconds(10);  // at most, per publish
// Offset in WindowState of the table word i (kTable*Word).
constexpr size_t table_word(size_t i) {
    return offsetof(WindowState, reserved) + 8 * i;
}
// Where in its ring the table a publish ends at generation `gen` (even) lies.
constexpr size_t table_slot(uint64_t gen, size_t capacity) {
    return (gen / 2) % kTableRing * region_table_bytes(capacity);
}
// Whether the table of generation `gen` was left alone while the owner's generation
// word went on to `now`: the owner makes the word odd before it touches a table, and
// comes back to that one kTableRing publishes later. A copy's two ends alone do not
// prove it whole: the kernel's string copies need not read front to back.
constexpr bool table_untouched(uint64_t gen, uint64_t now) {
    return now - gen < 2 * kTableRing - 1;
}
}  // namespace

// An origin splits an access at region boundaries, but the records it packs (packed.h)
// may join pieces of regions attached back to back, so a run of them counts here too.
bool oscf_win::attached_here(uint64_t addr, size_t len) const {
    if (len == 0) return true;  // touches nothing
    if (addr + len < addr) return false;
    size_t span;
    return first_of_run(regions_, addr, len, &span) != nullptr;
}

// Writes the region list into the ring's next table (a new ring first when the list
// outgrew it), with the generation odd while it changes: in the WindowState word, which
// readers load before and after the words that say where the ring is and again after
// their copy (table_untouched), and in the table's header and trailer.
int oscf_win::publish_regions() {
    if (tables_.empty() || tables_.back().capacity < regions_.size()) {
        Table t;
        t.capacity = std::max(kInitialRegions, 2 * regions_.size());
        const size_t bytes = kTableRing * region_table_bytes(t.capacity);
        t.mem.reset(static_cast<char *>(std::calloc(1, bytes)));
        if (!t.mem) return OSCF_ERR_NO_MEM;
        int rc = fab().register_memory(t.mem.get(), bytes, t.mr, &t.key);
        if (rc) return rc;
        tables_.push_back(std::move(t));
    }
    Table &t = tables_.back();
    const uint64_t gen = table_generation_ + 2;  // once written
    char *const table = t.mem.get() + table_slot(gen, t.capacity);
    auto *hdr = reinterpret_cast<volatile RegionTableHeader *>(table);
    auto *entries = reinterpret_cast<Region *>(table + sizeof(RegionTableHeader));
    auto *trailer = reinterpret_cast<volatile uint64_t *>(table + region_table_bytes(t.capacity) - 8);
    ++table_generation_;  // odd: editing
    state_->reserved[kTableGenerationWord] = table_generation_;
    *trailer = table_generation_;
    hdr->generation = table_generation_;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (size_t i = 0; i < regions_.size(); ++i)
        entries[i] = Region{regions_[i].base, regions_[i].size, regions_[i].key};
    hdr->count = regions_.size();
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *trailer = ++table_generation_;  // even: consistent
    hdr->generation = table_generation_;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const bool virt = fab().contract().virt_addr;
    state_->reserved[kTableAddrWord] = virt ? reinterpret_cast<uintptr_t>(t.mem.get()) : 0;
    state_->reserved[kTableKeyWord] = t.key;
    state_->reserved[kTableCapacityWord] = t.capacity;
    state_->table_vaddr = reinterpret_cast<uintptr_t>(t.mem.get());
    std::atomic_thread_fence(std::memory_order_seq_cst);
    state_->reserved[kTableGenerationWord] = table_generation_;  // even: consistent
    return OSCF_OK;
}

// Before a publish. Readers through the fabric need our progress, and an application
// attaching and detaching in a loop would keep the progress thread from the engine, so
// every publish serves it once. Readers that kept finding the table torn asked us to let
// them read it (table_readers): they copy in a moment, so wait for them a little.
void oscf_win::hold_for_table_readers(Guard &lk) {
    (void)progress().run_locked();  // its errors are the operations' own, reported there
    auto readers = [this] { return __atomic_load_n(&state_->table_readers, __ATOMIC_ACQUIRE); };
    if (readers() == 0) return;
    const auto until = std::chrono::steady_clock::now() + kHoldFor;
    while (readers() != 0 && std::chrono::steady_clock::now() < until) {
        Progress::idle(lk);
        (void)progress().run_locked();
    }
}

int oscf_win::attach(Guard &lk, void *base, size_t size) {
    if (flavor_ != OSCF_FLAVOR_DYNAMIC)
        return usage_error(OSCF_ERR_RMA_FLAVOR, "MPI_Win_attach on a window that is not dynamic");
    if (size == 0) {  // nothing can be accessed in it; MPI_Win_detach may still name it
        empty_regions_.push_back(reinterpret_cast<uintptr_t>(base));
        return OSCF_OK;
    }
    if (!base) return usage_error(OSCF_ERR_ARG, "MPI_Win_attach of NULL");
    hold_for_table_readers(lk);  // first: it lets other calls in
    const auto b = reinterpret_cast<uintptr_t>(base);
    for (const LocalRegion &r : regions_)
        if (b < r.base + r.size && r.base < b + size)
            return usage_error(OSCF_ERR_RMA_ATTACH,
                               "MPI_Win_attach of %zu bytes at %p overlaps an attached region", size, base);
    LocalRegion r{b, size, {}, 0};
    int rc = fab().register_memory(base, size, r.mr, &r.key);
    if (rc) return rc;
    auto at = std::lower_bound(regions_.begin(), regions_.end(), b,
                               [](const LocalRegion &x, uintptr_t v) { return x.base < v; });
    regions_.insert(at, std::move(r));
    return publish_regions();
}

int oscf_win::detach(Guard &lk, const void *base) {
    if (flavor_ != OSCF_FLAVOR_DYNAMIC)
        return usage_error(OSCF_ERR_RMA_FLAVOR, "MPI_Win_detach on a window that is not dynamic");
    hold_for_table_readers(lk);  // first: it lets other calls in
    const auto b = reinterpret_cast<uintptr_t>(base);
    auto it =
        std::find_if(regions_.begin(), regions_.end(), [b](const LocalRegion &r) { return r.base == b; });
    if (it == regions_.end()) {
        auto empty = std::find(empty_regions_.begin(), empty_regions_.end(), b);
        if (empty == empty_regions_.end())
            return usage_error(OSCF_ERR_RMA_ATTACH, "MPI_Win_detach of %p, which is not attached", base);
        empty_regions_.erase(empty);
        return OSCF_OK;
    }
    regions_.erase(it);
    return publish_regions();
}

int oscf_win::read_remote(Guard &lk, Peer &p, void *dst, size_t len, uint64_t addr, uint64_t key) {
    OpCounter done;
    int rc = progress().post("fi_readmsg (region table)",
                             [&] { return fab().rma(false, dst, len, p.addr, addr, key, &done, nullptr); });
    if (rc) return rc;
    done.on_post();
    return wait_done(lk, done);
}

// The owner's table by cross-memory attach: the place and size of its ring and its
// generation, loaded from our mapping of the owner's WindowState with the generation
// word even and unchanged around them (a publish is a few stores, so this waits
// briefly, yielding), then the table of that generation, whole when the owner did not
// come back to it meanwhile (table_untouched) and its ends agree and it is no older
// (RegionCache::load). Torn otherwise, or on EFAULT: read again. Any other failure
// closes the road to p (cross_refuse) and the fabric reads it.
oscf_win::TableRead oscf_win::cross_read_regions(Guard &lk, Peer &p) {
    auto word = [&p](size_t off) { return __atomic_load_n(p.node.word(off), __ATOMIC_ACQUIRE); };
    const size_t gen_at = table_word(kTableGenerationWord);
    uint64_t gen, ring;
    size_t capacity;
    for (;;) {
        gen = word(gen_at);
        capacity = word(table_word(kTableCapacityWord));
        ring = word(offsetof(WindowState, table_vaddr));
        if (!(gen & 1) && word(gen_at) == gen) break;
        Progress::idle(lk);
    }
    if (capacity == 0) {  // nothing ever attached
        p.regions.clear();
        return TableRead::read;
    }
    std::vector<char> copy(region_table_bytes(capacity));
    const int err = cross_read(p.cross.pid, ring + table_slot(gen, capacity), copy.data(), copy.size());
    std::atomic_thread_fence(std::memory_order_acquire);
    if (err && err != EFAULT) {
        cross_refuse(p, err, "region table read");
        return TableRead::refused;
    }
    if (err || !table_untouched(gen, word(gen_at)) ||
        !p.regions.load(copy.data(), copy.size(), capacity, gen))
        return TableRead::torn;
    return TableRead::read;
}

// One read of the owner's table: *out says whether a whole one was read (read) or the
// owner's edits got in the way (torn); the return value is an error of the reads
// themselves. Through the fabric: the owner's WindowState, then the table its
// generation names, then the generation word again (table_untouched). The state is one
// read that the owner may be changing, so a place we have not read a table from before
// is read again and must not have moved (RegionCache::known_place).
int oscf_win::read_regions_once(Guard &lk, Peer &p, TableRead *out) {
    *out = TableRead::torn;
    if (cross_memory(p)) {
        *out = cross_read_regions(lk, p);
        if (*out != TableRead::refused) return OSCF_OK;
        *out = TableRead::torn;  // the fabric reads it below
    }
    WindowState st{};
    int rc = read_remote(lk, p, &st, sizeof st, p.state_base, p.state_key);
    if (rc) return rc;
    const uint64_t gen = st.reserved[kTableGenerationWord];
    const TablePlace place = TablePlace::from_words(st.reserved);
    if (gen & 1) {  // the owner is publishing
        Progress::idle(lk);
        return OSCF_OK;
    }
    if (place.capacity == 0) {  // nothing ever attached
        p.regions.clear();
        *out = TableRead::read;
        return OSCF_OK;
    }
    if (!p.regions.known_place(place)) {
        uint64_t again[kTableGenerationWord];
        rc = read_remote(lk, p, again, sizeof again, p.state_base + table_word(0), p.state_key);
        if (rc || TablePlace::from_words(again) != place) return rc;
    }
    std::vector<char> copy(region_table_bytes(place.capacity));
    rc =
        read_remote(lk, p, copy.data(), copy.size(), place.addr + table_slot(gen, place.capacity), place.key);
    if (rc) return rc;
    uint64_t now = 0;  // read once the table has arrived
    rc = read_remote(lk, p, &now, sizeof now, p.state_base + table_word(kTableGenerationWord), p.state_key);
    if (rc) return rc;
    if (table_untouched(gen, now) && p.regions.load(copy.data(), copy.size(), place.capacity, gen)) {
        p.regions.remember_place(place);
        *out = TableRead::read;
    }
    return OSCF_OK;
}

int oscf_win::refresh_regions(Guard &lk, Peer &p) {
    TableRead got = TableRead::torn;
    int rc = OSCF_OK;
    for (int attempt = 0; attempt < kQuietAttempts && got == TableRead::torn; ++attempt)
        if ((rc = read_regions_once(lk, p, &got))) return rc;
    if (got == TableRead::read) return OSCF_OK;
    // The owner publishes faster than we copy: ask it to hold while we read.
    const uint64_t offset = offsetof(WindowState, table_readers);
    uint64_t old;
    if ((rc = lock_word_atomic(lk, p, offset, FI_SUM, 1, 0, &old))) return rc;
    const auto give_up = std::chrono::steady_clock::now() + kGiveUpAfter;
    while (rc == OSCF_OK && got == TableRead::torn && std::chrono::steady_clock::now() < give_up)
        rc = read_regions_once(lk, p, &got);
    const int undo = lock_word_atomic(lk, p, offset, FI_SUM, ~uint64_t{0}, 0, &old);
    if (rc) return rc;
    if (got == TableRead::torn)
        return usage_error(OSCF_ERR_INTERNAL, "could not read a consistent region table");
    return undo;
}

int oscf_win::resolve_dynamic(Guard &lk, int target, uint64_t addr, size_t len, const char *what, Where *w) {
    if (addr + len < addr)
        return usage_error(OSCF_ERR_RMA_RANGE, "%s of %zu bytes at address 0x%llx wraps around", what, len,
                           static_cast<unsigned long long>(addr));
    if (target == rank_) {
        // Native atomics to ourselves still go through the fabric, so fill in all of it.
        const LocalRegion *r = first_of_run(regions_, addr, len, &w->span);
        if (!r)
            return usage_error(OSCF_ERR_RMA_RANGE,
                               "%s of %zu bytes at address 0x%llx: not in an attached region", what, len,
                               static_cast<unsigned long long>(addr));
        w->remote = fab().contract().virt_addr ? addr : addr - r->base;
        w->key = r->key;
        w->local = reinterpret_cast<char *>(addr);
        w->am_offset = addr;
        return OSCF_OK;
    }
    Peer &p = peer(target);
    auto find = [&]() { return p.regions.find(addr, len, &w->span); };
    // On the node the generation is one load from the segment: compared on every call,
    // so a region detached since is noticed even within an epoch (a cross-memory copy
    // has no key that would refuse it).
    if (p.node.linked() || !p.regions.checked_in(access_epoch_)) {
        uint64_t gen = 0;
        const uint64_t gen_at = table_word(kTableGenerationWord);
        int rc = OSCF_OK;
        if (p.node.linked())
            gen = __atomic_load_n(p.node.word(gen_at), __ATOMIC_ACQUIRE);
        else
            rc = read_remote(lk, p, &gen, sizeof gen, p.state_base + gen_at, p.state_key);
        if (rc) return rc;
        if (!p.regions.from_generation(gen) && (rc = refresh_regions(lk, p))) return rc;
        p.regions.mark_checked(access_epoch_);
    }
    const Region *r = find();
    if (!r) {  // attached since we last looked, or never: ask the owner's table
        int rc = refresh_regions(lk, p);
        if (rc) return rc;
        r = find();
    }
    if (!r)
        return usage_error(OSCF_ERR_RMA_RANGE, "%s of %zu bytes at address 0x%llx: not attached at rank %d",
                           what, len, static_cast<unsigned long long>(addr), target);
    w->remote = fab().contract().virt_addr ? addr : addr - r->base;
    w->key = r->key;
    w->am_offset = addr;
    return OSCF_OK;
}
