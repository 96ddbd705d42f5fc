// The small segments of one put or get that has many (a derived datatype cut into
// pieces contiguous on both sides, osc_fabric_datatype.c) travel packed: posting one
// fabric operation per piece costs a message or a system call each, whatever its size,
// and a vector of 4-byte blocks is hundreds of thousands of pieces.
//   put: each piece joins the target's batch (accumulate_batch.cpp) as a byte REPLACE
//        record, so up to kAmMaxPayload of them leave as one kAmBatch message, applied
//        by the target's engine in order and completed by the next flush;
//   get: pieces are listed in kAmGather messages of up to kAmMaxPayload bytes each;
//        the target answers with their bytes back to back, and the reply's completion
//        copies each to its place here before completing the operation.
// Pieces that follow each other at the target (a strided origin, a contiguous target)
// share one record either way: only the target's layout costs records.
// Pieces above kPackedSegmentMax go as before (fi_write/fi_read): packing them saves
// no message and costs the target a copy. perf/osc_ddt measures both against moving
// the same bytes contiguously (perf/README.md has the numbers).
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

    // Worth it for an operation of n pieces? Ourselves: pieces are memory copies
    // already. A request-based put: a batch completes on the target's counter, not on
    // the request, so its pieces go one by one.
    bool wanted(size_t n, bool self) const {
        return n > 1 && !self && (dir_ == Dir::read || !scope_.has_request());
    }
    bool takes(size_t len) const { return len <= kPackedSegmentMax; }
    // One piece: len bytes at local, at offset (AmHeader::offset) in the target.
    int add(char *local, size_t len, uint64_t offset);
    // After the last piece: sends what a get still holds.
    int finish() { return send_gather(); }

private:
    int send_gather();
    bool extend_put(const char *local, size_t len, uint64_t offset);

    oscf_win &win_;
    Peer &p_;
    Dir dir_;
    oscf::OpScope &scope_;
    // put: the record this operation appended last to the target's batch, while it is
    // still the batch's last (same batch, nothing after it): a piece that continues it
    // at the target extends it instead of paying a record of its own.
    size_t put_at_ = 0, put_len_ = 0, put_end_ = 0;
    uint64_t put_next_ = 0;
    uint32_t put_records_ = 0, put_stream_ = 0;
    bool put_open_ = false;
    // get: the pieces of the next kAmGather, and where each one's bytes go here.
    std::vector<oscf::AmGatherRecord> records_;
    std::vector<std::pair<char *, size_t>> places_;
    size_t bytes_ = 0;
};
