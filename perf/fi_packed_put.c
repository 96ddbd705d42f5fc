/*
 * fi_packed_put.c - raw libfabric floor of a packed put (osc_ddt -t put -L both).
 *
 * osc_ddt measures a put of TOTAL bytes in S-byte segments (origin stride 2S, target
 * stride 3S) against the same bytes put contiguously. Where the segments are small,
 * osc/fabric packs them: the origin copies the segments into chunks, the chunks cross
 * the fabric, the target copies each segment to its place. This program does exactly
 * that and nothing else, straight on libfabric, so that osc_ddt's ratio can be set
 * against what the same copies cost without any MPI or plugin around them.
 *
 * Two ways to move a chunk (-t):
 *   pull  the origin packs the chunk into a registered slot and sends its number; the
 *         target reads it (fi_read) into a slot of its own, puts each segment in place
 *         and answers (osc/fabric's rendezvous put, engine/packed_rendezvous.cpp);
 *   push  the origin packs the chunk and writes it (fi_writedata, the chunk's number as
 *         remote CQ data) into a slot the target lent up front; the target, told by its
 *         CQ that the bytes are in place, puts the segments in place and answers.
 * An answer frees the slot for the chunk after the next -R - 1. The contiguous put is
 * one fi_write of TOTAL bytes, waited for with FI_DELIVERY_COMPLETE, as a put + flush.
 * Each iteration times one of each, one after the other; the line of a segment size
 * holds their medians.
 *
 * Exactly two processes: rank 0 the origin, rank 1 the target. MPI only bootstraps
 * (names, keys, barriers). Exit status as in bench.h; -c checks every segment.
 */

#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "fi_check.h"
#include "raw_ep.h"

#define RECVS 64                /* small messages a rank keeps posted */
#define MSG_NOTICE (1ULL << 62) /* pull: "chunk N is packed" */
#define MSG_DONE (1ULL << 61)   /* the origin's contiguous put is over */
#define MSG_NUMBER ((1ULL << 32) - 1)

enum way { WAY_PULL, WAY_PUSH, WAY_COUNT_ };
static const char *const way_names[WAY_COUNT_] = {"pull", "push"};

struct options {
    int way, check;
    long min_seg, max_seg, total, chunk, slots, iters, warmup;
    const char *prov;
};

struct bench {
    struct options opt;
    int rank;
    struct raw_ep fi;
    int virt_addr;

    /* Target: the window (3 * total for the segments, then total for the contiguous
     * put) and its slots; origin: the source (2 * total) and its slots. */
    unsigned char *mem, *slots;
    struct fid_mr *mem_mr, *slots_mr;
    uint64_t peer_mem, peer_mem_key, peer_slots, peer_slots_key;

    uint64_t recv_buf[RECVS];
    uint64_t msg; /* what the last receive brought, for the loops below */
    long msgs;    /* receives completed */
    long writes;  /* contiguous writes completed */
    long landed;  /* chunks announced: pull's notices, push's remote CQ data */
    uint64_t landed_number[RECVS];
    long slot_done[RECVS]; /* per slot: its chunk's write (origin) or read (target) completed */
};

/* Context markers: the address says what completed. */
static char ctx_rma, ctx_recv[RECVS], ctx_slot[RECVS];

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -np 2 [-x FI_PROVIDER=shm|tcp] fi_packed_put [options]\n"
            "  -t pull|push   how a chunk moves (default pull, as osc/fabric)\n"
            "  -m [MIN:]MAX   segment sizes, powers of two (default 64:4096)\n"
            "  -T TOTAL       bytes of one put (default 1048576)\n"
            "  -k CHUNK       bytes of one chunk (default 524288)\n"
            "  -R SLOTS       chunks in flight (default 2)\n"
            "  -i ITERS       timed puts of each kind per size (default 100)\n"
            "  -x WARMUP      untimed ones (default 5)\n"
            "  -p PROV        provider name hint (default: FI_PROVIDER or libfabric's choice)\n"
            "  -c             check every segment at the target, exit %d on mismatch\n"
            "  -h             this help\n",
            BENCH_EXIT_CHECK);
}

