// SPDX-License-Identifier: Apache-2.0
// Registers the tensor op group (data movement, shape ops, reductions) in the native op table.
#include "runtime/op_registry.h"
#include "runtime/ops/tensor_ops.h"

namespace flexpipe {

void register_tensor_ops(std::vector<OpEntry>& table) {
    table.push_back({"Transpose", op_transpose});
    table.push_back({"Slice", op_slice});
    table.push_back({"Expand", op_expand});
    table.push_back({"Tile", op_tile});
    table.push_back({"Concat", op_concat});
    table.push_back({"Split", op_split});
    table.push_back({"Pad", op_pad});
    table.push_back({"Trilu", op_trilu});
    table.push_back({"Fill", op_fill});
    table.push_back({"Range", op_range});
    table.push_back({"EyeLike", op_eye_like});
    table.push_back({"Gather", op_gather});
    table.push_back({"GatherElements", op_gather_elements});
    table.push_back({"GatherND", op_gather_nd});
    table.push_back({"OneHot", op_one_hot});
    table.push_back({"Reduce", op_reduce});
    table.push_back({"ArgReduce", op_arg_reduce});
    table.push_back({"CumSum", op_cumsum});
}

}  // namespace flexpipe
