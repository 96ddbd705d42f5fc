// Large packed puts and gets (packed_layout.cpp) by rendezvous. Messages of a few KiB
// cost the provider a send and a receive each, over tcp a system call at both ends; the
// bytes of a large derived-datatype put or get move faster as a few large RMA transfers.
//   put: the origin packs into one buffer it registers, in chunks; each kAmScatterPull
//        names a chunk (AmPull) and carries its runs. The target reads the chunk with
//        fi_read, copies its pieces to their places, and answers.
//   get: each kAmGatherPush names where in the origin's registered buffer a chunk's bytes
//        go and carries its runs; the target copies the pieces out, writes them there
//        (fi_write, delivery complete), and answers. After the last answer the origin
//        unpacks.
// Chunks pipeline: the target reads one while the origin packs the next. While a chunk
// is being served, later requests of the same origin wait (kAmLater, am.h), so program
// order at the target (an unlock behind the put) is kept.
#include <cstring>
#include <memory>
#include <vector>

#include "am.h"
#include "run_cursor.h"
#include "window.h"

using namespace oscf;

namespace {

// Kept for the next operation up to this size; a larger one is freed when done.
constexpr size_t kStagingKeepMax = 16 * kRendezvousChunk;
// Chunk buffers a target keeps: one per chunk in flight from a typical operation.
constexpr size_t kChunkBuffersKept = 8;

}  // namespace

// The origin's side of one operation: its registered copy and the answers it waits for.
// After the last (and the sender's own part), a get unpacks, the packer is released, the
// copy goes back to the window and the operation's counter or request completes. Owns
// itself until then.
class oscf_win::RendezvousOrigin final : public Completion {
public:
    RendezvousOrigin(oscf_win &win, bool get, size_t bytes, const oscf_packer &pk, Completion *next)
        : am_(*win.eng_.am), window_id_(win.id_), get_(get), bytes_(bytes), pk_(pk), next_(next) {}
    int open(oscf_win &win) { return win.take_staging(bytes_, &staging_); }
    uint8_t *at(size_t pos) { return staging_.mem.get() + pos; }
    AmPull chunk(const Fabric &fab, size_t pos, size_t bytes) const {
        const uint64_t base = fab.limits().virt_addr ? reinterpret_cast<uint64_t>(staging_.mem.get()) : 0;
        return AmPull{base + pos, staging_.key, bytes};
    }
    void expect() { ++pending_; }
    void complete(int status, size_t) override {
        if (status != OSCF_OK && status_ == OSCF_OK) status_ = status;
        if (--pending_ > 0) return;
        if (get_ && status_ == OSCF_OK && pk_.unpack(pk_.arg, staging_.mem.get(), bytes_) != OSCF_OK)
            status_ = OSCF_ERR_INTERNAL;
        if (pk_.release) pk_.release(pk_.arg);
        oscf_win *win = am_.window(window_id_);
        if (win && staging_.mr && staging_.cap <= kStagingKeepMax && win->staging_.cap < staging_.cap)
            win->staging_ = std::move(staging_);
        Completion *next = next_;
        const int st = status_;
        delete this;
        next->complete(st, 0);
    }

private:
    ActiveMessages &am_;
    uint64_t window_id_;
    bool get_;
    size_t bytes_;
    Staging staging_;
    oscf_packer pk_;
    Completion *next_;
    size_t pending_ = 1;  // the sender's part, until every chunk is out
    int status_ = OSCF_OK;
};

// The window's kept copy when it is large enough, else a new one, registered.
int oscf_win::take_staging(size_t bytes, Staging *out) {
    if (staging_.cap >= bytes) {
        *out = std::move(staging_);
        staging_ = Staging{};
        return OSCF_OK;
    }
    out->mem.reset(new uint8_t[bytes]);
    out->cap = bytes;
    return fab().register_memory(out->mem.get(), bytes, out->mr, &out->key);
}

