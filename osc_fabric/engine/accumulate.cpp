// The accumulate family. Each type travels one way for the whole job (AtomicCaps):
// natively as fi_atomic / fi_fetch_atomic / fi_compare_atomic, or as active messages
// that the target's engine applies under its lock (am.cpp carries them). Either way
// the operation is complete when the target has applied it: native fetching atomics
// return after the update, plain ones ask for FI_DELIVERY_COMPLETE, and every active
// message is answered.
//
// Ordering (accumulate_ordering): for each requested ordering the provider does not
// guarantee on this path, an accumulate waits until the earlier accumulates to the same
// target completed. Active messages are ordered on every provider, because the target
// applies them in the order sent (AmHeader::seq: receives may complete out of that
// order, and without FI_ORDER_SAS arrive so, am.cpp). With "none" nothing waits
// and back-to-back accumulates overlap in flight. Plain accumulates on the
// active-message path are coalesced per target (accumulate_batch.cpp).
#include <rdma/fi_atomic.h>

#include <algorithm>
#include <cstring>

#include "atomic_types.h"
#include "window.h"

using namespace oscf;

int oscf_win::target_range(Guard &lk, int target, size_t len, int64_t disp, int64_t offset, const char *what,
                           Where *w) {
    int rc = begin_access(lk, target, what);
    if (rc || len == 0) return rc;
    return resolve(lk, target, disp, offset, len, what, w);
}

// Emulated accumulates are requests, which the target serves in the order sent whatever
// order the provider delivers them in (MessageStream, am.cpp): they keep every ordering
// by themselves. Native ones keep what the provider promises for atomics.
int oscf_win::order_accumulate(Guard &lk, Peer &p, oscf_acc_path path) {
    const unsigned kept = path == OSCF_PATH_AM ? unsigned{OSCF_ORDER_DEFAULT} : fab().contract().atomic_order;
    if ((acc_ordering_ & ~kept) == 0 || p.acc.idle()) return OSCF_OK;
    ++stats.ordering_waits;
    return wait_idle(lk, p.acc);
}

void oscf_win::apply_local(const char *origin, char *result, size_t count, oscf_type type, oscf_op op,
                           char *target) {
    apply_here(op, type, target, origin, result, count);
    ++stats.am_local;
}

int oscf_win::post_native(Peer &p, const char *origin, char *result, size_t count, oscf_type type, oscf_op op,
                          const Where &w, OpScope &scope) {
    const size_t size = type_size(type);
    const size_t per_op = std::min(eng_.caps.max_count(type), fab().contract().max_msg_size / size);
    const auto dt = static_cast<fi_datatype>(fi_type_of(type));
    const auto fop = static_cast<fi_op>(fi_op_of(op));
    for (size_t done = 0; done < count;) {
        size_t n = std::min(count - done, per_op);
        // A fetching NO_OP (atomic read) has no origin data; libfabric still wants a
        // buffer of the right shape.
        const char *src = origin ? origin + done * size : result + done * size;
        const uint64_t remote = w.remote + done * size;
        int rc;
        if (result) {
            rc = progress().post("fi_fetch_atomic", [&] {
                return fab().fetch_atomic(src, n, result + done * size, dt, fop, p.addr, remote, w.key,
                                          scope.context());
            });
        } else {
            rc = post_atomic_write(p, src, n, dt, fop, remote, w.key, scope.context());
        }
        if (rc) return rc;
        scope.on_post();
        ++stats.native_atomics;
        done += n;
    }
    return OSCF_OK;
}

int oscf_win::post_atomic_write(const Peer &p, const void *src, size_t count, fi_datatype dt, fi_op op,
                                uint64_t remote, uint64_t key, Completion *context) {
    return progress().post("fi_atomicmsg",
                           [&] { return fab().atomic(src, count, dt, op, p.addr, remote, key, context); });
}

