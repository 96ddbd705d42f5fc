/*
 * osc_ddt_random.c - time of RMA calls whose datatypes are random derived ones.
 *
 * Each round draws a new pair of datatypes over N ints (origin and target differ:
 * vectors of indexed tiles with random block lengths and gaps, so pieces range from 4
 * bytes to a few KiB), then rank 0 moves all N ints to or from rank 1 with one
 * MPI_Put, MPI_Get or MPI_Accumulate (MPI_SUM) inside one epoch of the chosen
 * synchronization. The line printed is the total time of the timed calls and epochs
 * over all rounds; building the datatypes is not timed. Both ranks draw the same types
 * from the seed, and -c checks every int after every round with MPI_Pack / MPI_Unpack;
 * -v prints each round's time too, as comment lines before the total.
 *
 * Exactly two processes.
 *
 *   osc_ddt_random [-o put|get|acc] [-s fence|lock|pscw] [-w create|allocate|dynamic]
 *                  [-n INTS] [-r ROUNDS] [-x WARMUP] [-S SEED] [-c] [-v]
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum op { O_PUT, O_GET, O_ACC, O_N };
static const char *const op_names[O_N] = {"put", "get", "acc"};
enum sync { S_FENCE, S_LOCK, S_PSCW, S_N };
static const char *const sync_names[S_N] = {"fence", "lock", "pscw"};

struct options {
    int op, sync, flavor, check, verbose;
    long ints, rounds, warmup, seed;
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpirun -np 2 osc_ddt_random [options]\n"
            "  -o put|get|acc     operation (default put; acc is MPI_SUM on MPI_INT)\n"
            "  -s fence|lock|pscw synchronization of each round's epoch (default fence)\n"
            "  -w create|allocate|dynamic  window flavor (default allocate)\n"
            "  -n INTS            ints moved by each call (default 262144)\n"
            "  -r ROUNDS          timed rounds, a new pair of datatypes each (default 20)\n"
            "  -x WARMUP          untimed rounds first (default 1: connections, first touches)\n"
            "  -S SEED            seed of the datatypes (default 1)\n"
            "  -c                 check every int after every round\n"
            "  -v                 also print each round's time and its datatypes' block counts\n"
            "  -h                 this help\n");
}

/* xorshift64*: the same numbers on both ranks from the same seed. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}
static long pick(uint64_t *s, long lo, long hi)
{
    return lo + (long)(next_random(s) % (uint64_t)(hi - lo + 1));
}

/* A random datatype of exactly n ints: `tiles` copies, a stride apart, of an indexed
 * tile of n / tiles ints whose blocks and gaps are drawn around one typical length
 * (1 to 1024 ints, so pieces from 4 bytes to 4 KiB). *span is its extent in ints,
 * *blocks its number of blocks. */
static MPI_Datatype random_type(uint64_t *s, long n, long *span, long *blocks)
{
    static const long tiles_of[] = {1, 2, 4, 8, 16, 64};
    long tiles = tiles_of[pick(s, 0, 5)];
    while (n % tiles) tiles /= 2;
    const long per_tile = n / tiles, typical = 1L << pick(s, 0, 10);
    long nblocks = 0, at = 0;
    int *len = malloc(sizeof(int) * (size_t)per_tile), *disp = malloc(sizeof(int) * (size_t)per_tile);
    if (!len || !disp) bench_die(BENCH_EXIT_FAILURE, "out of memory for a datatype of %ld ints", n);
    for (long left = per_tile; left > 0; nblocks++) {
        long b = pick(s, 1, 2 * typical);
        if (b > left) b = left;
        at += pick(s, 0, 1) ? pick(s, 1, b) : 0; /* a gap no longer than the block, or none */
        disp[nblocks] = (int)at;
        len[nblocks] = (int)b;
        at += b;
        left -= b;
    }
    MPI_Datatype tile, resized, whole;
    MPI_CK(MPI_Type_indexed((int)nblocks, len, disp, MPI_INT, &tile));
    const long stride = at + pick(s, 0, 8); /* ints from one tile to the next */
    MPI_CK(MPI_Type_create_resized(tile, 0, (MPI_Aint)(stride * (long)sizeof(int)), &resized));
    MPI_CK(MPI_Type_contiguous((int)tiles, resized, &whole));
    MPI_CK(MPI_Type_commit(&whole));
    MPI_CK(MPI_Type_free(&tile));
    MPI_CK(MPI_Type_free(&resized));
    free(len);
    free(disp);
    *span = tiles * stride;
    *blocks = tiles * nblocks;
    return whole;
}

