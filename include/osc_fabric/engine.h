/*
 * The C ABI between osc_fabric/mpi (C, Open MPI types) and osc_fabric/engine (C++17,
 * libfabric). Only plain types cross it. Every function is noexcept, returns an
 * oscf_status (0 = ok, < 0 = error) and reports results through out-parameters.
 *
 * Ownership: an oscf_engine is one libfabric endpoint for the whole process; windows
 * belong to an engine and must be freed before it is closed. Thread safety: every
 * call may come from any thread; the engine serializes them internally.
 */
#ifndef OSC_FABRIC_ENGINE_H
#define OSC_FABRIC_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. The MPI layer maps each to an OMPI_ERR_* in exactly one place. */
typedef enum oscf_status {
    OSCF_OK = 0,
    OSCF_ERR_RMA_SYNC = -1,     /* call not allowed in the current epoch state */
    OSCF_ERR_RMA_RANGE = -2,    /* access outside the target's window */
    OSCF_ERR_RMA_CONFLICT = -3, /* conflicting lock requests */
    OSCF_ERR_ARG = -4,          /* invalid argument (size, assert) */
    OSCF_ERR_NO_MEM = -5,
    OSCF_ERR_FABRIC = -6,      /* libfabric reported an error; the log has fi_strerror text */
    OSCF_ERR_UNSUPPORTED = -7, /* the provider or this build cannot do it */
    OSCF_ERR_NO_PROVIDER = -8, /* no usable libfabric provider */
    OSCF_ERR_INTERNAL = -9,    /* a bug: an exception escaped the engine */
    OSCF_ERR_RMA_FLAVOR = -10, /* operation not valid for this window flavor */
    OSCF_ERR_OP = -11,         /* reduction not allowed for the datatype */
    OSCF_ERR_INFO = -12,       /* malformed info value */
    OSCF_ERR_RMA_ATTACH = -13, /* overlapping attach, detach of an unknown region */
    OSCF_ERR_RANK = -14,       /* target rank outside the window's group */
    OSCF_ERR_TYPE = -15,       /* datatype not allowed for the operation */
} oscf_status;

/* Human-readable name of a status, for log messages. */
const char *oscf_status_str(int status);

/* Log sink: the MPI layer routes engine messages to opal_output. level 0 = always
 * shown (provider failures), higher = verbose. A sink gets levels 0 and 1 whatever the
 * verbosity (level 1 says why something failed; the sink may keep it for a message of
 * its own) and higher ones up to the verbosity. */
typedef void (*oscf_log_fn)(int level, const char *msg);
void oscf_set_log(oscf_log_fn fn, int verbosity);

typedef struct oscf_engine oscf_engine;
typedef struct oscf_win oscf_win;

/* AUTO: native atomics only where the provider executes them itself (a NIC), active
 * messages where its atomics are software run by the target's progress anyway (shm,
 * tcp;ofi_rxm, sockets), since ours coalesce and theirs do not. AM: active messages for
 * every type. NATIVE: native atomics wherever the provider has them and they are trusted
 * (testing and comparison). */
typedef enum oscf_acc_choice {
    OSCF_ACC_AUTO = 0,
    OSCF_ACC_AM = 1,
    OSCF_ACC_NATIVE = 2,
} oscf_acc_choice;

typedef struct oscf_engine_config {
    /* Comma-separated provider names to accept ("shm", "tcp", "tcp;ofi_rxm"), or NULL/""
     * for automatic choice. */
    const char *provider_include;
    /* True when every process of the job runs on this node: shm is then preferred. */
    int job_is_node_local;
    /* Start a thread that drives progress so passive targets are served while the
     * application computes outside MPI. */
    int progress_thread;
    /* How accumulates travel (oscf_acc_choice). Must be the same on all processes. */
    int accumulate_path;
    /* More processes on this node than CPUs to run them: waits and loops of calls give
     * the CPU away at once instead of spinning first, since the process they wait for
     * may need this very CPU. */
    int oversubscribed;
    /* Peers on this node whose window memory and state words this process maps (a node
     * segment) are reached with loads and stores (accumulates under the owner's locks,
     * lock words as CPU atomics) instead of the fabric. */
    int node_direct;
    /* The MPI library calls in from one thread at a time (its thread level is below
     * MPI_THREAD_MULTIPLE). Without a progress thread nothing else enters the engine, so
     * its lock need not be a locked exchange on every call. */
    int calls_serialized;
    /* With node_direct: puts and gets to on-node peers' MPI_Win_create and dynamic
     * windows copy between the processes with process_vm_writev/readv (cross_memory.h)
     * instead of going through the provider. */
    int cross_memory;
    /* Do not offer to describe local buffers (FI_MR_LOCAL): providers that can register
     * them themselves (rxm over verbs) then do so on every call, and those that cannot
     * (efa-direct) are not used. For comparison and as a way out. */
    int no_mr_local;
} oscf_engine_config;

