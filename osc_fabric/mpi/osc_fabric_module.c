/*
 * The module function table, window teardown and the engine-status conversion.

 */
#include "osc_fabric.h"

#include <stdlib.h>

#include "opal/util/output.h"

/* The engine answers MPI_ERR_RMA_FLAVOR for windows that are not dynamic. */
static int fabric_attach(struct ompi_win_t *win, void *base, size_t size)
{
    return ompi_osc_fabric_status(oscf_win_attach(ompi_osc_fabric_win(win), base, size));
}

static int fabric_detach(struct ompi_win_t *win, const void *base)
{
    return ompi_osc_fabric_status(oscf_win_detach(ompi_osc_fabric_win(win), base));
}

const ompi_osc_base_module_t ompi_osc_fabric_module_template = {
    .osc_win_shared_query = ompi_osc_fabric_shared_query,
    .osc_win_attach = fabric_attach,
    .osc_win_detach = fabric_detach,
    .osc_free = ompi_osc_fabric_free,

    .osc_put = ompi_osc_fabric_put,
    .osc_get = ompi_osc_fabric_get,
    .osc_accumulate = ompi_osc_fabric_accumulate,
    .osc_compare_and_swap = ompi_osc_fabric_compare_and_swap,
    .osc_fetch_and_op = ompi_osc_fabric_fetch_and_op,
    .osc_get_accumulate = ompi_osc_fabric_get_accumulate,

    .osc_rput = ompi_osc_fabric_rput,
    .osc_rget = ompi_osc_fabric_rget,
    .osc_raccumulate = ompi_osc_fabric_raccumulate,
    .osc_rget_accumulate = ompi_osc_fabric_rget_accumulate,

    .osc_fence = ompi_osc_fabric_fence,
    .osc_start = ompi_osc_fabric_start,
    .osc_complete = ompi_osc_fabric_complete,
    .osc_post = ompi_osc_fabric_post,
    .osc_wait = ompi_osc_fabric_wait,
    .osc_test = ompi_osc_fabric_test,

    .osc_lock = ompi_osc_fabric_lock,
    .osc_unlock = ompi_osc_fabric_unlock,
    .osc_lock_all = ompi_osc_fabric_lock_all,
    .osc_unlock_all = ompi_osc_fabric_unlock_all,

    .osc_sync = ompi_osc_fabric_sync,
    .osc_flush = ompi_osc_fabric_flush,
    .osc_flush_all = ompi_osc_fabric_flush_all,
    .osc_flush_local = ompi_osc_fabric_flush_local,
    .osc_flush_local_all = ompi_osc_fabric_flush_local_all,
};

int ompi_osc_fabric_status(int oscf_rc)
{
    switch (oscf_rc) {
    case OSCF_OK: return OMPI_SUCCESS;
    case OSCF_ERR_RMA_SYNC: return OMPI_ERR_RMA_SYNC;
    case OSCF_ERR_RMA_RANGE: return OMPI_ERR_RMA_RANGE;
    case OSCF_ERR_RMA_CONFLICT: return OMPI_ERR_RMA_CONFLICT;
    case OSCF_ERR_RMA_FLAVOR: return OMPI_ERR_RMA_FLAVOR;
    case OSCF_ERR_ARG: return OMPI_ERR_BAD_PARAM;
    case OSCF_ERR_NO_MEM: return OMPI_ERR_OUT_OF_RESOURCE;
    case OSCF_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case OSCF_ERR_NO_PROVIDER: return OMPI_ERR_NOT_AVAILABLE;
    case OSCF_ERR_OP: return MPI_ERR_OP; /* MPI classes pass through unchanged */
    case OSCF_ERR_INFO: return MPI_ERR_INFO_VALUE;
    case OSCF_ERR_RMA_ATTACH: return OMPI_ERR_RMA_ATTACH;
    case OSCF_ERR_RANK: return MPI_ERR_RANK;
    case OSCF_ERR_TYPE: return MPI_ERR_TYPE;
    case OSCF_ERR_FABRIC:
    case OSCF_ERR_INTERNAL:
    default: return OMPI_ERROR;
    }
}

int ompi_osc_fabric_agree(ompi_communicator_t *comm, int local_rc)
{
    int global = local_rc;
    int rc = comm->c_coll->coll_allreduce(&local_rc, &global, 1, MPI_INT, MPI_MIN, comm,
                                          comm->c_coll->coll_allreduce_module);
    return OMPI_SUCCESS != rc ? rc : global;
}

void ompi_osc_fabric_module_destroy(ompi_osc_fabric_module_t *module)
{
    if (NULL != module->win) (void)oscf_win_destroy(module->win);
    if (NULL != module->comm) ompi_comm_free(&module->comm);
    free(module->shared_sizes);
    free(module->shared_offsets);
    free(module->shared_disp_units);
    free(module);
}

int ompi_osc_fabric_free(struct ompi_win_t *win)
{
    ompi_osc_fabric_module_t *module = (ompi_osc_fabric_module_t *)win->w_osc_module;
    if (NULL == module) return OMPI_SUCCESS;
    /* Refuse while a passive epoch is open (the caller may fix it and free again);
     * otherwise complete our operations, then wait until nobody accesses us. */
    int rc = ompi_osc_fabric_status(oscf_win_free_begin(module->win));
    if (OMPI_ERR_RMA_SYNC == rc) return rc;
    int brc = module->comm->c_coll->coll_barrier(module->comm, module->comm->c_coll->coll_barrier_module);
    win->w_osc_module = NULL;
    ompi_osc_fabric_module_destroy(module);
    ompi_osc_fabric_window_removed();
    return OMPI_SUCCESS != rc ? rc : brc;
}
