// Copies between this process and another on the same node without its help: Linux's
// cross-memory attach (process_vm_writev / process_vm_readv). Puts and gets to an
// on-node peer's MPI_Win_create or dynamic window (user memory, not in the node segment)
// take this road (route.cpp, cross_transfer_all), so they neither wait for the target to
// enter MPI nor cost a libfabric shm message each. Pure code over the two system calls, tested in
// test/engine/test_cross_memory.cpp.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace oscf {

// What an origin knows of one peer's process for this road (WinBlob: pid, base, state).
struct CrossLink {
    enum class Trust : uint8_t {
        unknown,   // not yet checked (cross_verify)
        verified,  // the pid names the process that maps our node segment
        refused,   // no: the fabric serves this peer
    };
    pid_t pid = 0;
    uint64_t base = 0;   // its window memory, as its own address
    uint64_t state = 0;  // its WindowState in the node segment, as its own address
    Trust trust = Trust::unknown;
};

// One put's or get's pieces, gathered into as few system calls as the kernel's iovec
// limit allows. Every piece must have been range-checked: the kernel checks only that the
// target's pages are mapped.
class CrossCopy {
public:
    CrossCopy(pid_t pid, bool write) : pid_(pid), write_(write) {}
    // Adds len bytes at local, to or from the peer's address remote. Returns 0, or the
    // errno of a call that failed (nothing is added after a failure).
    int add(void *local, uint64_t remote, size_t len);
    // Moves what add left pending; 0 or an errno.
    int finish();
    size_t bytes() const { return bytes_; }
    size_t calls() const { return calls_; }

    static constexpr size_t kIovMax = 1024;  // IOV_MAX on Linux, the calls' limit

private:
    int flush();
    pid_t pid_;
    bool write_;
    size_t n_ = 0, bytes_ = 0, calls_ = 0;
    iovec local_[kIovMax], remote_[kIovMax];
};

// A derived-datatype put or get whose pieces average fewer bytes goes packed through
// the provider instead (packed_layout.cpp): each piece costs the kernel a page lookup,
// and this road packs and copies on the origin's CPU alone where the packed one has
// the target place the bytes meanwhile (perf/README.md, "Measurements behind design
// choices").
constexpr size_t kCrossPieceMin = 4096;

// Reads len bytes at the peer's address addr into out. 0 or an errno (EFAULT when only
// part could be read).
int cross_read(pid_t pid, uint64_t addr, void *out, size_t len);

// Whether a failure with this errno means the road is closed to every peer (the kernel
// or a security policy refuses cross-memory attach), not just to one.
inline bool cross_memory_refused(int err) {
    return err == EPERM || err == ENOSYS || err == EACCES;
}

}  // namespace oscf
