/*
 * osc/fabric, Open MPI side. This layer only translates MPI objects (windows,
 * communicators, datatypes, asserts) into engine calls (include/osc_fabric/engine.h);
 * all protocol state lives in the engine.
 *
 * Files: _component.c (MCA parameters, init/query/select/finalize, progress hook),
 * _module.c (function table, free, status conversion), _comm.c (put/get),
 * _accumulate.c (the accumulate family), _datatype.c (datatypes as byte ranges),
 * _info.c (info keys), _request.c (MPI requests of the R* calls),
 * _active_target.c (fence, PSCW), _passive_target.c (locks, flush, sync),
 * _mpix.c (what libmpix-fabric calls: MPIX_Rmw2 and one-shot epochs).
 */
#ifndef OMPI_OSC_FABRIC_H
#define OMPI_OSC_FABRIC_H

#include "ompi_config.h"

#include <sys/uio.h>

#include "ompi/communicator/communicator.h"
#include "ompi/mca/osc/osc.h"
#include "ompi/win/win.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/util/info.h"

#include "osc_fabric/direct_view.h"
#include "osc_fabric/engine.h"

typedef struct ompi_osc_fabric_component_t {
    ompi_osc_base_component_t super;
    int priority;
    char *provider_include;
    int verbose;
    bool progress_thread;
    bool node_direct;
    bool cross_memory;
    bool mr_local;         /* offer FI_MR_LOCAL (osc_fabric_registration.c) */
    char *accumulate_path; /* "auto", "am" or "native" */
    int output;            /* opal_output stream */
    oscf_engine *engine;   /* opened on first use; NULL until then */
    int engine_status;     /* OSCF_OK, or why opening failed (then never retried) */
    bool version_ok;       /* running Open MPI is the one we were built for */
    int live_windows;      /* progress is registered while > 0 */
} ompi_osc_fabric_component_t;

typedef struct ompi_osc_fabric_module_t {
    ompi_osc_base_module_t super;
    oscf_win *win;
    oscf_direct_view *direct;  /* the engine's fast road to on-node peers (direct_view.h),
                                * NULL when no peer's window memory is mapped */
    ompi_communicator_t *comm; /* private duplicate for our collectives */
    /* The info keys we honour (osc_fabric_info.c), as MPI_Win_get_info reports them. */
#define OMPI_OSC_FABRIC_INFO_KEYS 7
#define OMPI_OSC_FABRIC_INFO_NONCONTIG 5 /* index of alloc_shared_noncontig */
    char info[OMPI_OSC_FABRIC_INFO_KEYS][OPAL_MAX_INFO_VAL + 1];
    /* Shared windows: every rank's slice, for MPI_Win_shared_query. */
    size_t *shared_sizes, *shared_offsets;
    int *shared_disp_units;
} ompi_osc_fabric_module_t;

OMPI_DECLSPEC extern ompi_osc_fabric_component_t mca_osc_fabric_component;
extern const ompi_osc_base_module_t ompi_osc_fabric_module_template;

static inline oscf_win *ompi_osc_fabric_win(struct ompi_win_t *win)
{
    return ((ompi_osc_fabric_module_t *)win->w_osc_module)->win;
}

static inline oscf_direct_view *ompi_osc_fabric_direct(struct ompi_win_t *win)
{
    return ((ompi_osc_fabric_module_t *)win->w_osc_module)->direct;
}

/* The one place that turns an engine status into an OMPI error code. */
int ompi_osc_fabric_status(int oscf_rc);

/* Collective agreement: every rank gets the worst (lowest) status of all ranks. */
int ompi_osc_fabric_agree(ompi_communicator_t *comm, int local_rc);

/* Module teardown used by MPI_Win_free and by a failed window creation. */
int ompi_osc_fabric_free(struct ompi_win_t *win);
void ompi_osc_fabric_module_destroy(ompi_osc_fabric_module_t *module);

/* Called by the module when a window comes and goes, to hook engine progress into
 * opal_progress only while windows exist. */
