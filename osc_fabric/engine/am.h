// The active-message layer: posted receive buffers, pooled send buffers, tokens that
// match replies to requests, and the table that routes requests to windows. Owned by
// the engine; every method assumes the engine lock is held (handlers run inside
// Progress::run_locked). Window-level meaning (what an accumulate does) lives in
// accumulate.cpp; this file only moves messages.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "am_proto.h"
#include "message_stream.h"
#include "progress.h"

struct oscf_win;

namespace oscf {

// Not an error: what a window's serve_am returns for a request it cannot apply yet (a
// lock request while the lock is taken against it). The message layer then
// holds it, and everything after it from the same origin, until redispatch().
constexpr int kAmDeferred = 1;
// Not an error either: the window serves this request over time (it reads or writes the
// origin's memory first) and will answer() it. Until then later requests from the same
// origin to the same window wait, as behind a held lock request.
constexpr int kAmLater = 2;
// Not an error: as kAmLater, but later requests need not wait (the same put's next
// chunk, kAmChunkFollows); the window will reply() when it is done.
constexpr int kAmDetached = 3;

// The origin side of one request in flight: where the reply's data goes, and the
// counter to complete.
struct AmRequest {
    Completion *counter = nullptr;
    void *result = nullptr;  // may be nullptr: nothing fetched
    size_t result_bytes = 0;
    oscf_type result_type = OSCF_TYPE_UINT8;  // what the fetched data holds (copy_elements)
    uint32_t generation = 0;
    bool in_use = false;
};

class ActiveMessages final : public Abortable {
public:
    ActiveMessages(Fabric &fab, Progress &progress);
    ~ActiveMessages();
    ActiveMessages(const ActiveMessages &) = delete;
    ActiveMessages &operator=(const ActiveMessages &) = delete;

    int start(size_t receive_buffers);

    void add_window(uint64_t id, oscf_win *win) { windows_[id] = win; }
    oscf_win *window(uint64_t id) const {
        auto it = windows_.find(id);
        return it == windows_.end() ? nullptr : it->second;
    }
    void remove_window(uint64_t id);

    // A request whose reply completes `counter` (and copies up to result_bytes of
    // fetched data, elements of `type`, to result). Returns its token.
    uint64_t new_request(Completion *counter, void *result, size_t result_bytes,
                         oscf_type type = OSCF_TYPE_UINT8);

    // Sends header + two payload pieces (copied; the caller's buffers are free at once).
    // Never fails with -FI_EAGAIN: the send is queued for progress instead.
    int send(fi_addr_t dest, const AmHeader &hdr, const void *p1, size_t n1, const void *p2 = nullptr,
             size_t n2 = 0);

    // Called by a receive buffer's completion.
    void on_receive(const uint8_t *msg, size_t len);

    // The reply to a request its window served later (kAmLater); then serves what
    // waited behind it.
    void answer(uint64_t window_id, uint32_t origin_rank, uint64_t token, int status);
    // The reply to a request served kAmDetached.
    void reply(uint64_t window_id, uint32_t origin_rank, uint64_t token, int status);

    // The engine failed (Progress::fail): no reply will be read, so every request
    // still waiting for one completes with `status`.
    void abort(int status) override;

    uint64_t requests_served() const { return served_; }
    uint64_t request_bytes() const { return request_bytes_; }  // payload of requests sent (MPI_T)

    // Runs the held requests of one window again, in arrival order per origin: called
    // whenever that window's lock word lost an exclusive holder.
    void redispatch(uint64_t window_id);
    // Looks again at held requests whose window's lock word an on-node peer may have
    // released with a CPU atomic, which sends us nothing (route.cpp). Cheap when none.
    void retry_held();

private:
    // reply()'s work: false when the window or the origin is gone (and dropped).
    bool reply_sent(uint64_t window_id, uint32_t origin_rank, uint64_t token, int status);
    class RecvBuffer;
    class SendBuffer;

    int post_receive(RecvBuffer &b);
    void repost(RecvBuffer &b);
    void fail_request(uint64_t token, int status);
    bool parse(const uint8_t *msg, size_t len, AmHeader *h) const;
    void handle_request(const AmHeader &h, const uint8_t *payload, size_t len);
    void serve_stored(const std::vector<uint8_t> &msg);
    void handle_reply(const AmHeader &h, const uint8_t *payload, size_t len);
    SendBuffer *take_send_buffer();
    void release(SendBuffer *b);

    Fabric &fab_;
    Progress &progress_;
    std::vector<std::unique_ptr<RecvBuffer>> receives_;
    std::vector<std::unique_ptr<SendBuffer>> send_pool_;  // all send buffers ever made
    std::vector<SendBuffer *> free_sends_;
    std::vector<AmRequest> requests_;  // indexed by token's low 32 bits
    std::vector<uint32_t> free_requests_;
    std::unordered_map<uint64_t, oscf_win *> windows_;
    // Held requests (whole messages) by (window id, origin rank); ordered so redispatch
    // finds one window's entries together. Empty except while a lock is contended.
    std::map<std::pair<uint64_t, uint32_t>, std::deque<std::vector<uint8_t>>> held_;
    // (window id, origin rank) with a request served later and not yet answered.
    std::set<std::pair<uint64_t, uint32_t>> later_;
    void replay(const std::pair<uint64_t, uint32_t> &key);
    // Per (window id, origin rank): its requests in the order sent (message_stream.h).
    std::map<std::pair<uint64_t, uint32_t>, MessageStream> streams_;
    uint64_t served_ = 0;
    uint64_t request_bytes_ = 0;
    bool closing_ = false;
};

}  // namespace oscf
