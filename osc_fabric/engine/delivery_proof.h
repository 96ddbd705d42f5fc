// Remote completion of writes on providers whose writes complete when they leave us
// (verbs;ofi_rxm: rxm hands RMA to verbs, whose completion is the transmit's, whatever
// FI_DELIVERY_COMPLETE asks). MPI_Win_flush, unlock, fence and complete promise the data
// is at the target, and the engine's counters take a write's completion to mean that;
// on such a provider the write's CQ entry only parks it here, and a read to the same
// target posted after it, ordered behind it by the provider (FI_ORDER_RAW) or by
// FI_FENCE, proves it delivered: when the read completes, every write parked before it
// was posted completes. One read proves every write parked while it was out, so a burst
// of writes costs one extra round trip, not one each.
//
// This is the only place that knows writes may complete early: Fabric posts writes
// through it (ProviderContract::writes_delivered false) and hands it their CQ entries.
// Owned by the Fabric; lock held for every call, like the Fabric's.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "local_memory.h"
#include "op_context.h"

namespace oscf {

class DeliveryProof {
public:
    DeliveryProof(ContextPool &contexts, LocalMemory &local, bool fenced)
        : contexts_(contexts), local_(local), fenced_(fenced) {}

    // Write c (role write_to_prove) to dest at (remote, key) has left: held until a read
    // behind it returns. Posts that read unless one is already out to dest.
    void park(fid_ep *ep, OpContext *c);
    // Proof read c completed with status: completes the writes it covered (with that
    // status), and posts the next read for writes parked since.
    void proved(fid_ep *ep, OpContext *c, int status);
    // Posts the reads that the provider refused with -FI_EAGAIN. Each progress round.
    void retry(fid_ep *ep) {
        if (!wanted_.empty()) retry_wanted(ep);
    }
    // Proof reads posted (MPI_T and tests: a burst of writes should need few).
    uint64_t reads() const { return reads_; }

private:
    struct Target {
        std::deque<OpContext *> parked;  // oldest first
        size_t covered = 0;              // the first `covered` are behind the read out
        bool reading = false;
        uint8_t sink[8];  // where the read's byte lands
    };
    void post_read(fid_ep *ep, fi_addr_t dest, Target &t);
    void retry_wanted(fid_ep *ep);
    void release(Target &t, size_t n, int status);

    ContextPool &contexts_;
    LocalMemory &local_;  // the sink's descriptor under FI_MR_LOCAL
    const bool fenced_;   // no FI_ORDER_RAW: the read carries FI_FENCE
    std::unordered_map<fi_addr_t, Target> targets_;
    std::vector<fi_addr_t> wanted_;  // reads that met -FI_EAGAIN
    uint64_t reads_ = 0;
};

}  // namespace oscf
