/*
 * Put and get: (buffer, count, datatype) on both sides become segments contiguous on
 * both sides (osc_fabric_datatype.c), handed to the engine as one operation.
 */
#include "osc_fabric.h"

#include "ompi/datatype/ompi_datatype.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

/* One put or get, translated: segments contiguous on both sides. */
typedef struct rma_args {
    oscf_win *win;
    bool is_put;
    int target;
    ptrdiff_t target_disp;
    oscf_segment *segs;
    size_t n, cap;
    oscf_segment inline_segs[4];
} rma_args;

static int add_segment(void *arg, char *at[], size_t len)
{
    rma_args *a = arg;
    int rc = ompi_osc_fabric_grow((void **)&a->segs, a->n, &a->cap, sizeof(*a->segs), a->inline_segs);
    if (OMPI_SUCCESS != rc) return rc;
    /* The target side was flattened from address 0: its "addresses" are offsets. */
    a->segs[a->n++] = (oscf_segment){.origin = at[0], .target_offset = (int64_t)(intptr_t)at[1], .len = len};
    return OMPI_SUCCESS;
}

static void release(rma_args *a)
{
    if (a->segs != a->inline_segs) free(a->segs);
}

/* one_block: both sides are one contiguous block each (move() asked already). */
static int prepare(rma_args *a, bool is_put, const void *origin_addr, int origin_count,
                   struct ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp, int target_count,
                   struct ompi_datatype_t *target_dt, struct ompi_win_t *win, bool one_block)
{
    a->win = ompi_osc_fabric_win(win);
    a->is_put = is_put;
    a->target = target;
    a->target_disp = target_disp;
    a->segs = a->inline_segs;
    a->n = 0;
    a->cap = sizeof(a->inline_segs) / sizeof(a->inline_segs[0]);
    /* Both sides one block of the same size (most calls): one segment, no convertor.
     * On-node peers reached directly are a memcpy away, so this walk was most of a put. */
    size_t osize = 0, tsize = 0;
    ompi_datatype_type_size(origin_dt, &osize);
    ompi_datatype_type_size(target_dt, &tsize);
    if (one_block && origin_count > 0 && target_count > 0 &&
        osize * (size_t)origin_count == tsize * (size_t)target_count) {
        ptrdiff_t olb = 0, tlb = 0, ext = 0;
        ompi_datatype_get_true_extent(origin_dt, &olb, &ext);
        ompi_datatype_get_true_extent(target_dt, &tlb, &ext);
        a->segs[0] = (oscf_segment){
            .origin = (char *)origin_addr + olb, .target_offset = tlb, .len = osize * (size_t)origin_count};
        a->n = 0 == a->segs[0].len ? 0 : 1;
        return OMPI_SUCCESS;
    }
    ompi_osc_fabric_pieces o, t;
    int rc = ompi_osc_fabric_pieces_of(origin_dt, origin_count, origin_addr, &o);
    if (OMPI_SUCCESS != rc) return rc;
    rc = ompi_osc_fabric_pieces_of(target_dt, target_count, NULL, &t);
    if (OMPI_SUCCESS == rc) {
        ompi_osc_fabric_pieces *sides[2] = {&o, &t};
        rc = ompi_osc_fabric_cut(sides, 2, 1, add_segment, a);
        ompi_osc_fabric_pieces_free(&t);
    }
    ompi_osc_fabric_pieces_free(&o);
    if (OMPI_SUCCESS != rc) release(a);
    return rc;
}

static int run(void *arg, const oscf_notify *notify)
{
    const rma_args *a = arg;
    int rc = a->is_put ? oscf_win_putv(a->win, a->target, a->segs, a->n, a->target_disp, notify)
                       : oscf_win_getv(a->win, a->target, a->segs, a->n, a->target_disp, notify);
    return ompi_osc_fabric_status(rc);
}

/* A derived-datatype put or get to an on-node peer whose window memory we map: one copy
 * between the two layouts (ompi_osc_fabric_copy_layout), instead of cutting them into
 * thousands of segments. */
typedef struct direct_copy {
    bool is_put;
    const void *origin;
    int origin_count, target_count;
    ompi_datatype_t *origin_dt, *target_dt;
    char *target; /* where the target datatype's displacement 0 lies in our mapping */
} direct_copy;

static int copy_now(void *arg, const oscf_notify *notify)
{
    const direct_copy *c = arg;
    int rc = c->is_put ? ompi_osc_fabric_copy_layout(c->origin, c->origin_count, c->origin_dt, c->target,
                                                     c->target_count, c->target_dt)
                       : ompi_osc_fabric_copy_layout(c->target, c->target_count, c->target_dt,
                                                     (void *)c->origin, c->origin_count, c->origin_dt);
    if (OMPI_SUCCESS == rc && NULL != notify) notify->fn(notify->arg, OSCF_OK); /* complete now */
    return rc;
}

