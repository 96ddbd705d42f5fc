/*
 * Randomized, model-checked RMA tester.
 *
 *   rma_random [-s SEED] [-n SEEDS] [-e EPOCHS] [-o OPS] [-t SECONDS] [-P] [-v]
 *
 * -n seeds from -s on (default 1, or unbounded with -t), -e epochs per seed, -o
 * operations per rank per epoch, -t stop starting new seeds after that many seconds,
 * -P pt2pt mode, to check the tester itself under Open MPI's osc/pt2pt: no
 * MPI_Win_allocate_shared (MPI_Win_allocate instead), no MAX/MIN on unsigned long
 * (Open MPI 4.1.4's own reduction compares those signed), pair regions only of
 * MPI_FLOAT_INT and MPI_2INT (osc/pt2pt refuses MAXLOC/MINLOC on another process's
 * pairs with holes, and applies nothing through a vector of MPI_SHORT_INT) and no
 * large regions (osc/pt2pt overruns its own receive buffer on large derived-datatype
 * operations; the tester's large regions were checked under osc/rdma instead); and
 * around two osc/pt2pt
 * bugs: compare-and-swap is not ordered after compare-and-swap from the same origin,
 * an exclusive lock on oneself can hang after another rank's lock_all, and
 * MPI_Win_flush_local can hang (MPI_Win_flush is used instead).
 * -v one line per epoch.
 *
 * Every rank derives the same schedule from the seed: window flavor, sizes and
 * displacement units per seed; per epoch a synchronization mode and the operations of
 * every rank.  Each target's memory is cut into regions whose outcome does not depend
 * on timing: one writer per put region, read-only get regions, commutative accumulate
 * regions, fetch-and-add and swap chains, compare-and-swap races with one winner, and
 * ordered accumulate sequences from one origin.  Every rank keeps a model of every
 * window and, after each epoch, checks its own window memory and every value it
 * fetched against the model; race outcomes are checked from the gathered fetches.
 * A mismatch prints the seed and the command that replays it.
 *
 * A second generator, seeded apart, adds what the first schedule never had, so the
 * seeds kept as regressions still draw their old windows, regions and operations:
 * calls that move no data (count 0, or a datatype of size 0, with any (op, type)
 * Open MPI's argument checks pass, MPI_SUM on MPI_BYTE among them);
 * regions of value/index pair types (MPI_DOUBLE_INT, ..., and from a fourth generator
 * Fortran's MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER) under MAXLOC, MINLOC,
 * REPLACE and NO_OP, whose targets store well-formed pairs before the epoch with a
 * sentinel in their holes, which no call may change there or in result buffers; and, on
 * dynamic windows, memory attached as regions back to back, with regions placed to
 * run across the boundaries.
 *
 * A third generator, seeded apart again, gives some windows a tail of hundreds of KiB
 * behind what the first two see, and places regions there whose operations move up to
 * all of it: the component's rendezvous and chunked transfers, which the first two,
 * with windows of at most 24 KiB, never reach.
 */
#include <mpi.h>
#include <float.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "rma_random_shape.h"
#include "rma_random_util.h"
#include "test_values.h"

#define MAXSEG 3
#define MAXPIECE 4  /* dynamic: regions attached back to back per segment */
#define ZSPAN 64    /* buffers of calls that move no data: none of it may change */
#define SENT_R 0xe7 /* result buffers: bytes MPI must not write */
#define SENT_O 0x6b /* origin buffer gaps: MPI must not write them either */
#define SCRIBBLE 0x5a
#define SLACK 16

enum { FL_CREATE, FL_ALLOCATE, FL_DYNAMIC, FL_SHARED, FL_N };
static const char *const fl_name[FL_N] = {"create", "allocate", "dynamic", "allocate_shared"};

enum { SY_FENCE, SY_PSCW, SY_PASSIVE };
static const char *const sy_name[] = {"fence", "pscw", "passive"};
enum { ST_LOCK_HOLD, ST_LOCK_SEQ, ST_LOCK_ALL };

enum { C_PUT, C_GET, C_ACC, C_GACC, C_FOP, C_CAS, C_RPUT, C_RGET, C_RACC, C_RGACC, C_N };
static const char *const call_name[C_N] = {
    "Put",  "Get",  "Accumulate",  "Get_accumulate", "Fetch_and_op", "Compare_and_swap",
    "Rput", "Rget", "Raccumulate", "Rget_accumulate"};

enum { RK_PUT, RK_GET, RK_ACC, RK_FETCH, RK_SWAP, RK_CAS, RK_SEQ, RK_N };
static const char *const rk_name[RK_N] = {"put",        "get",      "accumulate",      "fetch-add chain",
                                          "swap chain", "cas race", "ordered sequence"};

/* ---- value/index pair types ----
 * MPI_FLOAT_INT and friends are C structs with holes (MPI_DOUBLE_INT: 12 data bytes in
 * 16; long double has 10 meaningful bytes of 16 on x86), so the model compares the
 * value and index fields, long double values by value, and checks that the holes,
 * outside the typemap, still hold what was there before the epoch. */
enum {
    PT_FLOAT_INT,
    PT_DOUBLE_INT,
    PT_LONG_INT,
    PT_2INT,
    PT_SHORT_INT,
    PT_LONG_DOUBLE_INT,
    PT_C_N,            /* the C pairs: what the second generator draws */
    PT_2REAL = PT_C_N, /* Fortran's pairs: the index has the value's type */
    PT_2DOUBLE_PRECISION,
    PT_2INTEGER,
    PT_N
};
typedef struct {
    float v;
    int i;
} pr_float_int;
typedef struct {
    double v;
    int i;
} pr_double_int;
typedef struct {
    long v;
    int i;
} pr_long_int;
typedef struct {
    int v;
    int i;
} pr_2int;
typedef struct {
    short v;
    int i;
} pr_short_int;
typedef struct {
    long double v;
    int i;
} pr_long_double_int;
typedef struct {
    float v, i;
} pr_2real;
typedef struct {
    double v, i;
} pr_2double_precision;
#define LDBL_BYTES (LDBL_MANT_DIG == 64 ? 10 : (int)sizeof(long double)) /* x87: 10 of 16 */
static const struct {
    const char *name;
    int size, vsize, vbytes, ioff, isize, align; /* struct size, value field size and its
                                                  * meaningful bytes, index offset and size,
                                                  * alignment */
    enum real value, index;                      /* the fields' C types (test_values.h) */
} pt_info[PT_N] = {
/* Everything but the meaningful value bytes follows from the struct T. */
#define PT(name, T, vbytes, real, ireal)                                                                \
    {                                                                                                   \
        name, sizeof(T), sizeof(((T *)0)->v), vbytes, offsetof(T, i), sizeof(((T *)0)->i), _Alignof(T), \
            real, ireal                                                                                 \
    }
    PT("float_int", pr_float_int, sizeof(float), R_FLOAT, R_INT),
    PT("double_int", pr_double_int, sizeof(double), R_DOUBLE, R_INT),
    PT("long_int", pr_long_int, sizeof(long), R_LONG, R_INT),
    PT("2int", pr_2int, sizeof(int), R_INT, R_INT),
    PT("short_int", pr_short_int, sizeof(short), R_SHORT, R_INT),
    PT("long_double_int", pr_long_double_int, LDBL_BYTES, R_LDOUBLE, R_INT),
    PT("2real", pr_2real, sizeof(float), R_FLOAT, R_FLOAT),
    PT("2double_precision", pr_2double_precision, sizeof(double), R_DOUBLE, R_DOUBLE),
    PT("2integer", pr_2int, sizeof(int), R_INT, R_INT),
#undef PT
};
#define PAD_BYTE 0xd4 /* padding of the pairs targets store before an epoch */

static MPI_Datatype pt_mpi(int pt)
{
    switch (pt) {
    case PT_FLOAT_INT: return MPI_FLOAT_INT;
    case PT_DOUBLE_INT: return MPI_DOUBLE_INT;
    case PT_LONG_INT: return MPI_LONG_INT;
    case PT_2INT: return MPI_2INT;
    case PT_SHORT_INT: return MPI_SHORT_INT;
    case PT_LONG_DOUBLE_INT: return MPI_LONG_DOUBLE_INT;
    case PT_2REAL: return MPI_2REAL;
    case PT_2DOUBLE_PRECISION: return MPI_2DOUBLE_PRECISION;
    default: return MPI_2INTEGER;
    }
}

/* A fourth generator, seeded apart, makes some of the second's MPI_2INT draws one of
 * Fortran's pairs of two equal types, so the seeds kept as regressions draw as before. */
static rr_rng twins;
static int twin_pair(int pt)
{
    if (pt != PT_2INT) return pt;
    static const int family[] = {PT_2INT, PT_2REAL, PT_2DOUBLE_PRECISION, PT_2INTEGER};
    return family[rr_below(&twins, 4)];
}

/* Every value field converts to long double exactly (long too: 64-bit mantissa). */
static long double pair_val(int pt, const unsigned char *p)
{
    return load_real(pt_info[pt].value, p);
}

/* Indices are small integers, exact in every index type. */
static int pair_idx(int pt, const unsigned char *p)
{
    return (int)load_real(pt_info[pt].index, p + pt_info[pt].ioff);
}

/* Writes the value and index fields only; the holes keep what they held. */
static void pair_set(int pt, unsigned char *p, long double v, int i)
{
    unsigned char b[sizeof(long double)];
    store_real(pt_info[pt].value, b, v);
    memcpy(p, b, (size_t)pt_info[pt].vbytes);
    store_real(pt_info[pt].index, p + pt_info[pt].ioff, i);
}

/* Whether byte b of a pair struct is a hole: outside its type's typemap (the value and
 * index fields), which MPI must leave as it is, in window and result buffers alike (an
 * application's own struct may keep a field there). */
static bool pair_hole(int pt, long b)
{
    const long v = pt_info[pt].vsize, i = pt_info[pt].ioff;
    return (b >= v && b < i) || b >= i + pt_info[pt].isize;
}

/* The first hole byte of pair structs a and b that differs, or -1. */
static long pair_hole_diff(int pt, const unsigned char *a, const unsigned char *b)
{
    for (long k = 0; k < pt_info[pt].size; k++)
        if (pair_hole(pt, k) && a[k] != b[k]) return k;
    return -1;
}

/* Same value and index?  Bytes for the exact types, long double by value. */
static bool pair_equal(int pt, const unsigned char *a, const unsigned char *b)
{
    if (pair_idx(pt, a) != pair_idx(pt, b)) return false;
    if (pt == PT_LONG_DOUBLE_INT) return pair_val(pt, a) == pair_val(pt, b);
    return !memcmp(a, b, (size_t)pt_info[pt].vbytes);
}

/* Few distinct values, so MAXLOC and MINLOC often tie and the index decides; pairs of
 * values that differ only past float, double or long-double-as-double precision catch
 * a reduction computed in a narrower type.  One draw from the generator. */
static void pair_gen(rr_rng *r, int pt, unsigned char *p)
{
    uint64_t x = rr_next(r);
    int k = (int)(x % 7) - 3, idx = (int)((x >> 8) % 16) - 4;
    bool fine = (x >> 16) & 1;
    long double v;
    switch (pt) {
    case PT_FLOAT_INT: v = k + (fine ? 0.25L : 0); break;
    case PT_DOUBLE_INT: v = k + (fine ? 0x1p-40L : 0); break;
    case PT_LONG_INT: v = (long double)((long)k * (1l << 54) + (fine ? 1 : 0)); break;
    case PT_2INT: v = k * 65536 + (fine ? 1 : 0); break;
    case PT_SHORT_INT: v = k * 1000 + (fine ? 1 : 0); break;
    case PT_LONG_DOUBLE_INT: v = k + (fine ? 0x1p-60L : 0); break;
    case PT_2REAL: v = k + (fine ? 0x1p-20L : 0); break;
    case PT_2DOUBLE_PRECISION: v = k + (fine ? 0x1p-50L : 0); break;
    default: v = k * 65536 + (fine ? 1 : 0); break;
    }
    pair_set(pt, p, v, idx);
}

/* MPI's MAXLOC and MINLOC: the larger (smaller) value wins; on equal values the
 * smaller index. */
enum { OP_MAXLOC = OP_N, OP_MINLOC, OP_ALL };

static void pair_apply(int pt, int op, unsigned char *dst, const unsigned char *src)
{
    long double a = pair_val(pt, dst), b = pair_val(pt, src);
    int ia = pair_idx(pt, dst), ib = pair_idx(pt, src);
    if (op == OP_REPLACE || (op == OP_MAXLOC && b > a) || (op == OP_MINLOC && b < a)) {
        pair_set(pt, dst, b, ib);
    } else if ((op == OP_MAXLOC || op == OP_MINLOC) && a == b && ib < ia) {
        pair_set(pt, dst, a, ib);
    }
}

static const char *op_str(int op)
{
    return op == OP_MAXLOC ? "MAXLOC" : op == OP_MINLOC ? "MINLOC" : op_name[op];
}

static MPI_Op op_mpi_any(int op)
{
    return op == OP_MAXLOC ? MPI_MAXLOC : op == OP_MINLOC ? MPI_MINLOC : op_mpi(op);
}

/* Name and printable element of a basic type (pt < 0) or a pair type. */
static const char *type_str(int bt, int pt)
{
    return pt >= 0 ? pt_info[pt].name : bt_name[bt];
}

