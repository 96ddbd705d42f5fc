#include "fabric.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "fi_datatype_size.h"
#include "libfabric_loader.h"

namespace oscf {
namespace {

// The API of the headers we were built with, as libfabric asks: a provider then gives the
// semantics those headers describe (libfabric 2 drops some 1.x behaviour for 2.x callers).
// The loader binds the symbol versions of the same library (libfabric_abi.py).
constexpr uint32_t kFabricVersion = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);

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
    // libfabric 2's native tcp before tcp;ofi_rxm: faster for every operation here
    // (perf/README.md, tcp-providers), though it has no FI_ATOMIC.
    static const char *const order[] = {"cxi",  "efa", "verbs;ofi_rxm", "psm3",   "opx",
                                        "psm2", "tcp", "tcp;ofi_rxm",   "sockets"};
    for (size_t i = 0; i < sizeof order / sizeof *order; ++i)
        if (prov == order[i]) return static_cast<int>(i) + 1;
    return 100;
}

// A buffer of count elements of dt; a type newer than our headers is taken as the widest
// known, so its descriptor covers at least the buffer.
size_t datatype_bytes(fi_datatype dt) {
    const size_t n = fi_datatype_size(dt);
    return n ? n : 2 * sizeof(long double);
}

// The registrar used under FI_MR_LOCAL until the MPI layer installs its cache: each
// buffer registered for its one operation and closed when the operation completes.
struct OneOperationRegion {
    mr_ptr mr;
};
oscf_local_registrar per_operation_registrar(Fabric *fab) {
    oscf_local_registrar r{};
    r.ctx = fab;
    r.acquire = [](void *ctx, void *buf, size_t len, void **desc, void **token) -> int {
        auto region = std::make_unique<OneOperationRegion>();
        const int rc = static_cast<Fabric *>(ctx)->register_local(buf, len, region->mr, desc);
        if (rc) return -FI_EIO;  // logged with the provider's reason by register_local
        *token = region.release();
        return 0;
    };
    r.release = [](void *, void *token) { delete static_cast<OneOperationRegion *>(token); };
    return r;
}

}  // namespace

void Fabric::set_environment() {
    // The sockets provider's progress thread spins this many ms before it sleeps; with
    // our own waits spinning too, a node with few cores per process then sees each round
    // trip take a scheduler slice (perf/README.md has the figures). Unless the user set
    // it, it does not spin. Read when the provider first loads: a process whose libfabric
    // was already in use keeps what it had.
    setenv("FI_SOCKETS_PE_WAITTIME", "0", 0);
}

// Logs nothing: it runs on a thread of its own, and Fabric::open meets and reports the
// same failures on the caller's.
int Fabric::warm_up() {
    if (libfabric_load_error()) return OSCF_ERR_NO_PROVIDER;
    info_ptr hints = contract_hints();
    if (!hints) return OSCF_ERR_NO_MEM;
    fi_info *raw = nullptr;
    const int rc = fi_getinfo(kFabricVersion, nullptr, nullptr, 0, hints.get(), &raw);
    info_ptr offered(raw);
    return rc == 0 || rc == -FI_ENODATA ? OSCF_OK : OSCF_ERR_FABRIC;
}

