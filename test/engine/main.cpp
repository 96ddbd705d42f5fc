#define CATCH_CONFIG_MAIN
#include "catch_compat.h"

#include <cstdio>
#include <cstdlib>

#include "osc_fabric/engine.h"

// OSCF_TEST_LOG=N shows the engine's log up to verbosity N on stderr, for finding out why
// a case failed (tests that read the log set their own sink and restore none after).
namespace {
void to_stderr(int, const char *msg) {
    std::fprintf(stderr, "oscf: %s\n", msg);
}
const bool log_set = [] {
    if (const char *v = std::getenv("OSCF_TEST_LOG")) oscf_set_log(to_stderr, std::atoi(v));
    return true;
}();
}  // namespace