static void val_str(int bt, int pt, const unsigned char *p, char *buf, size_t len)
{
    if (pt < 0)
        elem_str(bt, p, buf, len);
    else
        snprintf(buf, len, "(%.21Lg, %d)", pair_val(pt, p), pair_idx(pt, p));
}

typedef struct {
    long seed;
    int epochs, ops;
    int verbose;
    bool pt2pt_mode;
    int rank, np;
    int epoch;
    long mismatches;
    long nops_issued;
    long nzero, npair, ncross; /* of them: moving no data, on pair types, across attached regions, */
    long nlarge;               /* of 64 KiB or more at the target */
} rr_ctx;

typedef struct {
    int flavor;
    MPI_Win win;
    int *du, *nseg;
    long (*seglen)[MAXSEG];
    long (*drawn)[MAXSEG]; /* the part the first two generators place regions in; the rest,
                            * a tail, is the third's */
    MPI_Aint (*segaddr)[MAXSEG];
    int (*npiece)[MAXSEG];         /* dynamic: the segment is attached as npiece regions */
    long (*cut)[MAXSEG][MAXPIECE]; /* starting at these offsets (cut[..][0] == 0) */
    bool split;                    /* some segment has npiece > 1 */
    int *bmod;                     /* window base address mod 64, per rank (contiguous
                                         * allocate_shared packs ranks byte to byte) */
    unsigned char *mem[MAXSEG];
    unsigned char *(*model)[MAXSEG];
    bool alloc_mem;
    unsigned char *nbr; /* allocate_shared: the next rank's memory, through shared_query */
    int nbr_rank;
} rr_win;

typedef struct {
    int id, origin, target; /* target may be MPI_PROC_NULL */
    int call, op, bt, region, seg;
    int pt;         /* pair type, or -1: elements of basic type bt */
    bool zero;      /* moves no data; each side (origin, target, result) is */
    bool zempty[3]; /* zcnt copies of a datatype of size 0 (zempty), or */
    int zcnt[3];    /* count 0 of the base type */
    long toff;      /* byte offset of the target shape in the segment */
    rr_shape osh, tsh, rsh;
    unsigned char *oval;   /* n origin values, packed (CAS: the new value) */
    unsigned char cval[8]; /* CAS compare value */
    unsigned char *rexp;   /* expected fetched values, packed; NULL if not predictable */
    bool fetches, racing, flush_after;
    uint64_t key; /* program order on the origin */
    long gpos;    /* racing fetch: byte position in the origin's gather block */
    /* origin-side execution state */
    unsigned char *obuf, *rbuf;
    unsigned char cbuf[8 + SLACK];
    MPI_Datatype odt, tdt, rdt;
    int ocnt, tcnt, rcnt;
    bool oder, tder, rder, scribbled, issued;
    MPI_Request req;
} rr_op;

typedef struct {
    int kind, target, seg, bt, op;
    int pt;               /* pair type or -1; a pair region's start is stored by its target */
    long off, len;        /* bytes in the segment */
    int first, nops;      /* its operations are ops[first .. first+nops) */
    unsigned char *start; /* contents at epoch start */
} rr_region;

typedef struct {
    int sync;
    int fence_open, fence_close;
    bool pscw_nocheck;
    char *acc;     /* acc[o*np+t]: o accesses t in this epoch */
    char *lock;    /* per-target lock of o on t: MPI_LOCK_SHARED/EXCLUSIVE or 0 */
    char *nocheck; /* MPI_MODE_NOCHECK legal and chosen for that lock */
    int *style;
    char *nocheck_all, *use_test;
    rr_op *ops;
    int nops, cap;
    rr_region *regs;
    int nregs, rcap;
    long *gbytes; /* racing fetch bytes per origin */
    bool stored;  /* this rank stored pair regions' starts locally before the epoch */
} rr_epoch;

static rr_ctx cx;

/* ---- reporting ---- */
static void mismatch(int line, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cx.mismatches++;
    check_record(false, __FILE__, line,
                 "MISMATCH seed=%ld epoch=%d rank=%d %s | replay (same -np, same provider): rma_random -s "
                 "%ld -n 1 -e %d -o %d",
                 cx.seed, cx.epoch, cx.rank, msg, cx.seed, cx.epochs, cx.ops);
}
#define MISMATCH(...) mismatch(__LINE__, __VA_ARGS__)

static rr_epoch *cur_ep; /* for op_desc: the epoch being checked */
static rr_win *cur_win;

/* Offset of the first boundary between regions attached back to back that the op's
 * target footprint runs across, or -1. */
static long op_cut(const rr_win *w, const rr_op *o)
{
    if (!w || o->target < 0 || o->zero) return -1;
    for (int k = 1; k < w->npiece[o->target][o->seg]; k++) {
        long c = w->cut[o->target][o->seg][k];
        if (c > o->toff && c < o->toff + o->tsh.span) return c;
    }
    return -1;
}

/* One side's (count, datatype), as the shape header prints it, with the pair type named. */
static void side_desc(const rr_op *op, int side, const rr_shape *sh, char *buf, size_t len)
{
    const char *tn = type_str(op->bt, op->pt);
    if (op->zero) {
        if (op->zempty[side])
            snprintf(buf, len, "%d x contig(0,%s)", op->zcnt[side], tn);
        else
            snprintf(buf, len, "0 x %s", tn);
        return;
    }
    char d[96];
    shape_desc(sh, d, sizeof d);
    const char *b =
        op->pt >= 0 ? strstr(d, bt_name[BT_BYTE]) : NULL; /* pair shapes are byte shapes, scaled */
    if (b)
        snprintf(buf, len, "%.*s%s%s", (int)(b - d), d, tn, b + strlen(bt_name[BT_BYTE]));
    else
        snprintf(buf, len, "%s", d);
}

static void op_desc(const rr_op *op, char *buf, size_t len)
{
    char t[96], o[96], x[64] = "";
    side_desc(op, 1, &op->tsh, t, sizeof t);
    bool get = op->call == C_GET || op->call == C_RGET;
    side_desc(op, get ? 2 : 0, get ? &op->rsh : &op->osh, o, sizeof o);
    const char *kind = op->region >= 0 && cur_ep ? rk_name[cur_ep->regs[op->region].kind]
                       : op->zero                ? "no-data"
                                                 : "no";
    long c = op_cut(cur_win, op);
    if (c >= 0) snprintf(x, sizeof x, ", across attached regions at seg%d+%ld", op->seg, c);
    snprintf(buf, len, "op#%d %d->%d MPI_%s(%s) target seg%d+%ld [%s] origin [%s] in %s region%s%s", op->id,
             op->origin, op->target, call_name[op->call], op_str(op->op), op->seg, op->toff, t, o, kind,
             op->flush_after ? ", flushed after" : "", x);
}

/* ---- schedule: windows ---- */
static long pick_size(rr_rng *r)
{
    int k = (int)rr_below(r, 10);
    if (k == 0) return 0;
    if (k < 7) return rr_range(r, 64, 2048);
    return rr_range(r, 2048, 24576);
}

/* Dynamic: some segments are attached as 2..MAXPIECE regions back to back, cut at
 * multiples of 32 bytes, so no element of any type the tester uses straddles a cut (the
 * component refuses that) while whole operations run across.  Drawn from f. */
static void win_cuts(rr_win *w, rr_rng *f)
{
    for (int p = 0; p < cx.np; p++)
        for (int s = 0; s < w->nseg[p]; s++) {
            w->npiece[p][s] = 1;
            long slots = (w->seglen[p][s] - 1) / 32; /* candidate cuts 32, 64, ... < seglen */
            if (w->flavor != FL_DYNAMIC || slots < 1 || !rr_pct(f, 50)) continue;
            int n = (int)rr_range(f, 2, MAXPIECE);
            if (n - 1 > slots) n = (int)slots + 1;
            /* n - 1 distinct cuts in ascending order: pick each from what is left */
            long prev = 0;
            for (int k = 1; k < n; k++) {
                long lo = prev / 32 + 1, hi = slots - (n - 1 - k);
                prev = rr_range(f, lo, hi) * 32;
                w->cut[p][s][k] = prev;
            }
            w->npiece[p][s] = n;
            w->split = true;
        }
}

/* Some windows get a tail behind every rank's segment 0 (the same for all, which
 * same_size needs), up to the component's rendezvous sizes and past them. Drawn from g.
 * A multiple of 64 bytes: a contiguous allocate_shared window lays the ranks' segments
 * back to back, and the pair regions the second generator places depend on each base
 * address modulo 64 (bmod). */
static void win_tails(rr_win *w, rr_rng *g)
{
    long tail = rr_pct(g, 50) ? rr_range(g, 1024, 6144) * 64 : 0;
    for (int p = 0; p < cx.np; p++) {
        for (int s = 0; s < w->nseg[p]; s++) w->drawn[p][s] = w->seglen[p][s];
        if (w->seglen[p][0] > 0) w->seglen[p][0] += tail;
    }
}

static void win_create(rr_win *w, rr_rng *r, rr_rng *f, rr_rng *g, bool shared_ok)
{
    int np = cx.np, me = cx.rank;
    memset(w, 0, sizeof *w);
    w->win = MPI_WIN_NULL;
    w->du = calloc((size_t)np, sizeof(int));
    w->nseg = calloc((size_t)np, sizeof(int));
    w->seglen = calloc((size_t)np, sizeof *w->seglen);
    w->drawn = calloc((size_t)np, sizeof *w->drawn);
    w->segaddr = calloc((size_t)np, sizeof *w->segaddr);
    w->model = calloc((size_t)np, sizeof *w->model);
    w->npiece = calloc((size_t)np, sizeof *w->npiece);
    w->cut = calloc((size_t)np, sizeof *w->cut);
    w->bmod = calloc((size_t)np, sizeof(int));
    w->flavor = (int)rr_below(r, FL_N);
    if (w->flavor == FL_SHARED && !shared_ok) w->flavor = FL_ALLOCATE;
    static const int units[4] = {1, 4, 8, 16};
    bool same_du = rr_pct(r, 30), same_size = rr_pct(r, 20);
    int du0 = units[rr_below(r, 4)];
    long size0 = pick_size(r);
    long any = 0;
    for (int p = 0; p < np; p++) {
        if (w->flavor == FL_DYNAMIC) {
            w->du[p] = 1;
            w->nseg[p] = (int)rr_range(r, 1, MAXSEG);
            for (int s = 0; s < w->nseg[p]; s++) w->seglen[p][s] = rr_range(r, 64, 8192);
        } else {
            w->du[p] = same_du ? du0 : units[rr_below(r, 4)];
            w->nseg[p] = 1;
            w->seglen[p][0] = same_size ? size0 : pick_size(r);
        }
        any += w->seglen[p][0];
    }
    if (any == 0) /* someone must be a target */
        for (int p = 0; p < np; p++) w->seglen[p][0] = 1024;
    w->alloc_mem = rr_pct(r, 50);
    win_cuts(w, f);
    win_tails(w, g);

    MPI_Info info;
    MPI_Info_create(&info);
    if (rr_pct(r, 30)) MPI_Info_set(info, "accumulate_ordering", "rar,raw,war,waw");
    if (rr_pct(r, 30)) MPI_Info_set(info, "accumulate_ops", "same_op_no_op");
    if (same_du && rr_pct(r, 50)) MPI_Info_set(info, "same_disp_unit", "true");
    if (same_size && w->flavor != FL_DYNAMIC && rr_pct(r, 50)) MPI_Info_set(info, "same_size", "true");
    if (w->flavor == FL_SHARED && rr_pct(r, 50)) MPI_Info_set(info, "alloc_shared_noncontig", "true");

    /* Initial contents: every rank generates every window, half the words integral doubles. */
    for (int p = 0; p < np; p++)
        for (int s = 0; s < w->nseg[p]; s++) {
            long len = w->seglen[p][s];
            w->model[p][s] = malloc((size_t)len + 8);
            for (long i = 0; i < len; i += 8) {
                unsigned char word[8];
                rr_rng *v = i < w->drawn[p][s] ? r : g; /* the tail's own */
                gen_value(v, rr_pct(v, 50) ? BT_DOUBLE : BT_ULONG, V_ANY, word);
                memcpy(w->model[p][s] + i, word, (size_t)(len - i < 8 ? len - i : 8));
            }
        }

    long mylen = w->seglen[me][0];
    void *base = NULL;
    switch (w->flavor) {
    case FL_CREATE:
        if (mylen > 0) {
            if (w->alloc_mem)
                CHECK_MPI(MPI_Alloc_mem(mylen, MPI_INFO_NULL, &base));
            else
                base = malloc((size_t)mylen);
        }
        CHECK_MPI(MPI_Win_create(base, mylen, w->du[me], info, MPI_COMM_WORLD, &w->win));
        break;
    case FL_ALLOCATE:
        CHECK_MPI(MPI_Win_allocate(mylen, w->du[me], info, MPI_COMM_WORLD, &base, &w->win));
        break;
    case FL_SHARED:
        CHECK_MPI(MPI_Win_allocate_shared(mylen, w->du[me], info, MPI_COMM_WORLD, &base, &w->win));
        break;
    default: CHECK_MPI(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &w->win)); break;
    }
    MPI_Info_free(&info);
    int ok = w->win != MPI_WIN_NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        printf("rank %d: seed %ld: creating the %s window failed, giving up\n", me, cx.seed,
               fl_name[w->flavor]);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    if (w->flavor == FL_DYNAMIC) {
        rr_rng a;
        rr_seed(&a, (uint64_t)cx.seed * 7919u + 1, (uint64_t)me + 5000);
        for (int s = 0; s < w->nseg[me]; s++) {
            w->mem[s] = aligned_alloc(64, (size_t)((w->seglen[me][s] + 63) / 64 * 64));
            /* The regions of a split segment are attached in a drawn order (a local
             * choice): the target's table of regions must not depend on it. */
            int n = w->npiece[me][s], order[MAXPIECE];
            for (int k = 0; k < n; k++) order[k] = k;
            for (int k = n - 1; k > 0; k--) {
                int j = (int)rr_below(&a, k + 1), tmp = order[k];
                order[k] = order[j];
                order[j] = tmp;
            }
            for (int k = 0; k < n; k++) {
                int q = order[k];
                long lo = w->cut[me][s][q], hi = q + 1 < n ? w->cut[me][s][q + 1] : w->seglen[me][s];
                CHECK_MPI(MPI_Win_attach(w->win, w->mem[s] + lo, hi - lo));
            }
            MPI_Get_address(w->mem[s], &w->segaddr[me][s]);
        }
        CHECK_MPI(
            MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, w->segaddr, MAXSEG, MPI_AINT, MPI_COMM_WORLD));
    } else {
        w->mem[0] = base;
        w->bmod[me] = (int)((uintptr_t)base % 64);
    }
    CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, w->bmod, 1, MPI_INT, MPI_COMM_WORLD));
    if (w->flavor == FL_SHARED && np > 1) {
        MPI_Aint sz;
        int du;
        w->nbr_rank = (me + 1) % np;
        CHECK_MPI(MPI_Win_shared_query(w->win, w->nbr_rank, &sz, &du, &w->nbr));
        CHECK(sz == w->seglen[w->nbr_rank][0] && du == w->du[w->nbr_rank],
              "seed %ld: shared_query(%d) gave size %ld unit %d, expected %ld %d", cx.seed, w->nbr_rank,
              (long)sz, du, w->seglen[w->nbr_rank][0], w->du[w->nbr_rank]);
    }
    for (int s = 0; s < w->nseg[me]; s++)
        if (w->seglen[me][s] > 0) memcpy(w->mem[s], w->model[me][s], (size_t)w->seglen[me][s]);
    /* Make the local stores visible before anyone targets them. */
    CHECK_MPI(MPI_Win_lock_all(0, w->win));
    CHECK_MPI(MPI_Win_sync(w->win));
    CHECK_MPI(MPI_Win_unlock_all(w->win));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void win_free(rr_win *w)
{
    int me = cx.rank;
    if (w->flavor == FL_DYNAMIC)
        for (int s = 0; s < w->nseg[me]; s++)
            for (int k = 0; k < w->npiece[me][s]; k++)
                CHECK_MPI(MPI_Win_detach(w->win, w->mem[s] + w->cut[me][s][k]));
    CHECK_MPI(MPI_Win_free(&w->win));
    if (w->flavor == FL_DYNAMIC) {
        for (int s = 0; s < w->nseg[me]; s++) free(w->mem[s]);
    } else if (w->flavor == FL_CREATE && w->mem[0]) {
        if (w->alloc_mem)
            MPI_Free_mem(w->mem[0]);
        else
            free(w->mem[0]);
    }
    for (int p = 0; p < cx.np; p++)
        for (int s = 0; s < w->nseg[p]; s++) free(w->model[p][s]);
    free(w->du);
    free(w->nseg);
    free(w->seglen);
    free(w->drawn);
    free(w->segaddr);
    free(w->model);
    free(w->npiece);
    free(w->cut);
    free(w->bmod);
}

