// Which road an operation to a peer takes, and the direct road itself (node_link.h).
//
// A peer whose window lives in our node segment (Peer::node linked, ourselves included)
// is reached with memory copies, updates under its stripe locks and CPU atomics on its
// lock words, except where that would not be atomic with what others do to the same
// words:
//   - put, get: direct where the peer's window memory is in the segment too (allocated
//     windows; MPI makes conflicting puts erroneous, so nothing to keep atomic);
//   - accumulate family of type T: direct unless T travels as native fabric atomics
//     (AtomicCaps). A NIC's or provider's atomic is not atomic with a CPU's update of
//     the same word, locked or not, so when off-node origins use native atomics for T,
//     on-node ones must too.
//     Otherwise every update of T at this target, from on-node origins' CPUs and from
//     this engine serving active messages of off-node ones, goes through node_atomics.h;
//   - lock and synchronization words: direct unless 64-bit integers are native, by the
//     same rule (lock words are 64-bit fetch-and-add and compare-and-swap). Off the node
//     they take the provider's atomics only where those are the NIC's (lock.cpp,
//     lock_words_native).
//   - put, get to an on-node peer's MPI_Win_create or dynamic window (user memory, not
//     in the segment): cross-memory attach (cross_memory.h), a copy between the two
//     processes by the kernel, once the peer's pid is verified against the segment (cross_verify);
//     where the kernel refuses it, the fabric, as for any other peer.
// Direct operations are complete when they return, so flush has nothing to wait for on
// them, and no target progress is ever needed.
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "atomic_types.h"
#include "piece_copy.h"
#include "window.h"

using namespace oscf;

bool oscf_win::direct_memory(const Peer &p) const {
    return p.node.has_memory();
}

// The rule of the header: this node applies its own updates of a type (node_atomics.h,
// or a CPU atomic on a lock word) unless the type travels as native fabric atomics.
bool oscf_win::updated_on_node(oscf_type t) const {
    return !eng_.caps.native(t);
}

bool oscf_win::direct_accumulate(const Peer &p, oscf_type t) const {
    return p.node.has_memory() && updated_on_node(t);
}

bool oscf_win::direct_words(const Peer &p) const {
    return p.node.linked() && updated_on_node(OSCF_TYPE_UINT64);
}

// Whether any operation of this window, in either direction, may travel through the
// fabric: data of windows whose memory is not in the segment, a peer off the node, a
// type whose accumulates are native atomics (lock words among them). A process whose
// windows all answer no never receives a message, so polling through MPI need not read
// its completion queue (Progress::tick_locked).
bool oscf_win::exchanges_messages() const {
    if (!connected_ || !memory_in_segment()) return true;
    for (const Peer &p : peers_)
        if (!direct_memory(p) || !direct_words(p)) return true;
    for (int t = 0; t < OSCF_TYPE_COUNT; ++t)
        if (!updated_on_node(static_cast<oscf_type>(t))) return true;
    return false;
}

oscf_win::AccRoute oscf_win::acc_route(const Peer &p, int target, oscf_type t) const {
    if (direct_accumulate(p, t)) return AccRoute::direct;
    if (eng_.caps.native(t)) return AccRoute::native;
    return target == rank_ ? AccRoute::here : AccRoute::message;
}

// The checks every put or get makes once: the epoch allows it, and a lock request that
// travelled as a message (lock.cpp) is granted.
int oscf_win::direct_begin(Guard &lk, int target, const char *what) {
    int rc = begin_access(lk, target, what);
    return rc ? rc : await_grant(lk, peer(target));
}

