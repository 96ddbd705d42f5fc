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

#include "bench.h"

#define DEFAULT_MIN_SIZE 1L
#define DEFAULT_MAX_SIZE (1L << 22) /* 4 MiB, like OSU */
#define DEFAULT_RATE_SIZE 8L        /* put_rate without -m */
#define DEFAULT_WINDOW 64L          /* OSU's window size */
#define MAX_WINDOW (1L << 20)
#define MAX_ALLOWED_BYTES (1L << 30) /* W * MAX, per buffer */
#define LARGE_MESSAGE_SIZE 8192L     /* above this: fewer iterations */
#define ITERS_SMALL 100L             /* OSU's bandwidth-test defaults */
#define WARMUP_SMALL 10L
#define ITERS_LARGE 20L
#define WARMUP_LARGE 2L
#define GUARD_BYTES 64L /* checked for overruns in -c mode */
#define WIN_ALIGN 4096L
#define MAX_REPORTED_MISMATCHES 5

enum test_kind { T_PUT_BW, T_GET_BW, T_PUT_BIBW, T_PUT_RATE, T_COUNT_ };

static const char *const test_names[T_COUNT_] = {"put_bw", "get_bw", "put_bibw", "put_rate"};
static const char *const test_titles[T_COUNT_] = {"MPI_Put bandwidth", "MPI_Get bandwidth",
                                                  "MPI_Put bi-directional bandwidth", "MPI_Put message rate"};
/* What one iteration does, as printed in the header. */
static const char *const sync_descr[BENCH_SYNCS] = {
    "MPI_Win_fence, W ops, MPI_Win_fence",
    "MPI_Win_lock, W ops, MPI_Win_unlock",
    "W ops, MPI_Win_flush (one lock held for the whole loop)",
    "W ops, MPI_Win_flush_local (one lock held for the whole loop)",
    "MPI_Win_lock_all, W ops, MPI_Win_unlock_all",
    "MPI_Win_start, W ops, MPI_Win_complete / MPI_Win_post, MPI_Win_wait"};

struct options {
    enum test_kind test;
    struct bench_rma_opts rma;
    int sync_given;  /* -s seen: put_bibw defaults to pscw like OSU */
    int range_given; /* -m seen: put_rate defaults to 8 bytes */
    long window;     /* operations per synchronization */
};

struct bench {
    struct options opt;
    int rank, peer;
    int origin; /* this rank issues operations */
    int target; /* this rank's window is accessed by the peer */
    struct bench_win w;
    unsigned char *lbuf; /* origin buffer: put source / get destination */
    size_t wbytes;       /* bytes of wbuf and lbuf */
    MPI_Group peer_group;
    long size; /* current message size in bytes */
};

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
            DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE, DEFAULT_RATE_SIZE, DEFAULT_WINDOW, ITERS_SMALL, ITERS_LARGE,
            LARGE_MESSAGE_SIZE, WARMUP_SMALL, WARMUP_LARGE, LARGE_MESSAGE_SIZE, BENCH_EXIT_CHECK);
}

static int bibw_sync_ok(enum bench_sync s)
{
    return s == BENCH_SYNC_PSCW || s == BENCH_SYNC_FENCE || s == BENCH_SYNC_FLUSH || s == BENCH_SYNC_LOCK_ALL;
}

