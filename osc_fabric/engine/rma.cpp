// Contiguous put and get. A transfer is cut into pieces of at most the provider's
// max_msg_size; each piece is one fi_writemsg/fi_readmsg whose context is the target's
// OpCounter. Writes ask for FI_DELIVERY_COMPLETE: on tcp;ofi_rxm a plain completion
// only means the data left this process. Small writes add FI_INJECT so the origin
// buffer is free at once. Accesses to ourselves are plain memory copies: the window
// memory is ours, and MPI makes concurrent conflicting accesses erroneous anyway.

#include <algorithm>
#include <cstring>

#include "packed.h"
#include "piece_copy.h"
#include "window.h"

using namespace oscf;

// Byte offset of an access into the target's window, or an error when any byte of it
// lies outside. Overflow of disp * disp_unit is a range error too.
int oscf_win::target_offset(int64_t disp, uint32_t disp_unit, int64_t offset, size_t len, uint64_t size,
                            int target, const char *what, uint64_t *out) {
    __int128 start = static_cast<__int128>(disp) * disp_unit + offset;
    if (start < 0 || start > static_cast<__int128>(size) || len > size - static_cast<uint64_t>(start))
        return usage_error(OSCF_ERR_RMA_RANGE,
                           "%s of %zu bytes at displacement %lld (unit %u) exceeds rank %d's window "
                           "of %llu bytes",
                           what, len, static_cast<long long>(disp), disp_unit, target,
                           static_cast<unsigned long long>(size));
    *out = static_cast<uint64_t>(start);
    return OSCF_OK;
}

int oscf_win::resolve(Guard &lk, int target, int64_t disp, int64_t offset, size_t len, const char *what,
                      Where *w) {
    if (flavor_ == OSCF_FLAVOR_DYNAMIC) {
        // target_disp is an address at the target (disp_unit 1).
        __int128 addr = static_cast<__int128>(disp) + offset;
        if (addr < 0 || addr > static_cast<__int128>(UINT64_MAX))
            return usage_error(OSCF_ERR_RMA_RANGE, "%s at a negative address", what);
        return resolve_dynamic(lk, target, static_cast<uint64_t>(addr), len, what, w);
    }
    const Peer &p = peer(target);
    uint64_t off = 0;
    int rc = target_offset(disp, p.disp_unit, offset, len, p.size, target, what, &off);
    if (rc) return rc;
    w->remote = p.base + off;
    w->key = p.key;
    w->local = target == rank_ ? static_cast<char *>(base_) + off : nullptr;
    w->am_offset = off;
    w->span = len;
    return OSCF_OK;
}

// Where the provider's fi_write is itself a message that the target's software applies,
// a small put costs what a message costs, so a run of them joins the target's batch of
// emulated accumulates as byte REPLACE records (accumulate_batch.cpp) and leaves as one
// message, completed by the next flush like any other operation. A lone put still goes
// as fi_write: rxm answers its own write sooner than our handler answers a message
// (perf/README.md, "Measurements behind design choices"), so only a put that finds
// the target busy (operations in flight, a batch open) is batched. On every provider, a
// small put behind our unanswered lock request (lock.cpp) is batched too: as a write it
// would wait a round trip for the grant, in the batch it travels with the request.
// The same in an MPI_Win_start epoch over such a provider (below).
// MPI orders no put against other puts or gets, so the batch may overtake or trail the
// fabric's RMA. A request-based put is not batched: its request must complete on its own.
bool oscf_win::batch_put(size_t len, const Peer &p, const OpScope &scope) const {
    if (len > kBatchedPutMax || scope.has_request()) return false;
    if (!p.lock.grant.idle()) return true;
    // In an MPI_Win_start epoch, complete sends its notification behind a batch and
    // returns (pscw.cpp); behind a write it would wait for the write's answer.
    return fab().contract().rma_in_software && (pscw_access_ || !p.batch.empty() || !p.ops.idle());
}

int oscf_win::put(Guard &lk, int target, const oscf_segment *segs, size_t n, int64_t disp,
                  const oscf_notify *notify) {
    const int rc = check_operation(target, notify, "put");
    return rc ? rc : transfer_all(lk, Dir::write, target, segs, n, disp, notify);
}

int oscf_win::get(Guard &lk, int target, const oscf_segment *segs, size_t n, int64_t disp,
                  const oscf_notify *notify) {
    const int rc = check_operation(target, notify, "get");
    return rc ? rc : transfer_all(lk, Dir::read, target, segs, n, disp, notify);
}

