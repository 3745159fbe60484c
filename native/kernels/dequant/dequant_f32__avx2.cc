// SPDX-License-Identifier: Apache-2.0
// AVX2 dequantization: 8 k-bit indices (one k-byte group) per step, unpacked with vpshufb + vpsrlvd and
// looked up with a vpermps/vblendvps tree (k <= 6) or vgatherdps (k = 7, 8); the head, the tail and the loop
// are dequant_impl.h's.
#include <immintrin.h>

#include <cstring>

#include "kernels/dequant/dequant_impl.h"

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

// Tables for vpermps, zero-padded to whole vectors (k = 2 has 4 centroids); two groups per loop step.
template <int k>
struct Group {
    static constexpr int unroll = 2;
    Unpack u = make_unpack(k);
    __m256 t[8];
    const float* c;
    explicit Group(const float* centroids) : c(centroids) {
        if constexpr (k <= 6) {
            alignas(32) float padded[64] = {0};
            std::memcpy(padded, centroids, sizeof(float) * (1 << k));
            for (int j = 0; j < 8; ++j) t[j] = _mm256_load_ps(padded + 8 * j);
        }
    }
    void operator()(const uint8_t* p, float* out) const { _mm256_storeu_ps(out, lookup<k>(unpack8(p, u), t, c)); }
};

}  // namespace

void dequant_f32__avx2(const uint8_t* packed, int bits, const float* centroids, int64_t begin, int64_t end,
                       float* out) {
    dequant_groups<Group>(packed, bits, centroids, begin, end, out);
}

}  // namespace flexpipe
