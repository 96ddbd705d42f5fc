// Dynamic windows. Each attached region has its own registration; the owner keeps a
// table of them in registered memory and publishes where it is in its WindowState.
// An origin finds the region of an address by reading that table with fi_read (no
// collective, no help from the owner) and caches it; a miss re-reads once, and an
// address outside every region after that is MPI_ERR_RMA_RANGE. The table grows by
// doubling; an outgrown table stays registered until the window is freed, so an origin
// reading an old location still reads a consistent (if stale) copy and retries.
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
#include <cstring>

#include "region_cache.h"
#include "window.h"

using namespace oscf;

namespace {
constexpr size_t kInitialRegions = 16;
constexpr int kReadAttempts = 100;  // torn copies while the owner edits; then give up
// Offset in WindowState of the table word i (kTable*Word).
constexpr size_t table_word(size_t i) {
    return offsetof(WindowState, reserved) + 8 * i;
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

// Writes the region list into the current table (growing it first if needed), with the
// generation odd while it changes: in the table's header and trailer (a reader copying
// the table front to back sees them differ unless no entry changed in between) and in
// the WindowState word, which an on-node reader loads before and after its copy
// (cross_read_regions).
int oscf_win::publish_regions() {
    if (tables_.empty() || tables_.back().capacity < regions_.size()) {
        Table t;
        t.capacity = std::max(kInitialRegions, 2 * regions_.size());
        const size_t bytes = region_table_bytes(t.capacity);
        t.mem.reset(static_cast<char *>(std::calloc(1, bytes)));
        if (!t.mem) return OSCF_ERR_NO_MEM;
        int rc = fab().register_memory(t.mem.get(), bytes, t.mr, &t.key);
        if (rc) return rc;
        tables_.push_back(std::move(t));
    }
    Table &t = tables_.back();
    auto *hdr = reinterpret_cast<volatile RegionTableHeader *>(t.mem.get());
    auto *entries = reinterpret_cast<Region *>(t.mem.get() + sizeof(RegionTableHeader));
    auto *trailer = reinterpret_cast<volatile uint64_t *>(t.mem.get() + region_table_bytes(t.capacity) - 8);
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
    const bool virt = fab().limits().virt_addr;
    state_->reserved[kTableAddrWord] = virt ? reinterpret_cast<uintptr_t>(t.mem.get()) : 0;
    state_->reserved[kTableKeyWord] = t.key;
    state_->reserved[kTableCapacityWord] = t.capacity;
    state_->table_vaddr = reinterpret_cast<uintptr_t>(t.mem.get());
    std::atomic_thread_fence(std::memory_order_seq_cst);
    state_->reserved[kTableGenerationWord] = table_generation_;  // even: consistent
    return OSCF_OK;
}

int oscf_win::attach(Guard &, void *base, size_t size) {
    if (flavor_ != OSCF_FLAVOR_DYNAMIC)
        return usage_error(OSCF_ERR_RMA_FLAVOR, "MPI_Win_attach on a window that is not dynamic");
    if (size == 0) {  // nothing can be accessed in it; MPI_Win_detach may still name it
        empty_regions_.push_back(reinterpret_cast<uintptr_t>(base));
        return OSCF_OK;
    }
    if (!base) return usage_error(OSCF_ERR_ARG, "MPI_Win_attach of NULL");
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

int oscf_win::detach(Guard &, const void *base) {
    if (flavor_ != OSCF_FLAVOR_DYNAMIC)
        return usage_error(OSCF_ERR_RMA_FLAVOR, "MPI_Win_detach on a window that is not dynamic");
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

// The owner's table by cross-memory attach, a sequence lock around the copy: its
// generation word (in our mapping of the segment) even and unchanged from before the
// place and size are loaded to after the table is read, and the table's own. Torn:
// the owner edited meanwhile, or a table outgrown under us (EFAULT); read again.
// Any other failure closes the road to p (cross_refuse) and the fabric reads it.
oscf_win::TableRead oscf_win::cross_read_regions(Guard &lk, Peer &p) {
    auto word = [&p](size_t off) { return __atomic_load_n(p.node.word(off), __ATOMIC_ACQUIRE); };
    const size_t gen_at = table_word(kTableGenerationWord);
    const uint64_t gen = word(gen_at);
    if (gen & 1) {  // the owner is editing: let it finish
        Progress::idle(lk);
        return TableRead::torn;
    }
    const size_t capacity = word(table_word(kTableCapacityWord));
    const uint64_t at = word(offsetof(WindowState, table_vaddr));
    if (capacity == 0) {  // nothing ever attached
        if (word(gen_at) != gen) return TableRead::torn;
        p.regions.clear();
        return TableRead::read;
    }
    std::vector<char> copy(region_table_bytes(capacity));
    const int err = cross_read(p.cross.pid, at, copy.data(), copy.size());
    std::atomic_thread_fence(std::memory_order_acquire);
    if (err && err != EFAULT) {
        cross_refuse(p, err, "region table read");
        return TableRead::refused;
    }
    // The word even and unchanged: no edit began or ended meanwhile, so the copy is
    // generation gen's whole (load checks its ends and count all the same).
    if (err || word(gen_at) != gen || !p.regions.load(copy.data(), copy.size(), capacity))
        return TableRead::torn;
    return TableRead::read;
}

int oscf_win::refresh_regions(Guard &lk, Peer &p) {
    for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
        if (cross_memory(p)) {
            const TableRead r = cross_read_regions(lk, p);
            if (r == TableRead::read) return OSCF_OK;
            if (r == TableRead::torn) continue;
            // refused: the fabric reads it below
        }
        WindowState st{};
        int rc = read_remote(lk, p, &st, sizeof st, p.state_base, p.state_key);
        if (rc) return rc;
        const size_t capacity = st.reserved[kTableCapacityWord];
        if (capacity == 0) {  // nothing ever attached
            p.regions.clear();
            return OSCF_OK;
        }
        std::vector<char> copy(region_table_bytes(capacity));
        rc = read_remote(lk, p, copy.data(), copy.size(), st.reserved[kTableAddrWord],
                         st.reserved[kTableKeyWord]);
        if (rc) return rc;
        if (p.regions.load(copy.data(), copy.size(), capacity)) return OSCF_OK;  // else torn: again
    }
    return usage_error(OSCF_ERR_INTERNAL, "could not read a consistent region table");
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
        w->remote = fab().limits().virt_addr ? addr : addr - r->base;
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
    w->remote = fab().limits().virt_addr ? addr : addr - r->base;
    w->key = r->key;
    w->am_offset = addr;
    return OSCF_OK;
}
