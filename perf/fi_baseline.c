/*
 * fi_baseline.c - raw libfabric floor for the osc/fabric benchmarks.
 *
 * The operations that osc/fabric turns MPI RMA calls into, written straight
 * against libfabric: fi_write (put), fi_read (get), fi_atomic FI_SUM (acc),
 * fi_fetch_atomic FI_SUM (fop) and fi_compare_atomic FI_CSWAP (cas), all on
 * FI_INT64 for the atomics, every one with FI_DELIVERY_COMPLETE as the
 * endpoint's default transmit flag.  Comparing osc_latency (or the bandwidth
 * benchmark) with this program shows what the MPI layer costs.
 *
 * Exactly two processes.  MPI only bootstraps (endpoint names, memory keys,
 * barriers between sizes); nothing measured goes through MPI.  Rank 0 is the
 * origin; rank 1 polls its completion queue with fi_cq_read until rank 0
 * writes the phase number into a control word of rank 1's registered memory,
 * so providers with manual progress (shm, tcp;ofi_rxm) move data exactly as
 * when an MPI target waits in a barrier.  In bibw mode both ranks are origins
 * and each also serves the other.
 *
 * Modes: lat  one operation, wait for its completion, repeat;
 *        bw   windows of W back-to-back operations, wait for all of them;
 *        bibw bw from both ranks at the same time, bandwidth of both summed;
 *        rate like bw, reported as operations per second (default 8 B).
 *
 * Exit status as in bench.h: 0 success, 1 usage, 2 libfabric or MPI failure (the
 * failing call and fi_strerror are printed), 3 data check (-c) failed. bench.c is
 * only the MPI side's plumbing (messages, options); what is measured is libfabric.
 */

#define _POSIX_C_SOURCE 200809L /* clock_gettime, strdup under -std=c11 */

#include <mpi.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "fi_check.h"
#include "raw_ep.h"

#define DEFAULT_MIN_SIZE 1L
#define DEFAULT_MAX_SIZE (1L << 22) /* 4 MiB, like OSU */
#define RATE_SIZE 8L                /* default size of the rate mode */
#define MAX_ALLOWED_SIZE (1L << 30)
#define LARGE_MESSAGE_SIZE 8192L /* above this: fewer iterations */
#define LAT_ITERS_SMALL 10000L
#define LAT_WARMUP_SMALL 100L
#define LAT_ITERS_LARGE 1000L
#define LAT_WARMUP_LARGE 10L
/* bw/bibw/rate count windows, as OSU's osu_bw does. */
#define WIN_ITERS_SMALL 100L
#define WIN_WARMUP_SMALL 10L
#define WIN_ITERS_LARGE 20L
#define WIN_WARMUP_LARGE 2L
#define DEFAULT_WINDOW 64L
#define MAX_WINDOW 65536L
#define ATOMIC_SIZE 8L
/* Operations of one window go to distinct slots while the slots fit in this
 * many bytes; beyond it slots are reused (same data, so still checkable). */
#define SLOT_BYTES_CAP (16L << 20)
#define GUARD_BYTES 64L
#define CTRL_BYTES 64L /* control word, alone in a cache line */
#define BUF_ALIGN 4096L
#define CQ_BATCH 16
#define MAX_REPORTED_MISMATCHES 5

enum op_kind { OP_PUT, OP_GET, OP_ACC, OP_FOP, OP_CAS, OP_COUNT_ };
enum mode { MODE_LAT, MODE_BW, MODE_BIBW, MODE_RATE, MODE_COUNT_ };

static const char *const op_names[OP_COUNT_] = {"put", "get", "acc", "fop", "cas"};
static const char *const op_fi_names[OP_COUNT_] = {"fi_write", "fi_read", "fi_atomic FI_SUM FI_INT64",
                                                   "fi_fetch_atomic FI_SUM FI_INT64",
                                                   "fi_compare_atomic FI_CSWAP FI_INT64"};
