// Wire format of what each rank publishes at window creation (allgathered by the MPI
// layer, opaque to it). Fixed-width fields; bump kWinBlobVersion when the layout changes.
//   version 1: endpoint address, window memory (base/size/key/disp_unit), the
//              target-resident state (lock word), a provider fingerprint and the id
//              active messages use for the window.
//   version 2: WindowState::gate, the window-wide word that lock_all and exclusive
//              locks take from opposite sides (lock.cpp), at rank 0 of the window.
//   version 3: the node segment (shared.cpp): which one this rank maps, and where its
//              window memory and WindowState lie in it; WindowState::acc_lock.
//   version 4: the accumulate locks are kAccStripes words after WindowState, one per
//              kAccStripeBytes of window memory (node_atomics.h); acc_lock is gone.
//   version 5: the owner's pid and its own addresses of its window memory and
//              WindowState, for cross-memory puts and gets (cross_memory.h);
//              WindowState::identity.
//   version 6: WindowState::table_vaddr, the owner's address of its region table, and
//              the table generation word odd while the owner edits (dynamic.cpp).
//   version 7: the region table is a ring of kTableRing tables; the generation names
//              the current one (dynamic.cpp, table_slot); WindowState::table_readers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace oscf {

constexpr uint32_t kWinBlobVersion = 7;
constexpr size_t kMaxAddrLen = 256;  // shm names are up to 256 bytes; sockaddrs are shorter

struct WinBlob {
    uint32_t version;
    uint32_t addr_len;
    uint64_t base;        // remote address of window memory (0 when the provider uses offsets)
    uint64_t size;        // bytes exposed
    uint64_t key;         // MR key of window memory (unused when size == 0)
    uint64_t state_base;  // remote address of the WindowState block
    uint64_t state_key;
    uint32_t disp_unit;
    uint32_t provider_hash;      // all ranks must have chosen the same provider
    uint64_t am_window_id;       // names this window in active messages sent to its owner
    uint64_t node_segment;       // its name's hash, 0 without one: equal means mapped here too
    uint64_t node_mem_offset;    // window memory in that segment
    uint64_t node_state_offset;  // WindowState in that segment
    uint64_t pid;                // the owner's process id (cross_memory.h)
    uint64_t mem_vaddr;          // its window memory, as its own address
    uint64_t state_vaddr;        // its WindowState, as its own address
    uint8_t addr[kMaxAddrLen];
};
static_assert(sizeof(WinBlob) == 112 + kMaxAddrLen, "WinBlob layout is part of the wire format");

// Target-resident per-window state. The fixed header is followed by the accumulate
// locks (kAccStripes words, node_atomics.h) and two arrays of comm_size words for
// general active target (pscw.cpp):
//   post_seq[t]:     how many times rank t posted an exposure epoch including us
//   complete_seq[o]: how many access epochs of rank o that included us have completed
// Each word has a single writer (rank t or o) that only ever raises it with a plain
// RMA write, so no atomics are needed and local polling reads see the writes.
struct alignas(64) WindowState {
    uint64_t lock;         // see lock.cpp for the encoding; changed only with atomics
    uint64_t reserved[4];  // dynamic windows: where the region table is (below)
    uint64_t gate;         // rank 0's only: lock_all against exclusive locks (lock.cpp)
    // A random value its owner writes at creation. An on-node origin that reads it with
    // process_vm_readv at the owner's pid and address, and finds what it sees in the
    // segment, knows the pid names this process (another PID namespace would not) before
    // it writes there (route.cpp, cross_verify).
    uint64_t identity;
    // Dynamic windows: the address of the ring of region tables as its owner sees it,
    // which an on-node origin reads by cross-memory attach (dynamic.cpp).
    uint64_t table_vaddr;
    // Dynamic windows: readers that found the table torn too often and ask the owner to
    // hold its next publishes until they have read it (dynamic.cpp); changed only with
    // atomics, as the lock word is.
    uint64_t table_readers;
};
static_assert(sizeof(WindowState) == 128, "WindowState layout is part of the wire format");

// Dynamic windows (dynamic.cpp): WindowState::reserved[0..2] hold where the owner's
// ring of region tables is (remote address, key, capacity of each table in entries),
// reserved[3] the generation of its latest consistent table, odd while the owner edits
// a table or these words; the generation also says which table of the ring that is.
// A table is a header, `capacity` regions, and a trailing copy of the generation: a
// reader accepts a copy whose two generations are equal and even (the owner makes them
// odd while editing).
struct Region {
    uint64_t base;  // the owner's virtual address (what MPI_Get_address gave the user)
    uint64_t size;
    uint64_t key;
};
struct RegionTableHeader {
    uint64_t generation;
    uint64_t count;
};
static_assert(sizeof(Region) == 24 && sizeof(RegionTableHeader) == 16, "wire format");
constexpr size_t kTableAddrWord = 0, kTableKeyWord = 1, kTableCapacityWord = 2, kTableGenerationWord = 3;
constexpr size_t region_table_bytes(size_t capacity) {
    return sizeof(RegionTableHeader) + capacity * sizeof(Region) + sizeof(uint64_t);
}

// Accumulates to a window in a node segment take the lock of the stripe their element
// starts in: window offset / kAccStripeBytes, modulo kAccStripes. Every process that
// updates the memory (on-node origins, the owner's engine) must agree on this map.
constexpr size_t kAccStripes = 64;
constexpr uint64_t kAccStripeBytes = 4096;
constexpr uint64_t kAccStripesOffset = sizeof(WindowState);
constexpr uint64_t kPscwOffset = kAccStripesOffset + 8 * kAccStripes;

constexpr size_t state_bytes(size_t comm_size) {
    return (kPscwOffset + 2 * 8 * comm_size + 63) / 64 * 64;
}
constexpr uint64_t post_seq_offset(size_t rank) {
    return kPscwOffset + 8 * rank;
}
constexpr uint64_t complete_seq_offset(size_t comm_size, size_t rank) {
    return kPscwOffset + 8 * comm_size + 8 * rank;
}

}  // namespace oscf
