/*
 * Datatypes to byte ranges. A (buffer, count, datatype) becomes a list of contiguous
 * pieces with Open MPI's convertor (opal_convertor_raw); the pieces of the origin, the
 * target (and the result of a get_accumulate) are then cut at each other's boundaries
 * so that each engine segment is contiguous on every side. Type signatures that
 * describe different amounts of data are MPI_ERR_ARG, never a partial transfer.
 * The layout form's runs (ompi_osc_fabric_runs_of) come from the datatype's
 * description instead, which holds a vector as one element.
 */
#include "osc_fabric.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ompi/datatype/ompi_datatype.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/datatype/opal_datatype_internal.h"
#include "opal/util/output.h"

/* ompi_osc_fabric_copy_layout's bounce buffer: as large as ompi_datatype_sndrcv's. */
#define COPY_BOUNCE (64 * 1024)
/* Data bytes of value/index pairs a pair packer moves at a time. */
#define PAIR_BATCH (16 * 1024)

void ompi_osc_fabric_pieces_free(ompi_osc_fabric_pieces *p)
{
    if (p->v != p->inline_v) free(p->v);
    p->v = p->inline_v;
    p->n = 0;
}

int ompi_osc_fabric_grow(void **items, size_t n, size_t *cap, size_t elem_size, const void *inline_items)
{
    if (n < *cap) return OMPI_SUCCESS;
    void *grown = malloc(2 * *cap * elem_size);
    if (NULL == grown) return OMPI_ERR_OUT_OF_RESOURCE;
    memcpy(grown, *items, n * elem_size);
    if (*items != inline_items) free(*items);
    *items = grown;
    *cap *= 2;
    return OMPI_SUCCESS;
}

static int push(ompi_osc_fabric_pieces *p, char *base, size_t len)
{
    if (0 == len) return OMPI_SUCCESS;
    /* Merge with the previous piece when they touch: fewer, larger fabric operations. */
    if (p->n && (char *)p->v[p->n - 1].iov_base + p->v[p->n - 1].iov_len == base) {
        p->v[p->n - 1].iov_len += len;
        return OMPI_SUCCESS;
    }
    int rc = ompi_osc_fabric_grow((void **)&p->v, p->n, &p->cap, sizeof(*p->v), p->inline_v);
    if (OMPI_SUCCESS != rc) return rc;
    p->v[p->n].iov_base = base;
    p->v[p->n].iov_len = len;
    p->n++;
    return OMPI_SUCCESS;
}

int ompi_osc_fabric_pieces_one(void *base, size_t len, ompi_osc_fabric_pieces *out)
{
    out->v = out->inline_v;
    out->n = 0;
    out->cap = sizeof(out->inline_v) / sizeof(out->inline_v[0]);
    out->bytes = len;
    return push(out, base, len);
}

bool ompi_osc_fabric_span(ompi_datatype_t *dt, int count, ptrdiff_t *lo, size_t *len)
{
    ptrdiff_t lb = 0, extent = 0, tlb = 0, textent = 0;
    ompi_datatype_get_extent(dt, &lb, &extent);
    ompi_datatype_get_true_extent(dt, &tlb, &textent);
    if (count <= 0 || extent < 0 || textent < 0) return false;
    *lo = tlb;
    *len = (size_t)(count - 1) * (size_t)extent + (size_t)textent;
    return true;
}

static void stream_clear(ompi_osc_fabric_stream *s)
{
    OBJ_CONSTRUCT(&s->conv, opal_convertor_t);
    s->n = s->i = 0;
    s->done = 0;
    s->at = NULL;
    s->left = 0;
    s->chunk = NULL;
    s->chunk_len = s->unpacked = 0;
}

int ompi_osc_fabric_stream_init(ompi_osc_fabric_stream *s, ompi_datatype_t *dt, int count, const void *base)
{
    stream_clear(s);
    return opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &dt->super, (size_t)count, base,
                                                    0, &s->conv);
}

int ompi_osc_fabric_stream_init_packed(ompi_osc_fabric_stream *s, ompi_datatype_t *dt, int count,
                                       const void *base, size_t chunk_len)
{
    stream_clear(s);
    size_t size = 0;
    ompi_datatype_type_size(dt, &size);
    s->unpacked = size * (size_t)count;
    char *chunk = malloc(chunk_len);
    if (NULL == chunk) return OMPI_ERR_OUT_OF_RESOURCE;
    int rc = ompi_osc_fabric_packer(dt, count, base, true, &s->packer);
    if (OMPI_SUCCESS != rc) {
        free(chunk);
        return rc;
    }
    s->chunk = chunk; /* from here on fini releases the packer */
    s->chunk_len = chunk_len;
    return OPAL_SUCCESS;
}

void ompi_osc_fabric_stream_fini(ompi_osc_fabric_stream *s)
{
    if (NULL != s->chunk) s->packer.release(s->packer.arg);
    free(s->chunk);
    s->chunk = NULL;
    OBJ_DESTRUCT(&s->conv);
}

/* The next chunk of a packed stream, by the same packer as the layout forms'. */
static int refill_packed(ompi_osc_fabric_stream *s)
{
    const size_t n = s->unpacked < s->chunk_len ? s->unpacked : s->chunk_len;
    if (0 == n) return 0;
    if (OSCF_OK != s->packer.pack(s->packer.arg, s->chunk, n)) return OMPI_ERROR;
    s->unpacked -= n;
    s->at = s->chunk;
    s->left = n;
    return 1;
}

