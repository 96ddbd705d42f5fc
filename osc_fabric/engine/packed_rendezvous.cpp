// Large packed puts and gets (packed_layout.cpp) by rendezvous. Messages of a few KiB
// cost the provider a send and a receive each, over tcp a system call at both ends; the
// bytes of a large derived-datatype put or get move faster as a few large RMA transfers.
//   put: the origin writes each chunk's runs and packs its bytes behind them, into one
//        buffer it registers; each kAmScatterPull names a chunk (AmPull). The target
//        reads the chunk with fi_read, copies its pieces to their places, and answers.
//   get: each kAmGatherPush carries a chunk's runs (a chunk ends before they pass
//        kInlineRunsMax) and names the room for its bytes in the origin's buffer, which
//        holds bytes only; the target copies the pieces out, writes them there
//        (fi_write, delivery complete), and answers. The origin unpacks each chunk once
//        it and those before it are answered.
//   get_accumulate (an accumulate is a put whose target applies the elements): each
//        kAmScatterPull|kAmFetch names the chunk, as a put's (a NO_OP's is its runs
//        only), and the room for its old values behind it in the same buffer; the
//        target reads the chunk, applies it under its lock, writes the old values into
//        the room and answers. The origin unpacks them as a get's bytes.
// A put's runs travel with its bytes: a layout of tiny irregular pieces has as many
// bytes of runs as of data, and messages of runs would cost a round trip each.
// A layout that is one block at the target (a scattered origin) needs no rendezvous: the
// origin moves the block by RMA of its copy itself (packed_rma).
// Chunks pipeline: the target reads one while the origin packs the next, serving that
// read between slices of its packing (pack_serving). While a chunk is being served,
// later requests of the same origin wait (kAmLater, am.h), so program order at the
// target (an unlock behind the put) is kept. A put's chunk that says the
// next request is the same put's next chunk (kAmChunkFollows) lets it in at once: the
// target reads up to kChunksAheadMax chunks back to back, and answers the chunk behind
// them only when they are all in place. Over tcp the transfers then follow each other
// instead of waiting a round trip and a copy each.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "am.h"
#include "packed_parts.h"
#include "atomic_types.h"
#include "run_codec.h"
#include "run_cursor.h"
#include "window.h"

using namespace oscf;

namespace {

// While a chunk is packed, a progress round serves the reads of those before it once
// this much time has passed since the last, checked after each slice of this many bytes
// (pack_serving).
constexpr auto kServeEvery = std::chrono::microseconds(20);
constexpr size_t kPackSlice = 64 * 1024;

// Packs len bytes at dst. With chunks out before this one (serve), their reads are served
// meanwhile: over tcp;ofi_rxm the provider sends what a target reads only inside our
// progress, and a chunk of tiny pieces keeps the convertor busy long enough that the
// target would otherwise read the chunk before only after this one is packed, and place
// it while we wait (perf/README.md, "Measurements behind design choices"). A round costs
// a CQ read, so a chunk that packs fast gets few.
int pack_serving(const oscf_packer &pk, uint8_t *dst, size_t len, Progress *serve) {
    using clock = std::chrono::steady_clock;
    auto last = clock::now();
    for (size_t done = 0; done < len;) {
        const size_t part = serve ? std::min(kPackSlice, len - done) : len - done;
        if (pk.pack(pk.arg, dst + done, part) != OSCF_OK) return OSCF_ERR_INTERNAL;
        done += part;
        if (serve && done < len && clock::now() - last >= kServeEvery) {
            serve->run_locked();
            last = clock::now();
        }
    }
    return OSCF_OK;
}

}  // namespace

