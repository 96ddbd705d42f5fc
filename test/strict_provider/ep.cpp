// Endpoint wrapper: life cycle, binds, and the bookkeeping every data operation shares (contexts,
// fence emulation, FI_ASYNC_IOV snapshots). Message ops live in msg.cpp, RMA in rma.cpp, atomics in
// atomic.cpp.
#include "strict.h"

#include <rdma/fi_collective.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace strict {

namespace {
// Contexts of operations not yet completed, across all endpoints (an application may share one
// context object between endpoints by mistake too).
std::mutex g_ctx_lock;
std::unordered_set<const void *> g_outstanding;
thread_local int g_own_arrays = 0;
}  // namespace

OwnArrays::OwnArrays() {
    ++g_own_arrays;
}
OwnArrays::~OwnArrays() {
    --g_own_arrays;
}

OpRecord *begin_op(Ep &ep, void *app_ctx, uint64_t flags, bool tx, int *err) {
    const profile &p = *ep.prof;
    size_t share = context_share(ep.domain->mode);
    if (share) {
        if (!app_ctx) {
            *err = violation(p, "context-missing", -FI_EINVAL, "a %s operation has no context under %s",
                             tx ? "transmit" : "receive",
                             share == sizeof(fi_context2) ? "FI_CONTEXT2" : "FI_CONTEXT");
            return nullptr;
        }
        std::lock_guard<std::mutex> lock(g_ctx_lock);
        if (!g_outstanding.insert(app_ctx).second) {
            *err = violation(p, "context-reused", -FI_EINVAL,
                             "context %p is still owned by an outstanding operation", app_ctx);
            return nullptr;
        }
    }
    auto *rec = new OpRecord{};
    rec->ep = &ep;
    rec->app_ctx = app_ctx;
    rec->tx = tx;
    bool selective = tx ? ep.tx_selective : ep.rx_selective;
    rec->report = !selective || (flags & FI_COMPLETION);
    if (share) {
        rec->ctx_share = share;
        stamp_context(app_ctx, share);  // the provider's share is ours until completion
    }
    if (tx) ep.outstanding_tx++;
    ep.live.insert(rec);
    return rec;
}

void add_snapshot(OpRecord &rec, const void *where, size_t bytes) {
    if (!(rec.ep->domain->mode & FI_ASYNC_IOV) || !where || !bytes || g_own_arrays) return;
    auto *b = static_cast<const unsigned char *>(where);
    rec.snaps.push_back({where, std::vector<unsigned char>(b, b + bytes)});
}

static void forget_context(OpRecord *rec) {
    if (!rec->ctx_share) return;
    std::lock_guard<std::mutex> lock(g_ctx_lock);
    g_outstanding.erase(rec->app_ctx);
}

static void release(OpRecord *rec) {
    if (!rec->orphaned) {
        forget_context(rec);
        if (rec->tx && rec->ep->outstanding_tx) rec->ep->outstanding_tx--;
        rec->ep->live.erase(rec);
    }
    delete rec;
}

void abort_op(OpRecord *rec) {
    if (rec) release(rec);
}

bool finish_op(OpRecord *rec, int *err) {
    if (rec->orphaned) {  // its endpoint is closed: nothing is owed to anyone
        delete rec;
        return false;
    }
    const profile &p = *rec->ep->prof;
    bool ok = true;
    if (rec->ctx_share && !context_intact(rec->app_ctx, rec->ctx_share)) {
        *err = violation(p, "context-overwritten", -FI_EINVAL,
                         "the provider's %zu bytes of context %p changed while the operation was outstanding",
                         rec->ctx_share, rec->app_ctx);
        ok = false;
    }
    for (const auto &s : rec->snaps) {
        if (ok && std::memcmp(s.where, s.bytes.data(), s.bytes.size()) != 0) {
            *err = violation(p, "async-iov-changed", -FI_EINVAL,
                             "an iov array at %p changed before its operation completed (FI_ASYNC_IOV)",
                             s.where);
            ok = false;
        }
    }
    release(rec);
    return ok;
}