int ompi_osc_fabric_progress(void);
void ompi_osc_fabric_window_added(void);
void ompi_osc_fabric_window_removed(void);

/* _comm.c */
int ompi_osc_fabric_put(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                        int target, ptrdiff_t target_disp, int target_count,
                        struct ompi_datatype_t *target_dt, struct ompi_win_t *win);
int ompi_osc_fabric_get(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt, int target,
                        ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt,
                        struct ompi_win_t *win);
int ompi_osc_fabric_rput(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                         int target, ptrdiff_t target_disp, int target_count,
                         struct ompi_datatype_t *target_dt, struct ompi_win_t *win,
                         struct ompi_request_t **request);
int ompi_osc_fabric_rget(void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt, int target,
                         ptrdiff_t target_disp, int target_count, struct ompi_datatype_t *target_dt,
                         struct ompi_win_t *win, struct ompi_request_t **request);

/* _accumulate.c */
int ompi_osc_fabric_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                               int target, ptrdiff_t target_disp, int target_count,
                               struct ompi_datatype_t *target_dt, struct ompi_op_t *op,
                               struct ompi_win_t *win);
int ompi_osc_fabric_get_accumulate(const void *origin_addr, int origin_count,
                                   struct ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                                   struct ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                                   int target_count, struct ompi_datatype_t *target_dt, struct ompi_op_t *op,
                                   struct ompi_win_t *win);
int ompi_osc_fabric_raccumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                                int target, ptrdiff_t target_disp, int target_count,
                                struct ompi_datatype_t *target_dt, struct ompi_op_t *op,
                                struct ompi_win_t *win, struct ompi_request_t **request);
int ompi_osc_fabric_rget_accumulate(const void *origin_addr, int origin_count,
                                    struct ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                                    struct ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                                    int target_count, struct ompi_datatype_t *target_dt, struct ompi_op_t *op,
                                    struct ompi_win_t *win, struct ompi_request_t **request);
int ompi_osc_fabric_fetch_and_op(const void *origin_addr, void *result_addr, struct ompi_datatype_t *dt,
                                 int target, ptrdiff_t target_disp, struct ompi_op_t *op,
                                 struct ompi_win_t *win);
int ompi_osc_fabric_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                     struct ompi_datatype_t *dt, int target, ptrdiff_t target_disp,
                                     struct ompi_win_t *win);

/* Translations shared with _mpix.c: a datatype built from one predefined type (or a
 * predefined one) to its element type, a predefined reduction to the engine's
 * (MPI_ERR_TYPE / MPI_ERR_OP). */
int ompi_osc_fabric_element_type(struct ompi_datatype_t *dt, oscf_type *out);
int ompi_osc_fabric_map_type(const struct ompi_datatype_t *dt, oscf_type *out); /* predefined */
int ompi_osc_fabric_map_op(const struct ompi_op_t *op, oscf_op *out);
void ompi_osc_fabric_accumulate_init(void); /* once, before the first window */

/* _active_target.c */
int ompi_osc_fabric_fence(int mpi_assert, struct ompi_win_t *win);
int ompi_osc_fabric_start(struct ompi_group_t *group, int mpi_assert, struct ompi_win_t *win);
int ompi_osc_fabric_complete(struct ompi_win_t *win);
int ompi_osc_fabric_post(struct ompi_group_t *group, int mpi_assert, struct ompi_win_t *win);
int ompi_osc_fabric_wait(struct ompi_win_t *win);
int ompi_osc_fabric_test(struct ompi_win_t *win, int *flag);

/* _passive_target.c */
int ompi_osc_fabric_lock(int lock_type, int target, int mpi_assert, struct ompi_win_t *win);
int ompi_osc_fabric_unlock(int target, struct ompi_win_t *win);
int ompi_osc_fabric_lock_all(int mpi_assert, struct ompi_win_t *win);
int ompi_osc_fabric_unlock_all(struct ompi_win_t *win);
int ompi_osc_fabric_sync(struct ompi_win_t *win);
int ompi_osc_fabric_flush(int target, struct ompi_win_t *win);
int ompi_osc_fabric_flush_all(struct ompi_win_t *win);
int ompi_osc_fabric_flush_local(int target, struct ompi_win_t *win);
int ompi_osc_fabric_flush_local_all(struct ompi_win_t *win);

