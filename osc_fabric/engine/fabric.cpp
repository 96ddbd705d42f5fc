#include "fabric.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "libfabric_loader.h"

namespace oscf {
namespace {

constexpr uint32_t kFabricVersion = FI_VERSION(1, 9);

std::vector<std::string> split_list(const char *s) {
    std::vector<std::string> out;
    if (!s) return out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty()) out.push_back(item);
    }
    return out;
}

// "tcp" names "tcp;ofi_rxm" too: users think of the core provider, not the utility layer.
bool name_matches(const std::string &prov, const std::string &want) {
    return prov == want || prov.rfind(want + ";", 0) == 0;
}

// Lower is better. Providers we know to work for RMA and atomics, fastest first; a
// provider that only reaches this node ranks first only when the whole job is here.
// The experimental net provider is never picked automatically.
int default_rank(const std::string &prov, bool job_is_node_local) {
    if (prov == "shm") return job_is_node_local ? 0 : -1;
    if (prov.rfind("net", 0) == 0) return -1;
    static const char *const order[] = {"cxi", "efa",  "verbs;ofi_rxm", "psm3",
                                        "opx", "psm2", "tcp;ofi_rxm",   "sockets"};
    for (size_t i = 0; i < sizeof order / sizeof *order; ++i)
        if (prov == order[i]) return static_cast<int>(i) + 1;
    return 100;
}

info_ptr make_hints() {
    info_ptr hints(fi_allocinfo());
    if (!hints) return hints;
    // FI_MSG carries the active messages that emulate atomics the provider lacks.
    hints->caps = FI_RMA | FI_ATOMIC | FI_MSG | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE |
                  FI_SEND | FI_RECV;
    hints->ep_attr->type = FI_EP_RDM;
    // No FI_MR_LOCAL: origin buffers are used without registration. Providers that
    // need it are not usable yet.
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;  // the engine lock serializes calls
    hints->mode = 0;                                   // we pass plain pointers as contexts (no FI_CONTEXT)
    return hints;
}

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

// Providers whose atomics are messages their own software applies at the target:
// shm, sockets, and the rxm utility layer (rxm implements fi_atomic as messages
// even over verbs). There our active messages are no slower than the provider's own
// atomics, and back-to-back accumulates coalesce into a few messages instead of one
// each (perf/README.md, "Measurements behind design choices").
bool atomics_in_software(const std::string &prov) {
    return prov == "shm" || prov == "sockets" || prov.find(";ofi_rxm") != std::string::npos;
}

}  // namespace

