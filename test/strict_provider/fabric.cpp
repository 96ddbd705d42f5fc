// Fabric and domain wrappers: open the inner fabric/domain, count children, refuse early closes.
#include "strict.h"

#include <cstdlib>
#include <cstring>

namespace strict {

info_ptr inner_getinfo(const profile &p, const fi_info *hints, uint32_t version, const char *node,
                       const char *service, uint64_t flags, int *err);
uint64_t profile_mr_mode(const profile &p, uint64_t hinted);
uint64_t profile_mode(const profile &p, uint64_t caps);

static int fabric_close(fid *f) {
    auto *fab = owner<Fabric>(f);
    if (fab->children) return -FI_EBUSY;
    print_summary(*fab->prof);
    delete fab;
    return 0;
}

static fi_ops g_fabric_fi_ops = {
    sizeof(fi_ops),
    fabric_close,
    STRICT_NOSYS(fi_ops, bind),
    STRICT_NOSYS(fi_ops, control),
    STRICT_NOSYS(fi_ops, ops_open),
    STRICT_NOSYS(fi_ops, tostr),
    STRICT_NOSYS(fi_ops, ops_set),
};

static fi_ops_fabric g_fabric_ops = {
    sizeof(fi_ops_fabric),
    domain_open,
    STRICT_NOSYS(fi_ops_fabric, passive_ep),
    STRICT_NOSYS(fi_ops_fabric, eq_open),
    STRICT_NOSYS(fi_ops_fabric, wait_open),
    STRICT_NOSYS(fi_ops_fabric, trywait),
    STRICT_NOSYS(fi_ops_fabric, domain2),
};

int fabric_open(fi_fabric_attr *attr, fid_fabric **fabric, void *context) {
    const profile *p = find_profile(std::getenv("OSCF_STRICT_PROFILE"));
    if (!p) return -FI_ENODATA;
    // Our infos keep the inner fabric's name, so the inner fabric is found by name alone.
    fi_fabric_attr inner_attr = *attr;
    inner_attr.prov_name = const_cast<char *>(inner_prov_name());
    inner_attr.prov_version = 0;  // ours (above any built-in: provider.cpp) would exceed the inner one's
    fid_fabric *raw = nullptr;
    int ret = fi_fabric(&inner_attr, &raw, context);
    if (ret) return ret;
    auto *fab = new Fabric{};
    fab->inner.reset(raw);
    fab->prof = p;
    fab->fab.fid.fclass = FI_CLASS_FABRIC;
    fab->fab.fid.context = context;
    fab->fab.fid.ops = &g_fabric_fi_ops;
    fab->fab.ops = &g_fabric_ops;
    fab->fab.api_version = attr->api_version;
    *fabric = &fab->fab;
    return 0;
}

static int domain_close(fid *f) {
    auto *d = owner<Domain>(f);
    if (d->children) return -FI_EBUSY;
    d->fabric->children--;
    d->inner.reset();
    delete d;
    return 0;
}

static fi_ops g_domain_fi_ops = {
    sizeof(fi_ops),
    domain_close,
    STRICT_NOSYS(fi_ops, bind),
    STRICT_NOSYS(fi_ops, control),
    STRICT_NOSYS(fi_ops, ops_open),
    STRICT_NOSYS(fi_ops, tostr),
    STRICT_NOSYS(fi_ops, ops_set),
};

static fi_ops_domain g_domain_ops = {
    sizeof(fi_ops_domain),
    av_open,
    cq_open,
    ep_open,
    STRICT_NOSYS(fi_ops_domain, scalable_ep),
    STRICT_NOSYS(fi_ops_domain, cntr_open),
    STRICT_NOSYS(fi_ops_domain, poll_open),
    STRICT_NOSYS(fi_ops_domain, stx_ctx),
    STRICT_NOSYS(fi_ops_domain, srx_ctx),
    query_atomic,
    STRICT_NOSYS(fi_ops_domain, query_collective),
    STRICT_NOSYS(fi_ops_domain, endpoint2),
};

static fi_ops_mr g_mr_ops = {sizeof(fi_ops_mr), mr_reg, mr_regv, mr_regattr};

int domain_open(fid_fabric *fabric, fi_info *info, fid_domain **dom, void *context) {
    auto *fab = owner<Fabric>(fabric);
    const profile &p = *fab->prof;
    // Ask the inner provider again for the domain named in the application's info.
    info_ptr hints(fi_dupinfo(info));
    if (!hints) return -FI_ENOMEM;
    hints->mode = ~0ull;  // the application's mode bits are for the profile, not the inner provider
    hints->domain_attr->mr_mode = static_cast<int>(info->domain_attr->mr_mode);
    hints->tx_attr->inject_size = 0;
    hints->tx_attr->iov_limit = hints->rx_attr->iov_limit = hints->tx_attr->rma_iov_limit = 0;
    hints->ep_attr->max_msg_size = 0;
    hints->ep_attr->max_order_raw_size = hints->ep_attr->max_order_war_size =
        hints->ep_attr->max_order_waw_size = 0;
    hints->tx_attr->msg_order = hints->rx_attr->msg_order = 0;
    hints->domain_attr->mr_key_size = 0;
    free(hints->src_addr);
    hints->src_addr = nullptr;
    hints->src_addrlen = 0;
    int ret = 0;
    info_ptr inner = inner_getinfo(p, hints.get(), fab->fab.api_version, nullptr, nullptr, 0, &ret);
    if (ret) return ret;
    fid_domain *raw = nullptr;
    ret = fi_domain(fab->inner.get(), inner.get(), &raw, context);
    if (ret) return ret;
    auto *d = new Domain{};
    d->inner.reset(raw);
    d->fabric = fab;
    d->prof = &p;
    d->mr_mode = static_cast<uint64_t>(info->domain_attr->mr_mode);
    d->caps = info->caps;
    d->mode = profile_mode(p, info->caps);
    d->inner_mr_mode = static_cast<uint64_t>(inner->domain_attr->mr_mode);
    d->inner_inject = inner->tx_attr->inject_size;
    d->va_emulated = (d->mr_mode & FI_MR_VIRT_ADDR) && !(d->inner_mr_mode & FI_MR_VIRT_ADDR);
    d->inner_info = std::move(inner);
    d->dom.fid.fclass = FI_CLASS_DOMAIN;
    d->dom.fid.context = context;
    d->dom.fid.ops = &g_domain_fi_ops;
    d->dom.ops = &g_domain_ops;
    d->dom.mr = &g_mr_ops;
    fab->children++;
    *dom = &d->dom;
    return 0;
}

int query_atomic(fid_domain *domain, fi_datatype datatype, fi_op op, fi_atomic_attr *attr, uint64_t flags) {
    auto *d = owner<Domain>(domain);
    atomic_kind k = (flags & FI_COMPARE_ATOMIC) ? atomic_kind::compare
                    : (flags & FI_FETCH_ATOMIC) ? atomic_kind::fetch
                                                : atomic_kind::plain;
    if (!(d->caps & FI_ATOMIC) || !atomic_supported(*d->prof, k, op, datatype)) return -FI_EOPNOTSUPP;
    // The profile allows it; the inner provider still has to carry it out.
    return fi_query_atomic(d->inner.get(), datatype, op, attr, flags);
}

}  // namespace strict
