/*
 * Pass/fail bookkeeping shared by the self-checking osc/fabric MPI tests.
 *
 * Every check is counted on the rank that evaluates it.  A failed check
 * prints one line naming the rank, the source line and the details.  At
 * the end check_finish() sums the counts over MPI_COMM_WORLD, rank 0
 * prints exactly one "N passed, N failed" line, and every rank returns
 * the same exit status (0 only when no rank failed anything).
 *
 * Only <mpi.h> and the C standard library are used, so the programs build
 * against any MPI and run under any osc component.
 */
#ifndef OSC_FABRIC_TEST_CHECK_H
#define OSC_FABRIC_TEST_CHECK_H

#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

/* Past this many failure lines per rank we only count, so a broken
 * component cannot bury the summary under megabytes of output. */
#define CHECK_MAX_REPORTS 64

static long check_npassed;
static volatile unsigned long check_progress_count; /* for the watchdog, below */
static long check_nfailed;

static inline int check_world_rank(void)
{
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* Counts one check; on failure prints "FAIL rank R file:line: details". */
static inline bool check_vrecord(bool ok, const char *file, int line, const char *fmt, va_list ap)
{
    check_progress_count++;
    if (ok) {
        check_npassed++;
        return true;
    }
    if (check_nfailed < CHECK_MAX_REPORTS) {
        char msg[512];
        vsnprintf(msg, sizeof msg, fmt, ap);
        printf("FAIL rank %d %s:%d: %s\n", check_world_rank(), file, line, msg);
    } else if (check_nfailed == CHECK_MAX_REPORTS) {
        printf("FAIL rank %d: further failure lines suppressed\n", check_world_rank());
    }
    fflush(stdout);
    check_nfailed++;
    return false;
}

static inline bool check_record(bool ok, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ok = check_vrecord(ok, file, line, fmt, ap);
    va_end(ap);
    return ok;
}

/* CHECK(cond, "printf format", args...): returns cond so callers can skip
 * follow-up checks that would only repeat the same failure. */
#define CHECK(cond, ...) check_record((cond), __FILE__, __LINE__, __VA_ARGS__)

/* Name of an MPI error class, for messages about the RMA error classes. */
static inline const char *check_class_name(int cls)
{
    switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC";
    case MPI_ERR_RMA_CONFLICT: return "MPI_ERR_RMA_CONFLICT";
    case MPI_ERR_RMA_RANGE: return "MPI_ERR_RMA_RANGE";
    case MPI_ERR_RMA_ATTACH: return "MPI_ERR_RMA_ATTACH";
    case MPI_ERR_RMA_SHARED: return "MPI_ERR_RMA_SHARED";
    case MPI_ERR_WIN: return "MPI_ERR_WIN";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    case MPI_ERR_DISP: return "MPI_ERR_DISP";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN";
    default: return "(other class)";
    }
}

/* Error class of a return code (MPI_SUCCESS stays MPI_SUCCESS). */
static inline int check_error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS && MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
    return cls;
}

static inline bool check_rc_at(int rc, const char *what, const char *file, int line)
{
    if (rc == MPI_SUCCESS) return check_record(true, file, line, "%s", what);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    int cls = check_error_class(rc);
    return check_record(false, file, line, "%s returned %d (%s, class %s)", what, rc, msg,
                        check_class_name(cls));
}

/* CHECK_MPI(MPI_Xxx(...)): the call must return MPI_SUCCESS.  Only
 * meaningful where MPI_ERRORS_RETURN is set on the object involved. */
