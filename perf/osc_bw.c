/*
 * osc_bw.c - MPI one-sided (RMA) bandwidth, bi-directional bandwidth and
 * message-rate benchmark for the osc/fabric performance suite.
 *
 * Measures what osu_put_bw, osu_get_bw and osu_put_bibw measure, plus a
 * put message rate, for every window flavor and synchronization mode.
 * Independent implementation: only the output format follows OSU so that
 * results can be diffed with OSU's.
 *
 * One iteration issues a window of W operations of S bytes each (to W
 * consecutive, non-overlapping target offsets) and then synchronizes once.
 * Exactly two processes: for put_bw, get_bw and put_rate rank 0 is the
 * origin and rank 1 the target; for put_bibw both ranks are both.
 *
 * Exit status: 0 success, 1 usage/setup error, 2 MPI error (reported with
 * MPI_Error_string; the job is then ended with MPI_Abort), 3 data check (-c)
 * failed.
 *
 * Plain MPI-3 + C11, no other dependency.
 */

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 1
#define EXIT_MPI_ERROR 2
#define EXIT_CHECK_FAILED 3

#define DEFAULT_MIN_SIZE 1L
#define DEFAULT_MAX_SIZE (1L << 22) /* 4 MiB, like OSU */
#define DEFAULT_RATE_SIZE 8L        /* put_rate without -m */
#define DEFAULT_WINDOW 64L          /* OSU's window size */
#define MAX_WINDOW (1L << 20)
#define MAX_ALLOWED_BYTES (1L << 30) /* W * MAX, per buffer */
#define LARGE_MESSAGE_SIZE 8192L    /* above this: fewer iterations */
#define ITERS_SMALL 100L            /* OSU's bandwidth-test defaults */
#define WARMUP_SMALL 10L
#define ITERS_LARGE 20L
#define WARMUP_LARGE 2L
#define GUARD_BYTES 64L             /* checked for overruns in -c mode */
#define WIN_ALIGN 4096L
#define MAX_REPORTED_MISMATCHES 5

enum test_kind { T_PUT_BW, T_GET_BW, T_PUT_BIBW, T_PUT_RATE, T_COUNT_ };
enum win_flavor { FLAVOR_CREATE, FLAVOR_ALLOCATE, FLAVOR_DYNAMIC, FLAVOR_COUNT_ };
enum sync_mode {
    SYNC_FENCE, SYNC_LOCK, SYNC_FLUSH, SYNC_FLUSH_LOCAL, SYNC_LOCK_ALL, SYNC_PSCW,
    SYNC_COUNT_
};

static const char *const test_names[T_COUNT_] = {
    "put_bw", "get_bw", "put_bibw", "put_rate"
};
static const char *const test_titles[T_COUNT_] = {
    "MPI_Put bandwidth", "MPI_Get bandwidth", "MPI_Put bi-directional bandwidth",
    "MPI_Put message rate"
};
static const char *const flavor_names[FLAVOR_COUNT_] = {
    "create", "allocate", "dynamic"
};
static const char *const flavor_mpi_names[FLAVOR_COUNT_] = {
    "MPI_Win_create", "MPI_Win_allocate", "MPI_Win_create_dynamic"
};
static const char *const sync_names[SYNC_COUNT_] = {
    "fence", "lock", "flush", "flush_local", "lock_all", "pscw"
};
/* What one iteration does, as printed in the header. */
static const char *const sync_descr[SYNC_COUNT_] = {
    "MPI_Win_fence, W ops, MPI_Win_fence",
    "MPI_Win_lock, W ops, MPI_Win_unlock",
    "W ops, MPI_Win_flush (one lock held for the whole loop)",
    "W ops, MPI_Win_flush_local (one lock held for the whole loop)",
    "MPI_Win_lock_all, W ops, MPI_Win_unlock_all",
    "MPI_Win_start, W ops, MPI_Win_complete / MPI_Win_post, MPI_Win_wait"
};

struct options {
    enum test_kind test;
    enum win_flavor flavor;
    enum sync_mode sync;
    int sync_given;         /* -s seen: put_bibw defaults to pscw like OSU */
    int range_given;        /* -m seen: put_rate defaults to 8 bytes */
    long min_size, max_size;
    long window;            /* operations per synchronization */
    long iters, warmup;     /* < 0: OSU-like defaults depending on size */
    int check;
    int exclusive;
};

