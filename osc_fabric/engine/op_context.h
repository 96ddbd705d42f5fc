// The context libfabric holds for one posted operation, and the pool they come from.
//
// Providers that return FI_CONTEXT or FI_CONTEXT2 (psm2, psm3, opx, efa-direct) own the
// first bytes of every context until its completion is read, and write into them, so a
// context can serve one operation at a time and must start with room for them. Providers
// that return FI_ASYNC_IOV (opx) read the iov arrays of a posted operation until it
// completes, so those arrays live here too, not on the poster's stack. Every post gets
// its own OpContext whatever the provider says: one rule, taken on every provider here,
// and a pool pop costs less than knowing when it could be skipped.
//
// Owned by the Fabric, which takes one per post and gives it back when the CQ reports
// the operation (or the post fails). Not thread-safe: the engine lock serializes both.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <sys/uio.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "local_memory.h"

namespace oscf {

// What an operation's OpContext completes. status is OSCF_OK or the error the CQ
// reported; len is the received length for receives.
class Completion {
public:
    virtual void complete(int status, size_t len) = 0;

protected:
    ~Completion() = default;
};

struct OpContext {
    fi_context2 provider;  // the provider's share: first, and never read by us
    Completion *done = nullptr;
    // What its CQ entry means (Fabric::complete): the operation's end, or, for a write on
    // a provider whose writes complete at transmit, only that it left (delivery_proof.h).
    enum class Role : uint8_t { plain, write_to_prove, proof } role = Role::plain;
    fi_addr_t dest = FI_ADDR_UNSPEC;  // write_to_prove and proof: the target
    bool tx = false;                  // holds a place in the transmit queue (ContextPool)
    // The one local and one remote segment of a message-form post (fi_*msg): libfabric's
    // iovec/fi_ioc and fi_rma_iov/fi_rma_ioc have the same layouts, so one pair serves RMA
    // and atomics.
    iovec iov{};
    fi_rma_iov rma_iov{};
    // Under FI_MR_LOCAL (local_memory.h): the descriptor of iov, and the registrations
    // the operation holds until its context is given back.
    void *desc = nullptr;
    LocalRefs refs;

    // The message form of one contiguous RMA between local and (remote, key) at dest,
    // its arrays here so they live until completion.
    fi_msg_rma rma_msg(fi_addr_t dest, void *local, size_t len, uint64_t remote, uint64_t key) {
        iov = {local, len};
        rma_iov = {remote, len, key};
        fi_msg_rma msg{};
        msg.msg_iov = &iov;
        msg.iov_count = 1;
        msg.addr = dest;
        msg.rma_iov = &rma_iov;
        msg.rma_iov_count = 1;
        msg.desc = desc ? &desc : nullptr;
        msg.context = this;
        return msg;
    }
};
static_assert(offsetof(OpContext, provider) == 0, "the provider's share must come first");
static_assert(sizeof(fi_context2) >= sizeof(fi_context), "FI_CONTEXT2 covers FI_CONTEXT");
static_assert(sizeof(iovec) == sizeof(fi_ioc) && offsetof(fi_ioc, count) == offsetof(iovec, iov_len),
              "one segment serves RMA and atomics");
static_assert(sizeof(fi_rma_iov) == sizeof(fi_rma_ioc) &&
                  offsetof(fi_rma_ioc, key) == offsetof(fi_rma_iov, key),
              "one remote segment serves RMA and atomics");

// Also counts the transmit operations in the provider's queue, which Fabric keeps within
// the provider's tx_attr->size: a provider that takes more than it promised (tcp;ofi_rxm
// took a million puts) would otherwise have us hold a context for each.
class ContextPool {
public:
    // tx: a transmit operation (RMA, atomic, send), not a receive.
    OpContext *take(Completion *done, bool tx) {
        if (free_.empty()) grow();
        OpContext *c = free_.back();
        free_.pop_back();
        c->done = done;
        c->desc = nullptr;
        c->role = OpContext::Role::plain;
        c->tx = tx;
        tx_ += tx;
        return c;
    }
    // Gives c back, with the registrations it held, and returns what it was to complete.
    Completion *give(OpContext *c) {
        leave_queue(c);
        if (c->refs.count) c->refs.release();
        Completion *done = c->done;
        c->done = nullptr;
        free_.push_back(c);
        return done;
    }
    // c's CQ entry was read but c stays taken (a write awaiting its delivery proof): its
    // place in the transmit queue is free again.
    void leave_queue(OpContext *c) {
        if (!c->tx) return;
        c->tx = false;
        --tx_;
    }
    size_t in_transmit_queue() const { return tx_; }
    // The endpoint is closed, so no operation is posted any more: the registrations the
    // unfinished ones held (receives, mostly) go back before the domain closes.
    void release_registrations() {
        for (auto &b : blocks_)
            for (size_t i = 0; i < kBlock; ++i) b[i].refs.release();
    }

private:
    // Blocks never move, so a context stays where the provider was told it is.
    static constexpr size_t kBlock = 256;
    void grow() {
        blocks_.push_back(std::make_unique<OpContext[]>(kBlock));
        OpContext *b = blocks_.back().get();
        free_.reserve(free_.size() + kBlock);
        for (size_t i = kBlock; i-- > 0;) free_.push_back(&b[i]);
    }
    std::vector<std::unique_ptr<OpContext[]>> blocks_;
    std::vector<OpContext *> free_;
    size_t tx_ = 0;
};

}  // namespace oscf