/* A job's first window pays for libfabric's own start: loading it runs the constructors
 * of the provider libraries it links, and its first fi_getinfo initialises every
 * provider built into it, whatever FI_PROVIDER says (perf/README.md, osc_startup, has
 * what each costs). oscf_engine_warm_up does both, so a thread can do it while MPI_Init
 * goes on; it is thread-safe and returns OSCF_OK or why libfabric cannot serve.
 * oscf_engine_set_environment first sets the environment defaults the engine gives
 * libfabric's providers (they read them at that initialisation), from the thread that
 * may change the environment; oscf_engine_open sets them too. */
void oscf_engine_set_environment(void);
int oscf_engine_warm_up(void);

int oscf_engine_open(const oscf_engine_config *cfg, oscf_engine **out);
int oscf_engine_close(oscf_engine *eng);
/* Provider name, e.g. "shm" or "tcp;ofi_rxm"; valid while the engine is open. */
const char *oscf_engine_provider(const oscf_engine *eng);
/* True when the provider reaches only processes on this node. */
int oscf_engine_node_local_only(const oscf_engine *eng);
/* Drive progress once without blocking. Returns the number of completions handled
 * (>= 0) or a status. Safe to call from opal_progress at any time. */
int oscf_engine_progress(oscf_engine *eng);

/* ---- windows ---------------------------------------------------------------------- */

typedef enum oscf_win_flavor {
    OSCF_FLAVOR_CREATE = 1,
    OSCF_FLAVOR_ALLOCATE = 2,
    OSCF_FLAVOR_DYNAMIC = 3, /* no memory at creation; target_disp is an address */
    OSCF_FLAVOR_SHARED = 4,  /* a slice of one shared-memory segment of the node */
} oscf_win_flavor;

typedef struct oscf_win_params {
    oscf_win_flavor flavor;
    void *base;  /* CREATE: user memory; ignored for ALLOCATE */
    size_t size; /* bytes exposed by this process */
    int disp_unit;
    int comm_rank;
    int comm_size;
    /* OSCF_ORDER_* bits from the accumulate_ordering info key (see
     * oscf_parse_accumulate_ordering); the MPI default is all four. */
    unsigned accumulate_ordering;
    /* ALLOCATE and SHARED, or NULL: the node segment every process of the window on
     * this node maps (shared_create on exactly one of them, which must create it before
     * the others open it), its total size, where this process's slice of window memory
     * starts and where its window state (oscf_win_state_bytes) lies. */
    const char *shared_name;
    int shared_create;
    size_t shared_total;
    size_t shared_offset;
    size_t shared_state_offset;
} oscf_win_params;

/* Bytes of window state each process keeps in a node segment, 64-byte aligned. */
size_t oscf_win_state_bytes(int comm_size);

/* Removes a shared segment's name once every process has it mapped (the memory lives
 * until the last window using it is freed). */
int oscf_shared_unlink(const char *name);
/* Start of the node segment in this process (NULL when the window has none). */
void *oscf_win_shared_segment(const oscf_win *win);
/* MPI_Win_shared_query on a window of any flavor (MPI-4.0 allows it): rank's window
 * memory where this process can load and store it (its own, except on dynamic windows;
 * an on-node peer's MPI_Win_allocate memory in the node segment), else size 0 and NULL.
 * disp_unit is the rank's either way. OSCF_ERR_RANK outside the window's group. */
int oscf_win_memory_of(const oscf_win *win, int rank, void **base, size_t *size, int *disp_unit);

/* accumulate_ordering: which orderings of accumulates from one origin to overlapping
 * locations of one target must hold (read-after-read, read-after-write, ...). */
