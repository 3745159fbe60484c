// SPDX-License-Identifier: Apache-2.0
// Dequantization of k-bit cluster indices to float32 (the packed part of an FPQ1 shard blob).
//
// Layout: `packed` is an LSB-first bit stream of k-bit indices, 2 <= k <= 8; the index of weight i
// occupies stream bits [i*k, (i+1)*k), bit b of the stream being bit (b % 8) of byte b / 8. So 8
// consecutive weights starting at a multiple of 8 fill exactly k bytes, which is the unit every SIMD
// variant unpacks. Weight i dequantizes to centroids[index(i)]; outliers (FPQ1 keeps their exact value
// apart and stores index 0) are patched afterwards by the caller (runtime/ops/quant_dequantize.cc).
//
// Contract: out[i - begin] = centroids[index(i)] for i in [begin, end); 0 <= begin <= end; packed holds
// at least ceil(end*k/8) bytes and no variant reads a byte past that (blobs and typed arrays carry no
// over-read padding); centroids holds 1 << k floats; out holds end - begin floats; no alignment assumed.
// Single-threaded: runtime/ops splits the range over threads.
//
// Accuracy: exact. A variant only moves bits (unpack + table lookup, no arithmetic), so every variant
// equals __ref bit for bit, NaN payloads included; test/kernels/dequant.test.ts compares them.
#pragma once

#include <cstdint>

namespace flexpipe {

using DequantF32Fn = void (*)(const uint8_t* packed, int bits, const float* centroids, int64_t begin,
                              int64_t end, float* out);

void dequant_f32__ref(const uint8_t* packed, int bits, const float* centroids, int64_t begin, int64_t end,
                      float* out);
// AVX2: 8 indices per k-byte group, spread to 32-bit lanes by one vpshufb and a vpsrlvd; the lookup is
// one vpermps for k <= 3, a vpermps/vblendvps tree over 2^(k-3) tables for k = 4..6 and a vgatherdps for
// k = 7, 8.
void dequant_f32__avx2(const uint8_t* packed, int bits, const float* centroids, int64_t begin, int64_t end,
                       float* out);
// NEON: the same unpack with vqtbl1q + vshlq; the lookup is a byte table lookup (vqtbl4q/vqtbx4q on
// the centroid bytes) for k <= 6 and scalar loads for k = 7, 8 (a 512/1024-byte table).
void dequant_f32__neon(const uint8_t* packed, int bits, const float* centroids, int64_t begin, int64_t end,
                       float* out);

}  // namespace flexpipe
