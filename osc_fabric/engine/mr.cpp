#include "mr.h"

#include <atomic>

#include "local_memory.h"
#include "status.h"

namespace oscf {

namespace {
std::atomic<uint64_t> live_count{0};
std::atomic<uint64_t> live_bytes{0};
}  // namespace

void mr_closer::operator()(fid_mr *m) const noexcept {
    if (!m) return;
    if (local) local->remove(base, m);
    int rc = fi_close(&m->fid);
    if (rc) {
        fabric_error("fi_close(mr)", rc);
        return;
    }
    live_count.fetch_sub(1, std::memory_order_relaxed);
    live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
    if (keys) keys->give(key);
}

mr_ptr adopt_mr(fid_mr *m, size_t bytes, ClientKeys *keys, uint64_t key) noexcept {
    live_count.fetch_add(1, std::memory_order_relaxed);
    live_bytes.fetch_add(bytes, std::memory_order_relaxed);
    return mr_ptr(m, mr_closer{bytes, keys, key});
}

// The two loads are not one snapshot; between windows (where tests look) nothing moves.
void registration_stats(uint64_t *count, uint64_t *bytes) noexcept {
    *count = live_count.load(std::memory_order_relaxed);
    *bytes = live_bytes.load(std::memory_order_relaxed);
}

}  // namespace oscf