static MPI_Aint target_disp(const rr_win *w, int t, int seg, long off)
{
    if (w->flavor == FL_DYNAMIC) return w->segaddr[t][seg] + off;
    return off / w->du[t];
}

/* ---- schedule: synchronization ---- */
static void gen_sync(rr_epoch *ep, rr_rng *r, int sync, int next_sync)
{
    int np = cx.np;
    ep->sync = sync;
    ep->acc = calloc((size_t)np * np, 1);
    ep->lock = calloc((size_t)np * np, 1);
    ep->nocheck = calloc((size_t)np * np, 1);
    ep->style = calloc((size_t)np, sizeof(int));
    ep->nocheck_all = calloc((size_t)np, 1);
    ep->use_test = calloc((size_t)np, 1);
    ep->gbytes = calloc((size_t)np, sizeof(long));
    if (sync == SY_FENCE) {
        memset(ep->acc, 1, (size_t)np * np);
        ep->fence_open = (rr_pct(r, 50) ? MPI_MODE_NOPRECEDE : 0) | (rr_pct(r, 30) ? MPI_MODE_NOSTORE : 0);
        ep->fence_close = next_sync != SY_FENCE || rr_pct(r, 50) ? MPI_MODE_NOSUCCEED : 0;
        return;
    }
    /* Random access matrix (self included) with a random density. */
    int density = (int)rr_range(r, 30, 100);
    for (int i = 0; i < np * np; i++) ep->acc[i] = (char)rr_pct(r, density);
    if (sync == SY_PSCW) {
        ep->pscw_nocheck = rr_pct(r, 30);
        for (int p = 0; p < np; p++) ep->use_test[p] = (char)rr_pct(r, 50);
        return;
    }
    /* Locks held together are taken in ascending rank order (ST_LOCK_HOLD), self
     * included, shared and exclusive mixed, beside other ranks' lock_all: a component
     * that grants locks in call order cannot deadlock on that.  osc/pt2pt can (an
     * exclusive lock on oneself after another rank's lock_all), so in -P mode an
     * exclusive lock is the only lock its holder has. */
    for (int o = 0; o < np; o++) {
        ep->style[o] = (int)rr_below(r, 3);
        int ntargets = 0;
        for (int t = 0; t < np; t++) ntargets += ep->acc[o * np + t];
        bool excl_ok = ep->style[o] == ST_LOCK_SEQ ||
                       (ep->style[o] == ST_LOCK_HOLD && (ntargets == 1 || !cx.pt2pt_mode));
        for (int t = 0; t < np; t++)
            if (ep->acc[o * np + t]) {
                bool excl = rr_pct(r, 50) && !(cx.pt2pt_mode && t == o);
                ep->lock[o * np + t] = excl && excl_ok ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
            }
    }
    /* lock_all locks every target, whether it is accessed or not. */
    for (int o = 0; o < np; o++)
        if (ep->style[o] == ST_LOCK_ALL)
            for (int t = 0; t < np; t++) ep->lock[o * np + t] = MPI_LOCK_SHARED;
    /* NOCHECK only where no other origin takes a conflicting lock in this epoch. */
    bool any_excl = false;
    for (int i = 0; i < np * np; i++) any_excl |= ep->lock[i] == MPI_LOCK_EXCLUSIVE;
    for (int o = 0; o < np; o++) {
        bool want = rr_pct(r, 40);
        if (ep->style[o] == ST_LOCK_ALL) {
            ep->nocheck_all[o] = (char)(want && !any_excl);
            continue;
        }
        for (int t = 0; t < np; t++) {
            if (!ep->lock[o * np + t]) continue;
            bool legal = true;
            for (int q = 0; q < np; q++) {
                if (q == o || !ep->lock[q * np + t]) continue;
                if (ep->lock[o * np + t] == MPI_LOCK_EXCLUSIVE || ep->lock[q * np + t] == MPI_LOCK_EXCLUSIVE)
                    legal = false;
            }
            ep->nocheck[o * np + t] = (char)(want && legal);
        }
    }
}

/* ---- schedule: operations ---- */
static rr_op *new_op(rr_epoch *ep, rr_rng *r, int origin, int target, int call, int op, int bt)
{
    if (ep->nops == ep->cap) {
        ep->cap = ep->cap ? 2 * ep->cap : 64;
        ep->ops = realloc(ep->ops, sizeof(rr_op) * (size_t)ep->cap);
    }
    rr_op *o = &ep->ops[ep->nops];
    memset(o, 0, sizeof *o);
    o->id = ep->nops++;
    o->origin = origin;
    o->target = target;
    o->call = call;
    o->op = op;
    o->bt = bt;
    o->pt = -1;
    o->region = -1;
    o->key = rr_next(r);
    o->fetches = call == C_GET || call == C_RGET || call == C_GACC || call == C_RGACC || call == C_FOP ||
                 call == C_CAS;
    return o;
}

static bool call_is_request(int c)
{
    return c >= C_RPUT;
}
static bool call_single(int c)
{
    return c == C_FOP || c == C_CAS;
}

/* Request-based calls only in passive epochs (the standard's rule). */
static int maybe_request(rr_rng *r, bool passive, int call)
{
    if (!passive || !rr_pct(r, 40)) return call;
    switch (call) {
    case C_PUT: return C_RPUT;
    case C_GET: return C_RGET;
    case C_ACC: return C_RACC;
    case C_GACC: return C_RGACC;
    default: return call;
    }
}

/* Shapes of an operation of n elements whose target shape starts at toff and must end
 * within limit bytes of the segment. */
static void op_shapes(rr_op *o, rr_rng *r, int n, long toff, long limit)
{
    bool single = call_single(o->call);
    o->toff = toff;
    shape_gen(r, &o->tsh, o->bt, n, limit - toff, !single);
    shape_gen(r, &o->osh, o->bt, n, 1l << 30, !single);
    shape_gen(r, &o->rsh, o->bt, n, 1l << 30, !single);
    size_t s = (size_t)bt_size[o->bt];
    o->oval = calloc((size_t)n, s);
    if (o->fetches) o->rexp = calloc((size_t)n, s);
}

/* Bytes per element: of the basic type, or the whole struct of a pair type. */
static long reg_esize(const rr_region *g)
{
    return g->pt >= 0 ? pt_info[g->pt].size : bt_size[g->bt];
}
static long op_esize(const rr_op *o)
{
    return o->pt >= 0 ? pt_info[o->pt].size : bt_size[o->bt];
}

/* Target shape start: a random element offset inside the region, aligned to the
 * target's displacement unit, leaving room for at least n contiguous elements. */
static bool pick_sub(rr_rng *r, const rr_region *g, int du, int n, long *toff)
{
    long s = reg_esize(g), step = du > s ? du : s;
    long room = g->len - n * s;
    if (room < 0) return false;
    *toff = g->off + rr_below(r, room / step + 1) * step;
    return true;
}

/* A SUM operand pointing from `cur` toward zero (or away from it for unsigned types,
 * whose wrap-around is defined): signed sums then never overflow, which C leaves
 * undefined and MPI libraries handle differently (Open MPI 4.1.4 saturates shorts). */
static void sum_toward_zero(int bt, const unsigned char *cur, unsigned char *operand)
{
    if (bt == BT_ULONG || bt == BT_BYTE) return;
    unsigned char zero[8] = {0};
    double d0 = 0.0;
    const unsigned char *z = bt == BT_DOUBLE ? (const unsigned char *)&d0 : zero;
    /* cur >= 0 iff MAX(cur, 0) == cur; operand >= 0 likewise */
    unsigned char t1[8], t2[8];
    memcpy(t1, z, 8);
    elem_apply(bt, OP_MAX, t1, cur);
    bool cur_pos = !memcmp(t1, cur, (size_t)bt_size[bt]);
    memcpy(t2, z, 8);
    elem_apply(bt, OP_MAX, t2, operand);
    bool op_pos = !memcmp(t2, operand, (size_t)bt_size[bt]);
    if (cur_pos == op_pos) { /* negate: 0 - operand */
        unsigned char m1[8];
        memcpy(m1, operand, (size_t)bt_size[bt]); /* the operand may be the last of its array */
        if (bt == BT_DOUBLE) {
            double v;
            memcpy(&v, operand, sizeof v);
            v = -v;
            memcpy(operand, &v, sizeof v);
            return;
        }
        /* two's complement: ~x + 1 */
        unsigned char one[8] = {1};
        for (int i = 0; i < bt_size[bt]; i++) m1[i] = (unsigned char)~m1[i];
        elem_apply(bt, OP_SUM, m1, one);
        memcpy(operand, m1, (size_t)bt_size[bt]);
    }
}

static unsigned char *model_at(rr_win *w, const rr_region *g, long off)
{
    return w->model[g->target][g->seg] + off;
}