int ompi_osc_fabric_stream_refill(ompi_osc_fabric_stream *s)
{
    if (NULL != s->chunk) return refill_packed(s);
    while (0 == s->left) {
        if (s->i == s->n) {
            if (s->done) return 0;
            uint32_t n = sizeof(s->iov) / sizeof(s->iov[0]);
            size_t max_data = 0;
            int done = opal_convertor_raw(&s->conv, s->iov, &n, &max_data);
            if (done < 0 || (0 == n && 0 == done)) return OMPI_ERROR; /* no piece and not finished */
            s->done = done;
            s->n = n;
            s->i = 0;
            continue;
        }
        s->at = s->iov[s->i].iov_base;
        s->left = s->iov[s->i++].iov_len;
        /* Pieces that touch are one: fewer, larger segments. */
        while (s->i < s->n && s->at + s->left == (char *)s->iov[s->i].iov_base)
            s->left += s->iov[s->i++].iov_len;
    }
    return 1;
}

/* Calls piece(arg, base, len) for each contiguous piece of (dt, count) at base, in
 * order, until it returns something other than OMPI_SUCCESS; a positive value stops
 * the walk without an error. */
typedef int (*piece_fn)(void *arg, char *base, size_t len);
static int each_raw_piece(ompi_datatype_t *dt, int count, const void *base, piece_fn piece, void *arg)
{
    ompi_osc_fabric_stream s;
    int rc = ompi_osc_fabric_stream_init(&s, dt, count, base);
    int more = 0;
    while (OMPI_SUCCESS == rc && (more = ompi_osc_fabric_stream_fill(&s)) > 0) {
        rc = piece(arg, s.at, s.left);
        s.left = 0;
    }
    ompi_osc_fabric_stream_fini(&s);
    if (more < 0) return more;
    return rc > 0 ? OMPI_SUCCESS : rc;
}

static int push_piece(void *arg, char *base, size_t len)
{
    return push(arg, base, len);
}

int ompi_osc_fabric_pieces_of(ompi_datatype_t *dt, int count, const void *base, ompi_osc_fabric_pieces *out)
{
    if (count < 0) return OMPI_ERR_BAD_PARAM;
    size_t type_size = 0;
    ompi_datatype_type_size(dt, &type_size);
    ptrdiff_t lb = 0, extent = 0;
    ompi_datatype_get_true_extent(dt, &lb, &extent);
    if (0 == type_size * (size_t)count || ompi_datatype_is_contiguous_memory_layout(dt, count)) {
        return ompi_osc_fabric_pieces_one((char *)base + lb, type_size * (size_t)count, out);
    }
    ompi_osc_fabric_pieces_one(NULL, 0, out);
    out->bytes = type_size * (size_t)count;
    int rc = each_raw_piece(dt, count, base, push_piece, out);
    if (OMPI_SUCCESS != rc) ompi_osc_fabric_pieces_free(out);
    return rc;
}

/* A large layout's runs fill a long array, and fresh pages cost a page fault each: on
 * this project's VM more than folding the pieces into runs (perf/README.md, "Measurements
 * behind design choices"). So the blocks of the last large layouts are kept for the next
 * ones, two process-wide (a pair type's structs are rebuilt beside its runs), each taken
 * and given back with an atomic exchange (calls may come from several threads; one that
 * finds none takes a new block). */
struct ompi_osc_fabric_runs_block {
    size_t cap;
    oscf_run v[];
};
#define RUNS_KEPT 2
static struct ompi_osc_fabric_runs_block *_Atomic kept_runs[RUNS_KEPT];
/* Blocks above this many bytes go back to the system: memory a process keeps for good. */
#define RUNS_KEEP_MAX ((size_t)16 << 20)

/* A block of at least cap runs. From RUNS_HUGE_MIN bytes it is whole huge pages, and
 * asks for them: a layout larger than any before fills fresh memory, and one fault per
 * 2 MiB costs far less than one per 4 KiB page (perf/README.md, "Measurements behind
 * design choices"). Freed by free(). */
#define RUNS_HUGE_PAGE ((size_t)2 << 20)
#define RUNS_HUGE_MIN ((size_t)256 << 10)
static struct ompi_osc_fabric_runs_block *runs_block_new(size_t cap)
{
    const size_t head = sizeof(struct ompi_osc_fabric_runs_block);
    size_t bytes = head + cap * sizeof(oscf_run);
    void *b = NULL;
    if (bytes < RUNS_HUGE_MIN) {
        b = malloc(bytes);
    } else {
        bytes = (bytes + RUNS_HUGE_PAGE - 1) & ~(RUNS_HUGE_PAGE - 1);
        cap = (bytes - head) / sizeof(oscf_run);
        if (0 == posix_memalign(&b, RUNS_HUGE_PAGE, bytes))
            (void)madvise(b, bytes, MADV_HUGEPAGE); /* advice only: refused, the pages stay small */
        else
            b = NULL;
    }
    if (NULL != b) ((struct ompi_osc_fabric_runs_block *)b)->cap = cap;
    return b;
}