static int parse_options(int argc, char **argv, struct options *o)
{
    long segs[2] = {64, 4096};
    memset(o, 0, sizeof *o);
    o->total = 1L << 20, o->chunk = 512L << 10, o->slots = 2, o->iters = 100, o->warmup = 5;
    const struct bench_opt opts[] = {
        {'t', BENCH_NAME, &o->way, 0, WAY_COUNT_, way_names, NULL},
        {'m', BENCH_RANGE, segs, 1, 1L << 20, NULL, NULL},
        {'T', BENCH_LONG, &o->total, 1, 1L << 28, NULL, NULL},
        {'k', BENCH_LONG, &o->chunk, 1, 1L << 26, NULL, NULL},
        {'R', BENCH_LONG, &o->slots, 1, RECVS / 2, NULL, NULL},
        {'i', BENCH_LONG, &o->iters, 1, 1000000L, NULL, NULL},
        {'x', BENCH_LONG, &o->warmup, 0, 1000000L, NULL, NULL},
        {'p', BENCH_STRING, &o->prov, 0, 0, NULL, NULL},
        {'c', BENCH_FLAG, &o->check, 0, 0, NULL, NULL},
    };
    int rc = bench_parse(argc, argv, opts, sizeof opts / sizeof opts[0], usage);
    if (rc) return rc;
    o->min_seg = segs[0], o->max_seg = segs[1];
    rc = bench_require((o->min_seg & (o->min_seg - 1)) == 0 && (o->max_seg & (o->max_seg - 1)) == 0, usage,
                       "segment sizes must be powers of two");
    if (!rc)
        rc = bench_require(o->total % o->max_seg == 0, usage,
                           "TOTAL must be a multiple of every segment size");
    if (!rc)
        rc = bench_require(o->chunk % o->max_seg == 0, usage,
                           "CHUNK must be a multiple of every segment size");
    return rc;
}

static void post_recv(struct bench *b, int i)
{
    FI_CK(fi_recv(b->fi.ep, &b->recv_buf[i], sizeof b->recv_buf[i], NULL, b->fi.peer, &ctx_recv[i]));
}

/* One round of the CQ. Received messages are queued in order in landed_number when
 * they are notices or remote CQ data (the target's work), else left in msg. */
static void poll_cq(struct bench *b)
{
    struct fi_cq_data_entry e[16];
    ssize_t n = fi_cq_read(b->fi.cq, e, 16);
    if (n == -FI_EAGAIN) return;
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = {0};
        FI_CK(fi_cq_readerr(b->fi.cq, &err, 0));
        bench_die(BENCH_EXIT_FAILURE, "completion error: %s", fi_strerror(err.err));
    }
    FI_CK(n);
    for (ssize_t i = 0; i < n; i++) {
        if (e[i].flags & FI_REMOTE_CQ_DATA) {
            b->landed_number[b->landed++ % RECVS] = e[i].data;
        } else if (e[i].op_context == &ctx_rma) {
            b->writes++;
        } else if ((char *)e[i].op_context >= ctx_slot && (char *)e[i].op_context < ctx_slot + RECVS) {
            b->slot_done[(char *)e[i].op_context - ctx_slot]++;
        } else {
            const int slot = (int)((char *)e[i].op_context - ctx_recv);
            const uint64_t m = b->recv_buf[slot];
            post_recv(b, slot);
            if (m & MSG_NOTICE)
                b->landed_number[b->landed++ % RECVS] = m & MSG_NUMBER;
            else
                b->msg = m, b->msgs++;
        }
    }
}

static void send_msg(struct bench *b, uint64_t m)
{
    ssize_t rc;
    while ((rc = fi_inject(b->fi.ep, &m, sizeof m, b->fi.peer)) == -FI_EAGAIN) poll_cq(b);
    FI_CK(rc);
}

