/*
 * The table libmpix-fabric finds in this plugin (include/osc_fabric/mpix_entry.h): which
 * windows are ours, and the MPIX calls MPI has no function for (conditional swaps, and
 * any read-modify-write as a one-shot epoch), translated into engine calls. MPIX_Rmw in
 * an epoch the library makes an MPI_Get_accumulate, which reaches us the usual way.
 */
#include "osc_fabric.h"

#include "mpix_fabric.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/errhandler/errcode-internal.h"
#include "opal/util/output.h"
#include "osc_fabric/mpix_entry.h"

static int serves(MPI_Win win)
{
    return NULL != win && MPI_WIN_NULL != win && NULL != win->w_osc_module &&
           ompi_osc_fabric_free == win->w_osc_module->osc_free;
}

static int map_swap(int op, oscf_swap *out)
{
    switch (op) {
    case MPIX_RMW2_MASK_SWAP: *out = OSCF_SWAP_MASK; return MPI_SUCCESS;
    case MPIX_RMW2_COMP_SWAP_LT: *out = OSCF_SWAP_LT; return MPI_SUCCESS;
    case MPIX_RMW2_COMP_SWAP_LE: *out = OSCF_SWAP_LE; return MPI_SUCCESS;
    case MPIX_RMW2_COMP_SWAP_E: *out = OSCF_SWAP_EQ; return MPI_SUCCESS;
    case MPIX_RMW2_COMP_SWAP_GE: *out = OSCF_SWAP_GE; return MPI_SUCCESS;
    case MPIX_RMW2_COMP_SWAP_GT: *out = OSCF_SWAP_GT; return MPI_SUCCESS;
    case MPIX_RMW2_COMP_SWAP_NE: *out = OSCF_SWAP_NE; return MPI_SUCCESS;
    default: return MPI_ERR_OP;
    }
}

/* The engine's form of the call: for a swap, the value stored is operand2 and the
 * comperand or mask operand. */
static int translate(const osc_fabric_mpix_call *c, oscf_rmw *r)
{
    *r = (oscf_rmw){
        .is_swap = c->is_swap, .count = (size_t)c->count, .result = c->result, .target_disp = c->target_disp};
    /* The library passes predefined datatypes only. */
    int rc = ompi_osc_fabric_map_type(c->datatype, &r->type);
    if (MPI_SUCCESS != rc) return rc;
    if (!c->is_swap) {
        r->origin = c->operand;
        return ompi_osc_fabric_map_op(c->op, &r->op);
    }
    r->origin = c->operand2;
    r->compare = c->operand;
    return map_swap(c->swap_op, &r->swap);
}

typedef struct swap_args {
    oscf_win *win;
    int target;
    const oscf_rmw *r;
} swap_args;

static int run_swap(void *arg, const oscf_notify *notify)
{
    const swap_args *a = arg;
    const oscf_rmw *r = a->r;
    return ompi_osc_fabric_status(oscf_win_swap(a->win, a->target, r->origin, r->compare, r->result, r->count,
                                                r->type, r->swap, r->target_disp, 0, notify));
}

static int rmw(MPI_Win win, const osc_fabric_mpix_call *c, MPI_Request *request)
{
    oscf_rmw r;
    int rc = translate(c, &r);
    if (MPI_SUCCESS == rc && c->implicit_epoch)
        rc = ompi_osc_fabric_status(oscf_win_rmw_implicit(ompi_osc_fabric_win(win), c->target, &r,
                                                          c->nocheck ? OSCF_MODE_NOCHECK : 0));
    else if (MPI_SUCCESS == rc && c->is_swap) {
        swap_args arg = {ompi_osc_fabric_win(win), c->target, &r};
        rc = NULL == request ? run_swap(&arg, NULL)
                             : ompi_osc_fabric_request_start(win, c->target, run_swap, &arg, request);
    } else if (MPI_SUCCESS == rc) {
        rc = MPI_ERR_INTERN; /* MPIX_Rmw in an epoch is the library's MPI_Get_accumulate */
    }
    /* OMPI_ERR_* codes below zero become the MPI class a user sees. */
    return rc < 0 ? ompi_errcode_get_mpi_code(rc) : rc;
}

OMPI_DECLSPEC const osc_fabric_mpix_entry mca_osc_fabric_mpix_entry = {
    .version = OSC_FABRIC_MPIX_ENTRY_VERSION,
    .serves = serves,
    .rmw = rmw,
};
