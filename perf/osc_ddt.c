/*
 * osc_ddt.c - MPI_Put / MPI_Get / MPI_Accumulate / MPI_Get_accumulate bandwidth of
 * derived datatypes against segment size.
 *
 * One operation moves TOTAL bytes between two vector datatypes of MPI_BYTE (of MPI_INT
 * with MPI_SUM for -t acc and gacc, whose result has the origin's layout) whose
 * blocks (the segments) are S bytes: the origin's blocks are S apart by a stride of
 * 2S, the target's by 3S, so no segment is contiguous with the next on either side
 * (-L both). -L origin keeps the target contiguous, -L target the origin.
 * The same TOTAL bytes then move as one contiguous operation. Both are timed over the
 * same iterations (one operation + MPI_Win_flush each, under one lock held for the
 * loop), and each line gives both bandwidths and their ratio in time: how much a
 * derived datatype costs over moving the same bytes contiguously. The two alternate in
 * -r rounds and each line reports medians over them: a shared VM changes speed by up
 * to twice within seconds, and a ratio of two loops run in different modes measures
 * the VM; the ratio is the median of each round's, both halves timed back to back.
 *
 * Exactly two processes; rank 0 is the origin, rank 1 the target.
 *
 *   osc_ddt [-t put|get|acc|gacc] [-L both|origin|target] [-w create|allocate|dynamic]
 *           [-T TOTAL] [-m [MIN:]MAX] [-i ITERS]
 *           [-x WARMUP] [-r ROUNDS] [-c]
 *
 * -c checks every byte that moved (and that the bytes between target segments stayed
 * untouched) after each size; for acc and gacc the sums, and gacc's last result.
 * Exit status as in bench.h.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define DEFAULT_TOTAL (1L << 20)
#define DEFAULT_MIN 8L
#define DEFAULT_MAX 65536L
#define MAX_TOTAL (1L << 28)
#define DEFAULT_ROUNDS 5L
#define MAX_ROUNDS 1000L

enum kind { K_PUT, K_GET, K_ACC, K_GACC, K_N };
static const char *const kind_names[K_N] = {"put", "get", "acc", "gacc"};
static const char *const call_names[K_N] = {"Put", "Get", "Accumulate", "Get_accumulate"};
/* Which sides are strided. */
enum layout { L_BOTH, L_ORIGIN, L_TARGET, L_N };
static const char *const layout_names[L_N] = {"both", "origin", "target"};

struct options {
    int kind;
    int layout;
    int flavor;
    long total;
    long sizes[2];
    struct bench_iters it;
    long rounds;
    int check;
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -np 2 osc_ddt [options]\n"
            "  -t put|get|acc|gacc  operation (default put; acc and gacc: MPI_INT, MPI_SUM)\n"
            "  -L both|origin|target  the strided sides; the others are contiguous (default both)\n"
            "  -w create|allocate|dynamic  window flavor (default allocate)\n"
            "  -T TOTAL       bytes moved by one operation (default %ld)\n"
            "  -m [MIN:]MAX   segment sizes, powers of two (default %ld:%ld)\n"
            "  -i ITERS       timed operations per size and layout (default 100, 20 above 8 B)\n"
            "  -x WARMUP      untimed operations first (default 10, 2 above 8 B)\n"
            "  -r ROUNDS      timed loops of each kind, alternating; medians reported (default %ld)\n"
            "  -c             check the data after each size\n"
            "  -h             this help\n",
            DEFAULT_TOTAL, DEFAULT_MIN, DEFAULT_MAX, DEFAULT_ROUNDS);
}

static int parse(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->total = DEFAULT_TOTAL;
    o->sizes[0] = DEFAULT_MIN;
    o->sizes[1] = DEFAULT_MAX;
    o->rounds = DEFAULT_ROUNDS;
    o->flavor = BENCH_ALLOCATE;
    /* Small segments mean many of them per operation: fewer iterations there would
     * make the noisy small end noisier, so the split is at 8 bytes only. */
    o->it = (struct bench_iters){-1, -1, 100, 10, 20, 2, 8, NULL};
    const struct bench_opt opts[] = {
        {'t', BENCH_NAME, &o->kind, 0, K_N, kind_names, NULL},
        {'L', BENCH_NAME, &o->layout, 0, L_N, layout_names, NULL},
        {'w', BENCH_NAME, &o->flavor, 0, BENCH_FLAVORS, bench_flavor_names, NULL},
        {'T', BENCH_LONG, &o->total, 1, MAX_TOTAL, NULL, NULL},
        {'m', BENCH_RANGE, o->sizes, 1, MAX_TOTAL, NULL, NULL},
        {'i', BENCH_LONG, &o->it.iters, 1, 1000000000L, NULL, NULL},
        {'x', BENCH_LONG, &o->it.warmup, 0, 1000000000L, NULL, NULL},
        {'r', BENCH_LONG, &o->rounds, 1, MAX_ROUNDS, NULL, NULL},
        {'c', BENCH_FLAG, &o->check, 0, 0, NULL, NULL},
    };
    int rc = bench_parse(argc, argv, opts, sizeof opts / sizeof opts[0], usage);
    if (rc) return rc;
    if (o->sizes[0] > o->sizes[1])
        return bench_require(0, usage, "-m: MIN (%ld) is larger than MAX (%ld)", o->sizes[0], o->sizes[1]);
    if (o->kind >= K_ACC && (o->sizes[0] < 4 || o->total % 4))
        return bench_require(0, usage, "-t %s: segments and TOTAL are whole ints (-m MIN >= 4)",
                             kind_names[o->kind]);
    return bench_require(o->sizes[1] <= o->total, usage, "-m MAX (%ld) exceeds -T (%ld)", o->sizes[1],
                         o->total);
}