static void wait_writes(struct bench *b, long want)
{
    while (b->writes < want) poll_cq(b);
}

static unsigned char pattern(long i, long seg)
{
    return (unsigned char)(i * 7 + seg + 1);
}

/* A put's chunks, and the bytes of chunk c (the last may be short). */
static long chunk_count(const struct options *o)
{
    return (o->total + o->chunk - 1) / o->chunk;
}
static long chunk_bytes(const struct options *o, long c)
{
    const long from = c * o->chunk;
    return o->total - from < o->chunk ? o->total - from : o->chunk;
}

/* The origin's packed put of segments of seg bytes. Returns when every chunk is
 * answered. A slot is packed again once the target answered the chunk it held and,
 * pushing, our write of it completed. */
static void origin_packed(struct bench *b, long seg)
{
    const struct options *o = &b->opt;
    const long nchunks = chunk_count(o);
    const long answers0 = b->msgs;
    for (long c = 0; c < nchunks; c++) {
        const long s = c % o->slots;
        while (c - (b->msgs - answers0) >= o->slots) poll_cq(b);
        if (o->way == WAY_PUSH && c >= o->slots)
            while (b->slot_done[s] < (c - s) / o->slots) poll_cq(b);
        const long from = c * o->chunk, bytes = chunk_bytes(o, c);
        const uint64_t room = (uint64_t)s * (uint64_t)o->chunk; /* the slot's offset, ours and the target's */
        unsigned char *slot = b->slots + room;
        for (long at = 0; at < bytes; at += seg) memcpy(slot + at, b->mem + 2 * (from + at), (size_t)seg);
        if (o->way == WAY_PUSH) {
            ssize_t rc;
            while ((rc = fi_writedata(b->fi.ep, slot, (size_t)bytes, NULL, (uint64_t)c, b->fi.peer,
                                      b->peer_slots + room, b->peer_slots_key, &ctx_slot[s])) == -FI_EAGAIN)
                poll_cq(b);
            FI_CK(rc);
        } else {
            send_msg(b, MSG_NOTICE | (uint64_t)c);
        }
        poll_cq(b); /* pull: the target's read needs our progress */
    }
    while (b->msgs - answers0 < nchunks) poll_cq(b);
    if (o->way == WAY_PUSH) { /* every write completed: the slots start even next time */
        for (long s = 0; s < o->slots && s < nchunks; s++)
            while (b->slot_done[s] < (nchunks - 1 - s) / o->slots + 1) poll_cq(b);
        for (long s = 0; s < o->slots; s++) b->slot_done[s] = 0;
    }
}

/* The target's side of one packed put. */
static void target_packed(struct bench *b, long seg)
{
    const struct options *o = &b->opt;
    const long nchunks = chunk_count(o);
    const long landed0 = b->landed;
    long read = 0, done = 0;
    for (long s = 0; s < o->slots; s++) b->slot_done[s] = 0;
    while (done < nchunks) {
        if (o->way == WAY_PULL && read < b->landed - landed0) {
            const long c = (long)b->landed_number[(landed0 + read) % RECVS];
            const long bytes = chunk_bytes(o, c);
            const uint64_t room = (uint64_t)(c % o->slots) * (uint64_t)o->chunk;
            ssize_t rc;
            while ((rc = fi_read(b->fi.ep, b->slots + room, (size_t)bytes, NULL, b->fi.peer,
                                 b->peer_slots + room, b->peer_slots_key, &ctx_slot[c % o->slots])) ==
                   -FI_EAGAIN)
                poll_cq(b);
            FI_CK(rc);
            read++;
            continue;
        }
        /* Chunks in the order announced; pulled, once their read completed. */
        const long c = done < b->landed - landed0 ? (long)b->landed_number[(landed0 + done) % RECVS] : -1;
        if (c < 0 || (o->way == WAY_PULL && (done >= read || b->slot_done[c % o->slots] <= c / o->slots))) {
            poll_cq(b);
            continue;
        }
        const long from = c * o->chunk, bytes = chunk_bytes(o, c);
        const unsigned char *slot = b->slots + (c % o->slots) * o->chunk;
        for (long at = 0; at < bytes; at += seg) memcpy(b->mem + 3 * (from + at), slot + at, (size_t)seg);
        send_msg(b, (uint64_t)c);
        done++;
    }
}

