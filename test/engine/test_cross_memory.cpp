// Cross-memory copies (cross_memory.h), to and from this very process: the kernel takes
// our own pid as it takes a peer's, so the iovec batching, the merging of adjacent
// pieces and the error paths are checked without a second process.
#include "catch_compat.h"

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "../../osc_fabric/engine/cross_memory.h"

using oscf::CrossCopy;

namespace {

uint64_t addr(const void *p) {
    return reinterpret_cast<uintptr_t>(p);
}

// n pieces of len bytes: from src at a stride of 2 * len to dst at 3 * len (a write), or
// back (a read); returns the copy's calls.
size_t strided(bool write, std::vector<uint8_t> &near, std::vector<uint8_t> &far, size_t n, size_t len) {
    CrossCopy c(getpid(), write);
    for (size_t i = 0; i < n; ++i)
        REQUIRE(c.add(near.data() + 2 * len * i, addr(far.data() + 3 * len * i), len) == 0);
    REQUIRE(c.finish() == 0);
    CHECK(c.bytes() == n * len);
    return c.calls();
}

}  // namespace

TEST_CASE("cross-memory copies batch pieces by the kernel's iovec limit", "[cross_memory]") {
    const size_t len = 8, n = 2 * CrossCopy::kIovMax + 5;
    std::vector<uint8_t> near(2 * len * n), far(3 * len * n, 0);
    for (size_t i = 0; i < near.size(); ++i) near[i] = static_cast<uint8_t>(i * 7 + 1);
    CHECK(strided(true, near, far, n, len) == 3);
    for (size_t i = 0; i < n; ++i)
        for (size_t b = 0; b < 3 * len; ++b)
            REQUIRE(far[3 * len * i + b] == (b < len ? near[2 * len * i + b] : 0));

    std::vector<uint8_t> back(near.size(), 0);
    CHECK(strided(false, back, far, n, len) == 3);
    for (size_t i = 0; i < n; ++i)
        for (size_t b = 0; b < 2 * len; ++b)
            REQUIRE(back[2 * len * i + b] == (b < len ? near[2 * len * i + b] : 0));
}

TEST_CASE("cross-memory pieces that follow each other on both sides are one", "[cross_memory]") {
    const size_t len = 16, n = 3 * CrossCopy::kIovMax;
    std::vector<uint8_t> src(len * n), dst(len * n, 0);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i + 3);
    CrossCopy c(getpid(), true);
    for (size_t i = 0; i < n; ++i) REQUIRE(c.add(src.data() + len * i, addr(dst.data() + len * i), len) == 0);
    REQUIRE(c.finish() == 0);
    CHECK(c.calls() == 1);
    CHECK(dst == src);
}

TEST_CASE("cross-memory failures come back as errno, nothing written after", "[cross_memory]") {
    uint64_t word = 0x1234567890abcdefULL, got = 0;
    REQUIRE(oscf::cross_read(getpid(), addr(&word), &got, sizeof got) == 0);
    CHECK(got == word);
    // No such address in our process (the first page is never mapped).
    CHECK(oscf::cross_read(getpid(), 8, &got, sizeof got) == EFAULT);
    // No such process: pids stop below this.
    CHECK(oscf::cross_read(static_cast<pid_t>(0x7ffffff0), addr(&word), &got, sizeof got) == ESRCH);

    // A bad piece behind good ones: the good ones move, then its errno.
    std::vector<uint8_t> src(64, 9), dst(64, 0);
    CrossCopy c(getpid(), true);
    REQUIRE(c.add(src.data(), addr(dst.data()), 32) == 0);
    REQUIRE(c.add(src.data() + 32, 8, 32) == 0);
    CHECK(c.finish() == EFAULT);
    CHECK(c.bytes() == 32);
    for (size_t i = 0; i < 64; ++i) REQUIRE(dst[i] == (i < 32 ? 9 : 0));
    CHECK_FALSE(oscf::cross_memory_refused(EFAULT));
    CHECK(oscf::cross_memory_refused(EPERM));
}
