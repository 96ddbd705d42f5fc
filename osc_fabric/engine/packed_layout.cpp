// Puts, gets, accumulates and get_accumulates of many small pieces described by the target's layout
// (engine.h, oscf_win_put_packed). A derived datatype's thousands of pieces cost, per
// piece, only the copy at each end: the origin's bytes are packed by the caller (Open
// MPI's convertor), the target's layout travels as runs (AmRun: a vector's pieces are
// one run), and the target's engine copies each piece to or from its place, or applies
// an accumulate's elements there (apply_here, as every emulated accumulate).
//   put, accumulate: kAmScatter messages of up to kAmMaxPayload bytes, runs then their
//        bytes (an accumulate's split only between elements);
//   get: kAmGatherRuns messages of runs; each reply's bytes land at their place in one
//        buffer, which the caller unpacks once all have arrived.
//   get_accumulate: kAmScatter messages that ask for the old values (kAmFetch), runs then
//        the origin's elements (none for NO_OP); the replies' old values land as a get's
//        bytes do, and are unpacked into the result's layout.
// A put's messages but the last go unanswered (kAmNoReply): the target serves one
// origin's messages in order, so the last reply covers them all, and a reply per message
// costs the target a send each. A get's replies carry its bytes; the operation (OpScope)
// completes with the last of them. Anything queued for the target (our lock request among
// it) leaves before the first message, keeping program order at the target.
// Ourselves and on-node peers reached directly get puts and gets as plain copies; an
// accumulate to them is declined (OSCF_ERR_UNSUPPORTED), its caller cuts segments.
// From kRendezvousMin bytes the pieces' bytes travel by RMA instead (packed_rendezvous.cpp).
// perf/osc_ddt measures this against the same bytes moved contiguously (perf/README.md).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "atomic_types.h"
#include "packed_parts.h"
#include "piece_copy.h"
#include "run_codec.h"
#include "run_cursor.h"
#include "window.h"

using namespace oscf;