/* Byte j of the data of a size: differs by position and size, never 0. */
static unsigned char data_byte(long size, long j)
{
    return (unsigned char)(1 + (j * 131 + size * 7) % 251);
}

/* An accumulate's addend at int k: small, so sums stay exact. */
static int data_int(long k)
{
    return (int)(1 + k % 7);
}

/* The layout of one side: nseg segments of seg bytes, one every stride bytes, of unit
 * (MPI_BYTE or MPI_INT, whose size divides seg and stride). */
static MPI_Datatype vector_of(long nseg, long seg, long stride, MPI_Datatype unit)
{
    int u;
    MPI_CK(MPI_Type_size(unit, &u));
    MPI_Datatype t;
    MPI_CK(MPI_Type_vector((int)nseg, (int)(seg / u), (int)(stride / u), unit, &t));
    MPI_CK(MPI_Type_commit(&t));
    return t;
}

/* Times iters operations (one op + flush each), after warmup ones. */
static double run(const struct options *o, const struct bench_win *w, unsigned char *lbuf,
                  unsigned char *rbuf, int count, MPI_Datatype ltype, MPI_Datatype ttype, long iters,
                  long warmup)
{
    double t0 = 0;
    const MPI_Win win = w->win;
    const MPI_Aint at = w->peer_disp;
    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup) t0 = MPI_Wtime();
        if (o->kind == K_PUT)
            MPI_CK(MPI_Put(lbuf, count, ltype, 1, at, count, ttype, win));
        else if (o->kind == K_GET)
            MPI_CK(MPI_Get(lbuf, count, ltype, 1, at, count, ttype, win));
        else if (o->kind == K_ACC)
            MPI_CK(MPI_Accumulate(lbuf, count, ltype, 1, at, count, ttype, MPI_SUM, win));
        else
            MPI_CK(MPI_Get_accumulate(lbuf, count, ltype, rbuf, count, ltype, 1, at, count, ttype, MPI_SUM,
                                      win));
        MPI_CK(MPI_Win_flush(1, win));
    }
    return (MPI_Wtime() - t0) / (double)iters;
}