// The origin's side of one operation: its registered copy, which goes back to the engine
// once every chunk is answered (PackedParts does the rest). A get's chunks are unpacked
// as soon as they and every chunk before them are answered, while the target still
// writes the later ones: the origin would otherwise unpack them all after the last.
// The copy is one block sized ahead (open), or where the runs' size is not known ahead
// (a streamed put) a slot per chunk (open_slot): chunk k at k * kRendezvousChunkMax.
class oscf_win::RendezvousOrigin final : public PackedParts {
public:
    RendezvousOrigin(oscf_win &win, bool get, const oscf_packer &pk, Completion *next)
        : PackedParts(pk, next), pool_(win.eng_.buffers), get_(get) {}
    int open(oscf_win &win, size_t bytes) {
        blocks_.emplace_back();
        return pool_.take_copy(win.fab(), bytes, &blocks_.back());
    }
    int open_slot(oscf_win &win) {
        slot_ = kRendezvousChunkMax;
        blocks_.emplace_back();
        return pool_.take_slot(win.fab(), &blocks_.back());
    }
    uint8_t *at(size_t pos) { return blocks_[block(pos)].mem.get() + offset(pos); }
    AmPull chunk(const Fabric &fab, size_t pos, size_t bytes) const {
        const Staging &b = blocks_[block(pos)];
        const uint64_t base = fab.contract().virt_addr ? reinterpret_cast<uint64_t>(b.mem.get()) : 0;
        return AmPull{base + offset(pos), b.key, bytes};
    }
    // A chunk's bytes are at pos, len of them: a get unpacks them in this order. Returns
    // what its answer completes.
    Completion *add_chunk(size_t pos, size_t len) {
        if (get_) unpack_later(at(pos), len);
        expect();
        answered_.push_back(false);
        return new Answer(*this, answered_.size() - 1);
    }

    // Gives back the slots of a streamed put's chunks answered in order (those before
    // them too); returns how many it still holds.
    size_t give_back_answered() {
        for (; recycled_ < in_order_; ++recycled_) pool_.give_back(std::move(blocks_[recycled_]), true);
        return blocks_.size() - recycled_;
    }
    // A chunk's answer said it failed: the operation has failed.
    int failure() const { return failure_; }

private:
    // One chunk's answer: tells the operation which chunk it was.
    class Answer final : public Completion {
    public:
        Answer(RendezvousOrigin &op, size_t index) : op_(op), index_(index) {}
        void complete(int status, size_t) override {
            RendezvousOrigin &op = op_;
            const size_t index = index_;
            delete this;
            op.answered(index, status);
        }

    private:
        RendezvousOrigin &op_;
        size_t index_;
    };

    void answered(size_t index, int status) {
        if (status != OSCF_OK && failure_ == OSCF_OK) failure_ = status;
        if (status == OSCF_OK) {
            answered_[index] = true;
            while (in_order_ < answered_.size() && answered_[in_order_]) ++in_order_;
            if (get_) unpack_upto(in_order_);
        }
        complete(status, 0);
    }
    // A position just past a slot's end (an empty pull's) stays in that slot.
    size_t block(size_t pos) const { return slot_ ? std::min(pos / slot_, blocks_.size() - 1) : 0; }
    size_t offset(size_t pos) const { return pos - block(pos) * slot_; }
    void done() override {
        for (Staging &b : blocks_) pool_.give_back(std::move(b), slot_ != 0);
    }

    StagingPool &pool_;
    bool get_;
    std::vector<Staging> blocks_;  // each chunk's runs, then its bytes
    size_t slot_ = 0;              // a slot's bytes; 0: one block
    std::vector<bool> answered_;   // per chunk
    size_t in_order_ = 0;          // chunks answered, every one before them too
    size_t recycled_ = 0;          // slots given back: those of the chunks before this
    int failure_ = OSCF_OK;        // the first answer's failure
};

