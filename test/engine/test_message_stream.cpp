// The per-origin message stream (message_stream.h): requests are served in the order
// sent, whatever order they arrive in.
#include "catch_compat.h"

#include <cstring>
#include <vector>

#include "../../osc_fabric/engine/message_stream.h"

using namespace oscf;

namespace {
// Delivers `arrivals` (sequence numbers; each message carries its own number) as
// on_receive does and returns the order they were served in.
std::vector<uint32_t> serve(MessageStream &s, const std::vector<uint32_t> &arrivals) {
    std::vector<uint32_t> served;
    for (uint32_t seq : arrivals) {
        if (!s.is_next(seq)) {
            s.keep_early(seq, reinterpret_cast<const uint8_t *>(&seq), sizeof seq);
            continue;
        }
        served.push_back(seq);
        for (std::vector<uint8_t> m; s.advance(&m);) {
            uint32_t got;
            std::memcpy(&got, m.data(), sizeof got);
            served.push_back(got);
        }
    }
    return served;
}
}  // namespace

TEST_CASE("requests in order are served at once", "[stream]") {
    MessageStream s;
    CHECK(serve(s, {0, 1, 2, 3}) == std::vector<uint32_t>{0, 1, 2, 3});
    CHECK(s.waiting() == 0);
}

TEST_CASE("a request that overtook an earlier one waits for it", "[stream]") {
    MessageStream s;
    CHECK(serve(s, {1, 3, 2}).empty());
    CHECK(s.waiting() == 3);
    CHECK(serve(s, {0}) == std::vector<uint32_t>{0, 1, 2, 3});
    CHECK(s.waiting() == 0);
    CHECK(serve(s, {5, 4}) == std::vector<uint32_t>{4, 5});
}

TEST_CASE("sequence numbers wrap around", "[stream]") {
    MessageStream s(UINT32_MAX - 1);
    CHECK(serve(s, {0, UINT32_MAX, 1}).empty());
    CHECK(serve(s, {UINT32_MAX - 1}) == std::vector<uint32_t>{UINT32_MAX - 1, UINT32_MAX, 0, 1});
    CHECK(s.is_next(2));
}
