#include <sys/random.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "window.h"

using namespace oscf;

namespace {

uint32_t fnv1a(const std::string &s) {
    uint32_t h = 2166136261u;
    for (unsigned char c : s) h = (h ^ c) * 16777619u;
    return h;
}

// Names a node segment in WinBlob: never 0, which means none.
uint64_t segment_id(const char *name) {
    uint64_t h = 14695981039346656037ull;
    for (const char *c = name; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
    return h ? h : 1;
}

// WindowState::identity: never 0, and unlikely to be what another process holds at the
// address an origin checks.
uint64_t random_identity() {
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof v)) {
        // No entropy yet (early boot): the time, pid and an address still differ.
        v = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
            static_cast<uint64_t>(getpid()) << 40 ^ reinterpret_cast<uintptr_t>(&v);
    }
    return v ? v : 1;
}

void *aligned_alloc_or_null(size_t align, size_t bytes) {
    void *p = nullptr;
    if (posix_memalign(&p, align, bytes)) return nullptr;
    return p;
}

}  // namespace

oscf_win::~oscf_win() {
    // Nothing may still reference our counters: the API destroys a window only after
    // free_begin waited for every operation (and the MPI layer's barrier for everyone
    // else's), or before connect posted any.
    eng_.am->remove_window(id_);
}

int oscf_win::init(const oscf_win_params &p, void **base_out) {
    if (p.comm_size <= 0 || p.comm_rank < 0 || p.comm_rank >= p.comm_size || p.disp_unit <= 0)
        return usage_error(OSCF_ERR_ARG, "invalid window parameters (rank %d of %d, disp_unit %d)",
                           p.comm_rank, p.comm_size, p.disp_unit);
    if (fab().local_address().size() > kMaxAddrLen)
        return usage_error(OSCF_ERR_UNSUPPORTED, "endpoint address of %zu bytes is too long",
                           fab().local_address().size());
    rank_ = p.comm_rank;
    id_ = eng_.next_window_id++;
    acc_ordering_ = p.accumulate_ordering;
    size_ = p.comm_size;
    flavor_ = p.flavor;
    bytes_ = p.size;
    disp_unit_ = p.disp_unit;

    // Any flavor may have a node segment: window state always, memory when allocated.
    if (p.shared_name && (p.flavor == OSCF_FLAVOR_CREATE || p.flavor == OSCF_FLAVOR_DYNAMIC)) {
        int rc = map_shared(p);
        if (rc) return rc;
    }
    switch (p.flavor) {
    case OSCF_FLAVOR_CREATE:
        base_ = p.base;
        if (bytes_ && !base_) return usage_error(OSCF_ERR_ARG, "NULL base for %zu bytes", bytes_);
        break;
    case OSCF_FLAVOR_ALLOCATE:
        if (p.shared_name) {  // in the node segment (the MPI layer made one)
            int rc = map_shared(p);
            if (rc) return rc;
            base_ = bytes_ ? static_cast<char *>(shared_.addr) + p.shared_offset : nullptr;
        } else if (bytes_) {
            owned_memory_.reset(aligned_alloc_or_null(4096, bytes_));
            if (!owned_memory_) return OSCF_ERR_NO_MEM;
            base_ = owned_memory_.get();
        }
        break;
    case OSCF_FLAVOR_DYNAMIC:
        bytes_ = 0;  // memory comes with MPI_Win_attach (dynamic.cpp)
        break;
    case OSCF_FLAVOR_SHARED: {
        int rc = map_shared(p);
        if (rc) return rc;
        base_ = bytes_ ? static_cast<char *>(shared_.addr) + p.shared_offset : nullptr;
        break;
    }
    default: return usage_error(OSCF_ERR_RMA_FLAVOR, "unsupported window flavor %d", p.flavor);
    }
    if (base_out) *base_out = base_;

    const size_t sbytes = state_bytes(static_cast<size_t>(size_));
    if (shared_.addr) {
        // Our state words in the node segment, where on-node peers reach them directly.
        if (p.shared_state_offset % 64 || p.shared_state_offset > p.shared_total ||
            sbytes > p.shared_total - p.shared_state_offset)
            return usage_error(OSCF_ERR_ARG, "invalid window state offset in the node segment");
        auto *at = reinterpret_cast<WindowState *>(static_cast<char *>(shared_.addr) + p.shared_state_offset);
        state_ = decltype(state_)(at, [](void *) {});  // the mapping owns it
        node_segment_ = segment_id(p.shared_name);
        node_mem_offset_ = p.shared_offset;
        node_state_offset_ = p.shared_state_offset;
    } else {
        state_.reset(static_cast<WindowState *>(aligned_alloc_or_null(64, sbytes)));
        if (!state_) return OSCF_ERR_NO_MEM;
    }
    std::memset(state_.get(), 0, sbytes);
    state_->identity = random_identity();
    pscw_.resize(static_cast<size_t>(size_));

    // A zero-size window registers nothing; peers see size 0 and never address it.
    if (bytes_) {
        int rc = fab().register_memory(base_, bytes_, mr_, &mr_key_);
        if (rc) return rc;
    }

    int rc = fab().register_memory(state_.get(), sbytes, state_mr_, &state_key_);
    if (rc == OSCF_OK && flavor_ == OSCF_FLAVOR_DYNAMIC) rc = publish_regions();
    return rc;
}