/* Returns 0 to run, 1 for -h, -1 on error (message printed on rank 0). */
static int parse_options(int argc, char **argv, struct options *o)
{
    long sizes[2] = {DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE};
    int test = T_PUT_BW, flavor = BENCH_ALLOCATE, sync = BENCH_SYNC_FLUSH;
    memset(o, 0, sizeof *o);
    o->window = DEFAULT_WINDOW;
    o->rma.it = (struct bench_iters){-1,          -1,           ITERS_SMALL,        WARMUP_SMALL,
                                     ITERS_LARGE, WARMUP_LARGE, LARGE_MESSAGE_SIZE, NULL};
    const struct bench_opt opts[] = {
        {'t', BENCH_NAME, &test, 0, T_COUNT_, test_names, NULL},
        {'w', BENCH_NAME, &flavor, 0, BENCH_FLAVORS, bench_flavor_names, NULL},
        {'s', BENCH_NAME, &sync, 0, BENCH_SYNCS, bench_sync_names, &o->sync_given},
        {'m', BENCH_RANGE, sizes, 0, MAX_ALLOWED_BYTES, NULL, &o->range_given},
        {'W', BENCH_LONG, &o->window, 1, MAX_WINDOW, NULL, NULL},
        {'i', BENCH_LONG, &o->rma.it.iters, 1, 1000000000L, NULL, NULL},
        {'x', BENCH_LONG, &o->rma.it.warmup, 0, 1000000000L, NULL, NULL},
        {'c', BENCH_FLAG, &o->rma.check, 0, 0, NULL, NULL},
        {'e', BENCH_FLAG, &o->rma.exclusive, 0, 0, NULL, NULL},
    };
    int rc = bench_parse(argc, argv, opts, sizeof opts / sizeof opts[0], usage);
    if (rc) return rc;
    o->test = (enum test_kind)test;
    o->rma.flavor = (enum bench_flavor)flavor;
    o->rma.sync = (enum bench_sync)sync;
    o->rma.min_size = sizes[0];
    o->rma.max_size = sizes[1];
    if (o->test == T_PUT_RATE && !o->range_given) o->rma.min_size = o->rma.max_size = DEFAULT_RATE_SIZE;
    if (o->test == T_PUT_BIBW && !o->sync_given) o->rma.sync = BENCH_SYNC_PSCW;
    if (o->test == T_PUT_BIBW && !bibw_sync_ok(o->rma.sync))
        return bench_require(0, usage, "-t put_bibw supports -s pscw, fence, flush or lock_all, not %s",
                             bench_sync_names[o->rma.sync]);
    if (o->rma.min_size > o->rma.max_size)
        return bench_require(0, usage, "-m: MIN (%ld) is larger than MAX (%ld)", o->rma.min_size,
                             o->rma.max_size);
    return bench_require(o->rma.max_size <= MAX_ALLOWED_BYTES / o->window, usage,
                         "-W %ld times -m MAX %ld exceeds %ld bytes per buffer", o->window, o->rma.max_size,
                         MAX_ALLOWED_BYTES);
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

static long check_pattern(const struct bench *b, const char *what, const unsigned char *buf, long from,
                          long to, uint64_t seed, int xor_mask, long nbad)
{
    uint64_t w = 0;

    for (long j = from; j < to; j++) {
        unsigned char want;
        if (j == from || (j & 7) == 0) w = mix64(seed + (uint64_t)(j >> 3));
        want = (unsigned char)((w >> (8 * (j & 7))) ^ (uint64_t)xor_mask);
        if (buf[j] == want) continue;
        if (nbad < MAX_REPORTED_MISMATCHES) {
            const long op = b->size > 0 ? j / b->size : 0;
            fprintf(stderr,
                    "osc_bw: CHECK FAILED: rank %d, -t %s -s %s size %ld: "
                    "%s[%ld] (op %ld%s) = 0x%02x, expected 0x%02x\n",
                    b->rank, test_names[b->opt.test], bench_sync_names[b->opt.rma.sync], b->size, what, j, op,
                    op >= b->opt.window ? ", guard" : "", buf[j], want);
        }
        nbad++;
    }
    return nbad;
}

/* ------------------------------------------------------------------------ */
/* per-size data set-up and verification                                    */

static int is_get(const struct bench *b)
{
    return b->opt.test == T_GET_BW;
}

/* Bytes one window of operations covers, plus the guard behind it. */
static long span(const struct bench *b)
{
    return b->opt.window * b->size;
}

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
    MPI_CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, b->rank, 0, b->w.win));
    if (is_get(b)) {
        fill_pattern(b->w.buf, 0, end, pattern_seed(b->rank, b->size), PAT_DATA);
    } else {
        fill_pattern(b->w.buf, 0, end, pattern_seed(b->peer, b->size), PAT_POISON);
    }
    MPI_CK(MPI_Win_unlock(b->rank, b->w.win));
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
        MPI_CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, b->rank, 0, b->w.win));
        if (is_get(b)) {
            /* A get must leave the target untouched. */
            nbad = check_pattern(b, "window", b->w.buf, 0, end, mine, PAT_DATA, nbad);
        } else {
            nbad = check_pattern(b, "window", b->w.buf, 0, n, peers, PAT_DATA, nbad);
            nbad = check_pattern(b, "window", b->w.buf, n, end, peers, PAT_POISON, nbad);
        }
        MPI_CK(MPI_Win_unlock(b->rank, b->w.win));
    }
    if (nbad > MAX_REPORTED_MISMATCHES) {
        fprintf(stderr, "osc_bw: CHECK FAILED: rank %d: %ld bad bytes in total\n", b->rank, nbad);
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
        const MPI_Aint disp = b->w.peer_disp + (MPI_Aint)(j * b->size);
        if (is_get(b)) {
            MPI_CK(MPI_Get(local, cnt, MPI_CHAR, b->peer, disp, cnt, MPI_CHAR, b->w.win));
        } else {
            MPI_CK(MPI_Put(local, cnt, MPI_CHAR, b->peer, disp, cnt, MPI_CHAR, b->w.win));
        }
    }
}

/* n iterations; every epoch this opens is closed again on return, so the
 * caller may use barriers and self-locks between calls. */
