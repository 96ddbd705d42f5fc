// Message operations (send, recv, inject) and the post-time checks all data operations share.
#include "strict.h"

#include <cstring>

namespace strict {

size_t iov_total(const iovec *iov, size_t count) {
    size_t t = 0;
    for (size_t i = 0; i < count; ++i) t += iov[i].iov_len;
    return t;
}

int check_fence(Ep &ep, uint64_t *flags) {
    if (!(*flags & FI_FENCE)) return 0;
    if (!ep.prof->fence)
        return violation(*ep.prof, "fence-unsupported", -FI_EINVAL, "FI_FENCE requested; %s has no FI_FENCE",
                         ep.prof->name);
    // The inner provider has no fence: a fenced op waits (the caller retries) until every earlier
    // transmit op of this endpoint has completed, which is what a fence guarantees.
    if (ep.outstanding_tx) return -FI_EAGAIN;
    *flags &= ~FI_FENCE;
    return 0;
}

int check_counts(Ep &ep, size_t iov_count, size_t rma_iov_count, size_t total_len) {
    const profile &p = *ep.prof;
    if (iov_count > p.iov_limit)
        return violation(p, "iov-limit", -FI_EINVAL, "%zu local iovs, the limit is %zu", iov_count,
                         p.iov_limit);
    if (rma_iov_count > p.rma_iov_limit)
        return violation(p, "rma-iov-limit", -FI_EINVAL, "%zu remote iovs, the limit is %zu", rma_iov_count,
                         p.rma_iov_limit);
    if (total_len > p.max_msg_size)
        return violation(p, "msg-size", -FI_EINVAL, "%zu bytes, max_msg_size is %zu", total_len,
                         p.max_msg_size);
    return 0;
}

int check_inject(Ep &ep, uint64_t flags, size_t total_len) {
    if (!(flags & FI_INJECT) || total_len <= ep.prof->inject_size) return 0;
    return violation(*ep.prof, "inject-too-large", -FI_EINVAL, "%zu bytes injected, inject_size is %zu",
                     total_len, ep.prof->inject_size);
}

bool bounce_inject(Ep &ep, OpRecord &rec, const iovec *iov, size_t count, size_t total, uint64_t *flags) {
    if (!(*flags & FI_INJECT) || total <= ep.domain->inner_inject) return false;
    rec.bounce.resize(total);
    size_t at = 0;
    for (size_t i = 0; i < count; ++i) {
        std::memcpy(rec.bounce.data() + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    *flags &= ~FI_INJECT;
    return true;
}

static ssize_t do_sendmsg(Ep &ep, const fi_msg *msg, uint64_t flags) {
    size_t total = iov_total(msg->msg_iov, msg->iov_count);
    if (int ret = check_counts(ep, msg->iov_count, 0, total)) return ret;
    for (size_t i = 0; i < msg->iov_count; ++i)
        if (int ret = check_desc(ep, "send", msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len,
                                 msg->desc ? msg->desc[i] : nullptr, FI_SEND))
            return ret;
    if (int ret = check_inject(ep, flags, total)) return ret;
    if (int ret = check_fence(ep, &flags)) return ret;
    int err = 0;
    OpRecord *rec = begin_op(ep, msg->context, flags, true, &err);
    if (!rec) return err;
    add_snapshot(*rec, msg->msg_iov, msg->iov_count * sizeof(iovec));
    add_snapshot(*rec, msg->desc, msg->desc ? msg->iov_count * sizeof(void *) : 0);
    std::vector<void *> desc(msg->iov_count);
    for (size_t i = 0; i < msg->iov_count; ++i) desc[i] = inner_desc(ep, msg->desc ? msg->desc[i] : nullptr);
    fi_msg m = *msg;
    m.desc = desc.data();
    m.context = rec;
    iovec b{};
    if (bounce_inject(ep, *rec, msg->msg_iov, msg->iov_count, total, &flags)) {
        b = {rec->bounce.data(), total};
        m.msg_iov = &b;
        m.iov_count = 1;
        desc.assign(1, nullptr);
        m.desc = desc.data();
    }
    ssize_t ret = fi_sendmsg(ep.inner.get(), &m, flags);
    if (ret) abort_op(rec);
    return ret;
}

static ssize_t do_recvmsg(Ep &ep, const fi_msg *msg, uint64_t flags) {
    size_t total = iov_total(msg->msg_iov, msg->iov_count);
    if (int ret = check_counts(ep, msg->iov_count, 0, total)) return ret;
    for (size_t i = 0; i < msg->iov_count; ++i)
        if (int ret = check_desc(ep, "recv", msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len,
                                 msg->desc ? msg->desc[i] : nullptr, FI_RECV))
            return ret;
    int err = 0;
    OpRecord *rec = begin_op(ep, msg->context, flags, false, &err);
    if (!rec) return err;
    add_snapshot(*rec, msg->msg_iov, msg->iov_count * sizeof(iovec));
    std::vector<void *> desc(msg->iov_count);
    for (size_t i = 0; i < msg->iov_count; ++i) desc[i] = inner_desc(ep, msg->desc ? msg->desc[i] : nullptr);
    fi_msg m = *msg;
    m.desc = desc.data();
    m.context = rec;
    ssize_t ret = fi_recvmsg(ep.inner.get(), &m, flags);
    if (ret) abort_op(rec);
    return ret;
}

static fi_msg make_msg(const iovec *iov, void **desc, size_t count, fi_addr_t addr, void *ctx,
                       uint64_t data) {
    fi_msg m{};
    m.msg_iov = iov;
    m.desc = desc;
    m.iov_count = count;
    m.addr = addr;
    m.context = ctx;
    m.data = data;
    return m;
}

static ssize_t m_recvv(fid_ep *ep, const iovec *iov, void **desc, size_t count, fi_addr_t src, void *ctx) {
    OwnArrays own;  // see strict.h
    Ep &e = *owner<Ep>(ep);
    fi_msg m = make_msg(iov, desc, count, src, ctx, 0);
    return do_recvmsg(e, &m, e.rx_op_flags);
}
static ssize_t m_recv(fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, void *ctx) {
    iovec iov{buf, len};
    return m_recvv(ep, &iov, &desc, 1, src, ctx);
}
static ssize_t m_recvmsg(fid_ep *ep, const fi_msg *msg, uint64_t flags) {
    return do_recvmsg(*owner<Ep>(ep), msg, flags);
}
static ssize_t m_sendv(fid_ep *ep, const iovec *iov, void **desc, size_t count, fi_addr_t dest, void *ctx) {
    OwnArrays own;  // see strict.h
    Ep &e = *owner<Ep>(ep);
    fi_msg m = make_msg(iov, desc, count, dest, ctx, 0);
    return do_sendmsg(e, &m, e.tx_op_flags & ~FI_INJECT);
}
static ssize_t m_send(fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest, void *ctx) {
    iovec iov{const_cast<void *>(buf), len};
    return m_sendv(ep, &iov, &desc, 1, dest, ctx);
}
static ssize_t m_sendmsg(fid_ep *ep, const fi_msg *msg, uint64_t flags) {
    return do_sendmsg(*owner<Ep>(ep), msg, flags);
}
static ssize_t m_senddata(fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest,
                          void *ctx) {
    OwnArrays own;  // see strict.h
    Ep &e = *owner<Ep>(ep);
    iovec iov{const_cast<void *>(buf), len};
    fi_msg m = make_msg(&iov, &desc, 1, dest, ctx, data);
    return do_sendmsg(e, &m, (e.tx_op_flags & ~FI_INJECT) | FI_REMOTE_CQ_DATA);
}

// fi_inject: no context and never a completion; beyond the inner inject size it becomes a send
// whose completion we swallow.
static ssize_t inject_common(fid_ep *ep, const void *buf, size_t len, uint64_t data, bool with_data,
                             fi_addr_t dest) {
    Ep &e = *owner<Ep>(ep);
    if (int ret = check_counts(e, 1, 0, len)) return ret;
    if (int ret = check_inject(e, FI_INJECT, len)) return ret;
    if (len <= e.domain->inner_inject)
        return with_data ? fi_injectdata(e.inner.get(), buf, len, data, dest)
                         : fi_inject(e.inner.get(), buf, len, dest);
    auto *rec = new OpRecord{};
    rec->ep = &e;
    rec->report = false;
    rec->tx = false;  // not fenced against: the application already owns its buffer again
    rec->bounce.assign(static_cast<const unsigned char *>(buf),
                       static_cast<const unsigned char *>(buf) + len);
    e.live.insert(rec);  // an endpoint closed before its completion orphans it too
    iovec iov{rec->bounce.data(), len};
    void *desc = nullptr;
    fi_msg m = make_msg(&iov, &desc, 1, dest, rec, data);
    ssize_t ret = fi_sendmsg(e.inner.get(), &m, with_data ? FI_REMOTE_CQ_DATA : 0);
    if (ret) {
        e.live.erase(rec);
        delete rec;
    }
    return ret;
}
static ssize_t m_inject(fid_ep *ep, const void *buf, size_t len, fi_addr_t dest) {
    return inject_common(ep, buf, len, 0, false, dest);
}
static ssize_t m_injectdata(fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest) {
    return inject_common(ep, buf, len, data, true, dest);
}

fi_ops_msg g_msg_ops = {
    sizeof(fi_ops_msg), m_recv,   m_recvv,    m_recvmsg,    m_send, m_sendv,
    m_sendmsg,          m_inject, m_senddata, m_injectdata,
};

}  // namespace strict
