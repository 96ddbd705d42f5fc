// libFuzzer target for the engine's parsers of info values (osc_fabric/engine/info.cpp):
// oscf_parse_accumulate_ordering and oscf_parse_accumulate_ops get arbitrary C strings
// (the input up to its first NUL). Besides crashes and sanitizer reports, any broken
// property aborts:
//   - the status is OSCF_OK or OSCF_ERR_INFO, never anything else;
//   - accumulate_ordering agrees with an independent model of the documented grammar
//     ("none" or a comma-separated list of rar/raw/war/waw, blanks around items), and
//     on success sets only the four ordering bits;
//   - surrounding the value with blanks changes neither status nor bits;
//   - the canonical spelling of the bits (ours, and oscf_format_accumulate_ordering's)
//     parses back to the same bits;
//   - accumulate_ops accepts exactly "same_op" and "same_op_no_op", blanks around
//     allowed.
// Built with clang++ -fsanitize=fuzzer,address,undefined by test/fuzz/meson.build.
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "osc_fabric/engine.h"

// info.cpp logs malformed values through oscf::log (status.cpp, which would pull in
// libfabric): format into a buffer so the sanitizers still see the arguments used.
namespace oscf {
void log(int, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
}
}  // namespace oscf

namespace {

constexpr unsigned kAllBits = OSCF_ORDER_RAR | OSCF_ORDER_RAW | OSCF_ORDER_WAR | OSCF_ORDER_WAW;
constexpr unsigned kUntouched = 0xdead0000u;  // an out-parameter nobody wrote

[[noreturn]] void fail(const char *what, const std::string &value) {
    std::fprintf(stderr, "fuzz_info: property failed: %s (value \"%s\", %zu bytes)\n", what, value.c_str(),
                 value.size());
    std::abort();
}

bool blank(char c) {
    return c == ' ' || c == '\t';
}

std::string trim(const std::string &s) {
    size_t a = 0, b = s.size();
    while (a < b && blank(s[a])) ++a;
    while (b > a && blank(s[b - 1])) --b;
    return s.substr(a, b - a);
}

// The grammar of engine.h, written independently of info.cpp: returns false when
// malformed.
bool model_ordering(const std::string &value, unsigned *bits) {
    const std::string v = trim(value);
    if (v == "none") {
        *bits = 0;
        return true;
    }
    unsigned out = 0;
    size_t start = 0;
    for (;;) {
        const size_t comma = v.find(',', start);
        const std::string item =
            trim(v.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (item == "rar")
            out |= OSCF_ORDER_RAR;
        else if (item == "raw")
            out |= OSCF_ORDER_RAW;
        else if (item == "war")
            out |= OSCF_ORDER_WAR;
        else if (item == "waw")
            out |= OSCF_ORDER_WAW;
        else
            return false;
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    *bits = out;
    return true;
}

std::string render(unsigned bits) {
    static const char *const names[] = {"rar", "raw", "war", "waw"};
    static const unsigned flags[] = {OSCF_ORDER_RAR, OSCF_ORDER_RAW, OSCF_ORDER_WAR, OSCF_ORDER_WAW};
    std::string s;
    for (int i = 0; i < 4; ++i)
        if (bits & flags[i]) s += (s.empty() ? "" : ",") + std::string(names[i]);
    return s.empty() ? "none" : s;
}

int parse_ordering(const std::string &value, unsigned *bits) {
    *bits = kUntouched;
    const int rc = oscf_parse_accumulate_ordering(value.c_str(), bits);
    if (rc != OSCF_OK && rc != OSCF_ERR_INFO) fail("accumulate_ordering status", value);
    if (rc == OSCF_OK && (*bits & ~kAllBits)) fail("accumulate_ordering bits outside the four", value);
    return rc;
}

void check_ordering(const std::string &value) {
    unsigned bits;
    const int rc = parse_ordering(value, &bits);

    unsigned want = 0;
    const bool ok = model_ordering(value, &want);
    if (ok != (rc == OSCF_OK))
        fail(ok ? "valid accumulate_ordering refused" : "malformed accumulate_ordering accepted", value);
    if (ok && bits != want) fail("accumulate_ordering bits differ from the grammar", value);

    for (const char *pad : {" ", "\t", " \t "}) {
        unsigned padded_bits;
        const int padded_rc = parse_ordering(pad + value + pad, &padded_bits);
        if (padded_rc != rc || (rc == OSCF_OK && padded_bits != bits))
            fail("accumulate_ordering changes under surrounding blanks", value);
    }
    if (rc != OSCF_OK) return;

    unsigned again;
    if (parse_ordering(render(bits), &again) != OSCF_OK || again != bits)
        fail("canonical accumulate_ordering does not parse back", value);
    char buf[32];
    oscf_format_accumulate_ordering(bits, buf, sizeof buf);
    if (render(bits) != buf) fail("oscf_format_accumulate_ordering is not canonical", value);
    if (parse_ordering(buf, &again) != OSCF_OK || again != bits)
        fail("oscf_format_accumulate_ordering output does not parse back", value);
}

void check_ops(const std::string &value) {
    unsigned same_op_only = kUntouched;
    const int rc = oscf_parse_accumulate_ops(value.c_str(), &same_op_only);
    const std::string v = trim(value);
    const bool ok = v == "same_op" || v == "same_op_no_op";
    if (rc != OSCF_OK && rc != OSCF_ERR_INFO) fail("accumulate_ops status", value);
    if (ok != (rc == OSCF_OK))
        fail(ok ? "valid accumulate_ops refused" : "malformed accumulate_ops accepted", value);
    if (ok && same_op_only != (v == "same_op" ? 1u : 0u)) fail("accumulate_ops result", value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // The parsers take C strings: the value is the input up to its first NUL.
    const std::string value(reinterpret_cast<const char *>(data), size);
    const std::string cstr = value.c_str();
    check_ordering(cstr);
    check_ops(cstr);
    unsigned out;
    if (oscf_parse_accumulate_ordering(nullptr, &out) != OSCF_ERR_ARG ||
        oscf_parse_accumulate_ordering(cstr.c_str(), nullptr) != OSCF_ERR_ARG ||
        oscf_parse_accumulate_ops(nullptr, &out) != OSCF_ERR_ARG ||
        oscf_parse_accumulate_ops(cstr.c_str(), nullptr) != OSCF_ERR_ARG)
        fail("NULL argument not refused with OSCF_ERR_ARG", cstr);
    return 0;
}