enum {
    OSCF_ORDER_RAR = 1,
    OSCF_ORDER_RAW = 2,
    OSCF_ORDER_WAR = 4,
    OSCF_ORDER_WAW = 8,
    OSCF_ORDER_DEFAULT = 15,
};
/* Parses "none" or a comma-separated subset of rar,raw,war,waw (case-sensitive, as the
 * standard spells them, blanks around items allowed). OSCF_ERR_INFO if malformed. */
int oscf_parse_accumulate_ordering(const char *value, unsigned *bits);
/* accumulate_ops: "same_op_no_op" (default) or "same_op", blanks around allowed;
 * *same_op_only set to 1 for the latter. OSCF_ERR_INFO if malformed. */
int oscf_parse_accumulate_ops(const char *value, unsigned *same_op_only);
/* mpi_accumulate_granularity (MPI-4.0): a non-negative count of bytes in decimal, blanks
 * around allowed. A hint only: every accumulate is atomic per element whatever it says.
 * OSCF_ERR_INFO if malformed or above UINT_MAX. */
int oscf_parse_accumulate_granularity(const char *value, unsigned *bytes);
/* Formats bits the way MPI_Win_get_info reports them; buf of at least 32 bytes. */
void oscf_format_accumulate_ordering(unsigned bits, char *buf, size_t len);

/* Window creation is collective and runs in three steps so the MPI layer can use the
 * communicator's collectives in between:
 *   1. oscf_win_create: local setup (allocate, register); returns base for ALLOCATE.
 *   2. the MPI layer allgathers oscf_win_blob_size() bytes from oscf_win_local_blob().
 *   3. oscf_win_connect with every rank's blob, in rank order.
 * Any failure in 1 or 3 must still be agreed on collectively by the caller. */
int oscf_win_create(oscf_engine *eng, const oscf_win_params *p, oscf_win **out, void **base_out);
size_t oscf_win_blob_size(const oscf_win *win);
int oscf_win_local_blob(const oscf_win *win, void *blob);
int oscf_win_connect(oscf_win *win, const void *blobs);

/* Fails with OSCF_ERR_RMA_SYNC while a passive-target epoch is open; otherwise
 * completes outstanding operations. The caller then synchronizes (barrier) and calls
 * oscf_win_destroy, which releases everything. */
int oscf_win_free_begin(oscf_win *win);
int oscf_win_destroy(oscf_win *win);

/* Request-based operations pass a notify (allowed only in passive-target epochs, else
 * OSCF_ERR_RMA_SYNC): the engine calls fn(arg, status) exactly once,
 * from inside its progress, when every part of the operation is complete (a put at the
 * target; a get or fetching accumulate with its data here) -- possibly before the call
 * returns. When the call itself returns an error, fn is never called. */
typedef void (*oscf_done_fn)(void *arg, int status);
typedef struct oscf_notify {
    oscf_done_fn fn;
    void *arg;
} oscf_notify;

/* Dynamic windows: expose [base, base+size) until detached. Any number of regions;
 * overlapping an attached region, or detaching a base that is not attached, is
 * OSCF_ERR_RMA_ATTACH. Origins find regions without the target's help. */
int oscf_win_attach(oscf_win *win, void *base, size_t size);
int oscf_win_detach(oscf_win *win, const void *base);

/* Contiguous data movement of len bytes to/from the target's window at
 * target_disp * (the target's disp_unit) + byte_offset. The engine knows every peer's
 * disp_unit and window size and checks the range. */
int oscf_win_put(oscf_win *win, int target, const void *origin, size_t len, int64_t target_disp,
                 int64_t byte_offset, const oscf_notify *notify);
int oscf_win_get(oscf_win *win, int target, void *origin, size_t len, int64_t target_disp,
                 int64_t byte_offset, const oscf_notify *notify);

/* Non-contiguous forms: n segments, each contiguous on both sides, as one operation
 * (one notify). target_offset is in bytes from target_disp * disp_unit. */
typedef struct oscf_segment {
    void *origin;
    int64_t target_offset;
    size_t len;
} oscf_segment;
int oscf_win_putv(oscf_win *win, int target, const oscf_segment *segs, size_t n, int64_t target_disp,
                  const oscf_notify *notify);
