/*
 * osc_latency.c - MPI one-sided (RMA) latency benchmark for the osc/fabric
 * performance suite.
 *
 * Measures the same quantities as the OSU one-sided latency tests
 * (osu_put_latency, osu_get_latency, osu_acc_latency, osu_get_acc_latency,
 * osu_fop_latency, osu_cas_latency) in a single program, for every window
 * flavor and synchronization mode.  Independent implementation: only the
 * output format is modelled after OSU so existing parsers keep working.
 *
 * Exactly two processes: rank 0 is the origin, rank 1 the target.  For the
 * active-target modes (fence, pscw) both ranks take turns, exactly like OSU
 * (ping-pong), and half of one iteration is reported.
 *
 * Exit status: 0 success, 1 usage/setup error, 2 MPI error (reported with
 * MPI_Error_string, e.g. a window flavor the osc component does not
 * support; the job is then ended with MPI_Abort), 3 data check (-c) failed.
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
#define MAX_ALLOWED_SIZE (1L << 30)
#define LARGE_MESSAGE_SIZE 8192L /* above this: fewer iterations */
#define ITERS_SMALL 10000L
#define WARMUP_SMALL 100L
#define ITERS_LARGE 1000L
#define WARMUP_LARGE 10L
#define ATOMIC_SIZE 8L  /* fop/cas: one 64-bit integer */
#define GUARD_BYTES 64L /* checked for overruns in -c mode */
#define WIN_ALIGN 4096L
#define MAX_REPORTED_MISMATCHES 5

enum op_kind { OP_PUT, OP_GET, OP_ACC, OP_GET_ACC, OP_FOP, OP_CAS, OP_COUNT_ };

static const char *const op_names[OP_COUNT_] = {"put", "get", "acc", "get_acc", "fop", "cas"};
static const char *const op_mpi_names[OP_COUNT_] = {
    "MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op", "MPI_Compare_and_swap"};
static const char *const sync_mpi_names[BENCH_SYNCS] = {
    "MPI_Win_fence",       "MPI_Win_lock/unlock",         "MPI_Win_flush",
    "MPI_Win_flush_local", "MPI_Win_lock_all/unlock_all", "MPI_Win_post/start/complete/wait"};

struct options {
    enum op_kind op;
    struct bench_rma_opts rma;
};

struct bench {
    struct options opt;
    int rank, peer;
    int pingpong; /* fence/pscw: both ranks are origin and target */
    struct bench_win w;
    size_t wbytes; /* usable window size */
    MPI_Group peer_group;
    unsigned char *sbuf, *rbuf, *cbuf; /* origin, result, compare buffers */
    long size;                         /* current message size in bytes */
    int count;                         /* elements per operation */
};

/* ------------------------------------------------------------------------ */
/* option parsing                                                           */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -np 2 osc_latency [options]\n"
            "  -o OP      put|get|acc|get_acc|fop|cas            (default put)\n"
            "  -w FLAVOR  create|allocate|dynamic                (default allocate)\n"
            "  -s SYNC    fence|lock|flush|flush_local|lock_all|pscw (default flush)\n"
            "  -m [MIN:]MAX  message sizes in bytes, powers of two from MIN to MAX\n"
            "             (default %ld:%ld; put/get/acc/get_acc only, acc/get_acc\n"
            "             use MPI_INT so sizes below %zu are skipped; fop/cas always\n"
            "             use one 8-byte MPI_UINT64_T)\n"
            "  -i ITERS   timed iterations per size (default %ld, %ld above %ld B)\n"
            "  -x WARMUP  untimed warmup iterations per size (default %ld, %ld above %ld B)\n"
            "  -c         check mode: verify target/result data after each size,\n"
            "             exit %d on mismatch\n"
            "  -e         use MPI_LOCK_EXCLUSIVE for lock/flush/flush_local\n"
            "             (default MPI_LOCK_SHARED, like OSU)\n"
            "  -h         this help\n",
            DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE, sizeof(int), ITERS_SMALL, ITERS_LARGE, LARGE_MESSAGE_SIZE,
            WARMUP_SMALL, WARMUP_LARGE, LARGE_MESSAGE_SIZE, BENCH_EXIT_CHECK);
}

