// Completion tracking and progress. Every posted fabric operation carries a Completion
// as its libfabric context; reading the CQ calls it. Most are OpCounters: completing
// one bumps it and its parents (accumulates -> target -> window), so flush means "drive
// progress until the counter is idle". Receive and send buffers of the active-message
// layer are Completions too.
//
// Locking: one mutex per engine (Progress::mutex) protects the fabric, every window
// and every counter. Public engine entry points take it; functions named *_locked and
// all Window methods assume it is held. wait_until releases it between polls so the
// progress thread and other application threads can get in.
#pragma once

#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "fabric.h"

namespace oscf {

// What a failure of the whole engine (Progress::fail) must end: request-based
// operations, whose MPI requests would otherwise never complete (request.h). Each
// enlists itself in its engine's AbortList while alive.
class Abortable {
public:
    // The engine failed with `status`: no part still out will ever complete.
    virtual void abort(int status) = 0;

protected:
    ~Abortable() = default;

private:
    friend class AbortList;
    Abortable *prev_ = nullptr, *next_ = nullptr;
};

class AbortList {
public:
    AbortList() = default;
    AbortList(const AbortList &) = delete;
    AbortList &operator=(const AbortList &) = delete;
    void enlist(Abortable *a) {
        a->next_ = head_;
        if (head_) head_->prev_ = a;
        head_ = a;
    }
    void delist(Abortable *a) {  // no-op once abort_all took it off
        if (!a->prev_ && head_ != a) return;
        (a->prev_ ? a->prev_->next_ : head_) = a->next_;
        if (a->next_) a->next_->prev_ = a->prev_;
        a->prev_ = a->next_ = nullptr;
    }
    // Each is taken off before its abort(), which may end (and delete) any of the others.
    void abort_all(int status) {
        while (Abortable *a = head_) {
            delist(a);
            a->abort(status);
        }
    }
    bool empty() const { return head_ == nullptr; }

private:
    Abortable *head_ = nullptr;
};

struct OpCounter final : Completion {
    uint64_t posted = 0;
    uint64_t completed = 0;
    int error = OSCF_OK;          // first failure since the last take_error()
    uint64_t failures = 0;        // failed completions not yet reported
    OpCounter *parent = nullptr;  // window-wide totals, or nullptr

    uint64_t in_flight() const { return posted - completed; }
    bool idle() const { return posted == completed; }
    void on_post() {
        for (OpCounter *c = this; c; c = c->parent) ++c->posted;
    }
    void on_complete(int status) {
        for (OpCounter *c = this; c; c = c->parent) {
            ++c->completed;
            if (status == OSCF_OK) continue;
            ++c->failures;
            if (c->error == OSCF_OK) c->error = status;
        }
    }
    // Reports (and forgets) this counter's failures. Its parents forget them too, so a
    // flush of one target does not make a later window-wide call report them again.
    int take_error() {
        for (OpCounter *c = parent; c && failures; c = c->parent) {
            c->failures -= std::min(c->failures, failures);
            if (c->failures == 0) c->error = OSCF_OK;
        }
        failures = 0;
        return std::exchange(error, OSCF_OK);
    }
    // For a parent that reported: its children's failures are reported with it.
    void forget_errors() {
        failures = 0;
        error = OSCF_OK;
    }
    void complete(int status, size_t) override { on_complete(status); }
};

// Waiting for something a few microseconds away: the first `spins` pauses are CPU
// hints, after which each gives the CPU up (an oversubscribed node needs that to run
// the process we wait for). A sched_yield per round instead puts the event behind a
// system call.
class Backoff {
public:
    explicit Backoff(unsigned spins) : spins_(spins) {}
    void pause() {
        if (++rounds_ < spins_) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            std::this_thread::yield();
        }
    }
    void reset() {
        rounds_ = 0;
    }

private:
    unsigned spins_, rounds_ = 0;
};

