/*
 * Active-target synchronization. Fence: the engine completes this origin's operations,
 * then a barrier on the window's communicator makes every origin's operations complete
 * before anyone leaves. Post/start/complete/wait: groups are translated to window ranks
 * and the engine runs the protocol (osc_fabric/engine/pscw.cpp) with no collective.
 */
#include "osc_fabric.h"

#include <stdlib.h>

#include "ompi/group/group.h"

int ompi_osc_fabric_assert_bits(int mpi_assert)
{
    int bits = 0;
    if (mpi_assert & MPI_MODE_NOCHECK) bits |= OSCF_MODE_NOCHECK;
    if (mpi_assert & MPI_MODE_NOSTORE) bits |= OSCF_MODE_NOSTORE;
    if (mpi_assert & MPI_MODE_NOPUT) bits |= OSCF_MODE_NOPUT;
    if (mpi_assert & MPI_MODE_NOPRECEDE) bits |= OSCF_MODE_NOPRECEDE;
    if (mpi_assert & MPI_MODE_NOSUCCEED) bits |= OSCF_MODE_NOSUCCEED;
    return bits;
}

int ompi_osc_fabric_fence(int mpi_assert, struct ompi_win_t *win)
{
    ompi_osc_fabric_module_t *module = (ompi_osc_fabric_module_t *)win->w_osc_module;
    int rc = ompi_osc_fabric_status(oscf_win_fence(module->win, ompi_osc_fabric_assert_bits(mpi_assert)));
    /* Fence inside another epoch is this process's misuse: return before the barrier,
     * as the other ranks' fences do not depend on it. */
    if (OMPI_ERR_RMA_SYNC == rc) return rc;
    /* With NOPRECEDE and NOSUCCEED (which the standard requires of all processes or
     * none) the fence neither ends nor starts an epoch: nothing to agree on. */
    if ((mpi_assert & MPI_MODE_NOPRECEDE) && (mpi_assert & MPI_MODE_NOSUCCEED)) return rc;
    int brc = module->comm->c_coll->coll_barrier(module->comm, module->comm->c_coll->coll_barrier_module);
    return OMPI_SUCCESS != rc ? rc : brc;
}

/* The ranks of an MPI group in the window's group, for the engine. */
static int window_ranks(struct ompi_group_t *group, struct ompi_win_t *win, int **out, int *n)
{
    const int size = ompi_group_size(group);
    *n = size;
    *out = NULL;
    if (0 == size) return OMPI_SUCCESS;
    int *in = calloc((size_t)size, sizeof(int));
    int *ranks = calloc((size_t)size, sizeof(int));
    if (NULL == in || NULL == ranks) {
        free(in);
        free(ranks);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0; i < size; i++) in[i] = i;
    int rc = ompi_group_translate_ranks(group, size, in, win->w_group, ranks);
    free(in);
    for (int i = 0; OMPI_SUCCESS == rc && i < size; i++) {
        if (MPI_UNDEFINED == ranks[i]) rc = OMPI_ERR_BAD_PARAM; /* not in the window's group */
    }
    if (OMPI_SUCCESS != rc) {
        free(ranks);
        return rc;
    }
    *out = ranks;
    return OMPI_SUCCESS;
}

typedef int (*group_call_fn)(oscf_win *, const int *, int, int);

static int with_group(struct ompi_group_t *group, int mpi_assert, struct ompi_win_t *win, group_call_fn call)
{
    int *ranks, n;
    int rc = window_ranks(group, win, &ranks, &n);
    if (OMPI_SUCCESS != rc) return rc;
    rc = ompi_osc_fabric_status(
        call(ompi_osc_fabric_win(win), ranks, n, ompi_osc_fabric_assert_bits(mpi_assert)));
    free(ranks);
    return rc;
}

int ompi_osc_fabric_start(struct ompi_group_t *group, int mpi_assert, struct ompi_win_t *win)
{
    return with_group(group, mpi_assert, win, oscf_win_start);
}

int ompi_osc_fabric_complete(struct ompi_win_t *win)
{
    return ompi_osc_fabric_status(oscf_win_complete(ompi_osc_fabric_win(win)));
}

int ompi_osc_fabric_post(struct ompi_group_t *group, int mpi_assert, struct ompi_win_t *win)
{
    return with_group(group, mpi_assert, win, oscf_win_post);
}

int ompi_osc_fabric_wait(struct ompi_win_t *win)
{
    return ompi_osc_fabric_status(oscf_win_wait(ompi_osc_fabric_win(win)));
}

int ompi_osc_fabric_test(struct ompi_win_t *win, int *flag)
{
    return ompi_osc_fabric_status(oscf_win_test(ompi_osc_fabric_win(win), flag));
}