// What every message to p's window starts with.
AmHeader oscf_win::am_header(const Peer &p, AmOpcode opcode, uint8_t flags) const {
    AmHeader h{};
    h.version = kAmVersion;
    h.opcode = opcode;
    h.flags = flags;
    h.origin_rank = static_cast<uint32_t>(rank_);
    h.window_id = p.am_window_id;
    return h;
}

// Outside the stream: no seq taken, so nothing behind it waits for it.
void oscf_win::tell_peers_failed() {
    for (Peer &p : peers_)
        if (!is_self(p) && p.addr != FI_ADDR_UNSPEC)  // a failed send: that peer is gone
            (void)eng_.am->send(p.addr, am_header(p, kAmFailed, kAmNoReply), nullptr, 0);
}

// Every header made here is sent: its seq is the next of the stream the target replays
// in order (am.cpp).
AmHeader oscf_win::am_request(Peer &p, AmOpcode opcode, oscf_type type, int op, uint8_t flags, uint32_t count,
                              uint64_t offset) {
    AmHeader h = am_header(p, opcode, flags);
    h.type = static_cast<uint8_t>(type);
    h.op = static_cast<uint8_t>(op);
    h.count = count;
    h.offset = offset;
    h.seq = p.am_sent++;
    return h;
}

int oscf_win::post_am(Peer &p, const char *origin, char *result, size_t count, oscf_type type, oscf_op op,
                      uint64_t offset, OpScope &scope) {
    // offset: where the owner finds the data (Where::am_offset).
    const size_t size = type_size(type);
    const size_t per_msg = kAmMaxPayload / size;
    for (size_t done = 0; done < count;) {
        size_t n = std::min(count - done, per_msg);
        AmHeader h = am_request(p, kAmAccumulate, type, op, result ? kAmFetch : 0, static_cast<uint32_t>(n),
                                offset + done * size);
        const size_t bytes = op == OSCF_OP_NO_OP ? 0 : n * size;
        int rc = send_request(p, h, scope, result ? result + done * size : nullptr, n * size,
                              origin ? origin + done * size : nullptr, bytes);
        if (rc) return rc;
        done += n;
    }
    return OSCF_OK;
}

int oscf_win::send_request(Peer &p, AmHeader &h, OpScope &scope, char *result, size_t result_bytes,
                           const void *p1, size_t n1, const void *p2, size_t n2) {
    h.token = eng_.am->new_request(scope.context(), result, result ? result_bytes : 0,
                                   static_cast<oscf_type>(h.type));
    scope.on_post();
    int rc = eng_.am->send(p.addr, h, p1, n1, p2, n2);
    if (rc) {
        scope.context()->complete(rc, 0);  // no reply will come
        return rc;
    }
    ++stats.am_requests;
    return OSCF_OK;
}

// MPI's rule for (op, type) (atomic_types.h), as every accumulate entry point reports it.
int oscf_win::check_reduction(oscf_op op, oscf_type type, bool updates) {
    if (!valid_type(type) || !valid_op(op) || !op_allowed(op, type) || (updates && op == OSCF_OP_NO_OP))
        return usage_error(OSCF_ERR_OP, "reduction %d is not defined for type %d", op, type);
    return OSCF_OK;
}

int oscf_win::accumulate_direct(Guard &lk, int target, oscf_type type, oscf_op op, int64_t disp,
                                int64_t span_offset, size_t span_len, bool fetching,
                                const oscf_acc_source &src, const oscf_notify *notify, int *served) {
    if (int rc = check_reduction(op, type)) return rc;
    const char *what = fetching ? "get_accumulate" : "accumulate";
    int rc = check_target(target);
    if (rc || acc_route(peer(target), target, type) != AccRoute::direct) return rc;
    *served = 1;
    if (notify && (rc = check_request_epoch(target, what))) return rc;
    Peer &p = peer(target);
    OpScope scope(progress().aborts(), p.acc, notify);
    uint64_t off;
    if ((rc = begin_access(lk, target, what)) ||
        (rc = target_offset(disp, p.disp_unit, span_offset, span_len, p.size, target, what, &off)) ||
        (rc = direct_ready(lk, p)))
        return finish(lk, scope, rc);
    return finish(lk, scope, direct_accumulate_each(lk, target, type, op, disp, src));
}

