// Descriptors for local buffers, for providers that return FI_MR_LOCAL (verbs under rxm
// when asked, efa-direct): then every local buffer of a data operation (the origin of a
// put or an atomic, the result of a get or a fetch, a compare buffer, a message) must
// carry the descriptor of a registered region that covers it, with the access the
// operation needs. Elsewhere describe() is never called and descriptors stay null.
//
// Two sources of descriptors, asked in this order:
//   1. the engine's own regions (windows, state words, staging chunks): registered once
//      with local access as well as remote, entered here by Fabric::register_memory and
//      taken off when their mr_ptr closes;
//   2. a Registrar for everything else (user buffers, stack words, message buffers). The
//      MPI layer installs one backed by Open MPI's registration cache (rcache/grdma, which
//      memory hooks keep valid when the application frees or unmaps memory); without it,
//      Fabric registers the buffer for the one operation and closes the region when the
//      operation completes, which is always correct and costs a registration per call.
// What a registrar hands out is held by the operation's OpContext (LocalRefs) and given
// back when the context is (ContextPool::give), so a region outlives every use of it.
//
// Owned by the Fabric; engine lock held for every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

#include "osc_fabric/engine.h"

namespace oscf {

// The registrations one operation holds: at most three local buffers (compare_atomic's
// source, compare and result).
struct LocalRefs {
    struct Ref {
        void (*release)(void *ctx, void *token);
        void *ctx;
        void *token;
    };
    Ref refs[3];
    uint8_t count = 0;
    void release() noexcept {
        for (uint8_t i = 0; i < count; ++i) refs[i].release(refs[i].ctx, refs[i].token);
        count = 0;
    }
};

class LocalMemory {
public:
    // required: the provider returned FI_MR_LOCAL. fallback: the registrar used while no
    // other is installed (Fabric's register-per-operation one).
    LocalMemory(bool required, const oscf_local_registrar &fallback)
        : required_(required), fallback_(fallback), registrar_(fallback) {}
    LocalMemory(const LocalMemory &) = delete;
    LocalMemory &operator=(const LocalMemory &) = delete;

    bool required() const { return required_; }

    // The engine's own regions, whose descriptors serve any buffer inside them.
    void add(const void *base, size_t len, void *desc, const void *owner) {
        regions_[{addr(base), owner}] = Region{addr(base) + len, desc};
    }
    void remove(const void *base, const void *owner) { regions_.erase({addr(base), owner}); }

    // *desc for [buf, buf+len): null where none is needed (no FI_MR_LOCAL, or nothing to
    // describe); a registration taken for it is added to refs. 0 or a negative libfabric
    // status (the registration failed, logged with its reason).
    int describe(const void *buf, size_t len, LocalRefs &refs, void **desc) {
        *desc = nullptr;
        if (!required_ || !buf || !len) return 0;
        if ((*desc = known(buf, len))) return 0;
        return acquire(buf, len, refs, desc);
    }

    // nullptr installs the fallback again. The one replaced is closed: tokens it gave
    // are still released through it, so its close must keep what they need.
    void set_registrar(const oscf_local_registrar *r) {
        close_registrar();
        registrar_ = r ? *r : fallback_;
    }
    // The engine is closing: its endpoint is closed and every token given back.
    void close_registrar() {
        if (registrar_.close) registrar_.close(registrar_.ctx);
        registrar_ = fallback_;
    }

    // Calls described by the engine's own regions and by the registrar, for the MPI_T
    // counters and the registration benchmark.
    uint64_t known_hits() const { return known_hits_; }
    uint64_t acquired() const { return acquired_; }
    // Regions registered for a registrar (Fabric::register_local): its misses.
    uint64_t registered() const { return registered_; }
    void note_registered() { ++registered_; }

private:
    struct Region {
        uintptr_t end;
        void *desc;
    };
    static uintptr_t addr(const void *p) { return reinterpret_cast<uintptr_t>(p); }
    void *known(const void *buf, size_t len);
    int acquire(const void *buf, size_t len, LocalRefs &refs, void **desc);

    bool required_;
    oscf_local_registrar fallback_;
    oscf_local_registrar registrar_;
    // By (base, owner): two windows may register the same memory.
    std::map<std::pair<uintptr_t, const void *>, Region> regions_;
    uint64_t known_hits_ = 0;
    uint64_t acquired_ = 0;
    uint64_t registered_ = 0;
};

}  // namespace oscf