/* Fills c and returns true when the engine reaches target directly and the call can be
 * one datatype copy; *rc holds an error from the engine's checks (epoch, range). */
static bool direct_copy_of(direct_copy *c, bool is_put, const void *origin_addr, int origin_count,
                           ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp, int target_count,
                           ompi_datatype_t *target_dt, struct ompi_win_t *win, int *rc)
{
    *rc = OMPI_SUCCESS;
    size_t osize = 0, tsize = 0;
    ompi_datatype_type_size(origin_dt, &osize);
    ompi_datatype_type_size(target_dt, &tsize);
    ptrdiff_t tlb = 0;
    size_t span = 0;
    /* Mismatched or empty calls take the general path, which reports or skips them. */
    if (MPI_PROC_NULL == target || origin_count <= 0 || 0 == tsize ||
        osize * (size_t)origin_count != tsize * (size_t)target_count ||
        !ompi_osc_fabric_span(target_dt, target_count, &tlb, &span))
        return false;
    void *where = NULL;
    *rc = ompi_osc_fabric_status(
        oscf_win_direct_span(ompi_osc_fabric_win(win), target, target_disp, tlb, span, is_put, &where));
    if (OMPI_SUCCESS != *rc || NULL == where) return OMPI_SUCCESS != *rc;
    *c = (direct_copy){.is_put = is_put,
                       .origin = origin_addr,
                       .origin_count = origin_count,
                       .target_count = target_count,
                       .origin_dt = origin_dt,
                       .target_dt = target_dt,
                       .target = (char *)where - tlb};
    return true;
}

/* A put or get of many small pieces to a peer over the network: the target's layout
 * as runs, the origin's bytes packed and unpacked by Open MPI's convertor, so a piece
 * costs a copy at each end and no engine call of its own (engine/packed_layout.cpp). */
typedef struct packed_args {
    oscf_win *win;
    bool is_put;
    int target;
    ptrdiff_t target_disp;
    ompi_osc_fabric_runs runs;
    const void *origin;
    int origin_count;
    ompi_datatype_t *origin_dt;
    int target_count; /* a streamed call's: its runs are walked as the engine cuts them */
    ompi_datatype_t *target_dt;
} packed_args;

static int run_packed(void *arg, const oscf_notify *notify)
{
    const packed_args *a = arg;
    oscf_packer pk;
    int rc = ompi_osc_fabric_packer(a->origin_dt, a->origin_count, a->origin, a->is_put, &pk);
    if (OMPI_SUCCESS != rc) return rc;
    rc = a->is_put
             ? oscf_win_put_packed(a->win, a->target, a->runs.v, a->runs.n, a->target_disp, &pk, notify)
             : oscf_win_get_packed(a->win, a->target, a->runs.v, a->runs.n, a->target_disp, &pk, notify);
    return ompi_osc_fabric_status(rc);
}

/* A large put's or get's target runs, walked a batch at a time as the engine cuts them
 * into chunks (oscf_win_put_streamed, oscf_win_get_streamed): none built before the
 * first chunk leaves, and no array of them all. */
static int run_streamed(void *arg, const oscf_notify *notify)
{
    const packed_args *a = arg;
    ompi_osc_fabric_walk w;
    oscf_run_source src;
    int rc = ompi_osc_fabric_walk_init(a->target_dt, a->target_count, &w, &src);
    if (OMPI_SUCCESS != rc) {
        opal_output_verbose(1, mca_osc_fabric_component.output,
                            "osc/fabric: %s %d: %d of the target datatype span more bytes than an "
                            "address holds",
                            a->is_put ? "put to" : "get from", a->target, a->target_count);
        return OMPI_ERR_RMA_RANGE;
    }
    oscf_packer pk;
    rc = ompi_osc_fabric_packer(a->origin_dt, a->origin_count, a->origin, a->is_put, &pk);
    if (OMPI_SUCCESS == rc)
        rc = ompi_osc_fabric_status(
            a->is_put ? oscf_win_put_streamed(a->win, a->target, &src, a->target_disp, &pk, notify)
                      : oscf_win_get_streamed(a->win, a->target, &src, a->target_disp, &pk, notify));
    ompi_osc_fabric_walk_fini(&w);
    return rc;
}

/* Fills a->runs and returns true when the call travels in the layout form. */
static bool packed_wanted(packed_args *a, const void *origin_addr, int origin_count,
                          ompi_datatype_t *origin_dt, int target_count, ompi_datatype_t *target_dt)
{
    if (!ompi_osc_fabric_layout_wanted(origin_dt, origin_count, target_dt, target_count, &a->runs))
        return false;
    a->origin = origin_addr;
    a->origin_count = origin_count;
    a->origin_dt = origin_dt;
    return true;
}

