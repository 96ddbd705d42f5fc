// The contracts of the production providers the strict provider impersonates, as plain data.
// Owned by nobody: one constant table for the whole process, read-only after load, so it needs no
// lock. Every number names the libfabric source file it was read from (profiles.cpp); a contract
// fact lives only here, the checks in rules.cpp and the wrappers only ask.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>

#include <cstddef>
#include <cstdint>

namespace strict {

// One bit per fi_datatype (FI_INT8 = bit 0 ... FI_LONG_DOUBLE_COMPLEX = bit 13).
using dt_mask = uint32_t;
constexpr int kAtomicOps = FI_MSWAP + 1;  // FI_MIN .. FI_MSWAP, the ops libfabric 1.17 knows

enum class atomic_kind { plain = 0, fetch = 1, compare = 2 };

struct profile {
    const char *name;               // OSCF_STRICT_PROFILE value and the prefix of every report line
    const char *prov_name;          // the production provider's registered name
    uint64_t caps;                  // everything the provider can offer on an RDM endpoint
    uint64_t mr_required;           // bits the hints must carry, else -FI_ENODATA
    uint64_t mr_returned;           // bits handed back (before the hint-dependent ones below)
    uint64_t mr_prov_key_if_asked;  // bits returned only when the hints ask for them
    uint64_t mr_va_if_asked;
    size_t mr_key_size;        // bytes of a client key
    uint64_t mode_required;    // mode bits the hints must carry when caps need them
    uint64_t mode_needs_caps;  // ... and the caps that make them needed (0: always)
    uint64_t mode_returned;    // mode handed back whatever the hints say
    size_t inject_size;
    size_t iov_limit;
    size_t rma_iov_limit;
    size_t max_msg_size;
    uint64_t msg_order;
    size_t max_order_raw_size, max_order_war_size, max_order_waw_size;
    bool delivery_complete;          // FI_DELIVERY_COMPLETE available for RMA writes
    bool fence;                      // FI_FENCE supported
    dt_mask atomics[3][kAtomicOps];  // [atomic_kind][fi_op] -> datatypes natively handled
    // mr_mode bits returned, and then enforced, only when the hints carry them: rxm over
    // verbs keeps FI_MR_LOCAL for an application that offers it, and then posts its
    // descriptors instead of registering each buffer itself.
    uint64_t mr_local_if_asked = 0;
};

// nullptr when the name is unknown (or null).
const profile *find_profile(const char *name);

inline bool atomic_supported(const profile &p, atomic_kind k, int op, int dt) {
    if (op < 0 || op >= kAtomicOps || dt < 0 || dt >= FI_DATATYPE_LAST) return false;
    return (p.atomics[static_cast<int>(k)][op] >> dt) & 1u;
}

}  // namespace strict