namespace {

// Calls the caller's release exactly once, as engine.h promises, unless a reply object
// took the packer over.
class PackerRelease {
public:
    explicit PackerRelease(const oscf_packer &pk) : pk_(pk) {}
    ~PackerRelease() {
        if (!passed_ && pk_.release) pk_.release(pk_.arg);
    }
    PackerRelease(const PackerRelease &) = delete;
    PackerRelease &operator=(const PackerRelease &) = delete;
    const oscf_packer &pass_on() {
        passed_ = true;
        return pk_;
    }

private:
    oscf_packer pk_;
    bool passed_ = false;
};

// The replies of one get_packed: each lands at its place in one buffer, unpacked whole
// after the last (PackedParts).
class GatherRunsReply final : public PackedParts {
public:
    GatherRunsReply(size_t bytes, const oscf_packer &pk, Completion *next)
        : PackedParts(pk, next), data_(new uint8_t[bytes]) {
        unpack_later(data_.get(), bytes);
    }
    uint8_t *at(size_t pos) { return data_.get() + pos; }

private:
    std::unique_ptr<uint8_t[]> data_;
};

// A packer over one contiguous buffer: each call takes or fills the next len bytes.
struct CopyCursor {
    char *at;
    oscf_type type = OSCF_TYPE_UINT8;  // copy_in writes whole elements of it (copy_elements)
};
int copy_out(void *arg, void *dst, size_t len) {
    auto *c = static_cast<CopyCursor *>(arg);
    std::memcpy(dst, c->at, len);
    c->at += len;
    return OSCF_OK;
}
int copy_in(void *arg, const void *src, size_t len) {
    auto *c = static_cast<CopyCursor *>(arg);
    copy_element_bytes(c->type, c->at, src, len);
    c->at += len;
    return OSCF_OK;
}
void copy_release(void *arg) {
    delete static_cast<CopyCursor *>(arg);
}

// The first byte a run's count (> 0) pieces touch, and the byte after its last.
struct Span {
    __int128 lo, hi;
};
Span run_span(__int128 offset, int64_t stride, uint64_t len, uint64_t count) {
    const __int128 last = static_cast<__int128>(stride) * static_cast<__int128>(count - 1);
    return Span{offset + std::min<__int128>(0, last), offset + std::max<__int128>(0, last) + len};
}

// What a layout touches and weighs: its lowest and highest byte offsets, its bytes, and
// (when asked: only a put's staging needs it) its runs' wire form, uncut (run_codec.h).
// The offsets are the caller's: the delta added later changes only the first run's gap,
// by less than a run.
struct LayoutSize {
    int64_t lo = 0, hi = 0;
    size_t bytes = 0, wire = 0;
    size_t pieces = 0;
};

// One pass over the runs; false when a span or the total overflows.
bool measure_layout(const oscf_run *runs, size_t n, bool with_wire, LayoutSize *out) {
    int64_t low = INT64_MAX, high = INT64_MIN;
    size_t total = 0, pieces = 0;
    WireSize wire;
    for (size_t i = 0; i < n; ++i) {
        const oscf_run &r = runs[i];
        if (r.len == 0 || r.count == 0) continue;
        int64_t last, lo, hi, bytes;
        if (r.len > INT64_MAX || r.count > INT64_MAX ||
            __builtin_mul_overflow(r.stride, static_cast<int64_t>(r.count - 1), &last) ||
            __builtin_add_overflow(r.offset, std::min<int64_t>(0, last), &lo) ||
            __builtin_add_overflow(r.offset, std::max<int64_t>(0, last), &hi) ||
            __builtin_add_overflow(hi, static_cast<int64_t>(r.len), &hi) ||
            __builtin_mul_overflow(static_cast<int64_t>(r.len), static_cast<int64_t>(r.count), &bytes) ||
            __builtin_add_overflow(total, static_cast<size_t>(bytes), &total))
            return false;
        low = std::min(low, lo);
        high = std::max(high, hi);
        pieces += r.count;
        if (with_wire) wire.add(static_cast<uint64_t>(r.offset), r.stride, r.len, r.count);
    }
    if (total > SIZE_MAX / 2) return false;
    *out = total ? LayoutSize{low, high, total, wire.bytes() + kRunBytesMax, pieces} : LayoutSize{};
    return true;
}

// True when the runs' pieces, in order, are one block of bytes; *start is its first.
// measure_layout has checked the sums.
bool one_block(const oscf_run *runs, size_t n, int64_t *start) {
    bool seen = false;
    int64_t next = 0;
    for (size_t i = 0; i < n; ++i) {
        const oscf_run &r = runs[i];
        if (r.len == 0 || r.count == 0) continue;
        if ((r.count > 1 && r.stride != static_cast<int64_t>(r.len)) || (seen && r.offset != next))
            return false;
        if (!seen) *start = r.offset;
        seen = true;
        next = r.offset + static_cast<int64_t>(r.len * r.count);
    }
    return seen;
}

// Calls run(at, stride, len, count) for the pieces of each of the n runs in desc_len
// bytes at desc (their wire form, run_codec.h), in order, where at is where(offset, len)
// says the first piece lies; stops at the first status that is not OSCF_OK, fails with
// OSCF_ERR_RMA_RANGE at a piece where() refuses and with OSCF_ERR_ARG when the runs are
// malformed. A run whose whole span where() accepts is checked once and handed over
// whole; any other piece by piece (count 1), since its pieces may lie in different
// regions.
template <class Where, class Run>
int each_run(const uint8_t *desc, size_t desc_len, uint32_t n, Where &&where, Run &&run) {
    RunReader reader(desc, desc_len);
    AmRun r;
    uint32_t seen = 0;
    for (; seen < n && reader.next(&r); ++seen) {
        if (r.count == 0 || r.len == 0) continue;
        const Span s = run_span(r.offset, r.stride, r.len, r.count);
        char *span = s.lo >= 0 && s.hi <= static_cast<__int128>(UINT64_MAX)
                         ? where(static_cast<uint64_t>(s.lo), static_cast<size_t>(s.hi - s.lo))
                         : nullptr;
        if (span) {
            int rc = run(span + (r.offset - static_cast<uint64_t>(s.lo)), r.stride, size_t{r.len},
                         size_t{r.count});
            if (rc != OSCF_OK) return rc;
            continue;
        }
        for (uint32_t j = 0; j < r.count; ++j) {
            char *at = where(r.offset + static_cast<uint64_t>(r.stride) * j, size_t{r.len});
            if (!at) return OSCF_ERR_RMA_RANGE;
            int rc = run(at, r.stride, size_t{r.len}, size_t{1});
            if (rc != OSCF_OK) return rc;
        }
    }
    return seen == n && reader.ok_padded() ? OSCF_OK : OSCF_ERR_ARG;
}

}  // namespace