/* Operations of one region; returns how many. */
static int gen_region_ops(rr_epoch *ep, rr_rng *r, rr_win *w, rr_region *g, const int *ao, int nao,
                          rr_shape *put_shape)
{
    int np = cx.np, t = g->target, bt = g->bt;
    bool passive = ep->sync == SY_PASSIVE;
    long s = bt_size[bt];
    int N = (int)(g->len / s), du = w->du[t], first = ep->nops;
    (void)np;
    switch (g->kind) {
    case RK_PUT: {
        /* One writer: the shape was fixed by the region size; REPLACE counts as a put. */
        int call = bt != BT_BYTE && rr_pct(r, 25) ? C_ACC : C_PUT;
        rr_op *o = new_op(ep, r, ao[rr_below(r, nao)], t, maybe_request(r, passive, call), OP_REPLACE, bt);
        o->seg = g->seg;
        o->toff = g->off;
        o->tsh = *put_shape; /* the op owns its offsets from here on */
        shape_gen(r, &o->osh, bt, o->tsh.n, 1l << 30, true);
        o->oval = calloc((size_t)o->tsh.n, (size_t)s);
        for (int i = 0; i < o->tsh.n; i++) {
            gen_value(r, bt, V_ANY, o->oval + i * s);
            memcpy(model_at(w, g, o->toff + o->tsh.off[i]), o->oval + i * s, (size_t)s);
        }
        break;
    }
    case RK_GET: {
        int k = (int)rr_range(r, 1, nao + 1);
        for (int j = 0; j < k; j++) {
            int calls[] = {C_GET, C_GET, C_GACC, C_FOP};
            int call = calls[rr_below(r, bt == BT_BYTE ? 2 : 4)];
            int n = call == C_FOP ? 1 : (int)rr_range(r, 1, N);
            rr_op *o = new_op(ep, r, ao[rr_below(r, nao)], t, maybe_request(r, passive, call), OP_NO_OP, bt);
            o->seg = g->seg;
            long toff;
            if (!pick_sub(r, g, du, n, &toff)) toff = g->off;
            op_shapes(o, r, n, toff, g->off + g->len);
            for (int i = 0; i < n; i++)
                memcpy(o->rexp + i * s, model_at(w, g, toff + o->tsh.off[i]), (size_t)s);
        }
        break;
    }
    case RK_ACC: {
        int k = (int)rr_range(r, 1, 2 * nao);
        for (int j = 0; j < k; j++) {
            int n = (int)rr_range(r, 1, N);
            rr_op *o = new_op(ep, r, ao[rr_below(r, nao)], t, maybe_request(r, passive, C_ACC), g->op, bt);
            o->seg = g->seg;
            long toff;
            if (!pick_sub(r, g, du, n, &toff)) toff = g->off;
            op_shapes(o, r, n, toff, g->off + g->len);
            int vk = g->op == OP_SUM ? V_SMALL : g->op == OP_MAX || g->op == OP_MIN ? V_WIDE : V_ANY;
            for (int i = 0; i < n; i++) {
                gen_value(r, bt, vk, o->oval + i * s);
                if (g->op == OP_SUM)
                    sum_toward_zero(bt, g->start + (toff - g->off) + o->tsh.off[i], o->oval + i * s);
                elem_apply(bt, g->op, model_at(w, g, toff + o->tsh.off[i]), o->oval + i * s);
            }
        }
        break;
    }
    case RK_FETCH:
    case RK_SWAP: {
        /* Every fetch is checked later against the chain of all fetches. */
        int k = (int)rr_range(r, 1, nao + 2);
        for (int j = 0; j < k; j++) {
            int call = rr_pct(r, 50) ? C_FOP : C_GACC;
            int n = call == C_FOP ? 1 : (int)rr_range(r, 1, N);
            rr_op *o = new_op(ep, r, ao[rr_below(r, nao)], t, maybe_request(r, passive, call),
                              g->kind == RK_FETCH ? OP_SUM : OP_REPLACE, bt);
            o->seg = g->seg;
            o->racing = true;
            long toff;
            if (!pick_sub(r, g, du, n, &toff)) toff = g->off;
            op_shapes(o, r, n, toff, g->off + g->len);
            free(o->rexp);
            o->rexp = NULL;
            for (int i = 0; i < n; i++) {
                if (g->kind == RK_FETCH) {
                    gen_value(r, bt, V_POS, o->oval + i * s);
                    sum_toward_zero(bt, g->start + (toff - g->off) + o->tsh.off[i], o->oval + i * s);
                    elem_apply(bt, OP_SUM, model_at(w, g, toff + o->tsh.off[i]), o->oval + i * s);
                } else {
                    gen_distinct(bt, g->start + (toff - g->off) + o->tsh.off[i], 1 + (long)(ep->nops - first),
                                 o->oval + i * s);
                }
            }
        }
        break;
    }
    case RK_CAS: {
        /* Contestants expect the start value; exactly one can win.  Some expect a value
         * that never occurs and must fail whenever they run. */
        int k = (int)rr_range(r, 1, nao + 1);
        for (int j = 0; j < k; j++) {
            rr_op *o = new_op(ep, r, ao[rr_below(r, nao)], t, C_CAS, OP_CAS, bt);
            o->seg = g->seg;
            o->racing = true;
            op_shapes(o, r, 1, g->off, g->off + g->len);
            free(o->rexp);
            o->rexp = NULL;
            gen_distinct(bt, g->start, 1 + j, o->oval);
            memcpy(o->cval, g->start, (size_t)s);
            if (j > 0 && rr_pct(r, 25)) o->cval[0] ^= 1; /* odd mask: differs from start and all new values */
        }
        break;
    }
    default: {
        /* One origin, one op (plus NO_OP reads), executed in program order.  In passive
         * epochs puts and gets join in, separated from their neighbours by flushes. */
        int origin = ao[rr_below(r, nao)];
        int steps = (int)rr_range(r, 2, 5);
        uint64_t key = rr_next(r) >> 8;
        int prev = -1; /* an index: new_op may move the array */
        for (int j = 0; j < steps; j++) {
            int call, op = g->op;
            if (g->op == OP_CAS) {
                call = rr_pct(r, 60) ? C_CAS : C_FOP;
                if (call == C_FOP) op = OP_NO_OP;
            } else {
                int cs[] = {C_ACC, C_GACC, C_GACC, C_FOP, C_PUT, C_GET};
                call = cs[rr_below(r, passive ? 6 : 4)];
                if ((call == C_GACC || call == C_FOP) && rr_pct(r, 40)) op = OP_NO_OP;
                if (call == C_PUT || call == C_GET) op = OP_NO_OP;
            }
            if (call != C_CAS && call != C_FOP) call = maybe_request(r, passive, call);
            int n = call_single(call) ? 1 : (int)rr_range(r, 1, N);
            rr_op *o = new_op(ep, r, origin, t, call, op, bt);
            o->seg = g->seg;
            o->key = key + (uint64_t)j; /* keeps the sequence in order among the origin's other ops */
            long toff;
            if (!pick_sub(r, g, du, n, &toff)) toff = g->off;
            op_shapes(o, r, n, toff, g->off + g->len);
            bool pg = call == C_PUT || call == C_RPUT || call == C_GET || call == C_RGET;
            if (prev >= 0) {
                rr_op *p = &ep->ops[prev];
                if (pg || p->call == C_PUT || p->call == C_RPUT || p->call == C_GET || p->call == C_RGET)
                    p->flush_after = true;
            }
            prev = o->id;
            for (int i = 0; i < n; i++) {
                unsigned char *m = model_at(w, g, toff + o->tsh.off[i]);
                if (o->fetches) memcpy(o->rexp + i * s, m, (size_t)s);
                if (call == C_CAS) {
                    memcpy(o->cval, m, (size_t)s);
                    if (rr_pct(r, 40)) o->cval[0] ^= 1; /* fails */
                    gen_distinct(bt, m, 1 + j, o->oval);
                    if (!memcmp(o->cval, m, (size_t)s)) memcpy(m, o->oval, (size_t)s);
                    continue;
                }
                int vk = op == OP_SUM ? V_SMALL : (op == OP_MAX || op == OP_MIN) ? V_WIDE : V_ANY;
                gen_value(r, bt, vk, o->oval + i * s);
                if (op == OP_SUM) sum_toward_zero(bt, m, o->oval + i * s);
                if (call == C_PUT || call == C_RPUT)
                    memcpy(m, o->oval + i * s, (size_t)s);
                else if (op != OP_NO_OP && !(call == C_GET || call == C_RGET))
                    elem_apply(bt, op, m, o->oval + i * s);
            }
        }
        break;
    }
    }
    for (int i = first; i < ep->nops; i++) ep->ops[i].region = (int)(g - ep->regs);
    return ep->nops - first;
}

static bool region_nice(rr_win *w, const rr_region *g)
{
    for (long i = 0; i + 8 <= g->len; i += 8)
        if (!dbl_nice(model_at(w, g, g->off + i))) return false;
    return true;
}

/* Elements and operation of a region of kind and type at most avail bytes long. */
static bool region_size_op(rr_rng *r, int kind, int bt, long avail, int *N, int *op)
{
    long s = bt_size[bt];
    long maxn = kind == RK_CAS                                          ? 1
                : kind == RK_FETCH || kind == RK_SWAP || kind == RK_SEQ ? 8
                : bt == BT_BYTE && rr_pct(r, 30)                        ? 8192
                                                                        : 64;
    if (maxn * s > avail) maxn = avail / s;
    if (maxn < 1) return false;
    *N = (int)rr_range(r, 1, maxn);
    *op = OP_REPLACE;
    if (kind == RK_ACC) {
        int iops[] = {OP_SUM, OP_MAX, OP_MIN, OP_BOR, OP_BXOR, OP_BAND};
        *op = iops[rr_below(r, bt == BT_DOUBLE ? 3 : 6)];
        if (cx.pt2pt_mode && bt == BT_ULONG && (*op == OP_MAX || *op == OP_MIN)) *op = OP_BOR;
    } else if (kind == RK_SEQ) {
        int sops[] = {OP_REPLACE, OP_SUM, OP_MAX, OP_CAS};
        *op = sops[rr_below(r, 4)];
        if (*op == OP_CAS && !bt_integer(bt)) *op = OP_REPLACE;
        if (cx.pt2pt_mode && (*op == OP_CAS || (bt == BT_ULONG && *op == OP_MAX))) *op = OP_REPLACE;
    }
    return true;
}

static rr_region *new_region(rr_epoch *ep, int kind, int t, int seg, int bt, int op, long off, long len)
{
    if (ep->nregs == ep->rcap) {
        ep->rcap = ep->rcap ? 2 * ep->rcap : 32;
        ep->regs = realloc(ep->regs, sizeof(rr_region) * (size_t)ep->rcap);
    }
    rr_region *g = &ep->regs[ep->nregs++];
    memset(g, 0, sizeof *g);
    g->kind = kind;
    g->target = t;
    g->seg = seg;
    g->bt = bt;
    g->pt = -1;
    g->op = op;
    g->off = off;
    g->len = len;
    return g;
}

/* A region of N elements of basic type bt at start, and its operations; returns where
 * it ends. */
static long add_region(rr_epoch *ep, rr_rng *r, rr_win *w, int kind, int t, int seg, int bt, int op,
                       long start, int N, const int *ao, int nao)
{
    long s = bt_size[bt];
    rr_region *g = new_region(ep, kind, t, seg, bt, op, start, N * s);
    rr_shape tsh;
    if (kind == RK_PUT) {
        /* The region is exactly the footprint of the writer's target shape. */
        long end = start < w->drawn[t][seg] ? w->drawn[t][seg] : w->seglen[t][seg]; /* a tail's own */
        shape_gen(r, &tsh, bt, N, end - start, true);
        g->len = (tsh.span + s - 1) / s * s;
    } else {
        g->start = malloc((size_t)g->len);
        memcpy(g->start, model_at(w, g, g->off), (size_t)g->len);
    }
    /* Doubles only where the model's arithmetic is exact and order-independent. */
    if (bt == BT_DOUBLE && kind != RK_PUT && kind != RK_GET && !region_nice(w, g)) g->bt = BT_LONG;
    g->first = ep->nops;
    g->nops = gen_region_ops(ep, r, w, g, ao, nao, &tsh);
    return g->off + g->len;
}

/* A shape of n pair elements of S bytes: the shape header's byte shape, scaled. */
static void pair_shape(rr_rng *r, rr_shape *sh, long S, int n, long max_span, bool derived)
{
    shape_gen(r, sh, BT_BYTE, n, max_span / S, derived);
    for (int i = 0; i < n; i++) sh->off[i] *= S;
    sh->span *= S;
}

/* One operation on a pair region; the model applies it in generation order, which is
 * the order that matters: one origin in program order, or a commutative MAXLOC/MINLOC. */
static void pair_op(rr_epoch *ep, rr_rng *f, rr_win *w, const rr_region *g, int origin, int call, int op,
                    int n, uint64_t key)
{
    int pt = g->pt;
    long S = pt_info[pt].size;
    bool single = call_single(call);
    if (!single) call = maybe_request(f, ep->sync == SY_PASSIVE, call);
    rr_op *o = new_op(ep, f, origin, g->target, call, op, BT_BYTE);
    if (key) o->key = key;
    o->pt = pt;
    o->seg = g->seg;
    if (!pick_sub(f, g, w->du[g->target], n, &o->toff)) o->toff = g->off;
    pair_shape(f, &o->tsh, S, n, g->off + g->len - o->toff, !single);
    pair_shape(f, &o->osh, S, n, 1l << 30, !single);
    pair_shape(f, &o->rsh, S, n, 1l << 30, !single);
    if (n < 1) return; /* cannot happen; tells the compiler the sizes below are sane */
    o->oval = calloc((size_t)n, (size_t)S);
    memset(o->oval, PAD_BYTE ^ 0xff, (size_t)n * (size_t)S); /* holes unlike the target's */
    if (o->fetches) o->rexp = calloc((size_t)n, (size_t)S);
    for (int i = 0; i < n; i++) {
        unsigned char *m = model_at(w, g, o->toff + o->tsh.off[i]);
        pair_gen(f, pt, o->oval + i * S);
        if (o->fetches) memcpy(o->rexp + i * S, m, (size_t)S);
        if (call != C_GET && call != C_RGET) pair_apply(pt, op, m, o->oval + i * S);
    }
}

