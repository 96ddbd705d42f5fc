/*
 * MPI_Win_allocate_shared and MPI_Win_shared_query. The ranks' slices are laid out
 * back to back in one segment (each padded to a page with alloc_shared_noncontig=true);
 * rank 0 creates the segment, the others map it after it exists, and its name is
 * removed once everyone has it mapped. The engine owns the mapping and exposes each
 * slice to RMA like any window memory.
 */
#include "osc_fabric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/output.h"

#define SHARED_PAGE 4096

int ompi_osc_fabric_shared_create(ompi_osc_fabric_module_t *module, oscf_win_params *params,
                                  void **base)
{
    ompi_communicator_t *comm = module->comm;
    const int n = params->comm_size, me = params->comm_rank;
    const bool noncontig = 0 == strcmp(module->info[OMPI_OSC_FABRIC_INFO_NONCONTIG], "true");
    uint64_t mine[2] = {params->size, (uint64_t) params->disp_unit};
    uint64_t *all = malloc(2 * sizeof(uint64_t) * (size_t) n);
    module->shared_sizes = malloc(sizeof(size_t) * (size_t) n);
    module->shared_offsets = malloc(sizeof(size_t) * (size_t) n);
    module->shared_disp_units = malloc(sizeof(int) * (size_t) n);
    int rc = NULL == all || NULL == module->shared_sizes || NULL == module->shared_offsets ||
                     NULL == module->shared_disp_units
                 ? OMPI_ERR_OUT_OF_RESOURCE
                 : OMPI_SUCCESS;
    rc = ompi_osc_fabric_agree(comm, rc);
    if (OMPI_SUCCESS == rc) {
        rc = comm->c_coll->coll_allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, comm,
                                          comm->c_coll->coll_allgather_module);
    }
    if (OMPI_SUCCESS != rc) {
        free(all);
        return rc;
    }
    size_t total = 0;
    for (int r = 0; r < n; r++) {
        module->shared_offsets[r] = total;
        module->shared_sizes[r] = all[2 * r];
        module->shared_disp_units[r] = (int) all[2 * r + 1];
        total += all[2 * r];
        if (noncontig) total = (total + SHARED_PAGE - 1) / SHARED_PAGE * SHARED_PAGE;
    }
    free(all);

    /* Rank 0 names and creates the segment; the rest map it once it exists. */
    char name[64];
    static int serial = 0;
    if (0 == me) snprintf(name, sizeof name, "/osc_fabric_%d_%d", (int) getpid(), serial++);
    rc = comm->c_coll->coll_bcast(name, sizeof name, MPI_CHAR, 0, comm, comm->c_coll->coll_bcast_module);
    if (OMPI_SUCCESS != rc) return rc;
    params->shared_name = name;
    params->shared_total = total;
    params->shared_offset = module->shared_offsets[me];
    params->shared_create = 0 == me;
    rc = 0 == me ? ompi_osc_fabric_status(oscf_win_create(mca_osc_fabric_component.engine, params,
                                                         &module->win, base))
                 : OMPI_SUCCESS;
    rc = ompi_osc_fabric_agree(comm, rc);
    if (OMPI_SUCCESS != rc) return rc;
    if (0 != me) {
        rc = ompi_osc_fabric_status(oscf_win_create(mca_osc_fabric_component.engine, params,
                                                    &module->win, base));
    }
    rc = ompi_osc_fabric_agree(comm, rc);
    if (0 == me && total > 0) (void) oscf_shared_unlink(name);
    return rc;
}

int ompi_osc_fabric_shared_query(struct ompi_win_t *win, int rank, size_t *size, int *disp_unit,
                                 void *baseptr)
{
    ompi_osc_fabric_module_t *module = (ompi_osc_fabric_module_t *) win->w_osc_module;
    if (NULL == module->shared_sizes) return OMPI_ERR_RMA_SHARED; /* not a shared window */
    const int n = ompi_comm_size(module->comm);
    if (MPI_PROC_NULL == rank) {
        /* The standard's answer: the first rank that has memory. */
        rank = 0;
        while (rank < n - 1 && 0 == module->shared_sizes[rank]) rank++;
    }
    if (rank < 0 || rank >= n) return OMPI_ERR_BAD_PARAM;
    char *segment = oscf_win_shared_segment(module->win);
    *size = module->shared_sizes[rank];
    *disp_unit = module->shared_disp_units[rank];
    /* No memory, no address (as MPICH answers): a pointer into a neighbour's slice
     * would invite accesses to memory this rank does not own. */
    *(void **) baseptr = NULL == segment || 0 == *size ? NULL : segment + module->shared_offsets[rank];
    return OMPI_SUCCESS;
}
