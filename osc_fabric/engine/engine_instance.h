// The per-process engine behind the opaque oscf_engine handle: one Fabric, its Progress
// (which owns the engine lock), and optionally a progress thread. Owned by the MPI
// layer (one per process) or by a test; every window holds a reference and must be
// destroyed before the engine.
#pragma once

#include <memory>

#include "fabric.h"
#include "progress.h"

struct oscf_engine {
    std::unique_ptr<oscf::Fabric> fabric;
    std::unique_ptr<oscf::Progress> progress;
    std::unique_ptr<oscf::ProgressThread> progress_thread;  // declared last: stops first
    int live_windows = 0;  // guarded by the engine lock
};