/* _shared.c: creates a window with a node segment, collectively: for
 * MPI_Win_allocate_shared (every process on this node; memory and state), or for any
 * other flavor with peers on this node (state; memory too for MPI_Win_allocate). */
int ompi_osc_fabric_shared_create(ompi_osc_fabric_module_t *module, oscf_win_params *params, void **base);
int ompi_osc_fabric_node_create(ompi_osc_fabric_module_t *module, oscf_win_params *params, void **base);
int ompi_osc_fabric_shared_query(struct ompi_win_t *win, int rank, size_t *size, int *disp_unit,
                                 void *baseptr);

/* _info.c: reads the info keys we honour at creation and subscribes them so
 * MPI_Win_get_info reports them. */
int ompi_osc_fabric_read_info(struct opal_info_t *info, ompi_osc_fabric_module_t *module,
                              unsigned *accumulate_ordering);
int ompi_osc_fabric_subscribe_info(struct ompi_win_t *win, ompi_osc_fabric_module_t *module);

/* _request.c: runs op(op_arg, notify) as a request-based operation and returns its
 * MPI request (the engine refuses one outside a passive-target epoch). op returns an OMPI
 * code and passes notify to the engine. */
typedef int (*ompi_osc_fabric_op_fn)(void *op_arg, const oscf_notify *notify);
int ompi_osc_fabric_request_start(struct ompi_win_t *win, int target, ompi_osc_fabric_op_fn op, void *op_arg,
                                  struct ompi_request_t **request);

/* _pvars.c: the MPI_T performance variables (README.md, "MPI_T performance variables"). */
void ompi_osc_fabric_register_pvars(const mca_base_component_t *component);

/* Where the engine's provider demands FI_MR_LOCAL: installs Open MPI's registration
 * cache as the engine's registrar (the engine closes it when it closes). */
void ompi_osc_fabric_registration_init(oscf_engine *engine);

/* _help.c: the message a user who selected osc/fabric by name gets when it declines a
 * window (sent by the window's rank 0, once). help_note keeps the engine's last reason
 * for it. */
void ompi_osc_fabric_help_note(const char *msg);
/* Whether the osc framework's selection names fabric (not as an exclusion); *list: that
 * selection. */
bool ompi_osc_fabric_named(const char **list);
void ompi_osc_fabric_cannot_serve(int status, const char *why, int comm_rank);

/* _datatype.c: (buffer, count, datatype) as contiguous pieces, in order. */
typedef struct ompi_osc_fabric_pieces {
    struct iovec *v;
    size_t n, cap;
    size_t bytes;             /* total described by the datatype */
    struct iovec inline_v[4]; /* most datatypes need no allocation */
} ompi_osc_fabric_pieces;
int ompi_osc_fabric_pieces_of(struct ompi_datatype_t *dt, int count, const void *base,
                              ompi_osc_fabric_pieces *out);
/* Makes room for one more element in an array that starts in inline storage and
 * doubles on the heap. */
int ompi_osc_fabric_grow(void **items, size_t n, size_t *cap, size_t elem_size, const void *inline_items);
int ompi_osc_fabric_pieces_one(void *base, size_t len, ompi_osc_fabric_pieces *out);
/* The pieces of `raw` regrouped into whole elements of elem_extent bytes, each starting
 * where one element's elem_data bytes of data start: value/index pair types have holes
 * (MPI_DOUBLE_INT is 12 bytes of data in a 16-byte struct), which the convertor skips,
 * yet the engine reduces them as the C structs MPI defines. */
int ompi_osc_fabric_pieces_whole(const ompi_osc_fabric_pieces *raw, size_t elem_data, size_t elem_extent,
                                 ompi_osc_fabric_pieces *out);
