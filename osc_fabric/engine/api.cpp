// The C ABI of include/osc_fabric/engine.h: the only functions the MPI layer calls.
// Each one validates its handles, takes the engine lock and runs inside guard(), which
// turns any escaped exception into OSCF_ERR_INTERNAL (or OSCF_ERR_NO_MEM) so nothing
// unwinds into Open MPI.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "atomic_types.h"
#include "layout_copy.h"
#include "piece_copy.h"
#include "window.h"

using namespace oscf;
using Guard = oscf_win::Guard;

namespace {

// Posted receive buffers for active messages, kAmBufferSize each. More only help when
// many origins send emulated accumulates to one target at once; libfabric buffers the
// rest as unexpected messages.
constexpr size_t kAmReceiveBuffers = 32;

template <class F>
int guard(const char *fn, F &&f) noexcept {
    try {
        return f();
    } catch (const std::bad_alloc &) {
        log(0, "%s: out of memory", fn);
        return OSCF_ERR_NO_MEM;
    } catch (const std::exception &e) {
        log(0, "%s: internal error: %s", fn, e.what());
    } catch (...) {
        log(0, "%s: internal error", fn);
    }
    return OSCF_ERR_INTERNAL;
}

// Every call closes the window's direct view (direct_view.h) before it runs and
// lets the engine open one entry again as it leaves, whatever the call did.
template <class F>
int in_view_round(oscf_win &w, F &&f) {
    w.close_direct_view();
    struct Settle {
        oscf_win &w;
        ~Settle() { w.settle_direct_view(); }
    } settle{w};
    return f();
}

// Runs f(win, lock) with the engine lock held.
template <class F>
int with_window(const char *fn, oscf_win *win, F &&f) noexcept {
    if (!win) return OSCF_ERR_ARG;
    return guard(fn, [&]() -> int {
        Guard lk(win->engine().progress->mutex());
        return in_view_round(*win, [&] { return f(*win, lk); });
    });
}

// The same for the calls a process polling through MPI must make to see anything
// change (lock, unlock, flush, MPI_Win_sync, MPI_Win_test): these drive progress now
// and then even when they need not wait (Progress::tick_locked). Data movement calls
// do not, so a run of back-to-back accumulates pays nothing for it.
// The releases (unlock, unlock_all) tick after their work, the rest before: a process
// polling itself through back-to-back epochs then serves the others' lock attempts and
// gives the CPU away while its lock is free. Ticking before a release, every such tick
// fell while it held the lock (in the engine a lock/unlock loop alternates two sync
// calls and the period is even; on the fast road only unlocks enter the engine), and
// the others never got it.
enum class Tick { before, after };
template <Tick when = Tick::before, class F>
int with_sync_call(const char *fn, oscf_win *win, F &&f) noexcept {
    if (!win) return OSCF_ERR_ARG;
    return guard(fn, [&]() -> int {
        Guard lk(win->engine().progress->mutex());
        if (when == Tick::before) win->engine().progress->tick_locked(lk);
        const int rc = in_view_round(*win, [&] { return f(*win, lk); });
        if (when == Tick::after) win->engine().progress->tick_locked(lk);
        return rc;
    });
}

// put_packed and get_packed: the packer is released exactly once, even when the
// arguments are refused.
template <class F>
int with_packer(const char *fn, oscf_win *win, const oscf_run *runs, size_t n, const oscf_packer *pk,
                bool put, F &&f) noexcept {
    if (!pk) return OSCF_ERR_ARG;
    if (!win || (n && !runs) || (put ? !pk->pack : !pk->unpack)) {
        if (pk->release) pk->release(pk->arg);
        return OSCF_ERR_ARG;
    }
    return with_window(fn, win, f);
}

// put_streamed and get_streamed: the same, with the runs from a source.
template <class F>
int with_source(const char *fn, oscf_win *win, const oscf_run_source *src, const oscf_packer *pk, bool put,
                F &&f) noexcept {
    if (pk && (!src || !src->next)) {
        if (pk->release) pk->release(pk->arg);
        return OSCF_ERR_ARG;
    }
    return with_packer(fn, win, nullptr, 0, pk, put, f);
}

// Adds every counter of `more` to `total`: oscf_win_stats is counters only.
void add_stats(oscf_win_stats &total, const oscf_win_stats &more) {
    static_assert(sizeof(oscf_win_stats) % sizeof(uint64_t) == 0,
                  "oscf_win_stats holds uint64_t counters only");
    constexpr size_t n = sizeof(oscf_win_stats) / sizeof(uint64_t);
    uint64_t t[n], m[n];
    std::memcpy(t, &total, sizeof t);
    std::memcpy(m, &more, sizeof m);
    for (size_t i = 0; i < n; ++i) t[i] += m[i];
    std::memcpy(&total, t, sizeof t);
}

}  // namespace