#define CHECK_MPI(call) \
    (check_entering(#call, __FILE__, __LINE__), check_rc_at((call), #call, __FILE__, __LINE__))

/*
 * Watchdog.  A test that hangs would otherwise only be killed by meson's
 * timeout, which says nothing about where.  check_watchdog(S) arms it: every
 * S seconds it looks whether the rank made progress (a check counted, an MPI
 * call entered through CHECK_MPI, a check_where step).  A rank that made none
 * prints "WATCHDOG rank R: no progress for S s in <call> at <file:line>, step
 * <step>" and exits with status 3, so every stuck rank says where it waits
 * and mpirun ends the job.  The line is formatted before it is needed: the
 * signal handler only writes it.
 */
static unsigned check_watchdog_seconds;
static unsigned long check_watchdog_seen;
static const char *volatile check_call_text = "(none yet)";
static const char *volatile check_call_file = "";
static volatile int check_call_line;
static char check_step[160] = "start";

static inline void check_write_str(const char *s)
{
    ssize_t unused = write(2, s, strlen(s));
    (void)unused;
}

static inline void check_write_int(long v)
{
    char buf[24];
    int i = (int)sizeof buf;
    bool neg = v < 0;
    unsigned long u = neg ? 0ul - (unsigned long)v : (unsigned long)v;
    do buf[--i] = (char)('0' + u % 10);
    while ((u /= 10) && i > 1);
    if (neg) buf[--i] = '-';
    ssize_t unused = write(2, buf + i, sizeof buf - (size_t)i);
    (void)unused;
}

static int check_watchdog_rank = -1;

static inline void check_watchdog_fired(int sig)
{
    (void)sig;
    if (check_progress_count != check_watchdog_seen) {
        check_watchdog_seen = check_progress_count;
        alarm(check_watchdog_seconds);
        return;
    }
    check_write_str("WATCHDOG rank ");
    check_write_int(check_watchdog_rank);
    check_write_str(": no progress for ");
    check_write_int((long)check_watchdog_seconds);
    check_write_str(" s in ");
    check_write_str(check_call_text);
    check_write_str(" at ");
    check_write_str(check_call_file);
    check_write_str(":");
    check_write_int(check_call_line);
    check_write_str(", step ");
    check_write_str(check_step);
    check_write_str("\n");
    _exit(3);
}

/* Names the step this rank is entering (printed if it stalls there). */
static inline void check_where(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(check_step, sizeof check_step, fmt, ap); /* torn at worst, if it fires now */
    va_end(ap);
    check_progress_count++;
}

/* CHECK_MPI records the call it is about to make. */
static inline void check_entering(const char *call, const char *file, int line)
{
    check_call_text = call;
    check_call_file = file;
    check_call_line = line;
    check_progress_count++;
}

static inline void check_watchdog(unsigned seconds)
{
    check_watchdog_rank = check_world_rank();
    check_watchdog_seconds = seconds;
    signal(SIGALRM, check_watchdog_fired);
    alarm(seconds);
}

/* How most tests start: MPI_Init, the watchdog, this rank and the world's size. */
static inline void check_init(int *argc, char ***argv, unsigned watchdog_seconds, int *rank, int *size)
{
    MPI_Init(argc, argv);
    check_watchdog(watchdog_seconds);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

/* Sums the counts over MPI_COMM_WORLD, prints the summary on rank 0 and
 * finalizes MPI.  Returns the exit status for main(). */
static inline int check_finish(void)
{
    long local[2] = {check_npassed, check_nfailed};
    long total[2] = {0, 0};
    check_where("check_finish");
    MPI_Reduce(local, total, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (check_world_rank() == 0) {
        printf("%ld passed, %ld failed\n", total[0], total[1]);
        fflush(stdout);
    }
    /* Everyone exits with the same status, whichever rank failed. */
    MPI_Bcast(&total[1], 1, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    alarm(0);
    return total[1] == 0 ? 0 : 1;
}

/*
 * Deterministic byte patterns.  pattern_seed() mixes the identifying
 * numbers (origin, target, size, round, ...) so that buffers written for
 * different purposes differ; in pattern_byte() neighbouring bytes of a
 * 256-byte page always differ and pages differ from each other, so
 * shifted, truncated, stale or misdirected data is detected.
 */
static inline uint32_t pattern_seed(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint32_t h = 0x9e3779b9u;
    const uint32_t v[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++) {
        h ^= v[i] + 0x7f4a7c15u + (h << 6) + (h >> 2);
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
    }
    return h;
}

static inline unsigned char pattern_byte(uint32_t seed, size_t i)
{
    uint32_t step = (seed >> 8) | 1u;  /* odd: neighbours differ */
    uint32_t page = (seed >> 16) | 1u; /* breaks period 256 */
    return (unsigned char)(seed + (uint32_t)i * step + (uint32_t)(i >> 8) * page);
}

/* The loops below compute pattern_byte() incrementally, 256 bytes per
 * page, so they stay cheap even in unoptimized (-O0) test builds. */
static inline void pattern_fill(unsigned char *buf, size_t len, uint32_t seed)
{
    uint32_t step = (seed >> 8) | 1u;
    for (size_t start = 0; start < len; start += 256) {
        uint32_t v = (uint32_t)pattern_byte(seed, start);
        size_t end = len - start < 256 ? len : start + 256;
        for (size_t i = start; i < end; i++, v += step) buf[i] = (unsigned char)v;
    }
}

/* Index of the first byte differing from the pattern, or len if none. */
static inline size_t pattern_mismatch(const unsigned char *buf, size_t len, uint32_t seed)
{
    uint32_t step = (seed >> 8) | 1u;
    for (size_t start = 0; start < len; start += 256) {
        uint32_t v = (uint32_t)pattern_byte(seed, start);
        size_t end = len - start < 256 ? len : start + 256;
        for (size_t i = start; i < end; i++, v += step)
            if (buf[i] != (unsigned char)v) return i;
    }
    return len;
}

/* Index of the first byte differing from `value`, or len if none. */
static inline size_t fill_mismatch(const unsigned char *buf, size_t len, unsigned char value)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != value) return i;
    return len;
}

#endif /* OSC_FABRIC_TEST_CHECK_H */