/* A region of value/index pairs, MPI_DOUBLE_INT and friends, in vectors and indexed
 * types on every side.  Its target stores well-formed pairs before the epoch (random
 * bytes are no valid long doubles); then one writer REPLACEs in it, or readers read it,
 * or several origins MAXLOC (or MINLOC) into it, or one origin runs an ordered
 * sequence of one op and NO_OP.  Returns where it ends, or -1 if it does not fit. */
static long add_pair_region(rr_epoch *ep, rr_rng *f, rr_win *w, int pt, int t, int seg, long start,
                            const int *ao, int nao)
{
    static const int kinds[] = {RK_PUT, RK_GET, RK_ACC, RK_SEQ};
    static const int seq_ops[] = {OP_MAXLOC, OP_MINLOC, OP_REPLACE};
    long S = pt_info[pt].size, avail = w->drawn[t][seg] - start;
    int kind = kinds[rr_below(f, 4)];
    long maxn = kind == RK_SEQ ? 8 : 16;
    if (maxn * S > avail) maxn = avail / S;
    if (maxn < 1) return -1;
    int N = (int)rr_range(f, 1, maxn);
    int op = kind == RK_ACC   ? (rr_pct(f, 50) ? OP_MAXLOC : OP_MINLOC)
             : kind == RK_SEQ ? seq_ops[rr_below(f, 3)]
             : kind == RK_GET ? OP_NO_OP
                              : OP_REPLACE;
    int gi = ep->nregs;
    rr_region *g = new_region(ep, kind, t, seg, BT_BYTE, op, start, N * S);
    g->pt = pt;
    g->start = malloc((size_t)g->len);
    memset(g->start, PAD_BYTE, (size_t)g->len);
    for (int i = 0; i < N; i++) pair_gen(f, pt, g->start + i * S);
    memcpy(model_at(w, g, g->off), g->start, (size_t)g->len);
    g->first = ep->nops;
    switch (kind) {
    case RK_PUT: {
        static const int calls[] = {C_ACC, C_GACC, C_PUT};
        pair_op(ep, f, w, g, ao[rr_below(f, nao)], calls[rr_below(f, 3)], OP_REPLACE, (int)rr_range(f, 1, N),
                0);
        break;
    }
    case RK_GET:
        for (int j = (int)rr_range(f, 1, nao + 1); j > 0; j--) {
            static const int calls[] = {C_GACC, C_GET, C_FOP};
            int call = calls[rr_below(f, 3)];
            pair_op(ep, f, w, g, ao[rr_below(f, nao)], call, OP_NO_OP,
                    call == C_FOP ? 1 : (int)rr_range(f, 1, N), 0);
        }
        break;
    case RK_ACC:
        for (int j = (int)rr_range(f, 1, 2 * nao); j > 0; j--)
            pair_op(ep, f, w, g, ao[rr_below(f, nao)], C_ACC, op, (int)rr_range(f, 1, N), 0);
        break;
    default: {
        /* Consecutive keys keep the steps in order among the origin's other calls. */
        static const int calls[] = {C_ACC, C_GACC, C_GACC, C_FOP};
        int origin = ao[rr_below(f, nao)], steps = (int)rr_range(f, 2, 5);
        uint64_t key = (rr_next(f) >> 8) | 1;
        for (int j = 0; j < steps; j++) {
            int call = calls[rr_below(f, 4)];
            int sop = call != C_ACC && rr_pct(f, 40) ? OP_NO_OP : op;
            pair_op(ep, f, w, g, origin, call, sop, call == C_FOP ? 1 : (int)rr_range(f, 1, N),
                    key + (uint64_t)j);
        }
        break;
    }
    }
    g = &ep->regs[gi];
    g->nops = ep->nops - g->first;
    for (int i = g->first; i < ep->nops; i++) ep->ops[i].region = gi;
    return g->off + g->len;
}

/* A call that moves no data: count 0 of a type, or a count of a datatype of size 0, on
 * each side independently.  Its (op, type) is any that Open MPI's own argument checks
 * let through whatever the count (they refuse MAXLOC on int, SUM on MPI_DOUBLE_INT and
 * bitwise ops on double), including arithmetic on MPI_BYTE, which the component
 * refuses with data only.  It must complete and change neither window memory nor the
 * result buffer. */
static void add_zero_op(rr_epoch *ep, rr_rng *f, rr_win *w, int origin)
{
    static const int calls[] = {C_PUT, C_GET, C_ACC, C_GACC};
    int np = cx.np, nt = 0, ts[64];
    for (int t = 0; t < np; t++)
        if (ep->acc[origin * np + t]) ts[nt++] = t;
    if (nt == 0) return;
    int t = ts[rr_below(f, nt)], call = calls[rr_below(f, 4)];
    int pt = rr_pct(f, 25) ? twin_pair((int)rr_below(f, PT_C_N)) : -1;
    int bt = rr_pct(f, 30) ? BT_BYTE : (int)rr_below(f, BT_N);
    int ops[OP_ALL], nops = 0;
    for (int op = 0; op < OP_ALL; op++) {
        bool loc = op == OP_MAXLOC || op == OP_MINLOC, bits = op == OP_BOR || op == OP_BXOR || op == OP_BAND;
        if (op == OP_CAS || (op == OP_NO_OP && call != C_GACC)) continue; /* NO_OP only where it fetches */
        if (pt >= 0 ? loc || op == OP_REPLACE || op == OP_NO_OP : !loc && !(bits && bt == BT_DOUBLE))
            ops[nops++] = op;
    }
    int op = call == C_PUT ? OP_REPLACE : call == C_GET ? OP_NO_OP : ops[rr_below(f, nops)];
    rr_op *o = new_op(ep, f, origin, t, maybe_request(f, ep->sync == SY_PASSIVE, call), op, bt);
    o->pt = pt;
    o->zero = true;
    o->seg = (int)rr_below(f, w->nseg[t]);
    long len = w->drawn[t][o->seg], du = w->du[t];
    o->toff = len >= du ? rr_below(f, len / du) * du : 0; /* somewhere in the window */
    for (int k = 0; k < 3; k++) {
        o->zempty[k] = rr_pct(f, 50);
        o->zcnt[k] = o->zempty[k] ? (int)rr_range(f, 1, 5) : 0;
    }
    rr_shape *sides[3] = {&o->osh, &o->tsh, &o->rsh};
    for (int k = 0; k < 3; k++) {
        rr_shape *sh = sides[k];
        sh->kind = SH_BASIC;
        sh->bt = bt;
        sh->span = ZSPAN; /* buffers of ZSPAN bytes: none of them may change */
        sh->off = malloc(sizeof(long));
    }
}

/* Start of a region the second generator adds: after the cursor; on a segment attached
 * as several regions, mostly a few elements before the next boundary, so the region
 * runs across it. */
static long extra_start(rr_rng *f, const rr_win *w, int t, int seg, long cursor, long align)
{
    long start = (cursor + align - 1) / align * align;
    int k = 1;
    while (k < w->npiece[t][seg] && w->cut[t][seg][k] <= start) k++;
    if (k < w->npiece[t][seg] && rr_pct(f, 80)) {
        long before = w->cut[t][seg][k] - rr_range(f, 1, 4) * align; /* cuts are multiples of 32 >= align */
        if (before > start) start = before;
    }
    return start;
}

/* What the second generator adds to an epoch after the first one's regions: pair
 * regions, on split dynamic windows regions of the first schedule's kinds placed
 * across boundaries, and calls that move no data. */
static void gen_extras(rr_epoch *ep, rr_rng *f, rr_win *w, long (*cursor)[MAXSEG], int *ao)
{
    int np = cx.np;
    for (int j = (int)rr_below(f, 3); j > 0; j--) {
        int t = (int)rr_below(f, np), nao = 0;
        for (int o = 0; o < np; o++)
            if (ep->acc[o * np + t]) ao[nao++] = o;
        int seg = (int)rr_below(f, w->nseg[t]);
        int pt = !w->split || rr_pct(f, 60) ? twin_pair((int)rr_below(f, PT_C_N)) : -1;
        if (cx.pt2pt_mode && pt >= 0 && pt != PT_FLOAT_INT && pt != PT_2INT) /* see usage */
            pt = pt % 2 ? PT_2INT : PT_FLOAT_INT;
        int kind = (int)rr_below(f, RK_N);
        int bt = (int)rr_below(f, kind == RK_PUT || kind == RK_GET ? BT_N
                                  : kind == RK_CAS                 ? BT_DOUBLE
                                                                   : BT_BYTE);
        if (nao == 0 || w->drawn[t][seg] == 0) continue;
        long du = w->du[t], esz = pt >= 0 ? pt_info[pt].size : 8, align = du > esz ? du : esz;
        long start = extra_start(f, w, t, seg, cursor[t][seg], align), end = -1;
        int N, op;
        /* Pairs where the target's C code could hold them: aligned in its address space,
         * which a contiguous allocate_shared window need not be. */
        long shift = pt >= 0 ? (pt_info[pt].align - w->bmod[t] % pt_info[pt].align) % pt_info[pt].align : 0;
        if (pt >= 0) {
            if (shift % du == 0) end = add_pair_region(ep, f, w, pt, t, seg, start + shift, ao, nao);
        } else if (region_size_op(f, kind, bt, w->drawn[t][seg] - start, &N, &op))
            end = add_region(ep, f, w, kind, t, seg, bt, op, start, N, ao, nao);
        if (end >= 0) cursor[t][seg] = end;
    }
    for (int o = 0; o < np; o++)
        if (rr_pct(f, 20))
            for (int k = (int)rr_range(f, 1, 2); k > 0; k--) add_zero_op(ep, f, w, o);
}

/* What the third generator adds: in a target's tail (win_tails), now and then one
 * region of a kind whose operations may cover it, their counts drawn up to the whole. */
static void gen_large(rr_epoch *ep, rr_rng *g, rr_win *w, int *ao)
{
    static const int kinds[] = {RK_PUT, RK_GET, RK_ACC, RK_FETCH, RK_SEQ};
    int np = cx.np;
    if (cx.pt2pt_mode) return; /* see usage */
    for (int t = 0; t < np; t++) {
        if (w->seglen[t][0] == w->drawn[t][0] || !rr_pct(g, 80)) continue;
        int nao = 0;
        for (int o = 0; o < np; o++)
            if (ep->acc[o * np + t]) ao[nao++] = o;
        int kind = kinds[rr_below(g, 5)];
        int bt = (int)rr_below(g, kind == RK_PUT || kind == RK_GET ? BT_N : BT_BYTE);
        long align = w->du[t] > 8 ? w->du[t] : 8, s = bt_size[bt];
        long start = (w->drawn[t][0] + align - 1) / align * align, avail = w->seglen[t][0] - start;
        int N, op;
        if (nao == 0 || !region_size_op(g, kind, bt, avail, &N, &op)) continue;
        N = (int)rr_range(g, avail / s / 8 + 1, avail / s);
        add_region(ep, g, w, kind, t, 0, bt, op, start, N, ao, nao);
    }
}

static void gen_regions(rr_epoch *ep, rr_rng *r, rr_rng *f, rr_rng *g, rr_win *w)
{
    int np = cx.np;
    long cursor[64][MAXSEG];
    memset(cursor, 0, sizeof cursor);
    int *ao = malloc(sizeof(int) * (size_t)np);
    long budget = (long)cx.ops * np;
    for (int attempt = 0; ep->nops < budget && attempt < 4 * budget; attempt++) {
        /* A few operations aimed at MPI_PROC_NULL: no effect, fetch buffers untouched. */
        if (rr_pct(r, 5)) {
            int o = (int)rr_below(r, np), nacc = 0;
            for (int t = 0; t < np; t++) nacc += ep->acc[o * np + t];
            int c = (int)rr_below(r, ep->sync == SY_PASSIVE ? C_N : C_RPUT);
            int bt = c == C_PUT || c == C_GET || c == C_RPUT || c == C_RGET ? (int)rr_below(r, BT_N)
                     : c == C_CAS                                           ? (int)rr_below(r, BT_DOUBLE)
                                                                            : (int)rr_below(r, BT_BYTE);
            int n = call_single(c) ? 1 : (int)rr_range(r, 1, 16);
            if (nacc == 0) continue; /* only inside an access epoch */
            rr_op *op = new_op(ep, r, o, MPI_PROC_NULL, c, c == C_CAS ? OP_CAS : OP_SUM, bt);
            op_shapes(op, r, n, 0, 1l << 30);
            for (int i = 0; i < n; i++) gen_value(r, bt, V_SMALL, op->oval + i * bt_size[bt]);
            if (op->fetches) memset(op->rexp, SENT_R, (size_t)n * (size_t)bt_size[bt]); /* unused */
            continue;
        }
        int t = (int)rr_below(r, np), nao = 0;
        for (int o = 0; o < np; o++)
            if (ep->acc[o * np + t]) ao[nao++] = o;
        int seg = (int)rr_below(r, w->nseg[t]);
        int kind = (int)rr_below(r, RK_N);
        int bt = (int)rr_below(r, kind == RK_PUT || kind == RK_GET ? BT_N
                                  : kind == RK_CAS                 ? BT_DOUBLE
                                                                   : BT_BYTE);
        if (nao == 0 || w->drawn[t][seg] == 0) continue;
        long align = w->du[t] > 8 ? w->du[t] : 8;
        long gap = rr_below(r, 3) * align;
        long start = (cursor[t][seg] + gap + align - 1) / align * align;
        int N, op;
        if (!region_size_op(r, kind, bt, w->drawn[t][seg] - start, &N, &op)) continue;
        cursor[t][seg] = add_region(ep, r, w, kind, t, seg, bt, op, start, N, ao, nao);
    }
    gen_extras(ep, f, w, cursor, ao);
    gen_large(ep, g, w, ao);
    free(ao);
}