static void run_iterations(struct bench *b, long n)
{
    const int lock_type = b->opt.rma.exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
    const int peer = b->peer;

    switch (b->opt.rma.sync) {
    case BENCH_SYNC_LOCK:
        if (!b->origin) return;
        for (long i = 0; i < n; i++) {
            MPI_CK(MPI_Win_lock(lock_type, peer, 0, b->w.win));
            issue_window(b);
            MPI_CK(MPI_Win_unlock(peer, b->w.win));
        }
        break;
    case BENCH_SYNC_FLUSH:
    case BENCH_SYNC_FLUSH_LOCAL:
        if (!b->origin) return;
        MPI_CK(MPI_Win_lock(lock_type, peer, 0, b->w.win));
        for (long i = 0; i < n; i++) {
            issue_window(b);
            if (b->opt.rma.sync == BENCH_SYNC_FLUSH) {
                MPI_CK(MPI_Win_flush(peer, b->w.win));
            } else {
                MPI_CK(MPI_Win_flush_local(peer, b->w.win));
            }
        }
        MPI_CK(MPI_Win_unlock(peer, b->w.win));
        break;
    case BENCH_SYNC_LOCK_ALL:
        if (!b->origin) return;
        for (long i = 0; i < n; i++) {
            MPI_CK(MPI_Win_lock_all(0, b->w.win));
            issue_window(b);
            MPI_CK(MPI_Win_unlock_all(b->w.win));
        }
        break;
    case BENCH_SYNC_FENCE:
        for (long i = 0; i < n; i++) {
            MPI_CK(MPI_Win_fence(0, b->w.win));
            if (b->origin) issue_window(b);
            MPI_CK(MPI_Win_fence(0, b->w.win));
        }
        /* Close the fence sequence so passive-target calls are legal again. */
        MPI_CK(MPI_Win_fence(MPI_MODE_NOSUCCEED, b->w.win));
        break;
    case BENCH_SYNC_PSCW:
        for (long i = 0; i < n; i++) {
            if (b->target) MPI_CK(MPI_Win_post(b->peer_group, 0, b->w.win));
            if (b->origin) {
                MPI_CK(MPI_Win_start(b->peer_group, 0, b->w.win));
                issue_window(b);
                MPI_CK(MPI_Win_complete(b->w.win));
            }
            if (b->target) MPI_CK(MPI_Win_wait(b->w.win));
        }
        break;
    default: break;
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

    printf("# osc_bw: %s test (osc/fabric perf suite, OSU-compatible output)\n", test_titles[o->test]);
    printf("# Window creation: %s\n", bench_flavor_mpi_names[o->rma.flavor]);
    printf("# Synchronization: %s%s\n", sync_descr[o->rma.sync],
           o->test == T_PUT_BIBW ? " (both ranks)" : "");
    printf("# Datatype: MPI_CHAR\n");
    bench_print_lock_type(o->rma.sync, o->rma.exclusive);
    printf("# Window size: W = %ld operations per synchronization\n", o->window);
    bench_print_iterations(&o->rma.it);
    if (o->test == T_PUT_RATE) {
        printf("# Rate: W * iterations / time of the timed loop on rank 0\n");
    } else if (o->test == T_PUT_BIBW) {
        printf("# Bandwidth: 2 * W * size * iterations / slower rank's time, 1 MB = 10^6 bytes\n");
    } else {
        printf("# Bandwidth: W * size * iterations / time on rank 0, 1 MB = 10^6 bytes\n");
    }
    if (o->rma.check) printf("# Check mode: data verified after every size\n");
    bench_print_library();
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
    int nprocs, go, rc = 0;

    memset(&b, 0, sizeof b);
    nprocs = bench_start(&argc, &argv, "osc_bw", &b.rank);
    go = bench_proceed(parse_options(argc, argv, &b.opt), nprocs, 2, "");
    if (go != BENCH_PROCEED) return go;
    bench_context("-t %s -w %s -s %s", test_names[b.opt.test], bench_flavor_names[b.opt.rma.flavor],
                  bench_sync_names[b.opt.rma.sync]);

    b.peer = 1 - b.rank;
    if (b.opt.test == T_PUT_BIBW) {
        b.origin = b.target = 1;
    } else {
        b.origin = b.rank == 0;
        b.target = b.rank == 1;
    }
    b.wbytes = (size_t)(b.opt.window * b.opt.rma.max_size + GUARD_BYTES);
    b.lbuf = bench_alloc(WIN_ALIGN, b.wbytes);

    b.peer_group = bench_peer_group(b.peer);

    bench_win_create(&b.w, b.opt.rma.flavor, b.wbytes, WIN_ALIGN, b.peer);
    if (b.rank == 0) print_header(&b);

    for (long size = b.opt.rma.min_size; size <= b.opt.rma.max_size; size = size ? size * 2 : 1) {
        const long iters = bench_iters_for(&b.opt.rma.it, size);
        const long warmup = bench_warmup_for(&b.opt.rma.it, size);
        const double ops = (double)b.opt.window * (double)iters;
        double t;

        b.size = size;
        t = run_size(&b, warmup, iters);

        if (b.opt.rma.check && (rc = bench_check_size(verify_size(&b), size, "bytes"))) break;
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

    bench_check_passed(b.opt.rma.check, rc);

    bench_win_free(&b.w);
    MPI_CK(MPI_Group_free(&b.peer_group));
    free(b.lbuf);
    MPI_Finalize();
    return rc;
}
