// Parsers of info values the engine honours. Kept free of MPI so they can be unit
// tested and fuzzed.
#include <cstring>
#include <string>

#include "status.h"

namespace {

struct Name {
    const char *name;
    unsigned bit;
};
const Name kOrderings[] = {
    {"rar", OSCF_ORDER_RAR}, {"raw", OSCF_ORDER_RAW}, {"war", OSCF_ORDER_WAR}, {"waw", OSCF_ORDER_WAW}};

bool blank(char c) {
    return c == ' ' || c == '\t';
}

// Values may carry blanks around them and around list items, as users write them.
std::string trimmed(const std::string &s) {
    size_t a = 0, b = s.size();
    while (a < b && blank(s[a])) ++a;
    while (b > a && blank(s[b - 1])) --b;
    return s.substr(a, b - a);
}

}  // namespace

extern "C" int oscf_parse_accumulate_ordering(const char *value, unsigned *bits) {
    if (!value || !bits) return OSCF_ERR_ARG;
    const std::string v = trimmed(value);
    if (v == "none") {
        *bits = 0;
        return OSCF_OK;
    }
    unsigned out = 0;
    size_t pos = 0;
    for (;;) {
        size_t comma = v.find(',', pos);
        const std::string item =
            trimmed(v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        unsigned bit = 0;
        for (const Name &n : kOrderings)
            if (item == n.name) bit = n.bit;
        if (!bit) {
            oscf::log(1, "accumulate_ordering: '%s' is not one of rar, raw, war, waw or none", value);
            return OSCF_ERR_INFO;
        }
        out |= bit;
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    *bits = out;
    return OSCF_OK;
}

extern "C" int oscf_parse_accumulate_ops(const char *value, unsigned *same_op_only) {
    if (!value || !same_op_only) return OSCF_ERR_ARG;
    const std::string v = trimmed(value);
    if (v == "same_op_no_op" || v == "same_op") {
        // Our paths are chosen per type, not per op, so either promise is kept as given.
        *same_op_only = v == "same_op";
        return OSCF_OK;
    }
    oscf::log(1, "accumulate_ops: '%s' is not same_op or same_op_no_op", value);
    return OSCF_ERR_INFO;
}

extern "C" int oscf_parse_accumulate_granularity(const char *value, unsigned *bytes) {
    if (!value || !bytes) return OSCF_ERR_ARG;
    const std::string v = trimmed(value);
    // A count of bytes: decimal digits only, and small enough for an unsigned.
    unsigned long long n = 0;
    bool ok = !v.empty() && v.size() <= 10;
    for (char ch : v) {
        if (ch < '0' || ch > '9') ok = false;
        n = ok ? n * 10 + static_cast<unsigned>(ch - '0') : 0;
    }
    if (!ok || n > 0xffffffffull) {
        oscf::log(1, "mpi_accumulate_granularity: '%s' is not a count of bytes", value);
        return OSCF_ERR_INFO;
    }
    *bytes = static_cast<unsigned>(n);
    return OSCF_OK;
}

extern "C" void oscf_format_accumulate_ordering(unsigned bits, char *buf, size_t len) {
    if (!buf || len == 0) return;
    std::string s;
    for (const Name &n : kOrderings)
        if (bits & n.bit) s += (s.empty() ? "" : ",") + std::string(n.name);
    if (s.empty()) s = "none";
    std::strncpy(buf, s.c_str(), len - 1);
    buf[len - 1] = '\0';
}
