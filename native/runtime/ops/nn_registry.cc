// SPDX-License-Identifier: Apache-2.0
// Registers the nn op group (names are what lib/model/ops/nn*.ts encoders emit).
#include "runtime/op_registry.h"
#include "runtime/ops/nn_ops.h"

namespace flexpipe {

void register_nn_ops(std::vector<OpEntry>& table) {
    table.push_back({"Conv", op_conv});
    table.push_back({"ConvTranspose", op_conv_transpose});
    table.push_back({"ConvMaxPool", op_conv_max_pool});
    table.push_back({"ConvDepthwise", op_conv_depthwise});
    table.push_back({"MaxPool", op_max_pool});
    table.push_back({"AveragePool", op_average_pool});
    table.push_back({"LpPool", op_lp_pool});
    table.push_back({"GlobalAveragePool", op_global_average_pool});
    table.push_back({"GlobalMaxPool", op_global_max_pool});
    table.push_back({"GlobalLpPool", op_global_lp_pool});
    table.push_back({"Gemm", op_gemm});
    table.push_back({"MatMul", op_matmul});
    table.push_back({"BatchNormalization", op_batch_norm});
    table.push_back({"InstanceNormalization", op_instance_norm});
    table.push_back({"LayerNormalization", op_layer_norm});
    table.push_back({"LRN", op_lrn});
    table.push_back({"MeanVarianceNormalization", op_mvn});
    table.push_back({"Softmax", op_softmax});
    table.push_back({"LogSoftmax", op_log_softmax});
    table.push_back({"Hardmax", op_hardmax});
    table.push_back({"Resize", op_resize});
    table.push_back({"DepthToSpace", op_depth_to_space});
    table.push_back({"SpaceToDepth", op_space_to_depth});
    table.push_back({"Attention", op_attention});
}

}  // namespace flexpipe