int oscf_win::transfer_packed(Guard &lk, Dir dir, int target, const oscf_run *runs, size_t n, int64_t disp,
                              const oscf_packer &pk, const oscf_notify *notify) {
    PackerRelease hold(pk);
    const char *what = dir == Dir::write ? "put" : "get";
    if (int rc = check_operation(target, notify, what)) return rc;
    LayoutSize size;
    if (!measure_layout(runs, n, dir == Dir::write, &size))
        return usage_error(OSCF_ERR_RMA_RANGE, "%s: the target datatype's layout overflows", what);
    const size_t bytes = size.bytes;
    Peer &p = peer(target);
    // Cross-memory attach costs the kernel a page lookup a piece: small pieces travel
    // faster packed, in the layout form (perf/README.md, "Measurements behind design
    // choices").
    if (bytes > 0 &&
        (target == rank_ || direct_memory(p) || (bytes >= kCrossPieceMin * size.pieces && cross_memory(p))))
        return staged_transfer(lk, dir, target, runs, n, disp, bytes, pk, notify);
    // A large layout that is one block at the target is moved by our own RMA, which
    // MPI_Win_complete must wait for; otherwise a put's bytes are packed into messages
    // or a copy the target reads before this returns, and travel in its stream.
    int64_t block = 0;
    const bool rma = bytes >= kRendezvousMin && one_block(runs, n, &block);
    OpScope scope(progress().aborts(), dir == Dir::write && !rma ? p.streamed_ops : p.ops, notify);
    int rc = begin_access(lk, target, what);
    uint64_t delta = 0;
    if (!rc && bytes > 0) rc = layout_delta(lk, target, disp, runs, n, size.lo, size.hi, what, &delta);
    if (!rc) stats.layout_bytes += bytes;
    if (!rc && rma)
        rc = packed_rma(lk, p, target, dir, disp, block, bytes, hold.pass_on(), scope);
    else if (!rc && bytes >= kRendezvousMin)
        rc = rendezvous(p, dir == Dir::write ? Rendezvous::put : Rendezvous::get, runs, n, bytes, size.wire,
                        delta, hold.pass_on(), nullptr, scope, Update{});
    else if (!rc && bytes > 0)
        rc = dir == Dir::write ? scatter(p, runs, n, delta, pk, scope, Update{})
                               : gather_runs(p, runs, n, delta, bytes, hold.pass_on(), scope);
    return finish(lk, scope, rc);
}

