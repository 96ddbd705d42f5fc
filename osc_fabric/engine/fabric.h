// One libfabric endpoint and everything under it: fabric, domain, address vector,
// completion queue, endpoint. Owned by the Engine; outlives every window. Not
// thread-safe on its own: callers hold the engine lock (see progress.h).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "fid.h"
#include "mr.h"

namespace oscf {

// What the rest of the engine needs to know about the chosen provider.
struct ProviderLimits {
    size_t inject_size = 0;        // writes up to this size may use FI_INJECT
    size_t max_msg_size = 0;       // one fi_write/fi_read moves at most this much
    bool virt_addr = false;        // remote addresses are virtual addresses, not MR offsets
    bool prov_key = false;         // the provider chooses MR keys
    unsigned atomic_order = 0;     // OSCF_ORDER_* bits native atomics keep by themselves
    bool send_after_send = false;  // messages arrive in the order sent (FI_ORDER_SAS)
    // False where the provider's atomics were seen to lose updates (see fabric.cpp):
    // then every atomic, lock words included, goes through active messages.
    bool atomics_trusted = true;
    // True where the provider's atomics are software that the target's CPU runs in its
    // progress (see fabric.cpp): our own active messages then cost no more per
    // operation, and they coalesce.
    bool atomics_in_software = false;
    // True where fi_write is a message the target's software applies (rxm,
    // sockets), unlike shm's single-copy writes: small puts may then join our batches.
    bool rma_in_software = false;
    // True where fi_read costs the origin a system call (shm reads with
    // process_vm_readv): a small get is then cheaper as an active message.
    bool reads_by_syscall = false;
};

class Fabric {
public:
    // Picks a provider (see select_provider in fabric.cpp) and opens it.
    static int open(const oscf_engine_config &cfg, std::unique_ptr<Fabric> &out);

    const std::string &provider() const { return provider_; }
    bool node_local_only() const { return provider_ == "shm"; }
    const ProviderLimits &limits() const { return limits_; }
    const std::vector<uint8_t> &local_address() const { return local_addr_; }

    // Inserts a peer address (idempotent: repeated windows reuse the entry).
    int insert_address(const void *addr, size_t len, fi_addr_t *out);

    // Registers [buf, buf+len) for remote read/write/atomics (counted, see mr.h).
    int register_memory(void *buf, size_t len, mr_ptr &mr, uint64_t *key);

    // Posts one contiguous RMA between local memory and (remote, key) at dest. Writes ask
    // for delivery completion, since on tcp;ofi_rxm plain completion only means the data
    // left us, and are injected when small (*injected says so). Returns the libfabric
    // status; the caller handles -FI_EAGAIN (Progress::post).
    ssize_t rma(bool write, void *local, size_t len, fi_addr_t dest, uint64_t remote, uint64_t key,
                void *context, bool *injected) const;

    fid_ep *ep() const { return ep_.get(); }
    fid_domain *domain() const { return domain_.get(); }
    fid_cq *cq() const { return cq_.get(); }

private:
    int setup(info_ptr info);
    // A step of setup() failed: logged at level 1 with the provider's name, so a job
    // that did not ask for osc/fabric by name declines silently (the help message
    // quotes it when it did), and another provider may still serve.
    int setup_error(const char *what, int rc) const;

    // Declaration order is teardown order in reverse: children close first.
    info_ptr info_;
    fid_ptr<fid_fabric> fabric_;
    fid_ptr<fid_domain> domain_;
    fid_ptr<fid_av> av_;
    fid_ptr<fid_cq> cq_;
    fid_ptr<fid_ep> ep_;

    std::string provider_;
    ProviderLimits limits_;
    std::vector<uint8_t> local_addr_;
    std::unordered_map<std::string, fi_addr_t> addr_cache_;
    uint64_t next_key_ = 1;  // for providers where we choose MR keys
};

}  // namespace oscf
