/*
 * bench.h - the plumbing every benchmark in perf/ shares, so that each program
 * holds only what it measures: how a failure is reported (and the job ended),
 * aligned allocation, options read from a table, the window flavors and
 * synchronization modes the MPI benchmarks run under, and the common lines of
 * the OSU-style header.
 *
 * Plain MPI-3 + C11. Messages name the program and the rank (bench_start).
 */
#ifndef OSC_FABRIC_PERF_BENCH_H
#define OSC_FABRIC_PERF_BENCH_H

#include <mpi.h>

#include <stddef.h>
#include <stdio.h>

/* Exit status of every program: 0 success. */
enum { BENCH_EXIT_USAGE = 1, BENCH_EXIT_FAILURE = 2, BENCH_EXIT_CHECK = 3 };

/* MPI_Init, with errors returned instead of fatal (so they are reported with the
 * context); prog and the rank (also in *rank) then name every message. Returns the
 * number of processes. */
int bench_start(int *argc, char ***argv, const char *prog, int *rank);
/* What bench_proceed returns when the program is to run. */
enum { BENCH_PROCEED = -1 };
/* The end of every main()'s start: parse_rc as bench_parse returns it, then the job's
 * size, which must be `want` (0: any; else rank 0 says so, roles telling who is who,
 * or ""). Returns BENCH_PROCEED to run; otherwise MPI is finalized and the result is
 * the exit status (0 after help, BENCH_EXIT_USAGE). */
int bench_proceed(int parse_rc, int nprocs, int want, const char *roles);
int bench_rank(void);
const char *bench_prog(void);

/* What the program is running (printf-like), repeated with a failure. */
void bench_context(const char *fmt, ...);

/* Check mode (-c), collective: bad is what this rank found wrong at one size (unit
 * names what was counted). Returns 0 when no rank found anything; else rank 0 reports
 * "CHECK FAILED" with the context and BENCH_EXIT_CHECK is returned. */
int bench_check_size(long bad, long size, const char *unit);
/* After the last size: "# Check: passed" on rank 0 when checking found nothing. */
void bench_check_passed(int checking, int rc);
/* The group of one peer, for PSCW. */
MPI_Group bench_peer_group(int peer);

/* Prints "PROG: rank R: <message>" and the context, then ends the job. */
_Noreturn void bench_die(int code, const char *fmt, ...);

/* A failed MPI call: its name, MPI_Error_string, the class, the hint. */
_Noreturn void bench_mpi_fail(int rc, const char *call, const char *file, int line, const char *hint);

#define MPI_CK_HINT(call, hint)                                                         \
    do {                                                                                \
        int rc_ = (call);                                                               \
        if (rc_ != MPI_SUCCESS) bench_mpi_fail(rc_, #call, __FILE__, __LINE__, (hint)); \
    } while (0)
#define MPI_CK(call) MPI_CK_HINT(call, NULL)

/* Zeroed memory aligned to `align` (a power of two), rounded up to it; ends the
 * job when there is none. Release with free(). */
void *bench_alloc(size_t align, size_t bytes);

/* ---- options ------------------------------------------------------------ */

enum bench_opt_kind {
    BENCH_FLAG,   /* no value: *(int *)out = 1 */
    BENCH_LONG,   /* *(long *)out, in [lo, hi] */
    BENCH_NAME,   /* *(int *)out = index of the value among names[0 .. hi) */
    BENCH_RANGE,  /* "[MIN:]MAX": ((long *)out)[0] and [1], each in [lo, hi] */
    BENCH_STRING, /* *(const char **)out */
};

struct bench_opt {
    char letter; /* the option is -letter */
    enum bench_opt_kind kind;
    void *out;
    long lo, hi;
    const char *const *names; /* BENCH_NAME */
    int *given;               /* if not NULL: set to 1 when the option appears */
};

/* Reads argv by the table; -h and --help print usage to stdout. Returns 0 to run,
 * 1 after help, -1 for bad options (said on rank 0, followed by the usage). */
int bench_parse(int argc, char **argv, const struct bench_opt *opts, size_t nopts, void (*usage)(FILE *));

/* For checks across options: unless `ok`, rank 0 prints the message and the usage.
 * Returns 0 when ok, -1 otherwise (as bench_parse does). */
int bench_require(int ok, void (*usage)(FILE *), const char *fmt, ...);

/* How many times each size runs: -i and -x when given (< 0: not given), otherwise
 * the defaults for sizes up to `large_above` bytes and for larger ones. */
struct bench_iters {
    long iters, warmup;
    long small_iters, small_warmup, large_iters, large_warmup, large_above;
    const char *unit; /* what one iteration is, for the header ("windows"), or NULL */
};
long bench_iters_for(const struct bench_iters *it, long size);
long bench_warmup_for(const struct bench_iters *it, long size);

/* The median of n values (n > 0); sorts them in place. */
double bench_median(double *v, long n);
/* The header's "# Iterations:" line. */
void bench_print_iterations(const struct bench_iters *it);

/* ---- windows and synchronization of the MPI benchmarks ----------------- */

enum bench_flavor { BENCH_CREATE, BENCH_ALLOCATE, BENCH_DYNAMIC, BENCH_FLAVORS };
extern const char *const bench_flavor_names[BENCH_FLAVORS];     /* -w values */
extern const char *const bench_flavor_mpi_names[BENCH_FLAVORS]; /* for the header */

enum bench_sync {
    BENCH_SYNC_FENCE,
    BENCH_SYNC_LOCK,
    BENCH_SYNC_FLUSH,
    BENCH_SYNC_FLUSH_LOCAL,
    BENCH_SYNC_LOCK_ALL,
    BENCH_SYNC_PSCW,
    BENCH_SYNCS
};
extern const char *const bench_sync_names[BENCH_SYNCS]; /* -s values */

struct bench_win {
    MPI_Win win;
    unsigned char *buf; /* this rank's window memory */
    void *owned;        /* ours to free (create, dynamic) */
    MPI_Aint peer_disp; /* the peer's memory as a displacement (dynamic: address) */
    enum bench_flavor flavor;
};

/* Collective over MPI_COMM_WORLD: a window of `bytes` with disp_unit 1 and
 * MPI_ERRORS_RETURN; dynamic windows attach their memory and exchange its address
 * with `peer`. A flavor the osc component refuses ends the job with a hint. */
void bench_win_create(struct bench_win *w, enum bench_flavor flavor, size_t bytes, size_t align, int peer);
/* Collective; on dynamic windows waits until the peer is done with our memory. */
void bench_win_free(struct bench_win *w);

/* What osc_latency and osc_bw are both run with: -w, -s, -m, -i, -x, -c and -e. */
struct bench_rma_opts {
    enum bench_flavor flavor;
    enum bench_sync sync;
    long min_size, max_size;
    struct bench_iters it; /* OSU-like defaults depending on size */
    int check;             /* verify the data after every size */
    int exclusive;         /* MPI_LOCK_EXCLUSIVE where one target is locked */
};

/* The header's "# Lock type:" line, for the modes that lock one target. */
void bench_print_lock_type(enum bench_sync sync, int exclusive);
/* The header's "# MPI library:" line. */
void bench_print_library(void);

#endif /* OSC_FABRIC_PERF_BENCH_H */
