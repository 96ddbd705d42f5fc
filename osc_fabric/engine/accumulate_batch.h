// One target's emulated accumulates waiting to leave as one kAmBatch message
// (accumulate_batch.cpp sends it): records in program order, each an AmRecord and its
// data, in a buffer of one message's payload. The rules here are what a batch may hold
// and how it empties; when it leaves is the window's business.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "am_proto.h"

namespace oscf {

class AccumulateBatch {
public:
    // Elements of `size` bytes that one record may carry.
    static constexpr size_t elements_per_record(size_t size) {
        return (kAmMaxPayload - sizeof(AmRecord)) / size;
    }

    bool empty() const { return records_ == 0; }
    uint32_t records() const { return records_; }
    size_t bytes() const { return len_; }
    const uint8_t *data() const { return buf_.get(); }

    // Whether a record of `bytes` data fits behind the ones already here.
    bool fits(size_t bytes) const { return len_ + am_record_bytes(bytes) <= kAmMaxPayload; }
    // Appends r and its data; the caller made room (fits). The buffer is allocated at
    // the first record: most peers of a window never get an emulated accumulate.
    void append(const AmRecord &r, const void *data, size_t bytes) {
        if (!buf_) buf_ = std::make_unique<uint8_t[]>(kAmMaxPayload);
        len_ += am_record_write(buf_.get() + len_, r, data, bytes);
        ++records_;
    }
    // After the message left (its bytes were copied or sent): empty again, buffer kept.
    void clear() {
        len_ = 0;
        records_ = 0;
    }

    // On the window's list of batches to send before the next wait. True when this call
    // listed it, false when it was listed already.
    bool list() {
        if (listed_) return false;
        listed_ = true;
        return true;
    }
    void unlist() { listed_ = false; }

private:
    std::unique_ptr<uint8_t[]> buf_;
    size_t len_ = 0;
    uint32_t records_ = 0;
    bool listed_ = false;
};

}  // namespace oscf