static int ep_close(fid *f) {
    auto *e = owner<Ep>(f);
    e->inner.reset();
    // The inner endpoint took its operations with it. A record stays allocated (the inner
    // CQ may still name it) but owns no context and no endpoint any more.
    for (OpRecord *rec : e->live) {
        forget_context(rec);
        rec->orphaned = true;
    }
    e->live.clear();
    if (e->tx_cq) e->tx_cq->binds--;
    if (e->rx_cq && e->rx_cq != e->tx_cq) e->rx_cq->binds--;
    e->domain->children--;
    delete e;
    return 0;
}

static int ep_bind(fid *f, fid *bfid, uint64_t flags) {
    auto *e = owner<Ep>(f);
    switch (bfid->fclass) {
    case FI_CLASS_AV: return fi_ep_bind(e->inner.get(), &owner<Av>(bfid)->inner->fid, flags);
    case FI_CLASS_CQ: {
        auto *c = owner<Cq>(bfid);
        // Every inner operation completes, so our records are always freed; suppressed completions
        // are dropped when read.
        int ret = fi_ep_bind(e->inner.get(), &c->inner->fid, flags & ~FI_SELECTIVE_COMPLETION);
        if (ret) return ret;
        if (flags & FI_TRANSMIT) {
            e->tx_cq = c;
            e->tx_selective = flags & FI_SELECTIVE_COMPLETION;
        }
        if (flags & FI_RECV) {
            e->rx_cq = c;
            e->rx_selective = flags & FI_SELECTIVE_COMPLETION;
        }
        c->binds++;
        return 0;
    }
    default: return -FI_ENOSYS;  // counters, EQs: not wrapped
    }
}

static int ep_control(fid *f, int command, void *arg) {
    auto *e = owner<Ep>(f);
    switch (command) {
    case FI_ENABLE:
        // OSCF_STRICT_FAIL_ENABLE set: a provider failure on demand, for the message a user
        // gets when libfabric fails under osc/fabric (test/mpi/run-help).
        if (std::getenv("OSCF_STRICT_FAIL_ENABLE")) return -FI_EIO;
        return fi_enable(e->inner.get());
    case FI_GETOPSFLAG: {
        auto *fl = static_cast<uint64_t *>(arg);
        *fl = (*fl & FI_TRANSMIT) ? e->tx_op_flags : e->rx_op_flags;
        return 0;
    }
    case FI_SETOPSFLAG: {
        auto *fl = static_cast<uint64_t *>(arg);
        if (*fl & FI_TRANSMIT)
            e->tx_op_flags = *fl & ~FI_TRANSMIT;
        else
            e->rx_op_flags = *fl & ~FI_RECV;
        return 0;
    }
    default: return -FI_ENOSYS;
    }
}

static int ep_getname(fid_t f, void *addr, size_t *addrlen) {
    return fi_getname(&owner<Ep>(f)->inner->fid, addr, addrlen);
}

static int ep_getopt(fid_t f, int level, int optname, void *optval, size_t *optlen) {
    return fi_getopt(&owner<Ep>(f)->inner->fid, level, optname, optval, optlen);
}
static int ep_setopt(fid_t f, int level, int optname, const void *optval, size_t optlen) {
    return fi_setopt(&owner<Ep>(f)->inner->fid, level, optname, optval, optlen);
}

