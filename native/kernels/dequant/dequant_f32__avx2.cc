// SPDX-License-Identifier: Apache-2.0
// AVX2 dequantization: 8 k-bit indices (one k-byte group) per step, unpacked with vpshufb + vpsrlvd and
// looked up with a vpermps/vblendvps tree (k <= 6) or vgatherdps (k = 7, 8); the unaligned head and the tail
// run __ref.
#include <immintrin.h>

#include <cstring>

#include "common/macros.h"
#include "kernels/dequant/dequant.h"
#include "kernels/dequant/dequant_bits.h"

namespace flexpipe {

namespace {

// Group of 8 indices starting at a multiple of 8 weights: index j sits at group bits [j*k, j*k + k), so
// in group bytes b = (j*k)/8 and b + 1, from bit (j*k)%8 on. vpshufb puts those two bytes in the low
// half of 32-bit lane j (the 8 group bytes are broadcast to both 128-bit halves, so lanes 4..7 address
// them alike); vpsrlvd by (j*k)%8 and a k-bit mask leave the index.
struct Unpack {
    __m256i shuffle;
    __m256i shift;
    __m256i mask;
};

Unpack make_unpack(int k) {
    alignas(32) int8_t ctl[32];
    alignas(32) int32_t sh[8];
    for (int j = 0; j < 8; ++j) {
        const int b = (j * k) >> 3;
        ctl[4 * j + 0] = static_cast<int8_t>(b);
        ctl[4 * j + 1] = static_cast<int8_t>(b + 1);  // <= 8: past the group only where the mask drops it
        ctl[4 * j + 2] = static_cast<int8_t>(-128);   // high bit set: vpshufb writes 0
        ctl[4 * j + 3] = static_cast<int8_t>(-128);
        sh[j] = (j * k) & 7;
    }
    Unpack u;
    u.shuffle = _mm256_load_si256(reinterpret_cast<const __m256i*>(ctl));
    u.shift = _mm256_load_si256(reinterpret_cast<const __m256i*>(sh));
    u.mask = _mm256_set1_epi32((1 << k) - 1);
    return u;
}

// The 8 indices of the group at p (reads p[0..8), of which the group uses p[0..k)).
inline __m256i unpack8(const uint8_t* p, const Unpack& u) {
    uint64_t q;
    std::memcpy(&q, p, 8);
    __m256i v = _mm256_set1_epi64x(static_cast<long long>(q));
    v = _mm256_shuffle_epi8(v, u.shuffle);
    v = _mm256_srlv_epi32(v, u.shift);
    return _mm256_and_si256(v, u.mask);
}

// centroids[idx]. k <= 6: vpermps picks within each 8-entry table (index bits 0..2), then a vblendvps
// tree chooses between tables by index bits 3, 4, 5 (vblendvps reads the sign bit, hence the shifts to
// bit 31). k = 7, 8 (16 and 32 tables): vgatherdps, faster here than a tree that deep.
template <int k>
inline __m256 lookup(__m256i idx, const __m256* t, const float* centroids) {
    if constexpr (k >= 7) {
        return _mm256_i32gather_ps(centroids, idx, 4);
    } else {
        constexpr int tables = k <= 3 ? 1 : 1 << (k - 3);
        __m256 p[tables];
        for (int j = 0; j < tables; ++j) p[j] = _mm256_permutevar8x32_ps(t[j], idx);
        if constexpr (tables >= 2) {
            const __m256 sel = _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28));
            for (int j = 0; j < tables / 2; ++j) p[j] = _mm256_blendv_ps(p[2 * j], p[2 * j + 1], sel);
        }
        if constexpr (tables >= 4) {
            const __m256 sel = _mm256_castsi256_ps(_mm256_slli_epi32(idx, 27));
            for (int j = 0; j < tables / 4; ++j) p[j] = _mm256_blendv_ps(p[2 * j], p[2 * j + 1], sel);
        }
        if constexpr (tables >= 8) {
            const __m256 sel = _mm256_castsi256_ps(_mm256_slli_epi32(idx, 26));
            p[0] = _mm256_blendv_ps(p[0], p[1], sel);
        }
        return p[0];
    }
}

template <int k>
void run(const uint8_t* packed, const float* centroids, int64_t begin, int64_t end, float* out) {
    // Tables for vpermps, zero-padded to whole vectors (k = 2 has 4 centroids).
    constexpr int entries = 1 << k;
    alignas(32) float padded[64] = {0};
    __m256 t[8];
    if constexpr (k <= 6) {
        std::memcpy(padded, centroids, sizeof(float) * entries);
        for (int j = 0; j < 8; ++j) t[j] = _mm256_load_ps(padded + 8 * j);
    }
    const Unpack u = make_unpack(k);
    int64_t i = (begin + 7) & ~int64_t{7};
    if (i > end) i = end;
    dequant_f32__ref(packed, k, centroids, begin, i, out);
    // Bytes the contract lets us read; the 8-byte group load must stay below it.
    const int64_t readable = (end * k + 7) >> 3;
    for (; i + 16 <= end && (i >> 3) * k + k + 8 <= readable; i += 16) {
        const uint8_t* p = packed + (i >> 3) * k;
        const __m256i a = unpack8(p, u);
        const __m256i b = unpack8(p + k, u);
        _mm256_storeu_ps(out + (i - begin), lookup<k>(a, t, centroids));
        _mm256_storeu_ps(out + (i - begin) + 8, lookup<k>(b, t, centroids));
    }
    for (; i + 8 <= end && (i >> 3) * k + 8 <= readable; i += 8)
        _mm256_storeu_ps(out + (i - begin), lookup<k>(unpack8(packed + (i >> 3) * k, u), t, centroids));
    dequant_f32__ref(packed, k, centroids, i, end, out + (i - begin));
}

}  // namespace

void dequant_f32__avx2(const uint8_t* packed, int bits, const float* centroids, int64_t begin, int64_t end,
                       float* out) {
    FLEXPIPE_DCHECK(bits >= 2 && bits <= 8 && begin >= 0 && begin <= end);
    with_dequant_bits(bits, [&](auto k) { run<decltype(k)::value>(packed, centroids, begin, end, out); });
}

}  // namespace flexpipe
