// Memory regions: keys, the FI_MR_ENDPOINT bind/enable life cycle, and the registry that desc checks
// consult. With FI_MR_ENDPOINT the inner registration happens only at fi_mr_enable, so the key is
// unknown to every target until then.
#include "strict.h"

#include <cstring>

namespace strict {

static int mr_close(fid *f) {
    auto *m = owner<Mr>(f);
    Domain *d = m->domain;
    d->regions.erase(m);
    auto it = d->keys.find(m->key);
    if (it != d->keys.end() && it->second == m) d->keys.erase(it);
    if (m->ep) m->ep->bound_mrs--;
    m->inner.reset();
    d->children--;
    delete m;
    return 0;
}

// Registers with the inner provider. Inner offsets: a VA profile registers with offset = the
// buffer's address so remote addresses stay virtual addresses.
static int inner_register(Mr &m) {
    Domain &d = *m.domain;
    uint64_t offset = m.offset;  // libfabric 1.17's offset-based providers ignore it (util_mr_map.c)
    fid_mr *raw = nullptr;
    int ret =
        fi_mr_regv(d.inner.get(), m.iov.data(), m.iov.size(), m.access, offset, m.key, 0, &raw, nullptr);
    if (ret) return ret;
    m.inner.reset(raw);
    if (d.inner_mr_mode & FI_MR_PROV_KEY) {
        d.keys.erase(m.key);
        m.key = fi_mr_key(raw);
        d.keys[m.key] = &m;
    }
    m.mr.key = m.key;
    m.enabled = true;
    return 0;
}

static int mr_bind(fid *f, fid *bfid, uint64_t flags) {
    (void)flags;
    auto *m = owner<Mr>(f);
    if (!(m->domain->mr_mode & FI_MR_ENDPOINT)) return -FI_ENOSYS;
    if (!bfid || bfid->fclass != FI_CLASS_EP) return -FI_EINVAL;
    if (m->bound) return -FI_EINVAL;
    m->ep = owner<Ep>(bfid);
    m->ep->bound_mrs++;
    m->bound = true;
    return 0;
}

static int mr_control(fid *f, int command, void *arg) {
    (void)arg;
    auto *m = owner<Mr>(f);
    if (command != FI_ENABLE) return -FI_ENOSYS;
    const profile &p = *m->domain->prof;
    if (!(m->domain->mr_mode & FI_MR_ENDPOINT)) return 0;
    if (!m->bound)
        return violation(p, "mr-not-bound", -FI_EINVAL, "fi_mr_enable before fi_mr_bind to an endpoint");
    if (m->enabled) return 0;
    return inner_register(*m);
}

static fi_ops g_mr_fi_ops = {
    sizeof(fi_ops),
    mr_close,
    mr_bind,
    mr_control,
    STRICT_NOSYS(fi_ops, ops_open),
    STRICT_NOSYS(fi_ops, tostr),
    STRICT_NOSYS(fi_ops, ops_set),
};

int mr_regattr(fid *fid, const fi_mr_attr *attr, uint64_t flags, fid_mr **mr) {
    auto *d = owner<Domain>(fid);
    const profile &p = *d->prof;
    if (!attr || !attr->mr_iov || attr->iov_count == 0) return -FI_EINVAL;
    bool prov_key = d->mr_mode & FI_MR_PROV_KEY;
    uint64_t key = attr->requested_key;
    if (prov_key && d->va_emulated) {
        auto base = reinterpret_cast<uint64_t>(attr->mr_iov[0].iov_base);
        do key = (base << 16) | (d->next_key++ & 0xffff);
        while (d->keys.count(key));
    } else if (prov_key) {
        key = d->next_key++;
    } else {
        if (p.mr_key_size < 8 && (key >> (8 * p.mr_key_size)) != 0)
            return violation(p, "key-too-large", -FI_EKEYREJECTED, "requested key %#llx exceeds %zu bytes",
                             static_cast<unsigned long long>(key), p.mr_key_size);
        if (d->keys.count(key))
            return violation(p, "key-in-use", -FI_ENOKEY, "requested key %#llx is already registered",
                             static_cast<unsigned long long>(key));
    }
    auto *m = new Mr{};
    m->domain = d;
    m->iov.assign(attr->mr_iov, attr->mr_iov + attr->iov_count);
    m->access = attr->access;
    m->offset = attr->offset;
    m->key = key;
    m->mr.fid.fclass = FI_CLASS_MR;
    m->mr.fid.context = attr->context;
    m->mr.fid.ops = &g_mr_fi_ops;
    m->mr.mem_desc = m;  // the desc we hand out is our own record, checked against the registry
    m->mr.key = (prov_key && (d->mr_mode & FI_MR_ENDPOINT)) ? FI_KEY_NOTAVAIL : key;
    d->keys[key] = m;
    if (!(d->mr_mode & FI_MR_ENDPOINT)) {
        int ret = inner_register(*m);
        if (ret) {
            d->keys.erase(key);
            delete m;
            return ret;
        }
    }
    (void)flags;
    d->regions.insert(m);
    d->children++;
    *mr = &m->mr;
    return 0;
}

int mr_regv(fid *fid, const iovec *iov, size_t count, uint64_t access, uint64_t offset,
            uint64_t requested_key, uint64_t flags, fid_mr **mr, void *context) {
    fi_mr_attr attr{};
    attr.mr_iov = iov;
    attr.iov_count = count;
    attr.access = access;
    attr.offset = offset;
    attr.requested_key = requested_key;
    attr.context = context;
    return mr_regattr(fid, &attr, flags, mr);
}

int mr_reg(fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset, uint64_t requested_key,
           uint64_t flags, fid_mr **mr, void *context) {
    iovec iov{const_cast<void *>(buf), len};
    return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

// Never dereferences desc unless the registry knows it.
int check_desc(Ep &ep, const char *what, const void *buf, size_t len, void *desc, uint64_t need) {
    Domain &d = *ep.domain;
    const profile &p = *d.prof;
    bool local = d.mr_mode & FI_MR_LOCAL;
    if (!desc) {
        if (local && len)
            return violation(p, "desc-missing", -FI_EINVAL,
                             "%s buffer %p (%zu bytes) has no desc under FI_MR_LOCAL", what, buf, len);
        return 0;
    }
    if (!d.regions.count(desc))
        return violation(p, "desc-wrong", -FI_EINVAL, "%s desc %p is not a live region of this domain", what,
                         desc);
    auto *m = static_cast<Mr *>(desc);
    if (!m->enabled)
        return violation(p, "mr-not-enabled", -FI_EINVAL, "%s desc %p used before fi_mr_enable", what, desc);
    if (!local) return 0;
    auto b = reinterpret_cast<uintptr_t>(buf);
    bool covered = false;
    for (const iovec &r : m->iov) {
        auto rb = reinterpret_cast<uintptr_t>(r.iov_base);
        if (b >= rb && b + len <= rb + r.iov_len) covered = true;
    }
    if (!covered)
        return violation(p, "desc-too-small", -FI_EINVAL, "%s buffer %p+%zu is not inside its region", what,
                         buf, len);
    uint64_t local_bits = FI_SEND | FI_RECV | FI_READ | FI_WRITE;
    if ((m->access & local_bits) && !(m->access & need))
        return violation(p, "desc-wrong", -FI_EINVAL, "%s region lacks the %s access flag", what,
                         need == FI_SEND   ? "FI_SEND"
                         : need == FI_RECV ? "FI_RECV"
                         : need == FI_READ ? "FI_READ"
                                           : "FI_WRITE");
    return 0;
}

uint64_t inner_raddr(const Ep &ep, uint64_t addr, uint64_t key) {
    if (!ep.domain->va_emulated) return addr;
    return addr - (key >> 16);
}

void *inner_desc(Ep &ep, void *desc) {
    if (!desc || !ep.domain->regions.count(desc)) return nullptr;
    auto *m = static_cast<Mr *>(desc);
    return m->inner ? fi_mr_desc(m->inner.get()) : nullptr;
}

int check_remote_key(Ep &ep, uint64_t key) {
    if (key == FI_KEY_NOTAVAIL)
        return violation(*ep.prof, "key-unknown", -FI_EINVAL,
                         "remote key FI_KEY_NOTAVAIL (read with fi_mr_key before fi_mr_enable?)");
    return 0;
}

}  // namespace strict