// A put or get whose target runs come from src a batch at a time (engine.h). A large one
// to a peer reached by messages cuts them into its rendezvous as they come: a get's
// runs then never lie in one long array, whose fresh pages cost the origin a page fault
// each, more than cutting them (perf/README.md, "Measurements behind design choices").
// Anything else takes them all first and goes transfer_packed's way, as does a dynamic
// window, whose layout layout_delta may have to check run by run.
int oscf_win::transfer_streamed(Guard &lk, Dir dir, int target, const oscf_run_source &src, int64_t disp,
                                const oscf_packer &pk, const oscf_notify *notify) {
    PackerRelease hold(pk);
    const bool put = dir == Dir::write;
    const char *what = put ? "put" : "get";
    int rc = check_operation(target, notify, what);
    if (rc) return rc;
    Peer &p = peer(target);
    // A put to a peer reached by cross-memory attach streams too: how large its pieces
    // are is known only once they are all walked, and draining them first costs more than
    // that road would save (perf/README.md, "Measurements behind design choices"). A
    // get's pieces go that road as transfer_packed decides.
    if (src.bytes < kRendezvousMin || target == rank_ || direct_memory(p) || flavor_ == OSCF_FLAVOR_DYNAMIC ||
        (!put && cross_memory(p))) {
        constexpr size_t kBatch = 1024;
        std::vector<oscf_run> runs;
        for (long got = 1; got > 0;) {
            const size_t have = runs.size();
            runs.resize(have + kBatch);
            got = src.next(src.arg, runs.data() + have, kBatch);
            if (got < 0) return static_cast<int>(got);
            runs.resize(have + std::min(static_cast<size_t>(got), kBatch));
        }
        return transfer_packed(lk, dir, target, runs.data(), runs.size(), disp, hold.pass_on(), notify);
    }
    if (src.hi < src.lo || src.bytes > SIZE_MAX / 2)
        return usage_error(OSCF_ERR_RMA_RANGE, "%s: the target datatype's layout overflows", what);
    OpScope scope(progress().aborts(), put ? p.streamed_ops : p.ops, notify);
    rc = begin_access(lk, target, what);
    uint64_t delta = 0;
    if (!rc) rc = layout_delta(lk, target, disp, nullptr, 0, src.lo, src.hi, what, &delta);
    if (!rc) {
        stats.layout_bytes += src.bytes;
        RunCursor cursor(src, delta);
        rc = rendezvous_cut(p, put ? Rendezvous::put : Rendezvous::get, cursor, src.bytes, kWireUnknown,
                            hold.pass_on(), nullptr, scope, Update{}, &lk);
    }
    return finish(lk, scope, rc);
}

// The layout form of an accumulate or get_accumulate, to a peer whose updates of `type`
// its engine applies (active messages): the pieces' elements travel as a put's bytes do,
// and the target applies each message whole under its lock, as it applies every emulated
// accumulate, so every element stays atomic; a get_accumulate's old values come back as
// a get's bytes do. Ordered behind earlier accumulates like any other.
int oscf_win::accumulate_layout(Guard &lk, int target, const oscf_run *runs, size_t n, oscf_type type,
                                oscf_op op, int64_t disp, const oscf_packer *origin,
                                const oscf_packer *result, const oscf_notify *notify) {
    const bool fetch = result != nullptr;
    const char *what = fetch ? "get_accumulate" : "accumulate";
    PackerRelease hold_origin(origin ? *origin : oscf_packer{});
    PackerRelease hold_result(fetch ? *result : oscf_packer{});
    if (fetch ? (op == OSCF_OP_NO_OP) != (origin == nullptr) : origin == nullptr) return OSCF_ERR_ARG;
    int rc = check_reduction(op, type, !fetch);
    if (!rc) rc = check_acc_layout(target, runs, n, type, what, notify);
    if (rc) return rc;
    LayoutSize lsize;
    if (!measure_layout(runs, n, true, &lsize))
        return usage_error(OSCF_ERR_RMA_RANGE, "%s: the target datatype's layout overflows", what);
    const size_t bytes = lsize.bytes;
    const Update u{type, op};
    Peer &p = peer(target);
    // An accumulate is packed as a put's bytes are; a get_accumulate completes when its
    // old values are in.
    OpScope scope(progress().aborts(), fetch ? p.acc : p.streamed_acc, notify);
    rc = begin_access(lk, target, what);
    uint64_t delta = 0;
    if (!rc && bytes > 0) rc = layout_delta(lk, target, disp, runs, n, lsize.lo, lsize.hi, what, &delta);
    // What is queued for the target leaves first; an ordering waits for earlier ones.
    if (!rc && bytes > 0 && !(rc = send_batch(p))) rc = order_accumulate(lk, p, OSCF_PATH_AM);
    if (!rc && bytes >= kRendezvousMin)
        rc = fetch ? rendezvous(p, Rendezvous::fetch, runs, n, bytes, lsize.wire, delta,
                                hold_result.pass_on(), origin, scope, u)
                   : rendezvous(p, Rendezvous::put, runs, n, bytes, lsize.wire, delta, hold_origin.pass_on(),
                                nullptr, scope, u);
    else if (!rc && bytes > 0)
        rc = fetch ? fetch_scatter(p, runs, n, delta, bytes, origin, hold_result.pass_on(), scope, u)
                   : scatter(p, runs, n, delta, *origin, scope, u);
    if (!rc) {
        stats.am_requests += bytes > 0;
        stats.layout_bytes += bytes;
    }
    return finish(lk, scope, rc);
}

