/*
 * MPI requests for MPI_Rput, MPI_Rget, MPI_Raccumulate and MPI_Rget_accumulate. The
 * engine calls request_done once when the operation is complete; the user may free the
 * request before that (MPI_Request_free on an active request is legal), so the object
 * has two owners -- the user's handle and the engine's pending callback -- and is
 * released when both are gone.
 */
#include "osc_fabric.h"

#include "ompi/request/request.h"
#include "opal/sys/atomic.h"

typedef struct ompi_osc_fabric_request_t {
    ompi_request_t super;
    volatile int32_t owners; /* user handle + pending engine callback */
} ompi_osc_fabric_request_t;

static void request_construct(ompi_osc_fabric_request_t *req)
{
    req->super.req_type = OMPI_REQUEST_WIN;
    req->super.req_status._cancelled = 0;
    req->super.req_free = NULL;
    req->super.req_cancel = NULL;
}

static OBJ_CLASS_INSTANCE(ompi_osc_fabric_request_t, ompi_request_t, request_construct, NULL);

static void release_one(ompi_osc_fabric_request_t *req)
{
    if (0 == opal_atomic_add_fetch_32(&req->owners, -1)) {
        OMPI_REQUEST_FINI(&req->super);
        OBJ_RELEASE(req);
    }
}

static int request_free(ompi_request_t **request)
{
    ompi_osc_fabric_request_t *req = (ompi_osc_fabric_request_t *)*request;
    *request = MPI_REQUEST_NULL;
    release_one(req);
    return OMPI_SUCCESS;
}

/* RMA requests cannot be cancelled; MPI_Cancel then has no effect. */
static int request_cancel(ompi_request_t *request, int complete)
{
    (void)request;
    (void)complete;
    return OMPI_SUCCESS;
}

static void request_done(void *arg, int status)
{
    ompi_osc_fabric_request_t *req = arg;
    req->super.req_status.MPI_ERROR = ompi_osc_fabric_status(status);
    ompi_request_complete(&req->super, true);
    release_one(req);
}

int ompi_osc_fabric_request_start(struct ompi_win_t *win, int target, ompi_osc_fabric_op_fn op, void *op_arg,
                                  struct ompi_request_t **request)
{
    /* The engine refuses one outside a passive-target epoch (its epoch rules). */
    ompi_osc_fabric_request_t *req = OBJ_NEW(ompi_osc_fabric_request_t);
    if (NULL == req) return OMPI_ERR_OUT_OF_RESOURCE;
    OMPI_REQUEST_INIT(&req->super, false);
    req->super.req_state = OMPI_REQUEST_ACTIVE;
    req->super.req_free = request_free;
    req->super.req_cancel = request_cancel;
    req->super.req_status.MPI_ERROR = MPI_SUCCESS;
    /* A request that fails is reported through its window's error handler. */
    req->super.req_mpi_object.win = win;
    req->owners = 2;
    oscf_notify notify = {.fn = request_done, .arg = req};
    int rc = MPI_PROC_NULL == target ? OMPI_SUCCESS : op(op_arg, &notify);
    if (MPI_PROC_NULL == target && OMPI_SUCCESS == rc) request_done(req, OSCF_OK);
    if (OMPI_SUCCESS != rc) {
        /* The engine will not call back after an error: both references are ours. */
        req->owners = 1;
        release_one(req);
        return rc;
    }
    *request = &req->super;
    return OMPI_SUCCESS;
}
