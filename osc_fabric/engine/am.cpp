#include "am.h"

#include <rdma/fi_endpoint.h>

#include <cstring>

#include "atomic_types.h"
#include "window.h"

namespace oscf {

class ActiveMessages::RecvBuffer final : public Completion {
public:
    explicit RecvBuffer(ActiveMessages &am) : am_(am) {}
    void complete(int status, size_t len) override {
        if (am_.closing_) return;
        if (status == OSCF_OK) am_.on_receive(data, len);
        am_.repost(*this);
    }
    alignas(16) uint8_t data[kAmBufferSize];

private:
    ActiveMessages &am_;
};

class ActiveMessages::SendBuffer final : public Completion {
public:
    explicit SendBuffer(ActiveMessages &am) : am_(am) {}
    // A send that fails in the completion queue (the connection broke) gets no reply
    // either: its request fails here, or whoever waits on it would wait forever.
    void complete(int status, size_t) override {
        am_.release(this);
        if (status == OSCF_OK) return;
        log(0, "active message send failed");
        if (awaits_reply) am_.fail_request(token, status);
    }
    alignas(16) uint8_t data[kAmBufferSize];
    size_t len = 0;
    bool awaits_reply = false;
    uint64_t token = 0;

private:
    ActiveMessages &am_;
};

ActiveMessages::ActiveMessages(Fabric &fab, Progress &progress) : fab_(fab), progress_(progress) {
    progress_.aborts().enlist(this);
}

// Receive buffers stay posted until the endpoint closes (the Fabric outlives us only
// if the engine is torn down in the wrong order; engine_instance.h declares AM after
// the fabric so the endpoint is still open here and cancels nothing we then touch).
ActiveMessages::~ActiveMessages() {
    closing_ = true;
    progress_.aborts().delist(this);
}

void ActiveMessages::abort(int status) {
    for (uint32_t idx = 0; idx < requests_.size(); ++idx)
        if (requests_[idx].in_use) fail_request(uint64_t{requests_[idx].generation} << 32 | idx, status);
    // What our peers wait for from us may be what failed (shm 1.17 answers no origin
    // whose copy the target's kernel refused): tell them, or they wait for ever.
    for (auto &[id, win] : windows_) win->tell_peers_failed();
}

int ActiveMessages::start(size_t receive_buffers) {
    for (size_t i = 0; i < receive_buffers; ++i) {
        receives_.push_back(std::make_unique<RecvBuffer>(*this));
        int rc = post_receive(*receives_.back());
        if (rc) return rc;
    }
    return OSCF_OK;
}

int ActiveMessages::post_receive(RecvBuffer &b) {
    return progress_.post("fi_recv", [&] { return fab_.recv(b.data, sizeof b.data, &b); });
}

// From inside progress (a receive just completed): must not recurse into it.
void ActiveMessages::repost(RecvBuffer &b) {
    Fabric *fab = &fab_;
    progress_.post_unordered(
        "fi_recv", [fab, &b] { return fab->recv(b.data, sizeof b.data, &b); },
        [](int) { log(0, "a receive buffer for active messages could not be reposted"); });
}

void ActiveMessages::remove_window(uint64_t id) {
    windows_.erase(id);
    streams_.erase(streams_.lower_bound({id, 0}), streams_.lower_bound({id + 1, 0}));
    // Requests still held for a window being freed belong to an erroneous program (an
    // origin inside a lock epoch at MPI_Win_free): drop them with a word.
    for (auto it = held_.lower_bound({id, 0}); it != held_.end() && it->first.first == id;) {
        log(0, "window freed with %zu requests of rank %u waiting for its lock", it->second.size(),
            it->first.second);
        it = held_.erase(it);
    }
    later_.erase(later_.lower_bound({id, 0}), later_.lower_bound({id + 1, 0}));
}

void ActiveMessages::fail_request(uint64_t token, int status) {
    AmHeader h{};
    h.token = token;
    h.status = status;
    handle_reply(h, nullptr, 0);
}

uint64_t ActiveMessages::new_request(Completion *counter, void *result, size_t result_bytes, oscf_type type) {
    uint32_t idx;
    if (free_requests_.empty()) {
        idx = static_cast<uint32_t>(requests_.size());
        requests_.emplace_back();
    } else {
        idx = free_requests_.back();
        free_requests_.pop_back();
    }
    AmRequest &r = requests_[idx];
    r.counter = counter;
    r.result = result;
    r.result_bytes = result_bytes;
    r.result_type = type;
    r.in_use = true;
    ++r.generation;
    return (uint64_t{r.generation} << 32) | idx;
}

ActiveMessages::SendBuffer *ActiveMessages::take_send_buffer() {
    if (free_sends_.empty()) {
        send_pool_.push_back(std::make_unique<SendBuffer>(*this));
        return send_pool_.back().get();
    }
    SendBuffer *b = free_sends_.back();
    free_sends_.pop_back();
    return b;
}

void ActiveMessages::release(SendBuffer *b) {
    free_sends_.push_back(b);
}

namespace {
// Header and payload pieces, back to back into dst; returns the message length.
size_t pack(uint8_t *dst, const AmHeader &hdr, const void *p1, size_t n1, const void *p2, size_t n2) {
    std::memcpy(dst, &hdr, sizeof hdr);
    if (n1) std::memcpy(dst + sizeof hdr, p1, n1);
    if (n2) std::memcpy(dst + sizeof hdr + n1, p2, n2);
    return sizeof hdr + n1 + n2;
}
// Replies up to this size are built on the stack and injected (a fetch of up to 64 bytes).
constexpr size_t kInjectedReplyMax = sizeof(AmHeader) + 64;
}  // namespace

int ActiveMessages::send(fi_addr_t dest, const AmHeader &hdr, const void *p1, size_t n1, const void *p2,
                         size_t n2) {
    if (n1 + n2 > kAmMaxPayload) return OSCF_ERR_INTERNAL;
    const size_t len = sizeof hdr + n1 + n2;
    if (hdr.opcode != kAmReply) request_bytes_ += n1 + n2;
    // A small reply is injected: no send completion for the target to reap, no buffer
    // to recycle. Only replies: a request must learn that its send failed (SendBuffer),
    // and an injected send reports nothing. Only when nothing waits to go before it.
    if (hdr.opcode == kAmReply && len <= kInjectedReplyMax && len <= fab_.contract().inject_size &&
        !progress_.has_deferred()) {
        alignas(16) uint8_t msg[kInjectedReplyMax];
        ssize_t rc = fab_.inject(msg, pack(msg, hdr, p1, n1, p2, n2), dest);
        if (rc == 0) return OSCF_OK;
        if (rc != -FI_EAGAIN) {
            log(0, "active message reply failed: %s", fi_strerror(static_cast<int>(-rc)));
            return OSCF_OK;  // as a send failing in the CQ: the origin is gone
        }
    }
    SendBuffer *b = take_send_buffer();
    b->len = pack(b->data, hdr, p1, n1, p2, n2);
    Fabric *fab = &fab_;
    // A request whose send fails will get no reply: fail it now so nobody waits.
    b->awaits_reply = hdr.opcode != kAmReply && !(hdr.flags & kAmNoReply);
    b->token = hdr.token;
    progress_.post_or_defer(
        "fi_send", [fab, b, dest] { return fab->send(b->data, b->len, dest, b); },
        [b](int status) { b->complete(status, 0); });
    return OSCF_OK;
}

bool ActiveMessages::parse(const uint8_t *msg, size_t len, AmHeader *h) const {
    if (len < sizeof *h) {
        log(0, "dropping a %zu-byte active message: shorter than its header", len);
        return false;
    }
    std::memcpy(h, msg, sizeof *h);
    if (h->version != kAmVersion || h->opcode >= kAmOpcodeMax) {
        log(0, "dropping an active message of version %u, opcode %u", h->version, h->opcode);
        return false;
    }
    return true;
}

void ActiveMessages::on_receive(const uint8_t *msg, size_t len) {
    AmHeader h;
    if (!parse(msg, len, &h)) return;
    if (h.opcode == kAmReply) {
        handle_reply(h, msg + sizeof h, len - sizeof h);
        return;
    }
    if (h.opcode == kAmFailed) {
        if (!progress_.failed())
            log(0,
                "rank %u of a window reports that its engine failed: what this process has in flight "
                "to it may never complete, so this process's RMA calls fail from now on",
                h.origin_rank);
        progress_.fail(OSCF_ERR_FABRIC);
        return;
    }
    MessageStream &s = streams_[{h.window_id, h.origin_rank}];
    if (!s.is_next(h.seq)) {
        s.keep_early(h.seq, msg, len);  // ahead of one still on its way
        return;
    }
    handle_request(h, msg + sizeof h, len - sizeof h);
    // Then those that arrived early and are next now.
    for (std::vector<uint8_t> m; s.advance(&m);) serve_stored(m);
}

// A request kept whole (early, or held for a lock); parse() passed it when it arrived.
void ActiveMessages::serve_stored(const std::vector<uint8_t> &msg) {
    AmHeader h;
    std::memcpy(&h, msg.data(), sizeof h);
    handle_request(h, msg.data() + sizeof h, msg.size() - sizeof h);
}

void ActiveMessages::handle_request(const AmHeader &h, const uint8_t *payload, size_t len) {
    auto it = windows_.find(h.window_id);
    if (it == windows_.end()) {
        // Nobody to reply to either: without the window we cannot map origin_rank.
        log(0, "active message for unknown window %llu dropped",
            static_cast<unsigned long long>(h.window_id));
        return;
    }
    oscf_win &win = *it->second;
    const auto key = std::make_pair(h.window_id, h.origin_rank);
    auto hold = [&] {
        std::vector<uint8_t> msg(sizeof h + len);
        std::memcpy(msg.data(), &h, sizeof h);
        if (len) std::memcpy(msg.data() + sizeof h, payload, len);
        held_[key].push_back(std::move(msg));
    };
    // Behind a held lock request of the same origin, or one still being served: wait
    // with it, in order.
    if ((!held_.empty() && held_.count(key)) || (!later_.empty() && later_.count(key))) {
        hold();
        return;
    }
    AmHeader reply{};
    reply.version = kAmVersion;
    reply.opcode = kAmReply;
    reply.token = h.token;
    uint8_t old[kAmMaxPayload];
    size_t old_len = 0;
    const oscf_win::LockWords before = win.lock_words();
    reply.status = win.serve_am(h, payload, len, old, &old_len);
    if (reply.status == kAmDeferred) {
        win.note_held(before);
        hold();
        return;
    }
    ++served_;
    if (reply.status == kAmLater) {
        later_.insert(key);
        return;
    }
    if (reply.status == kAmDetached) return;
    fi_addr_t dest;
    if (h.flags & kAmNoReply) {
        if (reply.status != OSCF_OK)
            log(0, "active message from rank %u failed at this target: %s", h.origin_rank,
                oscf_status_str(reply.status));
    } else if (win.peer_address(h.origin_rank, &dest) != OSCF_OK) {
        log(0, "active message from rank %u, outside the window's group, dropped", h.origin_rank);
    } else {
        send(dest, reply, old, reply.status == OSCF_OK ? old_len : 0);
    }
    // A lock word changed: held lock requests to this window may be grantable now.
    const bool lock_word_changed =
        (h.flags & kAmStateWord) || (h.opcode == kAmBatch && (h.flags & kAmReleases));
    if (lock_word_changed && !held_.empty()) redispatch(h.window_id);
}

void ActiveMessages::retry_held() {
    if (held_.empty()) return;
    std::vector<uint64_t> ids;
    for (const auto &entry : held_)
        if (ids.empty() || ids.back() != entry.first.first) ids.push_back(entry.first.first);
    for (uint64_t id : ids) {
        auto w = windows_.find(id);
        if (w != windows_.end() && w->second->held_may_grant()) redispatch(id);
    }
}

void ActiveMessages::answer(uint64_t window_id, uint32_t origin_rank, uint64_t token, int status) {
    if (!reply_sent(window_id, origin_rank, token, status)) return;
    const auto key = std::make_pair(window_id, origin_rank);
    later_.erase(key);
    replay(key);
}

void ActiveMessages::reply(uint64_t window_id, uint32_t origin_rank, uint64_t token, int status) {
    reply_sent(window_id, origin_rank, token, status);
}

bool ActiveMessages::reply_sent(uint64_t window_id, uint32_t origin_rank, uint64_t token, int status) {
    auto it = windows_.find(window_id);
    fi_addr_t dest;
    if (it == windows_.end() || it->second->peer_address(origin_rank, &dest) != OSCF_OK) {
        later_.erase(std::make_pair(window_id, origin_rank));
        log(0, "a reply to rank %u for a window that is gone, dropped", origin_rank);
        return false;
    }
    AmHeader reply{};
    reply.version = kAmVersion;
    reply.opcode = kAmReply;
    reply.token = token;
    reply.status = status;
    send(dest, reply, nullptr, 0);
    return true;
}

void ActiveMessages::replay(const std::pair<uint64_t, uint32_t> &key) {
    auto it = held_.find(key);
    if (it == held_.end()) return;
    std::deque<std::vector<uint8_t>> q = std::move(it->second);
    held_.erase(it);
    // Held in the order sent: served again without the stream check. One that must
    // wait again holds the rest behind it (handle_request).
    for (const auto &msg : q) serve_stored(msg);
}

void ActiveMessages::redispatch(uint64_t window_id) {
    // Keys first: replaying may hold a request again (a new entry under its key) or
    // release a lock and redispatch recursively; each key is looked up afresh.
    std::vector<std::pair<uint64_t, uint32_t>> keys;
    for (auto it = held_.lower_bound({window_id, 0}); it != held_.end() && it->first.first == window_id; ++it)
        keys.push_back(it->first);
    auto w = windows_.find(window_id);
    if (w != windows_.end()) w->second->forget_held();  // those that fail again note anew
    for (const auto &k : keys) {
        if (later_.count(k)) continue;  // still being served: its answer replays them
        if (w != windows_.end()) ++w->second->stats.lock_retries;
        replay(k);
    }
}

void ActiveMessages::handle_reply(const AmHeader &h, const uint8_t *payload, size_t len) {
    uint32_t idx = static_cast<uint32_t>(h.token);
    uint32_t gen = static_cast<uint32_t>(h.token >> 32);
    if (idx >= requests_.size() || !requests_[idx].in_use || requests_[idx].generation != gen) {
        // After Progress::fail the requests were failed already (abort).
        if (!progress_.failed()) log(0, "active message reply with an unknown token dropped");
        return;
    }
    AmRequest &r = requests_[idx];
    int status = h.status;
    if (status == OSCF_OK && r.result) {
        if (len != r.result_bytes) {
            log(0, "active message reply carries %zu bytes, expected %zu", len, r.result_bytes);
            status = OSCF_ERR_INTERNAL;
        } else {
            copy_element_bytes(r.result_type, r.result, payload, len);
        }
    }
    if (status != OSCF_OK) log(1, "emulated accumulate failed at the target: %s", oscf_status_str(status));
    Completion *c = r.counter;
    r.in_use = false;
    free_requests_.push_back(idx);
    c->complete(status, 0);
}

}  // namespace oscf