// A large contiguous accumulate or get_accumulate to a peer whose engine applies it: the
// rendezvous of a layout of one run, packed and unpacked by plain copies. In messages of
// kAmMaxPayload each it cost a send and a receive per message at both ends (perf/README.md
// has the numbers).
int oscf_win::accumulate_rendezvous(Peer &p, const char *origin, char *result, size_t count, oscf_type type,
                                    oscf_op op, const Where &w, OpScope &scope) {
    const size_t bytes = count * type_size(type);
    const oscf_run run{0, static_cast<int64_t>(bytes), bytes, 1};
    LayoutSize size;
    if (!measure_layout(&run, 1, true, &size)) return OSCF_ERR_RMA_RANGE;
    CopyCursor in{const_cast<char *>(origin)};
    const oscf_packer pk{copy_out, nullptr, nullptr, &in};  // every chunk is packed before we return
    stats.layout_bytes += bytes;
    if (!result)
        return rendezvous(p, Rendezvous::put, &run, 1, bytes, size.wire, w.am_offset, pk, nullptr, scope,
                          Update{type, op});
    // The old values are copied out by the answers, after we return.
    const oscf_packer out{nullptr, copy_in, copy_release, new CopyCursor{result, type}};
    return rendezvous(p, Rendezvous::fetch, &run, 1, bytes, size.wire, w.am_offset, out,
                      origin ? &pk : nullptr, scope, Update{type, op});
}

// What an accumulate in the layout form checks before its layout is measured: the
// target, whose engine must apply `type` (else OSCF_ERR_UNSUPPORTED: the caller cuts
// segments), a request's epoch, and that no piece splits an element.
int oscf_win::check_acc_layout(int target, const oscf_run *runs, size_t n, oscf_type type, const char *what,
                               const oscf_notify *notify) {
    int rc = check_target(target);
    if (rc) return rc;
    if (!engine_applies(target, type)) return OSCF_ERR_UNSUPPORTED;
    if (notify && (rc = check_request_epoch(target, what))) return rc;
    const size_t size = type_size(type);
    for (size_t i = 0; i < n; ++i)
        if (runs[i].len % size) return usage_error(OSCF_ERR_TYPE, "%s: a piece splits an element", what);
    return OSCF_OK;
}

bool oscf_win::engine_applies(int target, oscf_type type) const {
    return target >= 0 && target < size_ && acc_route(peer(target), target, type) == AccRoute::message;
}

// Checks every byte against the target's window and finds what turns the runs' offsets
// into the target's (AmHeader::offset). One check covers them all, except on a dynamic
// window whose pieces lie in regions with gaps between: those are checked one by one.
int oscf_win::layout_delta(Guard &lk, int target, int64_t disp, const oscf_run *runs, size_t n, int64_t lo,
                           int64_t hi, const char *what, uint64_t *delta) {
    const size_t span = static_cast<size_t>(hi - lo);
    Where w;
    int rc = resolve(lk, target, disp, lo, span, what, &w);
    if (rc == OSCF_OK && w.span == span) {
        *delta = w.am_offset - static_cast<uint64_t>(lo);
        return OSCF_OK;
    }
    if (flavor_ != OSCF_FLAVOR_DYNAMIC) return rc;
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < runs[i].count && runs[i].len; ++j) {
            int64_t at = runs[i].offset + runs[i].stride * static_cast<int64_t>(j);
            for (size_t left = runs[i].len; left > 0; left -= w.span, at += static_cast<int64_t>(w.span))
                if ((rc = resolve(lk, target, disp, at, left, what, &w))) return rc;
        }
    }
    *delta = static_cast<uint64_t>(disp);  // a dynamic window's offsets are addresses
    return OSCF_OK;
}

