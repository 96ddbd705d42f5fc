// The small segments of one put or get that has many (oscf_win_putv/getv: a derived
// datatype cut into pieces contiguous on both sides, osc_fabric_datatype.c) travel
// packed: posting one fabric operation per piece costs a message or a system call each,
// whatever its size. The MPI layer sends layouts of small pieces in the layout form
// instead (packed_layout.cpp); what still comes here are the cuts of larger pieces,
// whose boundaries at the two sides leave some small ones.
//   put: pieces become byte REPLACE records (AmRecord) of kAmBatch messages of up to
//        kAmMaxPayload bytes, which the target's engine applies in order;
//   get: pieces are listed in kAmGather messages of up to kAmMaxPayload bytes each;
//        the target answers with their bytes back to back, and the reply's completion
//        copies each to its place here.
// Each message is one part of the operation (OpScope), so a request-based put or get
// completes with its last reply, like any other. Pieces that follow each other at the
// target (a strided origin, a contiguous target) share one record: only the target's
// layout costs records. Anything queued for the target (our lock request among it)
// leaves before the first message, keeping program order at the target.
// Pieces above kPackedSegmentMax go as before (fi_write/fi_read): packing them saves
// no message and costs the target a copy. perf/osc_ddt measures both against moving
// the same bytes contiguously (perf/README.md has the numbers behind the limit).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "window.h"

class oscf_win::Packed {
public:
    static constexpr size_t kPackedSegmentMax = 4096;

    Packed(oscf_win &win, Peer &p, Dir dir, oscf::OpScope &scope)
        : win_(win), p_(p), dir_(dir), scope_(scope) {}
    Packed(const Packed &) = delete;
    Packed &operator=(const Packed &) = delete;

    // Worth it for an operation of n pieces? Not to ourselves: those pieces are memory
    // copies already (as they are to on-node peers reached directly, route.cpp).
    static bool wanted(size_t n, bool self) { return n > 1 && !self; }
    bool takes(size_t len) const { return len <= kPackedSegmentMax; }
    // One piece: len bytes at local, at offset (AmHeader::offset) in the target.
    int add(char *local, size_t len, uint64_t offset);
    // After the last piece: sends what is still held.
    int finish() { return send(); }

private:
    int add_put(const char *local, size_t len, uint64_t offset);
    int add_get(char *local, size_t len, uint64_t offset);
    int send();
    int send_put();
    int send_gather();

    oscf_win &win_;
    Peer &p_;
    Dir dir_;
    oscf::OpScope &scope_;
    bool started_ = false;  // a piece was added
    // put: the next kAmBatch's payload, and its last record (offset in it, data bytes,
    // where at the target its next byte would go).
    std::unique_ptr<uint8_t[]> out_;
    size_t out_len_ = 0, last_at_ = 0, last_len_ = 0;
    uint64_t last_next_ = 0;
    uint32_t records_out_ = 0;
    // get: the pieces of the next kAmGather, and where each one's bytes go here.
    std::vector<oscf::AmGatherRecord> records_;
    std::vector<std::pair<char *, size_t>> places_;
    size_t bytes_ = 0;
};