// The target's side of one chunk, until the origin is answered:
//   put: read the runs and bytes, fill the pieces (an accumulate's: apply them);
//   get: copy out the pieces its request's runs name, write those bytes back;
//   get_accumulate: read and apply as a put's accumulate, then write the old values.
// Finds its window by id after each transfer: one freed meanwhile (an erroneous
// program) just drops the chunk.
class oscf_win::RendezvousTarget final : public Completion {
public:
    RendezvousTarget(oscf_win &win, const AmHeader &h, const AmPull &chunk, const AmPull &room,
                     fi_addr_t origin)
        : am_(*win.eng_.am),
          window_id_(h.window_id),
          origin_rank_(h.origin_rank),
          token_(h.token),
          scatter_(h.opcode == kAmScatterPull),
          update_{static_cast<oscf_type>(h.type), static_cast<oscf_op>(h.op)},
          count_(h.count),
          chunk_(chunk),
          room_(room),
          fetch_(scatter_ && (h.flags & kAmFetch)),
          origin_(origin),
          desc_(scatter_ ? h.offset : 0),
          data_(win.eng_.buffers.take_chunk_buffer(desc_ + chunk.bytes)) {}
    // A put chunk with more behind it: read while the origin's next requests are served
    // (kAmDetached), when the origin has fewer than kChunksAheadMax so.
    bool read_ahead(oscf_win &win) {
        size_t &ahead = win.chunks_ahead_[origin_rank_];
        ahead_ = ahead < kChunksAheadMax;
        ahead += ahead_;
        if (ahead == 0) win.chunks_ahead_.erase(origin_rank_);
        return ahead_;
    }
    // A put's (or get_accumulate's) first step: read its runs and bytes.
    int read(oscf_win *win) { return transfer(win, data_.get(), chunk_, desc_ + chunk_.bytes, false); }

    // Posts the transfer of len bytes between local and the origin's `remote` (a write
    // when `write`), in parts of at most max_msg_size. Returns kAmLater while it is in
    // flight; when every post failed at once, their error.
    int transfer(oscf_win *win, uint8_t *local, const AmPull &remote, size_t len, bool write) {
        pending_ = 1;
        status_ = OSCF_OK;
        const size_t max = win->fab().contract().max_msg_size;
        for (size_t done = 0; done < len;) {
            const size_t part = std::min(len - done, max);
            ++pending_;
            win->progress().post_or_defer(
                write ? "fi_writemsg" : "fi_readmsg",
                [this, win, write, local, remote, done, part] {
                    return win->fab().rma(write, local + done, part, origin_, remote.addr + done, remote.key,
                                          this, nullptr);
                },
                [this](int err) { complete(err, 0); });
            done += part;
        }
        return --pending_ > 0 ? kAmLater : status_;
    }
    void complete(int status, size_t) override {
        if (status != OSCF_OK && status_ == OSCF_OK) status_ = status;
        if (--pending_ > 0) return;
        oscf_win *win = am_.window(window_id_);
        if (!win) {
            delete this;
            return;
        }
        if (status_ == OSCF_OK && fetch_ && !old_) {
            // A get_accumulate's chunk is in: apply it, then write the old values back.
            old_ = win->eng_.buffers.take_chunk_buffer(room_.bytes);
            OldValues old{old_.get(), room_.bytes};
            status_ = win->scatter_pieces(data_.get(), desc_, count_, data_.get() + desc_, chunk_.bytes,
                                          update_, &old);
            if (status_ == OSCF_OK && old.len != room_.bytes) status_ = OSCF_ERR_ARG;
            if (status_ == OSCF_OK) {
                const int rc = transfer(win, old_.get(), room_, room_.bytes, true);
                if (rc == kAmLater) return;  // complete() again when it is written
                status_ = rc;
            }
        } else if (status_ == OSCF_OK && scatter_ && !fetch_) {
            status_ =
                win->scatter_pieces(data_.get(), desc_, count_, data_.get() + desc_, chunk_.bytes, update_);
        }
        finish(*win, status_);
        win->eng_.buffers.keep_chunk_buffer(data_, desc_ + chunk_.bytes);
        if (old_) win->eng_.buffers.keep_chunk_buffer(old_, room_.bytes);
        delete this;
    }