// Ourselves or an on-node peer whose memory we map or reach by cross-memory attach:
// pack into one buffer and copy the pieces at once (rma.cpp / route.cpp), then unpack.
// The buffer is the engine's kept copy (staging_pool.h): a fresh one costs a page fault
// a page on every call.
int oscf_win::staged_transfer(Guard &lk, Dir dir, int target, const oscf_run *runs, size_t n, int64_t disp,
                              size_t bytes, const oscf_packer &pk, const oscf_notify *notify) {
    CopyLease stage_copy(eng_.buffers);
    int rc = stage_copy.take(fab(), bytes);
    if (rc) return rc;
    uint8_t *const stage = stage_copy.data();
    if (dir == Dir::write && pk.pack(pk.arg, stage, bytes) != OSCF_OK) return OSCF_ERR_INTERNAL;
    std::vector<oscf_segment> segs;
    size_t pos = 0;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < runs[i].count && runs[i].len; ++j, pos += runs[i].len)
            segs.push_back(oscf_segment{
                stage + pos, runs[i].offset + runs[i].stride * static_cast<int64_t>(j), runs[i].len});
    // Copies, made before transfer_all returns, unless the kernel refused cross-memory
    // attach (route.cpp): then the fabric moves the pieces. Either way they are in place
    // once this call's own completion fires; the peer's counter would also wait for its
    // other operations. On the heap: should the wait fail (the fabric broken), the call
    // returns while its pieces may still complete, and the last of them frees this and
    // the copy.
    struct Landed {
        bool done = false, abandoned = false;
        int status = OSCF_OK;
        Staging copy;
        static void fire(void *arg, int status) {
            auto *l = static_cast<Landed *>(arg);
            if (l->abandoned) {
                delete l;
                return;
            }
            l->status = status;
            l->done = true;
        }
    };
    auto *landed = new Landed;
    const oscf_notify own{&Landed::fire, landed};
    rc = transfer_all(lk, dir, target, segs.data(), segs.size(), disp, &own);
    if (rc) {  // nothing of it in flight: transfer_all waited for what it posted
        delete landed;
        return rc;
    }
    rc = progress().wait_until(lk, [landed] { return landed->done; });
    if (rc && !landed->done) {
        landed->copy = stage_copy.release();
        landed->abandoned = true;
        return rc;
    }
    if (!rc) rc = landed->status;
    delete landed;
    if (!rc && dir == Dir::read && pk.unpack(pk.arg, stage, bytes) != OSCF_OK) rc = OSCF_ERR_INTERNAL;
    if (!rc && notify) notify->fn(notify->arg, OSCF_OK);
    return rc;
}

int oscf_win::scatter(Peer &p, const oscf_run *runs, size_t n, uint64_t delta, const oscf_packer &pk,
                      OpScope &scope, Update u) {
    int rc = send_batch(p);
    if (rc) return rc;
    if (!pack_buffer_) pack_buffer_.reset(new uint8_t[kAmMaxPayload]);
    RunCursor cursor(runs, n, delta, type_size(u.type));
    RunList sub;
    while (!cursor.done()) {
        const size_t data = cursor.next(sub, RunCursor::shared(kAmMaxPayload));
        if (pk.pack(pk.arg, pack_buffer_.get(), data) != OSCF_OK) return OSCF_ERR_INTERNAL;
        const bool last = cursor.done();
        AmHeader h = am_request(p, kAmScatter, u.type, u.op, last ? 0 : kAmNoReply, sub.count(), sub.pad());
        if (last) {
            h.token = eng_.am->new_request(scope.context(), nullptr, 0);
            scope.on_post();
        }
        ++stats.layout_messages;
        rc = eng_.am->send(p.addr, h, sub.data(), sub.bytes(), pack_buffer_.get(), data);
        if (rc) {
            if (last) scope.context()->complete(rc, 0);  // no reply will come
            return rc;
        }
    }
    return OSCF_OK;
}

