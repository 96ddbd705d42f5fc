// One origin's requests to one window, served in the order the origin sent them
// (AmHeader::seq), whatever order their receives complete in: tcp;ofi_rxm completes a
// message above its eager size after smaller ones sent behind it. A request that is
// not next waits here, copied, until the ones before it were served. Sequence numbers
// wrap; only equality is ever asked. Tested alone in test/engine/test_message_stream.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace oscf {

class MessageStream {
public:
    // first: the number of the first request (0; tests start elsewhere to see it wrap).
    explicit MessageStream(uint32_t first = 0) : next_(first) {}
    // Whether the request numbered seq is the one to serve now.
    bool is_next(uint32_t seq) const { return seq == next_; }
    // Keeps a request that arrived before its turn. (seq never falls behind: the
    // origin numbers each request once.)
    void keep_early(uint32_t seq, const uint8_t *msg, size_t len) {
        early_.emplace(seq, std::vector<uint8_t>(msg, msg + len));
    }
    // After the next request was served: moves the one now next to *out if it arrived
    // early and returns true; false when it has not arrived yet.
    bool advance(std::vector<uint8_t> *out) {
        auto it = early_.find(++next_);
        if (it == early_.end()) return false;
        *out = std::move(it->second);
        early_.erase(it);
        return true;
    }
    size_t waiting() const { return early_.size(); }

private:
    uint32_t next_ = 0;
    std::map<uint32_t, std::vector<uint8_t>> early_;
};

}  // namespace oscf
