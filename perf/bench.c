/* bench.c - see bench.h. */
#include "bench.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *g_prog = "bench";
static int g_rank = -1;
static char g_context[256];

int bench_start(int *argc, char ***argv, const char *prog, int *rank)
{
    int nprocs;
    MPI_Init(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    g_prog = prog;
    MPI_CK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    g_rank = *rank;
    MPI_CK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    return nprocs;
}

int bench_proceed(int parse_rc, int nprocs, int want, const char *roles)
{
    int status = BENCH_PROCEED;
    if (parse_rc > 0) {
        status = 0;
    } else if (parse_rc < 0) {
        status = BENCH_EXIT_USAGE;
    } else if (want > 0 && nprocs != want) {
        if (g_rank == 0)
            fprintf(stderr, "%s: this benchmark needs exactly %d MPI processes%s, got %d\n", g_prog, want,
                    roles, nprocs);
        status = BENCH_EXIT_USAGE;
    }
    /* The arguments are the same on every rank: all of them leave, or none. */
    if (status != BENCH_PROCEED) MPI_Finalize();
    return status;
}

int bench_check_size(long bad, long size, const char *unit)
{
    long any = 0;
    MPI_CK(MPI_Allreduce(&bad, &any, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (any == 0) return 0;
    if (g_rank == 0)
        fprintf(stderr, "%s: CHECK FAILED for %s size %ld (%ld bad %s)\n", g_prog, g_context, size, any,
                unit);
    return BENCH_EXIT_CHECK;
}

void bench_check_passed(int checking, int rc)
{
    if (g_rank != 0 || !checking || rc != 0) return;
    printf("# Check: passed\n");
    fflush(stdout);
}

MPI_Group bench_peer_group(int peer)
{
    MPI_Group world, group;
    MPI_CK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_CK(MPI_Group_incl(world, 1, &peer, &group));
    MPI_CK(MPI_Group_free(&world));
    return group;
}

int bench_rank(void)
{
    return g_rank;
}
const char *bench_prog(void)
{
    return g_prog;
}

void bench_context(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_context, sizeof g_context, fmt, ap);
    va_end(ap);
}

static _Noreturn void end_job(int code)
{
    if (g_context[0]) fprintf(stderr, "%s: rank %d: while running %s\n", g_prog, g_rank, g_context);
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code); /* not reached */
}

void bench_die(int code, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: rank %d: ", g_prog, g_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    end_job(code);
}

void bench_mpi_fail(int rc, const char *call, const char *file, int line, const char *hint)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, eclass = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "unknown MPI error code %d", rc);
    if (MPI_Error_class(rc, &eclass) != MPI_SUCCESS) eclass = -1;
    const char *base = strrchr(file, '/');
    /* `call` is the call expression as written: print the function's name. */
    fprintf(stderr, "%s: rank %d: %.*s failed (%s:%d): %s [error code %d, class %d]\n", g_prog, g_rank,
            (int)strcspn(call, "( "), call, base ? base + 1 : file, line, msg, rc, eclass);
    if (hint) fprintf(stderr, "%s: rank %d: %s\n", g_prog, g_rank, hint);
    end_job(BENCH_EXIT_FAILURE);
}

void *bench_alloc(size_t align, size_t bytes)
{
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded == 0) rounded = align;
    void *p = aligned_alloc(align, rounded);
    if (p == NULL) bench_die(BENCH_EXIT_USAGE, "out of memory (%zu bytes)", bytes);
    memset(p, 0, rounded);
    return p;
}

/* ---- options ------------------------------------------------------------ */

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    if (s == NULL || *s == '\0') return -1;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int parse_range(const char *s, long lo, long hi, long *min, long *max)
{
    const char *colon = strchr(s, ':');
    if (colon == NULL) return parse_long(s, lo, hi, max);
    char buf[64];
    const size_t n = (size_t)(colon - s);
    if (n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (n > 0 && parse_long(buf, lo, hi, min) != 0) return -1;
    if (colon[1] != '\0' && parse_long(colon + 1, lo, hi, max) != 0) return -1;
    return 0;
}

static int parse_value(const struct bench_opt *o, const char *v)
{
    switch (o->kind) {
    case BENCH_LONG: return parse_long(v, o->lo, o->hi, (long *)o->out);
    case BENCH_RANGE: return parse_range(v, o->lo, o->hi, (long *)o->out, (long *)o->out + 1);
    case BENCH_STRING: *(const char **)o->out = v; return 0;
    case BENCH_NAME:
        for (long i = 0; i < o->hi; i++)
            if (strcmp(v, o->names[i]) == 0) {
                *(int *)o->out = (int)i;
                return 0;
            }
        return -1;
    default: return -1;
    }
}

static int bad_options(void (*usage)(FILE *), const char *fmt, va_list ap)
{
    if (g_rank == 0) {
        fprintf(stderr, "%s: ", g_prog);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        usage(stderr);
    }
    return -1;
}

int bench_require(int ok, void (*usage)(FILE *), const char *fmt, ...)
{
    if (ok) return 0;
    va_list ap;
    va_start(ap, fmt);
    int rc = bad_options(usage, fmt, ap);
    va_end(ap);
    return rc;
}

int bench_parse(int argc, char **argv, const struct bench_opt *opts, size_t nopts, void (*usage)(FILE *))
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (g_rank == 0) usage(stdout);
            return 1;
        }
        const struct bench_opt *o = NULL;
        for (size_t k = 0; k < nopts && a[0] == '-' && strlen(a) == 2; k++)
            if (opts[k].letter == a[1]) o = &opts[k];
        if (o == NULL) return bench_require(0, usage, "unknown option '%s'", a);
        if (o->given) *o->given = 1;
        if (o->kind == BENCH_FLAG) {
            *(int *)o->out = 1;
            continue;
        }
        if (i + 1 >= argc) return bench_require(0, usage, "option %s needs an argument", a);
        const char *v = argv[++i];
        if (parse_value(o, v) != 0) return bench_require(0, usage, "invalid value '%s' for %s", v, a);
    }
    return 0;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