int oscf_win_getv(oscf_win *win, int target, const oscf_segment *segs, size_t n, int64_t target_disp,
                  const oscf_notify *notify);
/* Layout forms, for a put or get of many small pieces: the target's side as runs (count
 * pieces of len bytes, stride bytes apart, the first offset bytes past target_disp), the
 * origin's side as packed bytes in the same order that the caller's functions produce
 * and consume (a datatype convertor, in the MPI layer). The bytes travel in few
 * messages and the target's engine copies each piece to or from its place.
 *   pack(arg, dst, len): put only; writes the next len packed bytes at dst. Called only
 *     before oscf_win_put_packed returns.
 *   unpack(arg, src, len): get only; the operation's bytes in order, in one or more
 *     calls, from the engine's progress once all have arrived, before notify or the flush
 *     that completes the get; not called when the get failed.
 *   release(arg): may be NULL. Called exactly once after the last pack or unpack, whatever
 *     the call returns. */
/* The MPI layer uses the layout forms when a call's pieces average at most this many
 * bytes on either side: below it, a fabric operation per piece costs more than copying
 * the bytes at both ends (perf/README.md, osc_ddt, has the measurements). */
#define OSCF_PACKED_PIECE_MAX 16384
typedef struct oscf_run {
    int64_t offset;
    int64_t stride;
    size_t len;
    size_t count;
} oscf_run;
typedef struct oscf_packer {
    int (*pack)(void *arg, void *dst, size_t len);
    int (*unpack)(void *arg, const void *src, size_t len);
    void (*release)(void *arg);
    void *arg;
} oscf_packer;
int oscf_win_put_packed(oscf_win *win, int target, const oscf_run *runs, size_t n, int64_t target_disp,
                        const oscf_packer *packer, const oscf_notify *notify);
int oscf_win_get_packed(oscf_win *win, int target, const oscf_run *runs, size_t n, int64_t target_disp,
                        const oscf_packer *packer, const oscf_notify *notify);
/* A put's or get's target layout handed over a batch of runs at a time, in order: a
 * datatype of many thousand pieces is walked as the call is cut into chunks, so the
 * first chunk leaves before the last runs exist, the runs are cut while still in the
 * cache, and no array of them all is built.
 * lo and hi: the first byte any piece touches and the byte after the last (the
 * datatype's true extent); bytes: all the pieces' bytes. */
typedef struct oscf_run_source {
    /* Writes up to max of the next runs at out; returns how many, 0 at the end, or a
     * negative OSCF error. */
    long (*next)(void *arg, oscf_run *out, size_t max);
    void *arg;
    int64_t lo, hi;
    size_t bytes;
} oscf_run_source;
/* oscf_win_put_packed and oscf_win_get_packed with the runs from src, which is used
 * before these return. */
int oscf_win_put_streamed(oscf_win *win, int target, const oscf_run_source *src, int64_t target_disp,
                          const oscf_packer *packer, const oscf_notify *notify);
int oscf_win_get_streamed(oscf_win *win, int target, const oscf_run_source *src, int64_t target_disp,
                          const oscf_packer *packer, const oscf_notify *notify);
/* From this many bytes an on-node copy writes its destination's whole cache lines round
 * the cache: past the cache, every line written is otherwise read first, and beside
 * scattered pieces the prefetchers read the gaps too. Below it ordinary stores won as
 * often as they lost, and leave the lines cached for whoever reads them next
 * (perf/README.md, "Measurements behind design choices"). */
#define OSCF_UNCACHED_COPY_BYTES ((size_t)4 << 20)
/* n bytes from src to dst, as memmove: the direct road's copy of one block of
 * OSCF_UNCACHED_COPY_BYTES or more. Needs no engine. */
void oscf_copy_bytes(void *dst, const void *src, size_t n);
/* Copies the bytes of src's pieces (offsets from src_base) into dst's (from dst_base),
 * in order, with no buffer in between: an on-node derived-datatype put or get to memory
 * we map (oscf_win_direct_span) in one pass. Needs no engine. *moved is 0, and nothing
 * copied, when either layout is runs of a few bytes each, which a packer moves faster.
 * OSCF_ERR_ARG when the two hold different amounts of data; a source's error otherwise
 * (bytes copied stay). */
int oscf_copy_layout(void *dst_base, const oscf_run_source *dst, const void *src_base,
                     const oscf_run_source *src, int *moved);