    // A get: copies the pieces its request's runs (runs_len bytes) name out, and writes
    // them back. kAmLater while the write is in flight.
    int gather(oscf_win *win, const uint8_t *runs, size_t runs_len) {
        size_t got = 0;
        int rc = win->gather_pieces(runs, runs_len, count_, data_.get(), chunk_.bytes, &got);
        if (rc == OSCF_OK && got != chunk_.bytes) rc = OSCF_ERR_ARG;
        return rc == OSCF_OK ? transfer(win, data_.get(), chunk_, chunk_.bytes, true) : rc;
    }

    // This chunk is in place (or never went): the last of its origin's answers the chunk
    // waiting behind them.
    void not_ahead(oscf_win &win) {
        if (!ahead_) return;
        ahead_ = false;
        auto ahead = win.chunks_ahead_.find(origin_rank_);
        if (--ahead->second > 0) return;
        win.chunks_ahead_.erase(ahead);
        auto behind = win.answers_behind_.find(origin_rank_);
        if (behind == win.answers_behind_.end()) return;
        const std::pair<uint64_t, int> answer = behind->second;
        win.answers_behind_.erase(behind);
        am_.answer(window_id_, origin_rank_, answer.first, answer.second);
    }

private:
    // Answers the origin, unless chunks read ahead of this one are still coming: then
    // the last of them answers for it.
    void finish(oscf_win &win, int status) {
        if (ahead_) {
            am_.reply(window_id_, origin_rank_, token_, status);
            not_ahead(win);
        } else if (win.chunks_ahead_.count(origin_rank_)) {
            win.answers_behind_[origin_rank_] = {token_, status};
        } else {
            am_.answer(window_id_, origin_rank_, token_, status);
        }
    }

    ActiveMessages &am_;
    uint64_t window_id_;
    uint32_t origin_rank_;
    uint64_t token_;
    bool scatter_;
    Update update_;
    uint32_t count_;
    AmPull chunk_;
    AmPull room_;  // a get_accumulate's: where its old values go
    bool fetch_;
    fi_addr_t origin_;
    size_t desc_;                      // a put's runs' bytes, read before its bytes; a get's 0
    std::unique_ptr<uint8_t[]> data_;  // a put's runs, then the bytes; a get's bytes
    std::unique_ptr<uint8_t[]> old_;   // a get_accumulate's old values, once applied
    size_t pending_ = 0;
    int status_ = OSCF_OK;
    bool ahead_ = false;  // counted in the window's chunks_ahead_
};

int oscf_win::rendezvous(Peer &p, Rendezvous kind, const oscf_run *runs, size_t n, size_t bytes, size_t wire,
                         uint64_t delta, const oscf_packer &pk, const oscf_packer *origin, OpScope &scope,
                         Update u) {
    RunCursor cursor(runs, n, delta, type_size(u.type));
    return rendezvous_cut(p, kind, cursor, bytes, wire, pk, origin, scope, u);
}

