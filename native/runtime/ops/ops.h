// SPDX-License-Identifier: Apache-2.0
// Every native operator, by group; runtime/op_registry.cc maps the names lib/model/ops emits onto them.
// Each function documents its inputs, outputs and ints/floats layout above its definition.
#pragma once

#include "common/status.h"
#include "runtime/op_call.h"

namespace flexpipe {

// Elementwise (eltwise_unary.cc, eltwise_binary.cc).
Status op_unary(const OpCall& c);
Status op_is_nan(const OpCall& c);
Status op_is_inf(const OpCall& c);
Status op_clip(const OpCall& c);
Status op_dropout(const OpCall& c);
Status op_binary(const OpCall& c);
Status op_compare(const OpCall& c);
Status op_pow(const OpCall& c);
Status op_where(const OpCall& c);
Status op_cast(const OpCall& c);

// Neural-network layers (nn_*.cc).
Status op_conv(const OpCall& c);
Status op_conv_transpose(const OpCall& c);
Status op_conv_max_pool(const OpCall& c);
Status op_conv_depthwise(const OpCall& c);
Status op_max_pool(const OpCall& c);
Status op_average_pool(const OpCall& c);
Status op_lp_pool(const OpCall& c);
Status op_global_average_pool(const OpCall& c);
Status op_global_max_pool(const OpCall& c);
Status op_global_lp_pool(const OpCall& c);
Status op_gemm(const OpCall& c);
Status op_matmul(const OpCall& c);
Status op_batch_norm(const OpCall& c);
Status op_instance_norm(const OpCall& c);
Status op_layer_norm(const OpCall& c);
Status op_lrn(const OpCall& c);
Status op_mvn(const OpCall& c);
Status op_softmax(const OpCall& c);
Status op_log_softmax(const OpCall& c);
Status op_hardmax(const OpCall& c);
Status op_resize(const OpCall& c);
Status op_depth_to_space(const OpCall& c);
Status op_space_to_depth(const OpCall& c);
Status op_attention(const OpCall& c);

// Data movement, shape ops and reductions (tensor_*.cc).
Status op_transpose(const OpCall& c);
Status op_slice(const OpCall& c);
Status op_expand(const OpCall& c);
Status op_tile(const OpCall& c);
Status op_concat(const OpCall& c);
Status op_split(const OpCall& c);
Status op_pad(const OpCall& c);
Status op_trilu(const OpCall& c);
Status op_fill(const OpCall& c);
Status op_range(const OpCall& c);
Status op_eye_like(const OpCall& c);
Status op_gather(const OpCall& c);
Status op_gather_elements(const OpCall& c);
Status op_gather_nd(const OpCall& c);
Status op_scatter_nd(const OpCall& c);
Status op_one_hot(const OpCall& c);
Status op_reduce(const OpCall& c);
Status op_arg_reduce(const OpCall& c);
Status op_nonzero(const OpCall& c);
Status op_top_k(const OpCall& c);
Status op_cumsum(const OpCall& c);

// Quantized weight shards of elastic transformers (quant_dequantize.cc).
Status op_dequantize_shard(const OpCall& c);
Status op_dequantize_layer(const OpCall& c);

}  // namespace flexpipe