// All pieces of one put or get to a peer whose window memory we map (never dynamic:
// attached memory is the user's). One epoch check and one grant for the operation,
// then a bounds check and a copy per piece: a derived datatype's thousands of pieces
// cost what their copies cost.
int oscf_win::direct_transfer_all(Guard &lk, Dir dir, int target, const oscf_segment *segs, size_t n,
                                  int64_t disp) {
    const char *what = dir == Dir::write ? "put" : "get";
    Peer &p = peer(target);
    int rc = direct_begin(lk, target, what);
    if (rc) return rc;
    for (size_t i = 0; i < n; ++i) {  // every piece in range before anything moves
        uint64_t off;
        if ((rc = target_offset(disp, p.disp_unit, segs[i].target_offset, segs[i].len, p.size, target, what,
                                &off)))
            return rc;
    }
    for (size_t i = 0; i < n; ++i) {
        // Checked above: the offset is within the window, so it fits.
        char *there = p.node.mem() + static_cast<uint64_t>(static_cast<__int128>(disp) * p.disp_unit +
                                                           segs[i].target_offset);
        auto *local = static_cast<char *>(segs[i].origin);
        if (dir == Dir::write)
            move_block(reinterpret_cast<uint8_t *>(there), reinterpret_cast<uint8_t *>(local), segs[i].len);
        else
            move_block(reinterpret_cast<uint8_t *>(local), reinterpret_cast<uint8_t *>(there), segs[i].len);
        stats.direct_bytes += segs[i].len;
    }
    stats.direct_rma += n;
    offer_direct(target);
    return OSCF_OK;
}

// The road of the header's last bullet (MPI_Win_create and dynamic windows). Asked
// before each put or get: cheap once the peer is verified or refused.
bool oscf_win::cross_memory(Peer &p) {
    if (!eng_.cross_memory || !p.node.linked() || p.node.has_memory() || is_self(p) ||
        !(flavor_ == OSCF_FLAVOR_DYNAMIC || (flavor_ == OSCF_FLAVOR_CREATE && p.size != 0)))
        return false;
    switch (p.cross.trust) {
    case CrossLink::Trust::verified: return true;
    case CrossLink::Trust::refused: return false;
    case CrossLink::Trust::unknown: break;
    }
    return cross_verify(p);
}

// The pid a peer published names the process that maps our segment when reading its
// WindowState::identity at the address it published finds what the segment holds: in
// another PID namespace the same number names another process, which must never be
// written to.
bool oscf_win::cross_verify(Peer &p) {
    const uint64_t at = p.cross.state + offsetof(WindowState, identity);
    uint64_t seen = 0;
    const int err = cross_read(p.cross.pid, at, &seen, sizeof seen);
    if (!err && seen == *p.node.word(offsetof(WindowState, identity))) {
        p.cross.trust = CrossLink::Trust::verified;
        return true;
    }
    p.cross.trust = CrossLink::Trust::refused;
    if (err && cross_memory_refused(err)) {
        eng_.cross_memory = false;
        log(2,
            "cross-memory attach refused (%s): puts and gets to on-node MPI_Win_create and "
            "dynamic windows go through the provider (ptrace restrictions such as "
            "kernel.yama.ptrace_scope, or a seccomp policy, refuse it)",
            std::strerror(err));
    } else {
        log(2,
            "rank %d's pid %d does not name the process sharing our node segment (%s): its puts and gets go "
            "through the provider",
            rank_of(p), static_cast<int>(p.cross.pid), err ? std::strerror(err) : "another process answered");
    }
    return false;
}

// A cross-memory copy to or from p failed with errno err: p, or every peer when the
// kernel refuses the road, goes through the provider from now on.
void oscf_win::cross_refuse(Peer &p, int err, const char *what) {
    p.cross.trust = CrossLink::Trust::refused;
    if (cross_memory_refused(err)) eng_.cross_memory = false;
    log(1, "cross-memory %s at rank %d failed (%s): this and later calls to it go through the provider", what,
        rank_of(p), std::strerror(err));
}