/* src's pieces (offsets from base) as a packer of one stream of bytes, in order: pack
 * copies the next bytes out of the layout, unpack the next bytes into it. The origin's
 * side of a derived-datatype put or get this way moves a vector's pieces in one tight
 * loop. *taken is 0, and *out untouched, when the layout is runs of a few bytes each,
 * which a convertor packs faster. src (and what its arg points to) must stay valid
 * until out->release. */
int oscf_layout_packer(void *base, const oscf_run_source *src, oscf_packer *out, int *taken);
/* Where a put (is_put) or get of the target's bytes [offset, offset + len) past
 * target_disp can be done by the caller with loads and stores: the target is on this
 * node with its window memory in our mapping (engine/route.cpp), and the checks a put
 * or get makes (epoch, range, a pending lock grant) passed. *where is then that first
 * byte; NULL, with OSCF_OK, when the target is not reached that way (use putv/getv).
 * The copy is complete when the caller's last store is: nothing to flush. */
int oscf_win_direct_span(oscf_win *win, int target, int64_t target_disp, int64_t offset, size_t len,
                         int is_put, void **where);
/* True when oscf_win_direct_span may find some target of this window: one on this node
 * whose window memory we map. Fixed once the window is connected. */
int oscf_win_has_direct_memory(const oscf_win *win);

/* ---- accumulate family --------------------------------------------------------- */

/* Element types of the accumulate family: one per predefined MPI type class (the MPI
 * layer maps aliases such as MPI_LONG onto their fixed-width equivalent). */
typedef enum oscf_type {
    OSCF_TYPE_INT8,
    OSCF_TYPE_UINT8,
    OSCF_TYPE_INT16,
    OSCF_TYPE_UINT16,
    OSCF_TYPE_INT32,
    OSCF_TYPE_UINT32,
    OSCF_TYPE_INT64,
    OSCF_TYPE_UINT64,
    OSCF_TYPE_FLOAT,
    OSCF_TYPE_DOUBLE,
    OSCF_TYPE_LONG_DOUBLE,
    OSCF_TYPE_FLOAT_COMPLEX,
    OSCF_TYPE_DOUBLE_COMPLEX,
    OSCF_TYPE_LONG_DOUBLE_COMPLEX,
    OSCF_TYPE_BOOL,
    OSCF_TYPE_BYTE,
    /* value/index pairs for MINLOC and MAXLOC, laid out as the C structs MPI defines */
    OSCF_TYPE_FLOAT_INT,
    OSCF_TYPE_DOUBLE_INT,
    OSCF_TYPE_LONG_INT,
    OSCF_TYPE_2INT,
    OSCF_TYPE_SHORT_INT,
    OSCF_TYPE_LONG_DOUBLE_INT,
    /* Fortran's pairs, whose index is of the value's type: MPI_2REAL, MPI_2DOUBLE_PRECISION */
    OSCF_TYPE_2FLOAT,
    OSCF_TYPE_2DOUBLE,
    OSCF_TYPE_COUNT
} oscf_type;

typedef enum oscf_op {
    OSCF_OP_SUM,
    OSCF_OP_PROD,
    OSCF_OP_MIN,
    OSCF_OP_MAX,
    OSCF_OP_LAND,
    OSCF_OP_LOR,
    OSCF_OP_LXOR,
    OSCF_OP_BAND,
    OSCF_OP_BOR,
    OSCF_OP_BXOR,
    OSCF_OP_REPLACE,
    OSCF_OP_NO_OP,
    OSCF_OP_MINLOC,
    OSCF_OP_MAXLOC,
    OSCF_OP_COUNT
} oscf_op;

/* Size in bytes of one element (the C type's sizeof, padding included). */
size_t oscf_type_size(oscf_type type);

/* count elements at the target become target = origin (op) target, element-wise
 * atomically. With result != NULL this is a get_accumulate: the old target values are
 * stored there (origin may be NULL for OSCF_OP_NO_OP). Complete at flush/unlock/fence,
 * like put and get. */
int oscf_win_accumulate(oscf_win *win, int target, const void *origin, void *result, size_t count,
                        oscf_type type, oscf_op op, int64_t target_disp, int64_t byte_offset,
                        const oscf_notify *notify);