extern "C" {

void oscf_engine_set_environment(void) {
    Fabric::set_environment();
}

int oscf_engine_warm_up(void) {
    return guard(__func__, [] { return Fabric::warm_up(); });
}

int oscf_engine_open(const oscf_engine_config *cfg, oscf_engine **out) {
    if (!cfg || !out) return OSCF_ERR_ARG;
    return guard(__func__, [&]() -> int {
        auto eng = std::make_unique<oscf_engine>();
        int rc = Fabric::open(*cfg, eng->fabric);
        if (rc) return rc;
        eng->progress = std::make_unique<Progress>(*eng->fabric);
        eng->progress->set_oversubscribed(cfg->oversubscribed != 0);
        eng->node_direct = cfg->node_direct != 0;
        eng->cross_memory = eng->node_direct && cfg->cross_memory != 0;
        const ProviderContract &lim = eng->fabric->contract();
        bool emulate = !lim.atomics_trusted;
        switch (cfg->accumulate_path) {
        case OSCF_ACC_AUTO: emulate = emulate || lim.atomics_in_software; break;
        case OSCF_ACC_AM: emulate = true; break;
        case OSCF_ACC_NATIVE: break;
        default: return usage_error(OSCF_ERR_ARG, "unknown accumulate path %d", cfg->accumulate_path);
        }
        eng->caps.build(eng->fabric->ep(), emulate);
        eng->am = std::make_unique<ActiveMessages>(*eng->fabric, *eng->progress);
        if ((rc = eng->am->start(kAmReceiveBuffers))) return rc;
        ActiveMessages *am = eng->am.get();
        eng->progress->set_round_hook([am] { am->retry_held(); });
        eng->progress->mutex().set_single_thread(cfg->calls_serialized && !cfg->progress_thread);
        if (cfg->progress_thread) eng->progress_thread = std::make_unique<ProgressThread>(*eng->progress, 10);
        *out = eng.release();
        return OSCF_OK;
    });
}

int oscf_engine_close(oscf_engine *eng) {
    if (!eng) return OSCF_OK;
    return guard(__func__, [&]() -> int {
        if (eng->live_windows) {
            log(0, "engine closed with %d windows still open", eng->live_windows);
            return OSCF_ERR_RMA_SYNC;
        }
        delete eng;
        return OSCF_OK;
    });
}

const char *oscf_engine_provider(const oscf_engine *eng) {
    return eng ? eng->fabric->provider().c_str() : "";
}

int oscf_engine_node_local_only(const oscf_engine *eng) {
    return eng && eng->fabric->node_local_only();
}

// After a window is connected or destroyed: whether polling must still read the CQ.
void note_message_windows(oscf_engine &eng) {
    eng.progress->set_messages_expected(std::any_of(
        eng.windows.begin(), eng.windows.end(), [](const oscf_win *w) { return w->exchanges_messages(); }));
}

int oscf_engine_progress(oscf_engine *eng) {
    if (!eng) return 0;
    return guard(__func__, [&]() -> int { return eng->progress->poll(); });
}

int oscf_win_create(oscf_engine *eng, const oscf_win_params *p, oscf_win **out, void **base_out) {
    if (!eng || !p || !out) return OSCF_ERR_ARG;
    return guard(__func__, [&]() -> int {
        Guard lk(eng->progress->mutex());
        auto win = std::make_unique<oscf_win>(*eng);
        int rc = win->init(*p, base_out);
        if (rc) return rc;
        eng->windows.reserve(eng->windows.size() + 1);  // nothing may throw after release()
        ++eng->live_windows;
        *out = win.release();
        eng->windows.push_back(*out);
        note_message_windows(*eng);
        return OSCF_OK;
    });
}

size_t oscf_win_blob_size(const oscf_win *) {
    return sizeof(WinBlob);
}

int oscf_win_local_blob(const oscf_win *win, void *blob) {
    if (!win || !blob) return OSCF_ERR_ARG;
    return guard(__func__, [&]() -> int {
        Guard lk(const_cast<oscf_win *>(win)->engine().progress->mutex());
        win->local_blob(static_cast<WinBlob *>(blob));
        return OSCF_OK;
    });
}

int oscf_win_connect(oscf_win *win, const void *blobs) {
    if (!blobs) return OSCF_ERR_ARG;
    return with_window(__func__, win, [&](oscf_win &w, Guard &) {
        const int rc = w.connect(static_cast<const WinBlob *>(blobs));
        note_message_windows(w.engine());
        return rc;
    });
}

int oscf_win_free_begin(oscf_win *win) {
    return with_window(__func__, win, [](oscf_win &w, Guard &lk) { return w.free_begin(lk); });
}

int oscf_win_destroy(oscf_win *win) {
    if (!win) return OSCF_OK;
    return guard(__func__, [&]() -> int {
        oscf_engine &eng = win->engine();
        Guard lk(eng.progress->mutex());
        add_stats(eng.freed, win->all_stats());
        eng.windows.erase(std::remove(eng.windows.begin(), eng.windows.end(), win), eng.windows.end());
        delete win;
        --eng.live_windows;
        note_message_windows(eng);
        return OSCF_OK;
    });
}

int oscf_win_put(oscf_win *win, int target, const void *origin, size_t len, int64_t disp, int64_t offset,
                 const oscf_notify *notify) {
    oscf_segment seg{const_cast<void *>(origin), offset, len};
    return oscf_win_putv(win, target, &seg, 1, disp, notify);
}

int oscf_win_get(oscf_win *win, int target, void *origin, size_t len, int64_t disp, int64_t offset,
                 const oscf_notify *notify) {
    oscf_segment seg{origin, offset, len};
    return oscf_win_getv(win, target, &seg, 1, disp, notify);
}

void *oscf_win_shared_segment(const oscf_win *win) {
    return win ? win->shared_segment() : nullptr;
}

int oscf_win_memory_of(const oscf_win *win, int rank, void **base, size_t *size, int *disp_unit) {
    if (!win || !base || !size || !disp_unit) return OSCF_ERR_ARG;
    return win->memory_of(rank, base, size, disp_unit);
}

size_t oscf_win_state_bytes(int comm_size) {
    return comm_size > 0 ? state_bytes(static_cast<size_t>(comm_size)) : 0;
}

int oscf_win_attach(oscf_win *win, void *base, size_t size) {
    return with_window(__func__, win, [&](oscf_win &w, Guard &lk) { return w.attach(lk, base, size); });
}

int oscf_win_detach(oscf_win *win, const void *base) {
    return with_window(__func__, win, [&](oscf_win &w, Guard &lk) { return w.detach(lk, base); });
}

int oscf_win_putv(oscf_win *win, int target, const oscf_segment *segs, size_t n, int64_t disp,
                  const oscf_notify *notify) {
    if (n && !segs) return OSCF_ERR_ARG;
    return with_window(__func__, win,
                       [&](oscf_win &w, Guard &lk) { return w.put(lk, target, segs, n, disp, notify); });
}

int oscf_win_getv(oscf_win *win, int target, const oscf_segment *segs, size_t n, int64_t disp,
                  const oscf_notify *notify) {
    if (n && !segs) return OSCF_ERR_ARG;
    return with_window(__func__, win,
                       [&](oscf_win &w, Guard &lk) { return w.get(lk, target, segs, n, disp, notify); });
}

int oscf_win_put_packed(oscf_win *win, int target, const oscf_run *runs, size_t n, int64_t disp,
                        const oscf_packer *pk, const oscf_notify *notify) {
    return with_packer(__func__, win, runs, n, pk, true, [&](oscf_win &w, Guard &lk) {
        return w.put_packed(lk, target, runs, n, disp, *pk, notify);
    });
}

int oscf_win_put_streamed(oscf_win *win, int target, const oscf_run_source *src, int64_t disp,
                          const oscf_packer *pk, const oscf_notify *notify) {
    return with_source(__func__, win, src, pk, true, [&](oscf_win &w, Guard &lk) {
        return w.put_streamed(lk, target, *src, disp, *pk, notify);
    });
}

int oscf_win_get_streamed(oscf_win *win, int target, const oscf_run_source *src, int64_t disp,
                          const oscf_packer *pk, const oscf_notify *notify) {
    return with_source(__func__, win, src, pk, false, [&](oscf_win &w, Guard &lk) {
        return w.get_streamed(lk, target, *src, disp, *pk, notify);
    });
}

int oscf_win_get_packed(oscf_win *win, int target, const oscf_run *runs, size_t n, int64_t disp,
                        const oscf_packer *pk, const oscf_notify *notify) {
    return with_packer(__func__, win, runs, n, pk, false, [&](oscf_win &w, Guard &lk) {
        return w.get_packed(lk, target, runs, n, disp, *pk, notify);
    });
}

int oscf_win_engine_applies(oscf_win *win, int target, oscf_type type) {
    return with_window(__func__, win, [&](oscf_win &w, Guard &) -> int {
        return valid_type(type) && w.engine_applies(target, type);
    });
}

int oscf_win_accumulate_packed(oscf_win *win, int target, const oscf_run *runs, size_t n, oscf_type type,
                               oscf_op op, int64_t disp, const oscf_packer *pk, const oscf_notify *notify) {
    return with_packer(__func__, win, runs, n, pk, true, [&](oscf_win &w, Guard &lk) {
        return w.accumulate_packed(lk, target, runs, n, type, op, disp, *pk, notify);
    });
}

int oscf_win_get_accumulate_packed(oscf_win *win, int target, const oscf_run *runs, size_t n, oscf_type type,
                                   oscf_op op, int64_t disp, const oscf_packer *origin,
                                   const oscf_packer *result, const oscf_notify *notify) {
    if (!win || (n && !runs) || !result || !result->unpack || (origin && !origin->pack)) {
        for (const oscf_packer *pk : {origin, result})
            if (pk && pk->release) pk->release(pk->arg);
        return OSCF_ERR_ARG;
    }
    return with_window(__func__, win, [&](oscf_win &w, Guard &lk) {
        return w.get_accumulate_packed(lk, target, runs, n, type, op, disp, origin, *result, notify);
    });
}

void oscf_copy_bytes(void *dst, const void *src, size_t n) {
    move_block(static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src), n);
}

