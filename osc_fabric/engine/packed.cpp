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

int oscf_win::Packed::add(char *local, size_t len, uint64_t offset) {
    // The first piece: what is queued for the target leaves first.
    if (!started_) {
        started_ = true;
        int rc = win_.send_batch(p_);
        if (rc) return rc;
    }
    return dir_ == Dir::write ? add_put(local, len, offset) : add_get(local, len, offset);
}

int oscf_win::Packed::add_put(const char *local, size_t len, uint64_t offset) {
    ++win_.stats.puts_batched;
    if (!out_) out_ = std::make_unique<uint8_t[]>(kAmMaxPayload);
    if (records_out_ && offset == last_next_ &&
        last_at_ + am_record_bytes(last_len_ + len) <= kAmMaxPayload) {
        // Continues the last record at the target: grow it.
        uint8_t *rec = out_.get() + last_at_;
        std::memcpy(rec + sizeof(AmRecord) + last_len_, local, len);
        last_len_ += len;
        const auto count = static_cast<uint32_t>(last_len_);
        std::memcpy(rec + offsetof(AmRecord, count), &count, sizeof count);
        out_len_ = last_at_ + am_record_pad(rec, last_len_);
    } else {
        if (out_len_ + am_record_bytes(len) > kAmMaxPayload) {
            int rc = send_put();
            if (rc) return rc;
        }
        AmRecord r{};
        r.offset = offset;
        r.count = static_cast<uint32_t>(len);
        r.type = OSCF_TYPE_UINT8;
        r.op = OSCF_OP_REPLACE;
        last_at_ = out_len_;
        last_len_ = len;
        out_len_ += am_record_write(out_.get() + last_at_, r, local, len);
        ++records_out_;
    }
    last_next_ = offset + len;
    return OSCF_OK;
}

int oscf_win::Packed::add_get(char *local, size_t len, uint64_t offset) {
    ++win_.stats.gets_as_messages;
    if (!records_.empty() && records_.back().offset + records_.back().len == offset &&
        bytes_ + len <= kAmMaxPayload) {
        records_.back().len += static_cast<uint32_t>(len);  // continues the last record
    } else {
        if (records_.size() == kRecordsPerGather || bytes_ + len > kAmMaxPayload) {
            int rc = send_gather();
            if (rc) return rc;
        }
        records_.push_back(AmGatherRecord{offset, static_cast<uint32_t>(len), 0});
    }
    places_.emplace_back(local, len);
    bytes_ += len;
    return OSCF_OK;
}

int oscf_win::Packed::send() {
    return dir_ == Dir::write ? send_put() : send_gather();
}

int oscf_win::Packed::send_put() {
    if (records_out_ == 0) return OSCF_OK;
    AmHeader h = win_.am_request(p_, kAmBatch, OSCF_TYPE_UINT8, OSCF_OP_REPLACE, 0, records_out_, 0);
    h.token = win_.eng_.am->new_request(scope_.context(), nullptr, 0);
    scope_.on_post();
    ++win_.stats.am_batches;
    const size_t len = out_len_;
    out_len_ = 0;
    records_out_ = 0;
    int rc = win_.eng_.am->send(p_.addr, h, out_.get(), len);
    if (rc) scope_.context()->complete(rc, 0);  // no reply will come
    return rc;
}

int oscf_win::Packed::send_gather() {
    if (records_.empty()) return OSCF_OK;
    auto *reply = new GatherReply(std::move(places_), bytes_, scope_.context());
    AmHeader h = win_.am_request(p_, kAmGather, OSCF_TYPE_UINT8, OSCF_OP_NO_OP, kAmFetch,
                                 static_cast<uint32_t>(records_.size()), 0);
    h.token = win_.eng_.am->new_request(reply, reply->data(), bytes_);
    scope_.on_post();
    ++win_.stats.gather_messages;
    int rc = win_.eng_.am->send(p_.addr, h, records_.data(), records_.size() * sizeof(AmGatherRecord));
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
