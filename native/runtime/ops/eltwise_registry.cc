// SPDX-License-Identifier: Apache-2.0
// Registers the elementwise ops in the native op table (names are what lib/model/ops/eltwise*.ts emits).
#include "runtime/op_registry.h"
#include "runtime/ops/eltwise_ops.h"

namespace flexpipe {

void register_eltwise_ops(std::vector<OpEntry>& table) {
    table.push_back({"Unary", op_unary});
    table.push_back({"IsNaN", op_is_nan});
    table.push_back({"IsInf", op_is_inf});
    table.push_back({"Clip", op_clip});
    table.push_back({"Dropout", op_dropout});
    table.push_back({"Binary", op_binary});
    table.push_back({"Compare", op_compare});
    table.push_back({"Pow", op_pow});
    table.push_back({"Where", op_where});
    table.push_back({"Cast", op_cast});
}

}  // namespace flexpipe