int Fabric::open(const oscf_engine_config &cfg, std::unique_ptr<Fabric> &out) {
    // The sockets provider's progress thread spins this many ms before it sleeps; with
    // our own waits spinning too, a node with few cores per process then sees each round
    // trip take a scheduler slice (perf/README.md has the figures). Unless the user set
    // it, it does not spin. Read when the provider first loads: a process whose libfabric
    // was already in use keeps what it had.
    setenv("FI_SOCKETS_PE_WAITTIME", "0", 0);
    if (const char *why = libfabric_load_error()) {
        log(0, "%s", why);
        return OSCF_ERR_NO_PROVIDER;
    }
    info_ptr hints = make_hints();
    if (!hints) return OSCF_ERR_NO_MEM;
    fi_info *raw = nullptr;
    int rc = fi_getinfo(kFabricVersion, nullptr, nullptr, 0, hints.get(), &raw);
    info_ptr all(raw);
    if (rc == -FI_ENODATA) {
        log(1, "no libfabric provider offers FI_EP_RDM with FI_RMA|FI_ATOMIC%s",
            std::getenv("FI_PROVIDER") ? " (FI_PROVIDER is set)" : "");
        return OSCF_ERR_NO_PROVIDER;
    }
    if (rc) return fabric_error("fi_getinfo", rc);

    // An explicit list (our MCA parameter, else FI_PROVIDER which fi_getinfo already
    // applied) is honoured as given, in the user's order; otherwise we rank.
    std::vector<std::string> include = split_list(cfg.provider_include);
    bool explicit_choice = !include.empty() || std::getenv("FI_PROVIDER");
    std::vector<std::pair<int, fi_info *>> candidates;
    std::string refused;  // an rxd stack the user asked for
    for (fi_info *i = all.get(); i; i = i->next) {
        std::string name = i->fabric_attr->prov_name;
        int rank;
        if (!include.empty()) {
            auto it = std::find_if(include.begin(), include.end(),
                                   [&](const std::string &w) { return name_matches(name, w); });
            rank = it == include.end() ? -1 : static_cast<int>(it - include.begin());
        } else if (explicit_choice) {
            rank = 0;
        } else {
            rank = default_rank(name, cfg.job_is_node_local != 0);
        }
        // Not even when asked for: on libfabric 1.17 udp;ofi_rxd's atomics crash, and
        // under load some of its RMA operations never complete, so a synchronization
        // call would wait for ever (test_setup.cpp has the case).
        if (name.find("ofi_rxd") != std::string::npos) {
            if (explicit_choice && rank >= 0) refused = name;
            continue;
        }
        if (rank >= 0) candidates.emplace_back(rank, i);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    if (candidates.empty()) {
        if (!refused.empty())
            log(1,
                "%s is not supported: on libfabric 1.17 ofi_rxd's atomics crash and some of its "
                "RMA operations never complete; use tcp",
                refused.c_str());
        else
            log(1, "no acceptable libfabric provider (include list '%s')",
                cfg.provider_include ? cfg.provider_include : "");
        return OSCF_ERR_NO_PROVIDER;
    }

    // Every candidate failing to open is a libfabric failure, not a missing provider:
    // the caller reports the last one's reason (setup_error).
    int first_failure = OSCF_ERR_NO_PROVIDER;
    for (auto &c : candidates) {
        auto fab = std::make_unique<Fabric>();
        rc = fab->setup(info_ptr(fi_dupinfo(c.second)));
        if (rc == OSCF_OK) {
            log(5, "using provider %s, domain %s", fab->provider_.c_str(), fab->info_->domain_attr->name);
            out = std::move(fab);
            return OSCF_OK;
        }
        if (first_failure == OSCF_ERR_NO_PROVIDER) first_failure = rc;
    }
    return first_failure;
}

int Fabric::setup_error(const char *what, int rc) const {
    log(1, "provider %s: %s failed: %s (%d)", provider_.c_str(), what, fi_strerror(-rc), rc);
    return OSCF_ERR_FABRIC;
}

int Fabric::setup(info_ptr info) {
    if (!info) return OSCF_ERR_NO_MEM;
    info_ = std::move(info);
    provider_ = info_->fabric_attr->prov_name;

    fid_fabric *fab = nullptr;
    int rc = fi_fabric(info_->fabric_attr, &fab, nullptr);
    if (rc) return setup_error("fi_fabric", rc);
    fabric_.reset(fab);

    fid_domain *dom = nullptr;
    rc = fi_domain(fabric_.get(), info_.get(), &dom, nullptr);
    if (rc) return setup_error("fi_domain", rc);
    domain_.reset(dom);

    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    fid_av *av = nullptr;
    rc = fi_av_open(domain_.get(), &av_attr, &av, nullptr);
    if (rc) return setup_error("fi_av_open", rc);
    av_.reset(av);

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_MSG;  // receives need their length
    cq_attr.wait_obj = FI_WAIT_NONE;
    fid_cq *cq = nullptr;
    rc = fi_cq_open(domain_.get(), &cq_attr, &cq, nullptr);
    if (rc) return setup_error("fi_cq_open", rc);
    cq_.reset(cq);

    fid_ep *ep = nullptr;
    rc = fi_endpoint(domain_.get(), info_.get(), &ep, nullptr);
    if (rc) return setup_error("fi_endpoint", rc);
    ep_.reset(ep);
    if ((rc = fi_ep_bind(ep_.get(), &av_->fid, 0))) return setup_error("fi_ep_bind(av)", rc);
    if ((rc = fi_ep_bind(ep_.get(), &cq_->fid, FI_TRANSMIT | FI_RECV)))
        return setup_error("fi_ep_bind(cq)", rc);
    rc = fi_enable(ep_.get());
    // shm names its region in /dev/shm after our pid. One left there by a killed process
    // (SIGKILL, _exit) that had the same pid fails fi_enable with -FI_EBUSY, and
    // libfabric removes it while failing: the second attempt creates a fresh region.
    if (rc == -FI_EBUSY && provider_ == "shm") {
        log(1, "shm: removed a stale region of an earlier process with our pid; enabling again");
        rc = fi_enable(ep_.get());
    }
    if (rc) return setup_error("fi_enable", rc);

    size_t addrlen = 0;
    rc = fi_getname(&ep_->fid, nullptr, &addrlen);
    if (rc != -FI_ETOOSMALL && rc) return setup_error("fi_getname", rc);
    local_addr_.resize(addrlen);
    if ((rc = fi_getname(&ep_->fid, local_addr_.data(), &addrlen))) return setup_error("fi_getname", rc);
    local_addr_.resize(addrlen);

    uint64_t mr_mode = info_->domain_attr->mr_mode;
    limits_.inject_size = info_->tx_attr->inject_size;
    limits_.max_msg_size = info_->ep_attr->max_msg_size;
    limits_.virt_addr = (mr_mode & (FI_MR_VIRT_ADDR | FI_MR_BASIC)) != 0;
    limits_.prov_key = (mr_mode & (FI_MR_PROV_KEY | FI_MR_BASIC)) != 0;
    limits_.atomic_order = guaranteed_atomic_order(*info_->tx_attr, *info_->ep_attr);
    limits_.send_after_send = (info_->tx_attr->msg_order & FI_ORDER_SAS) != 0;
    limits_.atomics_trusted = atomics_trusted(provider_);
    limits_.atomics_in_software = atomics_in_software(provider_);
    limits_.rma_in_software = provider_ != "shm" && atomics_in_software(provider_);
    // libfabric 1.17's shm serves every fi_read with CMA: perf shows the syscall and its
    // page walk costing more than our message round trip (perf/README.md).
    limits_.reads_by_syscall = provider_ == "shm";
    return OSCF_OK;
}

ssize_t Fabric::rma(bool write, void *local, size_t len, fi_addr_t dest, uint64_t remote, uint64_t key,
                    void *context, bool *injected) const {
    iovec iov{local, len};
    fi_rma_iov rma{remote, len, key};
    fi_msg_rma msg{};
    msg.msg_iov = &iov;
    msg.iov_count = 1;
    msg.addr = dest;
    msg.rma_iov = &rma;
    msg.rma_iov_count = 1;
    msg.context = context;
    if (!write) return fi_readmsg(ep_.get(), &msg, FI_COMPLETION);
    const bool inject = len <= limits_.inject_size;
    if (injected) *injected = inject;
    return fi_writemsg(ep_.get(), &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE | (inject ? FI_INJECT : 0));
}

int Fabric::insert_address(const void *addr, size_t len, fi_addr_t *out) {
    std::string k(static_cast<const char *>(addr), len);
    auto it = addr_cache_.find(k);
    if (it != addr_cache_.end()) {
        *out = it->second;
        return OSCF_OK;
    }
    fi_addr_t fa = FI_ADDR_UNSPEC;
    int n = fi_av_insert(av_.get(), addr, 1, &fa, 0, nullptr);
    if (n != 1) return fabric_error("fi_av_insert", n < 0 ? n : -FI_EINVAL);
    addr_cache_.emplace(std::move(k), fa);
    *out = fa;
    return OSCF_OK;
}

int Fabric::register_memory(void *buf, size_t len, mr_ptr &mr, uint64_t *key) {
    uint64_t requested = limits_.prov_key ? 0 : next_key_++;
    fid_mr *m = nullptr;
    int rc =
        fi_mr_reg(domain_.get(), buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, requested, 0, &m, nullptr);
    if (rc) return fabric_error("fi_mr_reg", rc);
    mr = adopt_mr(m, len);
    *key = fi_mr_key(m);
    if (*key == FI_KEY_NOTAVAIL) return fabric_error("fi_mr_key", -FI_ENOKEY);
    return OSCF_OK;
}

}  // namespace oscf
