// A run source (oscf_run_source) over a list, as the MPI layer's datatype walk hands
// out runs: at most `batch` a call (the walk's batches end anywhere), failing with
// `fail` once `fail_after` runs are out when fail is set.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "osc_fabric/engine.h"

struct ListSource {
    std::vector<oscf_run> runs;
    size_t batch = 1000, at = 0;
    int fail = OSCF_OK;
    size_t fail_after = 0;

    static long next(void *arg, oscf_run *out, size_t max) {
        auto *s = static_cast<ListSource *>(arg);
        if (s->fail != OSCF_OK && s->at >= s->fail_after) return s->fail;
        const size_t n = std::min({max, s->batch, s->runs.size() - s->at});
        std::copy_n(s->runs.begin() + static_cast<long>(s->at), n, out);
        s->at += n;
        return static_cast<long>(n);
    }
    // lo and hi: the layout's first byte and the byte past its last (oscf_run_source).
    oscf_run_source source(int64_t lo = 0, int64_t hi = 0) {
        size_t bytes = 0;
        for (const oscf_run &r : runs) bytes += r.len * r.count;
        return oscf_run_source{next, this, lo, hi, bytes};
    }
};
