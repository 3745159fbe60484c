// SPDX-License-Identifier: Apache-2.0
// NEON dequantization: 8 k-bit indices (one k-byte group) per step, unpacked with vqtbl1q + vshlq and
// looked up as bytes in the centroid table (vqtbl4q/vqtbx4q, k <= 6) or by scalar loads (k = 7, 8);
// the head, the tail and the loop are dequant_impl.h's.
#include <arm_neon.h>

#include <cstring>

#include "kernels/dequant/dequant_impl.h"

namespace flexpipe {

namespace {

// Index j of a group sits at group bits [j*k, j*k + k): in bytes b = (j*k)/8 and b + 1, from bit
// (j*k)%8 on. vqtbl1q moves those two bytes into the low half of 32-bit lane j (control 0xff gives 0),
// vshlq by -(j*k)%8 shifts right, a k-bit mask leaves the index. Lanes 0..3 and 4..7 are two vectors.
struct Unpack {
    uint8x16_t ctl[2];
    int32x4_t shift[2];
    uint32x4_t mask;
};

Unpack make_unpack(int k) {
    uint8_t ctl[32];
    int32_t sh[8];
    for (int j = 0; j < 8; ++j) {
        const int b = (j * k) >> 3;
        ctl[4 * j + 0] = static_cast<uint8_t>(b);
        ctl[4 * j + 1] = static_cast<uint8_t>(b + 1);  // <= 8: past the group only where the mask drops it
        ctl[4 * j + 2] = 0xff;
        ctl[4 * j + 3] = 0xff;
        sh[j] = -((j * k) & 7);
    }
    Unpack u;
    u.ctl[0] = vld1q_u8(ctl);
    u.ctl[1] = vld1q_u8(ctl + 16);
    u.shift[0] = vld1q_s32(sh);
    u.shift[1] = vld1q_s32(sh + 4);
    u.mask = vdupq_n_u32((1u << k) - 1u);
    return u;
}

// The 8 indices of the group at p as two vectors of 4 (reads p[0..8), the group uses p[0..k)).
inline void unpack8(const uint8_t* p, const Unpack& u, uint32x4_t* lo, uint32x4_t* hi) {
    const uint8x8_t q = vld1_u8(p);
    const uint8x16_t src = vcombine_u8(q, q);
    *lo = vandq_u32(vshlq_u32(vreinterpretq_u32_u8(vqtbl1q_u8(src, u.ctl[0])), u.shift[0]), u.mask);
    *hi = vandq_u32(vshlq_u32(vreinterpretq_u32_u8(vqtbl1q_u8(src, u.ctl[1])), u.shift[1]), u.mask);
}

// centroids[idx] for k <= 6 as a byte lookup: float idx is table bytes 4*idx .. 4*idx + 3, so each lane
// becomes the byte indices idx * 0x04040404 + 0x03020100 (<= 255 for idx < 64). A 64-byte vqtbl4q
// table covers 16 centroids; vqtbx4q on the next 64 bytes (indices - 64) keeps lanes out of its range.
template <int k>
inline float32x4_t lookup(uint32x4_t idx, const uint8x16x4_t* tab) {
    const uint8x16_t bi =
        vreinterpretq_u8_u32(vmlaq_u32(vdupq_n_u32(0x03020100u), idx, vdupq_n_u32(0x04040404u)));
    uint8x16_t r = vqtbl4q_u8(tab[0], bi);
    constexpr int tables = k <= 4 ? 1 : 1 << (k - 4);
    for (int t = 1; t < tables; ++t)
        r = vqtbx4q_u8(r, tab[t], vsubq_u8(bi, vdupq_n_u8(static_cast<uint8_t>(64 * t))));
    return vreinterpretq_f32_u8(r);
}

// The centroid bytes as four 64-byte tables (k <= 6; k = 2, 3 have fewer than 16 centroids); scalar loads
// for k = 7, 8.
template <int k>
struct Group {
    static constexpr int unroll = 1;
    Unpack u = make_unpack(k);
    uint8x16x4_t tab[4];
    const float* c;
    explicit Group(const float* centroids) : c(centroids) {
        if constexpr (k <= 6) {
            alignas(16) float padded[64] = {0};
            std::memcpy(padded, centroids, sizeof(float) * (1 << k));
            for (int t = 0; t < 4; ++t) tab[t] = vld1q_u8_x4(reinterpret_cast<const uint8_t*>(padded + 16 * t));
        }
    }
    void operator()(const uint8_t* p, float* o) const {
        uint32x4_t lo, hi;
        unpack8(p, u, &lo, &hi);
        if constexpr (k <= 6) {
            vst1q_f32(o, lookup<k>(lo, tab));
            vst1q_f32(o + 4, lookup<k>(hi, tab));
        } else {
            uint32_t idx[8];
            vst1q_u32(idx, lo);
            vst1q_u32(idx + 4, hi);
            for (int j = 0; j < 8; ++j) o[j] = c[idx[j]];
        }
    }
};

}  // namespace

void dequant_f32__neon(const uint8_t* packed, int bits, const float* centroids, int64_t begin, int64_t end,
                       float* out) {
    dequant_groups<Group>(packed, bits, centroids, begin, end, out);
}

}  // namespace flexpipe
