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
#include "run_batches.h"
#include "run_codec.h"
#include "osc_fabric/engine.h"

namespace oscf {

// Every room the engine cuts for takes any run, its padding and a piece of the largest
// element, so each message carries something (the largest oscf_type is 32 bytes).
static_assert(kAmMaxPayload > 5 * kRunBytesMax + kRunsAlign + 32, "a message takes any run");
static_assert(kInlineRunsMax > 5 * kRunBytesMax + kRunsAlign, "a get chunk takes any run");

class RunCursor {
public:
    // delta: added to every offset, turning the caller's offsets into the target's
    // (AmHeader::offset) ones.
    // unit: pieces are split only at multiples of it (an accumulate's element size).
    RunCursor(const oscf_run *runs, size_t n, uint64_t delta, size_t unit = 1)
        : runs_(runs), n_(n), delta_(delta), unit_(unit) {
        skip_empty();
    }
    // The runs a batch at a time from a source (engine.h, oscf_run_source), fetched as
    // the cut reaches the end of the last batch.
    RunCursor(const oscf_run_source &source, uint64_t delta, size_t unit = 1)
        : batches_(source), batch_(kSourceBatch), delta_(delta), unit_(unit) {
        skip_empty();
    }
    // A copy's runs_ would point into the original's batch.
    RunCursor(const RunCursor &) = delete;
    RunCursor &operator=(const RunCursor &) = delete;

    bool done() const { return i_ == n_; }
    // A source's failure, which also ended the runs (done()); OSCF_OK otherwise.
    int status() const { return batches_.status(); }

    // What one message may carry: runs (their wire form, run_codec.h) up to desc bytes,
    // their pieces' bytes up to data, and both together up to total.
    struct Room {
        size_t desc, data, total;
    };
    // A put's message: runs and their bytes share it.
    static Room shared(size_t room) { return Room{room, room, room}; }
    // A get's message: runs in the request, their bytes in the reply.
    static Room split(size_t room) { return Room{room, room, SIZE_MAX}; }

    // The most that messages of shared(room) take for runs of `bytes` bytes whose wire
    // form, uncut, is runs_bytes (WireSize), known without cutting them (a cut costs
    // what the transfer's bookkeeping does). Every message but the last is full but for
    // less than a run and a unit. A cut inside a piece turns its run into four (the
    // pieces before, the piece's head; its tail, the pieces after), and a message's first
    // run counts from 0 instead of the run before: each message adds at most four runs,
    // and its padding.
    static size_t shared_bound(size_t runs_bytes, size_t bytes, size_t unit, size_t room) {
        const size_t whole = runs_bytes + bytes;
        const size_t per_message = room - 5 * kRunBytesMax - kRunsAlign - unit;
        return whole + (whole / per_message + 1) * (4 * kRunBytesMax + kRunsAlign);
    }
    // The next message's runs, into out (cleared first, room left for its pad()); returns
    // their pieces' bytes. Each run is written, then dropped if it passed the runs' room:
    // sizing it first would encode its varints twice, and this is the origin's hot path.
    size_t next(RunList &out, Room room) {
        out.clear();
        const size_t desc_limit = room.desc - (kRunsAlign - 1);
        size_t data = 0;
        while (!done() && data < room.data) {
            const oscf_run &r = runs_[i_];
            const uint64_t first =
                delta_ + static_cast<uint64_t>(r.offset) + static_cast<uint64_t>(r.stride) * piece_ + byte_;
            // The bytes left, as if this run took the most a run can.
            const size_t desc_most = out.bytes() + kRunsAlign - 1 + kRunBytesMax;
            if (desc_most + data >= room.total) break;
            const size_t left = std::min(room.data - data, room.total - desc_most - data);
            if (byte_ > 0 || r.len > left) {
                // Part of one piece: what fits of it, in whole units.
                const size_t take = std::min(r.len - byte_, left / unit_ * unit_);
                if (take == 0 || !out.add_within(AmRun{first, 0, static_cast<uint32_t>(take), 1}, desc_limit))
                    break;
                data += take;
                byte_ += take;
                if (byte_ == r.len) {
                    byte_ = 0;
                    advance(1);
                }
            } else {
                const size_t m = std::min({r.count - piece_, left / r.len, size_t{UINT32_MAX}});
                if (!out.add_within(
                        AmRun{first, r.stride, static_cast<uint32_t>(r.len), static_cast<uint32_t>(m)},
                        desc_limit))
                    break;
                data += m * r.len;
                advance(m);
            }
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
        for (;;) {
            while (i_ < n_ && (runs_[i_].len == 0 || runs_[i_].count == 0)) ++i_;
            if (i_ < n_ || !batches_.open()) return;
            runs_ = batch_.data();
            n_ = batches_.fetch(batch_.data(), batch_.size());
            i_ = 0;
        }
    }
    // Runs fetched from a source at a time: enough that a fetch costs little against the
    // runs' cut, few enough to stay in cache between the walk that writes them and the cut.
    static constexpr size_t kSourceBatch = 1024;

    RunBatches batches_;  // none for a list of runs
    std::vector<oscf_run> batch_;
    const oscf_run *runs_ = nullptr;
    size_t n_ = 0;
    uint64_t delta_;
    size_t unit_;
    size_t i_ = 0;      // current run
    size_t piece_ = 0;  // its next piece
    size_t byte_ = 0;   // bytes of that piece already sent (only when it did not fit)
};

}  // namespace oscf
