// Which accumulate types this provider executes natively, built once per engine with
// fi_query_atomic. A type is native only if every reduction MPI allows on it (plus
// REPLACE as atomic write, NO_OP as atomic read, and every conditional swap allowed on
// it, compare-and-swap among them) is native in both the plain and the fetching form: then every accumulate on a
// location of that type takes the same path, so native and emulated updates can never
// interleave on one location. Immutable after build(); thread-safe to read.
#pragma once

#include <rdma/fi_domain.h>

#include <array>
#include <cstddef>

#include "osc_fabric/engine.h"

namespace oscf {

class AtomicCaps {
public:
    // emulate_all: treat every type as emulated (the provider's atomics are untrusted,
    // or active messages were chosen).
    void build(fid_ep *ep, bool emulate_all);
    bool native(oscf_type t) const { return max_count_[t] > 0; }
    // Elements one native atomic may carry (0 when not native).
    size_t max_count(oscf_type t) const { return max_count_[t]; }

private:
    std::array<size_t, OSCF_TYPE_COUNT> max_count_{};
};

}  // namespace oscf