int oscf_win::rendezvous_cut(Peer &p, Rendezvous kind, RunCursor &cursor, size_t bytes, size_t wire,
                             const oscf_packer &pk, const oscf_packer *origin, OpScope &scope, Update u,
                             Guard *lk) {
    const bool put = kind == Rendezvous::put, get = kind == Rendezvous::get;
    const oscf_packer *packs = put ? &pk : get ? nullptr : origin;  // the bytes we send, if any
    // Each chunk is its runs, then the origin's bytes, together at most kRendezvousChunk
    // (the last up to kRendezvousChunkMax): a layout of many tiny pieces has as many bytes
    // of runs as of data, and they travel the same way. A get's runs ride in its request
    // instead (kInlineRunsMax), and our copy holds the room its bytes come back to; a
    // get_accumulate's holds both, the room for the old values behind the chunk (a
    // NO_OP's chunk, no bytes sent, has runs and room up to that size each).
    // Runs whose size is not known ahead (a put's, streamed) take a slot per chunk.
    RunList sub;
    const bool slots = wire == kWireUnknown && put;
    const size_t bound =
        slots || get ? 0 : RunCursor::shared_bound(wire, bytes, type_size(u.type), kRendezvousChunk);
    const size_t staged = slots ? kRendezvousChunkMax : put ? bound : get ? bytes : bound + bytes;
    auto *op = new RendezvousOrigin(*this, !put, pk, scope.context());
    scope.on_post();
    int rc = slots ? OSCF_OK : op->open(*this, staged);
    if (!rc) rc = send_batch(p);  // what is queued for the target leaves first
    size_t rest = bytes;
    for (size_t pos = 0, k = 0; !rc && !cursor.done(); ++k) {
        if (slots) {
            pos = k * kRendezvousChunkMax;
            // However large the put, its slots stay few and are the pool's kept ones: a
            // fresh slot costs a page fault a page, as much as packing into it.
            if (lk && (rc = progress().wait_until(
                           *lk, [op] { return op->give_back_answered() < kSlotsInFlight || op->failure(); })))
                break;
            if ((rc = op->failure()) || (rc = op->open_slot(*this))) break;
        }
        const size_t room = rest + kRunsAlign <= kRendezvousChunkMax - kRendezvousChunk / 16
                                ? kRendezvousChunkMax
                                : kRendezvousChunk;
        const size_t data = cursor.next(sub, get     ? RunCursor::Room{kInlineRunsMax, room, SIZE_MAX}
                                             : packs ? RunCursor::shared(room)
                                                     : RunCursor::split(room));
        const size_t desc = sub.pad();
        const size_t held = get ? 0 : desc;    // the runs in our copy
        const size_t sent = packs ? data : 0;  // the origin's bytes behind them
        const size_t back = put ? 0 : data;    // the room for what comes back
        const size_t end = (slots ? 0 : pos) + held + sent + back;
        if (end > staged || data > rest) {  // shared_bound or a source is wrong: never write past
            log(0,
                "rendezvous: a chunk ends %zu bytes in, past the %zu staged, or brings %zu of %zu bytes left",
                end, staged, data, rest);
            rc = OSCF_ERR_INTERNAL;
            break;
        }
        rest -= data;
        if (!get) std::memcpy(op->at(pos), sub.data(), desc);
        if (packs && (rc = pack_serving(*packs, op->at(pos + desc), data, pos > 0 ? &progress() : nullptr)))
            break;
        // The target reads the first (the runs and bytes; a get's writes its bytes there)
        // and writes a get_accumulate's old values into the second.
        const AmPull pulls[2] = {op->chunk(fab(), pos, get ? data : sent),
                                 op->chunk(fab(), pos + held + sent, back)};
        const size_t npulls = kind == Rendezvous::fetch ? 2 : 1;
        Completion *answer = op->add_chunk(pos + held + (put ? 0 : sent), data);
        // A put's chunks but the last may be read ahead of each other (no accumulate's:
        // its elements must be applied in order).
        const uint8_t flags = kind == Rendezvous::fetch           ? kAmFetch
                              : put && u.copy() && !cursor.done() ? kAmChunkFollows
                                                                  : 0;
        AmHeader h = am_request(p, get ? kAmGatherPush : kAmScatterPull, u.type, get ? OSCF_OP_NO_OP : u.op,
                                flags, sub.count(), desc);
        h.token = eng_.am->new_request(answer, nullptr, 0);
        ++stats.layout_messages;
        rc = eng_.am->send(p.addr, h, pulls, npulls * sizeof pulls[0], get ? sub.data() : nullptr,
                           get ? desc : 0);
        if (rc) answer->complete(rc, 0);  // no answer will come
        pos += held + sent + back;
        // The target's read of this chunk needs our provider's progress (tcp): give it
        // some before packing the next.
        if (!rc && !cursor.done()) progress().run_locked();
    }
    if (!rc && (rc = cursor.status()) == OSCF_OK && rest != 0) {
        log(0, "rendezvous: the runs brought %zu bytes fewer than the %zu announced", rest, bytes);
        rc = OSCF_ERR_INTERNAL;
    }
    op->complete(rc, 0);  // every chunk is out
    return rc;
}

