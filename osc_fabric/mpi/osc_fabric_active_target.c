/*
 * Active-target synchronization. Fence: the engine completes this origin's operations,
 * then a barrier on the window's communicator makes every origin's operations complete
 * before anyone leaves. General active target (PSCW) comes with a later version.
 */
#include "osc_fabric.h"

#include "opal/util/output.h"

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
    ompi_osc_fabric_module_t *module = (ompi_osc_fabric_module_t *) win->w_osc_module;
    int rc = ompi_osc_fabric_status(oscf_win_fence(module->win, ompi_osc_fabric_assert_bits(mpi_assert)));
    /* A sync error is local misuse; leaving the barrier out would let the other ranks
     * continue too, so it is reported before any collective. */
    if (OMPI_ERR_RMA_SYNC == rc) return rc;
    int brc = module->comm->c_coll->coll_barrier(module->comm, module->comm->c_coll->coll_barrier_module);
    return OMPI_SUCCESS != rc ? rc : brc;
}

static int pscw_not_yet(void)
{
    opal_output_verbose(1, mca_osc_fabric_component.output,
                        "osc/fabric: post/start/complete/wait is not supported by this version");
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int ompi_osc_fabric_start(struct ompi_group_t *group, int mpi_assert, struct ompi_win_t *win)
{
    (void) group; (void) mpi_assert; (void) win;
    return pscw_not_yet();
}

int ompi_osc_fabric_complete(struct ompi_win_t *win)
{
    (void) win;
    return pscw_not_yet();
}

int ompi_osc_fabric_post(struct ompi_group_t *group, int mpi_assert, struct ompi_win_t *win)
{
    (void) group; (void) mpi_assert; (void) win;
    return pscw_not_yet();
}

int ompi_osc_fabric_wait(struct ompi_win_t *win)
{
    (void) win;
    return pscw_not_yet();
}

int ompi_osc_fabric_test(struct ompi_win_t *win, int *flag)
{
    (void) win;
    *flag = 0;
    return pscw_not_yet();
}