long bench_iters_for(const struct bench_iters *it, long size)
{
    if (it->iters >= 0) return it->iters;
    return size > it->large_above ? it->large_iters : it->small_iters;
}

long bench_warmup_for(const struct bench_iters *it, long size)
{
    if (it->warmup >= 0) return it->warmup;
    return size > it->large_above ? it->large_warmup : it->small_warmup;
}

void bench_print_iterations(const struct bench_iters *it)
{
    const long is = bench_iters_for(it, 0), ws = bench_warmup_for(it, 0);
    const long il = bench_iters_for(it, it->large_above + 1);
    const long wl = bench_warmup_for(it, it->large_above + 1);
    const char *sp = it->unit ? " " : "", *unit = it->unit ? it->unit : "";
    if (is == il && ws == wl)
        printf("# Iterations: %ld timed + %ld warmup%s%s per size\n", is, ws, sp, unit);
    else
        printf("# Iterations: %ld timed + %ld warmup%s%s per size, %ld + %ld above %ld bytes\n", is, ws, sp,
               unit, il, wl, it->large_above);
}

/* ---- windows ------------------------------------------------------------ */

const char *const bench_flavor_names[BENCH_FLAVORS] = {"create", "allocate", "dynamic"};
const char *const bench_flavor_mpi_names[BENCH_FLAVORS] = {"MPI_Win_create", "MPI_Win_allocate",
                                                           "MPI_Win_create_dynamic"};
const char *const bench_sync_names[BENCH_SYNCS] = {"fence",       "lock",     "flush",
                                                   "flush_local", "lock_all", "pscw"};

void bench_win_create(struct bench_win *w, enum bench_flavor flavor, size_t bytes, size_t align, int peer)
{
    static const char hint[] =
        "the window flavor is probably not supported by the osc component in "
        "use (select another one with --mca osc ..., or another -w flavor)";
    const MPI_Aint size = (MPI_Aint)bytes;
    w->flavor = flavor;
    w->owned = NULL;
    w->peer_disp = 0;
    if (flavor == BENCH_ALLOCATE) {
        MPI_CK_HINT(MPI_Win_allocate(size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->buf, &w->win), hint);
    } else {
        w->owned = bench_alloc(align, bytes);
        w->buf = w->owned;
        if (flavor == BENCH_CREATE)
            MPI_CK_HINT(MPI_Win_create(w->buf, size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win), hint);
        else
            MPI_CK_HINT(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win), hint);
    }
    MPI_CK(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
    if (flavor == BENCH_DYNAMIC) {
        MPI_Aint mine;
        MPI_CK_HINT(MPI_Win_attach(w->win, w->buf, size), hint);
        MPI_CK(MPI_Get_address(w->buf, &mine));
        MPI_CK(MPI_Sendrecv(&mine, 1, MPI_AINT, peer, 0, &w->peer_disp, 1, MPI_AINT, peer, 0, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
    }
}

void bench_win_free(struct bench_win *w)
{
    if (w->flavor == BENCH_DYNAMIC) {
        /* The peer must be done with our memory before it goes away. */
        MPI_CK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_CK(MPI_Win_detach(w->win, w->buf));
    }
    MPI_CK(MPI_Win_free(&w->win));
    free(w->owned);
    w->owned = NULL;
    w->buf = NULL;
}

void bench_print_lock_type(enum bench_sync sync, int exclusive)
{
    if (sync == BENCH_SYNC_LOCK || sync == BENCH_SYNC_FLUSH || sync == BENCH_SYNC_FLUSH_LOCAL)
        printf("# Lock type: %s\n", exclusive ? "MPI_LOCK_EXCLUSIVE" : "MPI_LOCK_SHARED");
}

void bench_print_library(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS) return;
    /* Only the first line: Open MPI's string carries its whole build description. */
    printf("# MPI library: %.*s\n", (int)strcspn(lib, "\n"), lib);
}