static const char *const mode_names[MODE_COUNT_] = {"lat", "bw", "bibw", "rate"};
static const char *const mode_labels[MODE_COUNT_] = {"Latency (us)", "Bandwidth (MB/s)", "Bandwidth (MB/s)",
                                                     "Messages/s"};

struct options {
    enum op_kind op;
    enum mode mode;
    long min_size, max_size;
    int sizes_given;
    struct bench_iters it; /* operations in lat mode, windows otherwise */
    long window;
    int check;
    const char *prov; /* -p: provider name hint, NULL = FI_PROVIDER/any */
};

/* A buffer and, when registered, its memory region. */
struct region {
    unsigned char *buf;
    size_t bytes;
    struct fid_mr *mr;
    void *desc; /* for local use; NULL unless FI_MR_LOCAL */
    uint64_t key;
};

struct bench {
    struct options opt;
    int rank, peer_rank;
    int origin, target; /* roles of this rank in the current mode */

    struct raw_ep fi;
    uint64_t mr_mode;

    struct region win; /* remotely accessible: control word + data */
    struct region src; /* origin data / atomic operand */
    struct region res; /* get destination / fetched results */
    struct region cmp; /* compare operand */
    struct region sig; /* source of the phase signal */
    uint64_t peer_win; /* address of the peer's win as fi_* wants it */
    uint64_t peer_key;

    struct fi_context2 *ctx; /* one per operation in flight, +1 for the signal */
    long outstanding;
    uint64_t phase;

    long size, wsize, nslots;
};

/* ------------------------------------------------------------------------ */
/* options                                                                  */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -np 2 [-x FI_PROVIDER=shm|tcp] fi_baseline [options]\n"
            "  -o OP      put|get|acc|fop|cas (default put): fi_write, fi_read, fi_atomic,\n"
            "             fi_fetch_atomic (FI_SUM) and fi_compare_atomic (FI_CSWAP);\n"
            "             atomics use one FI_INT64, so their only size is %ld\n"
            "  -t MODE    lat|bw|bibw|rate (default lat)\n"
            "  -m [MIN:]MAX  sizes in bytes, powers of two from MIN (>= 1) to MAX\n"
            "             (default %ld:%ld, rate %ld:%ld)\n"
            "  -i ITERS   timed iterations per size: operations in lat mode (default\n"
            "             %ld, %ld above %ld B), windows otherwise (default %ld, %ld)\n"
            "  -x WARMUP  untimed iterations per size (default %ld, %ld; windows %ld, %ld)\n"
            "  -W WINDOW  operations in flight in bw/bibw/rate (default %ld)\n"
            "  -p PROV    provider name hint (default: FI_PROVIDER or libfabric's choice)\n"
            "  -c         verify the data after every size, exit %d on mismatch\n"
            "  -h         this help\n",
            ATOMIC_SIZE, DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE, RATE_SIZE, RATE_SIZE, LAT_ITERS_SMALL,
            LAT_ITERS_LARGE, LARGE_MESSAGE_SIZE, WIN_ITERS_SMALL, WIN_ITERS_LARGE, LAT_WARMUP_SMALL,
            LAT_WARMUP_LARGE, WIN_WARMUP_SMALL, WIN_WARMUP_LARGE, DEFAULT_WINDOW, BENCH_EXIT_CHECK);
}

