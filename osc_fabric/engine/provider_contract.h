// The chosen provider's contract: what it demands of us and what it offers, read once
// from the fi_info it handed back (and, for what fi_info cannot say, from facts about
// the provider by name). This is the only place that reads mr_mode or mode bits, the
// size limits or provider names; the rest of the engine asks a ProviderContract. The
// hints we ask with are built here too, beside the code that honours what comes back,
// so a bit is asked for only where something obeys it.
//
// Built by Fabric::setup, owned by the Fabric, read-only after. No fabric is needed to
// build one (test/engine/test_provider_contract.cpp feeds it hand-made fi_info).
#pragma once

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fid.h"

namespace oscf {

// The two values of the pre-1.5 mr_mode enum, which some providers still hand back:
// FI_MR_BASIC means VIRT_ADDR | PROV_KEY | ALLOCATED, FI_MR_SCALABLE offsets and keys we
// choose. libfabric 2 deprecates the names (a warning at every use); the values stay.
constexpr uint64_t kMrBasic = 1u << 0;
constexpr uint64_t kMrScalable = 1u << 1;

struct ProviderContract {
    std::string provider;

    // Limits of one operation.
    size_t inject_size = 0;    // writes up to this size may use FI_INJECT
    size_t max_msg_size = 0;   // one fi_write/fi_read moves at most this much
    size_t iov_limit = 1;      // local segments of one message-form call (we post 1)
    size_t rma_iov_limit = 1;  // remote segments of one call (we post 1)
    size_t tx_size = 0;        // transmit operations the provider queues at once (0: no limit said)

    // Memory registration.
    bool virt_addr = false;    // remote addresses are virtual addresses, not MR offsets
    bool prov_key = false;     // the provider chooses MR keys; else we do, unique per domain
    bool mr_endpoint = false;  // regions are bound to the endpoint and enabled before use
    size_t mr_key_size = 8;    // bytes of a key: the keys we choose must fit
    bool mr_local = false;     // every local buffer carries a descriptor (local_memory.h)

    // Contexts (op_context.h): bytes of each context the provider owns until completion
    // (0, FI_CONTEXT's or FI_CONTEXT2's), and whether posted iov arrays must stay alive
    // until completion (FI_ASYNC_IOV). Every post has its own OpContext either way; these
    // say what that is for on this provider.
    size_t context_bytes = 0;
    bool async_iov = false;

    // Completion and ordering.
    unsigned atomic_order = 0;      // OSCF_ORDER_* bits native atomics keep by themselves
    bool fence = false;             // FI_FENCE is accepted
    bool read_after_write = false;  // an RMA read is not served before earlier writes (FI_ORDER_[RMA_]RAW)
    // False where a write's completion means only that it left us: then a read behind
    // the writes proves them delivered (delivery_proof.h).
    bool writes_delivered = true;

    // Facts fi_info does not carry (provider_contract.cpp says why for each).
    // False where the provider's atomics were seen to lose updates: then every atomic,
    // lock words included, goes through active messages.
    bool atomics_trusted = true;
    // True where the provider's atomics are software that the target's CPU runs in its
    // progress: our own active messages then cost no more per operation, and coalesce.
    bool atomics_in_software = false;
    // True where fi_write is a message the target's software applies (rxm, sockets),
    // unlike shm's single-copy writes: small puts may then join our batches.
    bool rma_in_software = false;
    // True where fi_read costs the origin a system call (shm reads with
    // process_vm_readv): a small get is then cheaper as an active message.
    bool reads_by_syscall = false;

    // Why this provider cannot be served as it came back: empty when it can. Each reason
    // names the demand we do not meet.
    std::string refusal;
};

// What Fabric::open asks fi_getinfo for: the capabilities we use and every memory
// registration and mode bit ProviderContract's users honour; FI_MR_LOCAL only with
// mr_local (a provider that can do without it, such as rxm, then registers itself);
// FI_ATOMIC only with atomics (Fabric::open asks both ways: providers without atomics,
// such as libfabric 2's native tcp, serve with every atomic as an active message).
info_ptr contract_hints(bool mr_local = true, bool atomics = true);

// Reads a provider's fi_info (one returned for contract_hints()) into its contract.
ProviderContract read_contract(const fi_info &info);

}  // namespace oscf
