// Entry point and fi_getinfo: filters the hints by the impersonated provider's contract, asks the
// inner provider for the matching infos and rewrites them into the profile's attributes.
#include "strict.h"

#include <rdma/providers/fi_prov.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

namespace strict {

const char *inner_prov_name() {
    const char *n = std::getenv("OSCF_STRICT_INNER");
    return (n && *n) ? n : "tcp;ofi_rxm";
}

// Read at each fi_getinfo so one test process can try several profiles (libfabric registers a
// provider once per process).
static const profile *current_profile() {
    const char *name = std::getenv("OSCF_STRICT_PROFILE");
    const profile *p = find_profile(name);
    static std::atomic<bool> warned{false};
    if (!p && !warned.exchange(true))
        std::fprintf(stderr, "strict: OSCF_STRICT_PROFILE '%s' is unset or unknown; offering nothing\n",
                     name ? name : "");
    return p;
}

static uint64_t returned_mr_mode(const profile &p, uint64_t hinted) {
    uint64_t m = p.mr_returned;
    m |= hinted & p.mr_prov_key_if_asked;
    m |= hinted & p.mr_va_if_asked;
    m |= hinted & p.mr_local_if_asked;
    return m;
}

static uint64_t returned_mode(const profile &p, uint64_t caps) {
    uint64_t m = p.mode_returned;
    if (p.mode_needs_caps && !(caps & p.mode_needs_caps)) m &= ~p.mode_required;
    return m;
}

uint64_t profile_mr_mode(const profile &p, uint64_t hinted) {
    return returned_mr_mode(p, hinted);
}
uint64_t profile_mode(const profile &p, uint64_t caps) {
    return returned_mode(p, caps);
}

// What the hints must hold for the real provider to answer; -FI_ENODATA otherwise.
static int screen_hints(const profile &p, const fi_info *hints) {
    if (!hints) return 0;
    if (hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC && hints->ep_attr->type != FI_EP_RDM)
        return -FI_ENODATA;
    if ((hints->caps & p.caps) != hints->caps) return -FI_ENODATA;
    uint64_t mr = hints->domain_attr ? static_cast<uint64_t>(hints->domain_attr->mr_mode) : 0;
    // The legacy FI_MR_BASIC (1) and FI_MR_SCALABLE (2), by value: libfabric 2 deprecates
    // the names. They carry no modern bits.
    if (mr == 1 || mr == 2) mr = 0;
    // cxi adds FI_MR_ALLOCATED to hints of exactly FI_MR_ENDPOINT (cxip_info.c, no ODP).
    if (std::strcmp(p.name, "cxi") == 0 && mr == FI_MR_ENDPOINT) mr |= FI_MR_ALLOCATED;
    if ((mr & p.mr_required) != p.mr_required) return -FI_ENODATA;
    uint64_t caps = hints->caps ? hints->caps : p.caps;
    if (p.mode_required && (!p.mode_needs_caps || (caps & p.mode_needs_caps)) &&
        (hints->mode & p.mode_required) != p.mode_required)
        return -FI_ENODATA;
    return 0;
}

static fi_info *inner_hints(const profile &p, const fi_info *hints) {
    fi_info *h = fi_allocinfo();
    if (!h) return nullptr;
    uint64_t caps = hints && hints->caps ? hints->caps : p.caps;
    h->caps = caps & ~FI_FENCE;          // emulated: see the fence rule in ep.cpp
    h->mode = FI_CONTEXT | FI_CONTEXT2;  // our records carry the inner provider's share
    h->ep_attr->type = FI_EP_RDM;
    uint64_t mr = hints && hints->domain_attr ? hints->domain_attr->mr_mode : 0;
    h->domain_attr->mr_mode =
        static_cast<int>(returned_mr_mode(p, mr) & (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED));
    if (hints && hints->domain_attr) {
        h->domain_attr->threading = hints->domain_attr->threading;
        if (hints->domain_attr->name) h->domain_attr->name = strdup(hints->domain_attr->name);
    }
    if (hints && hints->fabric_attr && hints->fabric_attr->name)
        h->fabric_attr->name = strdup(hints->fabric_attr->name);
    if (hints && hints->tx_attr) h->tx_attr->op_flags = hints->tx_attr->op_flags;
    if (hints) h->addr_format = hints->addr_format;
    h->fabric_attr->prov_name = strdup(inner_prov_name());
    return h;
}

info_ptr inner_getinfo(const profile &p, const fi_info *hints, uint32_t version, const char *node,
                       const char *service, uint64_t flags, int *err) {
    info_ptr h(inner_hints(p, hints));
    if (!h) {
        *err = -FI_ENOMEM;
        return nullptr;
    }
    fi_info *out = nullptr;
    *err = fi_getinfo(version, node, service, flags, h.get(), &out);
    return info_ptr(out);
}

static void rewrite(const profile &p, const fi_info *hints, fi_info *i) {
    free(i->fabric_attr->prov_name);  // libfabric names the entry after us
    i->fabric_attr->prov_name = nullptr;
    uint64_t wanted = hints && hints->caps ? hints->caps : p.caps;
    i->caps = (i->caps & p.caps & wanted) | (wanted & p.caps & FI_FENCE);
    i->tx_attr->caps &= p.caps;
    i->rx_attr->caps &= p.caps;
    uint64_t mr = hints && hints->domain_attr ? hints->domain_attr->mr_mode : 0;
    i->domain_attr->mr_mode = static_cast<int>(returned_mr_mode(p, mr));
    i->domain_attr->mr_key_size = p.mr_key_size;
    i->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    i->mode = returned_mode(p, i->caps);
    i->tx_attr->mode = i->rx_attr->mode = i->mode;
    // Never promise more than the inner provider delivers, nor more than the profile does.
    auto lower = [](size_t a, size_t b) { return a < b ? a : b; };
    i->tx_attr->inject_size = p.inject_size;  // larger injects are emulated (ep.cpp)
    i->tx_attr->iov_limit = lower(p.iov_limit, i->tx_attr->iov_limit);
    i->rx_attr->iov_limit = lower(p.iov_limit, i->rx_attr->iov_limit);
    i->tx_attr->rma_iov_limit = lower(p.rma_iov_limit, i->tx_attr->rma_iov_limit);
    i->ep_attr->max_msg_size = lower(p.max_msg_size, i->ep_attr->max_msg_size);
    i->tx_attr->msg_order &= p.msg_order;
    i->rx_attr->msg_order &= p.msg_order;
    i->ep_attr->max_order_raw_size = lower(p.max_order_raw_size, i->ep_attr->max_order_raw_size);
    i->ep_attr->max_order_war_size = lower(p.max_order_war_size, i->ep_attr->max_order_war_size);
    i->ep_attr->max_order_waw_size = lower(p.max_order_waw_size, i->ep_attr->max_order_waw_size);
    if (!p.delivery_complete) i->tx_attr->op_flags &= ~FI_DELIVERY_COMPLETE;
}

static int strict_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                          const fi_info *hints, fi_info **info) {
    *info = nullptr;
    const profile *p = current_profile();
    if (!p) return -FI_ENODATA;
    if (int ret = screen_hints(*p, hints)) return ret;
    int ret = 0;
    info_ptr list = inner_getinfo(*p, hints, version, node, service, flags, &ret);
    if (ret) return ret == -FI_ENOMEM ? ret : -FI_ENODATA;
    for (fi_info *i = list.get(); i; i = i->next) rewrite(*p, hints, i);
    *info = list.release();
    return 0;
}

static void strict_cleanup() {}

// A provider version above any built-in one (libfabric numbers its own major*100+minor):
// of two providers with one name libfabric keeps the newer, and Debian 13's build has real
// efa and verbs providers that would otherwise hide this one.
static fi_provider g_provider = {
    FI_VERSION(9999, 0),
    FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
    {},
    nullptr,
    strict_getinfo,
    fabric_open,
    strict_cleanup,
};

}  // namespace strict

// libfabric calls this once when it loads the library: no libfabric calls may happen here, so the
// name comes from the environment alone.
extern "C" __attribute__((visibility("default"))) fi_provider *fi_prov_ini(void) {
    const strict::profile *p = strict::find_profile(std::getenv("OSCF_STRICT_PROFILE"));
    static std::string name;
    name = p ? p->prov_name : "strict";
    strict::g_provider.name = name.c_str();
    return &strict::g_provider;
}
