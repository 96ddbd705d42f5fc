#include "provider_contract.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cinttypes>
#include <cstdio>

#include "osc_fabric/engine.h"

namespace oscf {
namespace {

// Memory-registration bits we ask for, each because something obeys it:
//   FI_MR_VIRT_ADDR  window.cpp/dynamic.cpp publish addresses, else offsets
//   FI_MR_ALLOCATED  we register only memory we or the application allocated
//   FI_MR_PROV_KEY   Fabric::register_memory reads the key, else requests its own
//   FI_MR_ENDPOINT   Fabric::register_memory binds and enables every region
//   FI_MR_LOCAL      Fabric describes every local buffer it posts (local_memory.h)
// FI_MR_HMEM is not asked for but honoured when handed back (opx built with HMEM does so
// whatever the hints say): it binds only device memory, which we never register.
constexpr uint64_t kMrModeAsked =
    FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT | FI_MR_LOCAL;
constexpr uint64_t kMrModeHonoured = kMrModeAsked | FI_MR_HMEM;
constexpr uint64_t kMrLegacy = kMrBasic | kMrScalable;
// Mode bits: every post has its own OpContext, whose first bytes are the provider's and
// which holds the posted iov arrays until completion (op_context.h).
constexpr uint64_t kModeHonoured = FI_CONTEXT | FI_CONTEXT2 | FI_ASYNC_IOV;

// The OSCF_ORDER_* guarantees the provider gives for native atomics of up to
// kOrderedAtomicBytes: the ordering bit alone is not enough, its max_order_*_size must
// cover the operation too (tcp;ofi_rxm advertises WAR with a size of 0).
constexpr size_t kOrderedAtomicBytes = 4096;
unsigned guaranteed_atomic_order(const fi_tx_attr &tx, const fi_ep_attr &ep) {
    struct Rule {
        unsigned bit;
        uint64_t flag;
        size_t size;
    } rules[] = {
        {OSCF_ORDER_RAR, FI_ORDER_ATOMIC_RAR, SIZE_MAX},  // reads never conflict with reads
        {OSCF_ORDER_RAW, FI_ORDER_ATOMIC_RAW, ep.max_order_raw_size},
        {OSCF_ORDER_WAR, FI_ORDER_ATOMIC_WAR, ep.max_order_war_size},
        {OSCF_ORDER_WAW, FI_ORDER_ATOMIC_WAW, ep.max_order_waw_size},
    };
    unsigned bits = 0;
    for (const Rule &r : rules)
        if ((tx.msg_order & r.flag) && r.size >= kOrderedAtomicBytes) bits |= r.bit;
    return bits;
}

// Providers whose native atomics we do not use, and why. shm (libfabric 1.17): with 4
// ranks on 2 cores, fi_atomic/fi_fetch_atomic often return -FI_EAGAIN and the target
// then ends with lost updates or with bytes of a shm address string in the atomic's
// target, where the active-message path is exact (perf/README.md, "Measurements behind
// design choices").
bool atomics_trusted(const std::string &prov) {
    return prov != "shm";
}

// The core of a layered provider's name: "verbs" of "verbs;ofi_rxm".
std::string core_of(const std::string &prov) {
    return prov.substr(0, prov.find(';'));
}

// Providers whose atomics are messages their own software applies at the target: shm,
// sockets, the rxm utility layer (rxm implements fi_atomic as messages even over verbs,
// and verbs serves RDM endpoints only through such a layer, so its core name counts);
// efa RDM, psm2, psm3 and opx emulate them in their protocols too (their man pages and
// sources: DESIGN.md). There our active messages are no slower than the provider's own
// atomics, and back-to-back accumulates coalesce into a few messages instead of one each
// (perf/README.md, "Measurements behind design choices"). cxi's are the NIC's, and so
// are those of a provider we know nothing of: fi_query_atomic decides.
bool atomics_in_software(const std::string &prov) {
    static const char *const software[] = {"shm", "sockets", "efa", "psm", "psm2", "psm3", "opx", "verbs"};
    const std::string core = core_of(prov);
    for (const char *s : software)
        if (core == s) return true;
    return prov.find(";ofi_rxm") != std::string::npos;
}

// Providers whose fi_write is a message their own software applies (sockets, rxm over
// tcp), unlike shm's single copies and the NICs' RDMA (rxm hands RMA over verbs to the
// NIC; efa emulates writes on older NICs, but its reads stay the device's).
bool rma_in_software(const std::string &prov) {
    const std::string core = core_of(prov);
    return prov == "sockets" || (prov.find(";ofi_rxm") != std::string::npos && core != "verbs");
}

// Providers whose writes complete when they leave us, whatever FI_DELIVERY_COMPLETE
// asks: verbs, and rxm over it, which hands RMA to verbs, whose completion is the transmit's (Open
// MPI 5's btl/ofi refuses that provider for it). There a read behind the writes proves
// them delivered (delivery_proof.h).
// efa-direct (libfabric 2.2 and later, fabric name "efa-direct") posts RMA straight to
// the device, whose completions are transmit completions only (EFA_TX_OP_FLAGS), and
// promises no ordering: nothing there can prove a write delivered, so it is refused.
bool writes_complete_at_transmit(const std::string &prov, const std::string &fabric) {
    return core_of(prov) == "verbs" || fabric == "efa-direct";  // the core is what completes them
}

std::string hex_refusal(const char *what, uint64_t bits) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "it requires %s 0x%" PRIx64 ", which osc/fabric does not honour", what,
                  bits);
    return buf;
}

}  // namespace