int oscf_copy_layout(void *dst_base, const oscf_run_source *dst, const void *src_base,
                     const oscf_run_source *src, int *moved) {
    if (!moved) return OSCF_ERR_ARG;
    *moved = 0;
    if (!dst || !src || !dst->next || !src->next) return OSCF_ERR_ARG;
    return guard(__func__, [&] {
        bool did = false;
        const int rc = copy_layout(static_cast<uint8_t *>(dst_base), *dst,
                                   static_cast<const uint8_t *>(src_base), *src, &did);
        *moved = did;
        return rc;
    });
}

int oscf_layout_packer(void *base, const oscf_run_source *src, oscf_packer *out, int *taken) {
    if (!taken) return OSCF_ERR_ARG;
    *taken = 0;
    if (!src || !src->next || !out) return OSCF_ERR_ARG;
    return guard(__func__, [&] {
        auto stream = std::make_unique<LayoutStream>(static_cast<uint8_t *>(base), *src);
        if (stream->fragmented()) return OSCF_OK;
        *out = oscf_packer{
            [](void *arg, void *dst, size_t len) {
                return static_cast<LayoutStream *>(arg)->pack(static_cast<uint8_t *>(dst), len);
            },
            [](void *arg, const void *from, size_t len) {
                return static_cast<LayoutStream *>(arg)->unpack(static_cast<const uint8_t *>(from), len);
            },
            [](void *arg) { delete static_cast<LayoutStream *>(arg); }, stream.release()};
        *taken = 1;
        return OSCF_OK;
    });
}