static int runs_grow(ompi_osc_fabric_runs *r)
{
    if (r->n < r->cap) return OMPI_SUCCESS;
    struct ompi_osc_fabric_runs_block *b = NULL;
    for (int i = 0; NULL == b && i < RUNS_KEPT; i++) b = atomic_exchange(&kept_runs[i], NULL);
    if (NULL == b || b->cap < 2 * r->cap) {
        free(b);
        b = runs_block_new(2 * r->cap);
        if (NULL == b) return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(b->v, r->v, r->n * sizeof(oscf_run));
    free(r->block);
    r->block = b;
    r->v = b->v;
    r->cap = b->cap;
    return OMPI_SUCCESS;
}

/* Adds count pieces of len bytes, stride apart from at, to the runs: they grow the last
 * piece when they are one piece that touches it (only while that run has one piece),
 * join the last run when they go on at its stride, or start a run. */
static int add_run(ompi_osc_fabric_runs *r, int64_t at, int64_t stride, size_t len, size_t count)
{
    if (0 == len || 0 == count) return OMPI_SUCCESS;
    if (count > 1 && stride == (int64_t)len) { /* pieces that touch are one */
        len *= count;
        count = 1;
    }
    r->bytes += len * count;
    if (r->n) {
        oscf_run *last = &r->v[r->n - 1];
        if (1 == count && 1 == last->count && last->offset + (int64_t)last->len == at) {
            last->len += len;
            return OMPI_SUCCESS;
        }
        if (last->len == len) {
            const bool one = 1 == last->count;
            if ((one && (1 == count || stride == at - last->offset)) ||
                (!one && last->offset + last->stride * (int64_t)last->count == at &&
                 (1 == count || stride == last->stride))) {
                if (one) last->stride = at - last->offset;
                last->count += count;
                r->pieces += count;
                return OMPI_SUCCESS;
            }
        }
    }
    int rc = runs_grow(r);
    if (OMPI_SUCCESS != rc) return rc;
    r->v[r->n++] = (oscf_run){.offset = at, .stride = count > 1 ? stride : 0, .len = len, .count = count};
    r->pieces += count;
    return OMPI_SUCCESS;
}

/* No runs yet, in the inline storage. */
static void runs_init(ompi_osc_fabric_runs *r)
{
    *r = (ompi_osc_fabric_runs){.cap = sizeof(r->inline_v) / sizeof(r->inline_v[0])};
    r->v = r->inline_v;
}

/* The bytes both sides of a call move; 0 when they differ or there are none: mismatched
 * or empty calls take the general path, which reports or skips them. */
static size_t matched_bytes(ompi_datatype_t *origin_dt, int origin_count, ompi_datatype_t *target_dt,
                            int target_count)
{
    size_t osize = 0, tsize = 0;
    ompi_datatype_type_size(origin_dt, &osize);
    ompi_datatype_type_size(target_dt, &tsize);
    const size_t bytes = osize * (size_t)origin_count;
    if (origin_count <= 0 || target_count <= 0 || bytes != tsize * (size_t)target_count) return 0;
    return bytes;
}

static int walk_push(ompi_osc_fabric_walk *w, ompi_osc_fabric_walk_frame f)
{
    if (w->depth == w->cap) {
        const bool inline_frames = w->frames == w->inline_frames;
        ompi_osc_fabric_walk_frame *grown =
            realloc(inline_frames ? NULL : w->frames, 2 * w->cap * sizeof(*grown));
        if (NULL == grown) return OMPI_ERR_OUT_OF_RESOURCE;
        if (inline_frames) memcpy(grown, w->inline_frames, sizeof(w->inline_frames));
        w->frames = grown;
        w->cap *= 2;
    }
    w->frames[w->depth++] = f;
    return OMPI_SUCCESS;
}

/* The bytes of one block of a data element. */
static inline size_t block_bytes(const dt_elem_desc_t *e)
{
    return e->elem.blocklen * opal_datatype_basicDatatypes[e->elem.common.type]->size;
}

/* The walk of a datatype's description, one step: finds the next element that holds
 * data, *e, whose displacements count from *base, and moves past it. Returns 1, 0 at the
 * walk's end, or a negative OSCF error. The description is Open MPI's own
 * (opal_datatype_internal.h): an element is count blocks of blocklen basic elements,
 * extent apart; a loop repeats the items up to its end marker loops times, extent apart
 * (a frame each). Walked here rather than by opal_convertor_raw, which hands out every
 * piece: a vector's million pieces are one element, so one run, at once. The order is
 * the description's, which is the order the convertor packs in. */
static inline int walk_element(ompi_osc_fabric_walk *w, const dt_elem_desc_t **e, int64_t *base)
{
    while (w->depth > 0) {
        ompi_osc_fabric_walk_frame *f = &w->frames[w->depth - 1];
        if (f->i == f->end) { /* one iteration done */
            if (++f->k < f->loops)
                f->i = f->first;
            else
                --w->depth;
            continue;
        }
        const dt_elem_desc_t *d = &w->desc[f->i];
        const int64_t at = f->base + (int64_t)f->k * f->extent;
        if (OPAL_DATATYPE_LOOP == d->elem.common.type) {
            const ddt_loop_desc_t *loop = &d->loop;
            const uint32_t first = f->i + 1;
            f->i += loop->items + 1; /* where this frame goes on after the loop */
            if (loop->loops > 0 &&
                OMPI_SUCCESS != walk_push(w, (ompi_osc_fabric_walk_frame){.first = first,
                                                                          .i = first,
                                                                          .end = first - 1 + loop->items,
                                                                          .loops = loop->loops,
                                                                          .base = at,
                                                                          .extent = loop->extent}))
                return OSCF_ERR_NO_MEM;
            continue;
        }
        ++f->i; /* an end marker without its loop: the description's own end */
        if (d->elem.common.flags & OPAL_DATATYPE_FLAG_DATA) {
            *e = d;
            *base = at;
            return 1;
        }
    }
    return 0;
}

/* The walk's runs, until max are out: the array of ompi_osc_fabric_runs is out itself,
 * never grown, since an element adds at most one. */
static long walk_next(void *arg, oscf_run *out, size_t max)
{
    ompi_osc_fabric_walk *w = arg;
    ompi_osc_fabric_runs r = {.v = out, .cap = max};
    const dt_elem_desc_t *e;
    int64_t base;
    int rc = 0;
    while (r.n < max && 1 == (rc = walk_element(w, &e, &base))) {
        if (OMPI_SUCCESS != add_run(&r, base + e->elem.disp, e->elem.extent, block_bytes(e), e->elem.count))
            return OSCF_ERR_INTERNAL;
    }
    return rc < 0 ? rc : (long)r.n;
}

int ompi_osc_fabric_walk_init(ompi_datatype_t *dt, int count, ompi_osc_fabric_walk *w, oscf_run_source *src)
{
    const opal_datatype_t *odt = &dt->super;
    const dt_type_desc_t *desc = NULL != odt->opt_desc.desc ? &odt->opt_desc : &odt->desc;
    *w = (ompi_osc_fabric_walk){.desc = desc->desc,
                                .cap = sizeof(w->inline_frames) / sizeof(w->inline_frames[0])};
    w->frames = w->inline_frames;
    const int64_t extent = (int64_t)(odt->ub - odt->lb);
    ptrdiff_t true_lb = 0, true_extent = 0;
    ompi_datatype_get_true_extent(dt, &true_lb, &true_extent);
    size_t size = 0;
    ompi_datatype_type_size(dt, &size);
    /* The pieces of element c lie in c * extent + [true_lb, true_lb + true_extent). */
    int64_t last = 0, lo = 0, hi = 0;
    if (count <= 0 || __builtin_mul_overflow(extent, (int64_t)(count - 1), &last) ||
        __builtin_add_overflow((int64_t)true_lb, last < 0 ? last : 0, &lo) ||
        __builtin_add_overflow((int64_t)true_lb + (int64_t)true_extent, last > 0 ? last : 0, &hi))
        return OMPI_ERR_BAD_PARAM;
    if (0 < count && 0 < desc->used)
        w->frames[w->depth++] = (ompi_osc_fabric_walk_frame){
            .end = (uint32_t)desc->used, .loops = (uint32_t)count, .extent = extent};
    *src = (oscf_run_source){.next = walk_next, .arg = w, .lo = lo, .hi = hi, .bytes = size * (size_t)count};
    return OMPI_SUCCESS;
}

void ompi_osc_fabric_walk_fini(ompi_osc_fabric_walk *w)
{
    if (w->frames != w->inline_frames) free(w->frames);
    w->frames = w->inline_frames;
    w->depth = 0;
}

int ompi_osc_fabric_runs_of(ompi_datatype_t *dt, int count, ompi_osc_fabric_runs *out)
{
    runs_init(out);
    if (count <= 0) return OMPI_SUCCESS;
    ompi_osc_fabric_walk w;
    oscf_run_source whole;
    int rc = ompi_osc_fabric_walk_init(dt, count, &w, &whole);
    const dt_elem_desc_t *e;
    int64_t base;
    int found = 0;
    while (OMPI_SUCCESS == rc && 1 == (found = walk_element(&w, &e, &base)))
        rc = add_run(out, base + e->elem.disp, e->elem.extent, block_bytes(e), e->elem.count);
    if (found < 0) rc = OMPI_ERR_OUT_OF_RESOURCE;
    ompi_osc_fabric_walk_fini(&w);
    if (OMPI_SUCCESS != rc) ompi_osc_fabric_runs_free(out);
    return rc;
}

bool ompi_osc_fabric_stream_wanted(ompi_datatype_t *origin_dt, int origin_count, ompi_datatype_t *target_dt,
                                   int target_count)
{
    const size_t bytes = matched_bytes(origin_dt, origin_count, target_dt, target_count);
    if (0 == bytes || ompi_datatype_is_contiguous_memory_layout(target_dt, target_count)) return false;
    return ompi_osc_fabric_small_pieces(target_dt, target_count, bytes, OSCF_PACKED_PIECE_MAX) ||
           ompi_osc_fabric_small_pieces(origin_dt, origin_count, bytes, OSCF_PACKED_PIECE_MAX);
}

void ompi_osc_fabric_runs_free(ompi_osc_fabric_runs *r)
{
    struct ompi_osc_fabric_runs_block *b = r->block;
    for (int i = 0; NULL != b && i < RUNS_KEPT && b->cap * sizeof(oscf_run) <= RUNS_KEEP_MAX; i++)
        b = atomic_exchange(&kept_runs[i], b); /* the block kept there moves to the next */
    free(b);                                   /* the oldest kept, or one too large to keep */
    r->block = NULL;
    r->v = r->inline_v;
    r->cap = sizeof(r->inline_v) / sizeof(r->inline_v[0]);
    r->n = 0;
}

void ompi_osc_fabric_runs_fini(void)
{
    for (int i = 0; i < RUNS_KEPT; i++) free(atomic_exchange(&kept_runs[i], NULL));
}

typedef struct piece_count {
    size_t pieces, enough;
    char *end; /* where the last piece ended: touching pieces are one */
} piece_count;

static int count_piece(void *arg, char *base, size_t len)
{
    piece_count *c = arg;
    if (0 == len) return OMPI_SUCCESS;
    if (0 == c->pieces || base != c->end) c->pieces++; /* the first may start at NULL */
    c->end = base + len;
    return c->pieces >= c->enough ? 1 : OMPI_SUCCESS; /* enough seen: stop */
}

bool ompi_osc_fabric_small_pieces(ompi_datatype_t *dt, int count, size_t bytes, size_t max)
{
    if (ompi_datatype_is_contiguous_memory_layout(dt, count)) return bytes <= max;
    piece_count c = {.pieces = 0, .enough = (bytes + max - 1) / max, .end = NULL};
    if (OMPI_SUCCESS != each_raw_piece(dt, count, NULL, count_piece, &c)) return false;
    return c.pieces >= c.enough;
}

int ompi_osc_fabric_pieces_whole(const ompi_osc_fabric_pieces *raw, size_t elem_data, size_t elem_extent,
                                 ompi_osc_fabric_pieces *out)
{
    ompi_osc_fabric_pieces_one(NULL, 0, out);
    size_t consumed = 0; /* data bytes of the current element seen so far */
    char *start = NULL;
    int rc = OMPI_SUCCESS;
    for (size_t i = 0; OMPI_SUCCESS == rc && i < raw->n; i++) {
        char *at = raw->v[i].iov_base;
        size_t left = raw->v[i].iov_len;
        while (OMPI_SUCCESS == rc && left > 0) {
            if (0 == consumed) start = at;
            size_t take = elem_data - consumed < left ? elem_data - consumed : left;
            /* An element's data must lie inside its own struct. */
            if ((size_t)(at - start) + take > elem_extent) rc = MPI_ERR_TYPE;
            consumed += take;
            at += take;
            left -= take;
            if (OMPI_SUCCESS == rc && consumed == elem_data) {
                rc = push(out, start, elem_extent);
                out->bytes += elem_extent;
                consumed = 0;
            }
        }
    }
    if (OMPI_SUCCESS == rc && 0 != consumed) rc = MPI_ERR_TYPE; /* a partial element */
    if (OMPI_SUCCESS != rc) {
        opal_output_verbose(1, mca_osc_fabric_component.output,
                            "osc/fabric: a datatype splits a value/index pair element");
        ompi_osc_fabric_pieces_free(out);
    }
    return rc;
}

int ompi_osc_fabric_cut(ompi_osc_fabric_pieces *const sides[], int nsides, size_t unit,
                        ompi_osc_fabric_cut_fn emit, void *arg)
{
    size_t idx[3] = {0, 0, 0}, used[3] = {0, 0, 0};
    const ompi_osc_fabric_pieces *first = sides[0];
    for (int s = 1; s < nsides; s++) {
        if (sides[s]->bytes != first->bytes) {
            opal_output_verbose(1, mca_osc_fabric_component.output,
                                "osc/fabric: the datatypes describe %zu and %zu bytes", first->bytes,
                                sides[s]->bytes);
            return OMPI_ERR_BAD_PARAM;
        }
    }
    for (;;) {
        size_t step = SIZE_MAX;
        for (int s = 0; s < nsides; s++) {
            if (idx[s] == sides[s]->n) return OMPI_SUCCESS; /* same totals: all end together */
            size_t left = sides[s]->v[idx[s]].iov_len - used[s];
            if (left < step) step = left;
        }
        if (step % unit) {
            opal_output_verbose(1, mca_osc_fabric_component.output,
                                "osc/fabric: a datatype splits an element (%zu-byte piece)", step);
            return MPI_ERR_TYPE;
        }
        char *at[3] = {NULL, NULL, NULL};
        for (int s = 0; s < nsides; s++) at[s] = (char *)sides[s]->v[idx[s]].iov_base + used[s];
        int rc = emit(arg, at, step);
        if (OMPI_SUCCESS != rc) return rc;
        for (int s = 0; s < nsides; s++) {
            used[s] += step;
            if (used[s] == sides[s]->v[idx[s]].iov_len) {
                idx[s]++;
                used[s] = 0;
            }
        }
    }
}

/* The origin's side of one put or get as a convertor; a get's lives until its bytes
 * arrive, so it holds the datatype too. */
typedef struct origin_packer {
    opal_convertor_t conv;
    ompi_datatype_t *dt;
    /* The convertor packs whole basic elements only, but the engine cuts its messages
     * where the target's pieces and its room say (engine/run_cursor.h), which may fall
     * inside one of the origin's elements: such an element is packed here and handed
     * out in two parts. Larger than any basic element (32 bytes). */
    unsigned char carry[64];
    size_t carry_at, carry_len;
} origin_packer;

/* Hands out what is left of an element packed into a carry (bytes at..have), as much as
 * the len bytes at *out take: a message that ends inside an element gets its head, the
 * next its tail. */
static void carry_out(const unsigned char *carry, size_t *at, size_t have, unsigned char **out, size_t *len)
{
    const size_t n = have - *at < *len ? have - *at : *len;
    memcpy(*out, carry + *at, n);
    *at += n;
    *out += n;
    *len -= n;
}

static int pack_next(void *arg, void *dst, size_t len)
{
    origin_packer *p = arg;
    unsigned char *out = dst;
    while (len > 0) {
        if (p->carry_at < p->carry_len) {
            carry_out(p->carry, &p->carry_at, p->carry_len, &out, &len);
            continue;
        }
        struct iovec iov = {.iov_base = out, .iov_len = len};
        uint32_t n = 1;
        size_t max_data = len;
        if (opal_convertor_pack(&p->conv, &iov, &n, &max_data) < 0) return OSCF_ERR_INTERNAL;
        out += max_data;
        len -= max_data;
        if (0 == len) break;
        /* The next element does not fit whole: through the carry. */
        iov = (struct iovec){.iov_base = p->carry, .iov_len = sizeof(p->carry)};
        n = 1;
        max_data = sizeof(p->carry);
        if (opal_convertor_pack(&p->conv, &iov, &n, &max_data) < 0 || 0 == max_data)
            return OSCF_ERR_INTERNAL; /* nothing left: asked for more than the datatype holds */
        p->carry_at = 0;
        p->carry_len = max_data;
    }
    return OSCF_OK;
}

static int unpack_all(void *arg, const void *src, size_t len)
{
    origin_packer *p = arg;
    struct iovec iov = {.iov_base = (void *)src, .iov_len = len};
    uint32_t n = 1;
    size_t max_data = len;
    int rc = opal_convertor_unpack(&p->conv, &iov, &n, &max_data);
    return rc < 0 || max_data != len ? OSCF_ERR_INTERNAL : OSCF_OK;
}

static void release_packer(void *arg)
{
    origin_packer *p = arg;
    OBJ_DESTRUCT(&p->conv);
    OBJ_RELEASE(p->dt);
    free(p);
}

/* The convertor's packer: for pack it packs, else it unpacks. */
static int convertor_packer(ompi_datatype_t *dt, int count, const void *base, bool pack, oscf_packer *out)
{
    origin_packer *p = malloc(sizeof(*p));
    if (NULL == p) return OMPI_ERR_OUT_OF_RESOURCE;
    p->carry_at = p->carry_len = 0;
    OBJ_CONSTRUCT(&p->conv, opal_convertor_t);
    p->dt = dt;
    OBJ_RETAIN(p->dt);
    int rc = pack ? opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &dt->super,
                                                             (size_t)count, base, 0, &p->conv)
                  : opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor, &dt->super,
                                                             (size_t)count, base, 0, &p->conv);
    if (OPAL_SUCCESS != rc) {
        release_packer(p);
        return OMPI_ERROR;
    }
    *out = (oscf_packer){.pack = pack_next, .unpack = unpack_all, .release = release_packer, .arg = p};
    return OMPI_SUCCESS;
}

