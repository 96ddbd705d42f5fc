// Owning pointer to a memory registration that also keeps the process-wide count of
// live registrations and their bytes (oscf_engine_registration_stats, the MPI_T
// variables osc_fabric_registered_regions/_bytes), so a soak test can tell a leaked
// registration from a freed one. Only Fabric::register_memory creates these. The
// counters are atomics: windows of different engines (tests open several) register and
// close without a common lock.
#pragma once

#include <rdma/fi_domain.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace oscf {

// Closes the MR like fid_closer and takes it off the counters. A failed fi_close is
// logged and leaves the registration counted: the provider may still hold it.
struct mr_closer {
    size_t bytes = 0;
    void operator()(fid_mr *m) const noexcept;
};
using mr_ptr = std::unique_ptr<fid_mr, mr_closer>;

// Takes ownership of a freshly registered MR of `bytes` bytes and counts it.
mr_ptr adopt_mr(fid_mr *m, size_t bytes) noexcept;

// Live registrations and their bytes in this process.
void registration_stats(uint64_t *count, uint64_t *bytes) noexcept;

}  // namespace oscf
