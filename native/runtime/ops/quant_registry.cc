// SPDX-License-Identifier: Apache-2.0
// Registers the quant op group (names are what lib/model/ops/quant-dequantize.ts emits).
#include "runtime/op_registry.h"
#include "runtime/ops/quant_ops.h"

namespace flexpipe {

void register_quant_ops(std::vector<OpEntry>& table) {
    table.push_back({"DequantizeShard", op_dequantize_shard});
    table.push_back({"DequantizeLayer", op_dequantize_layer});
}

}  // namespace flexpipe
