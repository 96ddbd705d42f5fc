#include "mr.h"

#include <atomic>

#include "local_memory.h"
#include "status.h"

namespace oscf {

namespace {
struct Live {
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> bytes{0};
};
Live live[2];  // by RegionKind
Live &live_of(RegionKind kind) {
    return live[static_cast<int>(kind)];
}
}  // namespace

void mr_closer::operator()(fid_mr *m) const noexcept {
    if (!m) return;
    if (local) local->remove(base, m);
    int rc = fi_close(&m->fid);
    if (rc) {
        fabric_error("fi_close(mr)", rc);
        return;
    }
    live_of(kind).count.fetch_sub(1, std::memory_order_relaxed);
    live_of(kind).bytes.fetch_sub(bytes, std::memory_order_relaxed);
    if (keys) keys->give(key);
}

mr_ptr adopt_mr(fid_mr *m, size_t bytes, ClientKeys *keys, uint64_t key, RegionKind kind) noexcept {
    live_of(kind).count.fetch_add(1, std::memory_order_relaxed);
    live_of(kind).bytes.fetch_add(bytes, std::memory_order_relaxed);
    mr_closer closer{};
    closer.bytes = bytes;
    closer.keys = keys;
    closer.key = key;
    closer.kind = kind;
    return mr_ptr(m, closer);
}

// The two loads are not one snapshot; between windows (where tests look) nothing moves.
void registration_stats(uint64_t *count, uint64_t *bytes, RegionKind kind) noexcept {
    *count = live_of(kind).count.load(std::memory_order_relaxed);
    *bytes = live_of(kind).bytes.load(std::memory_order_relaxed);
}

}  // namespace oscf