static void epoch_free(rr_epoch *ep)
{
    for (int i = 0; i < ep->nops; i++) {
        rr_op *o = &ep->ops[i];
        shape_free(&o->osh);
        shape_free(&o->tsh);
        shape_free(&o->rsh);
        free(o->oval);
        free(o->rexp);
        free(o->obuf);
        free(o->rbuf);
        if (o->oder) MPI_Type_free(&o->odt);
        if (o->tder) MPI_Type_free(&o->tdt);
        if (o->rder) MPI_Type_free(&o->rdt);
    }
    for (int i = 0; i < ep->nregs; i++) free(ep->regs[i].start);
    free(ep->ops);
    free(ep->regs);
    free(ep->acc);
    free(ep->lock);
    free(ep->nocheck);
    free(ep->style);
    free(ep->nocheck_all);
    free(ep->use_test);
    free(ep->gbytes);
}

/* ---- execution ---- */
/* shape_build() for a pair type: the same constructors over the pair type, whose
 * shapes are byte shapes scaled by the struct size (displacements in bytes scale too). */
static int pair_shape_build(const rr_shape *sh, int pt, int *count, MPI_Datatype *dt, bool *derived)
{
    const long S = pt_info[pt].size;
    return shape_build_over(sh, pt_mpi(pt), S, S, count, dt, derived);
}

/* The (count, datatype) of one side (0 origin, 1 target, 2 result) of an operation. */
static int side_build(const rr_op *o, int side, const rr_shape *sh, int *count, MPI_Datatype *dt,
                      bool *derived)
{
    if (o->zero) {
        MPI_Datatype base = o->pt >= 0 ? pt_mpi(o->pt) : bt_mpi(o->bt);
        *count = o->zcnt[side];
        *derived = o->zempty[side];
        *dt = base;
        if (!o->zempty[side]) return MPI_SUCCESS;
        int rc = MPI_Type_contiguous(0, base, dt);
        return rc == MPI_SUCCESS ? MPI_Type_commit(dt) : rc;
    }
    if (o->pt >= 0) return pair_shape_build(sh, o->pt, count, dt, derived);
    return shape_build(sh, count, dt, derived);
}

/* Bytes of the compare buffer holding the CAS compare value (zeros for other calls). */
static size_t cval_bytes(const rr_op *o)
{
    size_t s = (size_t)op_esize(o);
    return s < sizeof o->cval ? s : sizeof o->cval;
}

static void op_prepare(rr_op *o)
{
    size_t s = (size_t)op_esize(o);
    o->obuf = malloc((size_t)o->osh.span + SLACK);
    memset(o->obuf, SENT_O, (size_t)o->osh.span + SLACK);
    for (int i = 0; i < o->osh.n; i++) memcpy(o->obuf + o->osh.off[i], o->oval + i * s, s);
    memset(o->cbuf, SENT_O, sizeof o->cbuf);
    memcpy(o->cbuf, o->cval, cval_bytes(o));
    if (o->fetches) {
        o->rbuf = malloc((size_t)o->rsh.span + SLACK);
        memset(o->rbuf, SENT_R, (size_t)o->rsh.span + SLACK);
    }
    CHECK_MPI(side_build(o, 0, &o->osh, &o->ocnt, &o->odt, &o->oder));
    CHECK_MPI(side_build(o, 1, &o->tsh, &o->tcnt, &o->tdt, &o->tder));
    CHECK_MPI(side_build(o, 2, &o->rsh, &o->rcnt, &o->rdt, &o->rder));
    o->req = MPI_REQUEST_NULL;
}

static void op_issue(rr_win *w, rr_op *o)
{
    int t = o->target;
    MPI_Aint d = t == MPI_PROC_NULL ? 0 : target_disp(w, t, o->seg, o->toff);
    MPI_Op mop = op_mpi_any(o->op);
    MPI_Win win = w->win;
    MPI_Datatype b = o->pt >= 0 ? pt_mpi(o->pt) : bt_mpi(o->bt);
    switch (o->call) {
    case C_PUT: CHECK_MPI(MPI_Put(o->obuf, o->ocnt, o->odt, t, d, o->tcnt, o->tdt, win)); break;
    case C_RPUT: CHECK_MPI(MPI_Rput(o->obuf, o->ocnt, o->odt, t, d, o->tcnt, o->tdt, win, &o->req)); break;
    case C_GET: CHECK_MPI(MPI_Get(o->rbuf, o->rcnt, o->rdt, t, d, o->tcnt, o->tdt, win)); break;
    case C_RGET: CHECK_MPI(MPI_Rget(o->rbuf, o->rcnt, o->rdt, t, d, o->tcnt, o->tdt, win, &o->req)); break;
    case C_ACC: CHECK_MPI(MPI_Accumulate(o->obuf, o->ocnt, o->odt, t, d, o->tcnt, o->tdt, mop, win)); break;
    case C_RACC:
        CHECK_MPI(MPI_Raccumulate(o->obuf, o->ocnt, o->odt, t, d, o->tcnt, o->tdt, mop, win, &o->req));
        break;
    case C_GACC:
        CHECK_MPI(MPI_Get_accumulate(o->obuf, o->ocnt, o->odt, o->rbuf, o->rcnt, o->rdt, t, d, o->tcnt,
                                     o->tdt, mop, win));
        break;
    case C_RGACC:
        CHECK_MPI(MPI_Rget_accumulate(o->obuf, o->ocnt, o->odt, o->rbuf, o->rcnt, o->rdt, t, d, o->tcnt,
                                      o->tdt, mop, win, &o->req));
        break;
    case C_FOP: CHECK_MPI(MPI_Fetch_and_op(o->obuf, o->rbuf, b, t, d, mop, win)); break;
    default: CHECK_MPI(MPI_Compare_and_swap(o->obuf, o->cbuf, o->rbuf, b, t, d, win)); break;
    }
    o->issued = true;
    cx.nops_issued++;
    cx.nzero += o->zero;
    cx.npair += o->pt >= 0 && !o->zero;
    cx.ncross += op_cut(w, o) >= 0;
    cx.nlarge += (long)o->tsh.n * op_esize(o) >= 65536;
}

/* MPI must never write an origin buffer (nor the compare buffer). */
static void check_origin_intact(const rr_op *o)
{
    if (o->scribbled || !o->obuf) return;
    size_t s = (size_t)op_esize(o);
    unsigned char *want = malloc((size_t)o->osh.span + SLACK);
    memset(want, SENT_O, (size_t)o->osh.span + SLACK);
    for (int i = 0; i < o->osh.n; i++) memcpy(want + o->osh.off[i], o->oval + i * s, s);
    unsigned char cwant[8 + SLACK];
    memset(cwant, SENT_O, sizeof cwant);
    memcpy(cwant, o->cval, cval_bytes(o));
    if (memcmp(want, o->obuf, (size_t)o->osh.span + SLACK) || memcmp(cwant, o->cbuf, sizeof cwant)) {
        char d[300];
        op_desc(o, d, sizeof d);
        MISMATCH("origin buffer modified by MPI; %s", d);
    } else {
        CHECK(true, "origin intact");
    }
    free(want);
}

/* Once an operation is locally complete its origin buffers may be reused: overwrite
 * them, so an implementation still reading them is caught. */
static void scribble(rr_op *o)
{
    if (!o->issued || o->scribbled) return;
    o->scribbled = true;
    memset(o->obuf, SCRIBBLE, (size_t)o->osh.span);
    memset(o->cbuf, SCRIBBLE, sizeof o->cbuf);
}

static void scribble_target(rr_op **mine, int n, int t)
{
    for (int i = 0; i < n; i++)
        if (t < 0 || mine[i]->target == t) {
            if (!call_is_request(mine[i]->call)) scribble(mine[i]);
        }
}

static void wait_req(rr_op *o, rr_rng *x)
{
    if (o->req == MPI_REQUEST_NULL) return;
    if (rr_pct(x, 50)) {
        CHECK_MPI(MPI_Wait(&o->req, MPI_STATUS_IGNORE));
    } else {
        int flag = 0;
        int rc = MPI_SUCCESS;
        for (long spin = 0; !flag && rc == MPI_SUCCESS && spin < 100000000L; spin++)
            rc = MPI_Test(&o->req, &flag, MPI_STATUS_IGNORE);
        CHECK_MPI(rc);
        CHECK(flag, "seed %ld epoch %d: MPI_Test never completed op#%d", cx.seed, cx.epoch, o->id);
    }
    scribble(o);
}