/* Returns 0 to run, 1 for -h, -1 on error (message printed on rank 0). */
static int parse_options(int argc, char **argv, struct options *o)
{
    long sizes[2] = {DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE};
    int op = OP_PUT, flavor = BENCH_ALLOCATE, sync = BENCH_SYNC_FLUSH;
    const struct bench_opt opts[] = {
        {'o', BENCH_NAME, &op, 0, OP_COUNT_, op_names, NULL},
        {'w', BENCH_NAME, &flavor, 0, BENCH_FLAVORS, bench_flavor_names, NULL},
        {'s', BENCH_NAME, &sync, 0, BENCH_SYNCS, bench_sync_names, NULL},
        {'m', BENCH_RANGE, sizes, 0, MAX_ALLOWED_SIZE, NULL, NULL},
        {'i', BENCH_LONG, &o->rma.it.iters, 1, 1000000000L, NULL, NULL},
        {'x', BENCH_LONG, &o->rma.it.warmup, 0, 1000000000L, NULL, NULL},
        {'c', BENCH_FLAG, &o->rma.check, 0, 0, NULL, NULL},
        {'e', BENCH_FLAG, &o->rma.exclusive, 0, 0, NULL, NULL},
    };
    memset(o, 0, sizeof *o);
    o->rma.it = (struct bench_iters){-1,          -1,           ITERS_SMALL,        WARMUP_SMALL,
                                     ITERS_LARGE, WARMUP_LARGE, LARGE_MESSAGE_SIZE, NULL};
    int rc = bench_parse(argc, argv, opts, sizeof opts / sizeof opts[0], usage);
    if (rc) return rc;
    o->op = (enum op_kind)op;
    o->rma.flavor = (enum bench_flavor)flavor;
    o->rma.sync = (enum bench_sync)sync;
    o->rma.min_size = sizes[0];
    o->rma.max_size = sizes[1];
    return bench_require(o->rma.min_size <= o->rma.max_size, usage, "-m: MIN (%ld) is larger than MAX (%ld)",
                         o->rma.min_size, o->rma.max_size);
}

/* ------------------------------------------------------------------------ */
/* data patterns (all values depend on the owning/sending rank and on the   */
/* message size so that stale data from a previous size cannot pass)        */

static int is_byte_op(enum op_kind op)
{
    return op == OP_PUT || op == OP_GET;
}
static int is_int_op(enum op_kind op)
{
    return op == OP_ACC || op == OP_GET_ACC;
}

static unsigned char pat_byte(int owner, long size, long j)
{
    return (unsigned char)(((unsigned long)j * 131u + (unsigned long)size * 7u + (unsigned long)owner * 61u +
                            17u) &
                           0xffu);
}

static unsigned int int_base(int owner, long size, long k)
{
    return 1000u + 7u * (unsigned int)k + 100000u * (unsigned int)owner + 3u * (unsigned int)size;
}

static unsigned int int_addend(int src, long k)
{
    return 1u + (unsigned int)(k % 13) + 20u * (unsigned int)src;
}

static uint64_t u64_base(int owner, long k)
{
    return UINT64_C(0x1000000000000000) + ((uint64_t)owner << 40) + (uint64_t)k * UINT64_C(0x10001);
}

static uint64_t fop_addend(int src)
{
    return UINT64_C(0x0000000100000001) * (uint64_t)(src + 2);
}

/* CAS chain on the window owned by 'owner', driven by 'src': iteration i
 * swaps cas_value(i) for cas_value(i + 1), so every CAS must succeed. */
static uint64_t cas_value(int owner, int src, long i)
{
    return (UINT64_C(0x0123456789abcdef) ^ ((uint64_t)(owner + 1) << 56)) +
           (uint64_t)i * (UINT64_C(0x0000000100000003) * (uint64_t)(src + 1));
}