/* The origin's side walked as runs (the walk the target's side uses) and moved by the
 * engine's stream (oscf_layout_packer), which copies a vector's pieces in one loop where
 * a convertor steps through its description for each. */
typedef struct walk_packer {
    ompi_osc_fabric_walk walk; /* in place: the walk points into itself */
    oscf_run_source runs;
    oscf_packer stream;
    ompi_datatype_t *dt; /* the walk reads its description */
} walk_packer;

static int walk_pack(void *arg, void *dst, size_t len)
{
    walk_packer *p = arg;
    return p->stream.pack(p->stream.arg, dst, len);
}

static int walk_unpack(void *arg, const void *src, size_t len)
{
    walk_packer *p = arg;
    return p->stream.unpack(p->stream.arg, src, len);
}

static void walk_release(void *arg)
{
    walk_packer *p = arg;
    p->stream.release(p->stream.arg);
    ompi_osc_fabric_walk_fini(&p->walk);
    OBJ_RELEASE(p->dt);
    free(p);
}

/* *taken false, and *out untouched, where the walk does not apply (an extent past 64
 * bits) or the engine finds the runs too small to be worth it. */
static int walk_packer_open(ompi_datatype_t *dt, int count, const void *base, oscf_packer *out, bool *taken)
{
    *taken = false;
    walk_packer *p = malloc(sizeof(*p));
    if (NULL == p) return OMPI_ERR_OUT_OF_RESOURCE;
    if (OMPI_SUCCESS != ompi_osc_fabric_walk_init(dt, count, &p->walk, &p->runs)) {
        free(p);
        return OMPI_SUCCESS;
    }
    int took = 0;
    int rc = ompi_osc_fabric_status(oscf_layout_packer((void *)base, &p->runs, &p->stream, &took));
    if (OMPI_SUCCESS != rc || !took) {
        ompi_osc_fabric_walk_fini(&p->walk);
        free(p);
        return rc;
    }
    p->dt = dt;
    OBJ_RETAIN(p->dt);
    *out = (oscf_packer){.pack = walk_pack, .unpack = walk_unpack, .release = walk_release, .arg = p};
    *taken = true;
    return OMPI_SUCCESS;
}