static int cmp_key(const void *a, const void *b)
{
    const rr_op *x = *(rr_op *const *)a, *y = *(rr_op *const *)b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_target_key(const void *a, const void *b)
{
    const rr_op *x = *(rr_op *const *)a, *y = *(rr_op *const *)b;
    if (x->target != y->target) return x->target < y->target ? -1 : 1;
    return cmp_key(a, b);
}

static MPI_Group group_of(const char *acc, int stride, int fixed_is_row, int fixed)
{
    int np = cx.np, n = 0;
    int *ranks = malloc(sizeof(int) * (size_t)np);
    for (int p = 0; p < np; p++) {
        char a = fixed_is_row ? acc[fixed * stride + p] : acc[p * stride + fixed];
        if (a) ranks[n++] = p;
    }
    MPI_Group world, g = MPI_GROUP_EMPTY;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    if (n > 0) MPI_Group_incl(world, n, ranks, &g);
    MPI_Group_free(&world);
    free(ranks);
    return g;
}

/* Pair regions start from the well-formed pairs their targets store now, into their
 * own window; the stores must be visible before anyone's epoch accesses them: the
 * opening fence does that, otherwise MPI_Win_sync and a barrier. */
static void epoch_store_starts(rr_epoch *ep, rr_win *w)
{
    bool any = false;
    for (int i = 0; i < ep->nregs; i++) {
        const rr_region *g = &ep->regs[i];
        if (g->pt < 0) continue;
        any = true;
        if (g->target != cx.rank) continue;
        memcpy(w->mem[g->seg] + g->off, g->start, (size_t)g->len);
        ep->stored = true;
    }
    if (!any || ep->sync == SY_FENCE) return;
    if (ep->stored) {
        CHECK_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win));
        CHECK_MPI(MPI_Win_sync(w->win));
        CHECK_MPI(MPI_Win_unlock_all(w->win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Runs this rank's part of the epoch, from opening to closing synchronization. */
static void epoch_run(rr_epoch *ep, rr_win *w, rr_rng *x)
{
    int np = cx.np, me = cx.rank;
    rr_op **mine = malloc(sizeof(rr_op *) * (size_t)(ep->nops + 1));
    int n = 0;
    for (int i = 0; i < ep->nops; i++)
        if (ep->ops[i].origin == me) {
            op_prepare(&ep->ops[i]);
            mine[n++] = &ep->ops[i];
        }
    bool seqstyle = ep->sync == SY_PASSIVE && ep->style[me] == ST_LOCK_SEQ;
    qsort(mine, (size_t)n, sizeof *mine, seqstyle ? cmp_target_key : cmp_key);

    bool posted = false, started = false;
    int *locked = malloc(sizeof(int) * (size_t)np), nlocked = 0;
    if (ep->sync == SY_FENCE) {
        /* MPI_MODE_NOSTORE would be a lie after storing pair regions' starts. */
        CHECK_MPI(MPI_Win_fence(ep->fence_open & ~(ep->stored ? MPI_MODE_NOSTORE : 0), w->win));
    } else if (ep->sync == SY_PSCW) {
        int a = ep->pscw_nocheck ? MPI_MODE_NOCHECK : 0;
        MPI_Group exp = group_of(ep->acc, np, 0, me), accg = group_of(ep->acc, np, 1, me);
        if (exp != MPI_GROUP_EMPTY) {
            CHECK_MPI(MPI_Win_post(exp, a, w->win));
            posted = true;
            MPI_Group_free(&exp);
        }
        if (ep->pscw_nocheck) MPI_Barrier(MPI_COMM_WORLD); /* every post precedes every start */
        if (accg != MPI_GROUP_EMPTY) {
            CHECK_MPI(MPI_Win_start(accg, a, w->win));
            started = true;
            MPI_Group_free(&accg);
        }
    } else if (ep->style[me] == ST_LOCK_ALL) {
        CHECK_MPI(MPI_Win_lock_all(ep->nocheck_all[me] ? MPI_MODE_NOCHECK : 0, w->win));
    } else if (ep->style[me] == ST_LOCK_HOLD) {
        /* Ascending target order, so exclusive locks held together cannot deadlock. */
        for (int t = 0; t < np; t++)
            if (ep->acc[me * np + t]) {
                CHECK_MPI(MPI_Win_lock(ep->lock[me * np + t], t,
                                       ep->nocheck[me * np + t] ? MPI_MODE_NOCHECK : 0, w->win));
                locked[nlocked++] = t;
            }
    }

    bool passive = ep->sync == SY_PASSIVE;
    int cur = -1; /* ST_LOCK_SEQ: the target locked now */
    for (int i = 0; i < n; i++) {
        rr_op *o = mine[i];
        if (seqstyle && o->target != MPI_PROC_NULL && o->target != cur) {
            if (cur >= 0) {
                CHECK_MPI(MPI_Win_unlock(cur, w->win));
                scribble_target(mine, i, cur);
            }
            cur = o->target;
            CHECK_MPI(MPI_Win_lock(ep->lock[me * np + cur], cur,
                                   ep->nocheck[me * np + cur] ? MPI_MODE_NOCHECK : 0, w->win));
        }
        if (seqstyle && o->target == MPI_PROC_NULL && cur < 0) {
            /* PROC_NULL operations go inside the first target's epoch. */
            int t0 = -1;
            for (int j = i; j < n && t0 < 0; j++) t0 = mine[j]->target >= 0 ? mine[j]->target : -1;
            if (t0 < 0) continue; /* cannot happen: PROC_NULL ops only for origins with access */
            cur = t0;
            CHECK_MPI(MPI_Win_lock(ep->lock[me * np + cur], cur,
                                   ep->nocheck[me * np + cur] ? MPI_MODE_NOCHECK : 0, w->win));
        }
        op_issue(w, o);
        if (o->flush_after) {
            CHECK_MPI(MPI_Win_flush(o->target, w->win));
            scribble_target(mine, i + 1, o->target);
        }
        if (passive && rr_pct(x, 12)) {
            /* 0 flush(t), 1 flush_local(t), 2 flush_all, 3 flush_local_all */
            int k = (int)rr_below(x, 4);
            int t = o->target;
            if (t == MPI_PROC_NULL) k = seqstyle && cur < 0 ? -1 : 2 + k % 2;
            if (cx.pt2pt_mode && (k == 1 || k == 3)) k--; /* pt2pt's flush_local can hang */
            if (k == 0)
                CHECK_MPI(MPI_Win_flush(t, w->win));
            else if (k == 1)
                CHECK_MPI(MPI_Win_flush_local(t, w->win));
            else if (k == 2)
                CHECK_MPI(MPI_Win_flush_all(w->win));
            else if (k == 3)
                CHECK_MPI(MPI_Win_flush_local_all(w->win));
            if (k >= 0) scribble_target(mine, i + 1, k >= 2 ? -1 : t);
        }
        if (passive && rr_pct(x, 15)) {
            /* Complete a random earlier request, by MPI_Wait or an MPI_Test loop. */
            int j = (int)rr_below(x, i + 1);
            wait_req(mine[j], x);
        }
    }
    bool late = passive && rr_pct(x, 25);
    if (!late)
        for (int i = 0; i < n; i++) wait_req(mine[i], x);

    if (ep->sync == SY_FENCE) {
        CHECK_MPI(MPI_Win_fence(ep->fence_close, w->win));
    } else if (ep->sync == SY_PSCW) {
        if (started) CHECK_MPI(MPI_Win_complete(w->win));
        if (posted && ep->use_test[me]) {
            int flag = 0;
            int rc = MPI_SUCCESS;
            for (long spin = 0; !flag && rc == MPI_SUCCESS && spin < 200000000L; spin++)
                rc = MPI_Win_test(w->win, &flag);
            CHECK_MPI(rc);
            if (!CHECK(flag, "seed %ld epoch %d: MPI_Win_test never completed", cx.seed, cx.epoch))
                CHECK_MPI(MPI_Win_wait(w->win));
        } else if (posted) {
            CHECK_MPI(MPI_Win_wait(w->win));
        }
    } else if (ep->style[me] == ST_LOCK_ALL) {
        CHECK_MPI(MPI_Win_unlock_all(w->win));
    } else if (ep->style[me] == ST_LOCK_HOLD) {
        for (int k = nlocked - 1; k > 0; k--) {
            int j = (int)rr_below(x, k + 1), tmp = locked[k];
            locked[k] = locked[j];
            locked[j] = tmp;
        }
        for (int k = 0; k < nlocked; k++) CHECK_MPI(MPI_Win_unlock(locked[k], w->win));
    } else if (cur >= 0) {
        CHECK_MPI(MPI_Win_unlock(cur, w->win));
    }
    /* Requests may also be completed after the epoch that carried them closed. */
    if (late)
        for (int i = 0; i < n; i++) wait_req(mine[i], x);
    for (int i = 0; i < n; i++) check_origin_intact(mine[i]);
    free(locked);
    free(mine);
}

/* ---- verification ---- */
static const rr_region *region_at(const rr_epoch *ep, int t, int seg, long off)
{
    for (int i = 0; i < ep->nregs; i++) {
        const rr_region *g = &ep->regs[i];
        if (g->target == t && g->seg == seg && off >= g->off && off < g->off + g->len) return g;
    }
    return NULL;
}

static void writers_of(const rr_epoch *ep, const rr_region *g, int t, int seg, long off, char *buf,
                       size_t len)
{
    buf[0] = 0;
    if (!g) {
        /* Only calls that must not move data were aimed here, if any. */
        size_t used = (size_t)snprintf(buf, len, "no operation touched it this epoch");
        const char *sep = "; calls moving no data aimed at this segment:";
        for (int i = 0; i < ep->nops && used < len; i++) {
            const rr_op *o = &ep->ops[i];
            if (!o->zero || o->target != t || o->seg != seg) continue;
            char d[300];
            op_desc(o, d, sizeof d);
            used += (size_t)snprintf(buf + used, len - used, "%s {%s}", sep, d);
            sep = "";
        }
        return;
    }
    size_t used = (size_t)snprintf(buf, len, "%s region seg%d+%ld..%ld (%s, %s):", rk_name[g->kind], g->seg,
                                   g->off, g->off + g->len, type_str(g->bt, g->pt), op_str(g->op));
    for (int i = g->first; i < g->first + g->nops && used < len; i++) {
        const rr_op *o = &ep->ops[i];
        for (int e = 0; e < o->tsh.n; e++) {
            long lo = o->toff + o->tsh.off[e];
            if (off >= lo && off < lo + op_esize(o)) {
                char d[300];
                op_desc(o, d, sizeof d);
                used += (size_t)snprintf(buf + used, len - used, " {%s elem %d}", d, e);
                break;
            }
        }
    }
}

static bool racing_region(const rr_region *g)
{
    return g && (g->kind == RK_SWAP || g->kind == RK_CAS);
}

/* Window memory of rank t (mine, or the shared neighbour's) against the model. */
static void verify_memory(const rr_epoch *ep, rr_win *w, int t, unsigned char *const *mem)
{
    int reported = 0;
    for (int s = 0; s < w->nseg[t]; s++) {
        const unsigned char *m = w->model[t][s];
        for (long i = 0; i < w->seglen[t][s]; i++) {
            if (mem[s][i] == m[i]) continue;
            const rr_region *g = region_at(ep, t, s, i);
            if (racing_region(g)) continue; /* checked from the gathered fetches */
            long es = g ? reg_esize(g) : 1;
            long e0 = g ? g->off + (i - g->off) / es * es : i;
            int bt = g ? g->bt : BT_BYTE, pt = g ? g->pt : -1;
            /* A long double's last 6 bytes hold no data; a pair's holes keep what the
             * target stored there. */
            const long hole = pt >= 0 ? pair_hole_diff(pt, mem[s] + e0, m + e0) : -1;
            if (pt >= 0 && hole < 0 && pair_equal(pt, mem[s] + e0, m + e0)) {
                i = e0 + es - 1;
                continue;
            }
            char ex[64], got[64], wr[900];
            val_str(bt, pt, m + e0, ex, sizeof ex);
            val_str(bt, pt, mem[s] + e0, got, sizeof got);
            writers_of(ep, g, t, s, i, wr, sizeof wr);
            if (reported++ < 4) {
                if (hole >= 0)
                    MISMATCH(
                        "window of rank %d (%s, sync %s) seg%d byte %ld: the hole of a %s pair %s "
                        "was written (0x%02x, expected 0x%02x); %s",
                        t, fl_name[w->flavor], sy_name[ep->sync], s, e0 + hole, pt_info[pt].name, got,
                        mem[s][e0 + hole], m[e0 + hole], wr);
                else
                    MISMATCH("window of rank %d (%s, sync %s) seg%d byte %ld: expected %s got %s; %s", t,
                             fl_name[w->flavor], sy_name[ep->sync], s, i, ex, got, wr);
            }
            i = e0 + es - 1; /* one report per element */
        }
    }
    CHECK(true, "memory");
}

/* Fetched values, gap bytes of result buffers and untouched origin buffers. */
static void verify_fetches(const rr_epoch *ep)
{
    for (int k = 0; k < ep->nops; k++) {
        const rr_op *o = &ep->ops[k];
        if (o->origin != cx.rank) continue;
        size_t s = (size_t)op_esize(o);
        char d[300];
        if (o->fetches) {
            /* A fetched pair's holes are not in its typemap: they keep SENT_R, as gaps do. */
            unsigned char *gapmask = calloc((size_t)o->rsh.span + SLACK, 1);
            for (int i = 0; i < o->rsh.n; i++) {
                if (o->pt < 0)
                    memset(gapmask + o->rsh.off[i], 1, s);
                else
                    for (long b = 0; b < (long)s; b++) gapmask[o->rsh.off[i] + b] = !pair_hole(o->pt, b);
                const unsigned char *got = o->rbuf + o->rsh.off[i];
                if (o->target == MPI_PROC_NULL || !o->rexp) continue;
                if (o->pt >= 0 ? !pair_equal(o->pt, got, o->rexp + i * s)
                               : memcmp(got, o->rexp + i * s, s) != 0) {
                    char ex[64], gv[64];
                    val_str(o->bt, o->pt, o->rexp + i * s, ex, sizeof ex);
                    val_str(o->bt, o->pt, got, gv, sizeof gv);
                    op_desc(o, d, sizeof d);
                    MISMATCH("fetched element %d: expected %s got %s; %s", i, ex, gv, d);
                    const rr_region *g = o->region >= 0 ? &ep->regs[o->region] : NULL;
                    for (int j = 0; g && g->kind == RK_SEQ && j < g->nops; j++) {
                        const rr_op *q = &ep->ops[g->first + j];
                        char v0[64];
                        op_desc(q, d, sizeof d);
                        val_str(q->bt, q->pt, q->oval, v0, sizeof v0);
                        printf("  step %d: %s, first operand %s\n", j, d, v0);
                    }
                    break;
                }
            }
            for (long b = 0; b < o->rsh.span + SLACK; b++) {
                bool must = o->target == MPI_PROC_NULL || !gapmask[b];
                if (must && o->rbuf[b] != SENT_R) {
                    op_desc(o, d, sizeof d);
                    MISMATCH("result buffer byte %ld (%s) was written: 0x%02x; %s", b,
                             o->target == MPI_PROC_NULL ? "MPI_PROC_NULL target"
                             : o->zero                  ? "a call moving no data"
                                                        : "outside the result datatype",
                             o->rbuf[b], d);
                    break;
                }
            }
            free(gapmask);
            CHECK(true, "fetches");
        }
    }
}

/* The fetched values of the racing operations of every rank, gathered. */
static unsigned char *gather_racing(rr_epoch *ep, int **displs_out)
{
    int np = cx.np;
    long *pos = calloc((size_t)np, sizeof(long));
    for (int k = 0; k < ep->nops; k++) {
        rr_op *o = &ep->ops[k];
        if (!o->racing) continue;
        o->gpos = pos[o->origin];
        pos[o->origin] += 8L * o->rsh.n;
    }
    int *counts = malloc(sizeof(int) * (size_t)np), *displs = malloc(sizeof(int) * (size_t)np);
    long total = 0;
    for (int p = 0; p < np; p++) {
        counts[p] = (int)pos[p];
        displs[p] = (int)total;
        total += pos[p];
    }
    unsigned char *send = calloc((size_t)pos[cx.rank] + 1, 1), *all = calloc((size_t)total + 1, 1);
    for (int k = 0; k < ep->nops; k++) {
        rr_op *o = &ep->ops[k];
        if (!o->racing || o->origin != cx.rank) continue;
        for (int i = 0; i < o->rsh.n; i++)
            memcpy(send + o->gpos + 8L * i, o->rbuf + o->rsh.off[i], (size_t)bt_size[o->bt]);
    }
    CHECK_MPI(MPI_Allgatherv(send, counts[cx.rank], MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD));
    free(send);
    free(counts);
    free(pos);
    *displs_out = displs;
    return all;
}

/* Fetch-add, swap and compare-and-swap outcomes on my window: per element, the fetched
 * values must form one serial order of the operations that reaches the final value. */
static void verify_races(const rr_epoch *ep, rr_win *w, const unsigned char *all, const int *displs)
{
    for (int gi = 0; gi < ep->nregs; gi++) {
        const rr_region *g = &ep->regs[gi];
        if (g->target != cx.rank || (g->kind != RK_FETCH && g->kind != RK_SWAP && g->kind != RK_CAS))
            continue;
        long s = bt_size[g->bt], ne = g->len / s;
        /* Who touches each element, in operation order: (op, index in its shape), listed
         * once for the region (a large region's elements times its operations' would
         * not do). */
        long *first = calloc((size_t)ne + 1, sizeof(long)), total = 0;
        for (int j = g->first; j < g->first + g->nops; j++) {
            const rr_op *o = &ep->ops[j];
            for (int i = 0; i < o->tsh.n; i++) {
                long at = o->toff + o->tsh.off[i] - g->off;
                if (at >= 0 && at % s == 0 && at / s < ne) first[at / s + 1]++;
            }
        }
        for (long e = 0; e < ne; e++) first[e + 1] += first[e];
        total = first[ne];
        long *next = malloc(sizeof(long) * (size_t)(ne + 1));
        memcpy(next, first, sizeof(long) * (size_t)(ne + 1));
        int *by_op = malloc(sizeof(int) * (size_t)(total + 1)),
            *by_i = malloc(sizeof(int) * (size_t)(total + 1));
        for (int j = g->first; j < g->first + g->nops; j++) {
            const rr_op *o = &ep->ops[j];
            for (int i = 0; i < o->tsh.n; i++) {
                long at = o->toff + o->tsh.off[i] - g->off;
                if (at < 0 || at % s != 0 || at / s >= ne) continue;
                long q = next[at / s]++;
                by_op[q] = j;
                by_i[q] = i;
            }
        }
        for (long e = 0; e < g->len; e += s) {
            long loc = g->off + e;
            /* (fetched, operand, op) of every operation touching this element */
            const unsigned char *f[64], *v[64];
            const rr_op *who[64];
            int k = 0;
            for (long q = first[e / s]; q < first[e / s + 1] && k < 64; q++) {
                const rr_op *o = &ep->ops[by_op[q]];
                const int i = by_i[q];
                f[k] = all + displs[o->origin] + o->gpos + 8L * i;
                v[k] = o->oval + i * s;
                who[k++] = o;
            }
            const unsigned char *fin = w->mem[g->seg] + loc;
            unsigned char cur[8];
            memcpy(cur, g->start + e, (size_t)s);
            char a[64], b[64], d[300];
            if (g->kind == RK_CAS) {
                int winners = 0, wi = -1;
                for (int j = 0; j < k; j++)
                    if (!memcmp(who[j]->cval, cur, (size_t)s) && !memcmp(f[j], cur, (size_t)s))
                        winners++, wi = j;
                bool any_real = false;
                for (int j = 0; j < k; j++) any_real |= !memcmp(who[j]->cval, cur, (size_t)s);
                const unsigned char *want = wi >= 0 ? v[wi] : cur;
                bool ok = winners == (any_real ? 1 : 0) && !memcmp(fin, want, (size_t)s);
                for (int j = 0; ok && j < k; j++)
                    if (j != wi && memcmp(f[j], want, (size_t)s) &&
                        (memcmp(who[j]->cval, cur, (size_t)s) == 0 || memcmp(f[j], cur, (size_t)s)))
                        ok = false;
                if (!ok) {
                    elem_str(g->bt, cur, a, sizeof a);
                    elem_str(g->bt, fin, b, sizeof b);
                    MISMATCH(
                        "compare_and_swap race at seg%d+%ld: start %s final %s, %d winners of %d contestants",
                        g->seg, loc, a, b, winners, k);
                    for (int j = 0; j < k; j++) {
                        elem_str(g->bt, f[j], a, sizeof a);
                        elem_str(g->bt, v[j], b, sizeof b);
                        op_desc(who[j], d, sizeof d);
                        printf("  contestant %s new %s fetched %s%s\n", d, b, a,
                               memcmp(who[j]->cval, cur, (size_t)s) ? " (compare value never present)" : "");
                    }
                }
                continue;
            }
            bool used[64] = {false}, ok = true;
            for (int step = 0; step < k && ok; step++) {
                int j = 0;
                while (j < k && (used[j] || memcmp(f[j], cur, (size_t)s))) j++;
                if (j == k) {
                    ok = false;
                    break;
                }
                used[j] = true;
                if (g->kind == RK_FETCH)
                    elem_apply(g->bt, OP_SUM, cur, v[j]);
                else
                    memcpy(cur, v[j], (size_t)s);
            }
            if (ok && memcmp(cur, fin, (size_t)s)) ok = false;
            if (!ok) {
                elem_str(g->bt, g->start + e, a, sizeof a);
                elem_str(g->bt, fin, b, sizeof b);
                MISMATCH("%s at seg%d+%ld (%s): start %s final %s, the fetched values form no serial order",
                         rk_name[g->kind], g->seg, loc, bt_name[g->bt], a, b);
                for (int j = 0; j < k; j++) {
                    elem_str(g->bt, f[j], a, sizeof a);
                    elem_str(g->bt, v[j], b, sizeof b);
                    op_desc(who[j], d, sizeof d);
                    printf("  %s operand %s fetched %s\n", d, b, a);
                }
            } else {
                CHECK(true, "chain");
            }
        }
        free(first);
        free(next);
        free(by_op);
        free(by_i);
    }
}

/* Everyone's model takes the real contents (race outcomes, and no cascades after a
 * mismatch). */
static void resync_model(rr_win *w)
{
    int np = cx.np;
    int *counts = malloc(sizeof(int) * (size_t)np), *displs = malloc(sizeof(int) * (size_t)np);
    long total = 0;
    for (int p = 0; p < np; p++) {
        long c = 0;
        for (int s = 0; s < w->nseg[p]; s++) c += w->seglen[p][s];
        counts[p] = (int)c;
        displs[p] = (int)total;
        total += c;
    }
    unsigned char *send = malloc((size_t)counts[cx.rank] + 1), *all = malloc((size_t)total + 1);
    long k = 0;
    for (int s = 0; s < w->nseg[cx.rank]; s++) {
        if (w->seglen[cx.rank][s]) memcpy(send + k, w->mem[s], (size_t)w->seglen[cx.rank][s]);
        k += w->seglen[cx.rank][s];
    }
    CHECK_MPI(MPI_Allgatherv(send, counts[cx.rank], MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD));
    for (int p = 0; p < np; p++) {
        k = displs[p];
        for (int s = 0; s < w->nseg[p]; s++) {
            if (w->seglen[p][s]) memcpy(w->model[p][s], all + k, (size_t)w->seglen[p][s]);
            k += w->seglen[p][s];
        }
    }
    free(send);
    free(all);
    free(counts);
    free(displs);
}

static void epoch_verify(rr_epoch *ep, rr_win *w)
{
    MPI_Barrier(MPI_COMM_WORLD);
    bool passive = ep->sync == SY_PASSIVE;
    if (passive) {
        /* Local loads of memory others updated through passive target need a sync. */
        CHECK_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win));
        CHECK_MPI(MPI_Win_sync(w->win));
    }
    verify_memory(ep, w, cx.rank, w->mem);
    if (w->nbr && ep->sync != SY_PSCW) {
        unsigned char *nm[MAXSEG] = {w->nbr};
        verify_memory(ep, w, w->nbr_rank, nm);
    }
    verify_fetches(ep);
    int *displs;
    unsigned char *all = gather_racing(ep, &displs);
    verify_races(ep, w, all, displs);
    free(all);
    free(displs);
    resync_model(w);
    if (passive) CHECK_MPI(MPI_Win_unlock_all(w->win));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- driver ---- */
static void usage(void)
{
    if (cx.rank == 0)
        fprintf(stderr,
                "usage: rma_random [-s SEED] [-n SEEDS] [-e EPOCHS_PER_SEED] [-o OPS_PER_EPOCH_PER_RANK] "
                "[-t SECONDS] [-P] [-v]\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &cx.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &cx.np);
    /* A failing window creation is reported, not fatal. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long seed0 = 1, nseeds = -1;
    double seconds = 0;
    cx.epochs = 10;
    cx.ops = 16;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v")) {
            cx.verbose++;
            continue;
        }
        if (!strcmp(a, "-P")) {
            cx.pt2pt_mode = true;
            continue;
        }
        if (!v || strlen(a) != 2 || a[0] != '-') {
            usage();
            MPI_Finalize();
            return 2;
        }
        i++;
        switch (a[1]) {
        case 's': seed0 = atol(v); break;
        case 'n': nseeds = atol(v); break;
        case 'e': cx.epochs = atoi(v); break;
        case 'o': cx.ops = atoi(v); break;
        case 't': seconds = atof(v); break;
        default:
            usage();
            MPI_Finalize();
            return 2;
        }
    }
    if (nseeds < 0) nseeds = seconds > 0 ? -1 : 1;
    if (cx.np > 64) {
        if (cx.rank == 0) fprintf(stderr, "rma_random: at most 64 ranks\n");
        MPI_Finalize();
        return 2;
    }
    /* allocate_shared only when every rank shares one node. */
    MPI_Comm node;
    int nodesize, shared_ok;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nodesize);
    MPI_Comm_free(&node);
    shared_ok = nodesize == cx.np && !cx.pt2pt_mode;
    MPI_Allreduce(MPI_IN_PLACE, &shared_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (cx.rank == 0) {
        printf("rma_random: %d ranks, seeds from %ld, %d epochs per seed, %d ops per rank per epoch\n", cx.np,
               seed0, cx.epochs, cx.ops);
        fflush(stdout);
    }
    /* An epoch takes milliseconds; one stuck for a minute names its seed and epoch on
     * every rank (check.h), which replays it. */
    check_watchdog(60);
    double t0 = MPI_Wtime();
    long seeds_done = 0, epochs_done = 0;
    for (long k = 0; nseeds < 0 || k < nseeds; k++) {
        int go = seconds <= 0 || k == 0 || MPI_Wtime() - t0 < seconds;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!go) break;
        cx.seed = seed0 + k;
        rr_rng r, x, f, g;
        rr_seed(&r, (uint64_t)cx.seed, (uint64_t)cx.np);
        rr_seed(&f, (uint64_t)cx.seed, (uint64_t)cx.np + 0x5eed0000u); /* the additions' own */
        rr_seed(&g, (uint64_t)cx.seed, (uint64_t)cx.np + 0x1a46e000u); /* the large ones' */
        rr_seed(&twins, (uint64_t)cx.seed, (uint64_t)cx.np + 0x2f0a0000u);
        rr_win w;
        win_create(&w, &r, &f, &g, shared_ok != 0);
        int *sync = malloc(sizeof(int) * (size_t)(cx.epochs + 1));
        for (int e = 0; e < cx.epochs; e++) sync[e] = (int)rr_below(&r, 3);
        sync[cx.epochs] = SY_PASSIVE; /* whatever follows the last epoch is not a fence */
        for (int e = 0; e < cx.epochs; e++) {
            cx.epoch = e;
            check_where("seed %ld epoch %d (replay: -s %ld -e %d -o %d)", cx.seed, e, cx.seed, cx.epochs,
                        cx.ops);
            rr_epoch ep;
            memset(&ep, 0, sizeof ep);
            gen_sync(&ep, &r, sync[e], sync[e + 1]);
            gen_regions(&ep, &r, &f, &g, &w);
            /* Local choices (flushes, waits) come from a per-rank generator: they do not
             * change the model, so they need not agree between ranks. */
            rr_seed(&x, (uint64_t)cx.seed * 1000003u + (uint64_t)e, (uint64_t)cx.rank + 77);
            long before = cx.mismatches;
            if (cx.verbose > 1) {
                printf("rank %d seed %ld epoch %d: %s style %d posts/starts/locks:", cx.rank, cx.seed, e,
                       sy_name[ep.sync], ep.style[cx.rank]);
                for (int t = 0; t < cx.np; t++)
                    printf(" %d%d%d", ep.acc[cx.rank * cx.np + t], ep.acc[t * cx.np + cx.rank],
                           ep.lock[cx.rank * cx.np + t]);
                printf("\n");
                fflush(stdout);
            }
            cur_ep = &ep;
            cur_win = &w;
            epoch_store_starts(&ep, &w);
            epoch_run(&ep, &w, &x);
            epoch_verify(&ep, &w);
            if (cx.verbose && cx.rank == 0)
                printf("seed %ld epoch %d: %s window, %s, %d regions, %d ops%s\n", cx.seed, e,
                       fl_name[w.flavor], sy_name[ep.sync], ep.nregs, ep.nops,
                       cx.mismatches > before ? ", MISMATCH" : "");
            epoch_free(&ep);
            epochs_done++;
        }
        free(sync);
        cur_win = NULL;
        win_free(&w);
        seeds_done++;
    }
    long loc[6] = {cx.nops_issued, cx.mismatches, cx.nzero, cx.npair, cx.ncross, cx.nlarge}, tot[6];
    MPI_Reduce(loc, tot, 6, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (cx.rank == 0) {
        printf(
            "verified: %ld seeds (%ld..%ld), %ld epochs, %ld operations (%ld moving no data, %ld on pair "
            "types, "
            "%ld across attached regions, %ld of 64 KiB or more), %ld mismatches\n",
            seeds_done, seed0, seed0 + seeds_done - 1, epochs_done, tot[0], tot[2], tot[3], tot[4], tot[5],
            tot[1]);
        fflush(stdout);
    }
    return check_finish();
}
