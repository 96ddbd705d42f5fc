// Reading a run source (engine.h, oscf_run_source) a batch at a time, for the cursors
// that step through its runs: RunCursor (run_cursor.h) cutting them into messages and
// PieceCursor (layout_copy.h) walking their pieces. The source ends at its first empty
// or failed batch; its failure is kept for the caller to report.
#pragma once

#include <algorithm>
#include <cstddef>

#include "osc_fabric/engine.h"

namespace oscf {

class RunBatches {
public:
    RunBatches() = default;  // no source: nothing to fetch
    explicit RunBatches(const oscf_run_source &source) : source_(&source) {}
    // Whether a fetch may still bring runs.
    bool open() const { return source_ != nullptr; }
    // The source's failure, which also ended it; OSCF_OK otherwise.
    int status() const { return status_; }
    // The next batch into out (at most cap runs); how many came, 0 once the source ended.
    size_t fetch(oscf_run *out, size_t cap) {
        if (!source_) return 0;
        const long got = source_->next(source_->arg, out, cap);
        if (got <= 0) {
            if (got < 0) status_ = static_cast<int>(got);
            source_ = nullptr;
            return 0;
        }
        return std::min(static_cast<size_t>(got), cap);
    }

private:
    const oscf_run_source *source_ = nullptr;
    int status_ = OSCF_OK;
};

}  // namespace oscf