int ompi_osc_fabric_packer(ompi_datatype_t *dt, int count, const void *base, bool pack, oscf_packer *out)
{
    bool taken = false;
    int rc = walk_packer_open(dt, count, base, out, &taken);
    if (OMPI_SUCCESS != rc || taken) return rc;
    return convertor_packer(dt, count, base, pack, out);
}

/* A value/index pair type's elements as the engine reduces them, whole C structs
 * (MPI_DOUBLE_INT: the double at 0, the int at 8, 16 bytes), around a convertor that
 * packs their data only (12 bytes each): pack spreads each element's data into its
 * struct (holes zeroed), unpack gathers it back. A message may end inside an element:
 * that element goes through the carry, one struct. */
typedef struct pair_packer {
    oscf_packer inner;
    size_t value, index_at, data, extent; /* bytes */
    unsigned char carry[64];              /* larger than any pair struct (32 bytes) */
    size_t carry_at, carry_len;           /* pack: handed out of carry_len; unpack: filled */
    unsigned char scratch[PAIR_BATCH];    /* the data of a batch of elements */
} pair_packer;

static int pair_spread(pair_packer *p, unsigned char *out, size_t k)
{
    int rc = p->inner.pack(p->inner.arg, p->scratch, k * p->data);
    for (size_t i = 0; OSCF_OK == rc && i < k; i++, out += p->extent) {
        const unsigned char *in = p->scratch + i * p->data;
        memset(out, 0, p->extent);
        memcpy(out, in, p->value);
        memcpy(out + p->index_at, in + p->value, sizeof(int));
    }
    return rc;
}

