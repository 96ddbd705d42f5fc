// Completion of one request-based operation (MPI_Rput, MPI_Rget, MPI_Raccumulate,
// MPI_Rget_accumulate). Its parts are counted here and on the target's counters (so
// flush still covers them); when the last part completes after the operation was
// armed, the MPI layer's callback runs once and the counter deletes itself. When the
// operation failed and its parts could not be waited for, it is abandoned: the last
// part then deletes it without the callback (the call already returned the error).
// Created by OpScope, touched only under the engine lock.
#pragma once

#include "progress.h"

namespace oscf {

class RequestCounter final : public Completion, public Abortable {
public:
    RequestCounter(AbortList &aborts, OpCounter *parent, oscf_notify notify)
        : aborts_(aborts), parent_(parent), notify_(notify) {
        aborts_.enlist(this);
    }
    RequestCounter(const RequestCounter &) = delete;
    RequestCounter &operator=(const RequestCounter &) = delete;

    void on_post() {
        ++posted_;
        parent_->on_post();
    }
    void complete(int status, size_t) override {
        parent_->on_complete(status);
        ++completed_;
        if (status != OSCF_OK && error_ == OSCF_OK) error_ = status;
        settle();
    }
    // All parts are posted: from now on the last completion fires the callback.
    void arm() {
        armed_ = true;
        settle();
    }
    bool idle() const { return posted_ == completed_; }
    // The operation failed: never call back, and go when no part can touch this.
    void abandon() {
        abandoned_ = true;
        settle();
    }
    // The engine failed (Progress::fail): a part still out may never complete, so an
    // armed request calls back with the error now (one still being posted does when
    // armed), and this stays until its parts are in, which may be never.
    void abort(int status) override {
        if (error_ == OSCF_OK) error_ = status;
        aborted_ = true;
        settle();
    }

private:
    ~RequestCounter() { aborts_.delist(this); }
    void settle() {
        const bool done = posted_ == completed_;
        const bool call = armed_ && !abandoned_ && !called_ && (done || aborted_);
        called_ = called_ || call;
        const oscf_notify n = notify_;
        const int status = error_;
        if (done && (called_ || abandoned_)) delete this;
        if (call) n.fn(n.arg, status);
    }

    AbortList &aborts_;
    OpCounter *parent_;
    oscf_notify notify_;
    uint64_t posted_ = 0, completed_ = 0;
    int error_ = OSCF_OK;
    bool armed_ = false, abandoned_ = false, aborted_ = false, called_ = false;
};

// Where the parts of one operation complete: straight on the target's counter, or
// through a request's. Post each part with context() and count it with on_post();
// end with finish(rc), which arms the request, or, when posting failed, waits for the
// parts already posted and abandons the request, so the callback never runs after an
// error return, even when that wait fails too.
class OpScope {
public:
    OpScope(AbortList &aborts, OpCounter &counter, const oscf_notify *notify)
        : counter_(counter), req_(notify ? new RequestCounter(aborts, &counter, *notify) : nullptr) {}
    OpScope(const OpScope &) = delete;
    OpScope &operator=(const OpScope &) = delete;

    Completion *context() { return req_ ? static_cast<Completion *>(req_) : &counter_; }
    bool has_request() const { return req_ != nullptr; }
    void on_post() {
        if (req_)
            req_->on_post();
        else
            counter_.on_post();
    }
    template <class Wait>
    int finish(int rc, Wait wait_idle) {
        if (!req_) return rc;
        RequestCounter *r = std::exchange(req_, nullptr);
        if (rc == OSCF_OK) {
            r->arm();
            return rc;
        }
        wait_idle([r] { return r->idle(); });
        r->abandon();
        return rc;
    }

private:
    OpCounter &counter_;
    RequestCounter *req_;
};

}  // namespace oscf