int oscf_win::accumulate(Guard &lk, int target, const oscf_acc_segment *segs, size_t n, oscf_type type,
                         oscf_op op, int64_t disp, const oscf_notify *notify) {
    int rc = check_reduction(op, type);
    if (!rc) rc = check_operation(target, notify, "accumulate");
    if (rc) return rc;
    OpScope scope(progress().aborts(), peer(target).acc, notify);
    // Nothing to move is still an access: it must be inside an epoch, and a request
    // for it completes at once.
    if (n == 0) return finish(lk, scope, begin_access(lk, target, "accumulate"));
    // A peer whose memory we map: every segment checked, then applied (route.cpp).
    if (acc_route(peer(target), target, type) == AccRoute::direct)
        return finish(lk, scope, direct_accumulate_all(lk, target, segs, n, type, op, disp));
    for (size_t i = 0; i < n && rc == OSCF_OK; ++i) {
        const oscf_acc_segment &sg = segs[i];
        if (!sg.origin && op != OSCF_OP_NO_OP) {
            rc = usage_error(OSCF_ERR_ARG, "accumulate without origin data");
            break;
        }
        rc = accumulate_segment(lk, target, sg, type, op, disp, scope);
    }
    return finish(lk, scope, rc);
}

// One segment, in pieces of whole elements per registration it lands in (several only
// on a dynamic window where it runs across regions attached back to back).
int oscf_win::accumulate_segment(Guard &lk, int target, const oscf_acc_segment &sg, oscf_type type,
                                 oscf_op op, int64_t disp, OpScope &scope) {
    const size_t size = type_size(type);
    const auto *origin = static_cast<const char *>(sg.origin);
    auto *result = static_cast<char *>(sg.result);
    const bool moves = op != OSCF_OP_NO_OP || result;  // a NO_OP that fetches nothing: checks only
    return each_element_span(
        lk, target, sg.count, size, disp, sg.target_offset, result ? "get_accumulate" : "accumulate",
        [&](const Where &w, size_t first, size_t n) -> int {
            if (!moves) return OSCF_OK;
            return post_accumulate(lk, target, origin ? origin + first * size : nullptr,
                                   result ? result + first * size : nullptr, n, type, op, w, scope);
        });
}

int oscf_win::straddle_error(const char *what, const Where &w, size_t size) {
    return usage_error(OSCF_ERR_RMA_RANGE, "%s: an element at address 0x%llx straddles two attached regions",
                       what, static_cast<unsigned long long>(w.am_offset + w.span / size * size));
}

int oscf_win::post_accumulate(Guard &lk, int target, const char *origin, char *result, size_t count,
                              oscf_type type, oscf_op op, const Where &w, OpScope &scope) {
    Peer &p = peer(target);
    const AccRoute route = acc_route(p, target, type);  // never direct: accumulate() took that road
    // Emulated updates to ourselves are applied here, under the same engine lock the
    // handler for remote origins holds: that is what makes them atomic with each other.
    if (route == AccRoute::here) {
        apply_local(origin, result, count, type, op, w.local);
        return OSCF_OK;
    }
    const oscf_acc_path path = route == AccRoute::native ? OSCF_PATH_NATIVE : OSCF_PATH_AM;
    // Plain accumulates join the target's batch; anything else sends the batch first
    // so the target still sees program order.
    const bool batch = path == OSCF_PATH_AM && !result && op != OSCF_OP_NO_OP && !scope.has_request();
    int rc = path == OSCF_PATH_AM && !batch ? send_batch(p) : OSCF_OK;
    if (rc || (rc = order_accumulate(lk, p, path))) return rc;
    if (path == OSCF_PATH_NATIVE) {
        if ((rc = await_grant(lk, p))) return rc;  // native atomics bypass the lock queue
        return post_native(p, origin, result, count, type, op, w, scope);
    }
    if (count * type_size(type) >= kRendezvousMin)
        return accumulate_rendezvous(p, origin, result, count, type, op, w, scope);
    if (batch) return batch_accumulate(p, origin, count, type, op, w.am_offset);
    return post_am(p, origin, result, count, type, op, w.am_offset, scope);
}