struct bench {
    struct options opt;
    int rank, peer;
    int origin;             /* this rank issues operations */
    int target;             /* this rank's window is accessed by the peer */
    MPI_Win win;
    unsigned char *wbuf;    /* local window memory */
    unsigned char *wmem;    /* memory we allocated for create/dynamic */
    unsigned char *lbuf;    /* origin buffer: put source / get destination */
    size_t wbytes;          /* bytes of wbuf and lbuf */
    MPI_Aint peer_disp;     /* target displacement of the peer's window */
    MPI_Group peer_group;
    long size;              /* current message size in bytes */
};

/* ------------------------------------------------------------------------ */
/* error handling                                                           */

static int g_rank = -1;
static const struct options *g_opt;

static void mpi_fail(int rc, const char *call, int line, const char *hint)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, eclass = 0;

    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) {
        snprintf(msg, sizeof msg, "unknown MPI error code %d", rc);
    }
    if (MPI_Error_class(rc, &eclass) != MPI_SUCCESS) eclass = -1;
    /* 'call' is the stringified call expression: print the function name. */
    fprintf(stderr, "osc_bw: rank %d: %.*s failed (osc_bw.c:%d): %s "
                    "[error code %d, class %d]\n",
            g_rank, (int)strcspn(call, "( "), call, line, msg, rc, eclass);
    if (g_opt != NULL) {
        fprintf(stderr, "osc_bw: rank %d: while running -t %s -w %s -s %s\n", g_rank,
                test_names[g_opt->test], flavor_names[g_opt->flavor],
                sync_names[g_opt->sync]);
    }
    if (hint != NULL) fprintf(stderr, "osc_bw: rank %d: %s\n", g_rank, hint);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, EXIT_MPI_ERROR);
    exit(EXIT_MPI_ERROR); /* not reached */
}

#define MPI_CK(call)                                                        \
    do {                                                                    \
        int rc_ = (call);                                                   \
        if (rc_ != MPI_SUCCESS) mpi_fail(rc_, #call, __LINE__, NULL);       \
    } while (0)

#define MPI_CK_HINT(call, hint)                                             \
    do {                                                                    \
        int rc_ = (call);                                                   \
        if (rc_ != MPI_SUCCESS) mpi_fail(rc_, #call, __LINE__, (hint));     \
    } while (0)

static void *xalloc(size_t bytes)
{
    size_t rounded = (bytes + WIN_ALIGN - 1) / WIN_ALIGN * WIN_ALIGN;
    void *p = aligned_alloc(WIN_ALIGN, rounded ? rounded : WIN_ALIGN);

    if (p == NULL) {
        fprintf(stderr, "osc_bw: rank %d: out of memory (%zu bytes)\n", g_rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, EXIT_USAGE);
        exit(EXIT_USAGE);
    }
    return p;
}

/* ------------------------------------------------------------------------ */
/* option parsing                                                           */

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: mpirun -np 2 osc_bw [options]\n"
        "  -t TEST    put_bw|get_bw|put_bibw|put_rate             (default put_bw)\n"
        "  -w FLAVOR  create|allocate|dynamic                     (default allocate)\n"
        "  -s SYNC    fence|lock|flush|flush_local|lock_all|pscw  (default flush;\n"
        "             put_bibw: pscw|fence|flush|lock_all, default pscw)\n"
        "  -m [MIN:]MAX  message sizes in bytes, powers of two from MIN to MAX\n"
        "             (default %ld:%ld; put_rate: %ld)\n"
        "  -W WINDOW  operations issued per synchronization (default %ld)\n"
        "  -i ITERS   timed iterations (windows) per size (default %ld, %ld above %ld B)\n"
        "  -x WARMUP  untimed warmup iterations per size (default %ld, %ld above %ld B)\n"
        "  -c         check mode: verify every byte moved after each size,\n"
        "             exit %d on mismatch\n"
        "  -e         use MPI_LOCK_EXCLUSIVE for lock/flush/flush_local\n"
        "             (default MPI_LOCK_SHARED, like OSU)\n"
        "  -h         this help\n",
        DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE, DEFAULT_RATE_SIZE, DEFAULT_WINDOW,
        ITERS_SMALL, ITERS_LARGE, LARGE_MESSAGE_SIZE,
        WARMUP_SMALL, WARMUP_LARGE, LARGE_MESSAGE_SIZE, EXIT_CHECK_FAILED);
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    long v;

    if (s == NULL || *s == '\0') return -1;
    v = strtol(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int parse_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(s, names[i]) == 0) return i;
    }
    return -1;
}