int oscf_win::gather_runs(Peer &p, const oscf_run *runs, size_t n, uint64_t delta, size_t bytes,
                          const oscf_packer &pk, OpScope &scope) {
    auto *reply = new GatherRunsReply(bytes, pk, scope.context());
    scope.on_post();
    int rc = send_batch(p);
    RunCursor cursor(runs, n, delta);
    RunList sub;
    for (size_t pos = 0; !rc && !cursor.done();) {
        const size_t data = cursor.next(sub, RunCursor::split(kAmMaxPayload));
        AmHeader h =
            am_request(p, kAmGatherRuns, OSCF_TYPE_UINT8, OSCF_OP_NO_OP, kAmFetch, sub.count(), sub.pad());
        reply->expect();
        h.token = eng_.am->new_request(reply, reply->at(pos), data);
        ++stats.layout_messages;
        rc = eng_.am->send(p.addr, h, sub.data(), sub.bytes());
        if (rc) reply->complete(rc, 0);  // no reply will come
        pos += data;
    }
    reply->complete(rc, 0);  // every message is out
    return rc;
}

// Each message is answered with its pieces' old values, in the order of the pieces: the
// reply of a get's kAmGatherRuns, applied as an accumulate's kAmScatter.
int oscf_win::fetch_scatter(Peer &p, const oscf_run *runs, size_t n, uint64_t delta, size_t bytes,
                            const oscf_packer *origin, const oscf_packer &result, OpScope &scope, Update u) {
    auto *reply = new GatherRunsReply(bytes, result, scope.context());
    scope.on_post();
    if (origin && !pack_buffer_) pack_buffer_.reset(new uint8_t[kAmMaxPayload]);
    RunCursor cursor(runs, n, delta, type_size(u.type));
    RunList sub;
    int rc = OSCF_OK;
    for (size_t pos = 0; !rc && !cursor.done();) {
        // The origin's elements ride with the runs; the old values fill the reply.
        const size_t data =
            cursor.next(sub, origin ? RunCursor::shared(kAmMaxPayload) : RunCursor::split(kAmMaxPayload));
        if (origin && origin->pack(origin->arg, pack_buffer_.get(), data) != OSCF_OK) {
            rc = OSCF_ERR_INTERNAL;
            break;
        }
        AmHeader h = am_request(p, kAmScatter, u.type, u.op, kAmFetch, sub.count(), sub.pad());
        reply->expect();
        h.token = eng_.am->new_request(reply, reply->at(pos), data);
        ++stats.layout_messages;
        rc = eng_.am->send(p.addr, h, sub.data(), sub.bytes(), origin ? pack_buffer_.get() : nullptr,
                           origin ? data : 0);
        if (rc) reply->complete(rc, 0);  // no reply will come
        pos += data;
    }
    reply->complete(rc, 0);  // every message is out
    return rc;
}

int oscf_win::serve_scatter(const AmHeader &h, const uint8_t *payload, size_t len, uint8_t *old_out,
                            size_t *old_len) {
    if (h.flags & kAmFetch) {
        const uint64_t desc = h.offset;  // the runs' bytes
        if (desc > len) return OSCF_ERR_ARG;
        OldValues old{old_out, kAmMaxPayload};
        const int rc =
            scatter_pieces(payload, desc, h.count, payload + desc, len - desc,
                           Update{static_cast<oscf_type>(h.type), static_cast<oscf_op>(h.op)}, &old);
        *old_len = old.len;
        return rc;
    }
    int rc = scatter_here(h, payload, len);
    // Only an operation's last message is answered: it reports the first failure of
    // the silent ones before it (served in order, the same origin's stream).
    if (h.flags & kAmNoReply) {
        if (rc != OSCF_OK) scatter_errors_.emplace(h.origin_rank, rc);
        return rc;
    }
    auto earlier = scatter_errors_.find(h.origin_rank);
    if (earlier != scatter_errors_.end()) {
        rc = earlier->second;
        scatter_errors_.erase(earlier);
    }
    return rc;
}

