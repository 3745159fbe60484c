// SPDX-License-Identifier: Apache-2.0
// quantizeLayer(layer, shardCount, bits, threshold = -4): Gaussian outlier-aware quantization of one layer
// into FPQ1 shard blobs (runtime/quant/outlier_quantize.h), synchronously.
#pragma once

#include <napi.h>

namespace flexpipe {

// Returns { blobs: Uint8Array[] (one per shard), mean, std, outliers, centroids: Float32Array }.
// TypeError for a wrong argument type, RangeError for a bad value (bits outside 2..8, a length that is
// not a positive multiple of shardCount, a non-finite weight or threshold).
Napi::Value quantize_layer(const Napi::CallbackInfo& info);

}  // namespace flexpipe
