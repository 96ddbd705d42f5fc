// Node segments: one POSIX shared-memory segment per window and node, created by one
// process and mapped by every process of the window on that node (the MPI layer lays it
// out: osc_fabric_shared.c). It holds each one's WindowState and, for MPI_Win_allocate
// and MPI_Win_allocate_shared, its window memory: on-node peers reach both directly
// (route.cpp); load/store through the mapping of a shared window is the application's.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "window.h"

using namespace oscf;

oscf_win::Mapping::~Mapping() {
    if (addr) munmap(addr, len);
}

int oscf_win::map_shared(const oscf_win_params &p) {
    const bool memory = p.flavor == OSCF_FLAVOR_ALLOCATE || p.flavor == OSCF_FLAVOR_SHARED;
    if (!p.shared_name ||
        (memory && (p.shared_offset > p.shared_total || p.size > p.shared_total - p.shared_offset)))
        return usage_error(OSCF_ERR_ARG, "invalid shared segment parameters");
    if (p.shared_total == 0) return OSCF_OK;
    int fd = p.shared_create ? shm_open(p.shared_name, O_RDWR | O_CREAT | O_EXCL, 0600)
                             : shm_open(p.shared_name, O_RDWR, 0);
    if (fd < 0) {
        log(0, "shm_open(%s): %s", p.shared_name, std::strerror(errno));
        return OSCF_ERR_NO_MEM;
    }
    int rc = OSCF_OK;
    // Reserve the pages now: a tmpfs too small for the segment (a container's 64 MiB
    // /dev/shm) then fails here, with a reason, instead of SIGBUS at first touch.
    if (p.shared_create) {
        int err = posix_fallocate(fd, 0, static_cast<off_t>(p.shared_total));
        if (err) {
            log(1, "reserving a node segment of %zu bytes in /dev/shm: %s", p.shared_total,
                std::strerror(err));
            rc = OSCF_ERR_NO_MEM;
        }
    }
    if (rc == OSCF_OK) {
        void *a = mmap(nullptr, p.shared_total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (a == MAP_FAILED) {
            log(0, "mmap of %zu shared bytes: %s", p.shared_total, std::strerror(errno));
            rc = OSCF_ERR_NO_MEM;
        } else {
            shared_.addr = a;
            shared_.len = p.shared_total;
        }
    }
    close(fd);
    return rc;
}

extern "C" int oscf_shared_unlink(const char *name) {
    if (!name) return OSCF_ERR_ARG;
    if (shm_unlink(name) != 0 && errno != ENOENT) {
        log(0, "shm_unlink(%s): %s", name, std::strerror(errno));
        return OSCF_ERR_NO_MEM;
    }
    return OSCF_OK;
}

int oscf_win::memory_of(int rank, void **base, size_t *size, int *disp_unit) const {
    *base = nullptr;
    *size = 0;
    *disp_unit = 1;
    if (rank < 0 || rank >= size_) return OSCF_ERR_RANK;
    if (rank == rank_) {
        *disp_unit = disp_unit_;
        if (flavor_ != OSCF_FLAVOR_DYNAMIC && bytes_ != 0) {
            *base = base_;
            *size = bytes_;
        }
        return OSCF_OK;
    }
    const Peer &p = peer(rank);
    *disp_unit = static_cast<int>(p.disp_unit);
    if (p.node.has_memory() && p.node.mem_size() != 0) {
        *base = p.node.mem();
        *size = p.node.mem_size();
    }
    return OSCF_OK;
}
