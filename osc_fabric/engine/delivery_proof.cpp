#include "delivery_proof.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>

#include "status.h"

namespace oscf {

void DeliveryProof::park(fid_ep *ep, OpContext *c) {
    contexts_.leave_queue(c);  // it left us: the provider's queue no longer holds it
    Target &t = targets_[c->dest];
    t.parked.push_back(c);
    if (!t.reading) post_read(ep, c->dest, t);
}

void DeliveryProof::post_read(fid_ep *ep, fi_addr_t dest, Target &t) {
    // One byte of the newest parked write's own target: readable, since every region we
    // publish is registered for remote reads too, and ordered behind all parked writes.
    const OpContext *newest = t.parked.back();
    // Past the transmit queue's limit if need be: it is what frees the writes' contexts.
    OpContext *r = contexts_.take(nullptr, true);
    r->role = OpContext::Role::proof;
    r->dest = dest;
    ssize_t rc = local_.describe(t.sink, 1, r->refs, &r->desc);
    if (rc == 0) {
        const fi_msg_rma msg = r->rma_msg(dest, t.sink, 1, newest->rma_iov.addr, newest->rma_iov.key);
        rc = fi_readmsg(ep, &msg, FI_COMPLETION | (fenced_ ? FI_FENCE : 0));
    }
    if (rc == 0) {
        t.reading = true;
        t.covered = t.parked.size();
        ++reads_;
        return;
    }
    contexts_.give(r);
    if (rc == -FI_EAGAIN) {
        if (std::find(wanted_.begin(), wanted_.end(), dest) == wanted_.end()) wanted_.push_back(dest);
        return;
    }
    // The writes left, but nothing can show they arrived: they fail rather than pass.
    release(t, t.parked.size(), fabric_error("fi_readmsg (delivery proof)", rc));
}

void DeliveryProof::proved(fid_ep *ep, OpContext *c, int status) {
    const fi_addr_t dest = c->dest;
    contexts_.give(c);
    Target &t = targets_[dest];
    t.reading = false;
    release(t, t.covered, status);
    if (!t.parked.empty()) post_read(ep, dest, t);
}

void DeliveryProof::retry_wanted(fid_ep *ep) {
    std::vector<fi_addr_t> now;
    now.swap(wanted_);
    for (fi_addr_t dest : now) {
        Target &t = targets_[dest];
        if (!t.reading && !t.parked.empty()) post_read(ep, dest, t);
    }
}

void DeliveryProof::release(Target &t, size_t n, int status) {
    t.covered = 0;
    // Taken off first: a completion may post more writes to this target.
    std::vector<OpContext *> done(t.parked.begin(), t.parked.begin() + static_cast<std::ptrdiff_t>(n));
    t.parked.erase(t.parked.begin(), t.parked.begin() + static_cast<std::ptrdiff_t>(n));
    for (OpContext *w : done)
        if (Completion *d = contexts_.give(w)) d->complete(status, 0);
}

}  // namespace oscf