// The engine lock. Every MPI call takes it once, and a pthread mutex's lock and unlock
// were 23% of an 8-byte MPI_Accumulate that joins a batch (perf, osc_acc_rate on shm).
// Held only for short engine work, never across a wait (wait_until lets go each
// round), so a waiter spins briefly, then yields the CPU between attempts.
//
// When only one thread ever enters the engine (set_single_thread: MPI calls serialized
// and no progress thread), the lock is a plain flag. It still makes try_lock() fail
// while the engine is entered further up this thread's stack (opal_progress calling
// poll() from inside a call), but costs no locked exchange, which on one node was a
// large part of an 8-byte put or flush (perf/README.md, "Measurements behind design
// choices").
class EngineLock {
public:
    // Before the engine is used; never changed after.
    void set_single_thread(bool on) { single_thread_ = on; }
    bool single_thread() const { return single_thread_; }
    void lock() {
        if (single_thread_) {
            entered_ = true;
            return;
        }
        Backoff backoff(128);
        while (!try_lock())
            while (held_.load(std::memory_order_relaxed)) backoff.pause();
    }
    bool try_lock() {
        if (single_thread_) return !std::exchange(entered_, true);
        return !held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire);
    }
    void unlock() {
        if (single_thread_)
            entered_ = false;
        else
            held_.store(false, std::memory_order_release);
    }

private:
    bool single_thread_ = false;
    bool entered_ = false;  // single_thread_: the engine is entered on this (the only) thread
    std::atomic<bool> held_{false};
};

class Progress {
public:
    explicit Progress(Fabric &fab) : fab_(fab) {}

    EngineLock &mutex() { return mu_; }

    // Reads the CQ once and dispatches what it finds. Lock held. Returns the number of
    // completions handled, or an OSCF error if the CQ itself failed or the engine has
    // (failed()).
    int run_locked();

    // A failure libfabric reported without naming the operation (shm 1.17 does so when
    // its cross-memory copy is refused): any operation still out may be the one that
    // will never complete, so every wait would risk waiting for ever. From then on
    // every wait and every new operation of this process returns `status`, and every
    // request-based operation completes with it; progress goes on, since our peers'
    // operations on us need it. Lock held.
    void fail(int status);
    int failed() const { return failed_; }
    AbortList &aborts() { return aborts_; }

    // Non-blocking entry for opal_progress and the progress thread: skips the round if
    // another thread is already inside the engine.
    int poll();

    void set_oversubscribed(bool on) { oversubscribed_ = on; }
    // False when no window of the process exchanges messages (all its peers on the
    // node and reached directly): tick_locked then only gives the CPU away.
    void set_messages_expected(bool on) { messages_expected_ = on; }
    // Posts the provider refused with -FI_EAGAIN and queued for later (MPI_T). Lock held.
    uint64_t eagain_retries() const { return eagain_retries_; }
    // Runs at the start of every round, under the engine lock: for what may change
    // without a completion (words on-node peers write, am.cpp's held requests).
    void set_round_hook(std::function<void()> hook) { round_hook_ = std::move(hook); }

    // Called by the synchronization calls (api.cpp), lock held. Open MPI drives
    // opal_progress only from blocking calls, so a process that loops over RMA calls
    // that never wait (epochs on itself, polling its own memory through MPI) would never
    // serve the requests other processes aim at it: they would wait for ever. Every
    // kCallsPerRound calls without a progress round, this runs one.
    //
    // Such a loop also holds its CPU. A process polling through MPI is busy as far as
    // the scheduler can tell even when each call gets its answer at once, and on an
    // oversubscribed node the processes it waits for need that CPU: there every round
    // here yields too; elsewhere only a run of rounds that found nothing yields.
    void tick_locked(std::unique_lock<EngineLock> &lk) {
        if (++calls_since_round_ < kCallsPerRound) return;
        calls_since_round_ = 0;  // run_locked clears it too, for rounds that waits run
        const bool found = messages_expected_ && run_locked() > 0;
        idle_rounds_ = found ? 0 : idle_rounds_ + 1;
        if (oversubscribed_ || idle_rounds_ >= kIdleRoundsPerYield) {
            idle_rounds_ = 0;
            idle(lk);
        }
    }
    static constexpr unsigned kCallsPerRound = 16;
    static constexpr unsigned kIdleRoundsPerYield = 16;

    // run_locked() for a call's own reason (lock.cpp, acquire on our own words): it does
    // not count as the tick's round, so a loop of such calls still ticks, and on an
    // oversubscribed node yields, as often as without it.
    int serve_locked() {
        const unsigned calls = calls_since_round_;
        const int rc = run_locked();
        calls_since_round_ = calls;
        return rc;
    }

