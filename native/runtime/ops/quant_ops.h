// SPDX-License-Identifier: Apache-2.0
// The quant op group: ops on quantized weight shards (elastic transformers). Each function documents its
// inputs, outputs and ints/floats layout above its definition.
#pragma once

#include "runtime/op_call.h"

namespace flexpipe {

Status op_dequantize_shard(const OpCall& c);
Status op_dequantize_layer(const OpCall& c);

}  // namespace flexpipe