int Fabric::open(const oscf_engine_config &cfg, std::unique_ptr<Fabric> &out) {
    set_environment();
    if (const char *why = libfabric_load_error()) {
        log(0, "%s", why);
        return OSCF_ERR_NO_PROVIDER;
    }
    // Providers with FI_ATOMIC first; then those without it (libfabric 2's native tcp,
    // efa-direct), where every atomic becomes an active message, unless the same
    // provider already came with atomics.
    info_ptr with_atomics, without_atomics;
    for (bool atomics : {true, false}) {
        info_ptr hints = contract_hints(!cfg.no_mr_local, atomics);
        if (!hints) return OSCF_ERR_NO_MEM;
        fi_info *raw = nullptr;
        int rc = fi_getinfo(kFabricVersion, nullptr, nullptr, 0, hints.get(), &raw);
        (atomics ? with_atomics : without_atomics).reset(raw);
        if (rc && rc != -FI_ENODATA) return fabric_error("fi_getinfo", rc);
    }
    std::vector<fi_info *> offered;
    for (fi_info *i = with_atomics.get(); i; i = i->next) offered.push_back(i);
    for (fi_info *i = without_atomics.get(); i; i = i->next) {
        const std::string name = i->fabric_attr->prov_name;
        if (std::none_of(offered.begin(), offered.end(),
                         [&](const fi_info *o) { return name == o->fabric_attr->prov_name; }))
            offered.push_back(i);
    }
    if (offered.empty()) {
        log(1, "no libfabric provider offers FI_EP_RDM with FI_RMA and FI_MSG%s",
            std::getenv("FI_PROVIDER") ? " (FI_PROVIDER is set)" : "");
        return OSCF_ERR_NO_PROVIDER;
    }
    int rc = 0;

    // An explicit list (our MCA parameter, else FI_PROVIDER which fi_getinfo already
    // applied) is honoured as given, in the user's order; otherwise we rank.
    std::vector<std::string> include = split_list(cfg.provider_include);
    bool explicit_choice = !include.empty() || std::getenv("FI_PROVIDER");
    std::vector<std::pair<int, fi_info *>> candidates;
    std::string refused;  // a provider whose contract we do not meet, and why
    for (fi_info *i : offered) {
        std::string name = i->fabric_attr->prov_name;
        int rank;
        if (!include.empty()) {
            auto it = std::find_if(include.begin(), include.end(),
                                   [&](const std::string &w) { return name_matches(name, w); });
            // In the user's order; the providers one name covers ("tcp": libfabric 2's
            // native tcp and tcp;ofi_rxm) in ours.
            rank = it == include.end() ? -1
                                       : 1000 * static_cast<int>(it - include.begin()) +
                                             std::max(0, default_rank(name, true));
        } else if (explicit_choice) {
            rank = 0;
        } else {
            rank = default_rank(name, cfg.job_is_node_local != 0);
        }
        // Not even when asked for: on libfabric 1.17 udp;ofi_rxd's atomics crash, and
        // under load some of its RMA operations never complete, so a synchronization
        // call would wait for ever (test_setup.cpp has the case).
        if (name.find("ofi_rxd") != std::string::npos) {
            if (explicit_choice && rank >= 0)
                refused = name +
                          " is not supported: on libfabric 1.17 ofi_rxd's atomics crash and some of its RMA "
                          "operations never complete; use tcp";
            continue;
        }
        if (rank < 0) continue;
        // A demand we do not meet (provider_contract.cpp): never served, and said why.
        const ProviderContract contract = read_contract(*i);
        if (!contract.refusal.empty()) {
            log(1, "provider %s not used: %s", name.c_str(), contract.refusal.c_str());
            if (refused.empty()) refused = name + " is not supported: " + contract.refusal;
            continue;
        }
        candidates.emplace_back(rank, i);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    if (candidates.empty()) {
        if (!refused.empty())
            log(1, "%s", refused.c_str());
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

Fabric::~Fabric() {
    // The endpoint first, so nothing is posted any more; then the registrations that
    // unfinished operations held under FI_MR_LOCAL, and the registrar's cache, while the
    // domain they belong to is still open. The rest closes in member order.
    ep_.reset();
    contexts_.release_registrations();
    if (local_) local_->close_registrar();
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

    contract_ = read_contract(*info_);
    keys_ = std::make_unique<ClientKeys>(contract_.mr_key_size);
    local_ = std::make_unique<LocalMemory>(contract_.mr_local, per_operation_registrar(this));
    tx_limit_ = contract_.tx_size ? contract_.tx_size : SIZE_MAX;
    if (!contract_.writes_delivered)
        proof_ = std::make_unique<DeliveryProof>(contexts_, *local_, !contract_.read_after_write);
    log(5, "provider %s: mr_mode 0x%x, mode 0x%llx, inject %zu, iov %zu/%zu", provider_.c_str(),
        static_cast<unsigned>(info_->domain_attr->mr_mode), static_cast<unsigned long long>(info_->mode),
        contract_.inject_size, contract_.iov_limit, contract_.rma_iov_limit);
    return OSCF_OK;
}

uint64_t Fabric::write_flags(OpContext *c, fi_addr_t dest) const {
    if (!proof_) return FI_COMPLETION | FI_DELIVERY_COMPLETE;
    c->role = OpContext::Role::write_to_prove;
    c->dest = dest;
    return FI_COMPLETION;
}

void Fabric::complete(void *op_context, int status, size_t len) {
    auto *c = static_cast<OpContext *>(op_context);
    switch (c->role) {
    case OpContext::Role::write_to_prove:
        if (status == OSCF_OK) return proof_->park(ep_.get(), c);
        break;  // a failed write needs no proof
    case OpContext::Role::proof: return proof_->proved(ep_.get(), c, status);
    case OpContext::Role::plain: break;
    }
    if (Completion *done = contexts_.give(c)) done->complete(status, len);
}

ssize_t Fabric::rma(bool write, void *local, size_t len, fi_addr_t dest, uint64_t remote, uint64_t key,
                    Completion *done, bool *injected) {
    return post(done, true, [&](OpContext *c) -> ssize_t {
        if (int rc = describe(c, local, len, &c->desc)) return rc;
        const fi_msg_rma msg = c->rma_msg(dest, local, len, remote, key);
        if (!write) return fi_readmsg(ep_.get(), &msg, FI_COMPLETION);
        const bool inject = len <= contract_.inject_size;
        if (injected) *injected = inject;
        return fi_writemsg(ep_.get(), &msg, write_flags(c, dest) | (inject ? FI_INJECT : 0));
    });
}

ssize_t Fabric::atomic(const void *src, size_t count, fi_datatype dt, fi_op op, fi_addr_t dest,
                       uint64_t remote, uint64_t key, Completion *done) {
    return post(done, true, [&](OpContext *c) -> ssize_t {
        if (int rc = describe(c, src, count * datatype_bytes(dt), &c->desc)) return rc;
        c->iov = {const_cast<void *>(src), count};
        c->rma_iov = {remote, count, key};
        fi_msg_atomic msg{};
        msg.msg_iov = reinterpret_cast<const fi_ioc *>(&c->iov);
        msg.iov_count = 1;
        msg.addr = dest;
        msg.rma_iov = reinterpret_cast<const fi_rma_ioc *>(&c->rma_iov);
        msg.rma_iov_count = 1;
        msg.desc = c->desc ? &c->desc : nullptr;
        msg.datatype = dt;
        msg.op = op;
        msg.context = c;
        // No FI_INJECT here: injected atomics asking for delivery completion never
        // complete on tcp;ofi_rxm 1.17 (seen in test_accumulate).
        return fi_atomicmsg(ep_.get(), &msg, write_flags(c, dest));
    });
}

ssize_t Fabric::fetch_atomic(const void *src, size_t count, void *result, fi_datatype dt, fi_op op,
                             fi_addr_t dest, uint64_t remote, uint64_t key, Completion *done) {
    return post(done, true, [&](OpContext *c) -> ssize_t {
        const size_t bytes = count * datatype_bytes(dt);
        void *src_desc, *result_desc;
        if (int rc = describe(c, src, bytes, &src_desc)) return rc;
        if (int rc = describe(c, result, bytes, &result_desc)) return rc;
        return fi_fetch_atomic(ep_.get(), src, count, src_desc, result, result_desc, dest, remote, key, dt,
                               op, c);
    });
}

ssize_t Fabric::compare_atomic(const void *src, size_t count, const void *compare, void *result,
                               fi_datatype dt, fi_op op, fi_addr_t dest, uint64_t remote, uint64_t key,
                               Completion *done) {
    return post(done, true, [&](OpContext *c) -> ssize_t {
        const size_t bytes = count * datatype_bytes(dt);
        void *src_desc, *compare_desc, *result_desc;
        if (int rc = describe(c, src, bytes, &src_desc)) return rc;
        if (int rc = describe(c, compare, bytes, &compare_desc)) return rc;
        if (int rc = describe(c, result, bytes, &result_desc)) return rc;
        return fi_compare_atomic(ep_.get(), src, count, src_desc, compare, compare_desc, result, result_desc,
                                 dest, remote, key, dt, op, c);
    });
}

ssize_t Fabric::send(const void *buf, size_t len, fi_addr_t dest, Completion *done) {
    return post(done, true, [&](OpContext *c) -> ssize_t {
        if (int rc = describe(c, buf, len, &c->desc)) return rc;
        return fi_send(ep_.get(), buf, len, c->desc, dest, c);
    });
}

ssize_t Fabric::inject(const void *buf, size_t len, fi_addr_t dest) {
    return fi_inject(ep_.get(), buf, len, dest);
}

ssize_t Fabric::recv(void *buf, size_t len, Completion *done) {
    return post(done, false, [&](OpContext *c) -> ssize_t {
        if (int rc = describe(c, buf, len, &c->desc)) return rc;
        return fi_recv(ep_.get(), buf, len, c->desc, FI_ADDR_UNSPEC, c);
    });
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
    // Under FI_MR_LOCAL the engine's own regions also serve as local buffers (a window's
    // memory is the origin of puts to itself, staging chunks are posted from), so they
    // carry local access too and their descriptors go to local_.
    const uint64_t local_access = local_->required() ? FI_SEND | FI_RECV | FI_READ | FI_WRITE : 0;
    int rc = register_region(buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE | local_access, mr);
    if (rc) return rc;
    *key = fi_mr_key(mr.get());
    if (*key == FI_KEY_NOTAVAIL) return fabric_error("fi_mr_key", -FI_ENOKEY);
    if (local_access) {
        local_->add(buf, len, fi_mr_desc(mr.get()), mr.get());
        mr.get_deleter().local = local_.get();
        mr.get_deleter().base = buf;
    }
    return OSCF_OK;
}

int Fabric::register_local(void *buf, size_t len, mr_ptr &mr, void **desc) {
    int rc = register_region(buf, len, FI_SEND | FI_RECV | FI_READ | FI_WRITE, mr, RegionKind::local);
    if (rc) return rc;
    *desc = fi_mr_desc(mr.get());
    local_->note_registered();
    return OSCF_OK;
}

int Fabric::register_region(void *buf, size_t len, uint64_t access, mr_ptr &mr, RegionKind kind) {
    uint64_t requested = 0;
    if (!contract_.prov_key && !keys_->take(&requested)) {
        log(0,
            "provider %s: every one of its %llu memory registration keys is held by a live "
            "region; free windows or detach regions first",
            provider_.c_str(), static_cast<unsigned long long>(keys_->limit()));
        return OSCF_ERR_FABRIC;
    }
    fid_mr *m = nullptr;
    int rc = fi_mr_reg(domain_.get(), buf, len, access, 0, requested, 0, &m, nullptr);
    if (rc) {
        if (!contract_.prov_key) keys_->give(requested);
        return fabric_error("fi_mr_reg", rc);
    }
    mr = contract_.prov_key ? adopt_mr(m, len, nullptr, 0, kind)
                            : adopt_mr(m, len, keys_.get(), requested, kind);
    // FI_MR_ENDPOINT: the region serves nothing until bound to the endpoint and enabled,
    // and with provider keys its key exists only then. The endpoint outlives it: windows
    // and the staging pool close their regions before the engine closes the fabric.
    if (contract_.mr_endpoint) {
        if ((rc = fi_mr_bind(m, &ep_->fid, 0))) return fabric_error("fi_mr_bind", rc);
        if ((rc = fi_mr_enable(m))) return fabric_error("fi_mr_enable", rc);
    }
    return OSCF_OK;
}

}  // namespace oscf