    // Drives progress until done() is true. Lock held on entry and exit; let go between
    // empty rounds so other threads get in. Waits spin before they yield (Backoff): a
    // completion a few microseconds away (a 64 KiB shm put: the target copies it with
    // process_vm_readv) otherwise waits behind sched_yield, which perf put at half the
    // origin's time, and 64 KiB put + flush took 4.5 us against raw libfabric's 3.9.
    template <class Done>
    int wait_until(std::unique_lock<EngineLock> &lk, Done done) {
        Backoff backoff(oversubscribed_ ? 0 : kSpinRounds);
        while (!done()) {
            int rc = run_locked();
            if (rc < 0) return rc;
            if (rc > 0) {
                backoff.reset();
            } else if (!done()) {
                lk.unlock();
                backoff.pause();
                lk.lock();
            }
        }
        return OSCF_OK;
    }
    static constexpr unsigned kSpinRounds = 256;

    // Nothing to do yet: let other threads into the engine and give up the CPU, which an
    // oversubscribed node needs to run the process we are waiting for.
    static void idle(std::unique_lock<EngineLock> &lk) {
        lk.unlock();
        std::this_thread::yield();
        lk.lock();
    }

    // Posts one operation with `post()` (a call returning a libfabric status). Resource
    // exhaustion (-FI_EAGAIN) is absorbed here by progressing and retrying, so it never
    // reaches a caller.
    template <class Post>
    int post(const char *what, Post post) {
        if (failed_) return failed_;
        for (;;) {
            ssize_t rc = post();
            if (rc == 0) return OSCF_OK;
            if (rc != -FI_EAGAIN) return fabric_error(what, rc);
            int prc = run_locked();
            if (prc < 0) return prc;
            // Nothing completed: let the peer (or our progress thread, spinning on
            // the provider's lock) run before retrying, or on a busy core we livelock.
            if (prc == 0) std::this_thread::yield();
        }
    }

    // For posts made from inside progress (replies to active messages), which must not
    // recurse into it: tries once and, on -FI_EAGAIN, queues the post for the next round.
    // `on_error` runs if the post finally fails.
    using Deferred = std::function<ssize_t()>;
    void post_or_defer(const char *what, Deferred post, std::function<void(int)> on_error);
    bool has_deferred() const { return !deferred_.empty(); }
    // The same for posts that need no order (receive buffers): they never queue behind
    // deferred sends. A send can wait for the peer to drain its queue, and a peer with
    // no receive buffer posted stops draining (shm), so two ranks flooding each other
    // with requests deadlocked when reposts waited there (found by rma_random).
    void post_unordered(const char *what, Deferred post, std::function<void(int)> on_error);

private:
    int read_completions();  // run_locked without the failure
    struct Pending {
        const char *what;
        Deferred post;
        std::function<void(int)> on_error;
    };
    static void retry(std::deque<Pending> &q);
    void try_or_queue(std::deque<Pending> &q, bool try_now, const char *what, Deferred post,
                      std::function<void(int)> on_error);

    Fabric &fab_;
    EngineLock mu_;
    bool oversubscribed_ = false;
    uint64_t eagain_retries_ = 0;
    unsigned calls_since_round_ = 0, idle_rounds_ = 0;  // tick_locked
    bool messages_expected_ = true;
    int failed_ = OSCF_OK;  // fail()
    AbortList aborts_;
    std::deque<Pending> deferred_;  // in posting order
    std::function<void()> round_hook_;
    std::deque<Pending> unordered_;  // retried first
};

// Optional thread that drives Progress::poll so a passive target is served while its
// application computes outside MPI. Sleeps briefly when there is nothing to do.
class ProgressThread {
public:
    ProgressThread(Progress &p, unsigned idle_sleep_us);
    ~ProgressThread();
    uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }  // rounds with work
    ProgressThread(const ProgressThread &) = delete;
    ProgressThread &operator=(const ProgressThread &) = delete;

private:
    Progress &progress_;
    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> wakeups_{0};
    std::thread thread_;
};

}  // namespace oscf