static void put_uint(unsigned char *buf, long k, unsigned int v)
{
    memcpy(buf + (size_t)k * sizeof v, &v, sizeof v);
}

static unsigned int get_uint(const unsigned char *buf, long k)
{
    unsigned int v;
    memcpy(&v, buf + (size_t)k * sizeof v, sizeof v);
    return v;
}

static void put_u64(unsigned char *buf, long k, uint64_t v)
{
    memcpy(buf + (size_t)k * sizeof v, &v, sizeof v);
}

static uint64_t get_u64(const unsigned char *buf, long k)
{
    uint64_t v;
    memcpy(&v, buf + (size_t)k * sizeof v, sizeof v);
    return v;
}

/* ------------------------------------------------------------------------ */
/* per-size data initialisation and verification                           */

static long elements_for_size(enum op_kind op, long size)
{
    if (is_byte_op(op)) return size;
    if (is_int_op(op)) return size / (long)sizeof(int);
    return 1;
}

/* Total number of operations each origin issues on its target for a size. */
static long total_ops(long warmup, long iters)
{
    return warmup + iters;
}

static void setup_size(struct bench *b, long n_ops)
{
    const int me = b->rank, peer = b->peer;
    const long size = b->size, cnt = b->count;

    /* Origin-side buffers. */
    switch (b->opt.op) {
    case OP_PUT:
    case OP_GET:
        for (long j = 0; j < size + GUARD_BYTES; j++) {
            b->sbuf[j] = pat_byte(me, size, j);
            b->rbuf[j] = (unsigned char)~pat_byte(peer, size, j);
        }
        break;
    case OP_ACC:
    case OP_GET_ACC: {
        const long gi = GUARD_BYTES / (long)sizeof(int);
        for (long k = 0; k < cnt + gi; k++) {
            put_uint(b->sbuf, k, int_addend(me, k));
            put_uint(b->rbuf, k, ~(int_base(peer, size, k) + (unsigned int)(n_ops - 1) * int_addend(me, k)));
        }
        break;
    }
    case OP_FOP:
    case OP_CAS: {
        const long gl = GUARD_BYTES / 8;
        const uint64_t expect = b->opt.op == OP_FOP
                                    ? u64_base(peer, 0) + (uint64_t)(n_ops - 1) * fop_addend(me)
                                    : cas_value(peer, me, n_ops - 1);
        for (long k = 0; k < 1 + gl; k++) {
            put_u64(b->sbuf, k, fop_addend(me));
            put_u64(b->cbuf, k, 0);
            put_u64(b->rbuf, k, ~expect);
        }
        break;
    }
    default: break;
    }

    /* Local window memory: update it inside an exclusive self-lock epoch so
     * that the public copy is consistent before the peer starts. */
    MPI_CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, b->w.win));
    switch (b->opt.op) {
    case OP_PUT:
        for (long j = 0; j < size + GUARD_BYTES; j++) {
            b->w.buf[j] = (unsigned char)~pat_byte(peer, size, j);
        }
        break;
    case OP_GET:
        for (long j = 0; j < size + GUARD_BYTES; j++) {
            b->w.buf[j] = pat_byte(me, size, j);
        }
        break;
    case OP_ACC:
    case OP_GET_ACC:
        for (long k = 0; k < cnt + GUARD_BYTES / (long)sizeof(int); k++) {
            put_uint(b->w.buf, k, int_base(me, size, k));
        }
        break;
    case OP_FOP:
    case OP_CAS:
        for (long k = 0; k < 1 + GUARD_BYTES / 8; k++) {
            put_u64(b->w.buf, k, u64_base(me, k));
        }
        if (b->opt.op == OP_CAS) put_u64(b->w.buf, 0, cas_value(me, peer, 0));
        break;
    default: break;
    }
    MPI_CK(MPI_Win_unlock(me, b->w.win));
}

