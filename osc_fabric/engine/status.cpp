#include "status.h"

#include <rdma/fi_errno.h>

#include <cstdarg>
#include <cstdio>

namespace oscf {
namespace {
oscf_log_fn g_sink = nullptr;
int g_verbosity = 0;

void vlog(int level, const char *fmt, va_list ap) {
    if (level > g_verbosity && !(g_sink && level <= 1)) return;
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    if (g_sink)
        g_sink(level, buf);
    else
        std::fprintf(stderr, "osc/fabric: %s\n", buf);
}
}  // namespace

void log(int level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

int fabric_error(const char *what, ssize_t rc) {
    log(0, "%s failed: %s (%zd)", what, fi_strerror(static_cast<int>(-rc)), rc);
    return OSCF_ERR_FABRIC;
}

int usage_error(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(1, fmt, ap);
    va_end(ap);
    return status;
}

}  // namespace oscf

extern "C" void oscf_set_log(oscf_log_fn fn, int verbosity) {
    oscf::g_sink = fn;
    oscf::g_verbosity = verbosity;
}

extern "C" const char *oscf_status_str(int status) {
    switch (status) {
    case OSCF_OK: return "success";
    case OSCF_ERR_RMA_SYNC: return "wrong synchronization of RMA calls";
    case OSCF_ERR_RMA_RANGE: return "target memory is not part of the window";
    case OSCF_ERR_RMA_CONFLICT: return "conflicting accesses to window";
    case OSCF_ERR_ARG: return "invalid argument";
    case OSCF_ERR_NO_MEM: return "out of memory";
    case OSCF_ERR_FABRIC: return "libfabric provider error";
    case OSCF_ERR_UNSUPPORTED: return "not supported";
    case OSCF_ERR_NO_PROVIDER: return "no usable libfabric provider";
    case OSCF_ERR_INTERNAL: return "internal error";
    case OSCF_ERR_RMA_FLAVOR: return "wrong window flavor";
    case OSCF_ERR_OP: return "reduction not defined for the datatype";
    case OSCF_ERR_RANK: return "rank outside the window's group";
    case OSCF_ERR_TYPE: return "datatype not allowed for the operation";
    case OSCF_ERR_INFO: return "malformed info value";
    case OSCF_ERR_RMA_ATTACH: return "memory cannot be attached or detached";
    default: return "unknown status";
    }
}
