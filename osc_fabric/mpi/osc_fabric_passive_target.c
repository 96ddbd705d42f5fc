/*
 * Passive-target synchronization: translation only. The lock protocol (lock words in
 * target memory taken with remote atomics) is in osc_fabric/engine/lock.cpp.
 */
#include "osc_fabric.h"

/* The engine's road, kept out of line: the fast road's caller then sets up nothing for
 * it (an on-node lock + unlock is a few dozen instructions, direct_view.h). */
static __attribute__((noinline)) int engine_lock(int target, bool exclusive, int bits, struct ompi_win_t *win)
{
    return ompi_osc_fabric_status(oscf_win_lock(ompi_osc_fabric_win(win), target, exclusive, bits));
}

static __attribute__((noinline)) int engine_unlock(int target, struct ompi_win_t *win)
{
    return ompi_osc_fabric_status(oscf_win_unlock(ompi_osc_fabric_win(win), target));
}

int ompi_osc_fabric_lock(int lock_type, int target, int mpi_assert, struct ompi_win_t *win)
{
    if (MPI_LOCK_EXCLUSIVE != lock_type && MPI_LOCK_SHARED != lock_type) return OMPI_ERR_BAD_PARAM;
    /* Of the assertions, only NOCHECK means anything to a lock. */
    const int bits = (mpi_assert & MPI_MODE_NOCHECK) ? OSCF_MODE_NOCHECK : 0;
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    if (NULL != direct && 1 == oscf_direct_lock(direct, target, MPI_LOCK_EXCLUSIVE == lock_type, bits))
        return OMPI_SUCCESS;
    return engine_lock(target, MPI_LOCK_EXCLUSIVE == lock_type, bits, win);
}

int ompi_osc_fabric_unlock(int target, struct ompi_win_t *win)
{
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    const int done = NULL == direct ? 0 : oscf_direct_unlock(direct, target);
    if (0 != done) return 1 == done ? OMPI_SUCCESS : ompi_osc_fabric_status(done);
    return engine_unlock(target, win);
}

static __attribute__((noinline)) int engine_lock_all(int bits, struct ompi_win_t *win)
{
    return ompi_osc_fabric_status(oscf_win_lock_all(ompi_osc_fabric_win(win), bits));
}

static __attribute__((noinline)) int engine_unlock_all(struct ompi_win_t *win)
{
    return ompi_osc_fabric_status(oscf_win_unlock_all(ompi_osc_fabric_win(win)));
}

int ompi_osc_fabric_lock_all(int mpi_assert, struct ompi_win_t *win)
{
    const int bits = ompi_osc_fabric_assert_bits(mpi_assert);
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    if (NULL != direct && 1 == oscf_direct_lock_all(direct, bits)) return OMPI_SUCCESS;
    return engine_lock_all(bits, win);
}

int ompi_osc_fabric_unlock_all(struct ompi_win_t *win)
{
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    const int done = NULL == direct ? 0 : oscf_direct_unlock_all(direct);
    if (0 != done) return 1 == done ? OMPI_SUCCESS : ompi_osc_fabric_status(done);
    return engine_unlock_all(win);
}

int ompi_osc_fabric_sync(struct ompi_win_t *win)
{
    return ompi_osc_fabric_status(oscf_win_sync(ompi_osc_fabric_win(win)));
}

int ompi_osc_fabric_flush(int target, struct ompi_win_t *win)
{
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    if (NULL != direct && oscf_direct_flush(direct, target)) return OMPI_SUCCESS;
    return ompi_osc_fabric_status(oscf_win_flush(ompi_osc_fabric_win(win), target));
}

int ompi_osc_fabric_flush_all(struct ompi_win_t *win)
{
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    if (NULL != direct && oscf_direct_flush_all(direct)) return OMPI_SUCCESS;
    return ompi_osc_fabric_status(oscf_win_flush(ompi_osc_fabric_win(win), -1));
}

int ompi_osc_fabric_flush_local(int target, struct ompi_win_t *win)
{
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    if (NULL != direct && oscf_direct_flush(direct, target)) return OMPI_SUCCESS;
    return ompi_osc_fabric_status(oscf_win_flush_local(ompi_osc_fabric_win(win), target));
}

int ompi_osc_fabric_flush_local_all(struct ompi_win_t *win)
{
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    if (NULL != direct && oscf_direct_flush_all(direct)) return OMPI_SUCCESS;
    return ompi_osc_fabric_status(oscf_win_flush_local(ompi_osc_fabric_win(win), -1));
}
