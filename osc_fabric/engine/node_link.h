// The direct route to a peer on this node: its window memory and WindowState seen
// through our mapping of the node segment (shared.cpp), so puts and gets are copies,
// accumulates updates under the owner's stripe locks (node_atomics.h) and lock words plain atomic words, with no
// message and no help from the peer. Empty (linked() false) for every other peer and
// for every peer of a window without a node segment; route.cpp decides, per peer and
// per operation, whether the direct route may serve it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "node_atomics.h"
#include "window_blob.h"

namespace oscf {

class NodeLink {
public:
    // The peer's state (state_size bytes) and, when memory is true, its window memory
    // (mem_size bytes) at these offsets of a segment of seg_len bytes mapped at segment.
    // False when they do not fit in it.
    bool map(void *segment, size_t seg_len, bool memory, uint64_t mem_offset, uint64_t mem_size,
             uint64_t state_offset, size_t state_size) {
        if ((memory && (mem_offset > seg_len || mem_size > seg_len - mem_offset)) || state_offset > seg_len ||
            state_size > seg_len - state_offset || state_offset % 64)
            return false;
        mem_ = memory ? static_cast<char *>(segment) + mem_offset : nullptr;
        mem_size_ = memory ? mem_size : 0;
        state_ = reinterpret_cast<WindowState *>(static_cast<char *>(segment) + state_offset);
        return true;
    }
    bool linked() const { return state_ != nullptr; }
    // Window memory in the segment too (MPI_Win_allocate, MPI_Win_allocate_shared); a
    // window over user memory shares only its state words.
    bool has_memory() const { return mem_ != nullptr; }
    char *mem() const { return mem_; }
    uint64_t mem_size() const { return mem_size_; }
    // A 64-bit word of the peer's WindowState (lock words, PSCW counters).
    uint64_t *word(uint64_t offset) const {
        return reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(state_) + offset);
    }
    // The window memory with the owner's accumulate locks (node_atomics.h).
    SharedWindow shared() const { return {mem_, word(kAccStripesOffset)}; }

private:
    char *mem_ = nullptr;
    uint64_t mem_size_ = 0;
    WindowState *state_ = nullptr;
};

}  // namespace oscf