// All segments of one operation share one scope, so notify fires once. The target is
// checked by the caller, which also knows whether notify is an MPI request's.
int oscf_win::transfer_all(Guard &lk, Dir dir, int target, const oscf_segment *segs, size_t n, int64_t disp,
                           const oscf_notify *notify) {
    int rc = OSCF_OK;
    // On-node peers reached directly: copied before we return, so only a request needs
    // a scope to complete through.
    if (direct_memory(peer(target))) {
        if (!notify) return direct_transfer_all(lk, dir, target, segs, n, disp);
        OpScope scope(progress().aborts(), peer(target).ops, notify);
        return finish(lk, scope, direct_transfer_all(lk, dir, target, segs, n, disp));
    }
    if (cross_memory(peer(target))) {
        bool refused = false;
        rc = cross_transfer_all(lk, dir, target, segs, n, disp, &refused);
        if (!refused) {
            if (!notify) return rc;
            OpScope scope(progress().aborts(), peer(target).ops, notify);
            return finish(lk, scope, rc);
        }
    }
    OpScope scope(progress().aborts(), peer(target).ops, notify);
    Packed packed(*this, peer(target), dir, scope);
    Packed *pk = Packed::wanted(n, target == rank_) ? &packed : nullptr;
    for (size_t i = 0; i < n && rc == OSCF_OK; ++i)
        rc = transfer(lk, dir, target, segs[i].origin, segs[i].len, disp, segs[i].target_offset, scope, pk);
    if (rc == OSCF_OK && pk) rc = pk->finish();
    if (n == 0 && rc == OSCF_OK) rc = begin_access(lk, target, dir == Dir::write ? "put" : "get");
    return finish(lk, scope, rc);
}

int oscf_win::transfer(Guard &lk, Dir dir, int target, void *buf, size_t len, int64_t tdisp, int64_t offset,
                       OpScope &scope, Packed *packed) {
    int rc = begin_access(lk, target, dir == Dir::write ? "put" : "get");
    char *local = static_cast<char *>(buf);
    // One piece per registration the bytes land in: several only on a dynamic window
    // whose access runs across regions attached back to back. The first resolve checks
    // every byte, so nothing moves when any of them is not attached.
    while (rc == OSCF_OK && len > 0) {
        Where w;
        if ((rc = resolve(lk, target, tdisp, offset, len, dir == Dir::write ? "put" : "get", &w))) break;
        rc = transfer_piece(lk, dir, target, local, w, scope, packed);
        local += w.span;
        offset += static_cast<int64_t>(w.span);
        len -= w.span;
    }
    return rc;
}

int oscf_win::transfer_piece(Guard &lk, Dir dir, int target, char *local, const Where &w, OpScope &scope,
                             Packed *packed) {
    const bool write = dir == Dir::write;
    const size_t len = w.span;
    Peer &p = peer(target);
    int rc;
    if (target == rank_) {
        auto *wl = reinterpret_cast<uint8_t *>(w.local), *l = reinterpret_cast<uint8_t *>(local);
        move_block(write ? wl : l, write ? l : wl, len);
        return OSCF_OK;
    }
    if (packed && packed->takes(len)) return packed->add(local, len, w.am_offset);
    if (write && batch_put(len, p, scope)) {
        ++stats.puts_batched;
        return batch_accumulate(p, local, len, OSCF_TYPE_UINT8, OSCF_OP_REPLACE, w.am_offset);
    }
    if (!write && len <= kMessageGetMax && fab().contract().reads_by_syscall) {
        // A fetch that changes nothing, answered by the target's engine. It queues behind
        // our lock request there, so no grant is awaited; anything queued for the target
        // leaves first, keeping program order.
        ++stats.gets_as_messages;
        if ((rc = send_batch(p))) return rc;
        return post_am(p, nullptr, local, len, OSCF_TYPE_UINT8, OSCF_OP_NO_OP, w.am_offset, scope);
    }
    // The fabric's RMA does not queue behind our lock request at the target.
    if ((rc = await_grant(lk, p))) return rc;
    for (size_t done = 0; done < len;) {
        const size_t n = std::min(len - done, fab().contract().max_msg_size);
        if ((rc = post_rma(p, write, local + done, n, w.remote + done, w.key, scope.context()))) return rc;
        scope.on_post();
        done += n;
    }
    return OSCF_OK;
}

int oscf_win::post_rma(Peer &p, bool write, void *local, size_t len, uint64_t remote, uint64_t key,
                       Completion *done) {
    bool injected = false;
    const int rc = progress().post(write ? "fi_writemsg" : "fi_readmsg", [&] {
        return fab().rma(write, local, len, p.addr, remote, key, done, &injected);
    });
    if (rc) return rc;
    ++(write ? stats.puts : stats.gets);
    stats.rma_bytes += len;
    if (injected) ++stats.injected;
    return OSCF_OK;
}
