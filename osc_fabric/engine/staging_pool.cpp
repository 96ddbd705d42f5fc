#include "staging_pool.h"

#include <algorithm>

namespace oscf {

int StagingPool::take_copy(Fabric &fab, size_t bytes, Staging *out) {
    if (copy_.cap >= bytes) {
        *out = std::move(copy_);
        copy_ = Staging{};
        return OSCF_OK;
    }
    bytes = std::max(bytes, std::min(2 * bytes, kCopyKeepMax));
    out->mem.reset(new uint8_t[bytes]);
    out->cap = bytes;
    return fab.register_memory(out->mem.get(), bytes, out->mr, &out->key);
}

int StagingPool::take_slot(Fabric &fab, Staging *out) {
    if (!slots_.empty()) {
        *out = std::move(slots_.back());
        slots_.pop_back();
        return OSCF_OK;
    }
    out->mem.reset(new uint8_t[kRendezvousChunkMax]);
    out->cap = kRendezvousChunkMax;
    return fab.register_memory(out->mem.get(), kRendezvousChunkMax, out->mr, &out->key);
}

void StagingPool::give_back(Staging &&b, bool slot) {
    if (!b.mr) return;  // its registration failed
    if (slot && slots_.size() < kSlotsKept)
        slots_.push_back(std::move(b));
    else if (!slot && b.cap <= kCopyKeepMax && copy_.cap < b.cap)
        copy_ = std::move(b);
}

std::unique_ptr<uint8_t[]> StagingPool::take_chunk_buffer(size_t need) {
    if (need > kRendezvousChunkMax || chunk_buffers_.empty())
        return std::unique_ptr<uint8_t[]>(new uint8_t[std::max(need, kRendezvousChunkMax)]);
    std::unique_ptr<uint8_t[]> buf = std::move(chunk_buffers_.back());
    chunk_buffers_.pop_back();
    return buf;
}

void StagingPool::keep_chunk_buffer(std::unique_ptr<uint8_t[]> &buf, size_t need) {
    if (need <= kRendezvousChunkMax && chunk_buffers_.size() < kChunkBuffersKept)
        chunk_buffers_.push_back(std::move(buf));
}

void StagingPool::clear() {
    copy_ = Staging{};
    slots_.clear();
    chunk_buffers_.clear();
}

}  // namespace oscf
