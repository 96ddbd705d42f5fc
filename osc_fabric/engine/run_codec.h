// The wire form of a message's runs (AmRun). A layout of small irregular pieces has
// about one run per piece, so 24 fixed bytes a run made the runs weigh as much as the
// data they describe; over tcp every byte is copied at both ends. Here a run is a few
// varints (LEB128), each relative to where the run before it in the same message ended:
//   gap:    zigzag(offset - end of the previous run's last piece), the first run's from 0
//   shape:  len << 1 | (count > 1)
//   count, zigzag(stride - len):   only when count > 1
// A vector of adjacent small pieces costs two bytes a run. Decoding checks every length;
// a malformed list is refused (RunReader::ok). Pure code, tested in
// test/engine/test_run_codec.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "am_proto.h"

namespace oscf {

// The most one run can take: a 10-byte gap, a 5-byte shape, a 5-byte count, a 10-byte
// stride.
constexpr size_t kRunBytesMax = 30;
// A message's runs are padded with zeros to a multiple of this, so the data behind them
// stays aligned: reductions of misaligned operands take a slow path (atomic_types.cpp).
constexpr size_t kRunsAlign = 16;

namespace run_codec {

inline size_t varint_size(uint64_t v) {
    // 7 bits a byte; 0 takes one.
    return 1 + (63 - static_cast<size_t>(__builtin_clzll(v | 1))) / 7;
}
inline uint64_t zigzag(uint64_t v) {
    return (v << 1) ^ (0 - (v >> 63));
}
inline uint64_t unzigzag(uint64_t v) {
    return (v >> 1) ^ (0 - (v & 1));
}
inline uint8_t *put_varint(uint8_t *out, uint64_t v) {
    while (v >= 0x80) {
        *out++ = static_cast<uint8_t>(v | 0x80);
        v >>= 7;
    }
    *out++ = static_cast<uint8_t>(v);
    return out;
}

// Offsets and strides wrap modulo 2^64, as the target's offsets do (AmHeader::offset).
inline uint64_t run_end(uint64_t offset, int64_t stride, uint64_t len, uint64_t count) {
    return offset + static_cast<uint64_t>(stride) * (count - 1) + len;
}
inline uint64_t run_end(const AmRun &r) {
    return run_end(r.offset, r.stride, r.len, r.count);
}
// Bytes a run takes after a run that ended at `end` (WireSize; test_run_codec.cpp checks
// the writer writes exactly this).
inline size_t run_size(uint64_t end, uint64_t offset, int64_t stride, uint64_t len, uint64_t count) {
    size_t n = varint_size(zigzag(offset - end)) + varint_size(len << 1);
    if (count > 1) n += varint_size(count) + varint_size(zigzag(static_cast<uint64_t>(stride) - len));
    return n;
}

}  // namespace run_codec

// Encodes one message's runs, in order.
class RunWriter {
public:
    // Writes r at out (room for kRunBytesMax) as the next run, and returns the byte after
    // it; r is the next run only once committed (commit), so a run written past a
    // message's room is dropped by not committing it.
    uint8_t *encode(uint8_t *out, const AmRun &r) const {
        using namespace run_codec;
        out = put_varint(out, zigzag(r.offset - end_));
        out = put_varint(out, shape(r));
        if (r.count > 1) {
            out = put_varint(out, r.count);
            out = put_varint(out, zigzag(static_cast<uint64_t>(r.stride) - r.len));
        }
        return out;
    }
    void commit(const AmRun &r) { end_ = run_codec::run_end(r); }

private:
    static uint64_t shape(const AmRun &r) { return uint64_t{r.len} << 1 | (r.count > 1); }
    uint64_t end_ = 0;
};

// One message's runs as they travel, grown as the cursor adds them (RunCursor::next).
class RunList {
public:
    void clear() {
        len_ = 0;
        count_ = 0;
        w_ = RunWriter{};
    }
    void add(const AmRun &r) { add_within(r, SIZE_MAX); }
    // Adds r if the runs then take at most `limit` bytes; false (and nothing added) if not.
    bool add_within(const AmRun &r, size_t limit) {
        if (cap_ - len_ < kRunBytesMax) grow();
        const size_t len = static_cast<size_t>(w_.encode(buf_.get() + len_, r) - buf_.get());
        if (len > limit) return false;
        w_.commit(r);
        len_ = len;
        ++count_;
        return true;
    }
    // Pads the runs for the data behind them (kRunsAlign); returns their bytes. Nothing
    // may be added after.
    size_t pad() {
        const size_t padded = (len_ + kRunsAlign - 1) / kRunsAlign * kRunsAlign;
        if (cap_ < padded) grow();
        std::memset(buf_.get() + len_, 0, padded - len_);
        len_ = padded;
        return len_;
    }
    const uint8_t *data() const { return buf_.get(); }
    size_t bytes() const { return len_; }
    uint32_t count() const { return count_; }

private:
    void grow() {
        const size_t cap = cap_ ? 2 * cap_ : 1024;
        std::unique_ptr<uint8_t[]> b(new uint8_t[cap]);
        if (len_) std::memcpy(b.get(), buf_.get(), len_);
        buf_ = std::move(b);
        cap_ = cap;
    }
    std::unique_ptr<uint8_t[]> buf_;
    size_t cap_ = 0, len_ = 0;
    uint32_t count_ = 0;
    RunWriter w_;
};

// The wire form's size of a layout's runs, uncut, added in order; 64-bit fields, since a
// layout's runs may be larger than a message's (RunCursor cuts them).
class WireSize {
public:
    void add(uint64_t offset, int64_t stride, uint64_t len, uint64_t count) {
        total_ += run_codec::run_size(end_, offset, stride, len, count);
        end_ = run_codec::run_end(offset, stride, len, count);
    }
    size_t bytes() const { return total_; }

private:
    uint64_t end_ = 0;
    size_t total_ = 0;
};

// Decodes runs written by RunWriter from len bytes at p. next() is false at the end or
// at a malformed run; ok() then tells which.
class RunReader {
public:
    RunReader(const uint8_t *p, size_t len) : p_(p), end_(p + len) {}
    bool next(AmRun *r) {
        using namespace run_codec;
        if (p_ == end_) return false;
        uint64_t gap, shape, count = 1, stride = 0;
        if (!get(&gap) || !get(&shape) || shape >> 33) return fail();
        const uint32_t len = static_cast<uint32_t>(shape >> 1);
        if (shape & 1) {
            if (!get(&count) || count < 2 || count > UINT32_MAX || !get(&stride)) return fail();
            stride = unzigzag(stride) + len;
        }
        *r = AmRun{last_ + unzigzag(gap), static_cast<int64_t>(stride), len, static_cast<uint32_t>(count)};
        last_ = run_end(*r);
        return true;
    }
    // Every byte was a whole, well-formed run.
    bool ok() const { return !bad_ && p_ == end_; }
    // Every run was well formed, and what is left is RunList::pad's zeros.
    bool ok_padded() const {
        if (bad_ || static_cast<size_t>(end_ - p_) >= kRunsAlign) return false;
        for (const uint8_t *q = p_; q != end_; ++q)
            if (*q) return false;
        return true;
    }

private:
    bool get(uint64_t *v) {
        uint64_t x = 0;
        for (unsigned shift = 0; p_ != end_ && shift < 64; shift += 7) {
            const uint8_t b = *p_++;
            x |= uint64_t{b & 0x7fu} << shift;
            if (!(b & 0x80)) {
                *v = x;
                return true;
            }
        }
        return false;
    }
    bool fail() {
        bad_ = true;
        return false;
    }
    const uint8_t *p_, *end_;
    uint64_t last_ = 0;
    bool bad_ = false;
};

}  // namespace oscf
