// SPDX-License-Identifier: Apache-2.0
// The nn op group's native operators (conv, pool, gemm, norm, softmax, resize, space/depth).
// Each function documents its inputs, outputs and ints/floats layout above its definition.
#pragma once

#include "runtime/op_call.h"

namespace flexpipe {

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

}  // namespace flexpipe