static int parse_range(const char *s, long *min, long *max)
{
    char buf[64];
    const char *colon = strchr(s, ':');

    if (colon == NULL) return parse_long(s, 0, MAX_ALLOWED_BYTES, max);
    if ((size_t)(colon - s) >= sizeof buf) return -1;
    memcpy(buf, s, (size_t)(colon - s));
    buf[colon - s] = '\0';
    if (buf[0] != '\0' && parse_long(buf, 0, MAX_ALLOWED_BYTES, min) != 0) return -1;
    if (colon[1] != '\0' && parse_long(colon + 1, 0, MAX_ALLOWED_BYTES, max) != 0) return -1;
    return 0;
}

static int bibw_sync_ok(enum sync_mode s)
{
    return s == SYNC_PSCW || s == SYNC_FENCE || s == SYNC_FLUSH || s == SYNC_LOCK_ALL;
}

/* Returns 0 to run, 1 for -h, -1 on error (message printed on rank 0). */
static int parse_options(int argc, char **argv, int rank, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->test = T_PUT_BW;
    o->flavor = FLAVOR_ALLOCATE;
    o->sync = SYNC_FLUSH;
    o->min_size = DEFAULT_MIN_SIZE;
    o->max_size = DEFAULT_MAX_SIZE;
    o->window = DEFAULT_WINDOW;
    o->iters = -1;
    o->warmup = -1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        int bad = 0, idx;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (rank == 0) usage(stdout);
            return 1;
        } else if (strcmp(a, "-c") == 0) {
            o->check = 1;
            continue;
        } else if (strcmp(a, "-e") == 0) {
            o->exclusive = 1;
            continue;
        }
        if (strlen(a) != 2 || a[0] != '-' || strchr("twsmWix", a[1]) == NULL) {
            if (rank == 0) fprintf(stderr, "osc_bw: unknown option '%s'\n", a);
            goto fail;
        }
        if (v == NULL) {
            if (rank == 0) fprintf(stderr, "osc_bw: option %s needs an argument\n", a);
            goto fail;
        }
        i++;
        switch (a[1]) {
        case 't':
            idx = parse_name(v, test_names, T_COUNT_);
            if (idx < 0) bad = 1; else o->test = (enum test_kind)idx;
            break;
        case 'w':
            idx = parse_name(v, flavor_names, FLAVOR_COUNT_);
            if (idx < 0) bad = 1; else o->flavor = (enum win_flavor)idx;
            break;
        case 's':
            idx = parse_name(v, sync_names, SYNC_COUNT_);
            if (idx < 0) bad = 1; else o->sync = (enum sync_mode)idx;
            o->sync_given = 1;
            break;
        case 'm':
            bad = parse_range(v, &o->min_size, &o->max_size) != 0;
            o->range_given = 1;
            break;
        case 'W':
            bad = parse_long(v, 1, MAX_WINDOW, &o->window) != 0;
            break;
        case 'i':
            bad = parse_long(v, 1, 1000000000L, &o->iters) != 0;
            break;
        case 'x':
            bad = parse_long(v, 0, 1000000000L, &o->warmup) != 0;
            break;
        default:
            bad = 1;
        }
        if (bad) {
            if (rank == 0) fprintf(stderr, "osc_bw: invalid value '%s' for %s\n", v, a);
            goto fail;
        }
    }

    if (o->test == T_PUT_RATE && !o->range_given) {
        o->min_size = o->max_size = DEFAULT_RATE_SIZE;
    }
    if (o->test == T_PUT_BIBW && !o->sync_given) o->sync = SYNC_PSCW;
    if (o->test == T_PUT_BIBW && !bibw_sync_ok(o->sync)) {
        if (rank == 0) {
            fprintf(stderr, "osc_bw: -t put_bibw supports -s pscw, fence, flush or "
                            "lock_all, not %s\n", sync_names[o->sync]);
        }
        goto fail;
    }
    if (o->min_size > o->max_size) {
        if (rank == 0) {
            fprintf(stderr, "osc_bw: -m: MIN (%ld) is larger than MAX (%ld)\n",
                    o->min_size, o->max_size);
        }
        goto fail;
    }
    if (o->max_size > MAX_ALLOWED_BYTES / o->window) {
        if (rank == 0) {
            fprintf(stderr, "osc_bw: -W %ld times -m MAX %ld exceeds %ld bytes per buffer\n",
                    o->window, o->max_size, MAX_ALLOWED_BYTES);
        }
        goto fail;
    }
    return 0;

