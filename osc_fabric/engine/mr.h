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
#include <deque>
#include <memory>

namespace oscf {

// Keys we choose, for providers without FI_MR_PROV_KEY: unique among the domain's live
// regions and within the provider's key size (opx's are 2 bytes), so a program that
// creates and frees windows for ever never runs out. Fresh keys go first, then the one
// freed longest ago: a key then stays unused as long as it can after its region closed,
// so a stale key an erroneous origin still holds more likely fails than lands in a newer
// region. Owned by the Fabric, which outlives every region; engine lock held.
class ClientKeys {
public:
    explicit ClientKeys(size_t key_bytes)
        : limit_(key_bytes >= sizeof(uint64_t) ? UINT64_MAX : (uint64_t{1} << (8 * key_bytes)) - 1) {}
    // False when every key is held by a live region.
    bool take(uint64_t *key) {
        if (next_ <= limit_ && next_ != 0) {
            *key = next_++;
            return true;
        }
        if (freed_.empty()) return false;
        *key = freed_.front();
        freed_.pop_front();
        return true;
    }
    void give(uint64_t key) { freed_.push_back(key); }
    uint64_t limit() const { return limit_; }

private:
    uint64_t limit_;
    uint64_t next_ = 1;  // 0 is left out: a zeroed key is more likely a bug than a choice
    std::deque<uint64_t> freed_;
};

// Closes the MR like fid_closer and takes it off the counters; a key we chose goes back
// to its ClientKeys. A failed fi_close is logged and leaves the registration counted
// (and its key taken): the provider may still hold it.
// What a region is for, counted apart: windows' and the engine's own regions, whose
// number must return to where it was when they are freed, and regions registered for
// local descriptors (local_memory.h), which a registration cache keeps after use.
enum class RegionKind : uint8_t { remote, local };

class LocalMemory;
struct mr_closer {
    size_t bytes = 0;
    ClientKeys *keys = nullptr;
    uint64_t key = 0;
    LocalMemory *local = nullptr;  // set where the region's descriptor serves local buffers
    const void *base = nullptr;
    RegionKind kind = RegionKind::remote;
    void operator()(fid_mr *m) const noexcept;
};
using mr_ptr = std::unique_ptr<fid_mr, mr_closer>;

// Takes ownership of a freshly registered MR of `bytes` bytes and counts it; keys is set
// where `key` came from it.
mr_ptr adopt_mr(fid_mr *m, size_t bytes, ClientKeys *keys = nullptr, uint64_t key = 0,
                RegionKind kind = RegionKind::remote) noexcept;

// Live registrations of one kind and their bytes in this process.
void registration_stats(uint64_t *count, uint64_t *bytes, RegionKind kind = RegionKind::remote) noexcept;

}  // namespace oscf