void oscf_win::local_blob(WinBlob *b) const {
    std::memset(b, 0, sizeof *b);
    const auto &addr = fab().local_address();
    const bool virt = fab().contract().virt_addr;
    b->version = kWinBlobVersion;
    b->addr_len = static_cast<uint32_t>(addr.size());
    std::memcpy(b->addr, addr.data(), addr.size());
    b->base = virt ? reinterpret_cast<uintptr_t>(base_) : 0;
    b->size = bytes_;
    b->key = mr_key_;
    b->state_base = virt ? reinterpret_cast<uintptr_t>(state_.get()) : 0;
    b->state_key = state_key_;
    b->disp_unit = static_cast<uint32_t>(disp_unit_);
    b->provider_hash = fnv1a(fab().provider());
    b->am_window_id = id_;
    b->node_segment = node_segment_;
    b->node_mem_offset = node_mem_offset_;
    b->node_state_offset = node_state_offset_;
    b->pid = static_cast<uint64_t>(getpid());
    b->mem_vaddr = reinterpret_cast<uintptr_t>(base_);
    b->state_vaddr = reinterpret_cast<uintptr_t>(state_.get());
}

int oscf_win::connect(const WinBlob *blobs) {
    const uint32_t my_hash = fnv1a(fab().provider());
    peers_.clear();
    peers_.resize(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) {
        const WinBlob &b = blobs[r];
        if (b.version != kWinBlobVersion)
            return usage_error(OSCF_ERR_UNSUPPORTED, "rank %d runs window format %u, we run %u", r, b.version,
                               kWinBlobVersion);
        if (b.provider_hash != my_hash)
            return usage_error(OSCF_ERR_NO_PROVIDER,
                               "rank %d chose a different libfabric provider than ours (%s)", r,
                               fab().provider().c_str());
        if (b.addr_len > kMaxAddrLen) return OSCF_ERR_ARG;
        Peer &p = peer(r);
        int rc = fab().insert_address(b.addr, b.addr_len, &p.addr);
        if (rc) return rc;
        p.base = b.base;
        p.size = b.size;
        p.key = b.key;
        p.state_base = b.state_base;
        p.state_key = b.state_key;
        p.disp_unit = b.disp_unit;
        p.ops.parent = &all_ops_;
        p.acc.parent = &p.ops;
        p.streamed_ops.parent = &p.ops;
        p.streamed_acc.parent = &p.acc;
        p.lock.grant.parent = &p.ops;
        p.batch_and_grant.batch = &p.streamed_acc;
        p.batch_and_grant.grant = &p.lock.grant;
        p.am_window_id = b.am_window_id;
        p.cross = CrossLink{static_cast<pid_t>(b.pid), b.mem_vaddr, b.state_vaddr, CrossLink::Trust::unknown};
        // Ourselves included: our own accumulates must take the same road as our peers'.
        if (eng_.node_direct && node_segment_ && b.node_segment == node_segment_ &&
            !p.node.map(shared_.addr, shared_.len, memory_in_segment(), b.node_mem_offset, b.size,
                        b.node_state_offset, state_bytes(static_cast<size_t>(size_))))
            return usage_error(OSCF_ERR_ARG, "rank %d's window lies outside the node segment", r);
        has_direct_memory_ = has_direct_memory_ || direct_memory(p);
        own_words_by_progress_ = own_words_by_progress_ || (r != rank_ && !direct_words(p));
    }
    releases_.parent = &all_ops_;
    init_direct_view();
    eng_.am->add_window(id_, this);
    connected_ = true;
    return OSCF_OK;
}

int oscf_win::peer_address(uint32_t rank, fi_addr_t *out) const {
    if (rank >= peers_.size()) return OSCF_ERR_ARG;
    *out = peer(rank).addr;
    return OSCF_OK;
}

int oscf_win::free_begin(Guard &lk) {
    if (lock_all_ || locks_held_)
        return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_free with a passive-target epoch open");
    if (pscw_access_ || pscw_exposure_)
        return usage_error(OSCF_ERR_RMA_SYNC, "MPI_Win_free with a post/start epoch open");
    int rc = confirm_releases();
    if (rc == OSCF_OK) rc = wait_idle(lk, all_ops_);
    return rc ? rc : take_window_error();
}
