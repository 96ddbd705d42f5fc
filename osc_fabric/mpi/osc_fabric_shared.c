/*
 * Node segments: one POSIX shared-memory segment per window and node, mapped by every
 * process of the window on that node. It holds each local process's window state (lock
 * words, PSCW counters: the engine's WindowState) and, for MPI_Win_allocate_shared and
 * MPI_Win_allocate, its window memory, so on-node peers reach them directly
 * (engine/node_link.h). Layout: the local processes' states, then their slices back to
 * back (MPI_Win_allocate_shared; each padded to a page with alloc_shared_noncontig=true)
 * or page-aligned (MPI_Win_allocate). The first local process creates the segment, the
 * others map it after it exists, and its name is removed once they all have it mapped,
 * so nothing is left behind even if a process dies later.
 */
#include "osc_fabric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/output.h"

#define SHARED_PAGE 4096

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* Lays the segment out over node (the window's processes on this node) and creates the
 * window in it. Collective over node. sizes/offsets/units: per node rank, for
 * MPI_Win_shared_query (may be NULL). */
static int create_in_segment(ompi_communicator_t *node, oscf_win_params *params, bool memory, bool noncontig,
                             bool page_slices, size_t *sizes, size_t *offsets, int *units, oscf_win **win,
                             void **base)
{
    const int n = ompi_comm_size(node), me = ompi_comm_rank(node);
    uint64_t mine[2] = {memory ? params->size : 0, (uint64_t)params->disp_unit};
    uint64_t *all = malloc(2 * sizeof(uint64_t) * (size_t)n);
    size_t *offs = NULL == offsets ? malloc(sizeof(size_t) * (size_t)n) : offsets;
    int rc = NULL == all || NULL == offs ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
    rc = ompi_osc_fabric_agree(node, rc);
    if (OMPI_SUCCESS == rc) {
        rc = node->c_coll->coll_allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, node,
                                          node->c_coll->coll_allgather_module);
    }
    if (OMPI_SUCCESS != rc) {
        free(all);
        if (offs != offsets) free(offs);
        return rc;
    }
    const size_t state = oscf_win_state_bytes(params->comm_size);
    size_t total = round_up(state * (size_t)n, SHARED_PAGE);
    for (int r = 0; r < n; r++) {
        if (page_slices) total = round_up(total, SHARED_PAGE);
        offs[r] = total;
        if (NULL != sizes) sizes[r] = all[2 * r];
        if (NULL != units) units[r] = (int)all[2 * r + 1];
        total += all[2 * r];
        if (noncontig) total = round_up(total, SHARED_PAGE);
    }
    free(all);

    /* The first local process names and creates the segment; the rest map it once it
     * exists. Its pid makes the name unique on the node, its rank in the window unique
     * in the window: peers on other nodes compare the name's hash (WinBlob), and their
     * leaders may have the same pid. */
    char name[96];
    static int serial = 0;
    if (0 == me)
        snprintf(name, sizeof name, "/osc_fabric_%d_%d_%d", (int)getpid(), serial++, params->comm_rank);
    rc = node->c_coll->coll_bcast(name, sizeof name, MPI_CHAR, 0, node, node->c_coll->coll_bcast_module);
    if (OMPI_SUCCESS != rc) {
        if (offs != offsets) free(offs);
        return rc;
    }
    params->shared_name = name;
    params->shared_total = total;
    params->shared_offset = offs[me];
    params->shared_state_offset = state * (size_t)me;
    params->shared_create = 0 == me;
    if (offs != offsets) free(offs);
    rc = 0 == me ? ompi_osc_fabric_status(oscf_win_create(mca_osc_fabric_component.engine, params, win, base))
                 : OMPI_SUCCESS;
    rc = ompi_osc_fabric_agree(node, rc);
    if (OMPI_SUCCESS == rc && 0 != me)
        rc = ompi_osc_fabric_status(oscf_win_create(mca_osc_fabric_component.engine, params, win, base));
    rc = ompi_osc_fabric_agree(node, rc);
    /* Mapped by all, or failed somewhere: either way the name goes. */
    if (0 == me) (void)oscf_shared_unlink(name);
    params->shared_name = NULL; /* name was ours: the engine copied what it needs */
    return rc;
}

