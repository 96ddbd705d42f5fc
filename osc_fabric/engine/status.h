// Status codes and logging inside the engine. Statuses are the OSCF_* values of
// engine.h (0 = ok, < 0 = error); libfabric's negative errno values never leave the
// engine: fabric_error() logs their fi_strerror text and turns them into OSCF_ERR_FABRIC.
// Thread-safe: the log sink is set once before any engine is opened.
#pragma once

#include <sys/types.h>

#include "osc_fabric/engine.h"

namespace oscf {

// printf-style; level 0 is always shown, higher levels only at that verbosity.
void log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Logs "what: fi_strerror(-rc)" at level 0 and returns OSCF_ERR_FABRIC.
int fabric_error(const char *what, ssize_t rc);

// Logs a user error (verbose level 1) and returns status unchanged, so call sites read
// `return usage_error(OSCF_ERR_RMA_SYNC, "put to %d outside an epoch", t);`.
int usage_error(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace oscf
