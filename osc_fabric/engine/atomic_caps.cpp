#include "atomic_caps.h"

#include <rdma/fi_atomic.h>

#include <algorithm>

#include "atomic_types.h"
#include "status.h"

namespace oscf {
namespace {

// Elements per operation for (type, op) in one form, 0 when unsupported.
size_t query(fid_ep *ep, int dt, int op, int form) {
    size_t count = 0;
    int rc;
    auto t = static_cast<fi_datatype>(dt);
    auto o = static_cast<fi_op>(op);
    switch (form) {
    case 0: rc = fi_atomicvalid(ep, t, o, &count); break;
    case 1: rc = fi_fetch_atomicvalid(ep, t, o, &count); break;
    default: rc = fi_compare_atomicvalid(ep, t, o, &count); break;
    }
    return rc == 0 ? count : 0;
}

}  // namespace

void AtomicCaps::build(fid_ep *ep, bool emulate_all) {
    max_count_.fill(0);
    if (emulate_all) return;
    for (int ti = 0; ti < OSCF_TYPE_COUNT; ++ti) {
        auto t = static_cast<oscf_type>(ti);
        int dt = fi_type_of(t);
        if (dt < 0) continue;
        size_t limit = SIZE_MAX;
        for (int oi = 0; oi < OSCF_OP_COUNT && limit; ++oi) {
            auto op = static_cast<oscf_op>(oi);
            if (!op_allowed(op, t)) continue;
            int fop = fi_op_of(op);
            if (fop < 0) {
                limit = 0;
                break;
            }
            // READ exists only in the fetching form.
            if (op != OSCF_OP_NO_OP) limit = std::min(limit, query(ep, dt, fop, 0));
            limit = std::min(limit, query(ep, dt, fop, 1));
        }
        for (int si = 0; si < OSCF_SWAP_COUNT && limit; ++si) {
            auto sw = static_cast<oscf_swap>(si);
            if (swap_allowed(sw, t)) limit = std::min(limit, query(ep, dt, fi_swap_of(sw), 2));
        }
        max_count_[ti] = limit == SIZE_MAX ? 0 : limit;
        log(10, "accumulate type %d: %s (max %zu elements)", ti, max_count_[ti] ? "native" : "emulated",
            max_count_[ti]);
    }
}

}  // namespace oscf