static int pair_gather(pair_packer *p, const unsigned char *in, size_t k)
{
    for (size_t i = 0; i < k; i++, in += p->extent) {
        unsigned char *out = p->scratch + i * p->data;
        memcpy(out, in, p->value);
        memcpy(out + p->value, in + p->index_at, sizeof(int));
    }
    return p->inner.unpack(p->inner.arg, p->scratch, k * p->data);
}

static int pair_pack(void *arg, void *dst, size_t len)
{
    pair_packer *p = arg;
    unsigned char *out = dst;
    while (len > 0) {
        if (p->carry_at < p->carry_len) {
            carry_out(p->carry, &p->carry_at, p->carry_len, &out, &len);
            continue;
        }
        size_t k = len / p->extent;
        if (k > PAIR_BATCH / p->data) k = PAIR_BATCH / p->data;
        int rc = pair_spread(p, 0 == k ? p->carry : out, 0 == k ? 1 : k);
        if (OSCF_OK != rc) return rc;
        if (0 == k) { /* part of the next element: through the carry */
            p->carry_at = 0;
            p->carry_len = p->extent;
            continue;
        }
        out += k * p->extent;
        len -= k * p->extent;
    }
    return OSCF_OK;
}

static int pair_unpack(void *arg, const void *src, size_t len)
{
    pair_packer *p = arg;
    const unsigned char *in = src;
    while (len > 0) {
        if (p->carry_at > 0 || len < p->extent) {
            const size_t n = p->extent - p->carry_at < len ? p->extent - p->carry_at : len;
            memcpy(p->carry + p->carry_at, in, n);
            p->carry_at += n;
            in += n;
            len -= n;
            if (p->carry_at < p->extent) continue;
            p->carry_at = 0;
            int rc = pair_gather(p, p->carry, 1);
            if (OSCF_OK != rc) return rc;
            continue;
        }
        size_t k = len / p->extent;
        if (k > PAIR_BATCH / p->data) k = PAIR_BATCH / p->data;
        int rc = pair_gather(p, in, k);
        if (OSCF_OK != rc) return rc;
        in += k * p->extent;
        len -= k * p->extent;
    }
    return OSCF_OK;
}

