// libfabric is loaded when the first window opens the engine, not when Open MPI opens
// the component. Open MPI opens every installed osc component in every job, RMA or
// not, and loading libfabric runs the constructors of the provider libraries it links
// (Debian's links PSM and PSM2, which time the CPU), a cost every MPI_Init paid once
// the component was installed (perf/README.md, "Measurements behind design choices").
//
// So the engine is not linked to libfabric: this file defines the few functions it
// exports that the engine calls (everything else in its API is inline, through the
// objects these return) and forwards them to the library, opened on the first call, at
// the symbol versions a link would have chosen (libfabric_abi.py). A function missing
// here is an undefined symbol when the component links (--no-undefined).
#include <dlfcn.h>

#include <cstdio>
#include <mutex>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "libfabric_abi.h"
#include "libfabric_loader.h"

namespace {

struct Libfabric {
    decltype(&::fi_getinfo) getinfo = nullptr;
    decltype(&::fi_freeinfo) freeinfo = nullptr;
    decltype(&::fi_dupinfo) dupinfo = nullptr;
    decltype(&::fi_fabric) fabric = nullptr;
    decltype(&::fi_strerror) strerror = nullptr;
    char why[256] = "";  // empty once everything resolved
};

template <class F>
bool resolve(void *lib, const char *name, const char *version, F *out, char *why, size_t why_len) {
    void *sym = version[0] ? dlvsym(lib, name, version) : dlsym(lib, name);
    if (!sym) {
        std::snprintf(why, why_len, "%s has no %s%s%s", OSCF_LIBFABRIC_SONAME, name, version[0] ? "@" : "",
                      version);
        return false;
    }
    *out = reinterpret_cast<F>(sym);
    return true;
}

const Libfabric &libfabric() {
    static Libfabric lf;
    static std::once_flag once;
    std::call_once(once, [] {
        // Local: the symbols are for us; providers find libfabric's own by its handle.
        void *lib = dlopen(OSCF_LIBFABRIC_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *err = dlerror();
            std::snprintf(lf.why, sizeof lf.why, "cannot load %s: %s", OSCF_LIBFABRIC_SONAME,
                          err ? err : "unknown error");
            return;
        }
        // Never closed: providers keep threads and handlers of their own in it.
        const size_t n = sizeof lf.why;
        if (resolve(lib, "fi_getinfo", OSCF_VERSION_fi_getinfo, &lf.getinfo, lf.why, n) &&
            resolve(lib, "fi_freeinfo", OSCF_VERSION_fi_freeinfo, &lf.freeinfo, lf.why, n) &&
            resolve(lib, "fi_dupinfo", OSCF_VERSION_fi_dupinfo, &lf.dupinfo, lf.why, n) &&
            resolve(lib, "fi_fabric", OSCF_VERSION_fi_fabric, &lf.fabric, lf.why, n) &&
            resolve(lib, "fi_strerror", OSCF_VERSION_fi_strerror, &lf.strerror, lf.why, n))
            return;
        lf.getinfo = nullptr;  // the engine stops at its first call
    });
    return lf;
}

}  // namespace

const char *oscf::libfabric_load_error() {
    const Libfabric &lf = libfabric();
    return lf.why[0] ? lf.why : nullptr;
}

extern "C" {

// Fabric::open asks libfabric_load_error first; these fail as a provider would if it
// is called anyway.
int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
               const struct fi_info *hints, struct fi_info **info) {
    const Libfabric &lf = libfabric();
    if (!lf.getinfo) return -FI_ENOSYS;
    return lf.getinfo(version, node, service, flags, hints, info);
}

void fi_freeinfo(struct fi_info *info) {
    if (info) libfabric().freeinfo(info);  // only what the library gave us
}

struct fi_info *fi_dupinfo(const struct fi_info *info) {
    const Libfabric &lf = libfabric();
    return lf.dupinfo ? lf.dupinfo(info) : nullptr;
}

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context) {
    const Libfabric &lf = libfabric();
    return lf.fabric ? lf.fabric(attr, fabric, context) : -FI_ENOSYS;
}

const char *fi_strerror(int errnum) {
    const Libfabric &lf = libfabric();
    return lf.strerror ? lf.strerror(errnum) : lf.why;
}

}  // extern "C"