/* prepare, run (directly or as a request), release. */
static int move(bool is_put, const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                int target, ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt,
                struct ompi_win_t *win, struct ompi_request_t **request)
{
    rma_args a;
    if (MPI_PROC_NULL == target && NULL == request) return OMPI_SUCCESS;
    /* One block on each side is already one segment (prepare); anything else to a
     * direct peer is one datatype copy. */
    const bool one_block = ompi_datatype_is_contiguous_memory_layout(origin_dt, origin_count) &&
                           ompi_datatype_is_contiguous_memory_layout(target_dt, target_count);
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    if (!one_block) {
        direct_copy c;
        int rc;
        if (NULL != direct && direct_copy_of(&c, is_put, origin_addr, origin_count, origin_dt, target,
                                             target_disp, target_count, target_dt, win, &rc)) {
            if (OMPI_SUCCESS != rc) return rc;
            return NULL == request ? copy_now(&c, NULL)
                                   : ompi_osc_fabric_request_start(win, target, copy_now, &c, request);
        }
        packed_args p = {
            .win = ompi_osc_fabric_win(win), .is_put = is_put, .target = target, .target_disp = target_disp};
        if (MPI_PROC_NULL != target &&
            ompi_osc_fabric_stream_wanted(origin_dt, origin_count, target_dt, target_count)) {
            p.origin = origin_addr;
            p.origin_count = origin_count;
            p.origin_dt = origin_dt;
            p.target_count = target_count;
            p.target_dt = target_dt;
            return NULL == request ? run_streamed(&p, NULL)
                                   : ompi_osc_fabric_request_start(win, target, run_streamed, &p, request);
        }
        if (MPI_PROC_NULL != target &&
            packed_wanted(&p, origin_addr, origin_count, origin_dt, target_count, target_dt)) {
            rc = NULL == request ? run_packed(&p, NULL)
                                 : ompi_osc_fabric_request_start(win, target, run_packed, &p, request);
            ompi_osc_fabric_runs_free(&p.runs);
            return rc;
        }
    }
    int rc = prepare(&a, is_put, origin_addr, origin_count, origin_dt, target, target_disp, target_count,
                     target_dt, win, one_block);
    if (OMPI_SUCCESS != rc) return rc;
    /* One block to an on-node peer whose memory we map: the copy is ours, on the fast
     * road when the engine left it open, else after the engine checked the access. */
    if (1 == a.n && NULL == request && NULL != direct) {
        if (oscf_direct_copy(direct, target, target_disp, a.segs[0].target_offset, a.segs[0].origin,
                             a.segs[0].len, is_put))
            return OMPI_SUCCESS;
        void *where = NULL;
        rc = ompi_osc_fabric_status(oscf_win_direct_span(a.win, target, target_disp, a.segs[0].target_offset,
                                                         a.segs[0].len, is_put, &where));
        if (OMPI_SUCCESS != rc || NULL != where) {
            if (NULL != where) {
                oscf_copy_bytes(is_put ? where : a.segs[0].origin, is_put ? a.segs[0].origin : where,
                                a.segs[0].len);
            }
            return rc;
        }
    }
    rc = NULL == request ? run(&a, NULL) : ompi_osc_fabric_request_start(win, target, run, &a, request);
    release(&a);
    return rc;
}

int ompi_osc_fabric_put(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                        int target, ptrdiff_t target_disp, int target_count,
                        struct ompi_datatype_t *target_dt, struct ompi_win_t *win)
{
    return move(true, origin_addr, origin_count, origin_dt, target, target_disp, target_count, target_dt, win,
                NULL);
}

int ompi_osc_fabric_get(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt, int target,
                        ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt,
                        struct ompi_win_t *win)
{
    return move(false, origin_addr, origin_count, origin_dt, target, target_disp, target_count, target_dt,
                win, NULL);
}

int ompi_osc_fabric_rput(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                         int target, ptrdiff_t target_disp, int target_count,
                         struct ompi_datatype_t *target_dt, struct ompi_win_t *win,
                         struct ompi_request_t **request)
{
    return move(true, origin_addr, origin_count, origin_dt, target, target_disp, target_count, target_dt, win,
                request);
}

int ompi_osc_fabric_rget(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt, int target,
                         ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt,
                         struct ompi_win_t *win, struct ompi_request_t **request)
{
    return move(false, origin_addr, origin_count, origin_dt, target, target_disp, target_count, target_dt,
                win, request);
}