fail:
    if (rank == 0) usage(stderr);
    return -1;
}

/* ------------------------------------------------------------------------ */
/* data patterns                                                            */

/* Every byte of a window's worth of data differs by position, owner and
 * message size, so misplaced operations and stale data from a previous size
 * are caught.  Generated one 64-bit word at a time to keep setup cheap. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static uint64_t pattern_seed(int owner, long size)
{
    return mix64(((uint64_t)(owner + 1) << 48) ^ (uint64_t)size);
}

/* Variants of one pattern: the data expected after the timed loop, the data
 * the warmup moves (so a timed loop that moved nothing is caught), and the
 * poison written where data must (not yet) arrive.  Each differs from the
 * expected data in every byte. */
enum { PAT_DATA = 0x00, PAT_WARMUP = 0xa5, PAT_POISON = 0xff };

static void fill_pattern(unsigned char *buf, long from, long to, uint64_t seed, int xor_mask)
{
    uint64_t w = 0;

    for (long j = from; j < to; j++) {
        if (j == from || (j & 7) == 0) w = mix64(seed + (uint64_t)(j >> 3));
        buf[j] = (unsigned char)((w >> (8 * (j & 7))) ^ (uint64_t)xor_mask);
    }
}

static long check_pattern(const struct bench *b, const char *what, const unsigned char *buf,
                          long from, long to, uint64_t seed, int xor_mask, long nbad)
{
    uint64_t w = 0;

    for (long j = from; j < to; j++) {
        unsigned char want;
        if (j == from || (j & 7) == 0) w = mix64(seed + (uint64_t)(j >> 3));
        want = (unsigned char)((w >> (8 * (j & 7))) ^ (uint64_t)xor_mask);
        if (buf[j] == want) continue;
        if (nbad < MAX_REPORTED_MISMATCHES) {
            const long op = b->size > 0 ? j / b->size : 0;
            fprintf(stderr, "osc_bw: CHECK FAILED: rank %d, -t %s -s %s size %ld: "
                            "%s[%ld] (op %ld%s) = 0x%02x, expected 0x%02x\n",
                    b->rank, test_names[b->opt.test], sync_names[b->opt.sync], b->size,
                    what, j, op, op >= b->opt.window ? ", guard" : "", buf[j], want);
        }
        nbad++;
    }
    return nbad;
}

/* ------------------------------------------------------------------------ */
/* window setup                                                             */

