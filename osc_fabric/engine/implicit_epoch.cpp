// One-shot epochs (oscf_win_rmw_implicit, MPIX_MODE_PASSIVE_EPOCH_IMPLICIT): what
// MPI_Win_lock(EXCLUSIVE) + one read-modify-write + MPI_Win_unlock do, complete when the
// call returns.
//
// Where the target's engine applies the operation (active messages for its type and for
// lock words, a peer not on this node), it travels as one request that the target serves
// as lock, operation and release (kAmImplicitEpoch; lock.cpp has the target side) and
// one reply: one round trip where the three calls cost three. While another process
// holds the target's lock the request waits there, held as a shared lock request is.
// An exclusive lock also enters rank 0's gate (lock.cpp). When the target is rank 0 the
// request takes the gate there too (kAmImplicitGate); otherwise the origin enters it
// first, which is free when it holds it already or rank 0 is this process or on this
// node, and a round trip more elsewhere.
//
// To a peer on this node whose memory, lock word and rank 0's gate we all reach
// directly, the holds are taken and dropped with CPU atomics around the operation,
// without the bookkeeping of an epoch. Everywhere else (types on native atomics,
// operations that need more than one message, windows without a node segment) the
// epoch is the three calls; their words and the operation are direct or native anyway.
//
// With OSCF_MODE_NOCHECK the caller promises that nobody holds or asks for a conflicting
// lock: no lock is taken, and the operation is one request and its reply.
#include "atomic_types.h"
#include "node_atomics.h"
#include "window.h"

using namespace oscf;

namespace {
bool rmw_allowed(const oscf_rmw &r) {
    if (!valid_type(r.type)) return false;
    if (r.is_swap) return valid_swap(r.swap) && swap_allowed(r.swap, r.type);
    return valid_op(r.op) && op_allowed(r.op, r.type);
}
// Bytes of origin data the operation reads: none for a NO_OP.
size_t operand_bytes(const oscf_rmw &r) {
    return r.is_swap || r.op != OSCF_OP_NO_OP ? r.count * type_size(r.type) : 0;
}
}  // namespace

int oscf_win::rmw_implicit(Guard &lk, int target, const oscf_rmw &r, int assert_bits) {
    int rc = check_target(target);
    if (rc) return rc;
    if (!rmw_allowed(r))
        return usage_error(OSCF_ERR_OP, "read-modify-write %d (%s) is not defined for type %d",
                           r.is_swap ? static_cast<int>(r.swap) : static_cast<int>(r.op),
                           r.is_swap ? "swap" : "reduction", r.type);
    if ((operand_bytes(r) && !r.origin) || (r.count && r.is_swap && !r.compare))
        return usage_error(OSCF_ERR_ARG, "read-modify-write without its operands");
    Peer &p = peer(target);
    if (lock_all_ || pscw_access_ || p.lock.held())
        return usage_error(OSCF_ERR_RMA_SYNC, "a one-shot epoch on rank %d inside an access epoch to it",
                           target);
    if ((rc = close_idle_fence("a one-shot epoch"))) return rc;
    const bool nocheck = (assert_bits & OSCF_MODE_NOCHECK) != 0;
    if (implicit_on_node(p, target, r)) return implicit_direct(lk, p, target, r, nocheck);
    if (implicit_in_one_message(p, target, r)) return implicit_message(lk, p, target, r, nocheck);
    return implicit_composed(lk, target, r, assert_bits & OSCF_MODE_NOCHECK);
}

bool oscf_win::implicit_in_one_message(const Peer &p, int target, const oscf_rmw &r) const {
    const size_t bytes = r.count * type_size(r.type) * (r.is_swap ? 2 : 1);
    return r.count > 0 && bytes <= kAmMaxPayload && acc_route(p, target, r.type) == AccRoute::message &&
           !direct_words(p) && !lock_words_native();
}

bool oscf_win::implicit_on_node(const Peer &p, int target, const oscf_rmw &r) const {
    return acc_route(p, target, r.type) == AccRoute::direct && direct_words(p) && direct_words(peer(0));
}

