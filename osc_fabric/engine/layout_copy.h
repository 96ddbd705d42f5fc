// Copies the bytes of one layout (oscf_run: count pieces of len bytes, stride apart)
// into another, in order, with no buffer in between: an on-node derived-datatype put or
// get to a peer whose memory we map is one pass over the data, where packing into a
// bounce buffer and unpacking from it is two. And packs one layout into a stream of
// bytes or unpacks it from one (LayoutStream): the origin's side of such a put or get
// over the network. Pure memory work, tested without a fabric
// (test/engine/test_layout_copy.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "osc_fabric/engine.h"
#include "run_batches.h"

namespace oscf {

// The pieces of a run source (engine.h), a batch of runs fetched at a time: where the
// current piece's unconsumed bytes start and how many are left. The current run is held
// unpacked, so stepping through a layout of tiny pieces costs a few adds a piece.
class PieceCursor {
public:
    PieceCursor(uint8_t *base, const oscf_run_source &source);
    PieceCursor(const PieceCursor &) = delete;
    PieceCursor &operator=(const PieceCursor &) = delete;

    bool done() const { return pieces_ == 0; }
    // The source's failure, which also ended the pieces; OSCF_OK otherwise.
    int status() const { return batches_.status(); }
    // Only while !done().
    uint8_t *at() const { return piece_ + byte_; }
    size_t left() const { return len_ - byte_; }
    size_t len() const { return len_; }
    int64_t stride() const { return stride_; }
    // Whether the first batch of runs was full and averaged fewer than `bytes` bytes a
    // run: a layout of many small runs, each costing the walk and the cursor a step.
    bool fragmented(size_t bytes) const { return first_runs_ == kBatch && first_bytes_ < bytes * kBatch; }
    // Whole pieces left in the current run with the current one; 0 once it is partly
    // consumed.
    size_t whole_left() const { return byte_ ? 0 : pieces_; }
    // Moves past n bytes of the current piece (n <= left()).
    void consume(size_t n) {
        byte_ += n;
        if (byte_ < len_) return;
        byte_ = 0;
        piece_ += stride_;
        if (--pieces_ == 0) next_run();
    }
    // Moves past n whole pieces (n <= whole_left()).
    void skip_pieces(size_t n) {
        piece_ += stride_ * static_cast<int64_t>(n);
        pieces_ -= n;
        if (pieces_ == 0) next_run();
    }

private:
    void next_run();
    // Runs fetched at a time: enough that a fetch costs little, few enough to stay in
    // cache and on the stack.
    static constexpr size_t kBatch = 256;

    uint8_t *base_;
    RunBatches batches_;
    std::array<oscf_run, kBatch> batch_;
    size_t n_ = 0, i_ = 0;  // runs in the batch, the next one to take
    // The current run: its current piece, the pieces left (with that one), their length
    // and stride, and the bytes of the current piece consumed.
    uint8_t *piece_ = nullptr;
    size_t pieces_ = 0, len_ = 0;
    int64_t stride_ = 0;
    size_t byte_ = 0;
    size_t first_runs_ = 0, first_bytes_ = 0;  // of the first batch
};

// Copies every byte of src's pieces (at src_base) into dst's (at dst_base), in order,
// and sets *moved; or, when either layout is fragmented (runs of a few bytes each, where
// walking both costs more than packing into a buffer and unpacking from it), copies
// nothing and clears *moved. OSCF_ERR_ARG when the two hold different amounts of data,
// or a source's error; bytes already copied stay.
int copy_layout(uint8_t *dst_base, const oscf_run_source &dst, const uint8_t *src_base,
                const oscf_run_source &src, bool *moved);

// One layout's bytes as a packed stream, in order: pack copies the next len bytes out of
// the layout, unpack the next len bytes into it. A derived-datatype put or get over the
// network packs the origin's side this way (a vector's pieces in one tight loop), unless
// the layout is fragmented, where a convertor is faster. source must outlive the stream.
class LayoutStream {
public:
    LayoutStream(uint8_t *base, const oscf_run_source &source) : cur_(base, source) {}
    bool fragmented() const;
    // OSCF_ERR_ARG when asked for more bytes than the layout holds; a source's error.
    int pack(uint8_t *dst, size_t len) { return stream(dst, len, false); }
    int unpack(const uint8_t *src, size_t len) { return stream(const_cast<uint8_t *>(src), len, true); }

private:
    int stream(uint8_t *buf, size_t len, bool into_layout);
    PieceCursor cur_;
};

}  // namespace oscf