static void create_window(struct bench *b)
{
    static const char hint[] =
        "the window flavor is probably not supported by the osc component in "
        "use (select another one with --mca osc ..., or another -w flavor)";
    const MPI_Aint wsize = (MPI_Aint)b->wbytes;

    b->wmem = NULL;
    switch (b->opt.flavor) {
    case FLAVOR_CREATE:
        b->wmem = xalloc(b->wbytes);
        b->wbuf = b->wmem;
        MPI_CK_HINT(MPI_Win_create(b->wbuf, wsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                   &b->win), hint);
        break;
    case FLAVOR_ALLOCATE:
        MPI_CK_HINT(MPI_Win_allocate(wsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                     &b->wbuf, &b->win), hint);
        break;
    case FLAVOR_DYNAMIC:
        b->wmem = xalloc(b->wbytes);
        b->wbuf = b->wmem;
        MPI_CK_HINT(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &b->win), hint);
        break;
    default:
        break;
    }
    MPI_CK(MPI_Win_set_errhandler(b->win, MPI_ERRORS_RETURN));

    b->peer_disp = 0;
    if (b->opt.flavor == FLAVOR_DYNAMIC) {
        MPI_Aint mine;

        MPI_CK_HINT(MPI_Win_attach(b->win, b->wbuf, wsize), hint);
        MPI_CK(MPI_Get_address(b->wbuf, &mine));
        MPI_CK(MPI_Sendrecv(&mine, 1, MPI_AINT, b->peer, 0, &b->peer_disp, 1, MPI_AINT,
                            b->peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

static void free_window(struct bench *b)
{
    if (b->opt.flavor == FLAVOR_DYNAMIC) {
        /* The peer must be done with our memory before it goes away. */
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_CK(MPI_Win_detach(b->win, b->wbuf));
    }
    MPI_CK(MPI_Win_free(&b->win));
    free(b->wmem);
    b->wmem = NULL;
    b->wbuf = NULL;
}

/* ------------------------------------------------------------------------ */
/* per-size data set-up and verification                                    */

static int is_get(const struct bench *b) { return b->opt.test == T_GET_BW; }

/* Bytes one window of operations covers, plus the guard behind it. */
static long span(const struct bench *b) { return b->opt.window * b->size; }

/* Before the warmup: origin buffer and window for this size. */
static void setup_size(struct bench *b)
{
    const long n = span(b), end = n + GUARD_BYTES;

    if (b->origin) {
        if (is_get(b)) {
            fill_pattern(b->lbuf, 0, end, pattern_seed(b->peer, b->size), PAT_POISON);
        } else {
            fill_pattern(b->lbuf, 0, end, pattern_seed(b->rank, b->size), PAT_WARMUP);
        }
    }
    /* Window memory is written inside an exclusive self-lock epoch so its
     * public copy is consistent before the peer starts. */
    MPI_CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, b->rank, 0, b->win));
    if (is_get(b)) {
        fill_pattern(b->wbuf, 0, end, pattern_seed(b->rank, b->size), PAT_DATA);
    } else {
        fill_pattern(b->wbuf, 0, end, pattern_seed(b->peer, b->size), PAT_POISON);
    }
    MPI_CK(MPI_Win_unlock(b->rank, b->win));
}

/* Between warmup and timed loop (all operations complete): the timed loop
 * must move the final data itself, so warmup results cannot pass the check. */
static void setup_timed(struct bench *b)
{
    const long n = span(b);

    if (!b->origin) return;
    if (is_get(b)) {
        fill_pattern(b->lbuf, 0, n, pattern_seed(b->peer, b->size), PAT_POISON);
    } else {
        fill_pattern(b->lbuf, 0, n, pattern_seed(b->rank, b->size), PAT_DATA);
    }
}

/* After the timed loop and a barrier.  Returns the number of bad bytes. */
static long verify_size(struct bench *b)
{
    const long n = span(b), end = n + GUARD_BYTES;
    const uint64_t mine = pattern_seed(b->rank, b->size);
    const uint64_t peers = pattern_seed(b->peer, b->size);
    long nbad = 0;

    if (b->origin && is_get(b)) {
        nbad = check_pattern(b, "origin buffer", b->lbuf, 0, n, peers, PAT_DATA, nbad);
        nbad = check_pattern(b, "origin buffer", b->lbuf, n, end, peers, PAT_POISON, nbad);
    }
    if (b->target) {
        MPI_CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, b->rank, 0, b->win));
        if (is_get(b)) {
            /* A get must leave the target untouched. */
            nbad = check_pattern(b, "window", b->wbuf, 0, end, mine, PAT_DATA, nbad);
        } else {
            nbad = check_pattern(b, "window", b->wbuf, 0, n, peers, PAT_DATA, nbad);
            nbad = check_pattern(b, "window", b->wbuf, n, end, peers, PAT_POISON, nbad);
        }
        MPI_CK(MPI_Win_unlock(b->rank, b->win));
    }
    if (nbad > MAX_REPORTED_MISMATCHES) {
        fprintf(stderr, "osc_bw: CHECK FAILED: rank %d: %ld bad bytes in total\n",
                b->rank, nbad);
    }
    fflush(stderr);
    return nbad;
}

/* ------------------------------------------------------------------------ */
/* the measured loop                                                        */

/* W operations of 'size' bytes at consecutive offsets. */
static inline void issue_window(struct bench *b)
{
    const int cnt = (int)b->size;

    for (long j = 0; j < b->opt.window; j++) {
        unsigned char *local = b->lbuf + j * b->size;
        const MPI_Aint disp = b->peer_disp + (MPI_Aint)(j * b->size);
        if (is_get(b)) {
            MPI_CK(MPI_Get(local, cnt, MPI_CHAR, b->peer, disp, cnt, MPI_CHAR, b->win));
        } else {
            MPI_CK(MPI_Put(local, cnt, MPI_CHAR, b->peer, disp, cnt, MPI_CHAR, b->win));
        }
    }
}

/* n iterations; every epoch this opens is closed again on return, so the
 * caller may use barriers and self-locks between calls. */
