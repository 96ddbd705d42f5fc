// One put, get or accumulate in the layout form (packed_layout.cpp) sent as several
// messages or rendezvous chunks, completing once: the first failure is its status;
// after its last part (and the sender's own, held until every part is out) a get's bytes
// not unpacked yet (unpack_upto) are unpacked in order, the caller's packer is released,
// and the operation's counter or request completes. Owns itself until then.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "osc_fabric/engine.h"
#include "progress.h"

namespace oscf {

class PackedParts : public Completion {
public:
    void expect() { ++pending_; }
    void complete(int status, size_t) override {
        if (status != OSCF_OK && status_ == OSCF_OK) status_ = status;
        if (--pending_ > 0) return;
        unpack_upto(unpack_.size());
        if (pk_.release) pk_.release(pk_.arg);
        done();
        Completion *next = next_;
        const int st = status_;
        delete this;
        next->complete(st, 0);
    }

protected:
    PackedParts(const oscf_packer &pk, Completion *next) : pk_(pk), next_(next) {}
    virtual ~PackedParts() = default;
    // A get's bytes, len of them at `at`: unpacked after the last part, in call order.
    void unpack_later(const uint8_t *at, size_t len) { unpack_.emplace_back(at, len); }
    // Unpacks the bytes of unpack_later's calls before the k-th that are not yet, once
    // they are in; the rest wait for the last part.
    void unpack_upto(size_t k) {
        for (; status_ == OSCF_OK && unpacked_ < k && unpacked_ < unpack_.size(); ++unpacked_)
            if (pk_.unpack(pk_.arg, unpack_[unpacked_].first, unpack_[unpacked_].second) != OSCF_OK)
                status_ = OSCF_ERR_INTERNAL;
    }
    // After the unpacking, before the operation completes.
    virtual void done() {}

private:
    oscf_packer pk_;
    Completion *next_;
    std::vector<std::pair<const uint8_t *, size_t>> unpack_;
    size_t unpacked_ = 0;  // unpack_'s first entry not unpacked yet
    size_t pending_ = 1;   // the sender's part
    int status_ = OSCF_OK;
};

}  // namespace oscf