static long mismatch(struct bench *b, long nbad, const char *what, long idx, unsigned long long got,
                     unsigned long long want)
{
    if (nbad < MAX_REPORTED_MISMATCHES) {
        fprintf(stderr,
                "osc_latency: CHECK FAILED: rank %d, %s %s size %ld: %s[%ld] = "
                "0x%llx, expected 0x%llx\n",
                b->rank, op_names[b->opt.op], bench_sync_names[b->opt.rma.sync], b->size, what, idx, got,
                want);
    }
    return nbad + 1;
}

/* Verify the data this rank can see after n_ops operations per origin.
 * Returns the number of mismatching elements. */
static long verify_size(struct bench *b, long n_ops)
{
    const int me = b->rank, peer = b->peer;
    const int origin = b->pingpong || me == 0;
    const int target = b->pingpong || me == 1;
    const long size = b->size, cnt = b->count;
    long nbad = 0;

    /* Results fetched by this rank as origin (get, get_acc, fop, cas). */
    if (origin) {
        switch (b->opt.op) {
        case OP_GET:
            for (long j = 0; j < size + GUARD_BYTES; j++) {
                unsigned char want =
                    j < size ? pat_byte(peer, size, j) : (unsigned char)~pat_byte(peer, size, j);
                if (b->rbuf[j] != want) {
                    nbad = mismatch(b, nbad, "result byte", j, b->rbuf[j], want);
                }
            }
            break;
        case OP_GET_ACC:
            for (long k = 0; k < cnt + GUARD_BYTES / (long)sizeof(int); k++) {
                unsigned int last = int_base(peer, size, k) + (unsigned int)(n_ops - 1) * int_addend(me, k);
                unsigned int want = k < cnt ? last : ~last;
                if (get_uint(b->rbuf, k) != want) {
                    nbad = mismatch(b, nbad, "result int", k, get_uint(b->rbuf, k), want);
                }
            }
            break;
        case OP_FOP:
        case OP_CAS: {
            uint64_t last = b->opt.op == OP_FOP ? u64_base(peer, 0) + (uint64_t)(n_ops - 1) * fop_addend(me)
                                                : cas_value(peer, me, n_ops - 1);
            for (long k = 0; k < 1 + GUARD_BYTES / 8; k++) {
                uint64_t want = k == 0 ? last : ~last;
                if (get_u64(b->rbuf, k) != want) {
                    nbad = mismatch(b, nbad, "result u64", k, get_u64(b->rbuf, k), want);
                }
            }
            break;
        }
        default: break;
        }
    }

    /* Window contents as modified by the peer. */
    if (target) {
        MPI_CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, b->w.win));
        switch (b->opt.op) {
        case OP_PUT:
        case OP_GET:
            for (long j = 0; j < size + GUARD_BYTES; j++) {
                unsigned char want;
                if (b->opt.op == OP_GET) {
                    want = pat_byte(me, size, j); /* untouched */
                } else {
                    want = j < size ? pat_byte(peer, size, j) : (unsigned char)~pat_byte(peer, size, j);
                }
                if (b->w.buf[j] != want) {
                    nbad = mismatch(b, nbad, "window byte", j, b->w.buf[j], want);
                }
            }
            break;
        case OP_ACC:
        case OP_GET_ACC:
            for (long k = 0; k < cnt + GUARD_BYTES / (long)sizeof(int); k++) {
                unsigned int want = int_base(me, size, k);
                if (k < cnt) want += (unsigned int)n_ops * int_addend(peer, k);
                if (get_uint(b->w.buf, k) != want) {
                    nbad = mismatch(b, nbad, "window int", k, get_uint(b->w.buf, k), want);
                }
            }
            break;
        case OP_FOP:
        case OP_CAS:
            for (long k = 0; k < 1 + GUARD_BYTES / 8; k++) {
                uint64_t want = u64_base(me, k);
                if (k == 0) {
                    want = b->opt.op == OP_FOP ? u64_base(me, 0) + (uint64_t)n_ops * fop_addend(peer)
                                               : cas_value(me, peer, n_ops);
                }
                if (get_u64(b->w.buf, k) != want) {
                    nbad = mismatch(b, nbad, "window u64", k, get_u64(b->w.buf, k), want);
                }
            }
            break;
        default: break;
        }
        MPI_CK(MPI_Win_unlock(me, b->w.win));
    }

    if (nbad > MAX_REPORTED_MISMATCHES) {
        fprintf(stderr, "osc_latency: CHECK FAILED: rank %d: %ld mismatches in total\n", b->rank, nbad);
    }
    fflush(stderr);
    return nbad;
}