static void run_iterations(struct bench *b, long n)
{
    const int lock_type = b->opt.exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
    const int peer = b->peer;

    switch (b->opt.sync) {
    case SYNC_LOCK:
        if (!b->origin) return;
        for (long i = 0; i < n; i++) {
            MPI_CK(MPI_Win_lock(lock_type, peer, 0, b->win));
            issue_window(b);
            MPI_CK(MPI_Win_unlock(peer, b->win));
        }
        break;
    case SYNC_FLUSH:
    case SYNC_FLUSH_LOCAL:
        if (!b->origin) return;
        MPI_CK(MPI_Win_lock(lock_type, peer, 0, b->win));
        for (long i = 0; i < n; i++) {
            issue_window(b);
            if (b->opt.sync == SYNC_FLUSH) {
                MPI_CK(MPI_Win_flush(peer, b->win));
            } else {
                MPI_CK(MPI_Win_flush_local(peer, b->win));
            }
        }
        MPI_CK(MPI_Win_unlock(peer, b->win));
        break;
    case SYNC_LOCK_ALL:
        if (!b->origin) return;
        for (long i = 0; i < n; i++) {
            MPI_CK(MPI_Win_lock_all(0, b->win));
            issue_window(b);
            MPI_CK(MPI_Win_unlock_all(b->win));
        }
        break;
    case SYNC_FENCE:
        for (long i = 0; i < n; i++) {
            MPI_CK(MPI_Win_fence(0, b->win));
            if (b->origin) issue_window(b);
            MPI_CK(MPI_Win_fence(0, b->win));
        }
        /* Close the fence sequence so passive-target calls are legal again. */
        MPI_CK(MPI_Win_fence(MPI_MODE_NOSUCCEED, b->win));
        break;
    case SYNC_PSCW:
        for (long i = 0; i < n; i++) {
            if (b->target) MPI_CK(MPI_Win_post(b->peer_group, 0, b->win));
            if (b->origin) {
                MPI_CK(MPI_Win_start(b->peer_group, 0, b->win));
                issue_window(b);
                MPI_CK(MPI_Win_complete(b->win));
            }
            if (b->target) MPI_CK(MPI_Win_wait(b->win));
        }
        break;
    default:
        break;
    }
}

