/*
 * fi_check.h - how the raw libfabric benchmarks (fi_baseline, fi_packed_put) report a
 * failed libfabric call: its name, the file and line, fi_strerror, then the job ends
 * (bench_die, bench.h).
 */
#ifndef OSC_FABRIC_PERF_FI_CHECK_H
#define OSC_FABRIC_PERF_FI_CHECK_H

#include <rdma/fi_errno.h>

#include <string.h>

#include "bench.h"

static inline _Noreturn void fi_check_fail(long rc, const char *call, const char *file, int line)
{
    bench_die(BENCH_EXIT_FAILURE, "%.*s failed (%s:%d): %s (%ld)", (int)strcspn(call, "( "), call, file, line,
              fi_strerror((int)-rc), rc);
}

/* For calls returning 0 or a negative libfabric error. */
#define FI_CK(call)                                                 \
    do {                                                            \
        long rc_ = (long)(call);                                    \
        if (rc_ < 0) fi_check_fail(rc_, #call, __FILE__, __LINE__); \
    } while (0)

#endif