/* Returns 0 to run, 1 for -h, -1 on error (message printed on rank 0). */
static int parse_options(int argc, char **argv, struct options *o)
{
    long sizes[2] = {DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE};
    int op = OP_PUT, mode = MODE_LAT;
    memset(o, 0, sizeof *o);
    o->it.iters = o->it.warmup = -1;
    o->window = DEFAULT_WINDOW;
    const struct bench_opt opts[] = {
        {'o', BENCH_NAME, &op, 0, OP_COUNT_, op_names, NULL},
        {'t', BENCH_NAME, &mode, 0, MODE_COUNT_, mode_names, NULL},
        {'m', BENCH_RANGE, sizes, 1, MAX_ALLOWED_SIZE, NULL, &o->sizes_given},
        {'i', BENCH_LONG, &o->it.iters, 1, 1000000000L, NULL, NULL},
        {'x', BENCH_LONG, &o->it.warmup, 0, 1000000000L, NULL, NULL},
        {'W', BENCH_LONG, &o->window, 1, MAX_WINDOW, NULL, NULL},
        {'p', BENCH_STRING, &o->prov, 0, 0, NULL, NULL},
        {'c', BENCH_FLAG, &o->check, 0, 0, NULL, NULL},
    };
    int rc = bench_parse(argc, argv, opts, sizeof opts / sizeof opts[0], usage);
    if (rc) return rc;
    o->op = (enum op_kind)op;
    o->mode = (enum mode)mode;
    /* lat counts operations, the other modes windows, as OSU's osu_bw does. */
    if (o->mode == MODE_LAT) {
        o->it.small_iters = LAT_ITERS_SMALL, o->it.small_warmup = LAT_WARMUP_SMALL;
        o->it.large_iters = LAT_ITERS_LARGE, o->it.large_warmup = LAT_WARMUP_LARGE;
        o->it.unit = "operations";
    } else {
        o->it.small_iters = WIN_ITERS_SMALL, o->it.small_warmup = WIN_WARMUP_SMALL;
        o->it.large_iters = WIN_ITERS_LARGE, o->it.large_warmup = WIN_WARMUP_LARGE;
        o->it.unit = "windows";
    }
    o->it.large_above = LARGE_MESSAGE_SIZE;
    if (o->op >= OP_ACC) {
        o->min_size = o->max_size = ATOMIC_SIZE;
    } else if (o->mode == MODE_RATE && !o->sizes_given) {
        o->min_size = o->max_size = RATE_SIZE;
    } else {
        o->min_size = sizes[0];
        o->max_size = sizes[1];
    }
    return bench_require(sizes[0] <= sizes[1], usage, "-m: MIN (%ld) is larger than MAX (%ld)", sizes[0],
                         sizes[1]);
}

/* ------------------------------------------------------------------------ */
/* libfabric setup                                                          */

static void open_fabric(struct bench *b)
{
    struct fi_info *hints = fi_allocinfo();
    if (hints == NULL) bench_die(BENCH_EXIT_FAILURE, "fi_allocinfo failed");
    /* The capabilities osc/fabric asks for, so the same provider is chosen. */
    hints->caps = FI_RMA | FI_ATOMIC;
    hints->ep_attr->type = FI_EP_RDM;
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    /* Every mode bit we know how to honour; the provider says which it needs. */
    hints->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    if (b->opt.prov != NULL) {
        hints->fabric_attr->prov_name = strdup(b->opt.prov);
        if (hints->fabric_attr->prov_name == NULL) bench_die(BENCH_EXIT_USAGE, "out of memory");
    }
    const struct fi_cq_attr cq_attr = {
        .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE, .size = (size_t)(2 * b->opt.window + 64)};
    raw_ep_open(&b->fi, hints, &cq_attr);
    b->mr_mode = b->fi.info->domain_attr->mr_mode;
}

/* Allocates r->bytes and registers them when 'must' is set.  Keys we choose
 * (no FI_MR_PROV_KEY) only need to be unique within our domain. */
static void make_region(struct bench *b, struct region *r, size_t bytes, uint64_t access, int must,
                        uint64_t req_key)
{
    r->bytes = bytes;
    r->buf = bench_alloc(BUF_ALIGN, bytes);
    r->mr = NULL;
    r->desc = NULL;
    r->key = 0;
    if (!must) return;
    FI_CK(fi_mr_reg(b->fi.domain, r->buf, bytes, access, 0, req_key, 0, &r->mr, NULL));
    if (b->mr_mode & FI_MR_ENDPOINT) {
        FI_CK(fi_mr_bind(r->mr, &b->fi.ep->fid, 0));
        FI_CK(fi_mr_enable(r->mr));
    }
    r->key = fi_mr_key(r->mr);
    if (r->key == FI_KEY_NOTAVAIL)
        bench_die(BENCH_EXIT_FAILURE, "provider needs raw keys (FI_MR_RAW), not supported");
    if (b->mr_mode & FI_MR_LOCAL) r->desc = fi_mr_desc(r->mr);
}