/* The n ints a round moves, in datatype order. */
static int value(long round, long k, int side)
{
    return (int)((k * 2654435761u + (unsigned long)round * 97u) % 1000003u) + side;
}

static void epoch_begin(const struct options *o, MPI_Win win, MPI_Group peer, int rank)
{
    if (o->sync == S_FENCE)
        MPI_CK(MPI_Win_fence(0, win));
    else if (o->sync == S_LOCK && rank == 0)
        MPI_CK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
    else if (o->sync == S_PSCW)
        MPI_CK(rank == 0 ? MPI_Win_start(peer, 0, win) : MPI_Win_post(peer, 0, win));
}

static void epoch_end(const struct options *o, MPI_Win win, int rank)
{
    if (o->sync == S_FENCE)
        MPI_CK(MPI_Win_fence(0, win));
    else if (o->sync == S_LOCK && rank == 0)
        MPI_CK(MPI_Win_unlock(1, win));
    else if (o->sync == S_PSCW)
        MPI_CK(rank == 0 ? MPI_Win_complete(win) : MPI_Win_wait(win));
}

/* Packs (buf, type) and compares it with the round's expected ints; returns how many differ. */
static long compare(void *buf, MPI_Datatype type, const int *want, int *scratch, long n)
{
    int pos = 0;
    MPI_CK(MPI_Pack(buf, 1, type, scratch, (int)(n * (long)sizeof(int)), &pos, MPI_COMM_SELF));
    long bad = 0;
    for (long k = 0; k < n; k++) bad += scratch[k] != want[k];
    return bad;
}

