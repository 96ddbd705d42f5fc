// RMA operations: limits, descs, keys, delivery-complete and fence rules, then the inner call.
#include "strict.h"

namespace strict {

static ssize_t do_rma(Ep &ep, const fi_msg_rma *msg, uint64_t flags, bool write) {
    const profile &p = *ep.prof;
    size_t total = iov_total(msg->msg_iov, msg->iov_count);
    if (int ret = check_counts(ep, msg->iov_count, msg->rma_iov_count, total)) return ret;
    for (size_t i = 0; i < msg->iov_count; ++i)
        if (int ret = check_desc(ep, write ? "write source" : "read destination", msg->msg_iov[i].iov_base,
                                 msg->msg_iov[i].iov_len, msg->desc ? msg->desc[i] : nullptr,
                                 write ? FI_WRITE : FI_READ))
            return ret;
    for (size_t i = 0; i < msg->rma_iov_count; ++i)
        if (int ret = check_remote_key(ep, msg->rma_iov[i].key)) return ret;
    if (write && (flags & FI_DELIVERY_COMPLETE) && !p.delivery_complete)
        return violation(p, "delivery-complete-unavailable", -FI_EINVAL,
                         "an RMA write asks FI_DELIVERY_COMPLETE; %s completes writes at transmit", p.name);
    if (write) {
        if (int ret = check_inject(ep, flags, total)) return ret;
    }
    if (int ret = check_fence(ep, &flags)) return ret;
    int err = 0;
    OpRecord *rec = begin_op(ep, msg->context, flags, true, &err);
    if (!rec) return err;
    add_snapshot(*rec, msg->msg_iov, msg->iov_count * sizeof(iovec));
    add_snapshot(*rec, msg->desc, msg->desc ? msg->iov_count * sizeof(void *) : 0);
    add_snapshot(*rec, msg->rma_iov, msg->rma_iov_count * sizeof(fi_rma_iov));
    std::vector<void *> desc(msg->iov_count);
    for (size_t i = 0; i < msg->iov_count; ++i) desc[i] = inner_desc(ep, msg->desc ? msg->desc[i] : nullptr);
    std::vector<fi_rma_iov> rma(msg->rma_iov, msg->rma_iov + msg->rma_iov_count);
    for (fi_rma_iov &r : rma) r.addr = inner_raddr(ep, r.addr, r.key);
    fi_msg_rma m = *msg;
    m.rma_iov = rma.data();
    m.desc = desc.data();
    m.context = rec;
    iovec b{};
    if (write && bounce_inject(ep, *rec, msg->msg_iov, msg->iov_count, total, &flags)) {
        b = {rec->bounce.data(), total};
        m.msg_iov = &b;
        m.iov_count = 1;
        desc.assign(1, nullptr);
        m.desc = desc.data();
    }
    ssize_t ret = write ? fi_writemsg(ep.inner.get(), &m, flags) : fi_readmsg(ep.inner.get(), &m, flags);
    if (ret) abort_op(rec);
    return ret;
}

static fi_msg_rma make(const iovec *iov, void **desc, size_t count, fi_addr_t peer, const fi_rma_iov *rma,
                       void *ctx, uint64_t data) {
    fi_msg_rma m{};
    m.msg_iov = iov;
    m.desc = desc;
    m.iov_count = count;
    m.addr = peer;
    m.rma_iov = rma;
    m.rma_iov_count = 1;
    m.context = ctx;
    m.data = data;
    return m;
}

static ssize_t r_readv(fid_ep *ep, const iovec *iov, void **desc, size_t count, fi_addr_t src, uint64_t addr,
                       uint64_t key, void *ctx) {
    OwnArrays own;  // see strict.h
    Ep &e = *owner<Ep>(ep);
    fi_rma_iov r{addr, iov_total(iov, count), key};
    fi_msg_rma m = make(iov, desc, count, src, &r, ctx, 0);
    return do_rma(e, &m, e.tx_op_flags & ~FI_INJECT, false);
}
static ssize_t r_read(fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t addr,
                      uint64_t key, void *ctx) {
    iovec iov{buf, len};
    return r_readv(ep, &iov, &desc, 1, src, addr, key, ctx);
}
static ssize_t r_readmsg(fid_ep *ep, const fi_msg_rma *msg, uint64_t flags) {
    return do_rma(*owner<Ep>(ep), msg, flags, false);
}
static ssize_t r_writev(fid_ep *ep, const iovec *iov, void **desc, size_t count, fi_addr_t dest,
                        uint64_t addr, uint64_t key, void *ctx) {
    OwnArrays own;  // see strict.h
    Ep &e = *owner<Ep>(ep);
    fi_rma_iov r{addr, iov_total(iov, count), key};
    fi_msg_rma m = make(iov, desc, count, dest, &r, ctx, 0);
    return do_rma(e, &m, e.tx_op_flags & ~FI_INJECT, true);
}
static ssize_t r_write(fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t addr,
                       uint64_t key, void *ctx) {
    iovec iov{const_cast<void *>(buf), len};
    return r_writev(ep, &iov, &desc, 1, dest, addr, key, ctx);
}
static ssize_t r_writemsg(fid_ep *ep, const fi_msg_rma *msg, uint64_t flags) {
    return do_rma(*owner<Ep>(ep), msg, flags, true);
}
static ssize_t r_writedata(fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest,
                           uint64_t addr, uint64_t key, void *ctx) {
    OwnArrays own;  // see strict.h
    Ep &e = *owner<Ep>(ep);
    iovec iov{const_cast<void *>(buf), len};
    fi_rma_iov r{addr, len, key};
    fi_msg_rma m = make(&iov, &desc, 1, dest, &r, ctx, data);
    return do_rma(e, &m, (e.tx_op_flags & ~FI_INJECT) | FI_REMOTE_CQ_DATA, true);
}

// fi_inject_write: no context, no completion; emulated with a swallowed write beyond the inner
// inject size.
static ssize_t inject_common(fid_ep *ep, const void *buf, size_t len, uint64_t data, bool with_data,
                             fi_addr_t dest, uint64_t addr, uint64_t key) {
    Ep &e = *owner<Ep>(ep);
    if (int ret = check_counts(e, 1, 1, len)) return ret;
    if (int ret = check_inject(e, FI_INJECT, len)) return ret;
    if (int ret = check_remote_key(e, key)) return ret;
    addr = inner_raddr(e, addr, key);
    if (len <= e.domain->inner_inject)
        return with_data ? fi_inject_writedata(e.inner.get(), buf, len, data, dest, addr, key)
                         : fi_inject_write(e.inner.get(), buf, len, dest, addr, key);
    auto *rec = new OpRecord{};
    rec->ep = &e;
    rec->report = false;
    rec->tx = false;
    rec->bounce.assign(static_cast<const unsigned char *>(buf),
                       static_cast<const unsigned char *>(buf) + len);
    e.live.insert(rec);  // an endpoint closed before its completion orphans it too
    iovec iov{rec->bounce.data(), len};
    void *desc = nullptr;
    fi_rma_iov r{addr, len, key};
    fi_msg_rma m = make(&iov, &desc, 1, dest, &r, rec, data);
    ssize_t ret = fi_writemsg(e.inner.get(), &m, with_data ? FI_REMOTE_CQ_DATA : 0);
    if (ret) {
        e.live.erase(rec);
        delete rec;
    }
    return ret;
}
static ssize_t r_inject(fid_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t addr,
                        uint64_t key) {
    return inject_common(ep, buf, len, 0, false, dest, addr, key);
}
static ssize_t r_injectdata(fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
                            uint64_t addr, uint64_t key) {
    return inject_common(ep, buf, len, data, true, dest, addr, key);
}

fi_ops_rma g_rma_ops = {
    sizeof(fi_ops_rma), r_read,     r_readv,  r_readmsg,   r_write,
    r_writev,           r_writemsg, r_inject, r_writedata, r_injectdata,
};

}  // namespace strict