/* Non-contiguous form: n segments of whole elements, contiguous on every side. */
typedef struct oscf_acc_segment {
    const void *origin; /* NULL for OSCF_OP_NO_OP */
    void *result;       /* NULL unless fetching */
    int64_t target_offset;
    size_t count;
} oscf_acc_segment;
int oscf_win_accumulatev(oscf_win *win, int target, const oscf_acc_segment *segs, size_t n, oscf_type type,
                         oscf_op op, int64_t target_disp, const oscf_notify *notify);
/* The same segments produced one at a time, for calls whose pieces are too many to
 * list (a derived datatype's): next fills *seg and returns 1, returns 0 after the last,
 * or a negative oscf_status. */
typedef struct oscf_acc_source {
    int (*next)(void *arg, oscf_acc_segment *seg);
    void *arg;
} oscf_acc_source;
/* An accumulate whose segments src produces, when target is a peer whose window memory
 * this process maps and whose updates of type it applies itself (an on-node peer
 * reached directly): *served is then 1 and the return the call's status. Every target
 * byte of the segments lies in [span_offset, span_offset + span_len) from target_disp,
 * which is checked once, before any update. *served 0: nothing was done or checked;
 * take oscf_win_accumulatev. */
int oscf_win_accumulate_direct(oscf_win *win, int target, oscf_type type, oscf_op op, int64_t target_disp,
                               int64_t span_offset, size_t span_len, int fetching, const oscf_acc_source *src,
                               const oscf_notify *notify, int *served);
/* Whether the target's engine applies our accumulates of type itself (active messages):
 * not to ourselves, an on-node peer reached directly, or a type the provider's atomics
 * carry. Fixed once the window is connected. */
int oscf_win_engine_applies(oscf_win *win, int target, oscf_type type);
/* The layout form (oscf_win_put_packed) of a non-fetching accumulate: pieces of whole
 * elements of type, to a target whose engine applies them (oscf_win_engine_applies;
 * elsewhere OSCF_ERR_UNSUPPORTED, with nothing done: use oscf_win_accumulatev). */
int oscf_win_accumulate_packed(oscf_win *win, int target, const oscf_run *runs, size_t n, oscf_type type,
                               oscf_op op, int64_t target_disp, const oscf_packer *packer,
                               const oscf_notify *notify);
/* The same for a get_accumulate: origin packs the operands (NULL for OSCF_OP_NO_OP), and
 * the pieces' old values are unpacked by result in order once all have arrived, before
 * notify or the flush that completes the call. Both packers are released exactly once,
 * whatever the call returns. */
int oscf_win_get_accumulate_packed(oscf_win *win, int target, const oscf_run *runs, size_t n, oscf_type type,
                                   oscf_op op, int64_t target_disp, const oscf_packer *origin,
                                   const oscf_packer *result, const oscf_notify *notify);
/* One element: if target == *compare then target = *origin; *result = old target. */
int oscf_win_compare_and_swap(oscf_win *win, int target, const void *origin, const void *compare,
                              void *result, oscf_type type, int64_t target_disp, int64_t byte_offset);

/* Conditional swaps (MPIX_Rmw2, include/mpix_fabric.h), count elements each atomic:
 * the old target goes to result (may be NULL), then for a comparison, if
 * compare[i] (swap) target[i] the target becomes value[i]; for OSCF_SWAP_MASK the bits
 * set in compare[i] take value[i]'s. OSCF_SWAP_EQ is MPI_Compare_and_swap's rule.
 * Atomic with the accumulate family of the same type on the same elements. */
typedef enum oscf_swap {
    OSCF_SWAP_EQ,
    OSCF_SWAP_NE,
    OSCF_SWAP_LT,
    OSCF_SWAP_LE,
    OSCF_SWAP_GT,
    OSCF_SWAP_GE,
    OSCF_SWAP_MASK,
    OSCF_SWAP_COUNT
} oscf_swap;
/* Comparisons: integers and float/double (EQ and NE also logical and byte); masks:
 * integers and byte. */
int oscf_swap_allowed(oscf_swap swap, oscf_type type);
int oscf_win_swap(oscf_win *win, int target, const void *value, const void *compare, void *result,
                  size_t count, oscf_type type, oscf_swap swap, int64_t target_disp, int64_t byte_offset,
                  const oscf_notify *notify);