char *oscf_win::am_target(bool state_word, uint64_t offset, size_t bytes) {
    // Lock words (lock.cpp) live in WindowState; everything else in window memory, or
    // for a dynamic window at addresses covered by attached regions.
    if (!state_word && flavor_ == OSCF_FLAVOR_DYNAMIC)
        return attached_here(offset, bytes) ? reinterpret_cast<char *>(offset) : nullptr;
    char *base = state_word ? reinterpret_cast<char *>(state_.get()) : static_cast<char *>(base_);
    const size_t limit = state_word ? sizeof(WindowState) : bytes_;
    if (offset > limit || bytes > limit - offset) return nullptr;
    return base + offset;
}

int oscf_win::serve_am(const AmHeader &h, const uint8_t *payload, size_t len, uint8_t *old_out,
                       size_t *old_len) {
    *old_len = 0;
    if (h.opcode == kAmBatch) return serve_batch(h, payload, len);
    if (h.opcode == kAmFlush) return len == 0 ? OSCF_OK : OSCF_ERR_ARG;  // arrival is the point
    if (h.opcode == kAmLockShared || h.opcode == kAmLockExclusive)
        return len == 0 ? grant_lock(h.opcode == kAmLockExclusive, h.origin_rank) : OSCF_ERR_ARG;
    if (h.opcode == kAmGather) return serve_gather(h, payload, len, old_out, old_len);
    if (h.opcode == kAmScatter) return serve_scatter(h, payload, len, old_out, old_len);
    if (h.opcode == kAmGatherRuns) return serve_gather_runs(h, payload, len, old_out, old_len);
    if (h.opcode == kAmScatterPull || h.opcode == kAmGatherPush) return serve_rendezvous(h, payload, len);
    if (h.opcode == kAmComplete) return serve_complete(h, len);
    if (!valid_type(h.type) || !valid_op(h.op)) return OSCF_ERR_ARG;
    const auto type = static_cast<oscf_type>(h.type);
    const auto op = static_cast<oscf_op>(h.op);
    const size_t size = type_size(type);
    const size_t bytes = size * h.count;
    if (bytes > kAmMaxPayload) return OSCF_ERR_RMA_RANGE;
    const bool state = (h.flags & kAmStateWord) != 0;
    char *t = am_target(state, h.offset, bytes);
    if (!t) return OSCF_ERR_RMA_RANGE;
    const bool fetch = (h.flags & kAmFetch) != 0;
    if (state) return serve_state_word(h, payload, len, t, old_out, old_len);
    if (h.opcode == kAmCompareSwap) {
        if (!valid_swap(h.op) || !swap_allowed(static_cast<oscf_swap>(h.op), type) || len != 2 * bytes)
            return OSCF_ERR_ARG;
    } else if (!op_allowed(op, type) || len != (op == OSCF_OP_NO_OP ? 0 : bytes)) {
        return OSCF_ERR_ARG;
    }
    // A one-shot epoch's request (implicit_epoch.cpp) holds our lock word while it applies.
    int rc = take_implicit_hold(h.flags, h.origin_rank);
    if (rc) return rc;
    char *old = fetch ? reinterpret_cast<char *>(old_out) : nullptr;
    if (h.opcode == kAmCompareSwap)
        swap_here(static_cast<oscf_swap>(h.op), type, t, payload, payload + bytes, old, h.count);
    else
        apply_here(op, type, t, reinterpret_cast<const char *>(payload), old, h.count);
    drop_implicit_hold(h.flags);
    if (fetch) *old_len = bytes;
    return OSCF_OK;
}
