// Conditional swaps: oscf_win_swap (MPIX_Rmw2), of which MPI_Compare_and_swap is the
// equality of one element. A swap of type T takes the road T's accumulates take
// (AtomicCaps, route.cpp), so swaps and accumulates on one element stay atomic with
// each other whoever applies them:
//   - native: fi_compare_atomic with FI_CSWAP, FI_CSWAP_NE/LT/LE/GT/GE or FI_MSWAP
//     (AtomicCaps calls T native only where every swap allowed on T is native too);
//   - a peer on this node: CPU compare-exchange (node_atomics.h);
//   - otherwise an active message, kAmCompareSwap: count values then count comperands or
//     masks, applied by the target's engine; to ourselves, applied here under the
//     engine lock, as the target's handler would.
// Completion and ordering are those of the accumulates (accumulate.cpp).
#include <rdma/fi_atomic.h>

#include <algorithm>

#include "atomic_types.h"
#include "window.h"

using namespace oscf;

int oscf_win::compare_and_swap(Guard &lk, int target, const void *origin, const void *compare, void *result,
                               oscf_type type, int64_t disp, int64_t offset) {
    if (!valid_type(type) || !cas_allowed(type))
        return usage_error(OSCF_ERR_TYPE, "compare-and-swap is not defined for type %d", type);
    if (!origin || !compare || !result) return OSCF_ERR_ARG;
    Swap sw{OSCF_SWAP_EQ,
            type,
            1,
            static_cast<const char *>(origin),
            static_cast<const char *>(compare),
            static_cast<char *>(result)};
    return swap(lk, target, sw, disp, offset, nullptr);
}

int oscf_win::swap(Guard &lk, int target, const Swap &sw, int64_t disp, int64_t offset,
                   const oscf_notify *notify) {
    if (!valid_type(sw.type) || !valid_swap(sw.swap) || !swap_allowed(sw.swap, sw.type))
        return usage_error(OSCF_ERR_OP, "conditional swap %d is not defined for type %d", sw.swap, sw.type);
    if (sw.count && (!sw.value || !sw.compare))
        return usage_error(OSCF_ERR_ARG, "conditional swap without its operands");
    int rc = check_target(target);
    if (!rc && notify) rc = check_request_epoch(target, "compare_and_swap");
    if (rc) return rc;
    OpScope scope(progress().aborts(), peer(target).acc, notify);
    const size_t size = type_size(sw.type);
    rc = each_element_span(lk, target, sw.count, size, disp, offset, "compare_and_swap",
                           [&](const Where &w, size_t first, size_t n) -> int {
                               const size_t at = first * size;
                               const Swap piece{
                                   sw.swap,       sw.type,         n,
                                   sw.value + at, sw.compare + at, sw.result ? sw.result + at : nullptr};
                               return post_swap(lk, target, piece, w, scope);
                           });
    return finish(lk, scope, rc);
}

int oscf_win::post_swap(Guard &lk, int target, const Swap &sw, const Where &w, OpScope &scope) {
    Peer &p = peer(target);
    const AccRoute route = acc_route(p, target, sw.type);  // as the type's accumulates
    if (route == AccRoute::direct) return direct_swap(lk, p, sw, w);
    if (route == AccRoute::here) {
        swap_here(sw.swap, sw.type, w.local, sw.value, sw.compare, sw.result, sw.count);
        ++stats.am_local;
        return OSCF_OK;
    }
    const oscf_acc_path path = route == AccRoute::native ? OSCF_PATH_NATIVE : OSCF_PATH_AM;
    int rc = path == OSCF_PATH_AM ? send_batch(p) : OSCF_OK;  // program order at the target
    if (rc || (rc = order_accumulate(lk, p, path))) return rc;
    if (path == OSCF_PATH_AM) return post_am_swap(p, sw, w.am_offset, scope);
    if ((rc = await_grant(lk, p))) return rc;  // native atomics bypass the lock queue
    return post_native_swap(p, sw, w, scope);
}

int oscf_win::post_native_swap(Peer &p, const Swap &sw, const Where &w, OpScope &scope) {
    const size_t size = type_size(sw.type);
    // fi_compare_atomic always returns the old values; unwanted ones land in a sink
    // nobody reads, so any number of swaps may share it.
    if (!sw.result && !swap_sink_) swap_sink_.reset(new char[kAmMaxPayload]);
    const size_t per_op =
        std::min({eng_.caps.max_count(sw.type), fab().contract().max_msg_size / size, kAmMaxPayload / size});
    const auto dt = static_cast<fi_datatype>(fi_type_of(sw.type));
    const auto op = static_cast<fi_op>(fi_swap_of(sw.swap));
    for (size_t done = 0; done < sw.count;) {
        const size_t n = std::min(sw.count - done, per_op);
        const size_t at = done * size;
        char *old = sw.result ? sw.result + at : swap_sink_.get();
        int rc = progress().post("fi_compare_atomic", [&] {
            return fab().compare_atomic(sw.value + at, n, sw.compare + at, old, dt, op, p.addr, w.remote + at,
                                        w.key, scope.context());
        });
        if (rc) return rc;
        scope.on_post();
        ++stats.native_atomics;
        done += n;
    }
    return OSCF_OK;
}

int oscf_win::post_am_swap(Peer &p, const Swap &sw, uint64_t offset, OpScope &scope) {
    const size_t size = type_size(sw.type);
    const size_t per_msg = kAmMaxPayload / (2 * size);
    for (size_t done = 0; done < sw.count;) {
        const size_t n = std::min(sw.count - done, per_msg);
        const size_t at = done * size;
        AmHeader h = am_request(p, kAmCompareSwap, sw.type, sw.swap, sw.result ? kAmFetch : 0,
                                static_cast<uint32_t>(n), offset + at);
        int rc = send_request(p, h, scope, sw.result ? sw.result + at : nullptr, n * size, sw.value + at,
                              n * size, sw.compare + at, n * size);
        if (rc) return rc;
        done += n;
    }
    return OSCF_OK;
}