static void pair_release(void *arg)
{
    pair_packer *p = arg;
    p->inner.release(p->inner.arg);
    free(p);
}

int ompi_osc_fabric_pair_packer(ompi_datatype_t *dt, int count, const void *base, bool pack, size_t value,
                                size_t extent, oscf_packer *out)
{
    const size_t index_at = (value + sizeof(int) - 1) / sizeof(int) * sizeof(int);
    if (index_at + sizeof(int) > extent || extent > sizeof(((pair_packer *)NULL)->carry))
        return OMPI_ERR_BAD_PARAM;
    pair_packer *p = malloc(sizeof(*p));
    if (NULL == p) return OMPI_ERR_OUT_OF_RESOURCE;
    int rc = ompi_osc_fabric_packer(dt, count, base, pack, &p->inner);
    if (OMPI_SUCCESS != rc) {
        free(p);
        return rc;
    }
    p->value = value;
    p->index_at = index_at;
    p->data = value + sizeof(int);
    p->extent = extent;
    p->carry_at = p->carry_len = 0;
    *out = (oscf_packer){.pack = pair_pack, .unpack = pair_unpack, .release = pair_release, .arg = p};
    return OMPI_SUCCESS;
}

/* Moves runs built in `from` into *r (inline storage is copied, not pointed to). */
static void runs_take(ompi_osc_fabric_runs *r, ompi_osc_fabric_runs *from)
{
    ompi_osc_fabric_runs_free(r);
    *r = *from;
    if (NULL == r->block) r->v = r->inline_v;
}

/* The whole structs of a pair type whose element data is two pieces (MPI_SHORT_INT: the
 * short at 0, the int at 4; one element's int and the next one's short touch, so they
 * are one piece): walks the data bytes in order, a value of `value` bytes then its index
 * at index_at, and rebuilds the runs as structs of `extent` bytes. False unless every
 * byte falls in that pattern and each struct lies clear of the one before it. */
