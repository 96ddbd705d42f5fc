// Buffers the rendezvous (packed_rendezvous.cpp) keeps between operations: a fresh one
// costs a page fault per page on first touch, and the origin's a registration too. They
// are the engine's, not each window's: a program with many windows keeps one set, and
// registers (pins, on providers whose registration pins) one set. Used under the engine
// lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "am_proto.h"
#include "fabric.h"
#include "mr.h"

namespace oscf {

// A registered copy: the origin's packed bytes, which the target reads. mr before mem:
// the registration closes first.
struct Staging {
    std::unique_ptr<uint8_t[]> mem;
    size_t cap = 0;
    mr_ptr mr;
    uint64_t key = 0;
};

// Put chunks a target reads ahead per origin (kAmChunkFollows): each holds a chunk buffer.
constexpr size_t kChunksAheadMax = 3;
// Slots one streamed put holds at once (packed_rendezvous.cpp): those the target reads
// ahead and the one it places, the one being packed, and as many again, so the origin
// packs ahead while answers travel.
constexpr size_t kSlotsInFlight = 2 * (kChunksAheadMax + 2);

class StagingPool {
public:
    // The kept copy when it is large enough, else a new one, registered, with room to
    // spare: an operation's runs vary in size from call to call (a program that draws a
    // new datatype each time), and a copy sized to each new largest would be replaced,
    // and its fresh pages faulted in, again and again. Pages never written cost nothing
    // where registration pins nothing (tcp, shm); elsewhere the spare is pinned once, kept.
    int take_copy(Fabric &fab, size_t bytes, Staging *out);
    // A kept slot of kRendezvousChunkMax (a streamed put's chunk), else a new one,
    // registered.
    int take_slot(Fabric &fab, Staging *out);
    // b, done with: kept if there is room for it.
    void give_back(Staging &&b, bool slot);
    // A target's chunk buffer (its bytes, a get_accumulate's old values) of need bytes.
    std::unique_ptr<uint8_t[]> take_chunk_buffer(size_t need);
    void keep_chunk_buffer(std::unique_ptr<uint8_t[]> &buf, size_t need);
    // Before the fabric closes: the registrations go first.
    void clear();

private:
    // Kept up to this size; a larger copy is freed when done. A fresh copy or slot costs a
    // page fault a page, as much as packing into it (perf/README.md, "Measurements behind
    // design choices", has what fresh slots cost large puts). Only the pages a call wrote
    // stay resident.
    static constexpr size_t kCopyKeepMax = size_t{16} << 20;
    // Slots kept: those of a few streamed puts in flight at once (to several targets).
    static constexpr size_t kSlotsKept = 3 * kSlotsInFlight;
    // Chunk buffers kept: a few origins' at once.
    static constexpr size_t kChunkBuffersKept = 4;

    Staging copy_;
    std::vector<Staging> slots_;
    std::vector<std::unique_ptr<uint8_t[]>> chunk_buffers_;
};

// The pool's kept copy for one call: taken with take(), given back when the lease ends,
// on every return path.
class CopyLease {
public:
    explicit CopyLease(StagingPool &pool) : pool_(pool) {}
    CopyLease(const CopyLease &) = delete;
    CopyLease &operator=(const CopyLease &) = delete;
    ~CopyLease() { pool_.give_back(std::move(copy_), false); }

    int take(Fabric &fab, size_t bytes) { return pool_.take_copy(fab, bytes, &copy_); }
    uint8_t *data() const { return copy_.mem.get(); }
    // The copy, no longer the pool's: for a caller that must leave while the fabric
    // may still use it.
    Staging release() { return std::move(copy_); }

private:
    StagingPool &pool_;
    Staging copy_;
};

}  // namespace oscf
