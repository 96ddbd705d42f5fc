#include "progress.h"

#include <rdma/fi_domain.h>

#include <chrono>

namespace oscf {

void Progress::post_or_defer(const char *what, Deferred post, std::function<void(int)> on_error) {
    // Behind anything already deferred, or it would overtake it.
    try_or_queue(deferred_, deferred_.empty(), what, std::move(post), std::move(on_error));
}

void Progress::post_unordered(const char *what, Deferred post, std::function<void(int)> on_error) {
    try_or_queue(unordered_, true, what, std::move(post), std::move(on_error));
}

void Progress::try_or_queue(std::deque<Pending> &q, bool try_now, const char *what, Deferred post,
                            std::function<void(int)> on_error) {
    if (try_now) {
        ssize_t rc = post();
        if (rc == 0) return;
        if (rc != -FI_EAGAIN) {
            on_error(fabric_error(what, rc));
            return;
        }
    }
    ++eagain_retries_;
    q.push_back({what, std::move(post), std::move(on_error)});
}

// Oldest first, stopping at the first that still cannot go, so order is kept.
void Progress::retry(std::deque<Pending> &q) {
    while (!q.empty()) {
        Pending &p = q.front();
        ssize_t rc = p.post();
        if (rc == -FI_EAGAIN) break;
        if (rc != 0) p.on_error(fabric_error(p.what, rc));
        q.pop_front();
    }
}

void Progress::fail(int status) {
    if (failed_) return;
    failed_ = status;
    aborts_.abort_all(status);
}

int Progress::run_locked() {
    const int n = read_completions();
    return failed_ && n >= 0 ? failed_ : n;
}

int Progress::read_completions() {
    calls_since_round_ = 0;
    if (round_hook_) round_hook_();
    if (!unordered_.empty()) retry(unordered_);
    if (!deferred_.empty()) retry(deferred_);
    fab_.retry();
    fi_cq_msg_entry entries[16];
    ssize_t n = fi_cq_read(fab_.cq(), entries, 16);
    if (n > 0) {
        for (ssize_t i = 0; i < n; ++i)
            if (entries[i].op_context) fab_.complete(entries[i].op_context, OSCF_OK, entries[i].len);
        return static_cast<int>(n);
    }
    if (n == -FI_EAGAIN) return 0;
    if (n != -FI_EAVAIL) return fabric_error("fi_cq_read", n);

    // A failed operation: report the provider's own words, then count it as completed
    // so waiters wake up and see the error.
    fi_cq_err_entry err{};
    ssize_t rc = fi_cq_readerr(fab_.cq(), &err, 0);
    if (rc < 0) return fabric_error("fi_cq_readerr", rc);
    char buf[256];
    const char *detail = fi_cq_strerror(fab_.cq(), err.prov_errno, err.err_data, buf, sizeof buf);
    if (err.op_context) {
        log(0, "RMA operation failed: %s (%s)", fi_strerror(err.err), detail ? detail : "");
        fab_.complete(err.op_context, OSCF_ERR_FABRIC, 0);
        return 1;
    }
    log(0,
        "libfabric (%s) reported a failed operation without saying which: %s (%s). Any "
        "operation still in flight may be that one, so this process's RMA calls fail from now "
        "on rather than wait for it.%s",
        fab_.provider().c_str(), fi_strerror(err.err), detail ? detail : "",
        fab_.provider() == "shm" ? " shm does this when the kernel refuses its cross-memory copy: "
                                   "a process made itself non-dumpable or gave up CAP_SYS_PTRACE "
                                   "after creating its windows (README, \"Peers on the same node\")."
                                 : "");
    fail(OSCF_ERR_FABRIC);
    return OSCF_ERR_FABRIC;
}

int Progress::poll() {
    std::unique_lock<EngineLock> lk(mu_, std::try_to_lock);
    if (!lk.owns_lock()) return 0;
    return run_locked();
}

ProgressThread::ProgressThread(Progress &p, unsigned idle_sleep_us) : progress_(p) {
    thread_ = std::thread([this, idle_sleep_us] {
        while (!stop_.load(std::memory_order_relaxed)) {
            if (progress_.poll() == 0)
                std::this_thread::sleep_for(std::chrono::microseconds(idle_sleep_us));
            else
                wakeups_.fetch_add(1, std::memory_order_relaxed);
        }
    });
}

ProgressThread::~ProgressThread() {
    stop_.store(true);
    thread_.join();
}

}  // namespace oscf
