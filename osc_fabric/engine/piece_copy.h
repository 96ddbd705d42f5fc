// Moving a run's pieces (count pieces of len bytes, stride apart) to or from another run
// or a packed buffer. Derived-datatype layouts are often thousands of pieces of a few
// dozen bytes: an out-of-line memcpy per piece costs more than the move itself, so the
// common small sizes get a load and a store the compiler sees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace oscf {

// k pieces of N bytes, ss apart from s, to ds apart from d.
template <size_t N>
inline void copy_fixed(uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss, size_t k) {
    for (size_t i = 0; i < k; ++i, d += ds, s += ss) {
        uint8_t tmp[N];  // loaded whole before the store: the two may overlap
        std::memcpy(tmp, s, N);
        std::memcpy(d, tmp, N);
    }
}

// n bytes, loaded before any is stored (the two may overlap); the small sizes without a
// call.
inline void move_bytes(uint8_t *d, const uint8_t *s, size_t n) {
    if (n >= 4 && n <= 16) {
        if (n >= 8) {
            uint64_t head, tail;
            std::memcpy(&head, s, 8);
            std::memcpy(&tail, s + n - 8, 8);
            std::memcpy(d, &head, 8);
            std::memcpy(d + n - 8, &tail, 8);
        } else {
            uint32_t head, tail;
            std::memcpy(&head, s, 4);
            std::memcpy(&tail, s + n - 4, 4);
            std::memcpy(d, &head, 4);
            std::memcpy(d + n - 4, &tail, 4);
        }
        return;
    }
    std::memmove(d, s, n);
}

// k pieces of len bytes, ss apart from s, to ds apart from d. A put to ourselves may
// name overlapping memory on both sides, hence moves, not copies. From 64 bytes the
// library's memmove (wider registers than this build may assume) moves a piece faster
// than four 16-byte loads and stores (perf/README.md, "Measurements behind design
// choices").
inline void copy_pieces(uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss, size_t len, size_t k) {
    switch (len) {
    case 4: return copy_fixed<4>(d, ds, s, ss, k);
    case 8: return copy_fixed<8>(d, ds, s, ss, k);
    case 16: return copy_fixed<16>(d, ds, s, ss, k);
    case 32: return copy_fixed<32>(d, ds, s, ss, k);
    default:
        for (size_t i = 0; i < k; ++i, d += ds, s += ss) std::memmove(d, s, len);
    }
}

}  // namespace oscf