void ompi_osc_fabric_pieces_free(ompi_osc_fabric_pieces *p);
/* The target's side of a put or get as runs (oscf_run), walked from Open MPI's
 * description of the datatype, offsets from address 0: a vector's pieces are one run. */
typedef struct ompi_osc_fabric_runs {
    oscf_run *v;
    size_t n, cap;
    size_t pieces, bytes;
    struct ompi_osc_fabric_runs_block *block; /* v's storage when it outgrew inline_v */
    oscf_run inline_v[4];
} ompi_osc_fabric_runs;
int ompi_osc_fabric_runs_of(struct ompi_datatype_t *dt, int count, ompi_osc_fabric_runs *out);
void ompi_osc_fabric_runs_free(ompi_osc_fabric_runs *r);
/* At component finalize: frees the block runs_free keeps for the next large layout. */
void ompi_osc_fabric_runs_fini(void);
/* (dt, count)'s runs as ompi_osc_fabric_runs_of finds them, handed out a batch at a time
 * (oscf_run_source, engine.h) by a walk that resumes where the last batch ended: its
 * loops as a stack of frames. A batch may end where runs_of would still have grown the
 * last run: the pieces and their order are the same. */
typedef struct ompi_osc_fabric_walk_frame {
    uint32_t first, i, end; /* the loop body's items, the next one, the end marker */
    uint32_t k, loops;      /* the iteration, of loops */
    int64_t base, extent;   /* iteration k's displacements count from base + k * extent */
} ompi_osc_fabric_walk_frame;
typedef struct ompi_osc_fabric_walk {
    const union dt_elem_desc *desc;
    ompi_osc_fabric_walk_frame *frames;
    size_t depth, cap;
    ompi_osc_fabric_walk_frame inline_frames[8];
} ompi_osc_fabric_walk;
/* Fills src with the walk, and its extent and bytes: w must stay while src is used.
 * Fails (OMPI_ERR_BAD_PARAM) when the extent overflows. */
int ompi_osc_fabric_walk_init(struct ompi_datatype_t *dt, int count, ompi_osc_fabric_walk *w,
                              oscf_run_source *src);
void ompi_osc_fabric_walk_fini(ompi_osc_fabric_walk *w);
/* True when a put or get of (target_dt, target_count) other than one block at the target has
 * pieces small enough on either side for the layout form (ompi_osc_fabric_layout_wanted's
 * test), found without walking the whole layout: such a call streams its runs. */
bool ompi_osc_fabric_stream_wanted(struct ompi_datatype_t *origin_dt, int origin_count,
                                   struct ompi_datatype_t *target_dt, int target_count);
/* Whether (dt, count)'s pieces are at most max bytes on average: walks only as far as
 * it takes to know. */
bool ompi_osc_fabric_small_pieces(struct ompi_datatype_t *dt, int count, size_t bytes, size_t max);
/* Fills runs with the target's layout and returns true when a call's pieces are small on
 * either side (they average at most OSCF_PACKED_PIECE_MAX bytes): the engine's layout
 * forms (oscf_win_put_packed) then beat a segment per piece. */
bool ompi_osc_fabric_layout_wanted(struct ompi_datatype_t *origin_dt, int origin_count,
                                   struct ompi_datatype_t *target_dt, int target_count,
                                   ompi_osc_fabric_runs *runs);
/* (base, count, dt) as an oscf_packer that packs it (pack) or unpacks into it, and holds
 * the datatype until released: the engine's stream over the datatype's runs
 * (oscf_layout_packer), or a convertor where those runs are a few bytes each. */
int ompi_osc_fabric_packer(struct ompi_datatype_t *dt, int count, const void *base, bool pack,
                           oscf_packer *out);
/* The same for a datatype built from a value/index pair type whose value has `value`
 * bytes (MPI_DOUBLE_INT: 8), for the engine that reduces whole C structs of `extent`
 * bytes (16): the packed stream holds each element's struct, not only its data. */