/* One read-modify-write of MPIX_Rmw/Rmw2: an accumulate (is_swap 0: origin with op, as
 * oscf_win_accumulate) or a conditional swap (is_swap 1: origin is the value stored,
 * compare the comperand or mask, as oscf_win_swap). */
typedef struct oscf_rmw {
    int is_swap;
    oscf_op op;
    oscf_swap swap;
    oscf_type type;
    size_t count;
    const void *origin;
    const void *compare;
    void *result;
    int64_t target_disp;
} oscf_rmw;
/* A one-shot epoch (MPIX_MODE_PASSIVE_EPOCH_IMPLICIT): as lock(exclusive) + the
 * operation + unlock of target, allowed only outside every access epoch to it; complete
 * when it returns. With OSCF_MODE_NOCHECK in assert_bits no lock is taken. Where the
 * target's engine applies the operation, lock, operation and release travel as one
 * message (engine/implicit_epoch.cpp). */
int oscf_win_rmw_implicit(oscf_win *win, int target, const oscf_rmw *rmw, int assert_bits);

/* How accumulates of a type travel on this engine: natively as libfabric atomics, or as
 * active messages applied by the target's engine. Decided per type, so that updates
 * from both paths can never meet on one location. */
typedef enum oscf_acc_path { OSCF_PATH_NATIVE = 1, OSCF_PATH_AM = 2 } oscf_acc_path;
oscf_acc_path oscf_engine_accumulate_path(const oscf_engine *eng, oscf_type type);

/* ---- synchronization -------------------------------------------------------------- */

/* Assert bits, same meaning as MPI_MODE_*; the MPI layer translates. */
enum {
    OSCF_MODE_NOCHECK = 1,
    OSCF_MODE_NOSTORE = 2,
    OSCF_MODE_NOPUT = 4,
    OSCF_MODE_NOPRECEDE = 8,
    OSCF_MODE_NOSUCCEED = 16,
};

/* Fence, local part: completes this origin's operations and moves the epoch state.
 * The caller barriers on the window's communicator afterwards. */
int oscf_win_fence(oscf_win *win, int assert_bits);

/* General active target. Groups are given as ranks of the window's group. start
 * waits until every target in the group has posted (unless OSCF_MODE_NOCHECK);
 * complete makes this origin's operations complete at those targets and tells them;
 * wait blocks, and test (*done) checks, until every origin in the post group
 * completed. */
int oscf_win_start(oscf_win *win, const int *group, int n, int assert_bits);
int oscf_win_complete(oscf_win *win);
int oscf_win_post(oscf_win *win, const int *group, int n, int assert_bits);
int oscf_win_wait(oscf_win *win);
int oscf_win_test(oscf_win *win, int *done);

int oscf_win_lock(oscf_win *win, int target, int exclusive, int assert_bits);
int oscf_win_unlock(oscf_win *win, int target);
int oscf_win_lock_all(oscf_win *win, int assert_bits);
int oscf_win_unlock_all(oscf_win *win);
/* target < 0 means all targets. Local variants wait only for origin buffers to be
 * reusable. */
int oscf_win_flush(oscf_win *win, int target);
int oscf_win_flush_local(oscf_win *win, int target);
int oscf_win_sync(oscf_win *win);