static void free_region(struct region *r)
{
    if (r->mr != NULL) FI_CK(fi_close(&r->mr->fid));
    free(r->buf);
    memset(r, 0, sizeof *r);
}

static long slots_for(long size, long window)
{
    long fit = SLOT_BYTES_CAP / size;
    if (fit < 1) fit = 1;
    return window < fit ? window : fit;
}

static void make_buffers(struct bench *b)
{
    const int local = (b->mr_mode & FI_MR_LOCAL) != 0;
    const uint64_t lacc = FI_READ | FI_WRITE;
    const long w = b->opt.mode == MODE_LAT ? 1 : b->opt.window;
    size_t data = 0;
    struct {
        uint64_t addr, key;
    } mine, theirs;

    for (long s = b->opt.min_size; s <= b->opt.max_size; s *= 2) {
        size_t need = (size_t)(slots_for(s, w) * s);
        if (need > data) data = need;
    }
    if (data < (size_t)(w * ATOMIC_SIZE)) data = (size_t)(w * ATOMIC_SIZE); /* results */
    data += GUARD_BYTES;

    make_region(b, &b->win, CTRL_BYTES + data, FI_REMOTE_READ | FI_REMOTE_WRITE, 1, 1);
    make_region(b, &b->src, data, lacc, local, 2);
    make_region(b, &b->res, data, lacc, local, 3);
    make_region(b, &b->cmp, ATOMIC_SIZE, lacc, local, 4);
    make_region(b, &b->sig, sizeof(uint64_t), lacc, local, 5);

    mine.addr = (b->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)b->win.buf : 0;
    mine.key = b->win.key;
    MPI_CK(MPI_Sendrecv(&mine, 2, MPI_UINT64_T, b->peer_rank, 2, &theirs, 2, MPI_UINT64_T, b->peer_rank, 2,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    b->peer_win = theirs.addr;
    b->peer_key = theirs.key;

    b->ctx = bench_alloc(64, ((size_t)w + 1) * sizeof *b->ctx);
}

static void close_fabric(struct bench *b)
{
    free_region(&b->win);
    free_region(&b->src);
    free_region(&b->res);
    free_region(&b->cmp);
    free_region(&b->sig);
    raw_ep_close(&b->fi);
    free(b->ctx);
}

/* Refuse atomics the provider does not offer instead of timing errors. */
static void check_atomic_support(struct bench *b)
{
    size_t count = 0;
    int rc = 0;

    switch (b->opt.op) {
    case OP_ACC: rc = fi_atomicvalid(b->fi.ep, FI_INT64, FI_SUM, &count); break;
    case OP_FOP: rc = fi_fetch_atomicvalid(b->fi.ep, FI_INT64, FI_SUM, &count); break;
    case OP_CAS: rc = fi_compare_atomicvalid(b->fi.ep, FI_INT64, FI_CSWAP, &count); break;
    default: return;
    }
    if (rc != 0 || count < 1)
        bench_die(BENCH_EXIT_FAILURE, "provider %s does not support %s (%s)",
                  b->fi.info->fabric_attr->prov_name, op_fi_names[b->opt.op],
                  rc != 0 ? fi_strerror(-rc) : "count 0");
}

/* ------------------------------------------------------------------------ */
/* progress and operations                                                  */

static void progress(struct bench *b)
{
    struct fi_cq_entry ent[CQ_BATCH];
    ssize_t n = fi_cq_read(b->fi.cq, ent, CQ_BATCH);

    if (n > 0) {
        b->outstanding -= n;
    } else if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err;

        memset(&err, 0, sizeof err);
        FI_CK(fi_cq_readerr(b->fi.cq, &err, 0));
        bench_die(BENCH_EXIT_FAILURE, "operation failed: %s (%d), provider: %s", fi_strerror(err.err),
                  err.err, fi_cq_strerror(b->fi.cq, err.prov_errno, err.err_data, NULL, 0));
    } else if (n != -FI_EAGAIN) {
        fi_check_fail(n, "fi_cq_read", __FILE__, __LINE__);
    }
}

static void wait_all(struct bench *b)
{
    while (b->outstanding > 0) progress(b);
}

/* A post that returns -FI_EAGAIN is retried after reading the CQ, which is
 * what lets the provider drain its queues. */
#define POST(b, call)                                               \
    do {                                                            \
        ssize_t rc_;                                                \
        while ((rc_ = (call)) == -FI_EAGAIN) progress(b);           \
        if (rc_ < 0) fi_check_fail(rc_, #call, __FILE__, __LINE__); \
        (b)->outstanding++;                                         \
    } while (0)

/* Operation k of a window: put/get use slot k mod nslots on both sides;
 * fetching atomics return into result word k. */
static inline void issue_op(struct bench *b, long k)
{
    const size_t off = (size_t)((k % b->nslots) * b->size);
    const uint64_t raddr = b->peer_win + CTRL_BYTES;
    void *ctx = &b->ctx[k];

    switch (b->opt.op) {
    case OP_PUT:
        POST(b, fi_write(b->fi.ep, b->src.buf + off, (size_t)b->size, b->src.desc, b->fi.peer, raddr + off,
                         b->peer_key, ctx));
        break;
    case OP_GET:
        POST(b, fi_read(b->fi.ep, b->res.buf + off, (size_t)b->size, b->res.desc, b->fi.peer, raddr + off,
                        b->peer_key, ctx));
        break;
    case OP_ACC:
        POST(b, fi_atomic(b->fi.ep, b->src.buf, 1, b->src.desc, b->fi.peer, raddr, b->peer_key, FI_INT64,
                          FI_SUM, ctx));
        break;
    case OP_FOP:
        POST(b, fi_fetch_atomic(b->fi.ep, b->src.buf, 1, b->src.desc, b->res.buf + (size_t)k * ATOMIC_SIZE,
                                b->res.desc, b->fi.peer, raddr, b->peer_key, FI_INT64, FI_SUM, ctx));
        break;
    case OP_CAS:
        POST(b, fi_compare_atomic(b->fi.ep, b->src.buf, 1, b->src.desc, b->cmp.buf, b->cmp.desc,
                                  b->res.buf + (size_t)k * ATOMIC_SIZE, b->res.desc, b->fi.peer, raddr,
                                  b->peer_key, FI_INT64, FI_CSWAP, ctx));
        break;
    default: break;
    }
}

/* ------------------------------------------------------------------------ */
/* data patterns; values depend on owner and size so stale data cannot pass */

static unsigned char pat_byte(int owner, long size, long slot, long j)
{
    return (unsigned char)(((unsigned long)j * 131u + (unsigned long)size * 7u + (unsigned long)slot * 29u +
                            (unsigned long)owner * 61u + 17u) &
                           0xffu);
}

/* What bytes hold before an operation: differs from the pattern the peer
 * ('owner') moves there in every bit, so every missing byte is caught. */
static unsigned char filler_byte(int owner, long size, long slot, long j)
{
    return (unsigned char)~pat_byte(owner, size, slot, j);
}

static uint64_t counter_base(int owner)
{
    return UINT64_C(0x100000) + ((uint64_t)owner << 32);
}
static uint64_t addend(int src)
{
    return (uint64_t)(3 + 2 * src);
}

/* CAS values: window w replaces cas_value(w) by cas_value(w + 1). */
static uint64_t cas_value(int owner, int src, long w)
{
    return (UINT64_C(0x0123456789abcdef) ^ ((uint64_t)(owner + 1) << 56)) +
           (uint64_t)w * (UINT64_C(0x0000000100000003) * (uint64_t)(src + 1));
}

static void put_u64(unsigned char *p, long k, uint64_t v)
{
    memcpy(p + k * 8, &v, 8);
}
static uint64_t get_u64(const unsigned char *p, long k)
{
    uint64_t v;
    memcpy(&v, p + k * 8, 8);
    return v;
}

static unsigned char *win_data(struct bench *b)
{
    return b->win.buf + CTRL_BYTES;
}

static void setup_size(struct bench *b)
{
    const int me = b->rank;
    const long span = b->nslots * b->size;

    if (b->origin) {
        for (long s = 0; s < b->nslots; s++) {
            for (long j = 0; j < b->size; j++) {
                b->src.buf[s * b->size + j] = pat_byte(me, b->size, s, j);
            }
        }
        for (long j = 0; j < (long)b->res.bytes; j++) {
            b->res.buf[j] = filler_byte(b->peer_rank, b->size, j / b->size, j % b->size);
        }
        if (b->opt.op == OP_ACC || b->opt.op == OP_FOP) put_u64(b->src.buf, 0, addend(me));
    }
    if (b->target) {
        unsigned char *d = win_data(b);
        if (b->opt.op == OP_PUT || b->opt.op == OP_GET) {
            for (long j = 0; j < span + GUARD_BYTES; j++) {
                long s = j / b->size, jj = j % b->size;
                d[j] = (b->opt.op == OP_GET && j < span) ? pat_byte(me, b->size, s, jj)
                                                         : filler_byte(b->peer_rank, b->size, s, jj);
            }
        } else {
            put_u64(d, 0, b->opt.op == OP_CAS ? cas_value(me, b->peer_rank, 0) : counter_base(me));
            for (long k = 1; k <= GUARD_BYTES / 8; k++) put_u64(d, k, ~counter_base(me) - (uint64_t)k);
        }
    }
}

static long mismatch(struct bench *b, long nbad, const char *what, long idx, uint64_t got, uint64_t want)
{
    if (nbad < MAX_REPORTED_MISMATCHES) {
        fprintf(stderr,
                "fi_baseline: CHECK FAILED: rank %d, -o %s -t %s, size %ld: %s[%ld] = "
                "0x%llx, expected 0x%llx\n",
                bench_rank(), op_names[b->opt.op], mode_names[b->opt.mode], b->size, what, idx,
                (unsigned long long)got, (unsigned long long)want);
    }
    return nbad + 1;
}

/* Verifies what this rank can see after nwin windows; returns #mismatches. */
static long verify_size(struct bench *b, long nwin)
{
    const int me = b->rank, peer = b->peer_rank;
    const long n_ops = nwin * b->wsize;
    const long span = b->nslots * b->size;
    long nbad = 0;

    if (b->target) {
        const unsigned char *d = win_data(b);
        switch (b->opt.op) {
        case OP_PUT:
        case OP_GET:
            for (long j = 0; j < span + GUARD_BYTES; j++) {
                long s = j / b->size, jj = j % b->size;
                unsigned char want;
                if (j >= span)
                    want = filler_byte(peer, b->size, s, jj);
                else if (b->opt.op == OP_PUT)
                    want = pat_byte(peer, b->size, s, jj);
                else
                    want = pat_byte(me, b->size, s, jj);
                if (d[j] != want) nbad = mismatch(b, nbad, "target", j, d[j], want);
            }
            break;
        case OP_ACC:
        case OP_FOP:
        case OP_CAS: {
            uint64_t want = b->opt.op == OP_CAS ? cas_value(me, peer, nwin)
                                                : counter_base(me) + (uint64_t)n_ops * addend(peer);
            if (get_u64(d, 0) != want) nbad = mismatch(b, nbad, "target", 0, get_u64(d, 0), want);
            for (long k = 1; k <= GUARD_BYTES / 8; k++) {
                want = ~counter_base(me) - (uint64_t)k;
                if (get_u64(d, k) != want) nbad = mismatch(b, nbad, "target", k, get_u64(d, k), want);
            }
            break;
        }
        default: break;
        }
    }

    if (b->origin) {
        switch (b->opt.op) {
        case OP_GET:
            for (long j = 0; j < span + GUARD_BYTES; j++) {
                unsigned char want = j < span ? pat_byte(peer, b->size, j / b->size, j % b->size)
                                              : filler_byte(peer, b->size, j / b->size, j % b->size);
                if (b->res.buf[j] != want) nbad = mismatch(b, nbad, "result", j, b->res.buf[j], want);
            }
            break;
        case OP_FOP: {
            /* The last window's W fetches saw W distinct consecutive values. */
            const uint64_t a = addend(me);
            const uint64_t first = counter_base(peer) + (uint64_t)(n_ops - b->wsize) * a;
            char *seen = bench_alloc(64, (size_t)b->wsize);
            for (long k = 0; k < b->wsize; k++) {
                uint64_t v = get_u64(b->res.buf, k), step = (v - first) / a;
                if (v < first || (v - first) % a != 0 || step >= (uint64_t)b->wsize || seen[step]) {
                    nbad = mismatch(b, nbad, "fetched", k, v, first + (uint64_t)k * a);
                } else {
                    seen[step] = 1;
                }
            }
            free(seen);
            break;
        }
        case OP_CAS: {
            /* Exactly one CAS of the last window found the old value; the
             * others failed and returned the value it stored. */
            const uint64_t old = cas_value(peer, me, nwin - 1), new = cas_value(peer, me, nwin);
            long n_old = 0;
            for (long k = 0; k < b->wsize; k++) {
                uint64_t v = get_u64(b->res.buf, k);
                if (v == old)
                    n_old++;
                else if (v != new)
                    nbad = mismatch(b, nbad, "fetched", k, v, new);
            }
            if (n_old != 1) nbad = mismatch(b, nbad, "successful CAS count", 0, (uint64_t)n_old, 1);
            break;
        }
        default: break;
        }
    }
    if (nbad > MAX_REPORTED_MISMATCHES) {
        fprintf(stderr, "fi_baseline: CHECK FAILED: rank %d: %ld mismatches in total\n", bench_rank(), nbad);
    }
    fflush(stderr);
    return nbad;
}

/* ------------------------------------------------------------------------ */
/* timed loop and phase end                                                  */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs warmup + iters windows of wsize operations; returns the seconds the
 * timed windows took. */
static double run_windows(struct bench *b, long warmup, long iters)
{
    const long nwin = warmup + iters;
    double t0 = now();

    for (long w = 0; w < nwin; w++) {
        if (w == warmup) t0 = now();
        if (b->opt.op == OP_CAS) {
            /* The previous window is complete, so the operands may change. */
            put_u64(b->cmp.buf, 0, cas_value(b->peer_rank, b->rank, w));
            put_u64(b->src.buf, 0, cas_value(b->peer_rank, b->rank, w + 1));
        }
        for (long k = 0; k < b->wsize; k++) issue_op(b, k);
        wait_all(b);
    }
    return now() - t0;
}

static uint64_t load_ctrl(struct bench *b)
{
    uint64_t v = *(volatile uint64_t *)b->win.buf;
    atomic_thread_fence(memory_order_acquire);
    return v;
}

/* Tells the peer this rank is done with the phase; delivery complete means
 * every earlier (completed) operation is visible when the peer sees it. */
static void signal_peer(struct bench *b)
{
    put_u64(b->sig.buf, 0, b->phase);
    POST(b, fi_write(b->fi.ep, b->sig.buf, sizeof(uint64_t), b->sig.desc, b->fi.peer, b->peer_win,
                     b->peer_key, &b->ctx[b->wsize]));
    wait_all(b);
}

/* The target's side: keep the provider progressing until the peer is done. */
static void serve_until_signalled(struct bench *b)
{
    while (load_ctrl(b) < b->phase) progress(b);
    wait_all(b);
}

/* ------------------------------------------------------------------------ */

static void print_header(const struct bench *b)
{
    const struct options *o = &b->opt;
    uint64_t mr_mode = b->mr_mode;
    uint32_t v = fi_version();

    printf("# fi_baseline: %s %s test (raw libfabric floor for osc/fabric, OSU-compatible output)\n",
           op_fi_names[o->op],
           o->mode == MODE_LAT    ? "latency"
           : o->mode == MODE_RATE ? "message rate"
           : o->mode == MODE_BW   ? "bandwidth"
                                  : "bidirectional bandwidth");
    printf("# Provider: %s (fabric %s, domain %s), libfabric %u.%u\n", b->fi.info->fabric_attr->prov_name,
           b->fi.info->fabric_attr->name, b->fi.info->domain_attr->name, FI_MAJOR(v), FI_MINOR(v));
    printf("# Operation: %s, tx op_flags FI_DELIVERY_COMPLETE, target polls fi_cq_read\n",
           op_fi_names[o->op]);
    printf("# mr_mode: %s\n", mr_mode ? fi_tostr(&mr_mode, FI_TYPE_MR_MODE) : "none");
    if (o->op >= OP_ACC) printf("# Message size fixed at %ld bytes (one FI_INT64)\n", ATOMIC_SIZE);
    if (o->mode == MODE_LAT) {
        printf("# Latency: one operation, then wait for its completion\n");
    } else {
        printf("# Window: %ld operations in flight, then wait for all%s\n", o->window,
               o->mode == MODE_BIBW ? " (both ranks at once, bandwidth summed)" : "");
    }
    bench_print_iterations(&o->it);
    if (o->check) printf("# Check mode: data verified after every size\n");
    printf("%-10s%18s\n", "# Size", mode_labels[o->mode]);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct bench b;
    int nprocs, go, rc = 0;

    memset(&b, 0, sizeof b);
    nprocs = bench_start(&argc, &argv, "fi_baseline", &b.rank);
    go = bench_proceed(parse_options(argc, argv, &b.opt), nprocs, 2, " (rank 0 = origin, rank 1 = target)");
    if (go != BENCH_PROCEED) return go;
    bench_context("-o %s -t %s", op_names[b.opt.op], mode_names[b.opt.mode]);
    b.peer_rank = 1 - b.rank;
    b.origin = b.rank == 0 || b.opt.mode == MODE_BIBW;
    b.target = b.rank == 1 || b.opt.mode == MODE_BIBW;
    b.wsize = b.opt.mode == MODE_LAT ? 1 : b.opt.window;

    open_fabric(&b);
    raw_ep_connect(&b.fi, b.peer_rank);
    make_buffers(&b);
    check_atomic_support(&b);
    if (b.rank == 0) print_header(&b);

    for (long size = b.opt.min_size; size <= b.opt.max_size; size *= 2) {
        const long iters = bench_iters_for(&b.opt.it, size);
        const long warmup = bench_warmup_for(&b.opt.it, size);
        double secs = 0.0, slowest = 0.0, value = 0.0;

        b.size = size;
        b.nslots = b.opt.op >= OP_ACC ? 1 : slots_for(size, b.wsize);
        b.phase++;
        setup_size(&b);
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));

        if (b.origin) {
            secs = run_windows(&b, warmup, iters);
            signal_peer(&b);
        }
        if (b.target) serve_until_signalled(&b);
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_CK(MPI_Reduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));

        if (b.opt.check && (rc = bench_check_size(verify_size(&b, warmup + iters), size, "values"))) break;
        if (b.rank == 0) {
            const double ops = (double)iters * (double)b.wsize;
            switch (b.opt.mode) {
            case MODE_LAT: value = slowest * 1e6 / ops; break;
            case MODE_BW: value = ops * (double)size / slowest / 1e6; break;
            case MODE_BIBW: value = 2.0 * ops * (double)size / slowest / 1e6; break;
            case MODE_RATE: value = ops / slowest; break;
            default: break;
            }
            printf("%-10ld%18.2f\n", size, value);
            fflush(stdout);
        }
    }
    bench_check_passed(b.opt.check, rc);

    MPI_CK(MPI_Barrier(MPI_COMM_WORLD)); /* no traffic in flight when closing */
    close_fabric(&b);
    MPI_Finalize();
    return rc;
}