int main(int argc, char **argv)
{
    int rank;
    const int n = bench_start(&argc, &argv, "osc_ddt", &rank);
    struct options o;
    const int go = bench_proceed(parse(argc, argv, &o), n, 2, " (rank 0 = origin, rank 1 = target)");
    if (go != BENCH_PROCEED) return go;

    /* Room for the widest layout: TOTAL bytes at a stride of 3 segments. */
    const size_t bytes = (size_t)o.total * 3;
    struct bench_win w;
    bench_win_create(&w, (enum bench_flavor)o.flavor, bytes, 4096, 1 - rank);
    unsigned char *lbuf = bench_alloc(4096, bytes), *rbuf = bench_alloc(4096, bytes);
    const int acc = o.kind >= K_ACC;
    const MPI_Datatype unit = acc ? MPI_INT : MPI_BYTE;
    if (rank == 0) {
        printf(
            "# osc_ddt: MPI_%s of %ld bytes as vectors of S-byte segments of %s (strided: %s;\n"
            "# origin stride 2S, target 3S) and as one contiguous block; %s, lock\n"
            "# held, one operation + MPI_Win_flush per iteration; medians of %ld rounds.\n",
            call_names[o.kind], o.total, acc ? "MPI_INT, MPI_SUM" : "MPI_BYTE", layout_names[o.layout],
            bench_flavor_mpi_names[o.flavor], o.rounds);
        bench_print_library();
        bench_print_iterations(&o.it);
        printf("%-10s %10s %14s %14s %10s\n", "# Segment", "Segments", "DDT MB/s", "Contig MB/s", "Ratio");
        fflush(stdout);
    }
    MPI_CK(MPI_Win_lock(MPI_LOCK_SHARED, 1 - rank, 0, w.win));
    int failed = 0;
    for (long seg = o.sizes[0]; seg <= o.sizes[1]; seg *= 2) {
        const long nseg = o.total / seg;
        const long moved = nseg * seg;
        bench_context("segment %ld bytes, %ld segments", seg, nseg);
        /* Strides in segments: 1 is contiguous. */
        const long ls = o.layout == L_TARGET ? 1 : 2, ts = o.layout == L_ORIGIN ? 1 : 3;
        MPI_Datatype ltype = vector_of(nseg, seg, ls * seg, unit),
                     ttype = vector_of(nseg, seg, ts * seg, unit);
        const long iters = bench_iters_for(&o.it, seg), warmup = bench_warmup_for(&o.it, seg);
        /* The target's memory: zero where nothing lands; with -t get, the data. */
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) {
            memset(w.buf, 0, bytes);
            if (o.kind == K_GET)
                for (long j = 0; j < moved; j++) w.buf[(j / seg) * ts * seg + j % seg] = data_byte(seg, j);
        } else {
            memset(lbuf, 0, bytes);
            if (o.kind == K_PUT)
                for (long j = 0; j < moved; j++) lbuf[(j / seg) * ls * seg + j % seg] = data_byte(seg, j);
            for (long k = 0; acc && k < moved / 4; k++)
                ((int *)lbuf)[(k * 4 / seg) * ls * seg / 4 + k % (seg / 4)] = data_int(k);
        }
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        /* Round 0's derived-datatype loop is the one checked: the contiguous loops
         * overwrite the target's memory. */
        double ddt[MAX_ROUNDS], contig[MAX_ROUNDS], ratio[MAX_ROUNDS];
        if (rank == 0) {
            ddt[0] = run(&o, &w, lbuf, rbuf, 1, ltype, ttype, iters, warmup);
            if (o.check) {
                MPI_CK(MPI_Win_flush(1, w.win));
                long bad = 0;
                for (long k = 0; o.kind == K_GACC && k < moved / 4; k++)
                    bad += ((int *)rbuf)[(k * 4 / seg) * ls * seg / 4 + k % (seg / 4)] !=
                           (warmup + iters - 1) * data_int(k);
                if (bad) {
                    fprintf(stderr,
                            "osc_ddt: rank 0: %ld ints of a %ld-byte-segment gacc's result are wrong\n", bad,
                            seg);
                    failed = 1;
                }
                if (o.kind == K_GET) {
                    long bad = 0;
                    for (long j = 0; j < moved; j++)
                        bad += lbuf[(j / seg) * ls * seg + j % seg] != data_byte(seg, j);
                    if (bad) {
                        fprintf(stderr, "osc_ddt: rank 0: %ld bytes of a %ld-byte-segment get are wrong\n",
                                bad, seg);
                        failed = 1;
                    }
                }
            }
        }
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1 && o.check && acc) {
            long bad = 0;
            for (long k = 0; k < ts * moved / 4; k++) {
                const long s = k * 4 / (ts * seg), in = k % (ts * seg / 4);
                bad +=
                    ((int *)w.buf)[k] != (in < seg / 4 ? (warmup + iters) * data_int(s * seg / 4 + in) : 0);
            }
            if (bad) {
                fprintf(stderr, "osc_ddt: rank 1: %ld ints wrong after %ld-byte-segment accumulates\n", bad,
                        seg);
                failed = 1;
            }
        }
        if (rank == 1 && o.check && o.kind == K_PUT) {
            long bad = 0;
            for (long j = 0; j < ts * moved; j++) {
                const long s = j / (ts * seg), in = j % (ts * seg);
                const unsigned char want = in < seg ? data_byte(seg, s * seg + in) : 0;
                bad += w.buf[j] != want;
            }
            if (bad) {
                fprintf(stderr, "osc_ddt: rank 1: %ld bytes wrong after %ld-byte-segment puts\n", bad, seg);
                failed = 1;
            }
        }
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        for (long r = 0; rank == 0 && r < o.rounds; r++) {
            if (r > 0) ddt[r] = run(&o, &w, lbuf, rbuf, 1, ltype, ttype, iters, warmup);
            /* The same bytes as one block; the data no longer matters. */
            contig[r] = run(&o, &w, lbuf, rbuf, (int)(acc ? moved / 4 : moved), unit, unit, iters, warmup);
            ratio[r] = ddt[r] / contig[r];
        }
        if (rank == 0) {
            printf("%-10ld %10ld %14.2f %14.2f %10.2f\n", seg, nseg,
                   (double)moved / bench_median(ddt, o.rounds) / 1e6,
                   (double)moved / bench_median(contig, o.rounds) / 1e6, bench_median(ratio, o.rounds));
            fflush(stdout);
        }
        MPI_CK(MPI_Type_free(&ltype));
        MPI_CK(MPI_Type_free(&ttype));
    }
    MPI_CK(MPI_Win_unlock(1 - rank, w.win));
    int any = 0;
    MPI_CK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    free(lbuf);
    free(rbuf);
    bench_win_free(&w);
    MPI_Finalize();
    return any ? BENCH_EXIT_CHECK : 0;
}
