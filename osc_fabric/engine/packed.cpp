// Small pieces of one put or get, packed into few messages (packed.h has why).
#include "packed.h"

#include <cstddef>
#include <cstring>

using namespace oscf;

namespace {

// The reply to one kAmGather: its bytes land in data, then go to their places, then
// the operation's counter (or request) completes. Owns itself until then.
class GatherReply final : public Completion {
public:
    GatherReply(std::vector<std::pair<char *, size_t>> places, size_t bytes, Completion *next)
        : places_(std::move(places)), data_(new uint8_t[bytes]), next_(next) {}
    uint8_t *data() { return data_.get(); }
    void complete(int status, size_t) override {
        if (status == OSCF_OK) {
            const uint8_t *at = data_.get();
            for (const auto &pl : places_) {
                std::memcpy(pl.first, at, pl.second);
                at += pl.second;
            }
        }
        Completion *next = next_;
        delete this;
        next->complete(status, 0);
    }

private:
    std::vector<std::pair<char *, size_t>> places_;
    std::unique_ptr<uint8_t[]> data_;
    Completion *next_;
};

constexpr size_t kRecordsPerGather = kAmMaxPayload / sizeof(AmGatherRecord);

}  // namespace

bool oscf_win::Packed::extend_put(const char *local, size_t len, uint64_t offset) {
    if (!put_open_ || offset != put_next_ || p_.batch_len != put_end_ ||
        p_.batch_records != put_records_ || p_.am_sent != put_stream_)
        return false;
    const size_t total = put_len_ + len;
    const size_t end = put_at_ + am_record_bytes(total);
    if (end > kAmMaxPayload) return false;
    uint8_t *rec = p_.batch.get() + put_at_;
    std::memcpy(rec + sizeof(AmRecord) + put_len_, local, len);
    std::memset(rec + sizeof(AmRecord) + total, 0, end - put_at_ - sizeof(AmRecord) - total);
    const auto count = static_cast<uint32_t>(total);
    std::memcpy(rec + offsetof(AmRecord, count), &count, sizeof count);
    p_.batch_len = put_end_ = end;
    put_len_ = total;
    put_next_ += len;
    return true;
}

int oscf_win::Packed::add(char *local, size_t len, uint64_t offset) {
    if (dir_ == Dir::write) {
        ++win_.stats.puts_batched;
        if (extend_put(local, len, offset)) return OSCF_OK;
        int rc = win_.batch_accumulate(p_, local, len, OSCF_TYPE_UINT8, OSCF_OP_REPLACE, offset);
        // Pieces are at most kPackedSegmentMax, so this was one record, the batch's last.
        put_open_ = rc == OSCF_OK;
        put_end_ = p_.batch_len;
        put_at_ = put_end_ - am_record_bytes(len);
        put_len_ = len;
        put_next_ = offset + len;
        put_records_ = p_.batch_records;
        put_stream_ = p_.am_sent;
        return rc;
    }
    if (!records_.empty() && records_.back().offset + records_.back().len == offset &&
        bytes_ + len <= kAmMaxPayload) {
        records_.back().len += static_cast<uint32_t>(len);
        places_.emplace_back(local, len);
        bytes_ += len;
        ++win_.stats.gets_as_messages;
        return OSCF_OK;
    }
    if (records_.size() == kRecordsPerGather || bytes_ + len > kAmMaxPayload) {
        int rc = send_gather();
        if (rc) return rc;
    }
    records_.push_back(AmGatherRecord{offset, static_cast<uint32_t>(len), 0});
    places_.emplace_back(local, len);
    bytes_ += len;
    ++win_.stats.gets_as_messages;
    return OSCF_OK;
}

int oscf_win::Packed::send_gather() {
    if (records_.empty()) return OSCF_OK;
    // Anything queued for the target (our lock request among it) leaves first.
    int rc = win_.send_batch(p_);
    if (rc) return rc;
    auto *reply = new GatherReply(std::move(places_), bytes_, scope_.context());
    AmHeader h = win_.am_request(p_, kAmGather, OSCF_TYPE_UINT8, OSCF_OP_NO_OP, kAmFetch,
                                 static_cast<uint32_t>(records_.size()), 0);
    h.token = win_.eng_.am->new_request(reply, reply->data(), bytes_);
    scope_.on_post();
    ++win_.stats.gather_messages;
    rc = win_.eng_.am->send(p_.addr, h, records_.data(), records_.size() * sizeof(AmGatherRecord));
    records_.clear();
    places_.clear();
    bytes_ = 0;
    if (rc) reply->complete(rc, 0);  // no reply will come
    return rc;
}

int oscf_win::serve_gather(const AmHeader &h, const uint8_t *payload, size_t len, uint8_t *out,
                           size_t *out_len) {
    if (len != size_t{h.count} * sizeof(AmGatherRecord)) return OSCF_ERR_ARG;
    size_t total = 0;
    for (uint32_t i = 0; i < h.count; ++i) {
        AmGatherRecord r;
        std::memcpy(&r, payload + i * sizeof r, sizeof r);
        if (r.len > kAmMaxPayload - total) return OSCF_ERR_ARG;
        const char *t = am_target(false, r.offset, r.len);
        if (!t) return OSCF_ERR_RMA_RANGE;
        std::memcpy(out + total, t, r.len);
        total += r.len;
    }
    *out_len = total;
    return OSCF_OK;
}
