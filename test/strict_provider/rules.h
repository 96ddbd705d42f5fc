// Violation reporting and the checks shared by all wrappers. Thread-safety: the counter is atomic
// and report lines are written under one mutex, so any thread may report.
#pragma once

#include "profiles.h"

#include <rdma/fi_errno.h>

#include <cstddef>
#include <cstdint>

namespace strict {

// Prints "strict(<profile>): rule <rule> broken: <detail>", appends it to OSCF_STRICT_REPORT and
// counts it. Returns `err` so a check can `return violation(...)`.
int violation(const profile &p, const char *rule, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

uint64_t violation_count();
// Prints the "N violations" summary if violations happened since the last summary.
void print_summary(const profile &p);

// The provider's share of an application context under FI_CONTEXT / FI_CONTEXT2 (0: none).
size_t context_share(uint64_t mode);
void stamp_context(void *ctx, size_t share);
bool context_intact(const void *ctx, size_t share);

}  // namespace strict
