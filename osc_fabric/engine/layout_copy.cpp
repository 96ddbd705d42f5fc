#include "layout_copy.h"

#include <algorithm>

#include "piece_copy.h"

namespace oscf {

PieceCursor::PieceCursor(uint8_t *base, const oscf_run_source &source) : base_(base), batches_(source) {
    n_ = batches_.fetch(batch_.data(), batch_.size());
    first_runs_ = n_;
    for (size_t k = 0; k < n_; ++k) first_bytes_ += batch_[k].len * batch_[k].count;
    next_run();
}

// Takes the next run that holds data, fetching batches as the last one ends.
void PieceCursor::next_run() {
    byte_ = 0;
    for (;;) {
        while (i_ < n_) {
            const oscf_run &r = batch_[i_++];
            if (r.len == 0 || r.count == 0) continue;
            // In integers: base_ is null for MPI_BOTTOM, offsets then absolute addresses.
            piece_ = reinterpret_cast<uint8_t *>(reinterpret_cast<uintptr_t>(base_) +
                                                 static_cast<uint64_t>(r.offset));
            pieces_ = r.count;
            len_ = r.len;
            stride_ = r.stride;
            return;
        }
        i_ = 0;
        if ((n_ = batches_.fetch(batch_.data(), batch_.size())) == 0) {
            pieces_ = 0;
            return;
        }
    }
}

namespace {

// Below this many bytes a run on average, Open MPI's convertors pack and unpack a layout
// faster than the walk and the cursor step through it (perf/README.md, "Measurements
// behind design choices").
constexpr size_t kMinRunBytes = 1024;

// Every piece from `from` into `to`, with the stores copy_pieces or, past the cache,
// copy_pieces_uncached makes: one loop for each, chosen once per call.
template <bool kUncached>
void copy_all(PieceCursor &to, PieceCursor &from) {
    auto move = [](uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss, size_t len, size_t k) {
        if constexpr (kUncached)
            copy_pieces_uncached(d, ds, s, ss, len, k);
        else
            copy_pieces(d, ds, s, ss, len, k);
    };
    while (!to.done() && !from.done()) {
        const size_t k = std::min(to.whole_left(), from.whole_left());
        if (k > 0 && to.len() == from.len()) {
            // Whole pieces of one size on both sides: no bookkeeping per piece.
            move(to.at(), to.stride(), from.at(), from.stride(), to.len(), k);
            to.skip_pieces(k);
            from.skip_pieces(k);
            continue;
        }
        // Whole pieces of one side that fit in the other's current piece (a vector into a
        // block, or out of one): the block is walked as if strided by the piece length.
        if (from.whole_left() > 0 && to.left() >= from.len()) {
            const size_t fit = std::min(from.whole_left(), to.left() / from.len());
            move(to.at(), static_cast<int64_t>(from.len()), from.at(), from.stride(), from.len(), fit);
            to.consume(fit * from.len());
            from.skip_pieces(fit);
            continue;
        }
        if (to.whole_left() > 0 && from.left() >= to.len()) {
            const size_t fit = std::min(to.whole_left(), from.left() / to.len());
            move(to.at(), to.stride(), from.at(), static_cast<int64_t>(to.len()), to.len(), fit);
            from.consume(fit * to.len());
            to.skip_pieces(fit);
            continue;
        }
        const size_t n = std::min(to.left(), from.left());
        move_bytes(to.at(), from.at(), n);
        to.consume(n);
        from.consume(n);
    }
}

}  // namespace

int copy_layout(uint8_t *dst_base, const oscf_run_source &dst, const uint8_t *src_base,
                const oscf_run_source &src, bool *moved) {
    *moved = false;
    if (dst.bytes != src.bytes) return OSCF_ERR_ARG;
    PieceCursor to(dst_base, dst), from(const_cast<uint8_t *>(src_base), src);
    if (to.fragmented(kMinRunBytes) || from.fragmented(kMinRunBytes)) return OSCF_OK;
    *moved = true;
    if (dst.bytes >= OSCF_UNCACHED_COPY_BYTES)
        copy_all<true>(to, from);
    else
        copy_all<false>(to, from);
    if (to.status() != OSCF_OK) return to.status();
    if (from.status() != OSCF_OK) return from.status();
    // Equal totals end together; a source that lied about its bytes does not.
    return to.done() && from.done() ? OSCF_OK : OSCF_ERR_ARG;
}

bool LayoutStream::fragmented() const {
    return cur_.fragmented(kMinRunBytes);
}

int LayoutStream::stream(uint8_t *buf, size_t len, bool into_layout) {
    while (len > 0) {
        if (cur_.done()) return cur_.status() != OSCF_OK ? cur_.status() : OSCF_ERR_ARG;
        const size_t piece = cur_.len();
        const size_t fit = std::min(cur_.whole_left(), len / piece);
        if (fit > 0) {
            // Whole pieces: the packed side is a run strided by the piece length.
            const auto packed = static_cast<int64_t>(piece);
            if (into_layout)
                copy_pieces(cur_.at(), cur_.stride(), buf, packed, piece, fit);
            else
                copy_pieces(buf, packed, cur_.at(), cur_.stride(), piece, fit);
            cur_.skip_pieces(fit);
            buf += fit * piece;
            len -= fit * piece;
            continue;
        }
        const size_t n = std::min(cur_.left(), len);
        if (into_layout)
            move_bytes(cur_.at(), buf, n);
        else
            move_bytes(buf, cur_.at(), n);
        cur_.consume(n);
        buf += n;
        len -= n;
    }
    return cur_.status();
}

}  // namespace oscf