static bool pair_structs(ompi_osc_fabric_runs *r, size_t value, size_t index_at, size_t extent)
{
    ompi_osc_fabric_runs out;
    runs_init(&out);
    bool in_index = false, any = false, ok = true;
    int64_t at = 0, last = 0; /* the struct being read, the one before it */
    for (size_t i = 0; ok && i < r->n; i++) {
        const oscf_run *run = &r->v[i];
        for (uint32_t j = 0; ok && j < run->count; j++) {
            const int64_t lo = run->offset + run->stride * (int64_t)j, hi = lo + (int64_t)run->len;
            for (int64_t pos = lo; ok && pos < hi;) {
                if (!in_index) { /* a value starts an element */
                    ok = hi - pos >= (int64_t)value;
                    at = pos;
                    pos += (int64_t)value;
                    in_index = true;
                    continue;
                }
                ok = pos == at + (int64_t)index_at && hi - pos >= (int64_t)sizeof(int) &&
                     (!any || (at > last ? at - last : last - at) >= (int64_t)extent) &&
                     OMPI_SUCCESS == add_run(&out, at, 0, extent, 1);
                pos += (int64_t)sizeof(int);
                in_index = false;
                last = at;
                any = true;
            }
        }
    }
    ok = ok && !in_index;
    if (ok)
        runs_take(r, &out);
    else
        ompi_osc_fabric_runs_free(&out);
    return ok;
}

bool ompi_osc_fabric_pair_runs(ompi_osc_fabric_runs *r, size_t value, size_t extent)
{
    const size_t data = value + sizeof(int), index_at = (value + sizeof(int) - 1) / sizeof(int) * sizeof(int);
    if (index_at != value) return pair_structs(r, value, index_at, extent);
    for (size_t i = 0; i < r->n; i++) {
        const oscf_run *run = &r->v[i];
        const uint64_t step = run->stride < 0 ? -(uint64_t)run->stride : (uint64_t)run->stride;
        if (data == extent ? run->len % data != 0 : run->len != data || (run->count > 1 && step < extent))
            return false;
    }
    if (data == extent) return true;
    for (size_t i = 0; i < r->n; i++) r->v[i].len = extent;
    r->bytes = r->bytes / data * extent;
    return true;
}

int ompi_osc_fabric_copy_layout(const void *src, int scount, ompi_datatype_t *sdt, void *dst, int dcount,
                                ompi_datatype_t *ddt)
{
    size_t ssize = 0, dsize = 0;
    ompi_datatype_type_size(sdt, &ssize);
    ompi_datatype_type_size(ddt, &dsize);
    const size_t total = ssize * (size_t)scount;
    if (total != dsize * (size_t)dcount) return MPI_ERR_TRUNCATE;
    if (0 == total) return OMPI_SUCCESS;
    /* One pass from layout to layout where both walk (their extents fit 64 bits) in runs
     * large enough: the bounce buffer below moves every byte twice. */
    ompi_osc_fabric_walk sw, dw;
    oscf_run_source sruns, druns;
    if (OMPI_SUCCESS == ompi_osc_fabric_walk_init(sdt, scount, &sw, &sruns)) {
        int rc = OMPI_ERR_BAD_PARAM, moved = 0;
        if (OMPI_SUCCESS == ompi_osc_fabric_walk_init(ddt, dcount, &dw, &druns)) {
            rc = ompi_osc_fabric_status(oscf_copy_layout(dst, &druns, src, &sruns, &moved));
            ompi_osc_fabric_walk_fini(&dw);
        }
        ompi_osc_fabric_walk_fini(&sw);
        if (moved || (OMPI_SUCCESS != rc && OMPI_ERR_BAD_PARAM != rc)) return rc;
    }
    const size_t cap = total < COPY_BOUNCE ? total : COPY_BOUNCE;
    unsigned char *bounce = malloc(cap);
    if (NULL == bounce) return OMPI_ERR_OUT_OF_RESOURCE;
    oscf_packer in, out;
    int rc = convertor_packer(sdt, scount, src, true, &in);
    if (OMPI_SUCCESS != rc) {
        free(bounce);
        return rc;
    }
    if (OMPI_SUCCESS == (rc = convertor_packer(ddt, dcount, dst, false, &out))) {
        /* Until every byte has moved, whatever either convertor says about completion. */
        for (size_t done = 0; OMPI_SUCCESS == rc && done < total; done += cap) {
            const size_t len = total - done < cap ? total - done : cap;
            if (OSCF_OK != in.pack(in.arg, bounce, len) || OSCF_OK != out.unpack(out.arg, bounce, len))
                rc = OMPI_ERROR;
        }
        out.release(out.arg);
    }
    in.release(in.arg);
    free(bounce);
    return rc;
}

bool ompi_osc_fabric_layout_wanted(ompi_datatype_t *origin_dt, int origin_count, ompi_datatype_t *target_dt,
                                   int target_count, ompi_osc_fabric_runs *runs)
{
    const size_t bytes = matched_bytes(origin_dt, origin_count, target_dt, target_count);
    if (0 == bytes || OMPI_SUCCESS != ompi_osc_fabric_runs_of(target_dt, target_count, runs)) return false;
    /* A target that is one block takes it for a scattered origin only: with both sides
     * one block the call is one segment. */
    const bool target_small = runs->pieces > 1 && runs->bytes / runs->pieces <= OSCF_PACKED_PIECE_MAX;
    if (runs->bytes == bytes &&
        (runs->pieces > 1 || !ompi_datatype_is_contiguous_memory_layout(origin_dt, origin_count)) &&
        (target_small || ompi_osc_fabric_small_pieces(origin_dt, origin_count, bytes, OSCF_PACKED_PIECE_MAX)))
        return true;
    ompi_osc_fabric_runs_free(runs);
    return false;
}