int oscf_win_direct_span(oscf_win *win, int target, int64_t disp, int64_t offset, size_t len, int is_put,
                         void **where) {
    if (!where) return OSCF_ERR_ARG;
    *where = nullptr;
    return with_window(__func__, win, [&](oscf_win &w, Guard &lk) {
        return w.direct_span(lk, target, disp, offset, len, is_put != 0, where);
    });
}

int oscf_win_has_direct_memory(const oscf_win *win) {
    return win && win->has_direct_memory();
}

int oscf_win_fence(oscf_win *win, int assert_bits) {
    return with_window(__func__, win, [&](oscf_win &w, Guard &lk) { return w.fence(lk, assert_bits); });
}

int oscf_win_start(oscf_win *win, const int *group, int n, int assert_bits) {
    if (n < 0 || (n && !group)) return OSCF_ERR_ARG;
    return with_window(__func__, win,
                       [&](oscf_win &w, Guard &lk) { return w.start(lk, group, n, assert_bits); });
}

int oscf_win_complete(oscf_win *win) {
    return with_window(__func__, win, [](oscf_win &w, Guard &lk) { return w.complete(lk); });
}

int oscf_win_post(oscf_win *win, const int *group, int n, int assert_bits) {
    if (n < 0 || (n && !group)) return OSCF_ERR_ARG;
    return with_window(__func__, win,
                       [&](oscf_win &w, Guard &lk) { return w.post(lk, group, n, assert_bits); });
}