static fi_ops g_ep_fi_ops = {
    sizeof(fi_ops),
    ep_close,
    ep_bind,
    ep_control,
    STRICT_NOSYS(fi_ops, ops_open),
    STRICT_NOSYS(fi_ops, tostr),
    STRICT_NOSYS(fi_ops, ops_set),
};
static fi_ops_ep g_ep_ops = {
    sizeof(fi_ops_ep),
    STRICT_NOSYS(fi_ops_ep, cancel),
    ep_getopt,
    ep_setopt,
    STRICT_NOSYS(fi_ops_ep, tx_ctx),
    STRICT_NOSYS(fi_ops_ep, rx_ctx),
    STRICT_NOSYS(fi_ops_ep, rx_size_left),
    STRICT_NOSYS(fi_ops_ep, tx_size_left),
};
static fi_ops_cm g_cm_ops = {
    sizeof(fi_ops_cm),
    STRICT_NOSYS(fi_ops_cm, setname),
    ep_getname,
    STRICT_NOSYS(fi_ops_cm, getpeer),
    STRICT_NOSYS(fi_ops_cm, connect),
    STRICT_NOSYS(fi_ops_cm, listen),
    STRICT_NOSYS(fi_ops_cm, accept),
    STRICT_NOSYS(fi_ops_cm, reject),
    STRICT_NOSYS(fi_ops_cm, shutdown),
    STRICT_NOSYS(fi_ops_cm, join),
};
// No collectives: every entry answers -FI_ENOSYS (the inline wrappers call some unchecked).
static fi_ops_collective g_collective_ops = {
    sizeof(fi_ops_collective),
    STRICT_NOSYS(fi_ops_collective, barrier),
    STRICT_NOSYS(fi_ops_collective, broadcast),
    STRICT_NOSYS(fi_ops_collective, alltoall),
    STRICT_NOSYS(fi_ops_collective, allreduce),
    STRICT_NOSYS(fi_ops_collective, allgather),
    STRICT_NOSYS(fi_ops_collective, reduce_scatter),
    STRICT_NOSYS(fi_ops_collective, reduce),
    STRICT_NOSYS(fi_ops_collective, scatter),
    STRICT_NOSYS(fi_ops_collective, gather),
    STRICT_NOSYS(fi_ops_collective, msg),
    STRICT_NOSYS(fi_ops_collective, barrier2),
};

static fi_ops_tagged g_tagged_ops = {
    sizeof(fi_ops_tagged),
    STRICT_NOSYS(fi_ops_tagged, recv),
    STRICT_NOSYS(fi_ops_tagged, recvv),
    STRICT_NOSYS(fi_ops_tagged, recvmsg),
    STRICT_NOSYS(fi_ops_tagged, send),
    STRICT_NOSYS(fi_ops_tagged, sendv),
    STRICT_NOSYS(fi_ops_tagged, sendmsg),
    STRICT_NOSYS(fi_ops_tagged, inject),
    STRICT_NOSYS(fi_ops_tagged, senddata),
    STRICT_NOSYS(fi_ops_tagged, injectdata),
};

int ep_open(fid_domain *domain, fi_info *info, fid_ep **ep, void *context) {
    auto *d = owner<Domain>(domain);
    info_ptr inner_info(fi_dupinfo(d->inner_info.get()));
    if (!inner_info) return -FI_ENOMEM;
    fid_ep *raw = nullptr;
    int ret = fi_endpoint(d->inner.get(), inner_info.get(), &raw, context);
    if (ret) return ret;
    auto *e = new Ep{};
    e->inner.reset(raw);
    e->domain = d;
    e->prof = d->prof;
    e->tx_op_flags = info && info->tx_attr ? info->tx_attr->op_flags : 0;
    e->rx_op_flags = info && info->rx_attr ? info->rx_attr->op_flags : 0;
    e->ep.fid.fclass = FI_CLASS_EP;
    e->ep.fid.context = context;
    e->ep.fid.ops = &g_ep_fi_ops;
    e->ep.ops = &g_ep_ops;
    e->ep.cm = &g_cm_ops;
    e->ep.msg = &g_msg_ops;
    e->ep.rma = &g_rma_ops;
    e->ep.tagged = &g_tagged_ops;
    e->ep.atomic = &g_atomic_ops;
    e->ep.collective = &g_collective_ops;
    d->children++;
    *ep = &e->ep;
    return 0;
}

}  // namespace strict