/* ------------------------------------------------------------------------ */
/* the measured operation                                                   */

static inline void issue_op(struct bench *b, long iter)
{
    const int peer = b->peer;
    const MPI_Aint disp = b->w.peer_disp;
    const int cnt = b->count;

    switch (b->opt.op) {
    case OP_PUT: MPI_CK(MPI_Put(b->sbuf, cnt, MPI_CHAR, peer, disp, cnt, MPI_CHAR, b->w.win)); break;
    case OP_GET: MPI_CK(MPI_Get(b->rbuf, cnt, MPI_CHAR, peer, disp, cnt, MPI_CHAR, b->w.win)); break;
    case OP_ACC:
        MPI_CK(MPI_Accumulate(b->sbuf, cnt, MPI_INT, peer, disp, cnt, MPI_INT, MPI_SUM, b->w.win));
        break;
    case OP_GET_ACC:
        MPI_CK(MPI_Get_accumulate(b->sbuf, cnt, MPI_INT, b->rbuf, cnt, MPI_INT, peer, disp, cnt, MPI_INT,
                                  MPI_SUM, b->w.win));
        break;
    case OP_FOP:
        MPI_CK(MPI_Fetch_and_op(b->sbuf, b->rbuf, MPI_UINT64_T, peer, disp, MPI_SUM, b->w.win));
        break;
    case OP_CAS:
        /* The previous operation is complete (every sync mode completes the
         * op before the next one is issued), so the buffers may be reused. */
        put_u64(b->cbuf, 0, cas_value(peer, b->rank, iter));
        put_u64(b->sbuf, 0, cas_value(peer, b->rank, iter + 1));
        MPI_CK(MPI_Compare_and_swap(b->sbuf, b->cbuf, b->rbuf, MPI_UINT64_T, peer, disp, b->w.win));
        break;
    default: break;
    }
}

/* ------------------------------------------------------------------------ */
/* timed loops; return the latency in microseconds (rank 0 only)           */

static double run_passive(struct bench *b, long warmup, long iters)
{
    const int peer = b->peer;
    const int lock_type = b->opt.rma.exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
    const long n = warmup + iters;
    double t0 = 0.0, t1 = 0.0;

    if (b->rank != 0) return 0.0; /* target stays passive */

    switch (b->opt.rma.sync) {
    case BENCH_SYNC_LOCK:
        for (long i = 0; i < n; i++) {
            if (i == warmup) t0 = MPI_Wtime();
            MPI_CK(MPI_Win_lock(lock_type, peer, 0, b->w.win));
            issue_op(b, i);
            MPI_CK(MPI_Win_unlock(peer, b->w.win));
        }
        t1 = MPI_Wtime();
        break;
    case BENCH_SYNC_FLUSH:
        MPI_CK(MPI_Win_lock(lock_type, peer, 0, b->w.win));
        for (long i = 0; i < n; i++) {
            if (i == warmup) t0 = MPI_Wtime();
            issue_op(b, i);
            MPI_CK(MPI_Win_flush(peer, b->w.win));
        }
        t1 = MPI_Wtime();
        MPI_CK(MPI_Win_unlock(peer, b->w.win));
        break;
    case BENCH_SYNC_FLUSH_LOCAL:
        MPI_CK(MPI_Win_lock(lock_type, peer, 0, b->w.win));
        for (long i = 0; i < n; i++) {
            if (i == warmup) t0 = MPI_Wtime();
            issue_op(b, i);
            MPI_CK(MPI_Win_flush_local(peer, b->w.win));
        }
        t1 = MPI_Wtime();
        MPI_CK(MPI_Win_unlock(peer, b->w.win));
        break;
    case BENCH_SYNC_LOCK_ALL:
        for (long i = 0; i < n; i++) {
            if (i == warmup) t0 = MPI_Wtime();
            MPI_CK(MPI_Win_lock_all(0, b->w.win));
            issue_op(b, i);
            MPI_CK(MPI_Win_unlock_all(b->w.win));
        }
        t1 = MPI_Wtime();
        break;
    default: break;
    }
    return (t1 - t0) * 1e6 / (double)iters;
}

