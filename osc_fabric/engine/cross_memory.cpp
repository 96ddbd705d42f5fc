// See cross_memory.h.
#include "cross_memory.h"

#include <cerrno>

namespace oscf {

int CrossCopy::add(void *local, uint64_t remote, size_t len) {
    if (len == 0) return 0;
    if (n_ && static_cast<char *>(local_[n_ - 1].iov_base) + local_[n_ - 1].iov_len == local &&
        static_cast<char *>(remote_[n_ - 1].iov_base) + remote_[n_ - 1].iov_len ==
            reinterpret_cast<char *>(static_cast<uintptr_t>(remote))) {
        // Follows the piece before on both sides: one piece.
        local_[n_ - 1].iov_len += len;
        remote_[n_ - 1].iov_len += len;
        return 0;
    }
    if (n_ == kIovMax) {
        const int err = flush();
        if (err) return err;
    }
    local_[n_] = iovec{local, len};
    remote_[n_] = iovec{reinterpret_cast<void *>(static_cast<uintptr_t>(remote)), len};
    ++n_;
    return 0;
}

int CrossCopy::finish() {
    return n_ ? flush() : 0;
}

// The calls may stop short at an iovec boundary (a later piece failed); what is left
// is tried again, so a failing piece reports its errno.
int CrossCopy::flush() {
    size_t first = 0;
    while (first < n_) {
        ++calls_;
        const unsigned long cnt = n_ - first;
        const ssize_t got = write_ ? process_vm_writev(pid_, local_ + first, cnt, remote_ + first, cnt, 0)
                                   : process_vm_readv(pid_, local_ + first, cnt, remote_ + first, cnt, 0);
        if (got < 0) return errno ? errno : EIO;
        if (got == 0) return EFAULT;
        size_t done = static_cast<size_t>(got);
        bytes_ += done;
        // Whole pieces only (the kernel never splits one); skip those done.
        while (first < n_ && done >= local_[first].iov_len) done -= local_[first++].iov_len;
        if (done) {  // a split piece after all: move its rest on
            local_[first].iov_base = static_cast<char *>(local_[first].iov_base) + done;
            local_[first].iov_len -= done;
            remote_[first].iov_base = static_cast<char *>(remote_[first].iov_base) + done;
            remote_[first].iov_len -= done;
        }
    }
    n_ = 0;
    return 0;
}

int cross_read(pid_t pid, uint64_t addr, void *out, size_t len) {
    iovec local{out, len};
    iovec remote{reinterpret_cast<void *>(static_cast<uintptr_t>(addr)), len};
    const ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got == static_cast<ssize_t>(len)) return 0;
    return got < 0 && errno ? errno : EFAULT;
}

}  // namespace oscf