info_ptr contract_hints(bool mr_local, bool atomics) {
    info_ptr hints(fi_allocinfo());
    if (!hints) return hints;
    // FI_MSG carries the active messages that emulate atomics the provider lacks.
    hints->caps = FI_RMA | FI_MSG | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_SEND | FI_RECV;
    if (atomics) hints->caps |= FI_ATOMIC;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = static_cast<int>(mr_local ? kMrModeAsked : kMrModeAsked & ~FI_MR_LOCAL);
    hints->domain_attr->threading = FI_THREAD_DOMAIN;  // the engine lock serializes calls
    hints->mode = kModeHonoured;
    return hints;
}

ProviderContract read_contract(const fi_info &info) {
    ProviderContract c;
    c.provider = info.fabric_attr && info.fabric_attr->prov_name ? info.fabric_attr->prov_name : "";
    const uint64_t mr_mode = info.domain_attr ? static_cast<uint64_t>(info.domain_attr->mr_mode) : 0;
    const fi_tx_attr tx = info.tx_attr ? *info.tx_attr : fi_tx_attr{};
    const fi_ep_attr ep = info.ep_attr ? *info.ep_attr : fi_ep_attr{};

    c.inject_size = tx.inject_size;
    c.max_msg_size = ep.max_msg_size;
    c.iov_limit = tx.iov_limit;
    c.rma_iov_limit = tx.rma_iov_limit;
    c.tx_size = tx.size;

    c.virt_addr = (mr_mode & (FI_MR_VIRT_ADDR | kMrBasic)) != 0;
    c.prov_key = (mr_mode & (FI_MR_PROV_KEY | kMrBasic)) != 0;
    c.mr_endpoint = (mr_mode & FI_MR_ENDPOINT) != 0;
    c.mr_local = (mr_mode & FI_MR_LOCAL) != 0;
    if (info.domain_attr && info.domain_attr->mr_key_size) c.mr_key_size = info.domain_attr->mr_key_size;

    c.context_bytes = (info.mode & FI_CONTEXT2)  ? sizeof(fi_context2)
                      : (info.mode & FI_CONTEXT) ? sizeof(fi_context)
                                                 : 0;
    c.async_iov = (info.mode & FI_ASYNC_IOV) != 0;

    c.atomic_order = guaranteed_atomic_order(tx, ep);
    c.fence = (info.caps & FI_FENCE) != 0;
    // FI_ORDER_RAW is the older bit for every kind of operation; tcp;ofi_rxm sets only the
    // RMA one.
    c.read_after_write = (tx.msg_order & (FI_ORDER_RAW | FI_ORDER_RMA_RAW)) != 0;
    const std::string fabric = info.fabric_attr && info.fabric_attr->name ? info.fabric_attr->name : "";
    c.writes_delivered = !writes_complete_at_transmit(c.provider, fabric);

    // Without FI_ATOMIC (native tcp RDM, efa-direct) every atomic, lock words included,
    // is an active message, exactly as where the provider's atomics are not trusted.
    c.atomics_trusted = atomics_trusted(c.provider) && (info.caps & FI_ATOMIC);
    c.atomics_in_software = atomics_in_software(c.provider);
    c.rma_in_software = rma_in_software(c.provider);
    // libfabric 1.17's shm serves every fi_read with CMA: perf shows the syscall and its
    // page walk costing more than our message round trip (perf/README.md).
    c.reads_by_syscall = c.provider == "shm";

    // A provider hands back only bits the hints allowed, except opx 1.17-1.22, which
    // returns FI_CONTEXT2 | FI_ASYNC_IOV whatever they say; both are honoured. Anything
    // else we cannot obey is a refusal, not a risk.
    if (const uint64_t extra = mr_mode & ~(kMrModeHonoured | kMrLegacy)) {
        c.refusal = hex_refusal("mr_mode bits", extra);
    } else if (const uint64_t extra_mode = info.mode & ~kModeHonoured) {
        c.refusal = hex_refusal("mode bits", extra_mode);
    } else if (!c.writes_delivered && !c.read_after_write && !c.fence) {
        c.refusal =
            "its RMA writes complete at transmit, and it neither orders a read behind them "
            "(FI_ORDER_RAW) nor offers FI_FENCE, so their delivery cannot be proved";
    } else if (c.max_msg_size == 0 || c.iov_limit == 0 || c.rma_iov_limit == 0) {
        c.refusal = "it reports a zero message size or iov limit";
    }
    return c;
}

}  // namespace oscf