/* ---- introspection for tests ------------------------------------------------------ */
typedef struct oscf_win_stats {
    uint64_t puts, gets;          /* fabric writes/reads posted (after chunking) */
    uint64_t puts_batched;        /* small puts sent inside active-message batches */
    uint64_t gets_as_messages;    /* small gets served by an active message, not fi_read */
    uint64_t gather_messages;     /* kAmGather messages: packed pieces of many-piece gets */
    uint64_t lock_attempts;       /* remote atomics issued to acquire locks */
    uint64_t injected;            /* writes posted with FI_INJECT */
    uint64_t native_atomics;      /* fi_atomic/fi_fetch_atomic/fi_compare_atomic posted */
    uint64_t am_requests;         /* accumulate chunks sent as active messages */
    uint64_t am_batches;          /* messages that carried batched accumulates */
    uint64_t am_local;            /* active-message accumulates applied to ourselves */
    uint64_t ordering_waits;      /* times an accumulate waited for earlier ones */
    uint64_t fence_waits_skipped; /* fences that trusted MPI_MODE_NOPRECEDE */
    uint64_t direct_rma;          /* puts and gets to on-node peers done as memory copies */
    uint64_t cross_rma;           /* of those, to MPI_Win_create and dynamic windows by
                                   * cross-memory attach */
    uint64_t direct_atomics;      /* accumulate segments and compare-and-swaps applied under
                                   * the accumulate locks, on-node peers and ourselves */
    uint64_t direct_words;        /* lock and synchronization words changed directly */
    uint64_t layout_messages;     /* messages of put_packed/get_packed (packed_layout.cpp) */
    uint64_t lock_waits;          /* lock acquisitions and grants that had to wait */
    uint64_t lock_wait_ns;        /* time those waited, in nanoseconds */
    uint64_t lock_retries;        /* lock requests held at this target tried again */
    uint64_t rma_bytes;           /* bytes of puts and gets moved by fi_write/fi_read */
    uint64_t direct_bytes;        /* bytes of puts, gets and accumulates done directly on-node */
    uint64_t layout_bytes;        /* bytes of the layout forms (packed_layout.cpp) */
} oscf_win_stats;
int oscf_win_get_stats(const oscf_win *win, oscf_win_stats *out);

/* Totals of the whole engine (every window it served, freed ones included) and what
 * belongs to no window: the MPI_T performance variables. */
typedef struct oscf_engine_stats {
    oscf_win_stats windows;
    uint64_t eagain_retries; /* posts the provider refused with -FI_EAGAIN, retried later */
    uint64_t message_bytes;  /* payload bytes of active-message requests sent */
    uint64_t thread_wakeups; /* progress-thread rounds that found work */
    /* Under FI_MR_LOCAL: local buffers described by the engine's own regions, buffers the
     * registrar was asked for, and regions registered for registrars (its misses). */
    uint64_t local_own_regions;
    uint64_t local_acquired;
    uint64_t local_registered;
} oscf_engine_stats;
int oscf_engine_get_stats(oscf_engine *eng, oscf_engine_stats *out);

/* Memory registrations alive in this process (all engines and windows) and their
 * bytes: what a leak check compares before and after creating and freeing windows.
 * Regions registered for local descriptors (FI_MR_LOCAL), which a registration cache
 * keeps after use, are counted apart, by oscf_engine_local_registration_stats. */
int oscf_engine_registration_stats(uint64_t *count, uint64_t *bytes);
int oscf_engine_local_registration_stats(uint64_t *count, uint64_t *bytes);

/* ---- local descriptors (FI_MR_LOCAL) ------------------------------------------------ */

/* Where the provider returned FI_MR_LOCAL, every local buffer of a data operation needs
 * the descriptor of a registered region (osc_fabric/engine/local_memory.h). The engine
 * describes its own regions itself; for any other buffer it asks a registrar. acquire
 * fills *desc and a *token that release gets back once the operation completed; it
 * returns 0 or a negative libfabric status. Both are called with the engine lock held,
 * from inside engine calls. Without a registrar the engine registers a buffer for the
 * one operation and closes the region after it. */
typedef struct oscf_local_registrar {
    void *ctx;
    int (*acquire)(void *ctx, void *buf, size_t len, void **desc, void **token);
    void (*release)(void *ctx, void *token);
    /* Optional: the engine is done with the registrar (replaced, or the engine closing
     * once its endpoint is closed and every token given back; the domain is still open,
     * so oscf_engine_deregister_local may still be called from here). */
    void (*close)(void *ctx);
} oscf_local_registrar;
/* True when the provider demands descriptors for local buffers. */
int oscf_engine_local_descriptors(const oscf_engine *eng);
/* Installs r (copied), or the engine's own register-per-operation one for NULL. */
int oscf_engine_set_local_registrar(oscf_engine *eng, const oscf_local_registrar *r);
/* What a registrar registers with: [base, base+len) for local access, *handle to close it
 * by and *desc to post with. Only from inside a registrar's acquire. */
int oscf_engine_register_local(oscf_engine *eng, void *base, size_t len, void **handle, void **desc);
/* Closes what oscf_engine_register_local made. From inside acquire, release or close. */
int oscf_engine_deregister_local(oscf_engine *eng, void *handle);

#ifdef __cplusplus
}
#endif

#endif