/* fence, OSU style: per iteration three fences; rank 0 issues its operation
 * in the first epoch, rank 1 in the second.  Reported: half an iteration. */
static double run_fence(struct bench *b, long warmup, long iters)
{
    const long n = warmup + iters;
    double t0 = 0.0, t1;

    for (long i = 0; i < n; i++) {
        if (i == warmup) t0 = MPI_Wtime();
        MPI_CK(MPI_Win_fence(0, b->w.win));
        if (b->rank == 0) issue_op(b, i);
        MPI_CK(MPI_Win_fence(0, b->w.win));
        if (b->rank == 1) issue_op(b, i);
        MPI_CK(MPI_Win_fence(0, b->w.win));
    }
    t1 = MPI_Wtime();
    /* Close the fence sequence so passive-target calls are legal again. */
    MPI_CK(MPI_Win_fence(MPI_MODE_NOSUCCEED, b->w.win));
    return (t1 - t0) * 1e6 / (double)iters / 2.0;
}

/* pscw, OSU style: rank 0 start/op/complete then post/wait, rank 1 the
 * mirror image.  Reported: half an iteration. */
static double run_pscw(struct bench *b, long warmup, long iters)
{
    const long n = warmup + iters;
    double t0 = 0.0, t1;

    for (long i = 0; i < n; i++) {
        if (i == warmup) t0 = MPI_Wtime();
        if (b->rank == 0) {
            MPI_CK(MPI_Win_start(b->peer_group, 0, b->w.win));
            issue_op(b, i);
            MPI_CK(MPI_Win_complete(b->w.win));
            MPI_CK(MPI_Win_post(b->peer_group, 0, b->w.win));
            MPI_CK(MPI_Win_wait(b->w.win));
        } else {
            MPI_CK(MPI_Win_post(b->peer_group, 0, b->w.win));
            MPI_CK(MPI_Win_wait(b->w.win));
            MPI_CK(MPI_Win_start(b->peer_group, 0, b->w.win));
            issue_op(b, i);
            MPI_CK(MPI_Win_complete(b->w.win));
        }
    }
    t1 = MPI_Wtime();
    return (t1 - t0) * 1e6 / (double)iters / 2.0;
}

/* ------------------------------------------------------------------------ */

