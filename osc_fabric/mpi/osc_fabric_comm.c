/*
 * Data movement: turns (buffer, count, datatype) pairs into byte ranges for the engine.
 * Contiguous layouts only for now; derived non-contiguous datatypes are answered with
 * MPI_ERR_UNSUPPORTED_OPERATION and a message.
 */
#include "osc_fabric.h"

#include "ompi/datatype/ompi_datatype.h"
#include "opal/util/output.h"

/* A contiguous (count, datatype) as a byte range: its size and where it starts
 * relative to the buffer address (the true lower bound). */
typedef struct byte_range {
    size_t len;
    ptrdiff_t start;
} byte_range;

static int contiguous_range(struct ompi_datatype_t *dt, int count, byte_range *out)
{
    size_t type_size = 0;
    ptrdiff_t true_lb = 0, true_extent = 0;
    if (count < 0) return OMPI_ERR_BAD_PARAM;
    ompi_datatype_type_size(dt, &type_size);
    out->len = type_size * (size_t) count;
    out->start = 0;
    if (0 == out->len) return OMPI_SUCCESS;
    if (!ompi_datatype_is_contiguous_memory_layout(dt, count)) {
        opal_output_verbose(1, mca_osc_fabric_component.output,
                            "osc/fabric: non-contiguous datatype %s is not supported yet", dt->name);
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    ompi_datatype_get_true_extent(dt, &true_lb, &true_extent);
    out->start = true_lb;
    return OMPI_SUCCESS;
}

/* Origin and target must describe the same amount of data. */
static int matching_ranges(struct ompi_datatype_t *odt, int ocount, struct ompi_datatype_t *tdt,
                           int tcount, byte_range *o, byte_range *t)
{
    int rc = contiguous_range(odt, ocount, o);
    if (OMPI_SUCCESS == rc) rc = contiguous_range(tdt, tcount, t);
    if (OMPI_SUCCESS != rc) return rc;
    if (o->len != t->len) {
        opal_output_verbose(1, mca_osc_fabric_component.output,
                            "osc/fabric: origin describes %zu bytes but target %zu", o->len, t->len);
        return OMPI_ERR_BAD_PARAM;
    }
    return OMPI_SUCCESS;
}

/* One put or get, translated: what the engine needs, whether or not it is a request. */
typedef struct rma_args {
    oscf_win *win;
    bool is_put;
    int target;
    char *origin;
    size_t len;
    ptrdiff_t target_disp;
    ptrdiff_t target_start;
} rma_args;

static int prepare(rma_args *a, bool is_put, const void *origin_addr, int origin_count,
                   struct ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp,
                   int target_count, struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    byte_range o, t;
    int rc = matching_ranges(origin_dt, origin_count, target_dt, target_count, &o, &t);
    if (OMPI_SUCCESS != rc) return rc;
    *a = (rma_args){
        .win = ompi_osc_fabric_win(win),
        .is_put = is_put,
        .target = target,
        .origin = (char *) origin_addr + o.start,
        .len = o.len,
        .target_disp = target_disp,
        .target_start = t.start,
    };
    return OMPI_SUCCESS;
}

static int run(void *arg, const oscf_notify *notify)
{
    const rma_args *a = arg;
    int rc = a->is_put ? oscf_win_put(a->win, a->target, a->origin, a->len, a->target_disp,
                                      a->target_start, notify)
                       : oscf_win_get(a->win, a->target, a->origin, a->len, a->target_disp,
                                      a->target_start, notify);
    return ompi_osc_fabric_status(rc);
}

int ompi_osc_fabric_put(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                        int target, ptrdiff_t target_disp, int target_count,
                        struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    rma_args a;
    if (MPI_PROC_NULL == target) return OMPI_SUCCESS;
    int rc = prepare(&a, true, origin_addr, origin_count, origin_dt, target, target_disp,
                     target_count, target_dt, win);
    return OMPI_SUCCESS != rc ? rc : run(&a, NULL);
}

int ompi_osc_fabric_get(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                        int target, ptrdiff_t target_disp, int target_count,
                        struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    rma_args a;
    if (MPI_PROC_NULL == target) return OMPI_SUCCESS;
    int rc = prepare(&a, false, origin_addr, origin_count, origin_dt, target, target_disp,
                     target_count, target_dt, win);
    return OMPI_SUCCESS != rc ? rc : run(&a, NULL);
}

int ompi_osc_fabric_rput(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                         int target, ptrdiff_t target_disp, int target_count,
                         struct ompi_datatype_t *target_dt, struct ompi_win_t *win,
                         struct ompi_request_t **request)
{
    rma_args a;
    int rc = prepare(&a, true, origin_addr, origin_count, origin_dt, target, target_disp,
                     target_count, target_dt, win);
    return OMPI_SUCCESS != rc ? rc : ompi_osc_fabric_request_start(win, target, run, &a, request);
}

int ompi_osc_fabric_rget(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                         int target, ptrdiff_t target_disp, int target_count,
                         struct ompi_datatype_t *target_dt, struct ompi_win_t *win,
                         struct ompi_request_t **request)
{
    rma_args a;
    int rc = prepare(&a, false, origin_addr, origin_count, origin_dt, target, target_disp,
                     target_count, target_dt, win);
    return OMPI_SUCCESS != rc ? rc : ompi_osc_fabric_request_start(win, target, run, &a, request);
}
