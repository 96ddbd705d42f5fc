// Coalescing of emulated accumulates. A non-fetching MPI_Accumulate on the
// active-message path needs no reply of its own, only completion by the next flush, so
// consecutive ones to one target are appended to a per-target buffer and leave as one
// kAmBatch message: when the buffer is full, before any other active message to that
// target (so arrival order is still program order), and before every completion wait
// (wait_idle), which is what every flush, unlock, fence and complete goes through.
// The target applies the records in order under its engine lock, so each stays atomic
// per element and the batch keeps the ordering a run of separate messages would have.
//
// Why: on providers that write one socket message per send (tcp;ofi_rxm) the post
// costs microseconds; a batch pays it once for hundreds of accumulates.
#include <algorithm>
#include <cstring>

#include "atomic_types.h"
#include "window.h"

using namespace oscf;

int oscf_win::batch_accumulate(Peer &p, const char *origin, size_t count, oscf_type type, oscf_op op,
                               uint64_t offset) {
    const size_t size = type_size(type);
    const size_t per_record = AccumulateBatch::elements_per_record(size);
    for (size_t done = 0; done < count;) {
        const size_t n = std::min(count - done, per_record);
        const size_t bytes = n * size;
        if (!p.batch.fits(bytes)) {
            int rc = send_batch(p);
            if (rc) return rc;
        }
        list_for_sending(p);
        AmRecord r{};
        r.offset = offset + done * size;
        r.count = static_cast<uint32_t>(n);
        r.type = static_cast<uint8_t>(type);
        r.op = static_cast<uint8_t>(op);
        p.batch.append(r, origin + done * size, bytes);
        ++stats.am_requests;
        done += n;
    }
    return OSCF_OK;
}

void oscf_win::list_for_sending(Peer &p) {
    if (p.batch.list()) batched_.push_back(rank_of(p));
}

// Sends p's batch, carrying our unsent lock request (lock.cpp) if there is one; with no
// records, just the request. A nonzero `completes` is MPI_Win_complete's notification,
// set by the target after the records (pscw.cpp).
int oscf_win::send_batch(Peer &p, uint64_t completes) {
    if (p.batch.empty()) return p.lock.request_unsent() ? send_lock_request(p) : OSCF_OK;
    // Its records' bytes travel in it: nothing more is needed of us (Peer::streamed_acc).
    Completion *done = &p.streamed_acc;
    uint8_t flags = 0;
    if (p.lock.take_unsent_request()) {
        flags = p.lock.request_exclusive() ? kAmTakeExclusive : kAmTakeShared;
        done = &p.batch_and_grant;
    }
    // Set only at unlock, when this is the epoch's last batch to p (lock.cpp).
    flags |= p.lock.release_flags();
    if (completes) flags |= kAmBatchCompletes;
    AmHeader h =
        am_request(p, kAmBatch, OSCF_TYPE_UINT8, OSCF_OP_REPLACE, flags, p.batch.records(), completes);
    h.token = eng_.am->new_request(done, nullptr, 0);
    p.streamed_acc.on_post();
    ++stats.am_batches;
    // The provider copies the bytes or the send fails; either way the batch is empty
    // after it. p stays listed until send_batches(), which skips it if empty.
    int rc = eng_.am->send(p.addr, h, p.batch.data(), p.batch.bytes());
    p.batch.clear();
    if (rc) done->complete(rc, 0);  // no reply will come
    return rc;
}

int oscf_win::send_batches() {
    int first = OSCF_OK;
    for (int t : batched_) {
        Peer &p = peer(t);
        p.batch.unlist();
        int rc = send_batch(p);
        if (rc && first == OSCF_OK) first = rc;
    }
    batched_.clear();
    return first;
}

int oscf_win::serve_batch(const AmHeader &h, const uint8_t *payload, size_t len) {
    // The origin's lock request travels here: held (with the batch) until granted.
    if (h.flags & (kAmTakeShared | kAmTakeExclusive)) {
        int rc = grant_lock((h.flags & kAmTakeExclusive) != 0, h.origin_rank);
        if (rc != OSCF_OK) return rc;
    }
    const int status = apply_batch(h, payload, len);
    // Its unlock or complete may travel here too: either happens whatever became of the
    // records.
    if (h.flags & kAmReleases) drop_hold((h.flags & kAmReleaseExclusive) != 0);
    if (h.flags & kAmBatchCompletes)
        (void)note_complete(h.origin_rank, h.offset);  // the records' status rules
    return status;
}

int oscf_win::apply_batch(const AmHeader &h, const uint8_t *payload, size_t len) {
    int status = OSCF_OK;
    size_t at = 0;
    for (uint32_t i = 0; i < h.count; ++i) {
        AmRecord r;
        if (len - at < sizeof r) return OSCF_ERR_ARG;
        std::memcpy(&r, payload + at, sizeof r);
        if (!valid_type(r.type) || !valid_op(r.op)) return OSCF_ERR_ARG;
        const auto type = static_cast<oscf_type>(r.type);
        const auto op = static_cast<oscf_op>(r.op);
        const size_t bytes = type_size(type) * r.count;
        if (bytes > kAmMaxPayload || len - at < am_record_bytes(bytes)) return OSCF_ERR_ARG;
        // A record that cannot apply fails the batch, but the ones after it still do:
        // they were issued independently and each is valid on its own.
        char *t = am_target(false, r.offset, bytes);
        if (!t || !op_allowed(op, type) || op == OSCF_OP_NO_OP) {
            if (status == OSCF_OK) status = t ? OSCF_ERR_ARG : OSCF_ERR_RMA_RANGE;
        } else {
            apply_here(op, type, t, reinterpret_cast<const char *>(payload + at + sizeof r), nullptr,
                       r.count);
        }
        at += am_record_bytes(bytes);
    }
    return at == len ? status : OSCF_ERR_ARG;
}
