// Moving a run's pieces (count pieces of len bytes, stride apart) to or from another run
// or a packed buffer. Derived-datatype layouts are often thousands of pieces of a few
// dozen bytes: an out-of-line memcpy per piece costs more than the move itself, so the
// common small sizes get a load and a store the compiler sees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "osc_fabric/engine.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace oscf {

// k pieces of N bytes, ss apart from s, to ds apart from d. A piece is held whole in
// registers (words of up to 16 bytes, which every target's vector unit or the compiler's
// lowering handles) before it is stored: the two may overlap. A byte array here instead
// left GCC storing every piece to the stack as well, a dead store.
template <size_t N>
inline void copy_fixed(uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss, size_t k) {
    constexpr size_t W = N < 16 ? N : 16, L = N / W;
    static_assert(L * W == N);
    typedef uint8_t Word __attribute__((vector_size(W)));
    for (size_t i = 0; i < k; ++i, d += ds, s += ss) {
        Word v[L];
        for (size_t j = 0; j < L; ++j) std::memcpy(&v[j], s + j * W, W);
        for (size_t j = 0; j < L; ++j) std::memcpy(d + j * W, &v[j], W);
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

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define OSCF_PIECE_COPY_X86 1
// copy_fixed with 32-byte registers, for a CPU that has them (have_avx2): x86-64's
// baseline stops at 16. At 64 and 128 bytes these beat the library's memmove, which
// 16-byte moves through a byte array had not (perf/README.md, "Measurements behind
// design choices"); without AVX2 those sizes stay with memmove. Intrinsics, because
// GCC's generic tuning splits (or spills) 32-byte vector types outside them.
//
// Each piece also asks for the lines of the piece kPrefetchPieces ahead on both sides.
// Pieces a stride apart, one or two lines each, are too sparse for the hardware's
// prefetchers to run ahead of, so every piece waited on its lines: 128-byte pieces
// moved slower than 64-byte ones (perf/README.md, "Measurements behind design
// choices"). A prefetch never faults, so those past the last piece are harmless; the
// addresses are integers so that no pointer leaves its object.
constexpr int64_t kPrefetchPieces = 16;
template <size_t N>
__attribute__((target("avx2"))) void copy_fixed_avx2(uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss,
                                                     size_t k) {
    static_assert(N == 32 || N == 64 || N == 128);
    constexpr size_t L = N / 32;
    for (size_t i = 0; i < k; ++i, d += ds, s += ss) {
        const uintptr_t s_ahead = reinterpret_cast<uintptr_t>(s) + kPrefetchPieces * ss;
        const uintptr_t d_ahead = reinterpret_cast<uintptr_t>(d) + kPrefetchPieces * ds;
        for (size_t line = 0; line < N; line += 64) {
            __builtin_prefetch(reinterpret_cast<const void *>(s_ahead + line), 0, 3);
            __builtin_prefetch(reinterpret_cast<const void *>(d_ahead + line), 1, 3);
        }
        const __m256i *from = reinterpret_cast<const __m256i *>(s);
        __m256i *to = reinterpret_cast<__m256i *>(d);
        const __m256i v0 = _mm256_loadu_si256(from);
        const __m256i v1 = L > 1 ? _mm256_loadu_si256(from + 1) : v0;
        const __m256i v2 = L > 2 ? _mm256_loadu_si256(from + 2) : v0;
        const __m256i v3 = L > 2 ? _mm256_loadu_si256(from + 3) : v0;
        _mm256_storeu_si256(to, v0);
        if constexpr (L > 1) _mm256_storeu_si256(to + 1, v1);
        if constexpr (L > 2) {
            _mm256_storeu_si256(to + 2, v2);
            _mm256_storeu_si256(to + 3, v3);
        }
    }
}

inline bool have_avx2() {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}
#endif

// k pieces of len bytes, ss apart from s, to ds apart from d. A put to ourselves may
// name overlapping memory on both sides, hence moves, not copies (every fixed-size copy
// loads a piece whole before storing it).
inline void copy_pieces(uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss, size_t len, size_t k) {
    switch (len) {
    case 4: return copy_fixed<4>(d, ds, s, ss, k);
    case 8: return copy_fixed<8>(d, ds, s, ss, k);
    case 16: return copy_fixed<16>(d, ds, s, ss, k);
#ifdef OSCF_PIECE_COPY_X86
    case 32: return have_avx2() ? copy_fixed_avx2<32>(d, ds, s, ss, k) : copy_fixed<32>(d, ds, s, ss, k);
    case 64:
        if (have_avx2()) return copy_fixed_avx2<64>(d, ds, s, ss, k);
        break;
    case 128:
        if (have_avx2()) return copy_fixed_avx2<128>(d, ds, s, ss, k);
        break;
#else
    case 32: return copy_fixed<32>(d, ds, s, ss, k);
#endif
    }
    for (size_t i = 0; i < k; ++i, d += ds, s += ss) std::memmove(d, s, len);
}

// Whether k pieces of len bytes at d (ds apart) and at s (ss apart) share a byte.
inline bool pieces_overlap(const uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss, size_t len, size_t k) {
    auto span = [&](const uint8_t *p, int64_t stride, uintptr_t *lo, uintptr_t *hi) {
        const auto a = reinterpret_cast<uintptr_t>(p);
        const auto last = a + static_cast<uintptr_t>(stride * static_cast<int64_t>(k - 1));
        *lo = stride < 0 ? last : a;
        *hi = (stride < 0 ? a : last) + len;
    };
    uintptr_t dlo, dhi, slo, shi;
    span(d, ds, &dlo, &dhi);
    span(s, ss, &slo, &shi);
    return dlo < shi && slo < dhi;
}

#ifdef OSCF_PIECE_COPY_X86
// copy_pieces with non-temporal stores, for pieces of whole cache lines (d, ds and len
// multiples of 64) that do not overlap: they write the destination's lines without
// first reading them into the cache. A copy of many scattered pieces larger than the
// cache otherwise reads every line it writes and, through the prefetchers, lines of the
// gaps around it too: far more traffic than a memcpy of the same bytes (perf/README.md,
// "Measurements behind design choices"). Only whole lines: a line written partly this
// way and partly by ordinary stores costs far more than either. The source is asked for
// kPrefetchPieces ahead, as in copy_fixed_avx2, and marked as read once. The fence
// orders these stores before whatever the caller stores next (a completion, a flag
// another process reads).
__attribute__((target("avx2"))) inline void stream_lines_avx2(uint8_t *d, int64_t ds, const uint8_t *s,
                                                              int64_t ss, size_t len, size_t k) {
    for (size_t i = 0; i < k; ++i, d += ds, s += ss) {
        const uintptr_t s_ahead = reinterpret_cast<uintptr_t>(s) + kPrefetchPieces * ss;
        for (size_t at = 0; at < len; at += 64)
            __builtin_prefetch(reinterpret_cast<const void *>(s_ahead + at), 0, 0);
        for (size_t at = 0; at < len; at += 64) {
            const __m256i *from = reinterpret_cast<const __m256i *>(s + at);
            __m256i *to = reinterpret_cast<__m256i *>(d + at);
            const __m256i v0 = _mm256_loadu_si256(from), v1 = _mm256_loadu_si256(from + 1);
            _mm256_stream_si256(to, v0);
            _mm256_stream_si256(to + 1, v1);
        }
    }
    _mm_sfence();
}
#endif

// Whether copy_pieces_uncached takes the cache's way round for these pieces: whole
// lines at the destination (its start, stride and length multiples of 64 bytes), no
// byte shared with the source, and a CPU with the stores for it.
inline bool streams_lines(const uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss, size_t len, size_t k) {
#ifdef OSCF_PIECE_COPY_X86
    const bool lines = (reinterpret_cast<uintptr_t>(d) | static_cast<uint64_t>(ds) | len) % 64 == 0;
    return lines && len > 0 && k > 0 && have_avx2() && !pieces_overlap(d, ds, s, ss, len, k);
#else
    (void)d, (void)ds, (void)s, (void)ss, (void)len, (void)k;
    return false;
#endif
}

// n bytes, as memmove: when they do not overlap and are OSCF_UNCACHED_COPY_BYTES or more,
// the destination's whole lines go round the cache and the partial ones at either end
// take ordinary stores.
inline void move_block(uint8_t *d, const uint8_t *s, size_t n) {
#ifdef OSCF_PIECE_COPY_X86
    if (n >= OSCF_UNCACHED_COPY_BYTES && have_avx2() && !pieces_overlap(d, 0, s, 0, n, 1)) {
        const size_t head = -reinterpret_cast<uintptr_t>(d) & 63, lines = (n - head) / 64;
        std::memcpy(d, s, head);
        stream_lines_avx2(d + head, 64, s + head, 64, 64, lines);
        std::memcpy(d + head + lines * 64, s + head + lines * 64, n - head - lines * 64);
        return;
    }
#endif
    std::memmove(d, s, n);
}

// copy_pieces for a copy whose whole is larger than the cache (the caller knows the
// whole): pieces of whole lines go round the cache (streams_lines).
inline void copy_pieces_uncached(uint8_t *d, int64_t ds, const uint8_t *s, int64_t ss, size_t len, size_t k) {
#ifdef OSCF_PIECE_COPY_X86
    if (streams_lines(d, ds, s, ss, len, k)) return stream_lines_avx2(d, ds, s, ss, len, k);
#endif
    copy_pieces(d, ds, s, ss, len, k);
}

}  // namespace oscf