int ompi_osc_fabric_shared_create(ompi_osc_fabric_module_t *module, oscf_win_params *params, void **base)
{
    const int n = params->comm_size;
    const bool noncontig = 0 == strcmp(module->info[OMPI_OSC_FABRIC_INFO_NONCONTIG], "true");
    module->shared_sizes = malloc(sizeof(size_t) * (size_t)n);
    module->shared_offsets = malloc(sizeof(size_t) * (size_t)n);
    module->shared_disp_units = malloc(sizeof(int) * (size_t)n);
    int rc =
        NULL == module->shared_sizes || NULL == module->shared_offsets || NULL == module->shared_disp_units
            ? OMPI_ERR_OUT_OF_RESOURCE
            : OMPI_SUCCESS;
    rc = ompi_osc_fabric_agree(module->comm, rc);
    if (OMPI_SUCCESS != rc) return rc;
    /* Every process is on this node (component_query): the window's communicator is
     * the node's, in the same order. */
    return create_in_segment(module->comm, params, true, noncontig, false, module->shared_sizes,
                             module->shared_offsets, module->shared_disp_units, &module->win, base);
}

int ompi_osc_fabric_node_create(ompi_osc_fabric_module_t *module, oscf_win_params *params, void **base)
{
    const bool memory = OSCF_FLAVOR_ALLOCATE == params->flavor;
    ompi_communicator_t *node = NULL;
    int rc = ompi_comm_split_type(module->comm, MPI_COMM_TYPE_SHARED, 0, NULL, &node);
    rc = ompi_osc_fabric_agree(module->comm, rc);
    if (OMPI_SUCCESS != rc) return rc;
    /* Alone on this node there is nobody to share with. */
    rc = 1 == ompi_comm_size(node)
             ? ompi_osc_fabric_status(
                   oscf_win_create(mca_osc_fabric_component.engine, params, &module->win, base))
             : create_in_segment(node, params, memory, false, true, NULL, NULL, NULL, &module->win, base);
    ompi_comm_free(&node);
    rc = ompi_osc_fabric_agree(module->comm, rc);
    if (OMPI_SUCCESS == rc) return rc;
    /* Some node has no segment (/dev/shm too small: the engine logged why): every
     * process makes the window again without one, on-node peers reached through
     * libfabric. */
    if (NULL != module->win) {
        (void)oscf_win_destroy(module->win);
        module->win = NULL;
    }
    params->shared_name = NULL;
    return ompi_osc_fabric_status(
        oscf_win_create(mca_osc_fabric_component.engine, params, &module->win, base));
}

/* MPI_Win_shared_query. On MPI_Win_allocate_shared windows, the slices laid out above;
 * on the other flavors (MPI-4.0 allows the query on any window) what the engine says this
 * process can load and store: its own memory, and an on-node peer's MPI_Win_allocate
 * memory in the node segment; size 0 and NULL for the rest. */
int ompi_osc_fabric_shared_query(struct ompi_win_t *win, int rank, size_t *size, int *disp_unit,
                                 void *baseptr)
{
    ompi_osc_fabric_module_t *module = (ompi_osc_fabric_module_t *)win->w_osc_module;
    const int n = ompi_comm_size(module->comm);
    if (NULL == module->shared_sizes) {
        if (MPI_PROC_NULL != rank)
            return ompi_osc_fabric_status(
                oscf_win_memory_of(module->win, rank, (void **)baseptr, size, disp_unit));
        /* MPI_PROC_NULL: the lowest rank whose memory this process can reach, if any. */
        for (int r = 0; r < n; r++) {
            int rc = oscf_win_memory_of(module->win, r, (void **)baseptr, size, disp_unit);
            if (OSCF_OK != rc) return ompi_osc_fabric_status(rc);
            if (0 != *size) break;
        }
        return OMPI_SUCCESS;
    }
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
    *(void **)baseptr = NULL == segment || 0 == *size ? NULL : segment + module->shared_offsets[rank];
    return OMPI_SUCCESS;
}