// The target's side of one chunk: its runs and bytes, until the transfer completes; then
// (a put) the pieces are filled, and the origin is answered. Finds its window by id at
// the end: one freed meanwhile (an erroneous program) just drops the chunk.
class oscf_win::RendezvousTarget final : public Completion {
public:
    RendezvousTarget(oscf_win &win, const AmHeader &h, const uint8_t *runs, size_t bytes)
        : am_(*win.eng_.am), window_id_(h.window_id), origin_(h.origin_rank), token_(h.token),
          scatter_(h.opcode == kAmScatterPull), count_(h.count),
          runs_(runs, runs + size_t{h.count} * sizeof(AmRun)), bytes_(bytes) {
        if (bytes <= kRendezvousChunk && !win.chunk_buffers_.empty()) {
            data_ = std::move(win.chunk_buffers_.back());
            win.chunk_buffers_.pop_back();
        } else {
            data_.reset(new uint8_t[bytes <= kRendezvousChunk ? kRendezvousChunk : bytes]);
        }
    }
    uint8_t *data() { return data_.get(); }
    const uint8_t *runs() const { return runs_.data(); }
    uint32_t count() const { return count_; }
    void expect() { ++pending_; }
    // After the last post: kAmLater while transfers are in flight; when every post
    // failed at once, their error, answered by the caller (the job is gone).
    int posted() {
        if (--pending_ > 0) return kAmLater;
        const int st = status_;
        delete this;
        return st;
    }
    void complete(int status, size_t) override {
        if (status != OSCF_OK && status_ == OSCF_OK) status_ = status;
        if (--pending_ > 0) return;
        oscf_win *win = am_.window(window_id_);
        if (win && scatter_ && status_ == OSCF_OK)
            status_ = win->scatter_pieces(runs_.data(), count_, data_.get(), bytes_);
        if (win && bytes_ <= kRendezvousChunk && win->chunk_buffers_.size() < kChunkBuffersKept)
            win->chunk_buffers_.push_back(std::move(data_));
        if (win) am_.answer(window_id_, origin_, token_, status_);
        delete this;
    }

private:
    ActiveMessages &am_;
    uint64_t window_id_;
    uint32_t origin_;
    uint64_t token_;
    bool scatter_;
    uint32_t count_;
    std::vector<uint8_t> runs_;
    std::unique_ptr<uint8_t[]> data_;
    size_t bytes_;
    size_t pending_ = 1;  // the server's part, until every transfer is posted (posted())
    int status_ = OSCF_OK;
};

int oscf_win::rendezvous(Peer &p, Dir dir, const oscf_run *runs, size_t n, uint64_t delta,
                         size_t bytes, const oscf_packer &pk, OpScope &scope) {
    const bool put = dir == Dir::write;
    auto *op = new RendezvousOrigin(*this, !put, bytes, pk, scope.context());
    scope.on_post();
    int rc = op->open(*this);
    if (!rc) rc = send_batch(p);  // what is queued for the target leaves first
    RunCursor cursor(runs, n, delta);
    std::vector<AmRun> sub;
    const RunCursor::Room room{kAmMaxPayload - sizeof(AmPull), kRendezvousChunk, SIZE_MAX};
    for (size_t pos = 0; !rc && !cursor.done();) {
        const size_t data = cursor.next(sub, room);
        if (put && pk.pack(pk.arg, op->at(pos), data) != OSCF_OK) {
            rc = OSCF_ERR_INTERNAL;
            break;
        }
        const AmPull chunk = op->chunk(fab(), pos, data);
        AmHeader h = am_request(p, put ? kAmScatterPull : kAmGatherPush, OSCF_TYPE_UINT8,
                                put ? OSCF_OP_REPLACE : OSCF_OP_NO_OP, 0, static_cast<uint32_t>(sub.size()), 0);
        op->expect();
        h.token = eng_.am->new_request(op, nullptr, 0);
        ++stats.layout_messages;
        rc = eng_.am->send(p.addr, h, &chunk, sizeof chunk, sub.data(), sub.size() * sizeof(AmRun));
        if (rc) op->complete(rc, 0);  // no answer will come
        pos += data;
        // The target's read of this chunk needs our provider's progress (tcp): give it
        // some before packing the next.
        if (!rc && !cursor.done()) progress().run_locked();
    }
    op->complete(rc, 0);  // every chunk is out
    return rc;
}

int oscf_win::serve_rendezvous(const AmHeader &h, const uint8_t *payload, size_t len) {
    AmPull chunk;
    if (len < sizeof chunk || len - sizeof chunk != size_t{h.count} * sizeof(AmRun)) return OSCF_ERR_ARG;
    std::memcpy(&chunk, payload, sizeof chunk);
    if (chunk.bytes == 0 || chunk.bytes > kPullChunkMax) return OSCF_ERR_ARG;
    if (h.origin_rank >= peers_.size()) return OSCF_ERR_ARG;
    const fi_addr_t origin = peers_[h.origin_rank].addr;
    auto job = std::make_unique<RendezvousTarget>(*this, h, payload + sizeof chunk, chunk.bytes);
    const bool put = h.opcode == kAmScatterPull;
    if (!put) {
        size_t got = 0;
        int rc = gather_pieces(job->runs(), job->count(), job->data(), chunk.bytes, &got);
        if (rc == OSCF_OK && got != chunk.bytes) rc = OSCF_ERR_ARG;
        if (rc) return rc;  // answered now
    }
    RendezvousTarget *t = job.release();  // completes (and answers) from here on
    const size_t max = fab().limits().max_msg_size;
    for (size_t done = 0; done < chunk.bytes;) {
        const size_t part = std::min<size_t>(chunk.bytes - done, max);
        t->expect();
        progress().post_or_defer(
            put ? "fi_readmsg" : "fi_writemsg",
            [this, t, put, done, part, origin, chunk] {
                return fab().rma(!put, t->data() + done, part, origin, chunk.addr + done, chunk.key, t, nullptr);
            },
            [t](int err) { t->complete(err, 0); });
        done += part;
    }
    return t->posted();
}