int oscf_win::scatter_here(const AmHeader &h, const uint8_t *payload, size_t len) {
    const uint64_t desc = h.offset;  // the runs' bytes
    if (desc > len) return OSCF_ERR_ARG;
    return scatter_pieces(payload, desc, h.count, payload + desc, len - desc,
                          Update{static_cast<oscf_type>(h.type), static_cast<oscf_op>(h.op)});
}

int oscf_win::serve_gather_runs(const AmHeader &h, const uint8_t *payload, size_t len, uint8_t *out,
                                size_t *out_len) {
    *out_len = 0;
    if (len != h.offset) return OSCF_ERR_ARG;  // the runs, and nothing else
    return gather_pieces(payload, len, h.count, out, kAmMaxPayload, out_len);
}

int oscf_win::scatter_pieces(const uint8_t *desc, size_t desc_len, uint32_t n, const uint8_t *data,
                             size_t len, Update u, OldValues *old) {
    // An accumulate's pieces are whole elements, applied as every emulated accumulate is;
    // a NO_OP brings no data and only fetches.
    const bool no_op = u.op == OSCF_OP_NO_OP;
    if (old) old->len = 0;
    if ((old || !u.copy()) && (!valid_type(u.type) || !valid_op(u.op) || !op_allowed(u.op, u.type) ||
                               (no_op && (!old || len != 0))))
        return OSCF_ERR_ARG;
    auto where = [this](uint64_t offset, size_t bytes) { return am_target(false, offset, bytes); };
    if (u.copy() && !old) {
        // A put: each run's pieces straight from the packed bytes, in one loop.
        int rc = each_run(desc, desc_len, n, where,
                          [&](char *t, int64_t stride, size_t bytes, size_t count) -> int {
                              if (bytes * count > len) return OSCF_ERR_ARG;
                              copy_pieces(reinterpret_cast<uint8_t *>(t), stride, data,
                                          static_cast<int64_t>(bytes), bytes, count);
                              data += bytes * count;
                              len -= bytes * count;
                              return OSCF_OK;
                          });
        return rc == OSCF_OK && len != 0 ? OSCF_ERR_ARG : rc;
    }
    const size_t size = type_size(u.type);
    size_t fetched = 0;
    // A run's pieces are all of one length: checked once, not piece by piece.
    int rc =
        each_run(desc, desc_len, n, where, [&](char *t, int64_t stride, size_t bytes, size_t count) -> int {
            const size_t total = bytes * count;
            if (bytes % size || (!no_op && total > len) || (old && total > old->cap - fetched))
                return OSCF_ERR_ARG;
            const size_t elements = bytes / size;
            for (size_t j = 0; j < count; ++j, t += stride) {
                char *prev = old ? reinterpret_cast<char *>(old->out + fetched) : nullptr;
                apply_here(u.op, u.type, t, no_op ? nullptr : reinterpret_cast<const char *>(data), prev,
                           elements);
                fetched += bytes;
                if (!no_op) {
                    data += bytes;
                    len -= bytes;
                }
            }
            return OSCF_OK;
        });
    if (rc == OSCF_OK && len != 0) rc = OSCF_ERR_ARG;
    if (old && rc == OSCF_OK) old->len = fetched;
    return rc;
}

int oscf_win::gather_pieces(const uint8_t *desc, size_t desc_len, uint32_t n, uint8_t *out, size_t cap,
                            size_t *out_len) {
    size_t total = 0;
    auto where = [this](uint64_t offset, size_t bytes) { return am_target(false, offset, bytes); };
    int rc = each_run(desc, desc_len, n, where,
                      [&](const char *t, int64_t stride, size_t bytes, size_t count) -> int {
                          if (bytes * count > cap - total) return OSCF_ERR_ARG;
                          copy_pieces(out + total, static_cast<int64_t>(bytes),
                                      reinterpret_cast<const uint8_t *>(t), stride, bytes, count);
                          total += bytes * count;
                          return OSCF_OK;
                      });
    *out_len = rc == OSCF_OK ? total : 0;
    return rc;
}
