// One libfabric endpoint and everything under it: fabric, domain, address vector,
// completion queue, endpoint, and the calls that post data operations on it. Every post
// takes its own OpContext (op_context.h) and keeps its iov arrays there, so the
// provider's FI_CONTEXT/FI_CONTEXT2/FI_ASYNC_IOV demands hold for every caller;
// complete() gives the context back when the CQ reports the operation. What the provider
// demands and offers is its contract() (provider_contract.h). Owned by the Engine;
// outlives every window. Not thread-safe on its own: callers hold the engine lock (see
// progress.h).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "delivery_proof.h"
#include "fid.h"
#include "local_memory.h"
#include "mr.h"
#include "op_context.h"
#include "provider_contract.h"

namespace oscf {

class Fabric {
public:
    // Picks a provider (see select_provider in fabric.cpp) and opens it.
    static int open(const oscf_engine_config &cfg, std::unique_ptr<Fabric> &out);
    // The environment defaults we give providers; before libfabric initialises them.
    static void set_environment();
    // Loads libfabric and lets it initialise its providers, discarding what they offer
    // (oscf_engine_warm_up). Thread-safe.
    static int warm_up();
    Fabric() = default;
    Fabric(const Fabric &) = delete;
    Fabric &operator=(const Fabric &) = delete;
    ~Fabric();

    const std::string &provider() const { return provider_; }
    bool node_local_only() const { return provider_ == "shm"; }
    const ProviderContract &contract() const { return contract_; }
    const std::vector<uint8_t> &local_address() const { return local_addr_; }

    // Inserts a peer address (idempotent: repeated windows reuse the entry).
    int insert_address(const void *addr, size_t len, fi_addr_t *out);

    // Registers [buf, buf+len) for remote read/write/atomics (counted, see mr.h): with
    // the key we choose where the provider does not, bound to the endpoint and enabled
    // where it asks for that, so the key returned is usable at once.
    int register_memory(void *buf, size_t len, mr_ptr &mr, uint64_t *key);
    // Registers [buf, buf+len) for local access only (a registrar's buffer under
    // FI_MR_LOCAL, local_memory.h); *desc is what operations on it post with.
    int register_local(void *buf, size_t len, mr_ptr &mr, void **desc);
    LocalMemory &local_memory() { return *local_; }
    const LocalMemory &local_memory() const { return *local_; }

    // Each posts one operation whose completion will call done (nullptr: none is wanted,
    // only for sends the provider reports anyway) and returns the libfabric status; the
    // caller handles -FI_EAGAIN (Progress::post), after which nothing is outstanding.
    //
    // One contiguous RMA between local memory and (remote, key) at dest. Writes ask for
    // delivery completion, since on tcp;ofi_rxm plain completion only means the data left
    // us, and are injected when small (*injected says so).
    ssize_t rma(bool write, void *local, size_t len, fi_addr_t dest, uint64_t remote, uint64_t key,
                Completion *done, bool *injected = nullptr);
    // Native atomics on count elements at (remote, key). fetch_atomic's and
    // compare_atomic's result receives the old values.
    ssize_t atomic(const void *src, size_t count, fi_datatype dt, fi_op op, fi_addr_t dest, uint64_t remote,
                   uint64_t key, Completion *done);
    ssize_t fetch_atomic(const void *src, size_t count, void *result, fi_datatype dt, fi_op op,
                         fi_addr_t dest, uint64_t remote, uint64_t key, Completion *done);
    ssize_t compare_atomic(const void *src, size_t count, const void *compare, void *result, fi_datatype dt,
                           fi_op op, fi_addr_t dest, uint64_t remote, uint64_t key, Completion *done);
    // Messages of the active-message layer. inject reports no completion.
    ssize_t send(const void *buf, size_t len, fi_addr_t dest, Completion *done);
    ssize_t inject(const void *buf, size_t len, fi_addr_t dest);
    ssize_t recv(void *buf, size_t len, Completion *done);

    // A CQ entry for op_context (one of our OpContexts): completes what it was posted
    // for, or, for a write that only left us, parks it until a read proves it delivered
    // (delivery_proof.h); gives contexts back. Lock held.
    void complete(void *op_context, int status, size_t len);
    // Each progress round: what could not be posted from inside a completion.
    void retry() {
        if (proof_) proof_->retry(ep_.get());
    }
    uint64_t proof_reads() const { return proof_ ? proof_->reads() : 0; }

    fid_ep *ep() const { return ep_.get(); }
    fid_domain *domain() const { return domain_.get(); }
    fid_cq *cq() const { return cq_.get(); }

private:
    int setup(info_ptr info);
    // Completion flags of a write posted with c: delivery complete, or transmit complete
    // with c marked for a delivery proof.
    uint64_t write_flags(OpContext *c, fi_addr_t dest) const;
    // Every post: a transmit one waits (-FI_EAGAIN) while tx_attr->size are in flight;
    // the context goes back when the provider refuses the post.
    template <class Post>
    ssize_t post(Completion *done, bool tx, Post post) {
        if (tx && contexts_.in_transmit_queue() >= tx_limit_) return -FI_EAGAIN;
        OpContext *c = contexts_.take(done, tx);
        const ssize_t rc = post(c);
        if (rc) contexts_.give(c);
        return rc;
    }
    // A step of setup() failed: logged at level 1 with the provider's name, so a job
    // that did not ask for osc/fabric by name declines silently (the help message
    // quotes it when it did), and another provider may still serve.
    int setup_error(const char *what, int rc) const;
    // fi_mr_reg with the key we choose where the provider does not, bound and enabled
    // where FI_MR_ENDPOINT asks; mr adopts the region.
    int register_region(void *buf, size_t len, uint64_t access, mr_ptr &mr,
                        RegionKind kind = RegionKind::remote);
    // The descriptors of up to three local buffers of one post (FI_MR_LOCAL); 0 or a
    // libfabric status.
    int describe(OpContext *c, const void *buf, size_t len, void **desc) {
        return local_->required() ? local_->describe(buf, len, c->refs, desc) : (*desc = nullptr, 0);
    }

    // Declaration order is teardown order in reverse: children close first, and the
    // contexts of operations still posted outlive the endpoint that may write them.
    ContextPool contexts_;
    std::unique_ptr<DeliveryProof> proof_;  // only where writes complete at transmit
    // The keys we choose where the provider does not; outlives every region (windows and
    // the staging pool close theirs before the engine closes the fabric).
    std::unique_ptr<ClientKeys> keys_;
    // Outlives every region it describes, as keys_ does.
    std::unique_ptr<LocalMemory> local_;
    info_ptr info_;
    fid_ptr<fid_fabric> fabric_;
    fid_ptr<fid_domain> domain_;
    fid_ptr<fid_av> av_;
    fid_ptr<fid_cq> cq_;
    fid_ptr<fid_ep> ep_;

    std::string provider_;
    ProviderContract contract_;
    std::vector<uint8_t> local_addr_;
    std::unordered_map<std::string, fi_addr_t> addr_cache_;
    size_t tx_limit_ = SIZE_MAX;  // transmit operations in flight at most (tx_attr->size)
};

}  // namespace oscf