// The target's layout is one block: no rendezvous, its bytes are RMA of our registered
// copy, in chunks so that a put packs the next while the provider sends the last and a
// get unpacks each as it arrives, in order. Like any RMA, it waits for our lock grant.
int oscf_win::packed_rma(Guard &lk, Peer &p, int target, Dir dir, int64_t disp, int64_t start, size_t bytes,
                         const oscf_packer &pk, OpScope &scope) {
    const bool put = dir == Dir::write;
    auto *op = new RendezvousOrigin(*this, !put, pk, scope.context());
    scope.on_post();
    int rc = op->open(*this, bytes);
    if (!rc) rc = await_grant(lk, p);
    const size_t most = std::min(fab().contract().max_msg_size, kRendezvousChunk);
    for (size_t pos = 0; !rc && pos < bytes;) {
        Where w;  // a dynamic window's regions cut it further
        rc = resolve(lk, target, disp, start + static_cast<int64_t>(pos), std::min(bytes - pos, most),
                     put ? "put" : "get", &w);
        if (!rc && put && pk.pack(pk.arg, op->at(pos), w.span) != OSCF_OK) rc = OSCF_ERR_INTERNAL;
        if (rc) break;
        Completion *done = op->add_chunk(pos, w.span);
        if ((rc = post_rma(p, put, op->at(pos), w.span, w.remote, w.key, done))) {
            done->complete(rc, 0);
            break;
        }
        pos += w.span;
    }
    op->complete(rc, 0);  // every chunk is out
    return rc;
}

int oscf_win::serve_rendezvous(const AmHeader &h, const uint8_t *payload, size_t len) {
    AmPull chunk, room{};
    const uint64_t desc = h.offset;                   // the runs' bytes
    const bool get = h.opcode == kAmGatherPush;       // its runs follow the AmPull
    const bool fetch = !get && (h.flags & kAmFetch);  // the room for its old values follows
    if (len != sizeof chunk + (get ? desc : 0) + (fetch ? sizeof room : 0) || (get && desc > kInlineRunsMax))
        return OSCF_ERR_ARG;
    std::memcpy(&chunk, payload, sizeof chunk);
    if (fetch) std::memcpy(&room, payload + sizeof chunk, sizeof room);
    // A fetching NO_OP's chunk is its runs only.
    if ((chunk.bytes == 0 && !(fetch && h.op == OSCF_OP_NO_OP)) || chunk.bytes > kPullChunkMax ||
        desc > kPullChunkMax - chunk.bytes || (fetch && (room.bytes == 0 || room.bytes > kPullChunkMax)))
        return OSCF_ERR_ARG;
    if (h.origin_rank >= peers_.size()) return OSCF_ERR_ARG;
    auto *t = new RendezvousTarget(*this, h, chunk, room, peer(h.origin_rank).addr);
    const bool ahead = h.opcode == kAmScatterPull && (h.flags & kAmChunkFollows) &&
                       h.type == OSCF_TYPE_UINT8 && h.op == OSCF_OP_REPLACE && t->read_ahead(*this);
    // A put reads its runs and bytes at once.
    const int rc = get ? t->gather(this, payload + sizeof chunk, desc) : t->read(this);
    if (rc == kAmLater) return ahead ? kAmDetached : kAmLater;
    t->not_ahead(*this);  // nothing in flight: the message layer answers now
    delete t;
    return rc;
}