static void print_header(const struct bench *b)
{
    const struct options *o = &b->opt;

    printf("# osc_latency: %s latency test (osc/fabric perf suite, OSU-compatible output)\n",
           op_mpi_names[o->op]);
    printf("# Window creation: %s\n", bench_flavor_mpi_names[o->rma.flavor]);
    printf("# Synchronization: %s\n", sync_mpi_names[o->rma.sync]);
    if (o->op == OP_FOP || o->op == OP_CAS) {
        printf("# Datatype: MPI_UINT64_T (MPI_SUM), message size fixed at %ld bytes\n", ATOMIC_SIZE);
    } else if (is_int_op(o->op)) {
        printf("# Datatype: MPI_INT (MPI_SUM), count = size / %zu\n", sizeof(int));
    } else {
        printf("# Datatype: MPI_CHAR\n");
    }
    bench_print_lock_type(o->rma.sync, o->rma.exclusive);
    bench_print_iterations(&o->rma.it);
    if (b->pingpong) {
        printf(
            "# Latency: average over iterations of one epoch with one operation\n"
            "#          (ranks alternate, half of a round trip, as OSU)\n");
    } else {
        printf("# Latency: average time per operation incl. its synchronization\n");
    }
    if (o->rma.check) printf("# Check mode: data verified after every size\n");
    bench_print_library();
    printf("# Size          Latency (us)\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct bench b;
    int nprocs, go, rc = 0;
    long first_size, last_size;

    memset(&b, 0, sizeof b);
    nprocs = bench_start(&argc, &argv, "osc_latency", &b.rank);
    go = bench_proceed(parse_options(argc, argv, &b.opt), nprocs, 2, " (rank 0 = origin, rank 1 = target)");
    if (go != BENCH_PROCEED) return go;
    bench_context("-o %s -w %s -s %s", op_names[b.opt.op], bench_flavor_names[b.opt.rma.flavor],
                  bench_sync_names[b.opt.rma.sync]);

    if (b.opt.op == OP_FOP || b.opt.op == OP_CAS) {
        first_size = last_size = ATOMIC_SIZE;
    } else {
        first_size = b.opt.rma.min_size;
        last_size = b.opt.rma.max_size;
        if (is_int_op(b.opt.op) && last_size < (long)sizeof(int)) {
            if (b.rank == 0) {
                fprintf(stderr,
                        "osc_latency: -o %s uses MPI_INT: -m MAX must be at "
                        "least %zu\n",
                        op_names[b.opt.op], sizeof(int));
            }
            MPI_Finalize();
            return BENCH_EXIT_USAGE;
        }
    }

    b.peer = 1 - b.rank;
    b.pingpong = b.opt.rma.sync == BENCH_SYNC_FENCE || b.opt.rma.sync == BENCH_SYNC_PSCW;
    b.wbytes = (size_t)(last_size > ATOMIC_SIZE ? last_size : ATOMIC_SIZE) + GUARD_BYTES;
    b.sbuf = bench_alloc(64, b.wbytes);
    b.rbuf = bench_alloc(64, b.wbytes);
    b.cbuf = bench_alloc(64, b.wbytes);

    b.peer_group = bench_peer_group(b.peer);

    bench_win_create(&b.w, b.opt.rma.flavor, b.wbytes, WIN_ALIGN, b.peer);
    if (b.rank == 0) print_header(&b);

    for (long size = first_size; size <= last_size; size = size ? size * 2 : 1) {
        const long iters = bench_iters_for(&b.opt.rma.it, size);
        const long warmup = bench_warmup_for(&b.opt.rma.it, size);
        const long n_ops = total_ops(warmup, iters);
        double lat = 0.0;

        b.size = size;
        b.count = (int)elements_for_size(b.opt.op, size);
        if (is_int_op(b.opt.op) && b.count == 0) continue; /* like OSU */

        setup_size(&b, n_ops);
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));

        switch (b.opt.rma.sync) {
        case BENCH_SYNC_FENCE: lat = run_fence(&b, warmup, iters); break;
        case BENCH_SYNC_PSCW: lat = run_pscw(&b, warmup, iters); break;
        default: lat = run_passive(&b, warmup, iters); break;
        }
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));

        if (b.opt.rma.check && (rc = bench_check_size(verify_size(&b, n_ops), size, "elements"))) break;
        if (b.rank == 0) {
            /* OSU's columns, one more decimal: on-node 8-byte latencies are tens of
             * nanoseconds, and two decimals of a microsecond make their ratios coarse. */
            printf("%-10d%18.3f\n", (int)size, lat);
            fflush(stdout);
        }
    }

    bench_check_passed(b.opt.rma.check, rc);

    bench_win_free(&b.w);
    MPI_CK(MPI_Group_free(&b.peer_group));
    free(b.sbuf);
    free(b.rbuf);
    free(b.cbuf);
    MPI_Finalize();
    return rc;
}
