// SPDX-License-Identifier: Apache-2.0
// The operator table: the names lib/model/ops/*.ts emits, mapped onto the functions in runtime/ops/.
#include "runtime/op_registry.h"

#include <cstring>

#include "runtime/ops/ops.h"

namespace flexpipe {

const std::vector<OpEntry>& op_table() {
    static const std::vector<OpEntry> table = {
        {"Unary", op_unary, {1, 1, 1, 1, 1}},
        {"IsNaN", op_is_nan, {1, 1, 1, 1, 0}},
        {"IsInf", op_is_inf, {1, 1, 1, 1, 0}},
        {"Clip", op_clip, {1, 3, 1, 1, 0}},
        {"Dropout", op_dropout, {1, 3, 1, 2, 0}},
        {"Binary", op_binary, {1, op_many, 1, 1, 1}},
        {"Compare", op_compare, {2, 2, 1, 1, 1}},
        {"Pow", op_pow, {2, 2, 1, 1, 0}},
        {"Where", op_where, {3, 3, 1, 1, 0}},
        {"Cast", op_cast, {1, 1, 1, 1, 0}},
        {"Conv", op_conv, {2, 4, 1, 2, 0}},
        {"ConvTranspose", op_conv_transpose, {2, 3, 1, 2, 0}},
        {"ConvMaxPool", op_conv_max_pool, {2, 3, 2, 2, 2}},
        {"ConvDepthwise", op_conv_depthwise, {4, 5, 2, 2, 0}},
        {"MaxPool", op_max_pool, {1, 1, 1, 2, 0}},
        {"AveragePool", op_average_pool, {1, 1, 1, 1, 0}},
        {"LpPool", op_lp_pool, {1, 1, 1, 1, 0}},
        {"GlobalAveragePool", op_global_average_pool, {1, 1, 1, 1, 0}},
        {"GlobalMaxPool", op_global_max_pool, {1, 1, 1, 1, 0}},
        {"GlobalLpPool", op_global_lp_pool, {1, 1, 1, 1, 0}},
        {"Gemm", op_gemm, {2, 3, 1, 2, 2}},
        {"MatMul", op_matmul, {2, 3, 1, 2, 0}},
        {"BatchNormalization", op_batch_norm, {5, 5, 1, 3, 0}},
        {"InstanceNormalization", op_instance_norm, {3, 3, 1, 1, 0}},
        {"LayerNormalization", op_layer_norm, {2, 3, 1, 3, 1}},
        {"LRN", op_lrn, {1, 1, 1, 1, 1}},
        {"MeanVarianceNormalization", op_mvn, {1, 1, 1, 1, 0}},
        {"Softmax", op_softmax, {1, 1, 1, 1, 2}},
        {"LogSoftmax", op_log_softmax, {1, 1, 1, 1, 2}},
        {"Hardmax", op_hardmax, {1, 1, 1, 1, 2}},
        {"Resize", op_resize, {1, 1, 1, 2, 5}},
        {"DepthToSpace", op_depth_to_space, {1, 1, 1, 1, 2}},
        {"SpaceToDepth", op_space_to_depth, {1, 1, 1, 1, 1}},
        {"Attention", op_attention, {3, 4, 2, 2, 2}},
        {"Transpose", op_transpose, {1, 1, 1, 1, 0}},
        {"Slice", op_slice, {1, 1, 1, 1, 0}},
        {"Expand", op_expand, {1, 1, 1, 1, 0}},
        {"Tile", op_tile, {1, 1, 1, 1, 0}},
        {"Concat", op_concat, {1, op_many, 1, 1, 1}},
        {"Split", op_split, {1, 1, 1, op_many, 1}},
        {"Pad", op_pad, {1, 2, 1, 1, 0}},
        {"Trilu", op_trilu, {1, 2, 1, 1, 2}},
        {"Fill", op_fill, {0, 0, 1, 1, 0}},
        {"Range", op_range, {0, 0, 1, 1, 0}},
        {"EyeLike", op_eye_like, {0, 1, 1, 1, 0}},
        {"Gather", op_gather, {2, 2, 1, 1, 1}},
        {"GatherElements", op_gather_elements, {2, 2, 1, 1, 1}},
        {"GatherND", op_gather_nd, {2, 2, 1, 1, 0}},
        {"ScatterND", op_scatter_nd, {3, 3, 1, 1, 0}},
        {"OneHot", op_one_hot, {2, 2, 1, 1, 2}},
        {"Reduce", op_reduce, {1, 1, 1, 1, 0}},
        {"ArgReduce", op_arg_reduce, {1, 1, 1, 1, 3}},
        {"CumSum", op_cumsum, {1, 2, 1, 1, 3}},
        {"DequantizeShard", op_dequantize_shard, {1, 1, 1, op_many, 1}},
        {"DequantizeLayer", op_dequantize_layer, {0, op_many, 0, op_many, 0}},
        {"NonZero", op_nonzero, {1, 1, 2, 2, 0}},
        {"TopK", op_top_k, {1, 2, 3, 4, 5}},
    };
    return table;
}

const OpEntry* find_op(const char* name) {
    for (const OpEntry& e : op_table())
        if (std::strcmp(e.name, name) == 0) return &e;
    return nullptr;
}

Status check_arity(const OpEntry& e, const OpCall& c) {
    const OpArity& a = e.arity;
    if (c.n_in < a.min_in || c.n_in > a.max_in || c.n_out < a.min_out || c.n_out > a.max_out) {
        return Status::error(StatusCode::invalid_argument,
                             "failed to run %s: expected %d..%d inputs and %d..%d outputs (got %d and %d)", e.name,
                             a.min_in, a.max_in, a.min_out, a.max_out, c.n_in, c.n_out);
    }
    if (c.n_ints < a.min_ints) {
        return Status::error(StatusCode::invalid_argument, "failed to run %s: expected %d int attributes (got %d)",
                             e.name, a.min_ints, c.n_ints);
    }
    return Status::ok();
}

Status call_op(const OpEntry& e, OpCall c) {
    FLEXPIPE_RETURN_IF_ERROR(check_arity(e, c));
    c.name = e.name;
    return e.fn(c);
}

}  // namespace flexpipe
