// Completion queue wrapper: reads the inner CQ, maps each entry's context (our OpRecord) back to the
// application's, drops completions the application suppressed, and turns ops that broke a rule
// detected only at completion into error completions.
#include "strict.h"

#include <cstring>

namespace strict {

static size_t entry_size(fi_cq_format f) {
    switch (f) {
    case FI_CQ_FORMAT_CONTEXT: return sizeof(fi_cq_entry);
    case FI_CQ_FORMAT_MSG: return sizeof(fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA: return sizeof(fi_cq_data_entry);
    case FI_CQ_FORMAT_TAGGED: return sizeof(fi_cq_tagged_entry);
    default: return 0;
    }
}

static int cq_close(fid *f) {
    auto *c = owner<Cq>(f);
    if (c->binds) return -FI_EBUSY;
    c->inner.reset();
    c->domain->children--;
    delete c;
    return 0;
}

// All formats start with op_context; MSG and larger have flags right after it.
static ssize_t cq_readfrom(fid_cq *cq, void *buf, size_t count, fi_addr_t *src_addr) {
    auto *c = owner<Cq>(cq);
    if (!c->errors.empty()) return -FI_EAVAIL;
    std::vector<unsigned char> tmp(c->entry_size * count);
    std::vector<fi_addr_t> addrs(count);
    ssize_t n = src_addr ? fi_cq_readfrom(c->inner.get(), tmp.data(), count, addrs.data())
                         : fi_cq_read(c->inner.get(), tmp.data(), count);
    if (n <= 0) return n;
    size_t out = 0;
    for (ssize_t i = 0; i < n; ++i) {
        unsigned char *e = tmp.data() + i * c->entry_size;
        void *ctx;
        std::memcpy(&ctx, e, sizeof(ctx));
        if (ctx) {
            auto *rec = static_cast<OpRecord *>(ctx);
            if (rec->orphaned) {
                finish_op(rec, nullptr);
                continue;
            }
            void *app_ctx = rec->app_ctx;
            bool report = rec->report;
            int err = 0;
            bool ok = finish_op(rec, &err);
            if (!ok) {
                fi_cq_err_entry ee{};
                ee.op_context = app_ctx;
                if (c->entry_size >= sizeof(fi_cq_msg_entry)) std::memcpy(&ee.flags, e + sizeof(void *), 8);
                ee.err = -err;  // fi_cq_err_entry carries a positive errno
                ee.prov_errno = -err;
                c->errors.push_back(ee);
                continue;
            }
            if (!report) continue;
            std::memcpy(e, &app_ctx, sizeof(app_ctx));
        }
        std::memcpy(static_cast<unsigned char *>(buf) + out * c->entry_size, e, c->entry_size);
        if (src_addr) src_addr[out] = addrs[i];
        ++out;
    }
    if (out == 0) return c->errors.empty() ? -FI_EAGAIN : -FI_EAVAIL;
    return static_cast<ssize_t>(out);
}

static ssize_t cq_read(fid_cq *cq, void *buf, size_t count) {
    return cq_readfrom(cq, buf, count, nullptr);
}

static ssize_t cq_readerr(fid_cq *cq, fi_cq_err_entry *buf, uint64_t flags) {
    auto *c = owner<Cq>(cq);
    if (!c->errors.empty()) {
        fi_cq_err_entry e = c->errors.front();
        c->errors.pop_front();
        // Keep the application's err_data buffer settings (fi_cq(3), API >= 1.5).
        e.err_data = buf->err_data;
        e.err_data_size = 0;
        *buf = e;
        return 1;
    }
    ssize_t n = fi_cq_readerr(c->inner.get(), buf, flags);
    if (n > 0 && buf->op_context) {
        auto *rec = static_cast<OpRecord *>(buf->op_context);
        if (rec->orphaned) {  // an operation of a closed endpoint: not the application's now
            finish_op(rec, nullptr);
            return -FI_EAGAIN;
        }
        buf->op_context = rec->app_ctx;
        int err = 0;
        finish_op(rec, &err);  // the op failed anyway; its error is the one to report
    }
    return n;
}

static const char *cq_strerror(fid_cq *cq, int prov_errno, const void *err_data, char *buf, size_t len) {
    return fi_cq_strerror(owner<Cq>(cq)->inner.get(), prov_errno, err_data, buf, len);
}

static fi_ops g_cq_fi_ops = {
    sizeof(fi_ops),
    cq_close,
    STRICT_NOSYS(fi_ops, bind),
    STRICT_NOSYS(fi_ops, control),
    STRICT_NOSYS(fi_ops, ops_open),
    STRICT_NOSYS(fi_ops, tostr),
    STRICT_NOSYS(fi_ops, ops_set),
};
static fi_ops_cq g_cq_ops = {
    sizeof(fi_ops_cq),
    cq_read,
    cq_readfrom,
    cq_readerr,
    STRICT_NOSYS(fi_ops_cq, sread),
    STRICT_NOSYS(fi_ops_cq, sreadfrom),
    STRICT_NOSYS(fi_ops_cq, signal),
    cq_strerror,
};

int cq_open(fid_domain *domain, fi_cq_attr *attr, fid_cq **cq, void *context) {
    auto *d = owner<Domain>(domain);
    fi_cq_attr a = attr ? *attr : fi_cq_attr{};
    if (a.format == FI_CQ_FORMAT_UNSPEC) a.format = FI_CQ_FORMAT_CONTEXT;
    size_t es = entry_size(a.format);
    if (!es) return -FI_ENOSYS;
    fid_cq *raw = nullptr;
    int ret = fi_cq_open(d->inner.get(), &a, &raw, context);
    if (ret) return ret;
    auto *c = new Cq{};
    c->inner.reset(raw);
    c->domain = d;
    c->format = a.format;
    c->entry_size = es;
    c->cq.fid.fclass = FI_CLASS_CQ;
    c->cq.fid.context = context;
    c->cq.fid.ops = &g_cq_fi_ops;
    c->cq.ops = &g_cq_ops;
    d->children++;
    *cq = &c->cq;
    return 0;
}

}  // namespace strict
