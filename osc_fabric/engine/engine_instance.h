// The per-process engine behind the opaque oscf_engine handle: one Fabric, its Progress
// (which owns the engine lock), the active-message layer, the accumulate capability
// table and optionally a progress thread. Owned by the MPI layer (one per process) or by
// a test; every window holds a reference and must be destroyed before the engine.
#pragma once

#include <memory>
#include <vector>

#include "am.h"
#include "atomic_caps.h"
#include "fabric.h"
#include "progress.h"
#include "staging_pool.h"

struct oscf_engine {
    std::unique_ptr<oscf::Fabric> fabric;
    std::unique_ptr<oscf::Progress> progress;
    std::unique_ptr<oscf::ActiveMessages> am;
    std::unique_ptr<oscf::ProgressThread> progress_thread;
    oscf::AtomicCaps caps;
    oscf::StagingPool buffers;        // the rendezvous's, kept between operations of all windows
    int live_windows = 0;             // guarded by the engine lock
    std::vector<oscf_win *> windows;  // the live ones, for oscf_engine_get_stats
    oscf_win_stats freed{};           // what the freed ones counted
    uint64_t next_window_id = 1;
    bool node_direct = false;  // oscf_engine_config::node_direct
    // oscf_engine_config::cross_memory, until the kernel refuses it (route.cpp)
    bool cross_memory = false;

    // The thread stops first; then the kept registrations close, and the endpoint while
    // the receive buffers it may still write into are alive; only then do the layers
    // above it go.
    ~oscf_engine() {
        progress_thread.reset();
        buffers.clear();
        fabric.reset();
    }
};