/* Mismatched segments of the last packed put of seg bytes. */
static long check_segments(const struct bench *b, long seg)
{
    long bad = 0;
    for (long at = 0; at < b->opt.total; at += seg)
        for (long i = 0; i < seg; i++)
            if (b->mem[3 * at + i] != pattern(2 * at + i, seg)) {
                bad++;
                break;
            }
    return bad;
}

static void setup(struct bench *b)
{
    struct fi_info *hints = fi_allocinfo();
    if (!hints) bench_die(BENCH_EXIT_FAILURE, "fi_allocinfo failed");
    hints->caps = FI_MSG | FI_RMA;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->mode = 0;
    if (b->opt.prov) hints->fabric_attr->prov_name = strdup(b->opt.prov);
    const struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA, .size = 1024};
    raw_ep_open(&b->fi, hints, &cq_attr);
    if (b->opt.way == WAY_PUSH && b->fi.info->domain_attr->cq_data_size < 4)
        bench_die(BENCH_EXIT_FAILURE, "%s carries no remote CQ data: -t push needs it",
                  b->fi.info->fabric_attr->prov_name);
    /* 1: the legacy FI_MR_BASIC, whose name libfabric 2 deprecates. */
    b->virt_addr = (b->fi.info->domain_attr->mr_mode & (FI_MR_VIRT_ADDR | 1)) != 0;
    raw_ep_connect(&b->fi, 1 - b->rank);

    const struct options *o = &b->opt;
    const size_t mem_bytes = (size_t)(b->rank == 0 ? 2 * o->total : 4 * o->total);
    const size_t slot_bytes = (size_t)(o->slots * o->chunk);
    b->mem = bench_alloc(4096, mem_bytes);
    b->slots = bench_alloc(4096, slot_bytes);
    /* Distinct requested keys: providers that take the user's key refuse a repeat. */
    FI_CK(fi_mr_reg(b->fi.domain, b->mem, mem_bytes, FI_REMOTE_WRITE, 0, 1 + (uint64_t)b->rank * 2, 0,
                    &b->mem_mr, NULL));
    FI_CK(fi_mr_reg(b->fi.domain, b->slots, slot_bytes, FI_REMOTE_WRITE | FI_REMOTE_READ, 0,
                    2 + (uint64_t)b->rank * 2, 0, &b->slots_mr, NULL));
    const uint64_t mine[4] = {b->virt_addr ? (uint64_t)(uintptr_t)b->mem : 0, fi_mr_key(b->mem_mr),
                              b->virt_addr ? (uint64_t)(uintptr_t)b->slots : 0, fi_mr_key(b->slots_mr)};
    uint64_t theirs[4];
    MPI_CK(MPI_Sendrecv(mine, 4, MPI_UINT64_T, 1 - b->rank, 1, theirs, 4, MPI_UINT64_T, 1 - b->rank, 1,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    b->peer_mem = theirs[0], b->peer_mem_key = theirs[1], b->peer_slots = theirs[2],
    b->peer_slots_key = theirs[3];
    for (int i = 0; i < RECVS; i++) post_recv(b, i);
}

static void teardown(struct bench *b)
{
    FI_CK(fi_close(&b->slots_mr->fid));
    FI_CK(fi_close(&b->mem_mr->fid));
    raw_ep_close(&b->fi);
    free(b->mem);
    free(b->slots);
}

/* One segment size: returns what the check found wrong (0 without -c). */
static long run_size(struct bench *b, long seg, double *packed, double *contig)
{
    const struct options *o = &b->opt;
    if (b->rank == 0)
        for (long i = 0; i < 2 * o->total; i++) b->mem[i] = pattern(i, seg);
    else
        memset(b->mem, 0, (size_t)(3 * o->total));
    long bad = 0;
    for (long it = 0; it < o->warmup + o->iters; it++) {
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        const double t0 = MPI_Wtime();
        if (b->rank == 0)
            origin_packed(b, seg);
        else
            target_packed(b, seg);
        const double t1 = MPI_Wtime();
        if (b->rank == 1 && o->check && it == 0) bad = check_segments(b, seg);
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        const double t2 = MPI_Wtime();
        if (b->rank == 0) {
            const long want = b->writes + 1;
            ssize_t rc;
            while ((rc = fi_writemsg(b->fi.ep,
                                     &(struct fi_msg_rma){
                                         .msg_iov = &(struct iovec){b->mem, (size_t)o->total},
                                         .iov_count = 1,
                                         .addr = b->fi.peer,
                                         .rma_iov = &(struct fi_rma_iov){b->peer_mem + 3 * (uint64_t)o->total,
                                                                         (size_t)o->total, b->peer_mem_key},
                                         .rma_iov_count = 1,
                                         .context = &ctx_rma},
                                     FI_COMPLETION | FI_DELIVERY_COMPLETE)) == -FI_EAGAIN)
                poll_cq(b);
            FI_CK(rc);
            wait_writes(b, want);
        }
        const double t3 = MPI_Wtime();
        /* The target serves the contiguous put until the origin says it is over. */
        if (b->rank == 0)
            send_msg(b, MSG_DONE);
        else {
            const long msgs = b->msgs;
            while (b->msgs == msgs) poll_cq(b);
        }
        if (it >= o->warmup) packed[it - o->warmup] = t1 - t0, contig[it - o->warmup] = t3 - t2;
    }
    return bad;
}

int main(int argc, char **argv)
{
    struct bench b;
    memset(&b, 0, sizeof b);
    const int nprocs = bench_start(&argc, &argv, "fi_packed_put", &b.rank);
    const int go =
        bench_proceed(parse_options(argc, argv, &b.opt), nprocs, 2, "rank 0 origin, rank 1 target");
    if (go != BENCH_PROCEED) return go;
    setup(&b);
    const struct options *o = &b.opt;
    if (b.rank == 0) {
        printf(
            "# fi_packed_put: %ld bytes in S-byte segments (origin stride 2S, target 3S), packed into\n"
            "# %ld-byte chunks, %ld in flight, moved by %s over %s, against one fi_write of the same\n"
            "# bytes; medians of %ld puts each\n",
            o->total, o->chunk, o->slots, o->way == WAY_PUSH ? "fi_writedata" : "fi_read",
            b.fi.info->fabric_attr->prov_name, o->iters);
        printf("%-12s %10s %14s %14s %8s\n", "# Segment", "Segments", "Packed MB/s", "Contig MB/s", "Ratio");
    }
    double *packed = bench_alloc(64, sizeof(double) * (size_t)o->iters);
    double *contig = bench_alloc(64, sizeof(double) * (size_t)o->iters);
    int rc = 0;
    for (long seg = o->min_seg; seg <= o->max_seg && !rc; seg *= 2) {
        bench_context("segments of %ld bytes", seg);
        const long bad = run_size(&b, seg, packed, contig);
        rc = bench_check_size(bad, seg, "segments");
        if (b.rank == 0 && !rc) {
            const double p = bench_median(packed, o->iters), c = bench_median(contig, o->iters);
            printf("%-12ld %10ld %14.2f %14.2f %8.2f\n", seg, o->total / seg, o->total / p / 1e6,
                   o->total / c / 1e6, p / c);
            fflush(stdout);
        }
    }
    bench_check_passed(o->check, rc);
    free(packed);
    free(contig);
    MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
    teardown(&b);
    MPI_Finalize();
    return rc;
}