int main(int argc, char **argv)
{
    int rank;
    const int np = bench_start(&argc, &argv, "osc_ddt_random", &rank);
    struct options o = {.flavor = BENCH_ALLOCATE, .ints = 262144, .rounds = 20, .warmup = 1, .seed = 1};
    const struct bench_opt opts[] = {
        {'o', BENCH_NAME, &o.op, 0, O_N, op_names, NULL},
        {'s', BENCH_NAME, &o.sync, 0, S_N, sync_names, NULL},
        {'w', BENCH_NAME, &o.flavor, 0, BENCH_FLAVORS, bench_flavor_names, NULL},
        {'n', BENCH_LONG, &o.ints, 1, 1L << 24, NULL, NULL},
        {'r', BENCH_LONG, &o.rounds, 1, 1000000L, NULL, NULL},
        {'x', BENCH_LONG, &o.warmup, 0, 1000000L, NULL, NULL},
        {'S', BENCH_LONG, &o.seed, 1, 1L << 62, NULL, NULL},
        {'c', BENCH_FLAG, &o.check, 0, 0, NULL, NULL},
        {'v', BENCH_FLAG, &o.verbose, 0, 0, NULL, NULL},
    };
    const int go = bench_proceed(bench_parse(argc, argv, opts, sizeof opts / sizeof opts[0], usage), np, 2,
                                 " (rank 0 = origin, rank 1 = target)");
    if (go != BENCH_PROCEED) return go;

    /* The widest a type can be: every block followed by a gap as long as itself. */
    const size_t bytes = (size_t)o.ints * 2 * sizeof(int) + 4096 * 64;
    struct bench_win w;
    bench_win_create(&w, (enum bench_flavor)o.flavor, bytes, 4096, 1 - rank);
    unsigned char *local = bench_alloc(4096, bytes);
    int *want = bench_alloc(64, (size_t)o.ints * sizeof(int));
    int *scratch = bench_alloc(64, (size_t)o.ints * sizeof(int));
    MPI_Group peer = bench_peer_group(1 - rank);
    if (rank == 0) {
        printf(
            "# osc_ddt_random: MPI_%s of %ld MPI_INT between random derived datatypes, one call\n"
            "# per %s epoch, a new pair of datatypes each round (seed %ld); %s.\n",
            o.op == O_PUT   ? "Put"
            : o.op == O_GET ? "Get"
                            : "Accumulate (MPI_SUM)",
            o.ints, sync_names[o.sync], o.seed, bench_flavor_mpi_names[o.flavor]);
        bench_print_library();
        printf("%-10s %14s %14s %14s\n", "# Rounds", "Seconds", "ms per call", "MB/s");
        fflush(stdout);
    }
    uint64_t s = (uint64_t)o.seed * 0x9E3779B97F4A7C15ULL | 1;
    double total = 0;
    long bad = 0;
    for (long r = -o.warmup; r < o.rounds; r++) {
        bench_context("round %ld", r);
        long ospan, tspan, oblocks, tblocks;
        MPI_Datatype otype = random_type(&s, o.ints, &ospan, &oblocks),
                     ttype = random_type(&s, o.ints, &tspan, &tblocks);
        if ((size_t)(ospan > tspan ? ospan : tspan) * sizeof(int) > bytes)
            bench_die(BENCH_EXIT_FAILURE, "a datatype spans more than the %zu bytes allocated", bytes);
        /* The data in datatype order: the origin's ints (side 0) and the target's (side 1). */
        for (long k = 0; k < o.ints; k++) scratch[k] = value(r, k, rank == 0 ? 0 : 1);
        unsigned char *mine = rank == 0 ? local : w.buf;
        MPI_Datatype mytype = rank == 0 ? otype : ttype;
        memset(mine, 0, bytes);
        int pos = 0;
        MPI_CK(MPI_Unpack(scratch, (int)(o.ints * (long)sizeof(int)), &pos, mine, 1, mytype, MPI_COMM_SELF));
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        const double t0 = MPI_Wtime();
        epoch_begin(&o, w.win, peer, rank);
        if (rank == 0) {
            if (o.op == O_PUT)
                MPI_CK(MPI_Put(local, 1, otype, 1, w.peer_disp, 1, ttype, w.win));
            else if (o.op == O_GET)
                MPI_CK(MPI_Get(local, 1, otype, 1, w.peer_disp, 1, ttype, w.win));
            else
                MPI_CK(MPI_Accumulate(local, 1, otype, 1, w.peer_disp, 1, ttype, MPI_SUM, w.win));
        }
        epoch_end(&o, w.win, rank);
        const double took = MPI_Wtime() - t0;
        if (r >= 0) total += took;
        /* Rounds differ by orders of magnitude (4-byte pieces or 4 KiB ones): the total
         * hides which ones a change moved. */
        if (o.verbose && rank == 0)
            printf("# round %ld: %.0f us, origin %ld blocks, target %ld blocks\n", r, took * 1e6, oblocks,
                   tblocks);
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        if (o.check) {
            /* Where the data lands: the target for put and acc, the origin for get. */
            const int lands_here = o.op == O_GET ? rank == 0 : rank == 1;
            if (lands_here) {
                for (long k = 0; k < o.ints; k++)
                    want[k] =
                        o.op == O_ACC ? value(r, k, 0) + value(r, k, 1) : value(r, k, o.op == O_GET ? 1 : 0);
                bad += compare(mine, mytype, want, scratch, o.ints);
            }
        }
        MPI_CK(MPI_Type_free(&otype));
        MPI_CK(MPI_Type_free(&ttype));
    }
    long any = 0;
    MPI_CK(MPI_Allreduce(&bad, &any, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) {
        const double mb = (double)o.ints * sizeof(int) * (double)o.rounds / 1e6;
        printf("%-10ld %14.4f %14.4f %14.2f\n", o.rounds, total, total / (double)o.rounds * 1e3, mb / total);
        if (any) fprintf(stderr, "osc_ddt_random: %ld ints wrong\n", any);
    }
    MPI_CK(MPI_Group_free(&peer));
    free(local);
    free(want);
    free(scratch);
    bench_win_free(&w);
    MPI_Finalize();
    return any ? BENCH_EXIT_CHECK : 0;
}