int oscf_win_wait(oscf_win *win) {
    return with_window(__func__, win, [](oscf_win &w, Guard &lk) { return w.wait(lk); });
}

int oscf_win_test(oscf_win *win, int *done) {
    if (!done) return OSCF_ERR_ARG;
    return with_sync_call(__func__, win, [&](oscf_win &w, Guard &lk) {
        bool d = false;
        int rc = w.test(lk, &d);
        *done = d;
        return rc;
    });
}

int oscf_win_lock(oscf_win *win, int target, int exclusive, int assert_bits) {
    return with_sync_call(__func__, win, [&](oscf_win &w, Guard &lk) {
        return w.lock(lk, target, exclusive != 0, assert_bits);
    });
}

int oscf_win_unlock(oscf_win *win, int target) {
    return with_sync_call<Tick::after>(__func__, win,
                                       [&](oscf_win &w, Guard &lk) { return w.unlock(lk, target); });
}

int oscf_win_lock_all(oscf_win *win, int assert_bits) {
    return with_sync_call(__func__, win, [&](oscf_win &w, Guard &lk) { return w.lock_all(lk, assert_bits); });
}

int oscf_win_unlock_all(oscf_win *win) {
    return with_sync_call<Tick::after>(__func__, win,
                                       [](oscf_win &w, Guard &lk) { return w.unlock_all(lk); });
}

int oscf_win_flush(oscf_win *win, int target) {
    return with_sync_call(__func__, win, [&](oscf_win &w, Guard &lk) { return w.flush(lk, target); });
}

// Every operation completes only when delivered, so local completion has nothing
// cheaper to wait for yet; the separate entry keeps the MPI layer honest about which
// one it asked for.
int oscf_win_flush_local(oscf_win *win, int target) {
    return oscf_win_flush(win, target);
}

int oscf_win_sync(oscf_win *win) {
    return with_sync_call(__func__, win, [](oscf_win &w, Guard &lk) { return w.sync(lk); });
}

int oscf_win_get_stats(const oscf_win *win, oscf_win_stats *out) {
    if (!win || !out) return OSCF_ERR_ARG;
    // The engine lock, as the header promises: the progress thread updates them.
    Guard lk(win->engine().progress->mutex());
    *out = win->all_stats();
    return OSCF_OK;
}

int oscf_engine_get_stats(oscf_engine *eng, oscf_engine_stats *out) {
    if (!eng || !out) return OSCF_ERR_ARG;
    return guard(__func__, [&]() -> int {
        Guard lk(eng->progress->mutex());
        *out = oscf_engine_stats{};
        out->windows = eng->freed;
        for (const oscf_win *w : eng->windows) add_stats(out->windows, w->all_stats());
        out->eagain_retries = eng->progress->eagain_retries();
        out->message_bytes = eng->am ? eng->am->request_bytes() : 0;
        out->thread_wakeups = eng->progress_thread ? eng->progress_thread->wakeups() : 0;
        const LocalMemory &local = eng->fabric->local_memory();
        out->local_own_regions = local.known_hits();
        out->local_acquired = local.acquired();
        out->local_registered = local.registered();
        return OSCF_OK;
    });
}

size_t oscf_type_size(oscf_type type) {
    return valid_type(type) ? type_size(type) : 0;
}

oscf_acc_path oscf_engine_accumulate_path(const oscf_engine *eng, oscf_type type) {
    return eng && valid_type(type) && eng->caps.native(type) ? OSCF_PATH_NATIVE : OSCF_PATH_AM;
}

int oscf_win_accumulate(oscf_win *win, int target, const void *origin, void *result, size_t count,
                        oscf_type type, oscf_op op, int64_t disp, int64_t offset, const oscf_notify *notify) {
    oscf_acc_segment seg{origin, result, offset, count};
    return oscf_win_accumulatev(win, target, &seg, 1, type, op, disp, notify);
}

