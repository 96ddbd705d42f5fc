// Cuts a target layout (oscf_run: count pieces of len bytes, stride apart) into the
// runs of successive messages. Each message gets whole runs, some pieces of one, or the
// part of one piece that still fits, so a 1 MiB piece and 16384 pieces of 64 bytes both
// fill messages to the brim. Pure bookkeeping, tested without a fabric
// (test/engine/test_run_cursor.cpp); packed_layout.cpp moves the bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "am_proto.h"
#include "osc_fabric/engine.h"

namespace oscf {

class RunCursor {
public:
    // delta: added to every offset, turning the caller's offsets into the target's
    // (AmHeader::offset) ones.
    RunCursor(const oscf_run *runs, size_t n, uint64_t delta) : runs_(runs), n_(n), delta_(delta) {
        skip_empty();
    }

    bool done() const { return i_ == n_; }

    // The next message's runs: their descriptions take sizeof(AmRun) each of `room`,
    // and their bytes take the rest (data_shares_room: a put, whose bytes travel with
    // them) or up to `room` of their own (a get, whose bytes come back in the reply).
    // Returns their bytes.
    size_t next(std::vector<AmRun> &out, size_t room, bool data_shares_room) {
        out.clear();
        size_t desc = 0, data = 0;
        while (!done()) {
            // What one more run's description and its bytes would share of room.
            const size_t desc_after = desc + sizeof(AmRun);
            const size_t used = data_shares_room ? desc_after + data : data;
            if (desc_after > room || used >= room) break;
            const size_t left = room - used;
            const oscf_run &r = runs_[i_];
            const uint64_t first = delta_ + static_cast<uint64_t>(r.offset) +
                                   static_cast<uint64_t>(r.stride) * piece_ + byte_;
            if (byte_ > 0 || r.len > left) {
                // Part of one piece: what fits of it.
                const size_t take = std::min(r.len - byte_, left);
                out.push_back(AmRun{first, 0, static_cast<uint32_t>(take), 1});
                data += take;
                byte_ += take;
                if (byte_ == r.len) {
                    byte_ = 0;
                    advance(1);
                }
            } else {
                const size_t m = std::min(r.count - piece_, left / r.len);
                out.push_back(AmRun{first, r.stride, static_cast<uint32_t>(r.len), static_cast<uint32_t>(m)});
                data += m * r.len;
                advance(m);
            }
            desc += sizeof(AmRun);
        }
        return data;
    }

private:
    void advance(size_t pieces) {
        piece_ += pieces;
        if (piece_ == runs_[i_].count) {
            piece_ = 0;
            ++i_;
            skip_empty();
        }
    }
    void skip_empty() {
        while (i_ < n_ && (runs_[i_].len == 0 || runs_[i_].count == 0)) ++i_;
    }

    const oscf_run *runs_;
    size_t n_;
    uint64_t delta_;
    size_t i_ = 0;      // current run
    size_t piece_ = 0;  // its next piece
    size_t byte_ = 0;   // bytes of that piece already sent (only when it did not fit)
};

}  // namespace oscf