// All pieces of one put or get to a peer reached by cross-memory attach: the epoch and
// grant checked once, every piece in range before anything moves, then as few system
// calls as the pieces need (the kernel's iovec limit). Complete when it returns. A copy
// that fails (the peer died, the kernel now refuses) closes the road to that peer and
// *refused tells the caller to send the whole call through the fabric, which reports a
// dead peer as for any other: a put or get may run twice, with the same bytes.
int oscf_win::cross_transfer_all(Guard &lk, Dir dir, int target, const oscf_segment *segs, size_t n,
                                 int64_t disp, bool *refused) {
    *refused = false;
    const char *what = dir == Dir::write ? "put" : "get";
    Peer &p = peer(target);
    int rc = direct_begin(lk, target, what);
    if (rc) return rc;
    // Every byte in the window, or attached (a dynamic window's piece may run across
    // regions attached back to back), before anything moves. An empty piece of a
    // window with a size is checked as the direct road checks it; one of a dynamic
    // window touches nothing, as in transfer().
    const bool dynamic = flavor_ == OSCF_FLAVOR_DYNAMIC;
    for (size_t i = 0; i < n; ++i) {
        size_t done = 0;
        do {
            if (dynamic && segs[i].len == 0) break;
            Where w;
            if ((rc = resolve(lk, target, disp, segs[i].target_offset + static_cast<int64_t>(done),
                              segs[i].len - done, what, &w)))
                return rc;
            done += w.span;
        } while (done < segs[i].len);
    }
    // Reading a dynamic window's region table may have found the road closed.
    if (p.cross.trust != CrossLink::Trust::verified) {
        *refused = true;
        return OSCF_OK;
    }
    CrossCopy copy(p.cross.pid, dir == Dir::write);
    int err = 0;
    for (size_t i = 0; i < n && !err; ++i) {
        if (segs[i].len == 0) continue;
        // Checked above: in the window, so the sum fits. A dynamic window's
        // displacement is the owner's address already.
        const uint64_t remote =
            dynamic ? static_cast<uint64_t>(static_cast<__int128>(disp) + segs[i].target_offset)
                    : p.cross.base + static_cast<uint64_t>(static_cast<__int128>(disp) * p.disp_unit +
                                                           segs[i].target_offset);
        err = copy.add(segs[i].origin, remote, segs[i].len);
    }
    if (!err) err = copy.finish();
    if (err == EFAULT && dynamic) {
        // Unmapped at the owner although its table, just checked, lists it: detached and
        // freed while we copied. Erroneous, but no reason to close the road; the
        // fabric's cached key would be no better.
        return usage_error(OSCF_ERR_RMA_RANGE, "%s to rank %d: a region was detached during the call", what,
                           target);
    }
    if (err) {
        cross_refuse(p, err, what);
        *refused = true;
        return OSCF_OK;
    }
    stats.direct_rma += n;
    stats.cross_rma += n;
    stats.direct_bytes += copy.bytes();
    return OSCF_OK;
}

int oscf_win::direct_span(Guard &lk, int target, int64_t disp, int64_t offset, size_t len, bool put,
                          void **where) {
    *where = nullptr;
    int rc = check_target(target);
    if (rc || !direct_memory(peer(target))) return rc;
    const char *what = put ? "put" : "get";
    Peer &p = peer(target);
    uint64_t off;
    if ((rc = direct_begin(lk, target, what)) ||
        (rc = target_offset(disp, p.disp_unit, offset, len, p.size, target, what, &off)))
        return rc;
    ++stats.direct_rma;
    stats.direct_bytes += len;
    *where = p.node.mem() + off;
    offer_direct(target);
    return OSCF_OK;
}

// Before a direct accumulate: a lock request that travelled as a message granted, and
// where an ordering is asked for, earlier accumulates to p still in flight (another
// type's native atomics, a batch) complete.
int oscf_win::direct_ready(Guard &lk, Peer &p) {
    int rc = await_grant(lk, p);
    if (rc || acc_ordering_ == 0 || (p.batch.empty() && p.acc.idle())) return rc;
    if (!p.batch.empty() && (rc = send_batch(p))) return rc;
    ++stats.ordering_waits;
    return wait_idle(lk, p.acc);
}

// All segments of one accumulate (one, or a derived datatype's pieces) to a peer
// reached directly: the epoch, grant and ordering checks once for the call, every
// segment in range and with its data before anything changes, then the updates.
int oscf_win::direct_accumulate_all(Guard &lk, int target, const oscf_acc_segment *segs, size_t n,
                                    oscf_type type, oscf_op op, int64_t disp) {
    const char *what = segs[0].result ? "get_accumulate" : "accumulate";
    Peer &p = peer(target);
    int rc = begin_access(lk, target, what);
    if (rc || (rc = direct_ready(lk, p))) return rc;
    for (size_t i = 0; i < n; ++i) {
        uint64_t off;
        if (!segs[i].origin && op != OSCF_OP_NO_OP)
            return usage_error(OSCF_ERR_ARG, "accumulate without origin data");
        if ((rc = target_offset(disp, p.disp_unit, segs[i].target_offset, segs[i].count * type_size(type),
                                p.size, target, what, &off)))
            return rc;
    }
    struct Listed {
        const oscf_acc_segment *at, *end;
        static int next(void *arg, oscf_acc_segment *seg) {
            auto *l = static_cast<Listed *>(arg);
            if (l->at == l->end) return 0;
            *seg = *l->at++;
            return 1;
        }
    } listed{segs, segs + n};
    return direct_accumulate_each(lk, target, type, op, disp, oscf_acc_source{&Listed::next, &listed});
}