int oscf_win_accumulatev(oscf_win *win, int target, const oscf_acc_segment *segs, size_t n, oscf_type type,
                         oscf_op op, int64_t disp, const oscf_notify *notify) {
    if (n && !segs) return OSCF_ERR_ARG;
    return with_window(__func__, win, [&](oscf_win &w, Guard &lk) {
        return w.accumulate(lk, target, segs, n, type, op, disp, notify);
    });
}

int oscf_win_accumulate_direct(oscf_win *win, int target, oscf_type type, oscf_op op, int64_t disp,
                               int64_t span_offset, size_t span_len, int fetching, const oscf_acc_source *src,
                               const oscf_notify *notify, int *served) {
    if (!served || !src || !src->next) return OSCF_ERR_ARG;
    *served = 0;
    return with_window(__func__, win, [&](oscf_win &w, Guard &lk) {
        return w.accumulate_direct(lk, target, type, op, disp, span_offset, span_len, fetching != 0, *src,
                                   notify, served);
    });
}

int oscf_win_compare_and_swap(oscf_win *win, int target, const void *origin, const void *compare,
                              void *result, oscf_type type, int64_t disp, int64_t offset) {
    return with_window(__func__, win, [&](oscf_win &w, Guard &lk) {
        return w.compare_and_swap(lk, target, origin, compare, result, type, disp, offset);
    });
}

int oscf_swap_allowed(oscf_swap swap, oscf_type type) {
    return valid_swap(swap) && valid_type(type) && swap_allowed(swap, type);
}

int oscf_win_swap(oscf_win *win, int target, const void *value, const void *compare, void *result,
                  size_t count, oscf_type type, oscf_swap swap, int64_t disp, int64_t offset,
                  const oscf_notify *notify) {
    return with_window(__func__, win, [&](oscf_win &w, Guard &lk) {
        oscf_win::Swap sw{swap,
                          type,
                          count,
                          static_cast<const char *>(value),
                          static_cast<const char *>(compare),
                          static_cast<char *>(result)};
        return w.swap(lk, target, sw, disp, offset, notify);
    });
}

int oscf_win_rmw_implicit(oscf_win *win, int target, const oscf_rmw *rmw, int assert_bits) {
    if (!rmw) return OSCF_ERR_ARG;
    return with_window(__func__, win,
                       [&](oscf_win &w, Guard &lk) { return w.rmw_implicit(lk, target, *rmw, assert_bits); });
}

int oscf_engine_local_descriptors(const oscf_engine *eng) {
    return eng && eng->fabric && eng->fabric->contract().mr_local;
}

int oscf_engine_set_local_registrar(oscf_engine *eng, const oscf_local_registrar *r) {
    if (!eng || (r && (!r->acquire || !r->release))) return OSCF_ERR_ARG;
    return guard(__func__, [&]() -> int {
        Guard lk(eng->progress->mutex());
        eng->fabric->local_memory().set_registrar(r);
        return OSCF_OK;
    });
}

// Called from inside a registrar's acquire, so the engine lock is already held: no
// Guard here (the lock is not recursive).
int oscf_engine_register_local(oscf_engine *eng, void *base, size_t len, void **handle, void **desc) {
    if (!eng || !base || !len || !handle || !desc) return OSCF_ERR_ARG;
    return guard(__func__, [&]() -> int {
        auto region = std::make_unique<mr_ptr>();
        const int rc = eng->fabric->register_local(base, len, *region, desc);
        if (rc) return rc;
        *handle = region.release();
        return OSCF_OK;
    });
}

int oscf_engine_deregister_local(oscf_engine *eng, void *handle) {
    if (!eng || !handle) return OSCF_ERR_ARG;
    return guard(__func__, [&]() -> int {
        delete static_cast<mr_ptr *>(handle);  // fi_close; a failure is logged by mr_closer
        return OSCF_OK;
    });
}

int oscf_engine_registration_stats(uint64_t *count, uint64_t *bytes) {
    if (!count || !bytes) return OSCF_ERR_ARG;
    registration_stats(count, bytes);
    return OSCF_OK;
}

int oscf_engine_local_registration_stats(uint64_t *count, uint64_t *bytes) {
    if (!count || !bytes) return OSCF_ERR_ARG;
    registration_stats(count, bytes, RegionKind::local);
    return OSCF_OK;
}

}  // extern "C"
