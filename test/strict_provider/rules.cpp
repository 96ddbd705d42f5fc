#include "rules.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace strict {
namespace {

std::atomic<uint64_t> g_count{0};
std::atomic<uint64_t> g_summarised{0};
std::mutex g_print_lock;
const profile *g_last_profile = nullptr;

void emit(const std::string &line) {
    std::fputs(line.c_str(), stderr);
    if (const char *path = std::getenv("OSCF_STRICT_REPORT")) {
        if (FILE *f = std::fopen(path, "a")) {
            std::fputs(line.c_str(), f);
            std::fclose(f);
        }
    }
}

// Printed at process exit when a fabric was never closed, so a runner still sees the total.
struct exit_summary {
    ~exit_summary() {
        if (g_last_profile) print_summary(*g_last_profile);
    }
} g_exit_summary;

}  // namespace

int violation(const profile &p, const char *rule, int err, const char *fmt, ...) {
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    std::lock_guard<std::mutex> lock(g_print_lock);
    g_last_profile = &p;
    g_count.fetch_add(1);
    emit(std::string("strict(") + p.name + "): rule " + rule + " broken: " + detail + "\n");
    return err;
}

uint64_t violation_count() {
    return g_count.load();
}

void print_summary(const profile &p) {
    std::lock_guard<std::mutex> lock(g_print_lock);
    uint64_t n = g_count.load();
    if (n == g_summarised.load()) return;
    g_summarised.store(n);
    emit(std::string("strict(") + p.name + "): " + std::to_string(n) + " violations\n");
}

size_t context_share(uint64_t mode) {
    if (mode & FI_CONTEXT2) return sizeof(struct fi_context2);
    if (mode & FI_CONTEXT) return sizeof(struct fi_context);
    return 0;
}

// A pattern no application writes by accident: alternating bytes that are not small integers,
// not pointers into the lower half of the address space and not zero.
static unsigned char pattern_byte(size_t i) {
    return static_cast<unsigned char>(0xA5 ^ (i * 0x3B));
}

void stamp_context(void *ctx, size_t share) {
    auto *b = static_cast<unsigned char *>(ctx);
    for (size_t i = 0; i < share; ++i) b[i] = pattern_byte(i);
}

bool context_intact(const void *ctx, size_t share) {
    auto *b = static_cast<const unsigned char *>(ctx);
    for (size_t i = 0; i < share; ++i)
        if (b[i] != pattern_byte(i)) return false;
    return true;
}

}  // namespace strict

extern "C" __attribute__((visibility("default"))) uint64_t strict_violations() {
    return strict::violation_count();
}