int oscf_win::implicit_direct(Guard &lk, Peer &p, int target, const oscf_rmw &r, bool nocheck) {
    const size_t bytes = r.count * type_size(r.type);
    uint64_t off;
    int rc = target_offset(r.target_disp, p.disp_unit, 0, bytes, p.size, target, "read-modify-write", &off);
    if (rc || r.count == 0) return rc;
    if (!nocheck) {  // as lock(): earlier locks granted, the gate, then the target's word
        if ((rc = await_earlier_lock(lk)) || (rc = enter_exclusive_gate(lk))) return rc;
        if ((rc = acquire(lk, p, Hold::exclusive))) {
            const int grc = leave_exclusive_gate();
            return grc ? grc : rc;
        }
    }
    if (r.is_swap)
        node_swap(p.node.shared(), off, r.swap, r.type, r.origin, r.compare, r.result, r.count);
    else
        node_accumulate(p.node.shared(), off, r.op, r.type, r.op == OSCF_OP_NO_OP ? nullptr : r.origin,
                        r.result, r.count);
    ++stats.direct_atomics;
    stats.direct_bytes += bytes;
    if (nocheck) return OSCF_OK;
    rc = release(p, Hold::exclusive);
    const int grc = leave_exclusive_gate();
    return rc ? rc : grc;
}

int oscf_win::rmw_in_epoch(Guard &lk, int target, const oscf_rmw &r) {
    if (r.is_swap) {
        Swap sw{r.swap,
                r.type,
                r.count,
                static_cast<const char *>(r.origin),
                static_cast<const char *>(r.compare),
                static_cast<char *>(r.result)};
        return swap(lk, target, sw, r.target_disp, 0, nullptr);
    }
    oscf_acc_segment seg{r.origin, r.result, 0, r.count};
    return accumulate(lk, target, &seg, 1, r.type, r.op, r.target_disp, nullptr);
}

int oscf_win::implicit_composed(Guard &lk, int target, const oscf_rmw &r, int assert_bits) {
    int rc = lock(lk, target, true, assert_bits);
    if (rc) return rc;
    rc = rmw_in_epoch(lk, target, r);
    const int urc = unlock(lk, target);
    return rc ? rc : urc;
}

int oscf_win::implicit_message(Guard &lk, Peer &p, int target, const oscf_rmw &r, bool nocheck) {
    const size_t bytes = r.count * type_size(r.type);
    ++access_epoch_;  // as a lock would: a dynamic window's cached regions are checked again
    Where w;
    int rc = resolve(lk, target, r.target_disp, 0, bytes, "read-modify-write", &w);
    if (rc) return rc;
    if (w.span < bytes)  // across attached regions: the three calls split it
        return implicit_composed(lk, target, r, nocheck ? OSCF_MODE_NOCHECK : 0);
    uint8_t flags = r.result ? kAmFetch : 0;
    bool gate_entered = false;
    if (!nocheck) {
        if ((rc = await_earlier_lock(lk))) return rc;  // locks in call order (lock.cpp)
        flags |= kAmImplicitEpoch;
        if (target == 0 && exclusive_gated_ == 0)
            flags |= kAmImplicitGate;
        else if ((rc = enter_exclusive_gate(lk)))
            return rc;
        else
            gate_entered = true;
    }
    OpCounter done;
    AmHeader h = am_request(p, r.is_swap ? kAmCompareSwap : kAmAccumulate, r.type,
                            r.is_swap ? static_cast<int>(r.swap) : static_cast<int>(r.op), flags,
                            static_cast<uint32_t>(r.count), w.am_offset);
    h.token = eng_.am->new_request(&done, r.result, r.result ? bytes : 0, r.type);
    done.on_post();
    ++stats.am_requests;
    // A failed send fails the request: the wait below then returns at once.
    rc = eng_.am->send(p.addr, h, r.origin, operand_bytes(r), r.is_swap ? r.compare : nullptr,
                       r.is_swap ? bytes : 0);
    const int wrc = wait_done(lk, done);
    if (!rc) rc = wrc;
    if (gate_entered) {
        const int grc = leave_exclusive_gate();
        if (!rc) rc = grc;
    }
    return rc;
}