// The updates of one accumulate to a peer reached directly, one segment at a time, after
// the caller made the call's checks: per segment, a bounds check (which the caller's
// span check already passed) and what its elements' updates cost.
int oscf_win::direct_accumulate_each(Guard &, int target, oscf_type type, oscf_op op, int64_t disp,
                                     const oscf_acc_source &src) {
    const size_t size = type_size(type);
    const char *what = "accumulate";
    Peer &p = peer(target);
    size_t segments = 0, elements = 0;
    oscf_acc_segment sg;
    int more;
    NodeUpdates updates(p.node.shared(), type);
    while ((more = src.next(src.arg, &sg)) > 0) {
        uint64_t off;
        int rc =
            target_offset(disp, p.disp_unit, sg.target_offset, sg.count * size, p.size, target, what, &off);
        if (rc) return rc;
        if (!sg.origin && op != OSCF_OP_NO_OP)
            return usage_error(OSCF_ERR_ARG, "accumulate without origin data");
        ++segments;
        if (op == OSCF_OP_NO_OP && !sg.result) continue;  // nothing to read or change
        updates.accumulate(off, op, sg.origin, sg.result, sg.count);
        elements += sg.count;
    }
    updates.finish();
    stats.direct_atomics += segments;
    stats.direct_bytes += elements * size;
    offer_direct(target);
    return more;  // 0 after the last segment, or the source's error
}

int oscf_win::direct_swap(Guard &lk, Peer &p, const Swap &sw, const Where &w) {
    int rc = direct_ready(lk, p);
    if (rc) return rc;
    node_swap(p.node.shared(), w.am_offset, sw.swap, sw.type, sw.value, sw.compare, sw.result, sw.count);
    offer_direct(rank_of(p));
    ++stats.direct_atomics;
    stats.direct_bytes += sw.count * type_size(sw.type);
    return OSCF_OK;
}

uint64_t oscf_win::direct_word(Peer &p, uint64_t offset, bool cas, uint64_t operand, uint64_t compare) {
    ++stats.direct_words;
    uint64_t *word = p.node.word(offset);
    return cas ? word_compare_swap(word, compare, operand) : word_fetch_add(word, operand);
}

void oscf_win::direct_store_word(Peer &p, uint64_t offset, uint64_t value) {
    ++stats.direct_words;
    __atomic_store_n(p.node.word(offset), value, __ATOMIC_RELEASE);  // after our copies
}

// Target side: an accumulate this engine applies (an active message, a batch record,
// our own emulated update) to its window memory. With a node segment it must take the
// road on-node origins take to the same memory.
void oscf_win::apply_here(oscf_op op, oscf_type type, char *target, const char *origin, char *result,
                          size_t count) {
    const Peer &me = self();
    // A byte is written whole by any store, so byte REPLACE (packed and batched puts)
    // stays a copy.
    if (me.node.has_memory() && !(op == OSCF_OP_REPLACE && type_size(type) == 1 && !result)) {
        node_accumulate(me.node.shared(), static_cast<uint64_t>(target - me.node.mem()), op, type, origin,
                        result, count);
        return;
    }
    if (result) copy_elements(type, result, target, count);
    apply_reduction(op, type, target, origin, count);
}

void oscf_win::swap_here(oscf_swap s, oscf_type type, char *target, const void *value, const void *compare,
                         void *result, size_t count) {
    const Peer &me = self();
    if (me.node.has_memory()) {
        node_swap(me.node.shared(), static_cast<uint64_t>(target - me.node.mem()), s, type, value, compare,
                  result, count);
        return;
    }
    apply_swap(s, type, target, value, compare, result, count);
}
