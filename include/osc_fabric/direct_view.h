/*
 * The engine's fast road to on-node peers, read by the MPI layer without a call into
 * the engine: what osc/sm gets from keeping a base pointer per peer, with the engine
 * still deciding when that pointer may be used.
 *
 * A window's view has one entry per rank. An entry is open while its epoch equals the
 * view's. The engine opens an entry (engine/direct_view.cpp) at the end of a call that
 * took the direct road to that peer, or flushed it, or locked it, when nothing else to
 * the peer is outstanding and the epoch allows access (a fast lock_all opens every
 * on-node peer's at once); a fast unlock closes its peer's entry, and every other
 * engine call on the window, or a fast unlock_all, closes all entries at once by
 * moving the view's epoch. So an open entry says: since
 * the engine last looked, only direct operations went to this peer, the epoch is the
 * one it checked, and puts, gets, flushes and accumulates of types the node updates
 * itself (not native fabric atomics) may skip the
 * engine. The view's quiet mark says the same of the whole window, for flush_all.
 * Anything the fast road does not cover (requests, ranges it cannot prove, other
 * types) takes the engine's road, which checks and reports as always.
 *
 * The view is used only when the engine is entered from one thread at a time and has
 * no progress thread (oscf_engine_config.calls_serialized): otherwise the engine never
 * opens an entry, and every call takes the engine's road under its lock.
 */
#ifndef OSC_FABRIC_DIRECT_VIEW_H
#define OSC_FABRIC_DIRECT_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osc_fabric/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oscf_direct_peer {
    uint64_t epoch;    /* open while equal to the view's */
    char *base;        /* the peer's window memory, mapped in this process */
    uint64_t size;     /* bytes of it */
    int64_t disp_unit; /* the peer's */
} oscf_direct_peer;

typedef struct oscf_direct_view {
    uint64_t epoch; /* never 0: closed entries hold 0 */
    /* Equal to epoch: in a passive-target epoch with nothing in flight to anyone, so
     * a flush of every target has nothing to wait for. */
    uint64_t quiet;
    oscf_direct_peer *peers;
    int npeers;
    /* Done on the fast road; oscf_win_get_stats adds them to direct_rma and the rest. */
    uint64_t rma, atomics, bytes;
    /* Fast flushes, locks and unlocks: one in OSCF_DIRECT_SYNC_CALLS_PER_ENGINE_CALL
     * still enters the engine, which drives progress now and then for a process that
     * polls through them (api.cpp, with_sync_call). */
    unsigned sync_calls;
    void *owner; /* the engine's window */
} oscf_direct_view;

#define OSCF_DIRECT_SYNC_CALLS_PER_ENGINE_CALL 16u

/* The window's view; it lives as long as the window. */
oscf_direct_view *oscf_win_direct_view(oscf_win *win);

static inline const oscf_direct_peer *oscf_direct_open(const oscf_direct_view *v, int target) {
    if ((unsigned)target >= (unsigned)v->npeers) return NULL;
    const oscf_direct_peer *p = &v->peers[target];
    return p->epoch == v->epoch ? p : NULL;
}

/* Whether this process maps target's window memory, its entry open or not: calls to it
 * may take the engine's direct road (oscf_win_accumulate_direct). */
static inline bool oscf_direct_mapped(const oscf_direct_view *v, int target) {
    return (unsigned)target < (unsigned)v->npeers && NULL != v->peers[target].base;
}

/* Where len bytes at disp (in the peer's units) plus offset bytes lie in our mapping,
 * or NULL when they are not all inside the peer's window (the engine reports that). */
static inline char *oscf_direct_at(const oscf_direct_peer *p, int64_t disp, int64_t offset, size_t len) {
    int64_t at;
    if (disp < 0 || offset < 0 || __builtin_mul_overflow(disp, p->disp_unit, &at) ||
        __builtin_add_overflow(at, offset, &at) || (uint64_t)at > p->size || len > p->size - (uint64_t)at)
        return NULL;
    return p->base + at;
}

/* A put (is_put) or get of len contiguous bytes: true when done. */
static inline bool oscf_direct_copy(oscf_direct_view *v, int target, int64_t disp, int64_t offset,
                                    void *origin, size_t len, bool is_put) {
    const oscf_direct_peer *p = oscf_direct_open(v, target);
    char *there = p ? oscf_direct_at(p, disp, offset, len) : NULL;
    if (NULL == there) return false;
    if (len >= OSCF_UNCACHED_COPY_BYTES)
        oscf_copy_bytes(is_put ? there : origin, is_put ? origin : there, len);
    else
        __builtin_memmove(is_put ? there : origin, is_put ? origin : there, len);
    v->rma++;
    v->bytes += len;
    return true;
}

/* MPI_Win_flush of one peer: direct operations are complete when they return, so a
 * fence orders their stores before whatever tells the target to look. True when done. */
static inline bool oscf_direct_flush(oscf_direct_view *v, int target) {
    if (NULL == oscf_direct_open(v, target) || 0 == ++v->sync_calls % OSCF_DIRECT_SYNC_CALLS_PER_ENGINE_CALL)
        return false;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return true;
}

/* MPI_Win_flush_all: the same for every target at once. */
static inline bool oscf_direct_flush_all(oscf_direct_view *v) {
    if (v->quiet != v->epoch || 0 == ++v->sync_calls % OSCF_DIRECT_SYNC_CALLS_PER_ENGINE_CALL) return false;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return true;
}

/* MPI_Win_lock of an on-node peer (the engine takes the lock here when its words are
 * free CPU atomics and nothing else is open) and MPI_Win_unlock of one whose entry is open:
 * 1 when done, 0 when the call must take the engine's road, and for unlock a negative
 * oscf_status when it was done but the release failed. */
int oscf_direct_lock(oscf_direct_view *v, int target, int exclusive, int assert_bits);
int oscf_direct_unlock(oscf_direct_view *v, int target);
/* The same for MPI_Win_lock_all (rank 0's gate a free CPU atomic, or NOCHECK) and
 * MPI_Win_unlock_all (nothing in flight anywhere: the quiet mark). */
int oscf_direct_lock_all(oscf_direct_view *v, int assert_bits);
int oscf_direct_unlock_all(oscf_direct_view *v);

/* count elements of type reduced with op into the peer's memory at disp plus offset
 * bytes (result, when not NULL, receives the old values): true when done. The caller
 * has checked what the MPI layer adds to the rules of (op, type). */
bool oscf_direct_accumulate(oscf_direct_view *v, int target, int64_t disp, int64_t offset, const void *origin,
                            void *result, size_t count, oscf_type type, oscf_op op);

/* MPI_Compare_and_swap of one element: true when done. */
bool oscf_direct_compare_and_swap(oscf_direct_view *v, int target, int64_t disp, const void *value,
                                  const void *compare, void *result, oscf_type type);

#ifdef __cplusplus
}
#endif

#endif