/* Returns the seconds the timed loop took (valid on rank 0). */
static double run_size(struct bench *b, long warmup, long iters)
{
    double t0, elapsed, result = 0.0;

    setup_size(b);
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    run_iterations(b, warmup);
    setup_timed(b);
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));

    t0 = MPI_Wtime();
    run_iterations(b, iters);
    elapsed = MPI_Wtime() - t0;
    /* The fence closing the timed sequence is not timed, as in OSU. */

    if (b->opt.test == T_PUT_BIBW) {
        /* Both ranks move data; the slower one bounds the bandwidth. */
        MPI_CK(MPI_Reduce(&elapsed, &result, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    } else {
        result = elapsed;
    }
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    return result;
}

/* ------------------------------------------------------------------------ */

static void print_header(const struct bench *b)
{
    const struct options *o = &b->opt;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    const long is = o->iters > 0 ? o->iters : ITERS_SMALL;
    const long ws = o->warmup >= 0 ? o->warmup : WARMUP_SMALL;
    const long il = o->iters > 0 ? o->iters : ITERS_LARGE;
    const long wl = o->warmup >= 0 ? o->warmup : WARMUP_LARGE;

    printf("# osc_bw: %s test (osc/fabric perf suite, OSU-compatible output)\n",
           test_titles[o->test]);
    printf("# Window creation: %s\n", flavor_mpi_names[o->flavor]);
    printf("# Synchronization: %s%s\n", sync_descr[o->sync],
           o->test == T_PUT_BIBW ? " (both ranks)" : "");
    printf("# Datatype: MPI_CHAR\n");
    if (o->sync == SYNC_LOCK || o->sync == SYNC_FLUSH || o->sync == SYNC_FLUSH_LOCAL) {
        printf("# Lock type: %s\n", o->exclusive ? "MPI_LOCK_EXCLUSIVE" : "MPI_LOCK_SHARED");
    }
    printf("# Window size: W = %ld operations per synchronization\n", o->window);
    if (is == il && ws == wl) {
        printf("# Iterations: %ld timed + %ld warmup per size\n", is, ws);
    } else {
        printf("# Iterations: %ld timed + %ld warmup per size, %ld + %ld above %ld bytes\n",
               is, ws, il, wl, LARGE_MESSAGE_SIZE);
    }
    if (o->test == T_PUT_RATE) {
        printf("# Rate: W * iterations / time of the timed loop on rank 0\n");
    } else if (o->test == T_PUT_BIBW) {
        printf("# Bandwidth: 2 * W * size * iterations / slower rank's time, 1 MB = 10^6 bytes\n");
    } else {
        printf("# Bandwidth: W * size * iterations / time on rank 0, 1 MB = 10^6 bytes\n");
    }
    if (o->check) printf("# Check mode: data verified after every size\n");
    if (MPI_Get_library_version(lib, &len) == MPI_SUCCESS) {
        char *nl = strchr(lib, '\n');
        if (nl != NULL) *nl = '\0';
        printf("# MPI library: %s\n", lib);
    }
    if (o->test == T_PUT_RATE) {
        printf("# Size      Messages/s\n");
    } else {
        printf("# Size      Bandwidth (MB/s)\n");
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct bench b;
    int nprocs, prc, rc = 0;

    memset(&b, 0, sizeof b);
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_CK(MPI_Comm_rank(MPI_COMM_WORLD, &b.rank));
    MPI_CK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    g_rank = b.rank;

    prc = parse_options(argc, argv, b.rank, &b.opt);
    if (prc != 0) {
        MPI_Finalize();
        return prc > 0 ? 0 : EXIT_USAGE;
    }
    g_opt = &b.opt;

    if (nprocs != 2) {
        if (b.rank == 0) {
            fprintf(stderr, "osc_bw: this benchmark needs exactly 2 MPI processes, got %d\n",
                    nprocs);
        }
        MPI_Finalize();
        return EXIT_USAGE;
    }

    b.peer = 1 - b.rank;
    if (b.opt.test == T_PUT_BIBW) {
        b.origin = b.target = 1;
    } else {
        b.origin = b.rank == 0;
        b.target = b.rank == 1;
    }
    b.wbytes = (size_t)(b.opt.window * b.opt.max_size + GUARD_BYTES);
    b.lbuf = xalloc(b.wbytes);
    memset(b.lbuf, 0, b.wbytes);

    {
        MPI_Group world_group;
        MPI_CK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
        MPI_CK(MPI_Group_incl(world_group, 1, &b.peer, &b.peer_group));
        MPI_CK(MPI_Group_free(&world_group));
    }

    create_window(&b);
    if (b.rank == 0) print_header(&b);

    for (long size = b.opt.min_size; size <= b.opt.max_size; size = size ? size * 2 : 1) {
        const int large = size > LARGE_MESSAGE_SIZE;
        const long iters = b.opt.iters > 0 ? b.opt.iters : (large ? ITERS_LARGE : ITERS_SMALL);
        const long warmup = b.opt.warmup >= 0 ? b.opt.warmup
                                              : (large ? WARMUP_LARGE : WARMUP_SMALL);
        const double ops = (double)b.opt.window * (double)iters;
        double t;

        b.size = size;
        t = run_size(&b, warmup, iters);

        if (b.opt.check) {
            long bad = verify_size(&b), any = 0;
            MPI_CK(MPI_Allreduce(&bad, &any, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
            if (any != 0) {
                if (b.rank == 0) {
                    fprintf(stderr, "osc_bw: CHECK FAILED for -t %s -w %s -s %s size %ld "
                                    "(%ld bad bytes)\n", test_names[b.opt.test],
                            flavor_names[b.opt.flavor], sync_names[b.opt.sync], size, any);
                }
                rc = EXIT_CHECK_FAILED;
                break;
            }
        }
        if (b.rank == 0) {
            double value;
            if (b.opt.test == T_PUT_RATE) {
                value = ops / t;
            } else {
                value = (double)size * ops / 1e6 / t;
                if (b.opt.test == T_PUT_BIBW) value *= 2.0;
            }
            printf("%-10ld%18.2f\n", size, value);
            fflush(stdout);
        }
    }

    if (b.rank == 0 && b.opt.check && rc == 0) {
        printf("# Check: passed\n");
        fflush(stdout);
    }

    free_window(&b);
    MPI_CK(MPI_Group_free(&b.peer_group));
    free(b.lbuf);
    MPI_Finalize();
    return rc;
}