int ompi_osc_fabric_pair_packer(struct ompi_datatype_t *dt, int count, const void *base, bool pack,
                                size_t value, size_t extent, oscf_packer *out);
/* A pair-type target's runs widened to whole structs of `extent` bytes, for a value of
 * `value` bytes and its int index: each piece an element's data, or (MPI_SHORT_INT, whose
 * index does not follow its value) the data bytes in element order; false where they
 * are neither or structs would overlap (the general path takes those). */
bool ompi_osc_fabric_pair_runs(ompi_osc_fabric_runs *r, size_t value, size_t extent);
/* Copies scount elements of sdt at src into dcount of ddt at dst (the same bytes): the
 * two layouts walked as runs and the bytes moved from one to the other
 * (oscf_copy_layout), or, where the walk cannot hold an extent or either layout is runs
 * of a few bytes each, by two convertors and a bounce buffer. Open MPI 4.1.4's
 * ompi_datatype_sndrcv packs and unpacks too, but stops as soon as either convertor
 * reports completion, and packing some layouts (a resized vector, more than once)
 * reports it after the first 64 KiB: the rest was never copied. This one stops when
 * every byte has moved. */
int ompi_osc_fabric_copy_layout(const void *src, int scount, struct ompi_datatype_t *sdt, void *dst,
                                int dcount, struct ompi_datatype_t *ddt);
/* Every byte count elements of dt touch, from its true lower bound *lo: false when
 * its extent is negative (the general path handles those). */
bool ompi_osc_fabric_span(struct ompi_datatype_t *dt, int count, ptrdiff_t *lo, size_t *len);
/* The same pieces pulled one at a time, never listed: for walking two or three sides of
 * a call together when their pieces are too many to hold. fill makes (at, left) the
 * rest of the current piece (touching pieces merged), refilled when left is 0: 1 with
 * a piece, 0 at the end, an OMPI error. The caller consumes by advancing at and left.
 * A packed stream (init_packed) gives the data instead, packed (ompi_osc_fabric_packer)
 * into chunks of its own buffer: one piece per chunk, for a side that is only read. */
typedef struct ompi_osc_fabric_stream {
    opal_convertor_t conv;
    struct iovec iov[32];
    uint32_t n, i; /* pieces in iov, the next one to take */
    int done;      /* the convertor has given its last pieces */
    char *at;
    size_t left;
    char *chunk; /* packed streams: their buffer, chunk_len bytes; else NULL */
    size_t chunk_len;
    size_t unpacked; /* packed streams: the bytes still to pack */
    oscf_packer packer;
} ompi_osc_fabric_stream;
int ompi_osc_fabric_stream_init(ompi_osc_fabric_stream *s, struct ompi_datatype_t *dt, int count,
                                const void *base);
int ompi_osc_fabric_stream_init_packed(ompi_osc_fabric_stream *s, struct ompi_datatype_t *dt, int count,
                                       const void *base, size_t chunk_len);
int ompi_osc_fabric_stream_refill(ompi_osc_fabric_stream *s);
static inline int ompi_osc_fabric_stream_fill(ompi_osc_fabric_stream *s)
{
    return s->left ? 1 : ompi_osc_fabric_stream_refill(s); /* most calls: the piece goes on */
}
void ompi_osc_fabric_stream_fini(ompi_osc_fabric_stream *s);
/* Walks up to three piece lists together, calling emit(arg, at[], len) for each stretch
 * contiguous on every side; len is a multiple of unit. The lists must describe the
 * same number of bytes (else MPI_ERR_ARG). */
typedef int (*ompi_osc_fabric_cut_fn)(void *arg, char *at[], size_t len);
int ompi_osc_fabric_cut(ompi_osc_fabric_pieces *const sides[], int nsides, size_t unit,
                        ompi_osc_fabric_cut_fn emit, void *arg);

/* Translate MPI_MODE_* bits into OSCF_MODE_* bits. */
int ompi_osc_fabric_assert_bits(int mpi_assert);

#endif
